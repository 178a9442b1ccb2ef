#!/bin/bash
# What the link scanner costs on real pages, away from the network
# (tests/bench/scan_tree.c): every page of a documentation tree parsed in
# memory, as a crawl feeds a body, rounds of it timed. With a commit, that
# commit's library is built in a temporary directory and its program run
# in turn with this tree's (which goes first alternates), TURNS times
# each; nothing is asserted.
#   scripts/bench-scan.sh [COMMIT]
#   BUILD=dir       where this tree is built (default build)
#   DOCS_DIR=dir    the tree (default /usr/share/doc/python3.11/html, from
#                   python3.11-doc, which scripts/deps.sh installs)
#   ROUNDS=n        rounds a run (default 15), TURNS=n runs each (default 3)
#   NODEPS=1        do not call scripts/deps.sh
set -eu
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
BUILD=${BUILD:-build}
DOCS_DIR=${DOCS_DIR:-/usr/share/doc/python3.11/html}
ROUNDS=${ROUNDS:-15}
TURNS=${TURNS:-3}
if [ ! -d "$DOCS_DIR" ] && [ "${NODEPS:-0}" != 1 ]; then
	scripts/deps.sh python3.11-doc >&2 || true
fi
[ -d "$DOCS_DIR" ] || { echo "bench-scan: no $DOCS_DIR (install python3.11-doc, or give DOCS_DIR)" >&2; exit 1; }
LIBS="$(pkg-config --libs libcurl libxml-2.0 zlib libbrotlidec libzstd icu-uc libcrypto lmdb hiredis) -lev -lm -pthread"
XML_CFLAGS=$(pkg-config --cflags libxml-2.0)

make --no-print-directory BUILD="$BUILD" "$BUILD/bench/scan_tree" >/dev/null
echo "# $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'); $DOCS_DIR, $ROUNDS rounds a run"
progs=("$BUILD/bench/scan_tree")
names=("this tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- lib || echo ', with changes to lib/'))")
if [ $# -gt 0 ]; then
	old=$(mktemp -d "${TMPDIR:-/tmp}/bench-scan.XXXXXX")
	trap 'rm -rf "$old"' EXIT
	git archive "$1" | tar -x -C "$old"
	make -C "$old" --no-print-directory BUILD=build build/libcrawl.a >/dev/null
	# shellcheck disable=SC2086
	cc -std=c11 -D_GNU_SOURCE -O2 -g -I"$old/lib" $XML_CFLAGS \
		tests/bench/scan_tree.c "$old/build/libcrawl.a" $LIBS -o "$old/scan_tree"
	progs+=("$old/scan_tree")
	names+=("commit $(git rev-parse --short "$1")")
fi
for round in $(seq "$TURNS"); do
	for k in $(turns "$round" "${#progs[@]}"); do
		echo "${names[k]}: $("${progs[k]}" "$DOCS_DIR" "$ROUNDS")"
	done
done
