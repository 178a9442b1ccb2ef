#!/bin/bash
# The article's experiment on the local fixture server: five URLs whose
# answers take 1, 2, 3, 4 and 4 seconds, fetched by every model in turn,
# then the comparison table. Extra arguments go to crawl (e.g. --repeat 3).
#   BUILD=dir          where crawl and fixture-server are (default build)
#   DELAYS="ms ..."    the delays, one URL each (default "1000 2000 3000 4000 4000")
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DELAYS=${DELAYS:-1000 2000 3000 4000 4000}

. scripts/fixture-lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-compare.XXXXXX")
trap 'fixture_stop; rm -rf "$tmp"' EXIT
fixture_start "$tmp"
base=$FIXTURE_BASE

i=0
for d in $DELAYS; do
	i=$((i + 1))
	echo "$base/delay/$d/$i"
done >"$tmp/urls.txt"

echo "# The article's experiment: $i URLs on the local fixture server, answering after"
echo "# $(echo $DELAYS | sed 's/ / ms, /g') ms; each model runs in a process of its own."
echo
"$BUILD/crawl" --mode=all "$@" "$tmp/urls.txt"
