#!/bin/bash
# What a recrawl saves on real pages: a Debian documentation tree (python3.11-doc
# by default, as scripts/bench-docs.sh serves it) copied to a temporary
# folder and served by a temporary nginx on 127.0.0.1, which answers ETag and
# Last-Modified and a 304 to a conditional request that matches. Each round:
#   pass 1   crawl --state S --depth 100 from the index page, everything new;
#   pass 2   the same command with --recrawl, nothing changed on the server;
#   pass 3   --recrawl again after CHANGED pages had their modification time
#            moved (a new ETag and Last-Modified, the bytes the same);
# and the same three passes of wget2 -r -N (timestamping: If-Modified-Since
# from the files it kept) into a folder of its own. nginx's access log is the
# counter: requests, 200s and 304s, bytes on the wire both ways (the
# responses' headers and bodies, $bytes_sent; the requests', $request_length),
# and the set of paths, which every pass must request whole. Wall time is the
# process's, start to exit; CPU user + sys from /usr/bin/time. Figures are
# medians of RUNS rounds. Installs what is missing through scripts/deps.sh
# (nginx, the docs package, wget2, time). Every command runs under timeout;
# only 127.0.0.1 is contacted.
#   BUILD=dir        crawl (default build; built if missing)
#   OUT=dir          where bench-recrawl.txt and .csv go (default scripts/results;
#                    with QUICK=1, results)
#   RUNS=n           rounds (default 3)
#   C=n              transfers in flight (default 16)
#   CHANGED=n        pages changed before pass 3 (default 10)
#   DOCS_PKG=name    the Debian package of the tree (default python3.11-doc)
#   DOCS_DIR=dir     its HTML folder (default /usr/share/doc/python3.11/html)
#   DOCS_INDEX=file  the index page under it (default index.html)
#   TMAX=s           limit for one command (default 120)
#   QUICK=1          one round, no installs: for the tests
#   NODEPS=1         do not call scripts/deps.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/bench-lib.sh
export PATH="$PATH:/usr/sbin:/sbin"
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then
	RUNS=${RUNS:-1}; TMAX=${TMAX:-60}; NODEPS=1
	OUT=${OUT:-results}
