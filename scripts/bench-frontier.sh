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
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then PAGES=${PAGES:-1000}; RUNS=${RUNS:-1}; fi
if [ -n "${LATENCY:-}" ]; then PAGES=${PAGES:-2000}; RUNS=${RUNS:-3}; fi
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
	local n=$1 addr=$2 t0 t1 c0 c1 front=()
	shift 2
	rm -f "$tmp"/out.* "$tmp"/time.*
	[ "$addr" != - ] && front=(--frontier "redis://$addr/bench$n")
	redis-cli -p "${REDIS_ADDR##*:}" config resetstat >/dev/null
	c0=$(awk -v a="$(rinfo cpu used_cpu_user)" -v b="$(rinfo cpu used_cpu_sys)" 'BEGIN { print a + b }')
	t0=$(date +%s%N)
	timeout 600 /usr/bin/time -f "%U %S" -o "$tmp/time.1" "$BUILD/crawl" --mode="$MODE" -c 50 \
		--depth "$depth" --format=jsonl --no-progress "${front[@]}" "$@" -o "$tmp/out.1" "$root" \
		2>/dev/null
	t1=$(date +%s%N)
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
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')" \
		"$(awk '{ printf "%.2f", $1 + $2 }' "$tmp/time.1")" \
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

if [ -n "${LATENCY:-}" ]; then
	[ -x "$BUILD/tools/tcpdelay" ] || { echo "$me: $BUILD/tools/tcpdelay is missing (make tools builds it)" >&2; exit 1; }
	# Not in a pipeline: the proxies it starts are this shell's, for the
	# EXIT trap to stop.
	rc=0
	if [ -n "${OUT:-}" ]; then
		latency_table > >(tee "$OUT") || rc=$?
		wait "$!"
	else
		latency_table || rc=$?
	fi
	exit "$rc"
fi

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
