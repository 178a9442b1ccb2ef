#!/bin/bash
# Peak memory and wall time against the length of a flat URL list: crawl and
# the installed peers fetch the same N URLs at the same concurrency from the
# local fixture server (127.0.0.1 only), for each N in SIZES. Every URL is a
# distinct small body (/bytes/BYTES?i=1..N). Peak RSS comes from
# /usr/bin/time, wall time from the clock around the run, start to exit
# (scripts/bench-lib.sh's run_timed); every figure is the median of RUNS
# runs and every command runs under timeout. A run is ok when it exited
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
#                    seconds in each crawl model, and in coro with
#                    --max-queue 1000000: pages fetched, links left queued and
#                    dropped, peak RSS, the spill file's peak disk use
#                    (endless.csv); then the seen set's bytes per URL, from
#                    two crawls of 20,000 and 100,000 pages (default 60; 0
#                    skips it all)
#   AGAINST=dir      a folder holding another build's crawl (an earlier
#                    commit's, built with make BUILD=...): each crawl row is
#                    run with it too, in turn in the same rounds (A B A B),
#                    as an "against:" row, and the ratio is printed
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
. scripts/bench-lib.sh
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

# run_one NAME N LIST CRAWL: runs NAME (CRAWL: the crawl program, for the
# crawl-* tools) on LIST once; sets WALL and RSS (run_timed's), GOOD (1:
# it fetched every URL) and TOUT (1: it hit TMAX).
run_one() {
	local name=$1 n=$2 list=$3 crawl=$4 before after cmd
	GOOD=1 TOUT=0
	rm -f "$tmp/out.jsonl"
	case $name in
	crawl-*) cmd=("$crawl" --mode="${name#crawl-}" -c "$CONC" --no-progress --format=jsonl -o "$tmp/out.jsonl" "$list") ;;
	curl)    cmd=(curl -s -K "$list.curl" --parallel --parallel-immediate --parallel-max "$curl_conc") ;;
	wget2)   cmd=(wget2 -q --no-robots --no-hsts --no-hpkp --no-ocsp --no-netrc --no-cookies
	                --max-threads="$CONC" -i "$list" -O /dev/null) ;;
	esac
	before=$(requests)
	run_timed -n "$TMAX" "$tmp/run" "${cmd[@]}"
	[ "$STATUS" -eq 124 ] && TOUT=1
	# Connections the tool left closing count their last requests: let them.
	sleep 0.2
	after=$(requests)
	[ "$STATUS" -eq 0 ] && [ "$((after - before))" -eq "$n" ] || GOOD=0
	if [ "$GOOD" = 1 ] && [ "${name%%-*}" = crawl ]; then
		[ "$(tail -1 "$tmp/out.jsonl" | sed -n 's/.*"ok":\([0-9]*\).*/\1/p')" = "$n" ] || GOOD=0
	fi
	rm -f "$tmp/out.jsonl"
}

# run_tool NAME N LIST [CRAWL...]: runs NAME on LIST RUNS times with each
# crawl program given (default this build's) in turn within each round,
# the order reversed every other round;
# prints a line "wall_s rss_mb runs_ok timed_out" for each (medians; runs
# that fetched every URL; 1 when a run hit TMAX).
run_tool() {
	local name=$1 n=$2 list=$3 k
	shift 3
	local crawls=("${@:-$BUILD/crawl}")
	local -a walls rsss oks touts
	for k in "${!crawls[@]}"; do walls[k]="" rsss[k]="" oks[k]=0 touts[k]=0; done
	local r
	for r in $(seq "$RUNS"); do
		for k in $(turns "$r" "${#crawls[@]}"); do
			run_one "$name" "$n" "$list" "${crawls[k]}"
			walls[k]+=" $WALL" rsss[k]+=" $RSS"
			oks[k]=$((oks[k] + GOOD))
			[ "$TOUT" = 1 ] && touts[k]=1
		done
	done
	for k in "${!crawls[@]}"; do
		# shellcheck disable=SC2086
		echo "$(printf '%.2f' "$(med ${walls[k]})") $(kb_to_mb "$(med ${rsss[k]})") ${oks[k]} ${touts[k]}"
	done
}

