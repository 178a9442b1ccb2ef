#!/bin/bash
# What the URL module costs per link (tests/bench/bench_url.c): a page's
# links, and the http(s) cases of the WHATWG URL test data, each cleaned,
# resolved against its page and split as the frontier splits it. With a
# commit, that commit's URL module is built in a temporary directory and
# measured in the same run, before this tree's; nothing is asserted.
#   scripts/bench-url.sh [COMMIT]
#   BUILD=dir       where this tree is built (default build)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
LIBS="$(pkg-config --libs libcurl libxml-2.0 zlib icu-uc jansson) -lev -lm -pthread"

make --no-print-directory BUILD="$BUILD" "$BUILD/bench/bench_url" >/dev/null
echo "# $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'); ns per link, median of 5 runs"
if [ $# -gt 0 ]; then
	old=$(mktemp -d "${TMPDIR:-/tmp}/bench-url.XXXXXX")
	trap 'rm -rf "$old"' EXIT
	git archive "$1" | tar -x -C "$old"
	make -C "$old" --no-print-directory BUILD=build build/libcrawl.a >/dev/null
	# shellcheck disable=SC2086
	cc -std=c11 -D_GNU_SOURCE -O2 -g -I"$old/lib" tests/bench/bench_url.c \
		"$old/build/libcrawl.a" $LIBS -o "$old/bench_url"
	echo "== commit $(git rev-parse --short "$1")"
	"$old/bench_url"
fi
echo "== this tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- lib || echo ', with changes to lib/'))"
"$BUILD/bench/bench_url"
