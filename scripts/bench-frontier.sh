#!/bin/bash
# What a shared frontier costs, and what more workers give: the fixture's
# generated site (/graph/N/F/, every page reachable) crawled by one crawl
# process in memory, then by 1, 2 and 4 worker processes sharing one
# --frontier in a redis-server of this script's own (loopback, nothing
# saved), all on this machine. For each: wall time from the first start to
# the last exit, pages/s, CPU of the workers (user + sys, from
# /usr/bin/time) and of redis-server (from /proc) per page, medians of RUNS
# runs; every run checks that the union of the outputs holds every page
# once. Every command runs under a timeout; only 127.0.0.1 is contacted.
#   BUILD=dir   crawl and fixture-server (default build)
#   PAGES=n     pages in the site (default 10000); FANOUT=f (default 4)
#   MODE=m      the workers' model (default coro)
#   WORKERS="1 2 4"  the worker counts; RUNS=n (default 5)
#   OUT=file    also write the table there
#   QUICK=1     1,000 pages, 1 run
#   LATENCY=1   the cost of the server's distance instead: one worker
#               (MODE) at -c 50 on a 2,000-page graph (PAGES), RUNS 3, in memory,
#               on --frontier direct, and through tests/tools/tcpdelay at 2
#               and 10 ms round trips (RTTS="2 10"), plain, with --delay 1,
#               and with --per-host 4 --no-robots; for each --frontier row
#               the server's work per page from INFO commandstats (commands,
#               EVALSHA among them), INFO stats (bytes in and out) and INFO
#               cpu (make tools builds tcpdelay)
#   WEB=1       a crawl of many hosts instead: the synthetic web (docs/web.md;
#               fixture-server --web WEB_HOSTS --web-pages WEB_PAGES --web-ms
#               WEB_MS, seed 1, three seeds, names by --resolve, a web started
#               afresh for every run), RUNS 3. First one MODE worker at -c 50
#               with --per-host WEB_PER_HOST --delay WEB_DELAY: in memory, on
#               --frontier direct and through tcpdelay at the RTTS round trips,
#               each with its pages/s against the crawl in memory; then
#               WEB_WORKERS ("1 4") workers at -c WEB_C each sharing one
#               --frontier direct on a slower web of more, smaller hosts
#               (WEB_SLOW_HOSTS hosts of WEB_SLOW_PAGES pages, --web-ms
#               WEB_SLOW_MS: the transfers in flight bound it, not a host's
#               pace), their speed-up over one worker. Every run is judged by
#               scripts/web-check.sh on the union of the outputs: no rule
#               broken over all the workers (per host, gaps, robots.txt), no
#               page missed, none extra, each once
#   LAB=1       the same slower web across machines instead (root):
#               scripts/lab.sh's network of namespaces, the web on its
#               machine with names by its DNS server, redis-server on its
#               own (appendonly, appendfsync everysec), each worker on a
#               machine of its own reaching the server through tcpdelay,
#               LAB_MS (1) each way. In memory on one worker's machine, then
#               WEB_WORKERS workers at -c WEB_C, RUNS 3, each run judged by
#               scripts/web-check.sh on the web's machine; for each shared
#               row the server's work a page (commands, scripts, bytes in
#               and out, CPU, from its INFO) and what one server's core
#               carries at that rate: pages/s, and workers at this pace
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then PAGES=${PAGES:-1000}; RUNS=${RUNS:-1}; fi
if [ -n "${LATENCY:-}" ]; then PAGES=${PAGES:-2000}; RUNS=${RUNS:-3}; fi
if [ -n "${WEB:-}" ] || [ -n "${LAB:-}" ]; then RUNS=${RUNS:-3}; fi
WEB_HOSTS=${WEB_HOSTS:-200} WEB_PAGES=${WEB_PAGES:-10} WEB_MS=${WEB_MS:-2}
WEB_PER_HOST=${WEB_PER_HOST:-2} WEB_DELAY=${WEB_DELAY:-20}
WEB_WORKERS=${WEB_WORKERS:-1 4} WEB_C=${WEB_C:-4} WEB_SLOW_MS=${WEB_SLOW_MS:-20}
WEB_SLOW_HOSTS=${WEB_SLOW_HOSTS:-1000} WEB_SLOW_PAGES=${WEB_SLOW_PAGES:-3}
PAGES=${PAGES:-10000}
FANOUT=${FANOUT:-4}
MODE=${MODE:-coro}
WORKERS=${WORKERS:-1 2 4}
RUNS=${RUNS:-5}
me=${0##*/}
for t in /usr/bin/time redis-server redis-cli; do
	command -v "$t" >/dev/null || { echo "$me: $t is missing (scripts/deps.sh installs it)" >&2; exit 1; }
done

. scripts/fixture-lib.sh
. scripts/bench-lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-bench-frontier.XXXXXX")
proxies=()
trap 'for p in "${proxies[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; fixture_stop; redis_stop; rm -rf "$tmp"' EXIT
fixture_start "$tmp" || exit 1
redis_start "$tmp" || exit 1
depth=0 reach=1 level=1
while [ "$reach" -lt "$PAGES" ]; do level=$((level * FANOUT)); reach=$((reach + level)); depth=$((depth + 1)); done
root="$FIXTURE_BASE/graph/$PAGES/$FANOUT/"
tick=$(getconf CLK_TCK)
run_n=0

# redis_cpu: redis-server's CPU seconds so far.
redis_cpu() { awk -v t="$tick" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$REDIS_PID/stat"; }

# once K N: one crawl of the site, by K workers sharing a frontier called
# benchN (K 0: one process, in memory); prints "wall_s workers_cpu_s
# redis_cpu_s".
once() {
	local k=$1 n=$2 pids=() i t0 t1 r0 r1 args
	rm -f "$tmp"/out.* "$tmp"/time.*
	r0=$(redis_cpu)
	t0=$(date +%s%N)
	for i in $(seq "$((k > 0 ? k : 1))"); do
		args=()
		[ "$k" -gt 0 ] && args=(--frontier "redis://$REDIS_ADDR/bench$n")
		timeout 300 /usr/bin/time -f "%U %S" -o "$tmp/time.$i" "$BUILD/crawl" --mode="$MODE" \
			--depth "$depth" --format=jsonl --no-progress "${args[@]}" -o "$tmp/out.$i" "$root" \
			2>/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	t1=$(date +%s%N)
	r1=$(redis_cpu)
	local rows uniq
	rows=$(cat "$tmp"/out.* | grep -c '"url"')
	uniq=$(cat "$tmp"/out.* | grep -o '"url":"[^"]*"' | sort -u | wc -l)
	if [ "$rows" -ne "$PAGES" ] || [ "$uniq" -ne "$PAGES" ]; then
		echo "$me: $k workers wrote $rows rows, $uniq distinct, not $PAGES" >&2
		return 1
	fi
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')" \
		"$(cat "$tmp"/time.* | awk '{ s += $1 + $2 } END { printf "%.2f", s }')" \
		"$(awk -v a="$r0" -v b="$r1" -v k="$k" 'BEGIN { printf "%.2f", (k > 0 ? b - a : 0) }')"
}

# rinfo SECTION FIELD: a field of the server's INFO SECTION (asked directly,
# not through a proxy).
rinfo() { redis-cli -p "${REDIS_ADDR##*:}" info "$1" | tr -d '\r' | awk -F: -v f="$2" '$1 == f { print $2 }'; }

# rcalls: the commands the server ran since its last CONFIG RESETSTAT, as
# "total evalsha": INFO and CONFIG left out (this script's own).
rcalls() {
	redis-cli -p "${REDIS_ADDR##*:}" info commandstats | tr -d '\r' | awk -F'[:=,]' '
		/^cmdstat_/ && $1 != "cmdstat_info" && $1 !~ /^cmdstat_config/ { n += $3 }
		$1 == "cmdstat_evalsha" { e = $3 }
		END { printf "%d %d\n", n, e }'
}

# proxy_start MS: tcpdelay in front of the server, holding each chunk MS
# ms each way; sets PROXY_ADDR (in this shell: the EXIT trap stops it).
proxy_start() {
	local pf=$tmp/proxy.$1
	"$BUILD/tools/tcpdelay" -t "$REDIS_ADDR" -d "$1" -p "$pf" </dev/null >/dev/null 2>&1 &
	proxies+=($!)
	for _ in $(seq 100); do [ -s "$pf" ] && break; sleep 0.05; done
	[ -s "$pf" ] || { echo "$me: tcpdelay did not start" >&2; return 1; }
	PROXY_ADDR=127.0.0.1:$(cat "$pf")
}

# lat_once N ADDR ARGS...: one crawl of the site by one MODE worker at -c
# 50 with ARGS, on crawl benchN at ADDR (-: in memory); prints "wall_s
# crawl_cpu_s redis_cpu_s commands evalsha bytes_in bytes_out".
lat_once() {
	local n=$1 addr=$2 c0 c1 front=()
	shift 2
	rm -f "$tmp"/out.* "$tmp"/time.*
	[ "$addr" != - ] && front=(--frontier "redis://$addr/bench$n")
	redis-cli -p "${REDIS_ADDR##*:}" config resetstat >/dev/null
	c0=$(awk -v a="$(rinfo cpu used_cpu_user)" -v b="$(rinfo cpu used_cpu_sys)" 'BEGIN { print a + b }')
	run_timed -n 600 "$tmp/run" "$BUILD/crawl" --mode="$MODE" -c 50 \
		--depth "$depth" --format=jsonl --no-progress "${front[@]}" "$@" -o "$tmp/out.1" "$root"
	c1=$(awk -v a="$(rinfo cpu used_cpu_user)" -v b="$(rinfo cpu used_cpu_sys)" 'BEGIN { print a + b }')
	local rows uniq calls
	rows=$(grep -c '"url"' "$tmp/out.1")
	uniq=$(grep -o '"url":"[^"]*"' "$tmp/out.1" | sort -u | wc -l)
	if [ "$rows" -ne "$PAGES" ] || [ "$uniq" -ne "$PAGES" ]; then
		echo "$me: $addr $* wrote $rows rows, $uniq distinct, not $PAGES" >&2
		return 1
	fi
	calls=$(rcalls)
	[ "$addr" = - ] && calls="0 0"
	echo "$(printf '%.3f' "$WALL")" "$CPU" \
		"$(awk -v a="$c0" -v b="$c1" -v m="$addr" 'BEGIN { printf "%.2f", m == "-" ? 0 : b - a }')" \
		"$calls" "$(rinfo stats total_net_input_bytes)" "$(rinfo stats total_net_output_bytes)"
}

# latency_table: the LATENCY=1 rows, medians of RUNS.
latency_table() {
	local rtt label addr extra w c r cmd ev bi bo
	declare -A at=([direct]=$REDIS_ADDR)
	for rtt in ${RTTS:-2 10}; do
		proxy_start "$(awk -v r="$rtt" 'BEGIN { print r / 2 }')" || return 1
		at[$rtt]=$PROXY_ADDR
	done
	echo "# scripts/bench-frontier.sh LATENCY=1: $PAGES pages of /graph/$PAGES/$FANOUT/, depth $depth, one --mode=$MODE worker at -c 50, medians of $RUNS ($(nproc) cores, redis $(redis-server --version | grep -o 'v=[0-9.]*' | cut -c3-), $(date -u '+%Y-%m-%d %H:%M UTC'))"
	printf '%-34s %8s %8s %9s %9s %9s %9s %9s %9s\n' run wall_s pages/s crawl_cpu redis_cpu \
		cmds/page eval/page B_in/page B_out/pg
	# Each case: a label, where the frontier is (memory, direct or an
	# RTT through tcpdelay), crawl's extra options.
	local cases=("in memory|-|" "--frontier direct|direct|")
	for rtt in ${RTTS:-2 10}; do cases+=("--frontier, $rtt ms round trip|$rtt|"); done
	cases+=("--delay 1, in memory|-|--delay 1" "--delay 1, --frontier direct|direct|--delay 1")
	for rtt in ${RTTS:-2 10}; do cases+=("--delay 1, $rtt ms round trip|$rtt|--delay 1"); done
	cases+=("--per-host 4, in memory|-|--per-host 4 --no-robots"
		"--per-host 4, --frontier direct|direct|--per-host 4 --no-robots")
	for rtt in ${RTTS:-2 10}; do cases+=("--per-host 4, $rtt ms round trip|$rtt|--per-host 4 --no-robots"); done
	local one
	for one in "${cases[@]}"; do
		IFS='|' read -r label where extra <<<"$one"
		addr=-
		[ "$where" != - ] && addr=${at[$where]}
		local ws=() cs=() rs=() cms=() evs=() bis=() bos=()
		for _ in $(seq "$RUNS"); do
			run_n=$((run_n + 1))
			# shellcheck disable=SC2086
			read -r w c r cmd ev bi bo < <(lat_once "$run_n" "$addr" $extra) || return 1
			[ -n "$w" ] || return 1
			ws+=("$w") cs+=("$c") rs+=("$r") cms+=("$cmd") evs+=("$ev") bis+=("$bi") bos+=("$bo")
		done
		w=$(med "${ws[@]}")
		printf '%-34s %8s %8s %9s %9s %9s %9s %9s %9s\n' "$label" "$w" \
			"$(awk -v w="$w" -v n="$PAGES" 'BEGIN { printf "%.0f", n / w }')" \
			"$(med "${cs[@]}")" "$(med "${rs[@]}")" \
			"$(awk -v x="$(med "${cms[@]}")" -v n="$PAGES" 'BEGIN { printf "%.2f", x / n }')" \
			"$(awk -v x="$(med "${evs[@]}")" -v n="$PAGES" 'BEGIN { printf "%.2f", x / n }')" \
			"$(awk -v x="$(med "${bis[@]}")" -v n="$PAGES" -v m="$addr" 'BEGIN { printf "%.0f", m == "-" ? 0 : x / n }')" \
			"$(awk -v x="$(med "${bos[@]}")" -v n="$PAGES" -v m="$addr" 'BEGIN { printf "%.0f", m == "-" ? 0 : x / n }')"
	done
	echo "# The round trips are tcpdelay's (tests/tools/tcpdelay.c): half each way, on loopback. cmds/page: the server's commands over the pages, those its scripts run included (INFO commandstats, less INFO and CONFIG, this script's); eval/page: EVALSHA among them (every change is one script); B_in/B_out: the server's network bytes in and out per page (INFO stats); redis_cpu: INFO cpu's user + sys over the run."
}

# web_once MS HOSTS PAGES ADDR K C: one crawl of a web started afresh
# (HOSTS hosts of PAGES pages on average, unit MS), by K
# MODE workers at -c C sharing crawl webN at ADDR (-: one process, in
# memory), with --per-host WEB_PER_HOST --delay WEB_DELAY; sets ONE to
# "wall_s rows violations missed extra" (the web's checker over the union).
# Not in a subshell: the web's server is this shell's to stop.
web_once() {
	local ms=$1 hosts=$2 pages=$3 addr=$4 k=$5 cc=$6 i t0 t1 pids=() front=() seeds v to
	# Past the slowest answer (50 units), for the hosts that never answer.
	to=$(awk -v m="$ms" 'BEGIN { t = 60 * m / 1000; printf "%.2f", t < 0.6 ? 0.6 : t }')
	run_n=$((run_n + 1))
	fixture_stop
	fixture_start "$tmp" --web "$hosts" --web-pages "$pages" --web-ms "$ms" --seed 1 \
		--resolve-file "$tmp/resolve" || return 1
	seeds=$(printf "http://h%05d.web.test:${FIXTURE_BASE##*:}/\n" 0 1 2)
	[ "$addr" != - ] && front=(--frontier "redis://$addr/web$run_n")
	rm -f "$tmp"/out.*
	t0=$(date +%s%N)
	for i in $(seq "$k"); do
		# shellcheck disable=SC2086
		timeout 300 "$BUILD/crawl" --mode="$MODE" -c "$cc" --depth 1000 --span-hosts \
			--per-host "$WEB_PER_HOST" --delay "$WEB_DELAY" --retry 1 --timeout "$to" \
			--resolve "@$tmp/resolve" --format=jsonl --no-progress "${front[@]}" \
			-o "$tmp/out.$i" $seeds 2>"$tmp/err.$i" &
		pids+=($!)
	done
	# Exit 1 says a URL failed, as on this web some do (hangs, 5xx).
	local rc
	for i in "${pids[@]}"; do
		rc=0
		wait "$i" || rc=$?
		[ "$rc" -le 1 ] || { echo "$me: a crawl of the web exited $rc:" >&2; cat "$tmp"/err.* >&2; return 1; }
	done
	t1=$(date +%s%N)
	cat "$tmp"/out.* >"$tmp/union"
	# shellcheck disable=SC2086
	v=$(BUILD=$BUILD scripts/web-check.sh --json --fixture "$FIXTURE_BASE" --per-host "$WEB_PER_HOST" \
		--delay "$WEB_DELAY" --rows "$tmp/union" $seeds) || true
	ONE="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') $(grep -c '"url"' "$tmp/union") $(jq -r '[.violations.total, .pages.missed, .pages.extra] | map(tostring) | join(" ")' <<<"$v")"
}

# web_row LABEL MS HOSTS PAGES ADDR K C: RUNS runs of web_once; sets
# WEB_WALL to the median wall time and WEB_ROWS to the rows. A run that broke a rule, missed a page
# or fetched one twice fails the script.
web_row() {
	local label=$1 ws=() w rows vi mi ex
	shift
	for _ in $(seq "$RUNS"); do
		ONE=
		web_once "$@" || return 1
		read -r w rows vi mi ex <<<"$ONE"
		[ -n "$w" ] || return 1
		if [ "$vi" != 0 ] || [ "$mi" != 0 ] || [ "$ex" != 0 ] ||
			[ "$(grep -o '"url":"[^"]*"' "$tmp/union" | sort | uniq -d | wc -l)" -ne 0 ]; then
			echo "$me: $label: $vi violations, $mi missed, $ex extra, or a page twice" >&2
			return 1
		fi
		ws+=("$w")
	done
	WEB_WALL=$(med "${ws[@]}")
	WEB_ROWS=$rows
}

# web_table: the WEB=1 rows.
web_table() {
	local rtt one label where ms hosts pages k cc addr base
	declare -A at=([direct]=$REDIS_ADDR)
	for rtt in ${RTTS:-2 10}; do
		proxy_start "$(awk -v r="$rtt" 'BEGIN { print r / 2 }')" || return 1
		at[$rtt]=$PROXY_ADDR
	done
	echo "# scripts/bench-frontier.sh WEB=1: the synthetic web, $WEB_HOSTS hosts of $WEB_PAGES pages on average (seed 1), three seeds, --per-host $WEB_PER_HOST --delay $WEB_DELAY, --mode=$MODE, medians of $RUNS ($(nproc) cores, redis $(redis-server --version | grep -o 'v=[0-9.]*' | cut -c3-), $(date -u '+%Y-%m-%d %H:%M UTC'))"
	printf '%-46s %8s %6s %8s %9s\n' run wall_s rows pages/s vs_first
	local web="$WEB_MS|$WEB_HOSTS|$WEB_PAGES" slowweb="$WEB_SLOW_MS|$WEB_SLOW_HOSTS|$WEB_SLOW_PAGES"
	local cases=("one worker -c 50, in memory|$web|-|1|50"
		"one worker -c 50, --frontier direct|$web|direct|1|50")
	for rtt in ${RTTS:-2 10}; do cases+=("one worker -c 50, $rtt ms round trip|$web|$rtt|1|50"); done
	local slow="$WEB_SLOW_HOSTS x $WEB_SLOW_PAGES, --web-ms $WEB_SLOW_MS"
	cases+=("$slow, in memory, -c $WEB_C|$slowweb|-|1|$WEB_C")
	for k in $WEB_WORKERS; do
		cases+=("$slow, $k x -c $WEB_C, direct|$slowweb|direct|$k|$WEB_C")
	done
	base=
	for one in "${cases[@]}"; do
		IFS='|' read -r label ms hosts pages where k cc <<<"$one"
		addr=-
		[ "$where" != - ] && addr=${at[$where]}
		web_row "$label" "$ms" "$hosts" "$pages" "$addr" "$k" "$cc" || return 1
		# Each group is set against its first row.
		case $label in *"in memory"*) base=$WEB_WALL ;; esac
		printf '%-46s %8s %6s %8s %9s\n' "$label" "$WEB_WALL" "$WEB_ROWS" \
			"$(awk -v w="$WEB_WALL" -v n="$WEB_ROWS" 'BEGIN { printf "%.0f", n / w }')" \
			"$(awk -v w="$WEB_WALL" -v b="$base" 'BEGIN { printf "%.2fx", b / w }')"
	done
	echo "# vs_first: the group's first row's wall time over this row's (pages/s against it). Every run's union was judged by scripts/web-check.sh: 0 violations over all the workers, 0 pages missed, 0 extra, none twice. Round trips are tcpdelay's (half each way, on loopback)."
}

# The build's folder, whole: lab.sh runs commands from the tree's top.
bin=$(cd "$BUILD" && pwd)

# lab ARGS...: scripts/lab.sh for this script's lab.
lab() { LAB=crawlbench$$ LAB_DIR=$tmp/lab BUILD=$BUILD scripts/lab.sh "$@"; }

# lab_info FIELD...: the fields of the lab's server's INFO, in order.
lab_info() {
	lab exec redis redis-cli -h "$(lab addr redis)" info everything | tr -d '\r' |
		awk -F: -v want="$*" 'BEGIN { n = split(want, w, " ") }
			{ v[$1] = $2 } END { for (i = 1; i <= n; i++) printf "%s ", v[w[i]] + 0; print "" }'
}

# lab_calls: the commands the lab's server ran since its start, as "total
# evalsha" (INFO left out).
lab_calls() {
	lab exec redis redis-cli -h "$(lab addr redis)" info commandstats | tr -d '\r' |
		awk -F'[:=,]' '/^cmdstat_/ && $1 != "cmdstat_info" && $1 !~ /^cmdstat_config/ { n += $3 }
			$1 == "cmdstat_evalsha" { e = $3 } END { printf "%d %d\n", n, e }'
}

# lab_once K: one crawl of the slower web in a lab made afresh, by K
# workers on machines of their own (0: one process in memory, on w1's);
# sets ONE to "wall_s rows violations missed extra commands evalsha
# bytes_in bytes_out server_cpu_s".
lab_once() {
	local k=$1 i t0 t1 pids=() seeds v to front=() n=$((k > 0 ? k : 1)) rc
	to=$(awk -v m="$WEB_SLOW_MS" 'BEGIN { t = 60 * m / 1000; printf "%.2f", t < 0.6 ? 0.6 : t }')
	lab down >/dev/null 2>&1
	lab up "$n" "$WEB_SLOW_HOSTS" 1 --web-pages "$WEB_SLOW_PAGES" --web-ms "$WEB_SLOW_MS" >/dev/null || return 1
	seeds=$(printf 'http://h%05d.web.test/\n' 0 1 2)
	rm -rf "$tmp"/out.* "$tmp/r" && mkdir -p "$tmp/r"
	if [ "$k" -gt 0 ]; then
		lab exec redis redis-server --bind "$(lab addr redis)" --port 6379 --protected-mode no \
			--save '' --appendonly yes --appendfsync everysec --dir "$tmp/r" \
			--logfile "$tmp/r/log" </dev/null >/dev/null 2>&1 &
		for _ in $(seq 100); do
			[ "$(lab exec w1 redis-cli -h "$(lab addr redis)" ping 2>/dev/null)" = PONG ] && break
			sleep 0.05
		done
		for i in $(seq "$k"); do
			rm -f "$tmp/proxy.$i"
			lab exec "w$i" "$bin/tools/tcpdelay" -t "$(lab addr redis):6379" -d "${LAB_MS:-1}" \
				-p "$tmp/proxy.$i" </dev/null >/dev/null 2>&1 &
			for _ in $(seq 100); do [ -s "$tmp/proxy.$i" ] && break; sleep 0.05; done
			[ -s "$tmp/proxy.$i" ] || { echo "$me: tcpdelay did not start on w$i" >&2; return 1; }
		done
	fi
	t0=$(date +%s%N)
	for i in $(seq "$n"); do
		front=()
		[ "$k" -gt 0 ] && front=(--frontier "redis://127.0.0.1:$(cat "$tmp/proxy.$i")/lab")
		# shellcheck disable=SC2086
		LAB=crawlbench$$ LAB_DIR=$tmp/lab BUILD=$BUILD timeout 300 scripts/lab.sh exec "w$i" \
			"$bin/crawl" --mode="$MODE" -c "$WEB_C" \
			--depth 1000 --span-hosts --per-host "$WEB_PER_HOST" --delay "$WEB_DELAY" --retry 1 \
			--timeout "$to" --format=jsonl --no-progress "${front[@]}" -o "$tmp/out.$i" $seeds \
			2>"$tmp/err.$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		rc=0
		wait "$i" || rc=$?
		[ "$rc" -le 1 ] || { echo "$me: a worker in the lab exited $rc:" >&2; cat "$tmp"/err.* >&2; return 1; }
	done
	t1=$(date +%s%N)
	local work="0 0 0 0 0"
	[ "$k" -gt 0 ] && work="$(lab_calls) $(lab_info total_net_input_bytes total_net_output_bytes used_cpu_sys used_cpu_user | awk '{ print $1, $2, $3 + $4 }')"
	cat "$tmp"/out.* >"$tmp/union"
	# shellcheck disable=SC2086
	v=$(lab exec web "$PWD/scripts/web-check.sh" --json --fixture http://127.0.0.1 \
		--fixture-server "$bin/fixture-server" --per-host "$WEB_PER_HOST" --delay "$WEB_DELAY" \
		--rows "$tmp/union" $seeds) || true
	ONE="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') $(grep -c '"url"' "$tmp/union") $(jq -r '[.violations.total, .pages.missed, .pages.extra] | map(tostring) | join(" ")' <<<"$v") $work"
	lab down >/dev/null
}

# lab_table: the LAB=1 rows.
lab_table() {
	[ "$(id -u)" -eq 0 ] || { echo "$me: LAB=1 needs root (network namespaces: scripts/lab.sh)" >&2; return 1; }
	command -v dnsmasq >/dev/null || { echo "$me: LAB=1 needs dnsmasq (dnsmasq-base)" >&2; return 1; }
	local k label one w rows vi mi ex cm ev bi bo cpu base=""
	echo "# scripts/bench-frontier.sh LAB=1: the synthetic web across machines (scripts/lab.sh: network namespaces on a bridge), $WEB_SLOW_HOSTS hosts of $WEB_SLOW_PAGES pages on average (seed 1, --web-ms $WEB_SLOW_MS), names by the web's DNS server, three seeds, --per-host $WEB_PER_HOST --delay $WEB_DELAY, --mode=$MODE -c $WEB_C a worker, each worker $((2 * ${LAB_MS:-1})) ms from the server (tcpdelay on its machine), medians of $RUNS ($(nproc) cores, redis $(redis-server --version | grep -o 'v=[0-9.]*' | cut -c3-), $(date -u '+%Y-%m-%d %H:%M UTC'))"
	printf '%-34s %8s %6s %8s %8s %9s %9s %9s %11s %9s %8s\n' run wall_s rows pages/s vs_one \
		cmds/page evalsha/pg bytes_in/pg bytes_out/pg cpu_us/pg workers
	for k in 0 $WEB_WORKERS; do
		local ws=() cms=() evs=() bis=() bos=() cpus=()
		label="in memory, one machine"
		[ "$k" -gt 0 ] && label="$k worker$([ "$k" -gt 1 ] && echo s), machines of their own"
		for _ in $(seq "$RUNS"); do
			ONE=
			lab_once "$k" || return 1
			read -r w rows vi mi ex cm ev bi bo cpu <<<"$ONE"
			if [ "$vi" != 0 ] || [ "$mi" != 0 ] || [ "$ex" != 0 ] ||
				[ "$(grep -o '"url":"[^"]*"' "$tmp/union" | sort | uniq -d | wc -l)" -ne 0 ]; then
				echo "$me: $label: $vi violations, $mi missed, $ex extra, or a page twice" >&2
				return 1
			fi
			ws+=("$w")
			cms+=("$(awk -v a="$cm" -v n="$rows" 'BEGIN { printf "%.1f", a / n }')")
			evs+=("$(awk -v a="$ev" -v n="$rows" 'BEGIN { printf "%.2f", a / n }')")
			bis+=("$(awk -v a="$bi" -v n="$rows" 'BEGIN { printf "%.0f", a / n }')")
			bos+=("$(awk -v a="$bo" -v n="$rows" 'BEGIN { printf "%.0f", a / n }')")
			cpus+=("$(awk -v a="$cpu" -v n="$rows" 'BEGIN { printf "%.0f", a * 1e6 / n }')")
		done
		w=$(med "${ws[@]}")
		[ "$k" -eq 1 ] && base=$w
		local pps vs carried="-"
		pps=$(awk -v w="$w" -v n="$rows" 'BEGIN { printf "%.0f", n / w }')
		vs=$([ -n "$base" ] && awk -v w="$w" -v b="$base" 'BEGIN { printf "%.2fx", b / w }' || echo -)
		if [ "$k" -gt 0 ]; then
			# One core of the server, all its time on this work: pages/s,
			# and workers each crawling at this row's pace.
			carried=$(awk -v c="$(med "${cpus[@]}")" -v p="$pps" -v k="$k" \
				'BEGIN { if (c <= 0) { print "-"; exit } s = 1e6 / c; printf "%.0f", s / (p / k) }')
		fi
		printf '%-34s %8s %6s %8s %8s %9s %9s %9s %11s %9s %8s\n' "$label" "$w" "$rows" "$pps" "$vs" \
			"$([ "$k" -gt 0 ] && med "${cms[@]}" || echo -)" "$([ "$k" -gt 0 ] && med "${evs[@]}" || echo -)" \
			"$([ "$k" -gt 0 ] && med "${bis[@]}" || echo -)" "$([ "$k" -gt 0 ] && med "${bos[@]}" || echo -)" \
			"$([ "$k" -gt 0 ] && med "${cpus[@]}" || echo -)" "$carried"
	done
	echo "# vs_one: one worker's wall time over this row's. Per page (/pg): the server's commands (INFO commandstats, INFO itself left out), scripts (EVALSHA), bytes in and out (INFO stats) and CPU (INFO cpu, user + sys); workers: how many workers at this row's pace one server's core carries (1 s of its CPU over a worker's pages/s times the CPU a page). Every run's union was judged by scripts/web-check.sh: 0 violations over all the workers, 0 pages missed, 0 extra, none twice."
}

# table FN: the rows of a table function, also to OUT when set; exits with
# its status. Not in a pipeline: the proxies it starts are this shell's,
# for the EXIT trap to stop.
table() {
	[ -x "$BUILD/tools/tcpdelay" ] || { echo "$me: $BUILD/tools/tcpdelay is missing (make tools builds it)" >&2; exit 1; }
	local rc=0
	if [ -n "${OUT:-}" ]; then
		"$1" > >(tee "$OUT") || rc=$?
		wait "$!"
	else
		"$1" || rc=$?
	fi
	exit "$rc"
}

if [ -n "${LAB:-}" ]; then
	command -v jq >/dev/null || { echo "$me: jq is missing (scripts/deps.sh installs it)" >&2; exit 1; }
	trap 'lab down >/dev/null 2>&1; for p in "${proxies[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; fixture_stop; redis_stop; rm -rf "$tmp"' EXIT
	table lab_table
fi
if [ -n "${WEB:-}" ]; then
	command -v jq >/dev/null || { echo "$me: jq is missing (scripts/deps.sh installs it)" >&2; exit 1; }
	table web_table
fi
[ -n "${LATENCY:-}" ] && table latency_table

{
	echo "# scripts/bench-frontier.sh: $PAGES pages of /graph/$PAGES/$FANOUT/, depth $depth, --mode=$MODE, medians of $RUNS ($(nproc) cores, redis $(redis-server --version | grep -o 'v=[0-9.]*' | cut -c3-), $(date -u '+%Y-%m-%d %H:%M UTC'))"
	printf '%-22s %8s %8s %11s %11s %12s\n' run wall_s pages/s crawl_cpu_s redis_cpu_s cpu_us/page
	base_cpu=
	for k in 0 $WORKERS; do
		walls=() cpus=() rcpus=()
		for _ in $(seq "$RUNS"); do
			run_n=$((run_n + 1))
			r=$(once "$k" "$run_n") || exit 1
			read -r w c r <<<"$r"
			walls+=("$w") cpus+=("$c") rcpus+=("$r")
		done
		w=$(med "${walls[@]}") c=$(med "${cpus[@]}") r=$(med "${rcpus[@]}")
		label="in memory, 1 process"
		[ "$k" -gt 0 ] && label="--frontier, $k worker$([ "$k" -gt 1 ] && echo s)"
		printf '%-22s %8s %8s %11s %11s %12s\n' "$label" "$w" \
			"$(awk -v w="$w" -v n="$PAGES" 'BEGIN { printf "%.0f", n / w }')" "$c" "$r" \
			"$(awk -v c="$c" -v r="$r" -v n="$PAGES" 'BEGIN { printf "%.1f", (c + r) * 1e6 / n }')"
		[ -z "$base_cpu" ] && base_cpu=$c
	done
	echo "# cpu_us/page: the workers' and redis-server's CPU over the pages; the shared frontier's cost per page is a row's figure less the in-memory row's."
} | tee ${OUT:+"$OUT"}