commit=$(git -C "$BUILD" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$BUILD" diff --quiet HEAD -- :/lib :/cmd :/Makefile 2>/dev/null || commit="$commit (with uncommitted changes)"
{
	echo "scripts/bench-memory.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "crawl: $("$BUILD/crawl" --version | head -1), built from commit $commit"
	command -v curl >/dev/null && echo "curl: $(curl --version | head -1 | cut -d' ' -f1-2)"
	command -v wget2 >/dev/null && echo "wget2: $(wget2 --version 2>/dev/null | head -1)"
	echo "settings: SIZES='$SIZES' CONC=$CONC BYTES=$BYTES RUNS=$RUNS TMAX=$TMAX CAP=$CAP"
	if [ -n "${AGAINST:-}" ]; then
		acommit=$(git -C "$AGAINST" rev-parse --short HEAD 2>/dev/null || echo unknown)
		echo "against: $AGAINST/crawl, $("$AGAINST/crawl" --version | head -1), commit $acommit; each crawl row and its against: row in turn in every round, which goes first alternating"
	fi
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
		names=("$t") crawls=("$BUILD/crawl")
		if [ -n "${AGAINST:-}" ] && [ "${t%%-*}" = crawl ]; then
			names+=("against:$t") crawls+=("$AGAINST/crawl")
		fi
		mapfile -t results < <(run_tool "$t" "$n" "$list" "${crawls[@]}")
		for k in "${!names[@]}"; do
			read -r w r ok tout <<<"${results[k]}"
			name=${names[k]}
			if [ "$ok" -eq "$RUNS" ]; then good=yes; note=yes; else good=no; note="no ($ok of $RUNS runs fetched every URL)"; fi
			[ "$tout" = 1 ] && note="$note; timed out (TMAX=${TMAX}s)"
			printf '%-13s %8d %9s %9s  %s\n' "$name" "$n" "$w" "$r" "$note" | tee -a "$OUT/bench-memory.txt"
			echo "$name,$n,$w,$r,$good" >>"$OUT/bench-memory.csv"
			if [ "$tout" = 1 ]; then
				capped[$t]="timed out (TMAX=${TMAX}s) at $n URLs"
			elif awk -v w="$w" -v c="$CAP" 'BEGIN {exit !(w > c)}'; then
				capped[$t]="took ${w}s at $n URLs (CAP=${CAP}s)"
			fi
		done
		if [ "${#names[@]}" -eq 2 ]; then
			read -r w1 r1 _ <<<"${results[0]}"
			read -r w2 r2 _ <<<"${results[1]}"
			awk -v t="$t" -v n="$n" -v w1="$w1" -v w2="$w2" -v r1="$r1" -v r2="$r2" 'BEGIN {
				printf "  %s at %d: this build over the other: wall %.2fx, peak RSS %.2fx\n", t, n,
					(w2 > 0 ? w1 / w2 : 0), (r2 > 0 ? r1 / r2 : 0) }' | tee -a "$OUT/bench-memory.txt"
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
	echo "wall: start to exit; peak RSS from /usr/bin/time; ok: exit status 0 and the fixture server counted exactly N requests in every run"
} | tee -a "$OUT/bench-memory.txt"

# spill_kb PID: the disk the frontier's spill files of process PID take
# (unlinked files, which du does not see): their size, KiB.
spill_kb() {
	local kb=0 fd
	for fd in /proc/"$1"/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		*crawl-spool*) kb=$((kb + $(stat -L -c '%s / 1024' "$fd" 2>/dev/null || echo 0))) ;;
		esac
	done
	echo "$kb"
}

