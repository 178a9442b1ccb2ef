#!/bin/bash
# Peak memory and wall time against the length of a flat URL list: crawl and
# the installed peers fetch the same N URLs at the same concurrency from the
# local fixture server (127.0.0.1 only), for each N in SIZES. Every URL is a
# distinct small body (/bytes/BYTES?i=1..N). Peak RSS and wall time come from
# /usr/bin/time (the process's, start to exit); every figure is the median of
# RUNS runs and every command runs under timeout. A run is ok when it exited
# 0 and the fixture server counted exactly N requests for it (and, for crawl,
# its JSON lines report N URLs fetched); a row is ok when every run was.
# Writes bench-memory.csv (tool,urls,wall_s,rss_mb,ok), the printed table
# (bench-memory.txt) and plots (gnuplot, PNG and SVG: rss-vs-n, wall-vs-n)
# into a results folder.
#
#   BUILD=dir        crawl and fixture-server (default build; built if missing)
#   OUT=dir          results folder (default results/bench-memory-DATE)
#   SIZES="N ..."    list lengths (default "10000 100000 1000000")
#   CONC=n           transfers in flight for every tool (default 100; curl
#                    allows at most 300)
#   TOOLS="..."      what to run, of crawl-coro crawl-pool crawl-thread curl
#                    wget2 (default "crawl-coro crawl-pool curl wget2")
#   BYTES=n          body size of every URL (default 1024)
#   RUNS=n           runs per figure (default 3)
#   TMAX=s           limit for one command (default 600)
#   CAP=s            a tool whose median took longer than this at one size is
#                    skipped at the larger ones (default 120)
#   ENDLESS=s        then crawl the fixture's endless site (/graph/1000000000/50/,
#                    each page linking to 50 new ones) with --depth 50 for s
#                    seconds in each crawl model: pages fetched, links left
#                    queued, peak RSS (default 60; 0 skips it)
#   QUICK=1          a short run for the tests: SIZES="1000 5000", RUNS=1, ENDLESS=2
#   NODEPS=1         do not call scripts/deps.sh (QUICK=1 does not either)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then
	SIZES=${SIZES:-1000 5000}; RUNS=${RUNS:-1}; TMAX=${TMAX:-60}; CAP=${CAP:-30}
	ENDLESS=${ENDLESS:-2}
fi
ENDLESS=${ENDLESS:-60}
SIZES=${SIZES:-10000 100000 1000000}
CONC=${CONC:-100}
TOOLS=${TOOLS:-crawl-coro crawl-pool curl wget2}
BYTES=${BYTES:-1024}
RUNS=${RUNS:-3}
TMAX=${TMAX:-600}
CAP=${CAP:-120}
OUT=${OUT:-results/bench-memory-$(date +%Y%m%d-%H%M%S)}

if [ -z "${QUICK:-}" ] && [ "${NODEPS:-0}" != 1 ]; then
	scripts/deps.sh time gnuplot-nox curl wget2 || echo "bench-memory: some packages are missing; their tools are skipped" >&2
fi
[ -x /usr/bin/time ] || { echo "bench-memory.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
[ -x "$BUILD/crawl" ] && [ -x "$BUILD/fixture-server" ] ||
	timeout 600 make --no-print-directory BUILD="$BUILD" "$BUILD/crawl" "$BUILD/fixture-server" >&2 || exit 1

# Every connection holds a descriptor, and so does every thread's.
ulimit -n "$(ulimit -Hn)"
mkdir -p "$OUT"
. scripts/fixture-lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-memory.XXXXXX")
trap 'fixture_stop; rm -rf "$tmp"' EXIT
fixture_start "$tmp"
base=$FIXTURE_BASE
requests() { timeout 10 curl -s "$base/stats" | sed 's/.*"requests":\([0-9]*\).*/\1/'; }

curl_conc=$((CONC < 300 ? CONC : 300))
[ "$curl_conc" -ne "$CONC" ] && echo "# curl --parallel-max allows at most 300: curl runs with 300" >&2

tools=()
for t in $TOOLS; do
	case $t in
	crawl-coro | crawl-pool | crawl-thread) tools+=("$t") ;;
	curl)
		if command -v curl >/dev/null && curl --help all 2>/dev/null | grep -q -- --parallel-immediate; then
			tools+=(curl)
		else
			echo "# curl with --parallel-immediate (7.68+) is not installed: skipped" >&2
		fi ;;
	wget2)
		if command -v wget2 >/dev/null; then tools+=(wget2); else echo "# wget2 not installed: skipped" >&2; fi ;;
	*) echo "bench-memory.sh: unknown tool '$t' in TOOLS" >&2; exit 2 ;;
	esac
