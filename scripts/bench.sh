#!/bin/bash
# The benchmark: every model of crawl and the installed peers on the same URL
# lists against the local fixture server, sweeping the number of URLs twice
# (each peer at the in-flight limit of the crawl model it is compared with,
# then everyone at FIXED in flight), then the pool's size at a fixed list.
# Matched limits: seq 1; thread, coro, procs, curl, wget2 and aiohttp every
# URL at once; pool and the thread-pool peer POOL. A peer that cannot reach
# its limit runs at its most, and the table says so next to its figure
# (curl 7.88 caps --parallel-max at 300). Writes CSV and plots (gnuplot, PNG and
# SVG) into a results folder and prints the tables. Every figure is the median
# of RUNS runs; every command is bounded by a timeout. The defaults take
# about 6 minutes on 2 cores; each case says on stderr when it starts, with
# how many there are and the time gone so far, and its row is printed as
# soon as its runs are done.
#
#   BUILD=dir        crawl and fixture-server (default build)
#   OUT=dir          results folder (default results/bench-DATE)
#   SIZES="10 ..."   URL counts to sweep (default "10 100 1000 10000")
#   DELAY=ms         each URL is /delay/DELAY/i (default 100)
#   RUNS=n           runs per figure (default 3)
#   POOL=n           pool size for the sweep: crawl pool, thread-pool peer (default 100)
#   FIXED=n          in flight for every tool in the second sweep (default 100; seq stays 1)
#   POOL_SIZES="..." pool sizes for the second sweep (default "1 2 4 8 16 32 64 128 256")
#   POOL_URLS=n      URLs for the second sweep (default 256)
#   SEQ_MAX_MS=ms    run sequential only while URLS*DELAY stays under this (default 30000)
#   QUICK=1          a short run for the tests: SIZES="10 50", RUNS=1, few pool sizes
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [ -n "${QUICK:-}" ]; then
	SIZES=${SIZES:-10 50}; RUNS=${RUNS:-1}; DELAY=${DELAY:-50}
	POOL_SIZES=${POOL_SIZES:-1 4 16}; POOL_URLS=${POOL_URLS:-16}
fi
SIZES=${SIZES:-10 100 1000 10000}
DELAY=${DELAY:-100}
RUNS=${RUNS:-3}
POOL=${POOL:-100}
FIXED=${FIXED:-100}
POOL_SIZES=${POOL_SIZES:-1 2 4 8 16 32 64 128 256}
POOL_URLS=${POOL_URLS:-256}
SEQ_MAX_MS=${SEQ_MAX_MS:-30000}
TMAX=${TMAX:-180}
OUT=${OUT:-results/bench-$(date +%Y%m%d-%H%M%S)}

if [ -z "${QUICK:-}" ]; then
	scripts/deps.sh time gnuplot-nox curl wget2 python3-aiohttp python3-requests
fi
[ -x /usr/bin/time ] || { echo "bench.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
mkdir -p "$OUT"
. scripts/fixture-lib.sh
. scripts/bench-lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-bench.XXXXXX")
trap 'fixture_stop; rm -rf "$tmp"' EXIT
ulimit -n "$(ulimit -Hn)"
fixture_start "$tmp"
base=$FIXTURE_BASE
requests() { curl -s "$base/stats" | sed 's/.*"requests":\([0-9]*\).*/\1/'; }

have() { command -v "$1" >/dev/null 2>&1; }
have_py() { /usr/bin/python3 -c "import $1" >/dev/null 2>&1; }

# limit_of NAME URLS SWEEP: the in-flight limit NAME is asked for: in the
# matched sweep, that of the crawl model it is compared with; in the fixed
# one, FIXED (seq: 1).
limit_of() {
	local name=$1 n=$2 sweep=$3
	case $name in
	crawl-seq) echo 1 ;;
	crawl-pool-*) echo "${name#crawl-pool-}" ;;
	*) if [ "$sweep" = sweep-fixed ]; then echo "$FIXED"
	   else case $name in crawl-pool|threadpool) echo "$POOL" ;; *) echo "$n" ;; esac; fi ;;
	esac
}

# reached NAME LIMIT: the limit NAME can really run at, and a note when it is
# below the one asked.
CURL_MAX=300
reached() {
	if [ "$1" = curl ] && [ "$2" -gt "$CURL_MAX" ]; then
		echo "$CURL_MAX (asked $2: curl caps --parallel-max at $CURL_MAX)"
	else
		echo "$2"
	fi
}

