#!/bin/sh
# The cost of the primitives the models are made of, measured on this
# machine: thread versus coroutine creation, context switches and memory.
# Arguments go to crawl-cost (--quick, --format=csv, --runs=N; see --help).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
[ -x "$BUILD/crawl-cost" ] || make --no-print-directory BUILD="$BUILD" "$BUILD/crawl-cost" >&2
exec "$BUILD/crawl-cost" "$@"
