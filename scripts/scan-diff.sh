#!/bin/bash
# The link scanner against libxml2 over a documentation tree: every .html
# file under DOCS_DIR (default python3.11-doc's) is parsed by both, and the
# links must be the same, in the same order (tests/unit/test_scan.c, with
# SCAN_DOCS set). Prints the pages, links and pages that differ.
#   BUILD=dir      the build folder (default build)
#   DOCS_DIR=dir   the tree (default /usr/share/doc/python3.11/html)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DOCS_DIR=${DOCS_DIR:-/usr/share/doc/python3.11/html}
[ -d "$DOCS_DIR" ] || { echo "${0##*/}: $DOCS_DIR is missing (apt-get install python3.11-doc)" >&2; exit 1; }
make --no-print-directory BUILD="$BUILD" "$BUILD/tests/test_scan" >&2
SCAN_DOCS=$DOCS_DIR "$BUILD/tests/test_scan"