# announce NAME URLS LIMIT: says on stderr which case starts, out of how
# many, and the time gone so far (run here, not in run_tool's subshell,
# which could not count).
announce() {
	CASE=$((CASE + 1))
	printf 'bench: case %d of %d: %s, %d URLs, %s in flight (%d run%s; %ds so far)\n' "$CASE" "$CASES" \
		"$1" "$2" "$3" "$RUNS" "$([ "$RUNS" -eq 1 ] || echo s)" "$SECONDS" >&2
}

# run_tool NAME URLS LIST LIMIT: runs NAME on LIST RUNS times with at most
# LIMIT transfers in flight; prints "wall_s rss_mb ok" as medians (ok: runs
# where the fixture saw every request).
run_tool() {
	local name=$1 n=$2 list=$3 limit=$4 walls=() rsss=() ok=0
	local lim=$limit
	[ "$name" = curl ] && [ "$lim" -gt "$CURL_MAX" ] && lim=$CURL_MAX
	for _ in $(seq "$RUNS"); do
		local before after
		before=$(requests)
		case $name in
		crawl-seq)    cmd=("$BUILD/crawl" --mode=seq -q "$list") ;;
		crawl-pool-*) cmd=("$BUILD/crawl" --mode=pool -c "$lim" -q "$list") ;;
		crawl-*)      cmd=("$BUILD/crawl" --mode="${name#crawl-}" -c "$lim" -q "$list") ;;
		curl)         cmd=(curl -s -K "$list.curl" --parallel --parallel-immediate --parallel-max "$lim") ;;
		wget2)        cmd=(wget2 -q --no-robots --max-threads="$lim" -i "$list" -O /dev/null) ;;
		# 0: no connection limit (and no keep-alive), as when every URL is in flight.
		aiohttp)      cmd=(/usr/bin/python3 scripts/peers/aiohttp_crawl.py "$list" "$((lim >= n ? 0 : lim))") ;;
		threadpool)   cmd=(/usr/bin/python3 scripts/peers/threadpool_crawl.py "$list" "$lim") ;;
		esac
		run_timed -n "$TMAX" "$tmp/run" "${cmd[@]}"
		after=$(requests)
		if [ "$STATUS" -eq 0 ] && [ "$((after - before))" -ge "$n" ]; then ok=$((ok + 1)); fi
		walls+=("$WALL"); rsss+=("$RSS")
	done
	echo "$(printf '%.2f' "$(med "${walls[@]}")") $(kb_to_mb "$(med "${rsss[@]}")") $ok"
}

tools=(crawl-seq crawl-thread crawl-pool crawl-coro crawl-procs)
have curl && tools+=(curl) || echo "# curl not installed: skipped" >&2
have wget2 && tools+=(wget2) || echo "# wget2 not installed: skipped" >&2
have_py aiohttp && tools+=(aiohttp) || echo "# python3-aiohttp not installed: skipped" >&2
have_py requests && tools+=(threadpool) || echo "# python3-requests not installed: skipped" >&2

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "crawl: $("$BUILD/crawl" --version)"
	echo "load: $(uptime)"
	echo "settings: SIZES='$SIZES' DELAY=$DELAY RUNS=$RUNS POOL=$POOL FIXED=$FIXED POOL_SIZES='$POOL_SIZES' POOL_URLS=$POOL_URLS"
} | tee "$OUT/machine.txt"

# sweep NAME TITLE: the URL-count sweep, into OUT/NAME.csv.
sweep() {
	local csv="$OUT/$1.csv" n list t lim w r ok
	echo
	echo "== $2 (median of $RUNS)"
	echo "tool,urls,delay_ms,limit,wall_s,rss_mb,runs_ok,runs,note" >"$csv"
	printf '%-14s %7s %7s %9s %9s %8s  %s\n' tool urls limit wall_s rss_mb ok note
	for n in $SIZES; do
		list="$tmp/list-$n.txt"
		for t in "${tools[@]}"; do
			if [ "$t" = crawl-seq ] && [ "$((n * DELAY))" -gt "$SEQ_MAX_MS" ]; then continue; fi
			lim=$(limit_of "$t" "$n" "$1")
			if [ "$((n * DELAY / lim))" -gt 60000 ]; then continue; fi
			read -r got note < <(reached "$t" "$lim")
			announce "$t" "$n" "$got"
			read -r w r ok < <(run_tool "$t" "$n" "$list" "$lim")
			printf '%-14s %7d %7s %9s %9s %6s/%s  %s\n' "$t" "$n" "$got" "$w" "$r" "$ok" "$RUNS" "$note"
			echo "$t,$n,$DELAY,$got,$w,$r,$ok,$RUNS,$note" >>"$csv"
		done
	done
}

