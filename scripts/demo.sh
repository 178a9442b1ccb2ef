#!/bin/bash
# Every experiment of the seed articles on the local fixture server, each in
# a section of its own: what the article ran and measured, the same
# experiment through crawl's models, and what it shows. With no argument,
# all of them in this order (make demo); with names, only those
# (make demo EXPERIMENT=cinema runs scripts/demo.sh cinema):
#
#   lightless  lightless's five URLs (scripts/compare.sh, as it was)
#   sleep      the sleep crawler: await in a loop against tasks up front
#   gather     gather, cancel and return_exceptions: one row each
#   queue      producers and consumers: a list streamed in while it runs
#   cinema     the cinema crawler: a listing, its films, their fields
#   status     the primer's status crawl: 100 URLs, a timeout, the 200s
#
# Each section's text goes to standard output and to OUT/demo-NAME.txt,
# its picture (one lane per worker, every model, when gnuplot is there) to
# OUT/timeline-NAME.png and .svg beside it; lightless's picture stays
# OUT/timeline-demo.png. Where an article's own times would not fit in the
# demo's two minutes, every delay of that experiment is scaled by one
# factor, printed in its section, so that its ratios are the article's.
#   BUILD=dir   where crawl and fixture-server are (default build)
#   OUT=dir     where the texts and pictures go (default BUILD)
#   SCALE=x     multiplies every experiment's factor (default 1; the tests
#               run the demo short with SCALE=0.1 and the like)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD}
SCALE=${SCALE:-1}
ALL="lightless sleep gather queue cinema status"
[ $# -gt 0 ] || set -- $ALL
for e in "$@"; do
	case " $ALL " in *" $e "*) ;; *) echo "demo.sh: no experiment '$e' (one of: $ALL)" >&2; exit 2 ;; esac
done
command -v jq >/dev/null 2>&1 || scripts/deps.sh --build jq
mkdir -p "$OUT"

. scripts/fixture-lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-demo.XXXXXX")
# A producer of the queue experiment still waiting for a crawl that failed
# is ended with the rest.
trap 'fixture_stop; kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
fixture_start "$tmp"
B=$FIXTURE_BASE
# The models the articles' experiments are set against, by name: a model
# added to the registry shows in lightless (scripts/compare.sh runs
# --mode=all), not in the sections that follow an article's own crawlers.
MODELS="seq thread pool coro procs"

# ---- helpers ---------------------------------------------------------------

# para TEXT: a paragraph in 100 columns.
para() { fold -s -w 100 <<<"$*" | sed 's/ *$//'; echo; }

# ms N: N milliseconds at article scale, scaled by the experiment's factor F.
ms() { awk -v n="$1" -v f="$F" 'BEGIN { printf "%d", n * f + 0.5 }'; }
# secs N: the same for seconds, as a number crawl's options take.
secs() { awk -v n="$1" -v f="$F" 'BEGIN { printf "%g", n * f }'; }

# scale BASE: sets F, the experiment's factor: BASE times SCALE.
scale() { F=$(awk -v b="$1" -v s="$SCALE" 'BEGIN { printf "%g", b * s }'); }

# factor: the sentence that states F.
factor() {
	if [ "$F" = 1 ]; then
		echo "Delays as the article's (factor 1)."
	else
		echo "Every delay of this experiment is the article's times $F (factor $F), so that the ratios are the article's."
	fi
}

