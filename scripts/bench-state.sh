#!/bin/bash
# What --state costs: the fixture's generated site (/graph/N/F/, every page
# reachable) crawled in memory and with --state FILE (a new store each
# run), by one model; the whole process's wall time (the store's set-up,
# the list's seeding and the last commit included) and peak resident set,
# medians of RUNS runs, every command under a timeout, 127.0.0.1 only.
#   BUILD=dir   crawl and fixture-server (default build)
#   PAGES=n     pages in the site (default 10000); FANOUT=f (default 4)
#   MODES="..." the models (default: every one); RUNS=n (default 5)
#   QUICK=1     1,000 pages, 1 run
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then PAGES=${PAGES:-1000}; RUNS=${RUNS:-1}; fi
PAGES=${PAGES:-10000}
FANOUT=${FANOUT:-4}
MODES=${MODES:-$("$BUILD/crawl" --list-modes | tr '\n' ' ')}
RUNS=${RUNS:-5}
[ -x /usr/bin/time ] || { echo "bench-state.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

. scripts/fixture-lib.sh
. scripts/bench-lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-bench-state.XXXXXX")
trap 'fixture_stop; rm -rf "$tmp"' EXIT
fixture_start "$tmp" || exit 1
depth=0 reach=1 level=1
while [ "$reach" -lt "$PAGES" ]; do level=$((level * FANOUT)); reach=$((reach + level)); depth=$((depth + 1)); done
root="$FIXTURE_BASE/graph/$PAGES/$FANOUT/"

# measure MODE ARGS...: runs crawl RUNS times; prints "wall_s rss_kb rows"
# medians (wall: the process's, from the monotonic clock).
measure() {
	local walls=() rss=() rows=0 mode=$1
	shift
	for _ in $(seq "$RUNS"); do
		rm -f "$tmp"/s.db*
		run_timed 120 "$tmp/stdout" "$BUILD/crawl" --mode="$mode" \
			--depth "$depth" --format=jsonl --no-progress -o "$tmp/out" "$@" "$root"
		walls+=("$(printf '%.3f' "$WALL")")
		rss+=("$RSS")
		rows=$(grep -c '"url"' "$tmp/out")
	done
	echo "$(med "${walls[@]}") $(med "${rss[@]}") $rows"
}

echo "# scripts/bench-state.sh: $PAGES pages of /graph/$PAGES/$FANOUT/, depth $depth, medians of $RUNS ($(nproc) cores, LMDB $(pkg-config --modversion lmdb 2>/dev/null), $(date -u '+%Y-%m-%d %H:%M UTC'))"
printf '%-7s %6s %9s %9s %9s %9s %7s\n' model rows mem_s state_s mem_kb state_kb ratio
for m in $MODES; do
	read -r mw mr mn < <(measure "$m")
	read -r sw sr sn < <(measure "$m" --state "$tmp/s.db")
	printf '%-7s %6s %9s %9s %9s %9s %7s\n' "$m" "$sn" "$mw" "$sw" "$mr" "$sr" \
		"$(awk -v a="$sw" -v b="$mw" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }')"
done