done

# run_tool NAME N LIST: runs NAME on LIST RUNS times; prints
# "wall_s rss_mb runs_ok timed_out" (medians; runs that fetched every URL;
# 1 when a run hit TMAX).
run_tool() {
	local name=$1 n=$2 list=$3 walls=() rsss=() ok=0 tout=0 cmd
	for _ in $(seq "$RUNS"); do
		local before after rc=0 good=1
		rm -f "$tmp/time" "$tmp/out.jsonl"
		case $name in
		crawl-*) cmd=("$BUILD/crawl" --mode="${name#crawl-}" -c "$CONC" --no-progress --format=jsonl -o "$tmp/out.jsonl" "$list") ;;
		curl)    cmd=(curl -s -K "$list.curl" --parallel --parallel-immediate --parallel-max "$curl_conc") ;;
		wget2)   cmd=(wget2 -q --no-robots --no-hsts --no-hpkp --no-ocsp --no-netrc --no-cookies
		                --max-threads="$CONC" -i "$list" -O /dev/null) ;;
		esac
		before=$(requests)
		timeout "$TMAX" /usr/bin/time -f "%e %M" -o "$tmp/time" "${cmd[@]}" >/dev/null 2>"$tmp/err" || rc=$?
		[ "$rc" -eq 124 ] && tout=1
		# Connections the tool left closing count their last requests: let them.
		sleep 0.2
		after=$(requests)
		[ "$rc" -eq 0 ] && [ "$((after - before))" -eq "$n" ] || good=0
		if [ "$good" = 1 ] && [ "${name%%-*}" = crawl ]; then
			[ "$(tail -1 "$tmp/out.jsonl" | sed -n 's/.*"ok":\([0-9]*\).*/\1/p')" = "$n" ] || good=0
		fi
		ok=$((ok + good))
		rm -f "$tmp/out.jsonl"
		read -r w m < <(tail -1 "$tmp/time" 2>/dev/null | grep -E '^[0-9.]+ [0-9]+$' || echo "nan nan")
		walls+=("$w"); rsss+=("$m")
	done
	local mw mr
	mw=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	mr=$(printf '%s\n' "${rsss[@]}" | sort -g | awk '{a[NR]=$1} END {m = a[int((NR+1)/2)]; if (m == "nan") print m; else printf "%.1f", m/1024}')
	echo "$mw $mr $ok $tout"
}

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- lib cmd Makefile 2>/dev/null || commit="$commit (with uncommitted changes)"
{
	echo "scripts/bench-memory.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "crawl: $("$BUILD/crawl" --version | head -1), built from commit $commit"
	command -v curl >/dev/null && echo "curl: $(curl --version | head -1 | cut -d' ' -f1-2)"
	command -v wget2 >/dev/null && echo "wget2: $(wget2 --version 2>/dev/null | head -1)"
	echo "settings: SIZES='$SIZES' CONC=$CONC BYTES=$BYTES RUNS=$RUNS TMAX=$TMAX CAP=$CAP"
	echo
	echo "N URLs of /bytes/$BYTES?i=1..N from the fixture server, $CONC in flight; medians of $RUNS run(s)"
	printf '%-13s %8s %9s %9s  %s\n' tool urls wall_s rss_mb ok
} | tee "$OUT/bench-memory.txt"

echo "tool,urls,wall_s,rss_mb,ok" >"$OUT/bench-memory.csv"
declare -A capped=()
for n in $SIZES; do
	list="$tmp/list-$n.txt"
	seq "$n" | sed "s|^|$base/bytes/$BYTES?i=|" >"$list"
	sed 's/.*/url = "&"\noutput = "\/dev\/null"/' "$list" >"$list.curl"
	for t in "${tools[@]}"; do
		if [ -n "${capped[$t]:-}" ]; then
			printf '%-13s %8d %9s %9s  %s\n' "$t" "$n" - - "skipped: ${capped[$t]}" | tee -a "$OUT/bench-memory.txt"
			continue
		fi
		read -r w r ok tout < <(run_tool "$t" "$n" "$list")
		if [ "$ok" -eq "$RUNS" ]; then good=yes; note=yes; else good=no; note="no ($ok of $RUNS runs fetched every URL)"; fi
		[ "$tout" = 1 ] && note="$note; timed out (TMAX=${TMAX}s)"
		printf '%-13s %8d %9s %9s  %s\n' "$t" "$n" "$w" "$r" "$note" | tee -a "$OUT/bench-memory.txt"
		echo "$t,$n,$w,$r,$good" >>"$OUT/bench-memory.csv"
		if [ "$tout" = 1 ]; then
			capped[$t]="timed out (TMAX=${TMAX}s) at $n URLs"
		elif awk -v w="$w" -v c="$CAP" 'BEGIN {exit !(w > c)}'; then
			capped[$t]="took ${w}s at $n URLs (CAP=${CAP}s)"
		fi
	done
	rm -f "$list" "$list.curl"
