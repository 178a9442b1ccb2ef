#!/usr/bin/env bats
# Rows stream out as they become final, whole, in the order asked for; an
# output that cannot be written is an error; memory follows what is in
# flight, not the length of the list or of the frontier.

load helpers
bats_require_minimum_version 1.5.0   # run --separate-stderr

# Under a sanitizer (sanitized, helpers.bash) ASan and TSan keep freed
# memory aside, so peak RSS says nothing about what the crawl holds.

# list N FILE [PATH]: N distinct small URLs.
list() {
	seq "$1" | sed "s|^|$FIXTURE/${3:-bytes/64}?i=|" >"$2"
}

# peak_kb CMD...: runs CMD, prints its peak RSS in KiB.
peak_kb() {
	/usr/bin/time -f '%M' -o "$BATS_TEST_TMPDIR/time" "$@" >/dev/null 2>&1 || true
	tail -1 "$BATS_TEST_TMPDIR/time"
}

# bats test_tags=models
@test "output to /dev/full: 'writing output' on stderr and exit 23, in every model and format" {
	for m in $MODES; do
		for f in table jsonl csv; do
			run "$CRAWL" --mode=$m --format=$f -o /dev/full "$FIXTURE/bytes/5"
			echo "$m $f: $status $output"
			[ "$status" -eq 23 ]
			[ "$output" = "crawl: writing output: No space left on device" ]
			run bash -c "'$CRAWL' --mode=$m --format=$f '$FIXTURE/bytes/5' >/dev/full"
			[ "$status" -eq 23 ]
			[ "$output" = "crawl: writing output: No space left on device" ]
		done
	done
}

# bats test_tags=models
@test "a closed standard output is an error before anything is fetched" {
	start_private_fixture
	for m in $MODES; do
		run bash -c "'$CRAWL' --mode=$m --format=jsonl '$PFIX/bytes/5' >&-"
		[ "$status" -eq 23 ]
		[ "$output" = "crawl: writing output: Bad file descriptor" ]
	done
	[ "$(stat_of "$PFIX" requests)" -eq 0 ]
}

@test "--mode=all to /dev/full exits 23" {
	run "$CRAWL" --mode=all --modes=seq,coro -o /dev/full "$FIXTURE/bytes/5"
	[ "$status" -eq 23 ]
	grep -q "^crawl: writing output: No space left on device$" <<<"$output"
}

# bats test_tags=models
@test "a write error stops the crawl: the rest of a long list is not fetched" {
	start_private_fixture
	list 2000 "$BATS_TEST_TMPDIR/l.txt" "delay/20/x"
	sed -i "s|$FIXTURE|$PFIX|" "$BATS_TEST_TMPDIR/l.txt"
	for m in $MODES; do
		before=$(stat_of "$PFIX" requests)
		run "$CRAWL" --mode=$m -c 10 --format=jsonl -o /dev/full "$BATS_TEST_TMPDIR/l.txt"
		[ "$status" -eq 23 ]
		after=$(stat_of "$PFIX" requests)
		echo "$m: $((after - before)) requests"
		[ $((after - before)) -lt 200 ]
	done
}

# bats test_tags=models
@test "JSON lines and CSV rows reach the file while the crawl runs, in every model" {
	for m in $MODES; do
		for f in jsonl csv; do
			out="$BATS_TEST_TMPDIR/out-$m.$f"
			"$CRAWL" --mode=$m --format=$f -o "$out" "$FIXTURE/bytes/7" "$FIXTURE/delay/3000/slow" &
			pid=$!
			# The row is in the file while the slow page is still on its way.
			wait_until 10 grep -q "bytes/7" "$out"
			kill -0 $pid
			got=$(grep -c "bytes/7" "$out" || true)
			kill $pid; wait $pid || true
			echo "$m $f: $got"
			[ "$got" -eq 1 ]
		done
	done
}

