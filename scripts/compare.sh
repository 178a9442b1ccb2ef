#!/bin/bash
# The article's experiment on the local fixture server: five URLs whose
# answers take 1, 2, 3, 4 and 4 seconds, fetched by every model in turn,
# then the comparison table. Extra arguments go to crawl (e.g. --repeat 3).
# When gnuplot is installed, the run's trace is also drawn, every model side
# by side (scripts/timeline.sh): TIMELINE.png and TIMELINE.svg.
# The output fits 100 columns: the comparison shows its main columns, with
# a legend, the settings every model shared and the takeaway in words; the
# whole table (every column) is kept in BUILD/demo-comparison.txt.
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
"$BUILD/crawl" --mode=all --trace "$tmp/trace.json" "$@" "$tmp/urls.txt" >"$tmp/out" || status=$?
# The models' own tables (unless -q), their long summary lines wrapped.
awk '/^Shared: /{exit} {print}' "$tmp/out" | fold -s -w 100 | sed "s/ *$//"
awk '/^Shared: /{p=1} p' "$tmp/out" >"$BUILD/demo-comparison.txt"
# The comparison's main columns, picked by name from its header row.
awk -v want="mode ok failed wall_s speedup user_s sys_s rss_mb threads vcsw conns p50_ms max_ms" '
	BEGIN { n = split(want, w, " ") }
	$1 == "mode" { for (i = 1; i <= NF; i++) col[$i] = i; on = 1; next }
	on && NF { rows++; for (k = 1; k <= n; k++) cell[rows, k] = $(col[w[k]]) }
	END {
		for (k = 1; k <= n; k++) {
			width[k] = length(w[k])
			for (r = 1; r <= rows; r++) if (length(cell[r, k]) > width[k]) width[k] = length(cell[r, k])
		}
		for (r = 0; r <= rows; r++) {
			line = ""
			for (k = 1; k <= n; k++) {
				v = r ? cell[r, k] : w[k]
				line = line (k == 1 ? sprintf("%-" width[k] "s", v) : sprintf("  %" width[k] "s", v))
			}
			print line
		}
	}' "$BUILD/demo-comparison.txt"
echo
fold -s -w 100 <<LEGEND | sed "s/ *$//"
wall_s: the crawl's wall time; speedup: seq's wall time over this model's; user_s, sys_s: CPU seconds; rss_mb: peak resident memory of the model's process (a fresh crawl, measured as /usr/bin/time measures any program; procs: its processes summed); threads: most alive at once; vcsw: voluntary context switches; conns: connections opened; p50_ms, max_ms: the median and the longest fetch. Every column: $BUILD/demo-comparison.txt; what each means: docs/crawling.md, "Comparing the models".
LEGEND
echo
grep '^Shared: ' "$BUILD/demo-comparison.txt" | fold -s -w 100 | sed "s/ *$//"
# The takeaway, in words, from the figures above. Which models run one
# transfer at a time the registry says (--list-modes=limits), not a name.
awk -v delays="$DELAYS" -v one="$("$BUILD/crawl" --list-modes=limits | awk '$2 == 1 { printf "%s ", $1 }')" '
	$1 == "mode" { for (i = 1; i <= NF; i++) col[$i] = i; on = 1; next }
	on && NF { m[++n] = $1; wall[n] = $(col["wall_s"]); th[n] = $(col["threads"]) }
	END {
		k = split(delays, d, " "); sum = 0; max = 0
		for (i = 1; i <= k; i++) { sum += d[i] / 1000; if (d[i] / 1000 > max) max = d[i] / 1000 }
		seq = ""; conc = ""; threads = ""
		for (i = 1; i <= n; i++) {
			if (index(" " one, " " m[i] " ")) seq = seq (seq == "" ? "" : ", ") m[i] " " wall[i] " s"
			else conc = conc (conc == "" ? "" : ", ") m[i] " " wall[i] " s"
			threads = threads (threads == "" ? "" : ", ") m[i] " " th[i]
		}
		printf "\nTakeaway: "
		if (seq != "") printf "sequential code pays the sum of the delays (%s; the delays add up to %g s); ", seq, sum
		printf "every concurrent model pays only the longest one (%g s): %s. ", max, conc
		printf "What differs is the cost of getting there: threads alive at most, %s", threads
		printf " (procs: summed over its processes).\n"
	}' "$BUILD/demo-comparison.txt" | fold -s -w 100 | sed "s/ *$//"
if command -v gnuplot >/dev/null 2>&1 && [ -s "$tmp/trace.json" ]; then
	echo
	scripts/timeline.sh "$tmp/trace.json" "$TIMELINE" \
		"The article's experiment: $i URLs ($(echo $DELAYS | sed 's/ /, /g') ms), every model" |
		sed "s/^timeline:/picture of the run:/"
else
	echo
	echo "(no picture of the run: gnuplot is not installed; apt-get install gnuplot-nox)"
fi
exit "$status"