# run LABEL ARGS...: one crawl of the section (--format=jsonl, a trace):
# its rows and summary in $tmp/run-K.jsonl, K its number in the section,
# LABEL the K-th line of $tmp/labels. newrun LABEL counts it and names it;
# crawl_into K ARGS... runs it (in a pipeline, after newrun). Exit status 1
# (some URL failed) is what these experiments expect; worse stops the demo.
RUNS=0
newrun() {
	RUNS=$((RUNS + 1))
	echo "$1" >>"$tmp/labels"
}
crawl_into() {
	local k=$1 rc=0
	shift
	"$BUILD/crawl" --format=jsonl --no-progress --trace "$tmp/run-$k.json" "$@" \
		>"$tmp/run-$k.jsonl" || rc=$?
	# STAMP: a file for the time crawl ended at: less its wall_s, that is
	# the start of its clock (a little after it), the origin of the times
	# taken outside it.
	[ -z "${STAMP:-}" ] || echo "$EPOCHREALTIME" >"$STAMP"
	[ "$rc" -le 1 ] || { echo "demo.sh: crawl $* exited $rc" >&2; exit "$rc"; }
	# The summary's fields, one "name value" a line, for summary().
	jq -r 'select(.summary) | to_entries[] | "\(.key) \(.value)"' "$tmp/run-$k.jsonl" >"$tmp/sum-$k"
}
run() {
	newrun "$1"
	shift
	crawl_into "$RUNS" "$@"
}

# label K: run K's label.
label() { sed -n "${1}p" "$tmp/labels"; }

# summary K FIELD: a field of run K's summary.
summary() { awk -v f="$2" '$1 == f { print $2; exit }' "$tmp/sum-$1"; }

# picture NAME TITLE: every run of the section in one picture, each run's
# workers under its label, beside the section's text. gnuplot draws it while
# the next section runs (the sections wait on their servers, not on the
# CPU); the demo waits for every picture at its end.
PICTURES=()
picture() {
	if ! command -v gnuplot >/dev/null 2>&1; then
		echo "(no picture: gnuplot is not installed; scripts/deps.sh --build installs gnuplot-nox)"
		return 0
	fi
	local files=() k
	for k in $(seq "$RUNS"); do files+=("$tmp/run-$k.json"); done
	# One run's model is process 1000 (procs' workers 1001...): run K's
	# become K*1000 and on, named by K's label.
	jq -s --rawfile labels "$tmp/labels" '
		($labels | split("\n")) as $l
		| { displayTimeUnit: "ms", traceEvents: [ to_entries[] | .key as $k | .value.traceEvents[]
			| select(.pid >= 1000) | .pid += $k * 1000
			| if .ph == "M" and .name == "process_name" and .pid % 1000 == 0
			  then .args.name = $l[$k] else . end ] }' "${files[@]}" >"$tmp/trace-$1.json"
	# Not holding the section's pipe open: its tee ends with the section.
	scripts/timeline.sh "$tmp/trace-$1.json" "$OUT/timeline-$1" "$2" \
		>"$tmp/picture-$1.log" 2>&1 </dev/null {OUTFD}>&- &
	PICTURES+=("$!:$1")
	echo "picture: $OUT/timeline-$1.png $OUT/timeline-$1.svg"
}

# section NAME TITLE: starts a section.
section() {
	RUNS=0
	: >"$tmp/labels"
	printf '== %s: %s ==\n\n' "$1" "$2"
}

# ---- the experiments ---------------------------------------------------------

exp_lightless() {
	scale 1
	section lightless "lightless's five URLs"
	para "The article: lightless, 《Python协程之从放弃到死亡再到重生（续篇）》, fetched five portal home pages four ways: requests.get in a loop 14 to 16 s, a thread per URL 10 s, ThreadPoolExecutor 10 s, asyncio + aiohttp 2 s. Here (scripts/compare.sh): five URLs answering after $(secs 1), $(secs 2), $(secs 3), $(secs 4) and $(secs 4) s, every model in a process of its own.$([ "$F" = 1 ] || echo " Every delay times $F (factor $F).")"
	DELAYS="$(ms 1000) $(ms 2000) $(ms 3000) $(ms 4000) $(ms 4000)" TIMELINE="$OUT/timeline-demo" \
		BUILD="$BUILD" scripts/compare.sh
}

