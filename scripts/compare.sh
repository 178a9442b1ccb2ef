#!/bin/bash
# The article's experiment on the local fixture server: five URLs whose
# answers take 1, 2, 3, 4 and 4 seconds, fetched by every model in turn,
# then the comparison table. Extra arguments go to crawl (e.g. --repeat 3).
# When gnuplot is installed, the run's trace is also drawn, every model side
# by side (scripts/timeline.sh): TIMELINE.png and TIMELINE.svg.
#   BUILD=dir          where crawl and fixture-server are (default build)
#   DELAYS="ms ..."    the delays, one URL each (default "1000 2000 3000 4000 4000")
#   TIMELINE=path      the picture, without extension (default BUILD/timeline-demo)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DELAYS=${DELAYS:-1000 2000 3000 4000 4000}
TIMELINE=${TIMELINE:-$BUILD/timeline-demo}

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
status=0
"$BUILD/crawl" --mode=all --trace "$tmp/trace.json" "$@" "$tmp/urls.txt" || status=$?
if command -v gnuplot >/dev/null 2>&1 && [ -s "$tmp/trace.json" ]; then
	echo
	scripts/timeline.sh "$tmp/trace.json" "$TIMELINE" \
		"The article's experiment: $i URLs ($(echo $DELAYS | sed 's/ /, /g') ms), every model" |
		sed 's/^timeline:/picture of the run (one lane per worker):/'
else
	echo
	echo "(no picture of the run: gnuplot is not installed; apt-get install gnuplot-nox)"
fi
exit "$status"
