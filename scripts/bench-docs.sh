#!/bin/bash
# Real pages: what parsing them costs each model, and crawl next to wget2.
# A documentation tree from a Debian package (python3.11-doc by default: 527
# HTML pages, about 50 MB) is served by a temporary nginx on 127.0.0.1, with
# a config of its own in a temporary folder, and two tables are measured:
#   1. the tree crawled by following links from its index page, 16 in
#      flight: crawl --mode=coro (one loop, with its default parse threads),
#      --mode=coro --parse-threads 0 (one loop that parses every page
#      itself), --mode=coro --loops 2, --mode=procs --procs 2, and wget2 -r;
#   2. a flat list of 20,000 distinct URLs of one 1 KiB file on the same
#      nginx (/flat/1k.txt?i=N), 100 in flight, the same four tools.
# nginx's access log is the counter: requests, bytes and connections of each
# run, and for the tree the set of paths, which must be the same for every
# tool (crawl counts the URLs it fetched too; both counts are shown). Wall
# time is the process's, start to exit; CPU is user + sys of the whole
# process tree and peak RSS that of its largest process, both from
# /usr/bin/time (rusage includes reaped children: procs' workers). Figures
# are medians of RUNS rounds, each round running every tool in turn.
# Installs what is missing through scripts/deps.sh (nginx, the docs package,
# wget2, time; apt may bring python3.11 up to the docs' version with it);
# the first run adds the download to the time. After that a full run takes
# about a minute, QUICK=1 about 15 s. Every command runs under timeout;
# only 127.0.0.1 is contacted.
#   BUILD=dir        crawl (default build; built if missing)
#   OUT=dir          where bench-docs.txt and bench-docs.csv go (default
#                    scripts/results; with QUICK=1, results)
#   RUNS=n           rounds (default 3)
#   C=n              transfers in flight for the tree (default 16)
#   FLAT_N=n         URLs of the flat list (default 20000)
#   FLAT_C=n         transfers in flight for the flat list (default 100)
#   LOOPS=n, PROCS=n the --loops and --procs of the rows that use them (default 2)
#   DOCS_PKG=name    the Debian package of the tree (default python3.11-doc)
#   DOCS_DIR=dir     its HTML folder (default /usr/share/doc/python3.11/html)
#   DOCS_INDEX=file  the index page under it (default index.html)
#   TMAX=s           limit for one command (default 120)
#   AGAINST=dir      a folder holding another build's crawl (an earlier
#                    commit's, built with make BUILD=...): each crawl row is
#                    run with it too, in turn in the same round ("against"
#                    rows; which of the two goes first alternates), and
#                    the table says this build's time over the other's
#   INSNS=1          after the timed rounds, each crawl row once more under
#                    valgrind's callgrind: the instructions it executed
#                    (procs: its workers' too), a figure that does not move
#                    with the machine's load as times do; with AGAINST, this
#                    build's over the other's
#   QUICK=1          one round, FLAT_N=2000, no installs: for the tests
#   NODEPS=1         do not call scripts/deps.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/bench-lib.sh
export PATH="$PATH:/usr/sbin:/sbin"      # nginx, for a user whose PATH lacks them
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then
	RUNS=${RUNS:-1}; FLAT_N=${FLAT_N:-2000}; TMAX=${TMAX:-60}; NODEPS=1
	OUT=${OUT:-results}
