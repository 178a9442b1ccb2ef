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
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then PAGES=${PAGES:-1000}; RUNS=${RUNS:-1}; fi
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
trap 'fixture_stop; redis_stop; rm -rf "$tmp"' EXIT
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