# bats test_tags=models
@test "kill -KILL mid-run leaves only whole, valid JSON lines, in every model" {
	list 20000 "$BATS_TEST_TMPDIR/l.txt" "delay/100/x"
	for m in $MODES; do
		out="$BATS_TEST_TMPDIR/killed-$m.jsonl"
		"$CRAWL" --mode=$m -c 500 --format=jsonl -o "$out" "$BATS_TEST_TMPDIR/l.txt" 2>/dev/null &
		pid=$!
		# Killed once rows are coming out (a loaded machine or a sanitizer
		# build takes longer to get there), well before the last.
		wait_until 30 has_lines "$out" 11
		sleep 0.5
		kill -KILL $pid
		wait $pid || true
		n=$(wc -l <"$out")
		echo "$m: $n rows"
		[ "$n" -gt 10 ] && [ "$n" -lt 20000 ]
		# A torn last line has no newline: every byte belongs to a whole line.
		[ "$(tail -c 1 "$out" | od -An -c | tr -d ' ')" = '\n' ]
		jq -e 'select(.url) | .length == 100' "$out" >/dev/null
		[ "$(jq -c 'select(.url)' "$out" | wc -l)" -eq "$n" ]
	done
}

# bats test_tags=models
@test "input order holds under random delays, with rows held behind slow ones, in every model" {
	# 300 URLs, 100 under a sanitizer: the rest of the list ends well before
	# the slow head even on a loaded machine (2 s for 300 under
	# ThreadSanitizer on an idle one).
	local n=300
	sanitized && n=100
	for i in $(seq $n); do echo "$FIXTURE/delay/$(( (i * 7919) % 97 ))/r$i"; done >"$BATS_TEST_TMPDIR/l.txt"
	local head=$((2 * SECOND_MS))
	sanitized && head=$((4 * SECOND_MS))
	echo "$FIXTURE/delay/$head/slow-head" | cat - "$BATS_TEST_TMPDIR/l.txt" >"$BATS_TEST_TMPDIR/l2.txt"
	# Every model's crawls at once: a concurrent one's are each the slow
	# head's wait, which they share instead of taking turns. A sequential
	# model, one transfer after another, has nothing to hold back: it
	# crawls the first 60 lines without the slow head, in order.
	local m order k d=$BATS_TEST_TMPDIR
	local -A pid=() rc=()
	head -60 "$d/l.txt" >"$d/l60.txt"
	for m in $CONCURRENT_MODES; do
		for order in input completion; do
			"$CRAWL" --mode=$m -c 20 --format=jsonl --order=$order "$d/l2.txt" >"$d/$m.$order" &
			pid[$m.$order]=$!
		done
	done
	for m in $SEQUENTIAL_MODES; do
		"$CRAWL" --mode=$m --format=jsonl "$d/l60.txt" >"$d/$m.input" &
		pid[$m.input]=$!
	done
	for k in "${!pid[@]}"; do
		rc[$k]=0; wait "${pid[$k]}" || rc[$k]=$?
		echo "$k: status ${rc[$k]}"
	done
	for m in $CONCURRENT_MODES; do
		[ "${rc[$m.input]}" -eq 0 ]
		[ "$(jq -r 'select(.url) | .line' "$d/$m.input" | tr '\n' ' ')" = "$(seq $((n + 1)) | tr '\n' ' ')" ]
		[ "${rc[$m.completion]}" -eq 0 ]
		[ "$(jq -r 'select(.url) | .line' "$d/$m.completion" | tail -1)" = "1" ]
	done
	for m in $SEQUENTIAL_MODES; do
		[ "${rc[$m.input]}" -eq 0 ]
		[ "$(jq -r 'select(.url) | .line' "$d/$m.input" | tr '\n' ' ')" = "$(seq 60 | tr '\n' ' ')" ]
	done
}

# bats test_tags=models
@test "the table keeps the article's layout: Use time first, then every row in input order" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m "$FIXTURE/delay/300/a" "$FIXTURE/bytes/5" "$FIXTURE/bytes/6"
		[ "$status" -eq 0 ]
		[[ "${lines[0]}" == "Use time: "* ]]
		[ "${lines[1]}" = "Length:   100   URL: $FIXTURE/delay/300/a" ]
		[ "${lines[2]}" = "Length:    5    URL: $FIXTURE/bytes/5" ]
		[ "${lines[3]}" = "Length:    6    URL: $FIXTURE/bytes/6" ]
		[[ "${lines[4]}" == "Mode: $m; 3 URLs, 3 ok, 0 failed; "* ]]
	done
}