fi
OUT=${OUT:-scripts/results}
RUNS=${RUNS:-3}
C=${C:-16}
FLAT_N=${FLAT_N:-20000}
FLAT_C=${FLAT_C:-100}
LOOPS=${LOOPS:-2}
PROCS=${PROCS:-2}
DOCS_PKG=${DOCS_PKG:-python3.11-doc}
DOCS_DIR=${DOCS_DIR:-/usr/share/doc/python3.11/html}
DOCS_INDEX=${DOCS_INDEX:-index.html}
TMAX=${TMAX:-120}
me=${0##*/}

if [ "${NODEPS:-0}" != 1 ]; then
	timeout 900 scripts/deps.sh time curl wget2=wget2 nginx-light=nginx "$DOCS_PKG" \
		$([ -n "${INSNS:-}" ] && echo valgrind) ||
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
OTHER=
if [ -n "${AGAINST:-}" ]; then
	OTHER=$(cd "$AGAINST" 2>/dev/null && pwd)/crawl
	[ -x "$OTHER" ] || { echo "$me: AGAINST=$AGAINST holds no crawl" >&2; exit 1; }
fi

ulimit -n "$(ulimit -Hn)" 2>/dev/null
mkdir -p "$OUT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-docs.XXXXXX")
nginx_pid=
cleanup() {
	if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The flat list's file; nginx's workers drop to an unprivileged user when
# the script runs as root, so the folders must be readable by anyone.
mkdir -p "$tmp/www" "$tmp/wget2"
head -c 1024 /dev/zero | tr '\0' x >"$tmp/www/1k.txt"
chmod 755 "$tmp" "$tmp/www"
chmod 644 "$tmp/www/1k.txt"
log=$tmp/access.log

# nginx_start: nginx on a free loopback port, serving the tree under /docs/
# and the 1 KiB file under /flat/; sets PORT and nginx_pid. Every request
# is logged as "connection status bytes uri", unbuffered, so that a run's
# lines are all there when it ends. Nothing else is served (no robots.txt).
# A port someone else took makes nginx exit at once: another is tried.
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
		    log_format counts '\$connection \$status \$body_bytes_sent \$request_uri';
		    access_log $log counts;
		    client_body_temp_path $tmp/body;
		    proxy_temp_path $tmp/proxy;
		    fastcgi_temp_path $tmp/fastcgi;
		    uwsgi_temp_path $tmp/uwsgi;
		    scgi_temp_path $tmp/scgi;
		    keepalive_requests 1000000;
		    server {
		        listen 127.0.0.1:$port;
		        location /docs/ { alias $DOCS_DIR/; }
		        location /flat/ { alias $tmp/www/; }
		    }
		}
		EOF
		# The timeout bounds the server's life should this script be killed.
		timeout 7200 nginx -e "$tmp/nginx.err" -p "$tmp/" -c "$tmp/nginx.conf" </dev/null >/dev/null 2>&1 &
		nginx_pid=$!
		for _ in $(seq 50); do
			if curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$port/flat/1k.txt"; then
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
seq "$FLAT_N" | sed "s|^|$base/flat/1k.txt?i=|" >"$tmp/flat.txt"

# counts: "requests bytes connections answers_200" in the access log; the
# paths, sorted, go to $tmp/paths.
counts() {
	sleep 0.1     # a response's line is written as it ends: let the last ones
	awk '{print $4}' "$log" | sort >"$tmp/paths"
	awk '{ n++; b += $3; c[$1] = 1; ok += $2 == 200 }
	     END { k = 0; for (x in c) k++; printf "%d %d %d %d\n", n, b, k, ok }' "$log"
}