# endless_run NAME SECONDS ARGS...: crawls the endless site for SECONDS,
# sampling the spill file's disk use every half second; prints a table row
# and appends it to endless.csv.
endless_run() {
	local name=$1 secs=$2 tpid cpid peak=0 now kb w
	shift 2
	rm -f "$tmp/time" "$tmp/endless.jsonl"
	timeout $((secs + 60)) /usr/bin/time -f "%e %M" -o "$tmp/time" "$BUILD/crawl" --depth 50 \
		--no-robots --no-progress --deadline "$secs" --format=jsonl -o "$tmp/endless.jsonl" "$@" \
		"$base/graph/1000000000/50/" 2>/dev/null &
	tpid=$!
	for _ in $(seq $((2 * secs + 120))); do
		cpid=$(pgrep -P "$(pgrep -P "$tpid" | head -1)" crawl 2>/dev/null | head -1 || true)
		[ -n "$cpid" ] || cpid=$(pgrep -P "$tpid" crawl 2>/dev/null | head -1 || true)
		[ -n "$cpid" ] && now=$(spill_kb "$cpid") && [ "$now" -gt "$peak" ] && peak=$now
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.5
	done
	wait "$tpid" || true
	local sum pages left dropped
	sum=$(tail -1 "$tmp/endless.jsonl")
	pages=$(sed -n 's/.*"ok":\([0-9]*\).*/\1/p' <<<"$sum")
	left=$(sed -n 's/.*"queued_left":\([0-9]*\).*/\1/p' <<<"$sum")
	dropped=$(sed -n 's/.*"queue_dropped":\([0-9]*\).*/\1/p' <<<"$sum")
	read -r w kb < <(tail -1 "$tmp/time")
	printf '%-22s %9s %12s %9s %9.0f %9.1f %9.1f\n' "$name" "$pages" "$left" "$dropped" \
		"$(awk -v p="$pages" -v e="$secs" 'BEGIN {print p / e}')" \
		"$(awk -v k="$kb" 'BEGIN {print k / 1024}')" "$(awk -v k="$peak" 'BEGIN {print k / 1024}')" |
		tee -a "$OUT/bench-memory.txt"
	echo "endless,$name,$secs,$pages,$left,$dropped,$(awk -v k="$kb" 'BEGIN {printf "%.1f", k / 1024}'),$(awk -v k="$peak" 'BEGIN {printf "%.1f", k / 1024}')" >>"$OUT/endless.csv"
}

# The endless site: the frontier grows without end; memory must not, and
# the spill file stops at --max-queue.
if [ "$ENDLESS" -gt 0 ]; then
	{
		echo
		echo "endless site $base/graph/1000000000/50/, --depth 50 --no-robots --deadline $ENDLESS (100 in flight)"
		printf '%-22s %9s %12s %9s %9s %9s %9s\n' model pages queued_left dropped pages/s rss_mb spill_mb
	} | tee -a "$OUT/bench-memory.txt"
	echo "endless,model,seconds,pages,queued_left,queue_dropped,rss_mb,spill_mb" >"$OUT/endless.csv"
	for m in coro thread pool procs; do
		endless_run "crawl-$m" "$ENDLESS" --mode=$m
	done
	endless_run "crawl-coro-q1000000" "$ENDLESS" --mode=coro --max-queue 1000000
	{
		echo "rss_mb: peak RSS (/usr/bin/time; procs: the coordinator, whose frontier it is);"
		echo "spill_mb: the most disk the frontier's unlinked spill file took, sampled every 0.5 s"
	} | tee -a "$OUT/bench-memory.txt"
	# What grows: the seen set, one 64-bit hash per URL queued. The queue's
	# memory stays at 32,768 links (the rest is in the spill file), so the
	# growth of peak RSS between two crawl lengths over the URLs seen in
	# between is the seen set's cost, its growth's copy included.
	if [ -n "${QUICK:-}" ]; then seen_pages="500 2000"; else seen_pages="20000 100000"; fi
	read -r p1 p2 <<<"$seen_pages"
	seen_at() {
		rm -f "$tmp/seen.jsonl"
		run_timed -n "$TMAX" "$tmp/seen" "$BUILD/crawl" --mode=coro --depth 50 --no-robots \
			--no-progress --max-pages "$1" --format=jsonl -o "$tmp/seen.jsonl" \
			"$base/graph/1000000000/50/"
		local sum
		sum=$(tail -1 "$tmp/seen.jsonl")
		# Every URL queued is in the seen set: fetched, or left queued.
		echo "$RSS $(( $(sed -n 's/.*"urls":\([0-9]*\).*/\1/p' <<<"$sum") + \
			$(sed -n 's/.*"queued_left":\([0-9]*\).*/\1/p' <<<"$sum") ))"
	}
	read -r kb1 seen1 < <(seen_at "$p1")
	read -r kb2 seen2 < <(seen_at "$p2")
	awk -v a="$kb1" -v b="$kb2" -v s1="$seen1" -v s2="$seen2" -v p1="$p1" -v p2="$p2" 'BEGIN {
		printf "seen set: %.1f bytes of peak RSS per URL seen (%d to %d pages, %d to %d URLs seen)\n",
			(b - a) * 1024 / (s2 - s1), p1, p2, s1, s2 }' | tee -a "$OUT/bench-memory.txt"
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
