#!/bin/bash
# LMDB (lib/state_lmdb.c, what --state uses) against SQLite for the work the
# --state store does in a crawl of PAGES pages (tests/bench/store/
# store_bench.c: the seen-set probes, queue inserts, done marks committed
# in batches and the queue read back that the frontier does); medians of
# RUNS runs, seconds. SQLite is not a dependency of crawl: libsqlite3-dev
# must be installed to run this.
#   BUILD=dir   where libcrawl.a is (default build)
#   PAGES=n     (default 10000); RUNS=n (default 5)
#   BATCHES="a b"  rows per commit (default "30 1400": 50 ms of a crawl at
#               600 and at 28,000 pages/s, the output's flush interval)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PAGES=${PAGES:-10000}
RUNS=${RUNS:-5}
BATCHES=${BATCHES:-30 1400}
pkg-config --exists sqlite3 || { echo "bench-store.sh: libsqlite3-dev is not installed" >&2; exit 1; }
. scripts/bench-lib.sh
make --no-print-directory BUILD="$BUILD" "$BUILD/libcrawl.a" >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-bench-store.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A sanitizer build's library (make sanitize sets SAN) links with the same
# sanitizers.
cc -std=c11 -D_GNU_SOURCE -O2 ${SAN:+-fsanitize=$SAN} -Ilib tests/bench/store/store_bench.c \
	"$BUILD/libcrawl.a" $(pkg-config --libs sqlite3 lmdb hiredis zlib) -pthread -o "$tmp/store_bench"
echo "# scripts/bench-store.sh: the store's work for $PAGES pages, medians of $RUNS ($(nproc) cores, SQLite $(pkg-config --modversion sqlite3), LMDB $(dpkg-query -W -f '${Version}' liblmdb-dev 2>/dev/null), $(date -u '+%Y-%m-%d %H:%M UTC'))"
printf '%-7s %7s %9s %12s\n' store batch seconds us_per_page
for b in $BATCHES; do
	for _ in $(seq "$RUNS"); do "$tmp/store_bench" "$PAGES" "$tmp" "$b"; done >"$tmp/out"
	for s in lmdb sqlite; do
		t=$(awk -v s="$s" '$1 == s { print $2 }' "$tmp/out" | median)
		printf '%-7s %7s %9s %12s\n' "$s" "$b" "$t" "$(awk -v t="$t" -v n="$PAGES" 'BEGIN { printf "%.1f", t / n * 1e6 }')"
	done
done