# The crawl commands. A link is followed only below /docs/, as wget2's
# --no-parent does from /docs/index.html; crawl follows <a href> only, so
# wget2 ignores the page requisites (link, script, img) it would otherwise
# fetch without -p. Neither asks for robots.txt.
set_cmd() { # set_cmd TABLE TOOL: the command line of TOOL for TABLE, in cmd
	local c=$C bin=$CRAWL tool=$2
	[ "$1" = flat ] && c=$FLAT_C
	case $tool in
	against-*) bin=$OTHER; tool=${tool#against-} ;;
	esac
	case $tool in
	coro)  cmd=("$bin" --mode=coro -c "$c") ;;
	coro0) cmd=("$bin" --mode=coro --parse-threads 0 -c "$c") ;;
	loops) cmd=("$bin" --mode=coro --loops "$LOOPS" -c "$c") ;;
	procs) cmd=("$bin" --mode=procs --procs "$PROCS" -c "$c") ;;
	wget2)
		if [ "$1" = docs ]; then
			cmd=(wget2 --no-config -r -l inf --no-parent --delete-after --max-threads="$c" -q --no-robots
			     --ignore-tags="link,script,img" -P "$tmp/wget2" "$start")
		else
			cmd=(wget2 --no-config --max-threads="$c" -q --no-robots -i "$tmp/flat.txt" -O /dev/null)
		fi
		return ;;
	esac
	cmd+=(-q --no-progress --format=jsonl)
	if [ "$1" = docs ]; then
		cmd+=(--depth 100 --no-robots --include "^http://127\\.0\\.0\\.1:$PORT/docs/" "$start")
	else
		cmd+=("$tmp/flat.txt")
	fi
}
label() { # label TABLE TOOL: the row's name
	local c=$C
	[ "$1" = flat ] && c=$FLAT_C
	case $2 in
	against-*) echo "against: $(label "$1" "${2#against-}")" ;;
	coro)  echo "crawl coro -c $c" ;;
	coro0) echo "crawl coro --parse-threads 0 -c $c" ;;
	loops) echo "crawl coro --loops $LOOPS -c $c" ;;
	procs) echo "crawl procs --procs $PROCS -c $c" ;;
	wget2) if [ "$1" = docs ]; then echo "wget2 -r --max-threads=$c"; else echo "wget2 -i --max-threads=$c"; fi ;;
	esac
}

# The flat list parses nothing: --parse-threads changes nothing there.
tools=(coro loops procs)
[ "$have_wget2" = 1 ] && tools+=(wget2)
docs_tools=(coro coro0 loops procs)
[ "$have_wget2" = 1 ] && docs_tools+=(wget2)
# with_against TOOL...: each crawl tool followed by the other build's.
with_against() {
	local t
	for t in "$@"; do
		echo "$t"
		[ -n "$OTHER" ] && [ "$t" != wget2 ] && echo "against-$t"
	done
}
mapfile -t tools < <(with_against "${tools[@]}")
mapfile -t docs_tools < <(with_against "${docs_tools[@]}")

# run TABLE TOOL ROUND: one timed run; appends a CSV line to $tmp/runs.csv:
# table,tool,round,wall_s,cpu_s,rss_kb,requests,bytes,conns,crawl_urls,same,status
run() {
	local table=$1 tool=$2 round=$3 cmd rc wall cpu rss reqs bytes conns urls=- same note=
	set_cmd "$table" "$tool"
	: >"$log"
	rm -rf "$tmp/wget2" && mkdir -p "$tmp/wget2"
	run_timed "$TMAX" "$tmp/out" "${cmd[@]}"
	rc=$STATUS cpu=$CPU rss=$RSS
	wall=$(printf '%.3f' "$WALL")
	read -r reqs bytes conns _ < <(counts)
	[ "${tool#against-}" != wget2 ] && urls=$(sed -n 's/.*"summary":true.*"urls":\([0-9]*\).*/\1/p' "$tmp/out")
	if [ "$table" = docs ]; then
		if [ ! -f "$tmp/ref" ]; then same=yes
		elif cmp -s "$tmp/paths" "$tmp/ref"; then same=yes
		else same="no: $(comm -13 "$tmp/ref" "$tmp/paths" | wc -l) more, $(comm -23 "$tmp/ref" "$tmp/paths" | wc -l) fewer"
		fi
	else
		if [ "$reqs" -eq "$FLAT_N" ] && [ "$(uniq "$tmp/paths" | wc -l)" -eq "$FLAT_N" ]; then same=yes; else same=no; fi
	fi
	echo "$table,$tool,$round,$wall,$cpu,$rss,$reqs,$bytes,$conns,${urls:--},$same,$rc" >>"$tmp/runs.csv"
	[ "$same" = yes ] || note=", $same"
	printf '%s: round %d/%d, %-5s %-36s %6.2f s, %5.2f s CPU, %6d requests, %4d conns, exit %d%s\n' "$me" "$round" "$RUNS" \
		"$table" "$(label "$table" "$tool")" "$wall" "$cpu" "$reqs" "$conns" "$rc" "$note" >&2
	[ "$rc" -eq 124 ] && echo "$me: timed out after ${TMAX}s: ${cmd[*]}" >&2
	return 0
}

