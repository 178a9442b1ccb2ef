#!/bin/bash
# What the check of a --state file costs (lib/state_lmdb_check.c: LMDB's
# meta pages read, then every page and every record walked in a child
# process, before crawl writes a byte of the file), on the state of a
# whole crawl of the fixture's generated site (/graph/N/4/): the check alone
# (tests/bench/state_walk.c) with the file in the page cache and with its
# pages dropped first, and the whole run that opens the finished state and
# says so; medians of RUNS runs, 127.0.0.1 only.
#   BUILD=dir   crawl and fixture-server (default build)
#   PAGES=n     pages in the site (default 100000); RUNS=n (default 5)
#   QUICK=1     2,000 pages, 1 run
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then PAGES=${PAGES:-2000}; RUNS=${RUNS:-1}; fi
PAGES=${PAGES:-100000}
RUNS=${RUNS:-5}
make --no-print-directory BUILD="$BUILD" "$BUILD/bench/state_walk" >/dev/null || exit 1

. scripts/fixture-lib.sh
. scripts/bench-lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-bench-state-check.XXXXXX")
trap 'fixture_stop; rm -rf "$tmp"' EXIT
fixture_start "$tmp" || exit 1
depth=0 reach=1 level=1
while [ "$reach" -lt "$PAGES" ]; do level=$((level * 4)); reach=$((reach + level)); depth=$((depth + 1)); done
root="$FIXTURE_BASE/graph/$PAGES/4/"
crawl=("$BUILD/crawl" --depth "$depth" --format=jsonl --no-progress --state "$tmp/s.db" -o "$tmp/out.jsonl" "$root")
timeout 600 "${crawl[@]}" 2>/dev/null
rows=$(grep -c '"url"' "$tmp/out.jsonl")
[ "$rows" -eq "$PAGES" ] || { echo "bench-state-check.sh: the crawl wrote $rows rows, not $PAGES" >&2; exit 1; }
cached=() dropped=() finished=()
for _ in $(seq "$RUNS"); do
	read -r t pages psize < <("$BUILD/bench/state_walk" "$tmp/s.db") || exit 1
	cached+=("$t")
	read -r t _ _ < <("$BUILD/bench/state_walk" "$tmp/s.db" dropped) || exit 1
	dropped+=("$t")
	run_timed -n 600 "$tmp/again" "${crawl[@]}"
	grep -q 'this crawl is finished' "$tmp/again.err" || { cat "$tmp/again.err" >&2; exit 1; }
	finished+=("$WALL")
done
echo "# scripts/bench-state-check.sh: the state of a $PAGES-page crawl of /graph/$PAGES/4/, depth $depth ($(stat -c %s "$tmp/s.db") bytes, $pages pages of $psize), medians of $RUNS ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), LMDB $(pkg-config --modversion lmdb 2>/dev/null), $(date -u '+%Y-%m-%d %H:%M UTC'))"
printf '%-28s %8s\n' case seconds
printf '%-28s %8s\n' "check, file in page cache" "$(med "${cached[@]}")"
printf '%-28s %8s\n' "check, file dropped first" "$(med "${dropped[@]}")"
printf '%-28s %8s\n' "run on the finished state" "$(med "${finished[@]}")"