exp_sleep() {
	scale 1
	section sleep "the sleep crawler"
	para "The article: 「什么是协程？」, its first example: four pages that take 1, 2, 3 and 4 s. Sequential code took 10 s, and so did a coroutine that awaits each page in turn; tasks created up front, then awaited, took 4 s."
	para "Here: /delay/MS pages of $(secs 1), $(secs 2), $(secs 3) and $(secs 4) s; seq; coro with one transfer in flight (-c 1: each URL awaited before the next starts); then coro, thread, pool and procs with the four in flight at once. $(factor)"
	local list="$tmp/sleep.txt" i=0 d
	for d in 1000 2000 3000 4000; do i=$((i + 1)); echo "$B/delay/$(ms $d)/$i"; done >"$list"
	run "seq" --mode=seq "$list"
	run "coro -c 1" --mode=coro -c 1 "$list"
	for m in coro thread pool procs; do run "$m" --mode=$m "$list"; done
	{
		echo "model ok failed in_flight threads wall_s"
		for k in $(seq "$RUNS"); do
			c=$(summary "$k" concurrency); [ "$c" = 0 ] && c=all
			echo "$(label "$k" | tr ' ' '_') $(summary "$k" ok) $(summary "$k" failed) $c $(summary "$k" threads) $(summary "$k" wall_s | awk '{ printf "%.2f", $1 }')"
		done
	} | column -t | sed 's/coro_-c_1/coro -c 1/'
	echo
	local seq1 one all
	seq1=$(summary 1 wall_s | awk '{ printf "%.2f", $1 }')
	one=$(summary 2 wall_s | awk '{ printf "%.2f", $1 }')
	all=$(for k in 3 4 5 6; do printf '%s %.2f s, ' "$(label "$k")" "$(summary "$k" wall_s)"; done | sed 's/, $//')
	para "It shows: await in a loop is still sequential. With one transfer in flight coro took $one s, as seq did ($seq1 s; the delays add up to $(secs 10) s); with the four in flight at once, as tasks created up front are, every model took only the longest delay, $(secs 4) s: $all."
	picture sleep "The sleep crawler: pages of $(secs 1), $(secs 2), $(secs 3) and $(secs 4) s; seq, coro -c 1, then all in flight"
}

exp_gather() {
	scale 1
	section gather "gather, cancel and return_exceptions"
	para "The article: the asyncio primer (after Liao Xuefeng's 「异步IO」 and the Python docs' \"Coroutines and Tasks\"): three workers of 1, 2 and 3 s, the second raising, the third cancelled at 2 s; asyncio.gather(..., return_exceptions=True) returned a value, the exception and the cancellation, in 2 s."
	para "Here: a $(secs 1) s page (/delay), a page that answers 500 after $(secs 1.8) s (/slow/MS/status/500, a failure with --fail), a tenth of the deadline early so that its failure is in before the cut (the article's raise and cancel both fall at 2 s), and a $(secs 3) s page, cut by --deadline $(secs 2): one row each, in every model. $(factor)"
	local list="$tmp/gather.txt"
	printf '%s\n' "$B/delay/$(ms 1000)/value" "$B/slow/$(ms 1800)/status/500" "$B/delay/$(ms 3000)/cut" >"$list"
	for m in $MODELS; do run "$m" --mode=$m --fail --deadline "$(secs 2)" "$list"; done
	{
		echo "model $(secs 1)_s_page $(secs 1.8)_s_page_(500) $(secs 3)_s_page rows wall_s"
		for k in $(seq "$RUNS"); do
			jq -r -s --arg m "$(label "$k")" '
				[.[] | select(.url)] as $r
				| ([$r[] | if .fail == null then (.status | tostring)
					elif .fail == "http" then "error_\(.status)"
					else .fail end] | join(" ")) as $cells
				| "\($m) \($cells) \($r | length) \(.[] | select(.summary) | .wall_s)"' \
				"$tmp/run-$k.jsonl" | awk '{ $NF = sprintf("%.2f", $NF); print }'
		done
	} | column -t | sed 's/_s_page_(500)/ s page (500)/; s/_s_page/ s page/g; s/error_/error /'
	echo
	local conc
	conc=$(for k in 2 3 4 5; do printf '%s %.2f s, ' "$(label "$k")" "$(summary "$k" wall_s)"; done | sed 's/, $//')
	para "It shows: one row per URL whatever happens, as return_exceptions=True gives one result per task. Every concurrent model returned a value, an error and a cancellation by the deadline ($conc); seq, one page after another, had only the first page by then ($(summary 1 wall_s | awk '{ printf "%.2f", $1 }') s): the second was still coming when the deadline cut it, and the third never started."
	picture gather "gather: a $(secs 1) s page, a 500 at $(secs 1.8) s, a $(secs 3) s page cut by --deadline $(secs 2)"
}

