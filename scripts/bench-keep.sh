#!/bin/bash
# What keeping costs: the same crawl of the fixture with nothing kept, with
# --warc, with --warc and --cdx, with --save, and with --warc and --save.
# The crawl is the fixture's static site (testdata/site, followed to depth
# 3) plus a flat list of PAGES generated pages and BIG bodies of SIZE bytes
# (/bytes/SIZE/i: text that gzip shrinks well, as HTML does). Medians of
# RUNS runs of wall time (the crawl's own Use time) and CPU time (user +
# sys), every command under a timeout, 127.0.0.1 only; files go to a
# temporary folder (TMPDIR) removed at the end.
#   BUILD=dir   crawl and fixture-server (default build)
#   MODE=m      the model (default coro); C=n in flight (default 50)
#   PAGES=n     generated pages (default 2000); BIG=n (default 100), SIZE=bytes (default 100000)
#   RUNS=n      runs per figure (default 3); QUICK=1: 200 pages, 10 big bodies, 1 run
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then PAGES=${PAGES:-200}; BIG=${BIG:-10}; RUNS=${RUNS:-1}; fi
MODE=${MODE:-coro}
C=${C:-50}
PAGES=${PAGES:-2000}
BIG=${BIG:-100}
SIZE=${SIZE:-100000}
RUNS=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "bench-keep.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

. scripts/fixture-lib.sh
. scripts/bench-lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-bench-keep.XXXXXX")
trap 'fixture_stop; rm -rf "$tmp"' EXIT
fixture_start "$tmp" --root testdata/site || exit 1
base=$FIXTURE_BASE
{
	echo "$base/site/"
	for i in $(seq 1 $((PAGES - 1))); do echo "$base/graph/$PAGES/10/$i"; done
	for i in $(seq "$BIG"); do echo "$base/delay/0/big$i"; done
} >"$tmp/list.txt"
# /delay/0/ANY is one small HTML page; the big bodies are /bytes/SIZE.
sed -i "s|/delay/0/big\([0-9]*\)$|/bytes/$SIZE?\1|" "$tmp/list.txt"
urls=$(wc -l <"$tmp/list.txt")

# measure ARGS...: runs crawl RUNS times with ARGS; prints "wall cpu ok
# kept_mb", medians, where kept_mb is what the run left in $tmp/keep.
measure() {
	local walls=() cpus=() ok=0 kept=0
	for _ in $(seq "$RUNS"); do
		rm -rf "$tmp/keep"
		mkdir -p "$tmp/keep"
		run_timed 300 "$tmp/out" "$BUILD/crawl" -q --format=jsonl \
			--mode="$MODE" -c "$C" --depth 3 --no-robots --include "^$base/site/" "$@" \
			"$tmp/list.txt"
		walls+=("$(sed -n 's/.*"wall_s":\([0-9.]*\).*/\1/p' "$tmp/out")")
		cpus+=("$CPU")
		ok=$(sed -n 's/.*"ok":\([0-9]*\).*/\1/p' "$tmp/out")
		kept=$(du -sk "$tmp/keep" | awk '{printf "%.1f", $1 / 1024}')
	done
	printf "%s %s %s %s\n" "$(med "${walls[@]}")" "$(med "${cpus[@]}")" "$ok" "$kept"
}

echo "# $urls listed URLs ($PAGES pages, $BIG bodies of $SIZE bytes) and the site to depth 3," \
	"--mode=$MODE -c $C, medians of $RUNS ($(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'))"
printf '%-18s %6s %8s %8s %9s %9s %8s\n' kept rows wall_s cpu_s rows/s cpu_x disk_mb
plain_cpu=
while IFS='|' read -r name args; do
	# shellcheck disable=SC2086
	read -r wall cpu ok kept < <(measure ${args//KEEP/$tmp/keep})
	[ -z "$plain_cpu" ] && plain_cpu=$cpu
	printf '%-18s %6s %8.3f %8.2f %9.0f %9.2f %8s\n' "$name" "$ok" "$wall" "$cpu" \
		"$(awk -v n="$ok" -v w="$wall" 'BEGIN { print (w > 0 ? n / w : 0) }')" \
		"$(awk -v a="$cpu" -v b="$plain_cpu" 'BEGIN { print (b > 0 ? a / b : 0) }')" "$kept"
done <<'EOF'
nothing|
--warc|--warc KEEP/a.warc.gz
--warc --cdx|--warc KEEP/a.warc.gz --cdx KEEP/a.cdxj
--save|--save KEEP/m
--warc --save|--warc KEEP/a.warc.gz --save KEEP/m
EOF
