#!/usr/bin/env bats
# scripts/demo.sh (make demo): every experiment's section on a scaled-down
# run (SCALE), its rows, statuses and extracted fields exact, its times as
# loose bounds only. lightless's section is scripts/compare.sh, tested in
# scripts.bats and compare.bats.

load helpers

# demo NAME SCALE: runs one experiment into $BATS_TEST_TMPDIR/out; its
# section's text is then in $output and in out/demo-NAME.txt.
demo() {
	run env BUILD="$BUILD" OUT="$BATS_TEST_TMPDIR/out" SCALE="$2" scripts/demo.sh "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/out/demo-$1.txt")" = "$output" ]
	[ "$(head -1 <<<"$output")" = "== $1: $(sed -n "s/^== $1: \(.*\) ==$/\1/p" <<<"$output") ==" ]
	grep -q '^It shows: ' <<<"$output"
	# No line past 100 columns but the picture's, under a long temporary path.
	[ "$(grep -v '^picture: ' <<<"$output" | awk 'length($0) > 100' | wc -l)" -eq 0 ]
	if command -v gnuplot >/dev/null; then
		grep -qx "picture: $BATS_TEST_TMPDIR/out/timeline-$1.png $BATS_TEST_TMPDIR/out/timeline-$1.svg" <<<"$output"
		# Drawn by the time the demo ends, as PNG and SVG.
		[ "$(head -c 4 "$BATS_TEST_TMPDIR/out/timeline-$1.png" | od -An -c | tr -d ' ')" = '211PNG' ]
		grep -q '<svg' "$BATS_TEST_TMPDIR/out/timeline-$1.svg"
	fi
}

# row MODEL: the table row of MODEL (its first line starting so).
row() { grep -m1 "^$1  " <<<"$output" | tr -s ' '; }

# within X LO HI: LO <= X < HI.
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x < hi) }'; }

# bats test_tags=models
@test "demo lightless: scripts/compare.sh's table of every model, its delays scaled" {
	run env BUILD="$BUILD" OUT="$BATS_TEST_TMPDIR/out" SCALE=0.05 scripts/demo.sh lightless
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/out/demo-lightless.txt")" = "$output" ]
	[ "$(head -1 <<<"$output")" = "== lightless: lightless's five URLs ==" ]
	grep -q '^# 50 ms, 100 ms, 150 ms, 200 ms, 200 ms; each model runs in a process of its own\.$' <<<"$output"
	# Five URLs, none failed, for every model of the registry, in its order.
	[ "$(grep -E '^[^ ]+ +5 +0 +[0-9.]+ +[0-9.]+x ' <<<"$output" | awk '{ printf "%s ", $1 }')" = "$ALL_MODES" ]
	grep -q '^Takeaway: sequential code pays the sum of the delays' <<<"$output"
	if command -v gnuplot >/dev/null; then
		grep -q "^picture of the run: $BATS_TEST_TMPDIR/out/timeline-demo.png $BATS_TEST_TMPDIR/out/timeline-demo.svg" <<<"$output"
	fi
}

@test "demo sleep: seq and coro -c 1 pay the sum of the four delays, every model with all in flight the longest" {
	demo sleep 0.1
	grep -q '(factor 0.1)' <<<"$output"
	# model ok failed in_flight threads wall_s
	[ "$(row seq | cut -d' ' -f1-4)" = "seq 4 0 1" ]
	[ "$(row 'coro -c 1' | cut -d' ' -f1-6)" = "coro -c 1 4 0 1" ]
	[ "$(row coro | cut -d' ' -f1-4)" = "coro 4 0 all" ]
	[ "$(row thread | cut -d' ' -f1-4)" = "thread 4 0 all" ]
	[ "$(row pool | cut -d' ' -f1-4)" = "pool 4 0 10" ]
	[ "$(row procs | cut -d' ' -f1-4)" = "procs 4 0 all" ]
	within "$(row seq | cut -d' ' -f6)" 1.0 2.5
	within "$(row 'coro -c 1' | cut -d' ' -f8)" 1.0 2.5
	for m in coro thread pool procs; do within "$(row $m | cut -d' ' -f6)" 0.4 0.95; done
}