done

# Peak RSS per URL of list between the smallest and the largest size measured.
{
	echo
	awk -F, 'NR > 1 && $4 != "nan" {
		if (!($1 in lo) || $2 < lo[$1]) { lo[$1] = $2; rlo[$1] = $4 }
		if (!($1 in hi) || $2 > hi[$1]) { hi[$1] = $2; rhi[$1] = $4 }
		if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 }
	} END {
		for (i = 1; i <= k; i++) {
			t = order[i]
			if (hi[t] > lo[t])
				printf "%-13s %7.0f bytes of peak RSS per URL of list (%d to %d URLs)\n", t,
					(rhi[t] - rlo[t]) * 1048576 / (hi[t] - lo[t]), lo[t], hi[t]
		}
	}' "$OUT/bench-memory.csv"
	echo
	echo "wall and peak RSS from /usr/bin/time; ok: exit status 0 and the fixture server counted exactly N requests in every run"
} | tee -a "$OUT/bench-memory.txt"

# The endless site: the frontier grows without end; memory must not.
if [ "$ENDLESS" -gt 0 ]; then
	{
		echo
		echo "endless site $base/graph/1000000000/50/, --depth 50 --no-robots --deadline $ENDLESS (100 in flight)"
		printf '%-13s %9s %12s %9s %9s\n' model pages queued_left pages/s rss_mb
	} | tee -a "$OUT/bench-memory.txt"
	for m in coro thread pool; do
		rm -f "$tmp/time" "$tmp/endless.jsonl"
		timeout $((ENDLESS + 60)) /usr/bin/time -f "%e %M" -o "$tmp/time" "$BUILD/crawl" --mode=$m --depth 50 \
			--no-robots --no-progress --deadline "$ENDLESS" --format=jsonl -o "$tmp/endless.jsonl" \
			"$base/graph/1000000000/50/" 2>/dev/null || true
		sum=$(tail -1 "$tmp/endless.jsonl")
		pages=$(sed -n 's/.*"ok":\([0-9]*\).*/\1/p' <<<"$sum")
		left=$(sed -n 's/.*"queued_left":\([0-9]*\).*/\1/p' <<<"$sum")
		read -r w kb < <(tail -1 "$tmp/time")
		printf '%-13s %9s %12s %9.0f %9.1f\n' "crawl-$m" "$pages" "$left" "$(awk -v p="$pages" -v e="$ENDLESS" 'BEGIN {print p / e}')" \
			"$(awk -v k="$kb" 'BEGIN {print k / 1024}')" | tee -a "$OUT/bench-memory.txt"
		echo "endless,crawl-$m,$ENDLESS,$pages,$left,$(awk -v k="$kb" 'BEGIN {printf "%.1f", k / 1024}')" >>"$OUT/endless.csv"
	done
fi

if command -v gnuplot >/dev/null 2>&1; then
	for term in png svg; do
		if [ $term = png ]; then setterm="set terminal pngcairo size 900,560 noenhanced"; else setterm="set terminal svg size 900,560 noenhanced"; fi
		plots=""
		for t in "${tools[@]}"; do
			plots="$plots '< grep \"^$t,\" $OUT/bench-memory.csv' using 2:COL with linespoints title '$t',"
		done
		cat >"$tmp/plot.gp" <<-GP
		$setterm
		set datafile separator ','
		set key outside right
		set logscale xy
		set grid
		set xlabel 'URLs in the list (each /bytes/$BYTES?i=N, $CONC in flight)'
		set output '$OUT/rss-vs-n.$term'
		set title 'Peak RSS against the number of URLs'
		set ylabel 'peak RSS, MB'
		COL=4
		plot ${plots%,}
		set output '$OUT/wall-vs-n.$term'
		set title 'Wall time against the number of URLs'
		set ylabel 'wall time, s'
		COL=3
		plot ${plots%,}
		GP
		# A tool without one measured point leaves gnuplot nothing to plot.
		timeout 60 gnuplot "$tmp/plot.gp" || echo "bench-memory.sh: gnuplot failed on the $term plots" >&2
	done
	echo
	echo "plots: $OUT/rss-vs-n.png $OUT/wall-vs-n.png (and .svg)"
fi
echo "results: $OUT"