exp_queue() {
	scale 0.4
	section queue "producers and consumers on a queue"
	para "The article: the asyncio primer (after the Python docs' \"Coroutines and Tasks\" and asyncio.Queue): two producers put five items each, a second apart, on a queue; two consumers took them as they came; the consumers were cancelled after 10 s."
	para "Here: two producer processes write five URLs each, $(secs 1) s apart, into one named pipe that crawl reads as its list while it runs, two transfers in flight (-c 2, the two consumers); each page takes $(secs 1) s. The producers start when crawl opens the pipe, as the article's start with its consumers. crawl ends when the pipe does: nothing is left to cancel. $(factor)"
	local every page m k prod
	every=$(secs 1)
	page=$(ms 1000)
	for m in $MODELS; do
		newrun "$m"
		k=$RUNS
		mkfifo "$tmp/queue-$k"
		# The redirection's open waits for crawl's: the producers' first
		# lines go in as crawl starts, however long its start-up.
		{
			for p in a b; do
				(for i in 1 2 3 4 5; do
					echo "$p$i $EPOCHREALTIME" >>"$tmp/put-$k-$p"
					echo "$B/delay/$page/$p$i"
					[ "$i" = 5 ] || sleep "$every"
				done) &
			done
			wait
		} >"$tmp/queue-$k" &
		prod=$!
		STAMP="$tmp/ended-$k" crawl_into "$k" --mode=$m -c 2 --order=completion "$tmp/queue-$k"
		wait "$prod"
		# Lines in are timed from the start of crawl's clock, as its rows
		# are (its end less its wall_s: a little late, never early).
		cat "$tmp/put-$k-a" "$tmp/put-$k-b" |
			awk -v e="$(cat "$tmp/ended-$k")" -v w="$(summary "$k" wall_s)" \
				'{ t = $2 - (e - w); printf "%s %.3f\n", $1, t < 0 ? 0 : t }' >"$tmp/put-$k"
	done
	# coro's rows (the fourth run), line by line: put in at, row out at
	# (start_s + time_total_s, from the crawl's start).
	echo "coro's rows, in the order they came out (seconds from the start):"
	{
		echo "item line_in row_out"
		jq -r 'select(.url) | "\(.url | split("/") | last) \(.start_s + .time_total_s)"' "$tmp/run-4.jsonl" |
			awk 'NR == FNR { put[$1] = $2; next } { printf "%s %.2f %.2f\n", $1, put[$1], $2 }' "$tmp/put-4" -
	} | column -t | sed 's/^/  /'
	echo
	{
		echo "model rows most_in_flight first_row_out last_line_in last_row_out wall_s"
		for k in $(seq "$RUNS"); do
			jq -r 'select(.url) | "\(.start_s) \(.start_s + .time_total_s)"' "$tmp/run-$k.jsonl" |
				awk -v m="$(label "$k")" -v last_in="$(sort -k2n "$tmp/put-$k" | tail -1 | cut -d' ' -f2)" \
					-v wall="$(summary "$k" wall_s)" '
				{ s[NR] = $1; e[NR] = $2; if (NR == 1 || $2 < first) first = $2; if ($2 > last) last = $2 }
				END {
					most = 0
					for (i = 1; i <= NR; i++) { n = 0; for (j = 1; j <= NR; j++) if (s[j] <= s[i] && e[j] > s[i]) n++; if (n > most) most = n }
					printf "%s %d %d %.2f %.2f %.2f %.2f\n", m, NR, most, first, last_in, last, wall
				}'
		done
	} | column -t
	echo
	local first lastin
	first=$(jq -r 'select(.url) | .start_s + .time_total_s' "$tmp/run-4.jsonl" | sort -n | awk 'NR == 1 { printf "%.2f", $1 }')
	lastin=$(sort -k2n "$tmp/put-4" | awk 'END { printf "%.2f", $2 }')
	para "It shows: the list is a queue. Rows came out while lines were still going in (coro's first row at $first s, its last line in at $lastin s), in every model, never more than two transfers at a time (seq: one), and the crawl ended with its input: every line put in gave one row out."
	picture queue "Producers and consumers: 10 lines streamed in, $every s apart, 2 in flight"
}

