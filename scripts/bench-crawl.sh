#!/bin/bash
# The link-following benchmark: a crawl of the fixture's generated site
# (/graph/N/F/, every page reachable within DEPTH hops) by every model, and
# what parsing costs: each model also fetches the same pages as a flat list
# (--depth 0, nothing parsed), and the difference in CPU time per page is
# the cost of parsing and following. Medians of RUNS runs, every command
# under a timeout, 127.0.0.1 only.
#   BUILD=dir   crawl and fixture-server (default build)
#   PAGES=n     pages in the site (default 10000); FANOUT=f (default 10)
#   C=n         transfers in flight for every model (default 100)
#   RUNS=n      runs per figure (default 3); QUICK=1: 500 pages, 1 run
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then PAGES=${PAGES:-500}; RUNS=${RUNS:-1}; fi
PAGES=${PAGES:-10000}
FANOUT=${FANOUT:-10}
C=${C:-100}
RUNS=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "bench-crawl.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

. scripts/fixture-lib.sh
. scripts/bench-lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-bench-crawl.XXXXXX")
trap 'fixture_stop; rm -rf "$tmp"' EXIT
ulimit -n "$(ulimit -Hn)"
fixture_start "$tmp" || exit 1
base=$FIXTURE_BASE

# The depth that reaches every page: 1 + F + F^2 + ... >= PAGES.
depth=0 reach=1 level=1
while [ "$reach" -lt "$PAGES" ]; do level=$((level * FANOUT)); reach=$((reach + level)); depth=$((depth + 1)); done
root="$base/graph/$PAGES/$FANOUT/"
{ echo "$root"; for i in $(seq 1 $((PAGES - 1))); do echo "$base/graph/$PAGES/$FANOUT/$i"; done; } >"$tmp/flat.txt"

# measure ARGS...: runs crawl RUNS times; prints "wall cpu pages" medians
# (wall: the crawl's Use time; cpu: user + sys of the process).
measure() {
	local walls=() cpus=() pages=0
	for _ in $(seq "$RUNS"); do
		run_timed 300 "$tmp/out" "$BUILD/crawl" -q --format=jsonl "$@"
		walls+=("$(sed -n 's/.*"wall_s":\([0-9.]*\).*/\1/p' "$tmp/out")")
		cpus+=("$CPU")
		pages=$(sed -n 's/.*"ok":\([0-9]*\).*/\1/p' "$tmp/out")
	done
	printf "%.3f %s %s\n" "$(med "${walls[@]}")" "$(med "${cpus[@]}")" "$pages"
}

echo "# $PAGES pages of $root, depth $depth, $C in flight, medians of $RUNS ($(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'))"
printf '%-16s %6s %9s %9s %9s %13s\n' model pages wall_s cpu_s flat_cpu parse_us/page
for m in seq thread pool coro coro-all; do
	case $m in
	coro-all) args=(--mode=coro) ;;     # every discovered page started at once
	*)        args=(--mode=$m -c "$C") ;;
	esac
	read -r w cpu pages < <(measure "${args[@]}" --depth "$depth" "$root")
	read -r _ fcpu _ < <(measure "${args[@]}" "$tmp/flat.txt")
	# CPU time ticks in 10 ms, and other work on the machine adds noise: a
	# flat run may show more CPU than the crawl. Such a difference is no
	# measurement of parsing; it is shown as 0.0 with a mark.
	per=$(awk -v a="$cpu" -v b="$fcpu" -v n="$pages" 'BEGIN { if (a < b) { printf "0.0*"; exit }
		printf "%.1f", n ? (a - b) / n * 1e6 : 0 }')
	if [ "${per%\*}" != "$per" ]; then clamped=1; fi
	printf '%-16s %6s %9s %9s %9s %13s\n' "$m" "$pages" "$w" "$cpu" "$fcpu" "$per"
done
if [ -n "${clamped:-}" ]; then
	echo "* the flat run took more CPU than the crawl: the difference is below the CPU clock's 10 ms"
	echo "  and the noise of other work on the machine, so parsing cost is shown as 0.0, not negative"
fi
