#!/bin/bash
# The crawl a real crawler does, against Scrapy and wget2: a link-following
# crawl of the synthetic web (docs/web.md) in web.sh's namespace, every name
# looked up through its dnsmasq, from three seeds across HOSTS hosts, one
# request per host at a time and DELAY ms between two requests to a host.
#
#   crawl         build/crawl, its default model (coro), -c C
#   crawl-procs   the same with --mode=procs
#   scrapy        scripts/peers/scrapy_web.py (Debian's python3-scrapy):
#                 CONCURRENT_REQUESTS=C, CONCURRENT_REQUESTS_PER_DOMAIN=1,
#                 DOWNLOAD_DELAY=DELAY, no randomized delay, no AutoThrottle,
#                 ROBOTSTXT_OBEY, one retry
#   wget2         wget2 -r -l inf --span-hosts --domains=web.test, C threads,
#                 robots.txt on, one retry; it has no wait per host, so it
#                 runs without one and its violations are counted
#
# Each tool runs on a web started afresh (so its counters are its own),
# with a TIMEOUT s limit and one retry, in turns, RUNS rounds; the figures
# are each tool's medians. A slow tool (SLOW_TOOLS: Scrapy, half an hour a
# run on two cores) runs in the first SLOW_RUNS rounds only. The web's
# checker (scripts/web-check.sh) judges each run: its violations by kind,
# the connections that carried its requests, and the pages missed from and
# beyond the set a polite crawl fetches under RFC 9309 (a failed robots.txt
# disallows all).
# Scrapy and wget2 allow all on a failed robots.txt: their requests to
# such hosts are not counted as violations but as extra pages.
#
# Then a memory curve on CURVE_HOSTS hosts: each tool's memory (the summed
# proportional set size of its processes, PSS, sampled twice a second)
# against the pages it has done.
#
#   scripts/bench-web.sh              figures to OUT (and its .csv)
#   HOSTS=2000 PAGES=100 SEED=1       the web (fixture-server --web HOSTS
#                                     --seed SEED --web-pages PAGES)
#   DELAY=200 C=2000 RUNS=3 TIMEOUT=3 the rules, the rounds, the seconds a
#                                     transfer may take
#   SLOW_TOOLS=scrapy SLOW_RUNS=1     the tools that run in fewer rounds
#   TOOLS="crawl crawl-procs scrapy wget2"
#   CURVE_HOSTS=10000 CURVE_PAGES=5   the memory curve's web ("" skips it)
#   CURVE_TOOLS="crawl crawl-procs"
#   LIMIT=3600                        seconds a run may take at most (a run
#                                     cut there says "cut" in its line)
#   OUT=scripts/results/bench-web.txt
#   NODEPS=1                          do not call scripts/deps.sh
#
# Needs root (web.sh's namespace). Installs what is missing through
# scripts/deps.sh (dnsmasq, wget2, python3-scrapy, time, jq).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
root=$PWD
me=bench-web.sh
. scripts/bench-lib.sh

HOSTS=${HOSTS:-2000} PAGES=${PAGES:-100} SEED=${SEED:-1}
DELAY=${DELAY:-200} C=${C:-2000} RUNS=${RUNS:-3} LIMIT=${LIMIT:-3600}
TOOLS=${TOOLS:-"crawl crawl-procs scrapy wget2"}
SLOW_TOOLS=${SLOW_TOOLS-scrapy} SLOW_RUNS=${SLOW_RUNS:-1}
CURVE_HOSTS=${CURVE_HOSTS-10000} CURVE_PAGES=${CURVE_PAGES:-5}
CURVE_TOOLS=${CURVE_TOOLS:-"crawl crawl-procs"}
OUT=${OUT:-scripts/results/bench-web.txt}
CSV=${OUT%.txt}.csv
NS=${WEB_NS:-crawlweb}
TIMEOUT=${TIMEOUT:-3} RETRY=1 UNIT_MS=10
CRAWL=$root/build/crawl

