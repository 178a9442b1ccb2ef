#!/bin/bash
# Draws the timeline of a trace written by crawl --trace as a Gantt chart:
# one lane per worker (grouped by model, with --mode=all), one bar per
# transfer from its start to its end, failed transfers in red. Writes
# OUT.png and OUT.svg (gnuplot; installs gnuplot-nox through scripts/deps.sh
# when it is missing).
#
#   scripts/timeline.sh TRACE.json OUT [TITLE]
#
# Lanes are labelled "MODEL worker ID" (the row's worker id of the JSON
# lines); times are seconds from the start of each model's run.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/timeline.sh TRACE.json OUT [TITLE]" >&2; exit 2; }
trace=$1 out=$2 title=${3:-crawl --trace: one lane per worker, one bar per transfer}
cd "$(dirname "$0")/.."
command -v gnuplot >/dev/null 2>&1 || scripts/deps.sh gnuplot-nox=gnuplot
command -v jq >/dev/null 2>&1 || scripts/deps.sh jq
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-timeline.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# One line a transfer: model start_s end_s failed lane-key, lanes sorted by
# model (pid) then worker (tid). Process names: the model's (pid a multiple
# of 1000), so that procs' worker processes go under "procs".
jq -r '
	(reduce (.traceEvents[] | select(.ph == "M" and .name == "process_name")) as $m
		({}; .[($m.pid | tostring)] = $m.args.name)) as $names
	| .traceEvents[] | select(.ph == "X" and .cat == "transfer")
	| [(.pid / 1000 | floor), .tid,
	   ($names[((.pid / 1000 | floor) * 1000 | tostring)] // "crawl"),
	   (.ts / 1e6), ((.ts + .dur) / 1e6), (if .args.fail then 1 else 0 end)]
	| @tsv' "$trace" | sort -k1,1n -k2,2n >"$tmp/xfers"
[ -s "$tmp/xfers" ] || { echo "timeline.sh: no transfer in $trace" >&2; exit 1; }

# Lane numbers from the top; a colour per model.
awk -F'\t' '
	{ key = $1 "\t" $2
	  if (!(key in lane)) { lane[key] = n++; label[lane[key]] = $3 " worker " $2 }
	  if (!($1 in model)) model[$1] = m++
	  print $4, $5, lane[key], ($6 ? 8 : model[$1] + 1) >"'"$tmp"'/bars" }
	END {
	  printf "set ytics (" >"'"$tmp"'/ytics"
	  for (i = 0; i < n; i++) printf "%s\"%s\" %d", (i ? ", " : ""), label[i], i >>"'"$tmp"'/ytics"
	  print ")" >>"'"$tmp"'/ytics"
	  print n >"'"$tmp"'/lanes" }' "$tmp/xfers"
lanes=$(cat "$tmp/lanes")
height=$((120 + 16 * lanes)); [ "$height" -lt 360 ] && height=360; [ "$height" -gt 4000 ] && height=4000
ytics="set ytics font ',8'"; [ "$lanes" -le 120 ] && ytics=$(cat "$tmp/ytics")

mkdir -p "$(dirname "$out")"
for term in png svg; do
	if [ $term = png ]; then setterm="set terminal pngcairo size 1000,$height noenhanced"
	else setterm="set terminal svg size 1000,$height noenhanced"; fi
	gnuplot <<-GP
	$setterm
	set output '$out.$term'
	set title "$title"
	set xlabel 'seconds from the start of the run'
	$ytics
	set yrange [$lanes - 0.5:-0.5]
	set xrange [0:*]
	set grid xtics
	set key off
	set style fill solid 0.85 border -1
	set linetype 1 lc rgb '#4e79a7'
	set linetype 2 lc rgb '#f28e2b'
	set linetype 3 lc rgb '#59a14f'
	set linetype 4 lc rgb '#b07aa1'
	set linetype 5 lc rgb '#76b7b2'
	set linetype 6 lc rgb '#9c755f'
	set linetype 7 lc rgb '#edc948'
	set linetype 8 lc rgb '#e15759'
	plot '$tmp/bars' using ((\$1 + \$2) / 2):3:((\$2 - \$1) / 2):(0.35):4 with boxxyerror lc variable
	GP
done
echo "timeline: $out.png $out.svg ($lanes lanes, $(wc -l <"$tmp/xfers") transfers)"