fi
OUT=${OUT:-scripts/results}
RUNS=${RUNS:-3}
C=${C:-16}
CHANGED=${CHANGED:-10}
DOCS_PKG=${DOCS_PKG:-python3.11-doc}
DOCS_DIR=${DOCS_DIR:-/usr/share/doc/python3.11/html}
DOCS_INDEX=${DOCS_INDEX:-index.html}
TMAX=${TMAX:-120}
me=${0##*/}

if [ "${NODEPS:-0}" != 1 ]; then
	timeout 900 scripts/deps.sh time curl wget2=wget2 nginx-light=nginx "$DOCS_PKG" ||
		echo "$me: some packages are missing (above); checking for what this needs" >&2
fi
for need in /usr/bin/time curl nginx; do
	command -v "$need" >/dev/null || { echo "$me: $need is missing" >&2; exit 1; }
done
[ -f "$DOCS_DIR/$DOCS_INDEX" ] || { echo "$me: $DOCS_DIR/$DOCS_INDEX is missing (apt-get install $DOCS_PKG)" >&2; exit 1; }
have_wget2=0; command -v wget2 >/dev/null && have_wget2=1
[ "$have_wget2" = 1 ] || echo "$me: wget2 is not installed: its rows are skipped" >&2
[ -x "$BUILD/crawl" ] || timeout 600 make --no-print-directory BUILD="$BUILD" "$BUILD/crawl" >&2 || exit 1
case $BUILD in
/*) CRAWL=$BUILD/crawl ;;
*)  CRAWL=$PWD/$BUILD/crawl ;;
esac

ulimit -n "$(ulimit -Hn)" 2>/dev/null
mkdir -p "$OUT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-recrawl.XXXXXX")
nginx_pid=
cleanup() {
	if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The tree is a copy, so that pass 3 can change its pages' times; nginx's
# workers drop to an unprivileged user under root: everything readable.
cp -a "$DOCS_DIR" "$tmp/tree" || exit 1
chmod -R a+rX "$tmp"
log=$tmp/access.log

# nginx_start: nginx on a free loopback port, the tree under /docs/ (ETag
# and Last-Modified are nginx's defaults for files, If-Modified-Since read
# exactly); sets PORT and nginx_pid. Each request is logged as "connection
# status body_bytes bytes_sent request_length uri", unbuffered.
nginx_start() {
	local port
	for _ in $(seq 20); do
		port=$((20000 + RANDOM % 30000))
		cat >"$tmp/nginx.conf" <<-EOF
		worker_processes auto;
		daemon off;
		pid $tmp/nginx.pid;
		error_log $tmp/nginx.err;
		events { worker_connections 4096; }
		http {
		    types { text/html html htm; text/css css; application/javascript js;
		            image/png png; image/svg+xml svg; text/plain txt; }
		    default_type application/octet-stream;
		    log_format counts '\$connection \$status \$body_bytes_sent \$bytes_sent \$request_length \$request_uri';
		    access_log $log counts;
		    client_body_temp_path $tmp/body;
		    proxy_temp_path $tmp/proxy;
		    fastcgi_temp_path $tmp/fastcgi;
		    uwsgi_temp_path $tmp/uwsgi;
		    scgi_temp_path $tmp/scgi;
		    keepalive_requests 1000000;
		    server {
		        listen 127.0.0.1:$port;
		        location /docs/ { alias $tmp/tree/; }
		    }
		}
		EOF
		timeout 7200 nginx -e "$tmp/nginx.err" -p "$tmp/" -c "$tmp/nginx.conf" </dev/null >/dev/null 2>&1 &
		nginx_pid=$!
		for _ in $(seq 50); do
			if curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$port/docs/$DOCS_INDEX"; then
				PORT=$port
				return 0
			fi
			kill -0 "$nginx_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$nginx_pid" 2>/dev/null; wait "$nginx_pid" 2>/dev/null
		nginx_pid=
	done
	echo "$me: nginx did not start:" >&2
	cat "$tmp/nginx.err" >&2
	return 1
}
nginx_start || exit 1
base="http://127.0.0.1:$PORT"
start="$base/docs/$DOCS_INDEX"

# counts: "requests ok304 ok200 body_bytes out_bytes in_bytes conns" from the
# access log; the paths, sorted, go to $tmp/paths.
counts() {
	sleep 0.1     # a response's line is written as it ends: let the last ones
	awk '{print $6}' "$log" | sort >"$tmp/paths"
	awk '{ n++; nm += $2 == 304; ok += $2 == 200; b += $3; o += $4; i += $5; c[$1] = 1 }
	     END { k = 0; for (x in c) k++; printf "%d %d %d %d %d %d %d\n", n, nm, ok, b, o, i, k }' "$log"
}

# set_cmd TOOL PASS: the command of TOOL for pass 1, 2 or 3, in cmd. crawl
# follows <a href> below /docs/, as wget2's --no-parent does; wget2 leaves
# out the page requisites it would fetch without -p. Neither asks for
# robots.txt.
set_cmd() {
	case $1 in
	crawl)
		cmd=("$CRAWL" -c "$C" --no-progress --format=jsonl --depth 100 --no-robots
		     --include "^http://127\\.0\\.0\\.1:$PORT/docs/" --state "$tmp/s.db" -o "$tmp/rows.jsonl")
		[ "$2" -gt 1 ] && cmd+=(--recrawl)
		cmd+=("$start") ;;
	wget2)
		cmd=(wget2 --no-config -r -N -l inf --no-parent --max-threads="$C" -q --no-robots
		     --ignore-tags="link,script,img" -P "$tmp/wget2" "$start") ;;
	esac
}

# change ROUND: moves CHANGED pages' modification times ahead (a new ETag
# and Last-Modified for nginx), the same pages every round; unchange puts
# back the package's.
find "$tmp/tree" -name '*.html' | sort | awk -v n="$CHANGED" 'NR % 37 == 0 && k < n { print; k++ }' >"$tmp/changed"
change() {
	local f
	while read -r f; do touch -d "@$(( $(date +%s) + 60 * $1 ))" "$f"; done <"$tmp/changed"
}
unchange() {
	local f
	while read -r f; do touch -r "$DOCS_DIR/${f#"$tmp/tree/"}" "$f"; done <"$tmp/changed"
}

# run TOOL PASS ROUND: one timed run; appends a CSV line to $tmp/runs.csv:
# tool,pass,round,wall_s,cpu_s,requests,r304,r200,body_bytes,out_bytes,in_bytes,conns,rows,same,status
run() {
	local tool=$1 pass=$2 round=$3 rows=- same
	set_cmd "$tool" "$pass"
	: >"$log"
	run_timed "$TMAX" "$tmp/out" "${cmd[@]}"
	read -r reqs r304 r200 body outb inb conns < <(counts)
	if [ "$tool" = crawl ]; then
		rows=$(jq -r 'select(.summary) | .urls' "$tmp/rows.jsonl" | tail -1)
	fi
	if [ ! -f "$tmp/ref" ]; then cp "$tmp/paths" "$tmp/ref"; same=yes
	elif cmp -s "$tmp/paths" "$tmp/ref"; then same=yes
	else same="no: $(comm -13 "$tmp/ref" "$tmp/paths" | wc -l) more, $(comm -23 "$tmp/ref" "$tmp/paths" | wc -l) fewer"
	fi
	echo "$tool,$pass,$round,$WALL,$CPU,$reqs,$r304,$r200,$body,$outb,$inb,$conns,$rows,$same,$STATUS" >>"$tmp/runs.csv"
	printf '%s: round %d/%d, %-5s pass %d: %6.3f s, %5.2f s CPU, %5d requests (%d 200, %d 304), %9d bytes out, exit %d%s\n' \
		"$me" "$round" "$RUNS" "$tool" "$pass" "$WALL" "$CPU" "$reqs" "$r200" "$r304" "$outb" "$STATUS" \
		"$([ "$same" = yes ] || echo ", $same")" >&2
	[ "$STATUS" -eq 124 ] && echo "$me: timed out after ${TMAX}s: ${cmd[*]}" >&2
	return 0
}

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- lib cmd Makefile 2>/dev/null || commit="$commit (with uncommitted changes)"
pkgver=$(dpkg-query -W -f '${Version}' "$DOCS_PKG" 2>/dev/null || echo "not from a package")
load0=$(cut -d' ' -f1-3 /proc/loadavg)
header() {
	echo "# scripts/bench-recrawl.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $DOCS_PKG $pkgver, crawl commit $commit"
	echo "# load average (1, 5, 15 min) at the start: $load0$(awk -v l="${load0%% *}" 'BEGIN { if (l >= 0.5) print "; other work was running, so the figures are noisy" }')"
	echo "# $("$CRAWL" --version | head -1); $(if [ "$have_wget2" = 1 ]; then wget2 --version | head -1 | cut -d' ' -f1-3; else echo "wget2 not installed"; fi); $(nginx -v 2>&1 | sed 's/^nginx version: //'); RUNS=$RUNS C=$C CHANGED=$CHANGED"
}
header >&2

tools=(crawl)
[ "$have_wget2" = 1 ] && tools+=(wget2)
: >"$tmp/runs.csv"
for r in $(seq "$RUNS"); do
	for t in "${tools[@]}"; do
		rm -rf "$tmp/s.db" "$tmp/s.db-lock" "$tmp/rows.jsonl" "$tmp/wget2"
		mkdir -p "$tmp/wget2"
		unchange
		run "$t" 1 "$r"
		run "$t" 2 "$r"
		change "$r"
		run "$t" 3 "$r"
	done
done

col() { awk -F, -v t="$1" -v p="$2" -v k="$3" '$1 == t && $2 == p { print $k }' "$tmp/runs.csv"; }
declare -A W O R
table() {
	local t p what wall cpu reqs r304 r200 body outb inb rows bad
	printf '%-5s %-30s %7s %6s %8s %6s %6s %11s %10s %10s %6s  %s\n' tool pass wall_s cpu_s requests 200s 304s bytes_out bytes_in body_bytes rows "same pages"
	for t in "${tools[@]}"; do
		for p in 1 2 3; do
			case $p in
			1) what="1: everything new" ;;
			2) what="2: nothing changed" ;;
			3) what="3: $CHANGED pages changed" ;;
			esac
			wall=$(col "$t" $p 4 | median); cpu=$(col "$t" $p 5 | median)
			reqs=$(col "$t" $p 6 | median); r304=$(col "$t" $p 7 | median)
			r200=$(col "$t" $p 8 | median); body=$(col "$t" $p 9 | median)
			outb=$(col "$t" $p 10 | median); inb=$(col "$t" $p 11 | median)
			rows=$(col "$t" $p 13 | sort -u | paste -sd/)
			bad=$(col "$t" $p 14 | grep -vc '^yes$')
			W[$t.$p]=$wall; O[$t.$p]=$outb; R[$t.$p]=$reqs
			printf '%-5s %-30s %7.3f %6.2f %8d %6d %6d %11d %10d %10d %6s  %s\n' "$t" "$what" "$wall" "$cpu" \
				"$reqs" "$r200" "$r304" "$outb" "$inb" "$body" "$rows" \
				"$([ "$bad" -eq 0 ] && echo yes || echo "no, in $bad of $RUNS rounds")"
		done
	done
}
ratio() { # ratio NAME A B: B over A, wall time and bytes out
	[ -n "${W[$2]:-}" ] && [ -n "${W[$3]:-}" ] || return 0
	awk -v n="$1" -v wa="${W[$2]}" -v wb="${W[$3]}" -v oa="${O[$2]}" -v ob="${O[$3]}" 'BEGIN {
		printf "  %-46s wall %6.3fx, bytes out %6.4fx\n", n, wb / wa, ob / oa }'
}

{
	header
	echo
	echo "$start and every page below /docs/ it links to, $C in flight, copied from $DOCS_DIR; medians of $RUNS round(s)"
	echo "   requests, 200s, 304s, bytes: what nginx logged (bytes_out: responses, headers and bodies; bytes_in: requests; body_bytes: bodies alone)"
	echo "   rows: crawl's rows of the pass; same pages: the pass asked for every path pass 1 did, and no other"
	nf=$(awk -F, '$1 == "crawl" && $2 == 1 && $3 == 1 { print $6 - $8 }' "$tmp/runs.csv")
	[ "${nf:-0}" -gt 0 ] &&
		echo "   pages linked to but not in the package, answered 404 in every pass: $nf; wget2 exits 8 for them"
	table
	echo "  the second's over the first's:"
	ratio "crawl pass 2 (--recrawl) over pass 1" crawl.1 crawl.2
	ratio "crawl pass 3 (--recrawl) over pass 1" crawl.1 crawl.3
	ratio "wget2 -N -r pass 2 over its pass 1" wget2.1 wget2.2
	ratio "crawl pass 2 over wget2 -N -r pass 2" wget2.2 crawl.2
	ratio "crawl pass 3 over wget2 -N -r pass 3" wget2.3 crawl.3
	echo
	echo "# the commands (TMP: this run's temporary folder):"
	for t in "${tools[@]}"; do
		for p in 1 2; do
			set_cmd "$t" "$p"
			echo "#   ${cmd[*]}" | sed "s|$tmp|TMP|g; s|$PWD/||g"
		done
	done
	echo "# pass 3: CHANGED pages' modification times moved (touch), nothing else; wall: start to exit; cpu: user + sys"
	echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/bench-recrawl.txt"
{
	echo "tool,pass,round,wall_s,cpu_s,requests,r304,r200,body_bytes,out_bytes,in_bytes,conns,rows,same,status"
	cat "$tmp/runs.csv"
} >"$OUT/bench-recrawl.csv"
echo "$me: written $OUT/bench-recrawl.txt and $OUT/bench-recrawl.csv" >&2