for n in $SIZES; do
	list="$tmp/list-$n.txt"
	for i in $(seq "$n"); do echo "$base/delay/$DELAY/$i"; done >"$list"
	sed 's/.*/url = "&"\noutput = "\/dev\/null"/' "$list" >"$list.curl"
done
# The cases, counted as sweep and the pool loop will run them.
CASE=0 CASES=0
for sw in sweep sweep-fixed; do
	for n in $SIZES; do
		for t in "${tools[@]}"; do
			if [ "$t" = crawl-seq ] && [ "$((n * DELAY))" -gt "$SEQ_MAX_MS" ]; then continue; fi
			lim=$(limit_of "$t" "$n" "$sw")
			[ "$((n * DELAY / lim))" -gt 60000 ] || CASES=$((CASES + 1))
		done
	done
done
CASES=$((CASES + $(wc -w <<<"$POOL_SIZES")))
sweep sweep "sweep: N URLs of /delay/$DELAY/i, every tool at the limit of the crawl model it is compared with"
sweep sweep-fixed "sweep: N URLs of /delay/$DELAY/i, every tool at $FIXED in flight (seq 1)"

echo
echo "== pool size: $POOL_URLS URLs of /delay/$DELAY/i (median of $RUNS)"
echo "pool_size,urls,wall_s,rss_mb,runs_ok,runs" >"$OUT/pool.csv"
list="$tmp/pool.txt"
for i in $(seq "$POOL_URLS"); do echo "$base/delay/$DELAY/p$i"; done >"$list"
printf '%-10s %9s %9s %8s\n' pool_size wall_s rss_mb ok
for p in $POOL_SIZES; do
	announce "crawl-pool-$p" "$POOL_URLS" "$p"
	read -r w r ok < <(run_tool "crawl-pool-$p" "$POOL_URLS" "$list" "$p")
	printf '%-10d %9s %9s %6s/%s\n' "$p" "$w" "$r" "$ok" "$RUNS"
	echo "$p,$POOL_URLS,$w,$r,$ok,$RUNS" >>"$OUT/pool.csv"
done

if command -v gnuplot >/dev/null 2>&1; then
	for term in png svg; do
		if [ $term = png ]; then setterm="set terminal pngcairo size 900,560 noenhanced"; else setterm="set terminal svg size 900,560 noenhanced"; fi
		for sw in sweep sweep-fixed; do
			plots=""
			for t in "${tools[@]}"; do
				plots="$plots '< grep \"^$t,\" $OUT/$sw.csv' using 2:COL with linespoints title '$t',"
			done
			suffix=${sw#sweep}
			if [ -n "$suffix" ]; then how="every tool at $FIXED in flight"; else how="matched in-flight limits"; fi
			gnuplot <<-GP
			$setterm
			set datafile separator ','
			set key outside right
			set logscale xy
			set grid
			set xlabel 'URLs (each /delay/$DELAY/i)'
			set output '$OUT/wall$suffix.$term'
			set title 'Wall time against URLs ($how)'
			set ylabel 'wall time, s'
			COL=5
			plot ${plots%,}
			set output '$OUT/rss$suffix.$term'
			set title 'Peak RSS against URLs ($how)'
			set ylabel 'peak RSS, MB'
			COL=6
			plot ${plots%,}
			GP
		done
		gnuplot <<-GP
		$setterm
		set datafile separator ','
		set grid
		set logscale x 2
		set key off
		set output '$OUT/pool.$term'
		set title 'crawl --mode=pool: wall time against pool size ($POOL_URLS URLs of /delay/$DELAY)'
		set xlabel 'pool size (-c)'
		set ylabel 'wall time, s'
		plot '$OUT/pool.csv' using 1:3 every ::1 with linespoints
		GP
	done
	echo
	echo "plots: $OUT/wall.png $OUT/rss.png $OUT/wall-fixed.png $OUT/rss-fixed.png $OUT/pool.png (and .svg)"
fi
echo "results: $OUT"