# bats test_tags=models
@test "--deadline on a long list: every listed URL still gets exactly one row, in every model" {
	list 3000 "$BATS_TEST_TMPDIR/l.txt" "delay/200/x"
	for m in $MODES; do
		run "$CRAWL" --mode=$m -c 10 --deadline 0.5 --format=jsonl "$BATS_TEST_TMPDIR/l.txt"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.url) | .line' <<<"$output" | sort -n | uniq | wc -l)" -eq 3000 ]
		[ "$(jq -r 'select(.url) | .line' <<<"$output" | wc -l)" -eq 3000 ]
		[ "$(jq -r 'select(.fail == "cancelled") | .url' <<<"$output" | wc -l)" -gt 2900 ]
		[ "$(jq -r 'select(.summary) | .urls' <<<"$output")" = "3000" ]
	done
}

# bats test_tags=models
@test "--deadline: what has not finished by then is cancelled, never fetched late, in every model" {
	# Pages end all the time on the endless site, and /delay/N around the
	# deadline end just after it: a page whose result comes in after the
	# deadline is cancelled, as coro's loop cancels the transfers it has not
	# seen end; one is surely in flight (/delay/3000), so the run exits 1.
	for n in $(seq 960 5 1040); do echo "$FIXTURE/delay/$n/x"; done >"$BATS_TEST_TMPDIR/l.txt"
	echo "$FIXTURE/delay/3000/x" >>"$BATS_TEST_TMPDIR/l.txt"
	echo "$FIXTURE/graph/1000000000/50/" >>"$BATS_TEST_TMPDIR/l.txt"
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 50 --no-robots --deadline 1 --format=jsonl "$BATS_TEST_TMPDIR/l.txt"
		late=$(jq -s '[.[] | select(.url and .fail == null and .start_s + .time_total_s >= 1)] | length' <<<"$output")
		echo "$m: status $status, $late fetched late, $(jq -s '[.[] | select(.fail == "cancelled")] | length' <<<"$output") cancelled"
		[ "$status" -eq 1 ]
		[ "$late" -eq 0 ]
		[ "$(jq -r --arg u "$FIXTURE/delay/3000/x" 'select(.url == $u) | .error' <<<"$output")" = "cancelled: --deadline reached" ]
		[ "$(jq -r 'select(.url and .fail != null) | .error' <<<"$output" | sort -u)" = "cancelled: --deadline reached" ]
		[ "$(jq -r 'select(.url) | .url' <<<"$output" | wc -l)" -eq "$(jq -r 'select(.summary) | .urls' <<<"$output")" ]
	done
}

# bats test_tags=models
@test "links found but never started get no row and are counted, in every model" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 3 --max-pages 10 --no-robots --format=jsonl "$FIXTURE/graph/1000/10/"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .url' <<<"$output" | wc -l)" -eq 10 ]
		[ "$(jq -r 'select(.summary) | .urls' <<<"$output")" = "10" ]
		left=$(jq -r 'select(.summary) | .queued_left' <<<"$output")
		echo "$m: $left left"
		[ "$left" -gt 0 ]
		run "$CRAWL" --mode=$m --depth 3 --max-pages 10 --no-robots "$FIXTURE/graph/1000/10/"
		grep -q "^Mode: $m; 10 URLs, 10 ok, 0 failed, [0-9]* links found and not fetched; " <<<"$output"
	done
}

# bats test_tags=models
@test "memory is flat in the list's length: 2,000 and 40,000 URLs at -c 50, in every model" {
	sanitized && skip "peak RSS means nothing under the sanitizers"
	list 2000 "$BATS_TEST_TMPDIR/s.txt"
	list 40000 "$BATS_TEST_TMPDIR/l.txt"
	for m in $CONCURRENT_MODES; do
		small=$(peak_kb "$CRAWL" --mode=$m -c 50 --format=jsonl -o /dev/null "$BATS_TEST_TMPDIR/s.txt")
		large=$(peak_kb "$CRAWL" --mode=$m -c 50 --format=jsonl -o /dev/null "$BATS_TEST_TMPDIR/l.txt")
		echo "$m: $small KiB for 2,000, $large KiB for 40,000"
		[ "$large" -lt $(( small * 13 / 10 + 2048 )) ]
	done
	# A sequential model, one transfer at a time, on 5,000: 40,000 would
	# take it minutes.
	head -5000 "$BATS_TEST_TMPDIR/l.txt" >"$BATS_TEST_TMPDIR/l5.txt"
	for m in $SEQUENTIAL_MODES; do
		small=$(peak_kb "$CRAWL" --mode=$m --format=jsonl -o /dev/null "$BATS_TEST_TMPDIR/s.txt")
		large=$(peak_kb "$CRAWL" --mode=$m --format=jsonl -o /dev/null "$BATS_TEST_TMPDIR/l5.txt")
		echo "$m: $small KiB for 2,000, $large KiB for 5,000"
		[ "$large" -lt $(( small * 13 / 10 + 2048 )) ]
	done
}

