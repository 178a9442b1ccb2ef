#!/bin/bash
# Whether politeness, retries and sitemaps cost a plain crawl anything when
# unused: the same list through two builds of crawl, alternating, and the
# median wall time of each. The list is N x /bytes/1024?i=K of the local
# fixture server, coro with 100 in flight and connections kept; a second
# case adds --retry 3 (no URL fails, so no retry happens: the per-host
# queues --retry turns on are what it measures).
#   BASE=path    the crawl to compare with (e.g. a build of main); required
#   BUILD=dir    where this crawl and fixture-server are (default build)
#   N=20000      URLs;  ROUNDS=7  runs of each build per case
#   QUICK=1      N=500 and ROUNDS=1, for tests
# Only 127.0.0.1 is contacted; every run is under timeout.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
BUILD=${BUILD:-build}
: "${BASE:?BASE=path/to/another/crawl is required}"
N=${N:-20000} ROUNDS=${ROUNDS:-7}
[ "${QUICK:-0}" = 1 ] && N=500 ROUNDS=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-polite.XXXXXX")
trap 'kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null; rm -rf "$tmp"' EXIT

"$BUILD/fixture-server" --port 0 --port-file "$tmp/port" -q &
fpid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || { echo "bench-polite: the fixture server did not start" >&2; exit 1; }
base=http://127.0.0.1:$(cat "$tmp/port")
seq 1 "$N" | sed "s|^|$base/bytes/1024?i=|" > "$tmp/list"

# wall CRAWL ARGS...: the run's "Use time" in seconds, or "fail".
wall() {
	local out
	out=$(timeout 120 "$@" --mode=coro -c 100 -q "$tmp/list" 2>/dev/null) || { echo fail; return; }
	sed -n 's/^Use time: \([0-9.]*\)s$/\1/p' <<<"$out"
}

echo "bench-polite: $N URLs, coro -c 100, $ROUNDS runs each, alternating; median wall (s)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s %10s %10s\n' case base this
for args in "" "--retry 3"; do
	: > "$tmp/a"; : > "$tmp/b"
	for _ in $(seq "$ROUNDS"); do
		wall "$BASE" $args >> "$tmp/a"
		wall "$BUILD/crawl" $args >> "$tmp/b"
	done
	printf '%-16s %10s %10s\n' "${args:-plain}" "$(median < "$tmp/a")" "$(median < "$tmp/b")"
done