[ "$(id -u)" -eq 0 ] || { echo "$me: needs root, for web.sh's network namespace" >&2; exit 2; }
for t in $TOOLS $CURVE_TOOLS; do
	case $t in crawl|crawl-procs|scrapy|wget2) ;; *) echo "$me: unknown tool '$t'" >&2; exit 2 ;; esac
done
if [ -z "${NODEPS:-}" ]; then
	timeout 900 scripts/deps.sh time jq curl wget2=wget2 python3-scrapy=scrapy dnsmasq-base=dnsmasq iproute2=ip ||
		{ echo "$me: could not install what it needs" >&2; exit 1; }
fi
[ -x "$CRAWL" ] && [ -x build/fixture-server ] || make -s all

tmp=$(mktemp -d /tmp/bench-web.XXXXXX)
chmod 755 "$tmp"
cleanup() { scripts/web.sh down >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

seeds=(http://h00000.web.test/ http://h00001.web.test/ http://h00002.web.test/)
printf '%s\n' "${seeds[@]}" >"$tmp/seeds"
in_ns() { ip netns exec "$NS" "$@"; }

# web_up HOSTS PAGES: a web started afresh, its counters at zero.
web_up() {
	scripts/web.sh down >/dev/null
	scripts/web.sh up "$1" "$SEED" --web-pages "$2" --web-ms "$UNIT_MS" >/dev/null
}

# command_of TOOL ROWS: the command line of TOOL, writing what it fetched
# to ROWS.
command_of() {
	local d_s
	d_s=$(awk -v d="$DELAY" 'BEGIN { printf "%g", d / 1000 }')
	case $1 in
	crawl|crawl-procs)
		cmd=("$CRAWL" -c "$C" --depth 1000 --span-hosts --per-host 1 --delay "$DELAY"
		     --retry "$RETRY" --timeout "$TIMEOUT" --format=jsonl -o "$2")
		[ "$1" = crawl-procs ] && cmd+=(--mode=procs)
		cmd+=("${seeds[@]}") ;;
	scrapy)
		cmd=(/usr/bin/python3 "$root/scripts/peers/scrapy_web.py" "$tmp/seeds" "$2"
		     --concurrency "$C" --per-host 1 --delay "$d_s" --timeout "$TIMEOUT" --retry "$RETRY") ;;
	wget2)
		rm -rf "$tmp/wget2"
		cmd=(wget2 --no-config -r -l inf --span-hosts --domains=web.test --max-threads="$C"
		     --timeout="$TIMEOUT" --tries=$((RETRY + 1)) --robots=on --delete-after -q
		     -P "$tmp/wget2" "${seeds[@]}") ;;
	esac
}

# tree_pss PID: the summed PSS (kB) of PID and its descendants.
tree_pss() {
	local pids=$1 todo=$1 p kids
	while [ -n "$todo" ]; do
		kids=""
		for p in $todo; do kids="$kids $(cat /proc/"$p"/task/*/children 2>/dev/null)"; done
		todo=$(echo $kids)
		pids="$pids $todo"
	done
	for p in $pids; do cat /proc/"$p"/smaps_rollup 2>/dev/null; done | awk '/^Pss:/ { s += $2 } END { print s + 0 }'
}

# sample PID ROWS FILE: every 0.5 s until PID ends, "seconds pages pss_kb"
# to FILE, pages being ROWS' lines so far.
sample() {
	local pid=$1 rows=$2 file=$3 t0 now
	t0=$(date +%s%N)
	: >"$file"
	while kill -0 "$pid" 2>/dev/null; do
		now=$(date +%s%N)
		echo "$(( (now - t0) / 1000000 )) $(cat "$rows" 2>/dev/null | wc -l) $(tree_pss "$pid")" >>"$file"
		sleep 0.5
	done
}