# bats test_tags=models
@test "an endless site: the frontier spills to disk and memory stays bounded, in every model" {
	# 10,000 pages of 50 links each leave about 490,000 links queued, most
	# of them in the spill file: the crawl peaks at 33 to 36 MB, and with
	# every link kept in memory at 111 MB (measured with the memory bound
	# raised past them). A sanitizer's build, which measures no memory
	# here, crawls 1,000: about 49,000 links, past the 32,768 kept in
	# memory, so the spill file is written and read back still.
	pages=10000
	sanitized && pages=1000
	for m in $MODES; do
		out="$BATS_TEST_TMPDIR/endless-$m.jsonl"
		kb=$(peak_kb "$CRAWL" --mode=$m --depth 50 --no-robots --max-pages $pages --format=jsonl -o "$out" "$FIXTURE/graph/1000000000/50/")
		rows=$(jq -r 'select(.url) | .url' "$out" | wc -l)
		left=$(jq -r 'select(.summary) | .queued_left' "$out")
		echo "$m: $rows rows, $left left, $kb KiB"
		[ "$rows" -eq $pages ]
		[ "$(jq -r 'select(.summary) | .urls' "$out")" -eq "$rows" ]
		[ "$left" -gt $((pages * 40)) ]
		# The default --max-queue keeps such a crawl whole: nothing dropped.
		[ "$(jq -r 'select(.summary) | .queue_dropped' "$out")" -eq 0 ]
		[ "$(jq -r 'select(.url) | .url' "$out" | sort | uniq -d | wc -l)" -eq 0 ]
		sanitized || [ "$kb" -lt 65536 ]
	done
}

# bats test_tags=models
@test "--max-queue bounds the links queued: the rest are dropped, warned of once and counted, in every model" {
	for m in $MODES; do
		run --separate-stderr "$CRAWL" --mode=$m --depth 50 --no-robots --max-pages 300 --max-queue 100 \
			--format=jsonl "$FIXTURE/graph/1000000000/50/"
		dropped=$(jq -r 'select(.summary) | .queue_dropped' <<<"$output")
		left=$(jq -r 'select(.summary) | .queued_left' <<<"$output")
		echo "$m: status $status, $left left, $dropped dropped; stderr: $stderr"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .url' <<<"$output" | sort -u | wc -l)" -eq 300 ]
		[ "$(jq -r 'select(.url) | .url' <<<"$output" | wc -l)" -eq 300 ]
		[ "$dropped" -gt 1000 ]
		[ "$left" -le 100 ]
		[ "$stderr" = "crawl: --max-queue 100 reached: links found past it are dropped, not fetched (counted in the summary)" ]
		run "$CRAWL" --mode=$m --depth 50 --no-robots --max-pages 300 --max-queue 100 "$FIXTURE/graph/1000000000/50/"
		grep -q "^Mode: $m; 300 URLs, 300 ok, 0 failed, [0-9]* links found and not fetched, [0-9]* links dropped past --max-queue; " <<<"$output"
	done
}

@test "--max-queue 0 is no bound; a bad value exits 2; without links to follow it is said to do nothing" {
	run --separate-stderr "$CRAWL" --depth 2 --no-robots --max-queue 0 --format=jsonl "$FIXTURE/graph/1000/30/"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(jq -r 'select(.summary) | [.urls, .queue_dropped] | @tsv' <<<"$output")" = "$(printf '931\t0')" ]
	for bad in -1 x 1e3 ""; do
		run "$CRAWL" --max-queue="$bad" "$FIXTURE/bytes/1"
		[ "$status" -eq 2 ]
		[[ "$output" == "crawl: --max-queue"* ]]
	done
	run --separate-stderr "$CRAWL" --max-queue 5 --format=jsonl "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
	[[ "$stderr" == "crawl: warning: --max-queue is ignored here: "* ]]
}

@test "the thread model joins threads as they end: 40,000 URLs at -c 10 all succeed" {
	# More threads than a process may keep unjoined here (vm.max_map_count,
	# 65,530: two maps a stack, its guard page and itself);
	# a sanitizer's build, there for what each thread does, runs 10,000.
	local n=40000
	sanitized && n=10000
	list $n "$BATS_TEST_TMPDIR/l.txt" "bytes/1"
	run "$CRAWL" --mode=thread -c 10 -q --format=jsonl "$BATS_TEST_TMPDIR/l.txt"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.ok' <<<"$output")" = "$n" ]
}