exp_cinema() {
	scale 0.1
	section cinema "the cinema crawler"
	para "The article: 「什么是协程？」, its real-world example: a cinema's listing page, then every film's detail page, parsed for the film's name, date and poster; 56.6 s with requests, one page after another, and 4.98 s with aiohttp and gather (about 11x)."
	local l
	l=$(ms 2461)
	para "Here: the fixture's cinema (testdata/site/cinema/: a listing of 22 films, each with a detail page) under /slow/$l/, so that every page answers after a fixed $l ms, as a distant site's would: 2.461 s at the article's scale, which makes the listing and its 22 films 56.6 s one after another. crawl follows the listing's film links (--depth 1 --follow '//div[@id=\"showing-soon\"]//a/@href') and takes --extract name=//h1, date=//span[@class=\"date\"] and poster=//img/@src from every page; the concurrent models keep all 22 in flight (-c 22). $(factor)"
	local m k
	for m in $MODELS; do
		run "$m" --mode=$m -c 22 --depth 1 --follow '//div[@id="showing-soon"]//a/@href' \
			--extract 'name=//h1' --extract 'date=//span[@class="date"]' --extract 'poster=//img/@src' \
			"$B/slow/$l/site/cinema/"
	done
	# The films as seq found them, in the listing's order.
	local films="$tmp/films"
	jq -r 'select(.url and .depth == 1) | [(.url | capture("film/(?<n>[0-9]+)").n | tonumber), .status, .extract.name[0], .extract.date[0], .extract.poster[0]] | @tsv' \
		"$tmp/run-1.jsonl" | sort -n | cut -f2- >"$films"
	echo "The films (seq's rows: status, date, poster, name):"
	awk -F'\t' '{ printf "  %s  %s  %-27s %s\n", $1, $3, $4, $2 }' "$films"
	echo
	local same=yes
	for k in $(seq 2 "$RUNS"); do
		jq -r 'select(.url and .depth == 1) | [(.url | capture("film/(?<n>[0-9]+)").n | tonumber), .status, .extract.name[0], .extract.date[0], .extract.poster[0]] | @tsv' \
			"$tmp/run-$k.jsonl" | sort -n | cut -f2- | cmp -s - "$films" || same=no
	done
	local seqw
	seqw=$(summary 1 wall_s)
	{
		echo "model pages ok films_extracted wall_s seq_over_this"
		for k in $(seq "$RUNS"); do
			echo "$(sed -n "${k}p" "$tmp/labels") $(summary "$k" urls) $(summary "$k" ok)" \
				"$(jq -r 'select(.url and .depth == 1 and .extract.name[0] != null) | 1' "$tmp/run-$k.jsonl" | wc -l)" \
				"$(awk -v w="$(summary "$k" wall_s)" -v s="$seqw" 'BEGIN { printf "%.2f %.1fx", w, s / w }')"
		done
	} | column -t
	echo
	local conc
	conc=$(for k in 2 3 4 5; do awk -v m="$(label "$k")" -v w="$(summary "$k" wall_s)" -v s="$seqw" 'BEGIN { printf "%s %.1fx, ", m, s / w }'; done | sed 's/, $//')
	para "It shows: the article's ratio comes from waiting, not from Python: one page after another pays 23 latencies, the concurrent models two (the listing, then the 22 films at once), so seq over each is near the article's 11x ($conc; 23 over 2 is 11.5); the same fields in every model: $same."
	picture cinema "The cinema crawler: the listing, then 22 films, every page $l ms"
}