# check TOOL: the checker's verdicts on the web as the run left it:
# strict.json (RFC 9309) and, for the peers, allow.json (a failed
# robots.txt allowing all).
check() {
	local flags=(--fixture http://127.0.0.1 --per-host 1 --delay "$DELAY" --json)
	in_ns scripts/web-check.sh "${flags[@]}" --keep "$tmp/keep" "${seeds[@]}" >"$tmp/strict.json" || true
	if [ "$1" = scrapy ] || [ "$1" = wget2 ]; then
		in_ns scripts/web-check.sh "${flags[@]}" --failed-robots-allow "${seeds[@]}" >"$tmp/allow.json" || true
	else
		cp "$tmp/strict.json" "$tmp/allow.json"
	fi
}

# one TOOL ROUND: runs TOOL on a fresh web; appends its CSV line.
one() {
	local tool=$1 round=$2 rows=$tmp/rows-$1 pid
	web_up "$HOSTS" "$PAGES"
	command_of "$tool" "$rows"
	rm -f "$rows"
	local t0 t1
	t0=$(date +%s%N)
	# time(1) outside timeout(1): a run cut at LIMIT is measured all the same.
	in_ns /usr/bin/time -f "%U %S %M" -o "$tmp/time" timeout "$LIMIT" "${cmd[@]}" \
		>"$tmp/out" 2>"$tmp/err" &
	pid=$!
	sample "$pid" "$rows" "$tmp/samples" &
	local spid=$!
	STATUS=0
	wait "$pid" || STATUS=$?
	t1=$(date +%s%N)
	wait "$spid" || true
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	read -r CPU RSS < <(tail -1 "$tmp/time" | awk 'NF == 3 { printf "%.2f %d\n", $1 + $2, $3 }') ||
		{ echo "$me: $tool round $round: no CPU figures (time(1) said: $(tail -1 "$tmp/time"))" >&2; CPU=0 RSS=0; }
	[ "$STATUS" -eq 124 ] && echo "$me: $tool round $round: cut at $LIMIT s" >&2
	local pss
	pss=$(awk '$3 > m { m = $3 } END { print m + 0 }' "$tmp/samples")
	check "$tool"
	local v e pages missed extra fr
	v=$(jq '.violations.total' "$tmp/allow.json")
	fr=$(jq '.violations.failed_robots' "$tmp/strict.json")
	read -r pages missed extra conns < <(jq -r '[.pages.fetched, .pages.missed, .pages.extra, .connections] | @tsv' "$tmp/strict.json")
	local kinds
	kinds=$(jq -r '.violations | "over \(.hosts_over_per_host) (most \(.most_in_flight)); gaps \(.short_gaps); disallowed \(.disallowed); pause \(.during_pause); robots again \(.robots_again)"' "$tmp/allow.json")
	echo "$tool,$round,$STATUS,$WALL,$CPU,$RSS,$pss,$pages,$missed,$extra,$v,$fr,$conns,\"$kinds\"" >>"$CSV"
	printf '  %-12s round %d: %7.1f s, %6.1f CPU s, %6.1f MB PSS, %6d pages, %4d missed, %5d extra, %6d connections, %5d violations (%s)\n' \
		"$tool" "$round" "$WALL" "$CPU" "$(awk -v k="$pss" 'BEGIN { print k / 1024 }')" "$pages" "$missed" "$extra" "$conns" "$v" "$kinds" >&2
	if [ "$tool" = crawl ] && [ "$round" = 1 ]; then
		cp "$rows" "$tmp/crawl-rows"
		cp "$tmp/keep/reachable" "$tmp/reachable"
	fi
}

# floor: the politeness-bound floor, from the web's own description of the
# reachable hosts and the depth at which crawl's first round found each:
# a host's floor is its depth times one unit (a robots.txt and a page of
# half a unit each at the least), then its requests (pages, robots.txt,
# throttled pages twice) one rule apart, a throttled page's Retry-After in
# place of the rule, and a hanging host's every try waiting the timeout.
floor() {
	in_ns curl -sf "http://127.0.0.1/stats?web&all&delay=$DELAY" >"$tmp/hosts-all"
	sed 's|^http://\([^/]*\)/.*|\1|' "$tmp/reachable" | sort -u >"$tmp/rhosts"
	# Each reachable host's pages and their classes, one curl for them all.
	sed 's|.*|url = "http://127.0.0.1/stats?web-host=&"|' "$tmp/rhosts" >"$tmp/curl.cfg"
	in_ns curl -sf -K "$tmp/curl.cfg" >"$tmp/pages-all"
	jq -r 'select(.class == "throttle") | .url' "$tmp/pages-all" | sort >"$tmp/throttled-all"
	comm -12 "$tmp/throttled-all" "$tmp/reachable" | sed 's|^http://\([^/]*\)/.*|\1|' | sort | uniq -c |
		awk '{ print $2, $1 }' >"$tmp/throttled"
	sed 's|^http://\([^/]*\)/.*|\1|' "$tmp/reachable" | sort | uniq -c | awk '{ print $2, $1 }' >"$tmp/npages"
	jq -r 'select(.url and .depth != null) | "\(.url) \(.depth)"' "$tmp/crawl-rows" |
		sed 's|^http://\([^/ ]*\)/[^ ]* |\1 |' | sort -k1,1 -k2,2n | awk '!s[$1]++' >"$tmp/depth"
	jq -r '"\(.host) \(.speed) \(.latency_ms) \(.rule_ms)"' "$tmp/hosts-all" | sort >"$tmp/hostinfo"
	join "$tmp/npages" "$tmp/hostinfo" | join -a1 -e0 -o 0,1.2,2.2 - "$tmp/throttled" |
		join -a1 -e0 -o 0,1.2,1.3,2.2 - "$tmp/depth" >"$tmp/f1" 2>/dev/null || true
	# host pages throttled depth, then speed latency rule.
	join "$tmp/f1" "$tmp/hostinfo" |
		awk -v unit="$UNIT_MS" -v to="$TIMEOUT" -v tries=$((RETRY + 1)) -v ra_s="$(awk -v u="$UNIT_MS" 'BEGIN { s = int(100 * u / 1000); print s < 1 ? 1 : s }')" '
		{ host = $1; n = $2; thr = $3; depth = $4; speed = $5; lat = $6 / 1000; rule = $7 / 1000
		  if (speed == "hang") f = depth * unit / 1000 + n * tries * to
		  else {
			req = n + 1 + thr
			f = depth * unit / 1000 + (req - 1) * rule + thr * (ra_s > rule ? ra_s - rule : 0) + lat
		  }
		  if (f > best) { best = f; bh = host; bn = n; bt = thr; bd = depth; br = rule }
		}
		END { printf "%.1f %s %d %d %d %d\n", best, bh, bn, bt, bd, br * 1000 }'
}

curve() {
	local tool=$1 rows=$tmp/curve-rows pid
	web_up "$CURVE_HOSTS" "$CURVE_PAGES"
	command_of "$tool" "$rows"
	rm -f "$rows"
	in_ns timeout "$LIMIT" "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	sample "$pid" "$rows" "$tmp/curve-$tool"
	wait "$pid" || true
}

mkdir -p "$(dirname "$OUT")"
echo "tool,round,status,wall_s,cpu_s,max_rss_kb,peak_pss_kb,pages,missed,extra,violations,failed_robots_requests,connections,kinds" >"$CSV"
echo "$me: $HOSTS hosts x $PAGES pages, seed $SEED, $RUNS round(s) of: $TOOLS" >&2
for round in $(seq "$RUNS"); do
	for tool in $TOOLS; do
		[[ " $SLOW_TOOLS " == *" $tool "* ]] && [ "$round" -gt "$SLOW_RUNS" ] && continue
		one "$tool" "$round"
	done
done
web_up "$HOSTS" "$PAGES"
reach=$(wc -l <"$tmp/reachable")
read -r floor_s fh fn ft fd fr < <(floor)

if [ -n "$CURVE_HOSTS" ]; then
	echo "$me: the memory curve, $CURVE_HOSTS hosts x $CURVE_PAGES pages: $CURVE_TOOLS" >&2
	for tool in $CURVE_TOOLS; do curve "$tool"; done
fi

{
	echo "# scripts/bench-web.sh: $HOSTS hosts x $PAGES pages (fixture-server --web $HOSTS --seed $SEED"
	echo "# --web-pages $PAGES --web-ms $UNIT_MS) in web.sh's namespace, names from dnsmasq; seeds"
	echo "# h00000 to h00002; one request per host, $DELAY ms apart, $C in flight, timeout ${TIMEOUT}s,"
	echo "# one retry; medians of $RUNS rounds (${SLOW_TOOLS:-no tool}: $SLOW_RUNS), the tools in turns, each"
	echo "# on a fresh web."
	echo "# $("$CRAWL" --version | head -1); Scrapy $(/usr/bin/python3 -c 'import scrapy; print(scrapy.__version__)' 2>/dev/null);"
	echo "# $(wget2 --version 2>/dev/null | head -1 | cut -d' ' -f1-3); $(nproc) cores; $(date -u +%Y-%m-%d)"
	echo "#"
	echo "# The reachable set (RFC 9309): $reach pages. Politeness-bound floor: $floor_s s"
	echo "# ($fh: $fn pages, $ft throttled, found at depth $fd, $fr ms apart)."
	echo "# memory: the peak of the summed PSS of the tool's processes (sampled"
	echo "# every 0.5 s); max_rss its largest process's peak RSS (/usr/bin/time)."
	echo "# connections: those that carried the tool's requests, summed over the hosts."
	echo "# violations: what the checker counts (docs/web.md), a failed robots.txt"
	echo "# allowing all for scrapy and wget2 (their requests there are extra pages)."
	echo
	printf '%-12s %4s %8s %8s %9s %10s %10s %10s %8s %8s %7s %11s %11s %s\n' tool runs wall_s pages/s cpu_s cpu_s/1k mem_mb max_rss_mb pages missed extra connections violations floor
	for tool in $TOOLS; do
		col() { awk -F, -v t="$tool" -v c="$1" '$1 == t { print $c }' "$CSV" | median; }
		runs=$(awk -F, -v t="$tool" '$1 == t' "$CSV" | wc -l)
		[ "$runs" -gt 0 ] || continue
		w=$(col 4) cpu=$(col 5) rss=$(col 6) pss=$(col 7) pages=$(col 8) missed=$(col 9) extra=$(col 10) v=$(col 11) cn=$(col 13)
		awk -v t="$tool" -v n="$runs" -v w="$w" -v cpu="$cpu" -v rss="$rss" -v pss="$pss" -v p="$pages" -v m="$missed" \
			-v e="$extra" -v cn="$cn" -v v="$v" -v f="$floor_s" 'BEGIN {
			printf "%-12s %4d %8.1f %8.1f %9.1f %10.3f %10.1f %10.1f %8d %8d %7d %11d %11d %5.2fx\n",
				t, n, w, p / w, cpu, cpu / p * 1000, pss / 1024, rss / 1024, p, m, e, cn, v, w / f }'
	done
	echo
	echo "# violations by kind, each round:"
	awk -F, 'NR > 1 { gsub(/"/, "", $14); printf "#   %-12s %s: %s violations: %s\n", $1, $2, $11, $14 }' "$CSV"
	if [ -n "$CURVE_HOSTS" ]; then
		echo
		echo "# The memory curve: $CURVE_HOSTS hosts x $CURVE_PAGES pages, same rules; memory"
		echo "# (summed PSS, MB) when the pages done first reached each tenth of the largest count."
		for tool in $CURVE_TOOLS; do
			f=$tmp/curve-$tool
			[ -s "$f" ] || continue
			awk -v t="$tool" '{ s[NR] = $0; if ($2 > top) top = $2; if ($3 > peak) peak = $3 }
				END {
					line = sprintf("%-12s peak %6.1f MB |", t, peak / 1024); k = 1
					for (i = 1; i <= NR; i++) {
						split(s[i], a, " ")
						while (k <= 10 && a[2] >= top * k / 10) {
							line = line sprintf(" %d:%.1f", a[2], a[3] / 1024); k++
						}
					}
					print line
				}' "$f"
		done
	fi
} >"$OUT"
cat "$OUT"