# bats test_tags=models
@test "a list on a pipe streams: each line's row comes before the next line is written, in every model" {
	for m in $MODES; do
		fifo="$BATS_TEST_TMPDIR/fifo-$m"; out="$BATS_TEST_TMPDIR/piped-$m.jsonl"
		mkfifo "$fifo"
		"$CRAWL" --mode=$m -c 4 --format=jsonl -o "$out" - <"$fifo" &
		pid=$!
		exec 7>"$fifo"
		echo "$FIXTURE/bytes/11" >&7
		got=0
		for _ in $(seq 40); do
			got=$(grep -c '"length":11,' "$out" 2>/dev/null || true)
			[ "$got" -eq 1 ] && break
			sleep 0.05
		done
		echo "$FIXTURE/bytes/12" >&7
		exec 7>&-
		rc=0; wait $pid || rc=$?
		echo "$m: first row before the second line: $got, rc $rc"
		[ "$got" -eq 1 ]
		[ "$rc" -eq 0 ]
		[ "$(jq -r 'select(.url) | .length' "$out" | tr '\n' ' ')" = "11 12 " ]
	done
}

# bats test_tags=models
@test "Ctrl-C with standard input still open ends at once, with rows for the lines read, in every model" {
	for m in $MODES; do
		fifo="$BATS_TEST_TMPDIR/fifo-$m"; out="$BATS_TEST_TMPDIR/int-$m.txt"
		mkfifo "$fifo"
		"$CRAWL" --mode=$m - <"$fifo" >"$out" 2>&1 &
		pid=$!
		exec 7>"$fifo"
		echo "$FIXTURE/bytes/3" >&7
		echo "$FIXTURE/delay/5000/x-$m" >&7
		wait_until 10 requested "$FIXTURE" /delay/5000/x-$m
		kill -INT $pid
		t0=$(date +%s%N)
		rc=0; wait $pid || rc=$?
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		exec 7>&-
		echo "$m: rc $rc after $ms ms"; cat "$out"
		[ "$rc" -eq 130 ]
		[ "$ms" -lt $((2 * SECOND_MS)) ]
		grep -q "^Length:    3    URL: $FIXTURE/bytes/3$" "$out"
		grep -q "^Length:  error  URL: $FIXTURE/delay/5000/x-$m (cancelled: interrupted)$" "$out"
	done
}

@test "-o FIFO: SIGINT or SIGTERM while it waits for a reader exits 130 or 143, quietly; a reader gets the rows" {
	fifo="$BATS_TEST_TMPDIR/fifo"
	mkfifo "$fifo"
	for sig in INT TERM; do
		"$CRAWL" -o "$fifo" --format=jsonl "$FIXTURE/bytes/3" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
		pid=$!
		# Its signal thread runs: a signal from now on is taken.
		threads() { [ "$(ls "/proc/$pid/task" 2>/dev/null | wc -l)" -ge 2 ]; }
		wait_until 10 threads
		kill -$sig $pid
		t0=$(date +%s%N)
		gone() { [ ! -e /proc/$pid ] || [ "$(awk '{ print $3 }' /proc/$pid/stat 2>/dev/null)" = Z ]; }
		wait_until 5 gone || kill -KILL $pid
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		rc=0; wait $pid || rc=$?
		echo "$sig: rc $rc after $ms ms: $(cat "$BATS_TEST_TMPDIR/err")"
		if [ $sig = INT ]; then [ "$rc" -eq 130 ]; else [ "$rc" -eq 143 ]; fi
		[ "$ms" -lt "$SECOND_MS" ]
		[ ! -s "$BATS_TEST_TMPDIR/out" ] && [ ! -s "$BATS_TEST_TMPDIR/err" ]
	done
	[ "$(stat_of "$FIXTURE" requests)" -eq 0 ]
	# A reader that comes later gets every row.
	"$CRAWL" -o "$fifo" --format=jsonl "$FIXTURE/bytes/3" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	wait_until 10 threads
	run cat "$fifo"
	rc=0; wait $pid || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(jq -r 'select(.url) | .length' <<<"$output")" -eq 3 ]
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
}