# The tree's set of paths and its size come from a first crawl that is not
# timed; it also brings the tree into the page cache for every tool alike.
echo "$me: serving $DOCS_DIR at $base/docs/; a first crawl fixes the tree's set of pages" >&2
: >"$log"
set_cmd docs coro
timeout -k 5 "$TMAX" "${cmd[@]}" >/dev/null 2>&1
read -r tree_pages tree_bytes _ tree_ok < <(counts)
if [ "$tree_ok" -lt 2 ]; then
	echo "$me: the first crawl of $start fetched $tree_ok page(s); crawl says:" >&2
	timeout -k 5 "$TMAX" "${cmd[@]}" 2>&1 | tail -3 >&2
	exit 1
fi
cp "$tmp/paths" "$tmp/ref"
tree_mb=$(awk -v b="$tree_bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
disk=$(find "$DOCS_DIR" -name '*.html' -printf '%s\n' 2>/dev/null | awk '{ n++; s += $1 } END { printf "%d files, %.1f MB", n, s / 1e6 }')

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- lib cmd Makefile 2>/dev/null || commit="$commit (with uncommitted changes)"
pkgver=$(dpkg-query -W -f '${Version}' "$DOCS_PKG" 2>/dev/null || echo "not from a package")
load0=$(cut -d' ' -f1-3 /proc/loadavg)
header() {
	echo "# scripts/bench-docs.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $DOCS_PKG $pkgver: $tree_pages pages ($tree_ok answered 200), $tree_mb MB of HTML, crawl commit $commit"
	echo "# load average (1, 5, 15 min) at the start: $load0$(awk -v l="${load0%% *}" 'BEGIN { if (l >= 0.5) print "; other work was running, so the figures are noisy" }')"
	[ -n "$OTHER" ] && echo "# against: $OTHER, $("$OTHER" --version | head -1), commit $(git -C "$(dirname "$OTHER")" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "# $("$CRAWL" --version | head -1); $(if [ "$have_wget2" = 1 ]; then wget2 --version | head -1 | cut -d' ' -f1-3; else echo "wget2 not installed"; fi); $(nginx -v 2>&1 | sed 's/^nginx version: //'), worker_processes auto; RUNS=$RUNS C=$C FLAT_N=$FLAT_N FLAT_C=$FLAT_C"
}
header >&2

# in_turn ROUND TOOL...: the tools in the round's order: each crawl tool
# and the other build's trade places every other round (turns), so that
# neither build always goes first (a two-thread run just before a
# one-thread one, on two cores, slows it).
in_turn() {
	local r=$1 i j
	shift
	local l=("$@")
	for ((i = 0; i < ${#l[@]}; i++)); do
		if [ "${l[i + 1]:-}" = "against-${l[i]}" ]; then
			for j in $(turns "$r" 2); do echo "${l[i + j]}"; done
			i=$((i + 1))
		else
			echo "${l[i]}"
		fi
	done
}

: >"$tmp/runs.csv"
for r in $(seq "$RUNS"); do
	for t in $(in_turn "$r" "${docs_tools[@]}"); do run docs "$t" "$r"; done
	for t in $(in_turn "$r" "${tools[@]}"); do run flat "$t" "$r"; done
done

# insns TABLE TOOL: the instructions TOOL's crawl executes on TABLE, summed
# over its processes, as callgrind counts them; empty when it cannot.
insns() {
	set_cmd "$1" "$2"
	: >"$log"
	rm -f "$tmp"/vg.*
	timeout -k 5 $((TMAX * 40)) valgrind --tool=callgrind --trace-children=yes \
		--callgrind-out-file=/dev/null --log-file="$tmp/vg.%p" "${cmd[@]}" >/dev/null 2>&1
	cat "$tmp"/vg.* 2>/dev/null | awk '/Collected : [0-9]+/ { n += $NF; k++ } END { if (k) print n }'
}
declare -A I
if [ -n "${INSNS:-}" ]; then
	if command -v valgrind >/dev/null; then
		for tb in docs flat; do
			list=("${tools[@]}")
			[ "$tb" = docs ] && list=("${docs_tools[@]}")
			for t in "${list[@]}"; do
				[ "${t#against-}" = wget2 ] && continue
				I[$tb.$t]=$(insns "$tb" "$t")
				echo "$me: instructions, $tb $(label "$tb" "$t"): ${I[$tb.$t]:-none}" >&2
			done
		done
	else
		echo "$me: INSNS=1: valgrind is not installed" >&2
	fi
fi
# insns_table TABLE PAGES: the instruction counts of TABLE's crawl rows.
insns_table() {
	local t n o name
	[ -n "${INSNS:-}" ] || return 0
	echo "  instructions executed, one run each under valgrind --tool=callgrind --trace-children=yes:"
	for t in coro coro0 loops procs; do
		n=${I[$1.$t]:-}
		[ -n "$n" ] || continue
		o=${I[$1.against-$t]:-}
		name=$(label "$1" "$t")
		awk -v name="$name" -v n="$n" -v o="$o" -v p="$2" 'BEGIN {
			printf "  %-50s %6.0f M, %5.0f k a page", name, n / 1e6, n / p / 1e3
			if (o != "") printf "; the other build %6.0f M: %.3fx", o / 1e6, n / o
			printf "\n" }'
	done
}

# table TABLE: the medians of each tool's rounds, a row each.
col() { awk -F, -v t="$1" -v u="$2" -v k="$3" '$1 == t && $2 == u { print $k }' "$tmp/runs.csv"; }
declare -A W P
table() {
	local tb=$1 t wall cpu rss reqs bytes conns urls bad name st list=("${tools[@]}")
	[ "$tb" = docs ] && list=("${docs_tools[@]}")
	printf '%-36s %7s %6s %8s %7s %6s %10s %7s %6s %5s %4s  %s\n' tool wall_s cpu_s cpu_us/pg rss_mb pages crawl_urls pages/s MB/s conns exit "same pages"
	for t in "${list[@]}"; do
		wall=$(col "$tb" "$t" 4 | median); cpu=$(col "$tb" "$t" 5 | median)
		rss=$(col "$tb" "$t" 6 | median); reqs=$(col "$tb" "$t" 7 | median)
		bytes=$(col "$tb" "$t" 8 | median); conns=$(col "$tb" "$t" 9 | median)
		urls=$(col "$tb" "$t" 10 | sort -u | paste -sd/)
		bad=$(col "$tb" "$t" 11 | grep -vc '^yes$')
		st=$(col "$tb" "$t" 12 | sort -u | paste -sd/)
		name=$(label "$tb" "$t")
		W[$tb.$t]=$wall; P[$tb.$t]=$cpu
		awk -v n="$name" -v w="$wall" -v c="$cpu" -v m="$rss" -v q="$reqs" -v u="$urls" -v b="$bytes" \
			-v k="$conns" -v e="$st" -v s="$([ "$bad" -eq 0 ] && echo yes || echo "no, in $bad of $RUNS rounds")" 'BEGIN {
			printf "%-36s %7.3f %6.2f %8.0f %7.1f %6d %10s %7.0f %6.1f %5d %4s  %s\n", n, w, c, c / q * 1e6, m / 1024, q, u, q / w, b / 1e6 / w, k, e, s }'
	done
}
# ratio NAME A B: B's wall time and CPU over A's (above 1: A takes less).
ratio() {
	local tb=${2%%.*}
	[ -n "${W[$2]:-}" ] && [ -n "${W[$3]:-}" ] || return 0
	awk -v n="$1" -v wa="${W[$2]}" -v wb="${W[$3]}" -v ca="${P[$2]}" -v cb="${P[$3]}" 'BEGIN {
		printf "  %-50s wall %5.2fx, CPU %5.2fx\n", n, wb / wa, cb / ca }'
}

# against_ratios TABLE: each crawl row's time over the other build's.
against_ratios() {
	local t
	[ -n "$OTHER" ] || return 0
	echo "  this build over the other (AGAINST; below 1: this build takes less):"
	for t in coro coro0 loops procs; do
		ratio "$(label "$1" "$t")" "$1.against-$t" "$1.$t"
	done
}

{
	header
	echo
	echo "1. $start and the pages it links to, every link below /docs/ followed (--depth 100; wget2 -r -l inf --no-parent), $C in flight; medians of $RUNS round(s)"
	echo "   pages, MB/s, conns: what nginx logged (requests, body bytes, connections); crawl_urls: what crawl counted; same pages: every run fetched the first crawl's set of paths"
	[ "$tree_ok" -lt "$tree_pages" ] &&
		echo "   pages linked to but not in the package, answered with an error: $((tree_pages - tree_ok)); crawl counts them as fetched (no --fail), wget2 exits 8 for them (in most runs)"
	table docs
	echo "  the second's time over the first's (above 1: the first takes less):"
	ratio "coro (the default) over coro --parse-threads 0" docs.coro docs.coro0
	ratio "procs --procs $PROCS over coro (one loop)" docs.procs docs.coro
	ratio "procs --procs $PROCS over coro --parse-threads 0" docs.procs docs.coro0
	ratio "coro --loops $LOOPS over coro (one loop)" docs.loops docs.coro
	ratio "procs --procs $PROCS over coro --loops $LOOPS" docs.procs docs.loops
	ratio "coro (one loop, the default) over wget2 -r" docs.coro docs.wget2
	ratio "procs --procs $PROCS over wget2 -r" docs.procs docs.wget2
	against_ratios docs
	insns_table docs "$tree_pages"
	echo
	echo "2. $FLAT_N URLs $base/flat/1k.txt?i=1..$FLAT_N (nginx, one 1 KiB file), $FLAT_C in flight; medians of $RUNS round(s)"
	echo "   wget2 writes the bodies to -O /dev/null; same pages: nginx logged exactly $FLAT_N distinct URLs"
	table flat
	echo "  the second's time over the first's (above 1: the first takes less):"
	ratio "procs --procs $PROCS over coro (one loop)" flat.procs flat.coro
	ratio "coro --loops $LOOPS over coro (one loop)" flat.loops flat.coro
	ratio "coro (one loop, the default) over wget2" flat.coro flat.wget2
	against_ratios flat
	insns_table flat "$FLAT_N"
	echo
	echo "# the commands (TMP: this run's temporary folder):"
	for tb in docs flat; do
		list=("${tools[@]}")
		[ "$tb" = docs ] && list=("${docs_tools[@]}")
		for t in "${list[@]}"; do
			set_cmd "$tb" "$t"
			echo "#   ${cmd[*]}" | sed "s|$tmp|TMP|g; s|$PWD/||g"
		done
	done
	echo "# wall: start to exit; cpu: user + sys of the process and its reaped children (procs' workers); cpu_us/pg: cpu over pages; rss: the largest process's peak (for procs, not the sum)"
	echo "# the tree: $DOCS_DIR ($disk); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/bench-docs.txt"
{
	echo "table,tool,round,wall_s,cpu_s,rss_kb,requests,bytes,conns,crawl_urls,same,status"
	cat "$tmp/runs.csv"
} >"$OUT/bench-docs.csv"
echo "$me: written $OUT/bench-docs.txt and $OUT/bench-docs.csv" >&2