@test "demo gather: a value, an error and a cancellation in every concurrent model, by the deadline" {
	alone
	demo gather 0.5
	grep -q -- '--deadline 1: one row each' <<<"$output"
	# model, then the three pages' cells, rows, wall_s
	[ "$(row seq | cut -d' ' -f1-5)" = "seq 200 cancelled cancelled 3" ]
	for m in thread pool coro procs; do
		[ "$(row $m | cut -d' ' -f1-6)" = "$m 200 error 500 cancelled 3" ]
		within "$(row $m | cut -d' ' -f7)" 0.99 1.5
	done
	within "$(row seq | cut -d' ' -f6)" 0.99 1.5
}

@test "demo queue: rows come out while the two producers still write, two in flight, one row a line" {
	demo queue 0.25
	grep -q '(factor 0.1)' <<<"$output"
	# coro's rows: every item once, each out after it went in (both timed
	# from the start of crawl's clock).
	items=$(sed -n '/^coro.s rows/,/^$/p' <<<"$output" | awk 'NR > 2 && NF == 3')
	[ "$(awk '{ print $1 }' <<<"$items" | sort | tr '\n' ' ')" = "a1 a2 a3 a4 a5 b1 b2 b3 b4 b5 " ]
	[ "$(awk '$3 < $2' <<<"$items" | wc -l)" -eq 0 ]
	# model rows most_in_flight first_row_out last_line_in last_row_out wall_s
	[ "$(row seq | cut -d' ' -f1-3)" = "seq 10 1" ]
	for m in thread pool coro procs; do
		[ "$(row $m | cut -d' ' -f1-3)" = "$m 10 2" ]
		# The first row out before the last line in (0.4 s after the first).
		r=$(row $m)
		awk -v f="$(cut -d' ' -f4 <<<"$r")" -v l="$(cut -d' ' -f5 <<<"$r")" 'BEGIN { exit !(f < l) }'
	done
}

@test "demo cinema: 22 films' names, dates and posters in every model, seq many times the concurrent models" {
	demo cinema 0.2
	grep -q '(factor 0.02)' <<<"$output"
	grep -q 'under /slow/49/' <<<"$output"
	# The films as testdata/site/cinema/film/N.html has them.
	want=$(for i in $(seq 22); do
		f=testdata/site/cinema/film/$i.html
		printf '200 %s /site/cinema/posters/%s.jpg %s\n' "$(sed -n 's/.*class="date">\([^<]*\)<.*/\1/p' "$f")" "$i" \
			"$(sed -n 's/^<h1>\(.*\)<\/h1>$/\1/p' "$f" | sed "s/&#39;/'/g")"
	done)
	[ "$(sed -n '/^The films/,/^$/p' <<<"$output" | sed -n 's/^  //p' | tr -s ' ')" = "$want" ]
	tr '\n' ' ' <<<"$output" | grep -q 'the same fields in every model: yes\.'
	# model pages ok films_extracted wall_s seq_over_this
	for m in seq thread pool coro procs; do
		[ "$(row $m | cut -d' ' -f1-4)" = "$m 23 23 22" ]
	done
	within "$(row seq | cut -d' ' -f5)" 1.1 3
	for m in thread pool coro procs; do
		within "$(row $m | cut -d' ' -f6 | tr -d x)" 3 30
	done
}

@test "demo status: 70 of 100 answer 200 in every model, seq pays every timeout" {
	alone
	demo status 0.75
	grep -q -- 'past --timeout 0.3' <<<"$output"
	# model urls answered_200 404 500 reset timeout cost_s
	for m in seq thread pool coro procs; do
		[ "$(row $m | cut -d' ' -f1-7)" = "$m 100 70 10 5 5 10" ]
	done
	within "$(row seq | cut -d' ' -f8)" 3.0 8
	for m in thread pool coro procs; do within "$(row $m | cut -d' ' -f8)" 0.3 2; done
}

@test "demo: an unknown experiment is refused; make demo EXPERIMENT=NAME runs that one" {
	run env BUILD="$BUILD" scripts/demo.sh nope
	[ "$status" -eq 2 ]
	[ "$output" = "demo.sh: no experiment 'nope' (one of: lightless sleep gather queue cinema status)" ]
	run make -n --no-print-directory BUILD="$BUILD" demo EXPERIMENT=cinema
	grep -q '^BUILD=.* scripts/demo.sh cinema$' <<<"$output"
}