exp_status() {
	scale 0.04
	section status "the primer's status crawl"
	para "The article: the asyncio primer: 100 URLs fetched with a 10 s timeout each, counting how many answered 200 and printing the time it cost (its figure is that of the sites it fetched; none to set beside)."
	local t slow fast
	t=$(secs 10)
	slow=$(ms 15000)
	fast=$(ms 200)
	para "Here: 100 URLs on the fixture server, ten of each kind in every ten: 70 fast pages (200 after $fast ms), 10 slow ones ($slow ms, past --timeout $t), 10 missing (404), 5 failing (500) and 5 whose connection is reset; every model, and how many answered 200 at what cost. $(factor)"
	local list="$tmp/status.txt" i
	for i in $(seq 100); do
		case $((i % 10)) in
		3) echo "$B/delay/$slow/slow$i" ;;
		6) echo "$B/status/404?$i" ;;
		9) if [ $((i % 20)) = 9 ]; then echo "$B/status/500?$i"; else echo "$B/reset?$i"; fi ;;
		*) echo "$B/delay/$fast/fast$i" ;;
		esac
	done >"$list"
	local m k
	for m in $MODELS; do run "$m" --mode=$m --timeout "$t" "$list"; done
	{
		echo "model urls answered_200 404 500 reset timeout cost_s"
		for k in $(seq "$RUNS"); do
			jq -r -s --arg m "$(label "$k")" '
				[.[] | select(.url)] as $r
				| def n(f): [$r[] | select(f)] | length;
				"\($m) \($r | length) \(n(.status == 200 and .fail == null)) \(n(.status == 404)) \(n(.status == 500))" +
				" \(n(.fail == "recv")) \(n(.fail == "timeout")) \(.[] | select(.summary) | .wall_s)"' \
				"$tmp/run-$k.jsonl" | awk '{ $NF = sprintf("%.2f", $NF); print }'
		done
	} | column -t
	echo
	local seqw conc
	seqw=$(summary 1 wall_s | awk '{ printf "%.2f", $1 }')
	conc=$(for k in 2 3 4 5; do printf '%s %.2f s, ' "$(label "$k")" "$(summary "$k" wall_s)"; done | sed 's/, $//')
	para "It shows: every model counts the same 70 answers of 200 out of 100, one row per URL whatever went wrong; what differs is the cost. seq waits out every timeout in turn (10 of $t s in its $seqw s); the concurrent models wait them out together ($conc), pool's ten workers taking the list ten at a time."
	picture status "The status crawl: 100 URLs (70 fast, 10 past --timeout $t, 10 missing, 10 failing)"
}

first=1
for e in "$@"; do
	[ -n "$first" ] || echo
	first=
	# The section's text, as it comes, to the terminal and its file.
	exec {OUTFD}> >(tee "$OUT/demo-$e.txt")
	teepid=$!
	rc=0
	"exp_$e" >&"$OUTFD" || rc=$?
	exec {OUTFD}>&-
	wait "$teepid" 2>/dev/null || true
	# compare.sh's status is 0 only when every URL answered; the other
	# experiments fail URLs on purpose.
	[ "$rc" -eq 0 ] || { echo "demo.sh: $e failed ($rc)" >&2; exit "$rc"; }
done
for p in "${PICTURES[@]}"; do
	wait "${p%%:*}" || { echo "demo.sh: the picture of ${p#*:} failed:" >&2; cat "$tmp/picture-${p#*:}.log" >&2; exit 1; }
done
