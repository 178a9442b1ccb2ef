#!/usr/bin/env bats
# Faults, bad input, signals and safe defaults: every URL in gives exactly one
# row out, in every model, whatever goes wrong.

load helpers
bats_require_minimum_version 1.5.0   # run --separate-stderr


# bad_list NAME: the corpus file with @FIXTURE@ replaced, in the test's tmpdir.
bad_list() {
	sed "s|@FIXTURE@|$FIXTURE|g" "testdata/bad-input/$1" >"$BATS_TEST_TMPDIR/$1"
	echo "$BATS_TEST_TMPDIR/$1"
}

rows() { grep '^Length:' <<<"$output"; }

# bats test_tags=models
@test "fault matrix: 1,000 URLs, each with its expected outcome, in every model" {
	alone
	list="$BATS_TEST_TMPDIR/faults.txt"
	expect="$BATS_TEST_TMPDIR/expect.txt"
	: >"$list"; : >"$expect"
	add() { # add COUNT PATH CLASS
		for i in $(seq "$1"); do
			case $2 in
			refused) echo "http://127.0.0.1:1/refused/$i" ;;
			*) echo "$FIXTURE${2//\{i\}/$i}" ;;
			esac >>"$list"
			echo "$3" >>"$expect"
		done
	}
	add 335 "/bytes/{i}" ok
	add 100 "/status/404?{i}" ok
	add 100 "/status/500?{i}" ok
	add 100 "/redirect/3?{i}" ok
	add 20 "/redirect-loop?{i}" redirects
	add 2 "/hang?{i}" timeout
	add 100 "/reset?{i}" recv
	add 100 refused connect
	add 50 "/garbage?{i}" protocol
	add 23 "/trickle/3/10?{i}" ok
	add 50 "/bytes/200000?{i}" too-large
	# 400 KB decoded each: past the limit, where the decoder stops.
	add 20 "/gzip/400000?{i}" too-large
	[ "$(wc -l <"$list")" -eq 1000 ]
	# Every model's crawl at once, 20 transfers each in flight: most of a
	# run is the wait for the hung URLs' timeout (a sequential model waits
	# for each), which the runs share instead of taking turns. 120
	# transfers in flight in all: a thousand at once on two cores (and
	# under the sanitizers) would make healthy URLs miss the timeout.
	local runs=() pids=() rcs=() k=0 run
	for run in $MODES "coro --loops 2"; do
		runs+=("$run")
		timeout 180 "$CRAWL" --mode=$run -c 20 --timeout "$(soon 2)" --max-size 100K \
			--format=jsonl "$list" >"$BATS_TEST_TMPDIR/out.$k" 2>"$BATS_TEST_TMPDIR/err.$k" &
		pids+=($!)
		k=$((k + 1))
	done
	for k in "${!pids[@]}"; do
		rcs[k]=0; wait "${pids[k]}" || rcs[k]=$?
	done
	for k in "${!runs[@]}"; do
		out="$BATS_TEST_TMPDIR/out.$k"
		echo "mode ${runs[k]}: status ${rcs[k]}, $(tail -1 "$BATS_TEST_TMPDIR/err.$k")"
		[ "${rcs[k]}" -eq 1 ]
		jq -r 'select(.url) | [.fail // "ok", .url] | @tsv' "$out" >"$out.rows"
		[ "$(wc -l <"$out.rows")" -eq 1000 ]
		diff <(cut -f1 "$out.rows") "$expect"
		# Every row is the listed URL, in input order.
		diff <(cut -f2 "$out.rows") "$list"
		[ "$(jq -r 'if .summary then "\(.urls) \(.failed)" elif .line == 7 then .length
			    elif .line == 350 or .line == 450 then .status else empty end' "$out" | tr '\n' ' ')" = "7 404 500 1000 342 " ]
	done
}

# bats test_tags=models
@test "bad input: every line gets a row, bad ones a message naming file and line" {
	for m in $MODES; do
		f=$(bad_list schemes.txt)
		run "$CRAWL" --mode=$m "$f"
		[ "$status" -eq 1 ]
		[ "$(rows | wc -l)" -eq 9 ]
		for l in 2 3 4 5 6; do grep -q "schemes.txt:$l: unsupported scheme" <<<"$output"; done
		grep -q "schemes.txt:7: not an absolute http or https URL" <<<"$output"
		grep -q "schemes.txt:8: not an absolute http or https URL" <<<"$output"
		grep -q "schemes.txt:9: malformed URL" <<<"$output"
		rows | grep -q "^Length:    4    URL: $FIXTURE/bytes/4$"

		f=$(bad_list crlf-bom.txt)
		run "$CRAWL" --mode=$m "$f"
		[ "$status" -eq 0 ]
		[ "$(rows | awk '{print $2}' | tr '\n' ' ')" = "1 2 3 " ]

		f=$(bad_list binary.bin)
		run "$CRAWL" --mode=$m "$f"
		[ "$status" -eq 1 ]
		[ "$(rows | wc -l)" -eq 4 ]
		grep -q 'binary.bin:1: contains a NUL byte: GIF89a\\x00' <<<"$output"
		grep -q 'binary.bin:3: not an absolute http or https URL (no scheme): \\xc3(\\xa0\\xa1' <<<"$output"
		rows | grep -q "^Length:   11    URL: $FIXTURE/bytes/11$"

		f=$(bad_list spaces-unicode.txt)
		run bash -c "'$CRAWL' --mode=$m --format=jsonl '$f' 2>/dev/null"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.line == 1) | .error' <<<"$output" | tail -1)" = "contains spaces" ]
		[ "$(jq -r 'select(.line == 2) | .length' <<<"$output" | tail -1)" = "6" ]
		[ "$(jq -r 'select(.line == 4) | .length' <<<"$output" | tail -1)" = "8" ]

		f=$(bad_list duplicates.txt)
		run "$CRAWL" --mode=$m "$f"
		[ "$status" -eq 0 ]
		[ "$(rows | grep -c "/bytes/9$")" -eq 3 ]

		run "$CRAWL" --mode=$m testdata/bad-input/empty.txt
		[ "$status" -eq 0 ]
		[ "$(rows | wc -l)" -eq 0 ]
	done
}

# bats test_tags=models
@test "bad input: a 1 MB line and a 100,000-line list" {
	big="$BATS_TEST_TMPDIR/big.txt"
	{
		echo "$FIXTURE/bytes/1"
		printf 'http://127.0.0.1/%*s\n' 1048576 '' | tr ' ' a
		echo "$FIXTURE/bytes/2"
	} >"$big"
	many="$BATS_TEST_TMPDIR/many.txt"
	{ echo "$FIXTURE/bytes/3"; seq 100000 | sed 's/^/not-a-url-/'; } >"$many"
	for m in $MODES; do
		run bash -c "'$CRAWL' --mode=$m '$big' 2>'$BATS_TEST_TMPDIR/err'"
		[ "$status" -eq 1 ]
		[ "$(rows | wc -l)" -eq 3 ]
		[ "$(wc -c <"$BATS_TEST_TMPDIR/err")" -lt 1000 ]
		grep -q "big.txt:2: line longer than 8192 bytes" "$BATS_TEST_TMPDIR/err"
		[ "$(rows | sed -n 3p)" = "Length:    2    URL: $FIXTURE/bytes/2" ]
		run timeout 60 bash -c "'$CRAWL' --mode=$m -q --format=jsonl '$many' 2>/dev/null"
		[ "$status" -eq 1 ]
		[ "$(jq -r '[.urls, .ok, .failed] | join(" ")' <<<"$output")" = "100001 1 100000" ]
	done
}

# endless_line SIGNAL SOURCE: runs crawl on a list that never ends a line
# (SOURCE zero: /dev/zero; pipe: `yes | tr -d '\n'` on standard input),
# waits until it has read 128 MiB of it, sends SIGNAL and sets rss_kb (its
# peak RSS before the signal), rc and ms (how long it took to exit after).
endless_line() {
	local sig=$1 src=$2 out="$BATS_TEST_TMPDIR/out-$1-$2" pid
	if [ "$src" = zero ]; then
		"$CRAWL" /dev/zero >"$out" 2>&1 &
	else
		(yes | tr -d '\n') | "$CRAWL" - >"$out" 2>&1 &
	fi
	pid=$!
	read_mb() { [ "$(awk '/^rchar/ { print int($2 / 1048576) }' "/proc/$pid/io")" -ge 128 ]; }
	wait_until 20 read_mb
	rss_kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")
	kill -$sig $pid
	local t0=$(date +%s%N)
	# Gone, or a zombie waiting for wait; the old reader went on for
	# seconds after the signal, and is not waited for past ten.
	gone() { [ ! -e /proc/$pid ] || [ "$(awk '{ print $3 }' /proc/$pid/stat 2>/dev/null)" = Z ]; }
	wait_until 10 gone || kill -KILL $pid
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	rc=0; wait $pid || rc=$?
	echo "$sig $src: peak RSS $rss_kb kB, rc $rc after $ms ms"; cat "$out"
}

@test "a list that never ends a line: memory stays flat, and SIGINT or SIGTERM ends the crawl within a second" {
	for src in zero pipe; do
		for sig in INT TERM; do
			endless_line $sig $src
			[ "$rss_kb" -lt 65536 ]
			[ "$ms" -lt "$SECOND_MS" ]
			if [ $sig = INT ]; then [ "$rc" -eq 130 ]; else [ "$rc" -eq 143 ]; fi
			# No line ever ended: no row, no message, only the summary.
			[ "$(grep -c . "$BATS_TEST_TMPDIR/out-$sig-$src")" -eq 2 ]
			grep -q '^Mode: coro; 0 URLs, 0 ok, 0 failed;' "$BATS_TEST_TMPDIR/out-$sig-$src"
		done
	done
}

@test "a line too long is read no further than 8 KiB, and the next line is crawled" {
	# 200 MB of one line on a pipe, then a URL: the line is reported once,
	# the URL fetched, and the reader's memory is a buffer, not the line.
	list="$BATS_TEST_TMPDIR/fifo"
	mkfifo "$list"
	{ printf 'http://127.0.0.1/'; head -c 200000000 /dev/zero | tr '\0' a; printf '\n%s\n' "$FIXTURE/bytes/7"; } >"$list" &
	run --separate-stderr /usr/bin/time -f 'rss_kb=%M' "$CRAWL" --format=jsonl "$list"
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ "$(jq -r 'select(.url) | [.line, .fail // "ok", .length] | @tsv' <<<"$output")" = "$(printf '1\tinput\t0\n2\tok\t7')" ]
	[ "$(grep -c "fifo:1: line longer than 8192 bytes: http://127.0.0.1/aaaa" <<<"$stderr")" -eq 1 ]
	rss_kb=$(sed -n 's/^rss_kb=//p' <<<"$stderr")
	[ "$rss_kb" -lt 65536 ]
}

@test "bad flags exit 2 with a message naming the flag" {
	for args in "-c -1" "--concurrency=abc" "--timeout 0" "--timeout -1" "--connect-timeout x" \
		"--max-redirs -2" "--mode=bogus" "--format=yaml" "--order=random" "--max-size 1Q" \
		"--buffer-size 10" "--stack-size 1K" "--loops 0" "--repeat 0" "--deadline 0" "--nonsense" "-Z"; do
		run "$CRAWL" $args "$FIXTURE/bytes/1"
		echo "$args -> $status: $output"
		[ "$status" -eq 2 ]
		flag=${args%% *}; flag=${flag%%=*}
		grep -q -- "$flag" <<<"${lines[0]}"
	done
	run "$CRAWL" --timeout
	[ "$status" -eq 2 ]
	grep -q -- "--timeout: needs a value" <<<"$output"
}

# bats test_tags=models
@test "a redirect to file:// is refused with a clear error" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/redirect-to?url=file:///etc/passwd"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.url) | .fail' <<<"$output")" = "protocol" ]
		jq -r 'select(.url) | .error' <<<"$output" | grep -q '^redirect refused, only http and https are followed'
		[ "$(jq -r 'select(.url) | .length' <<<"$output")" = "0" ]
	done
}

# bats test_tags=models
@test "a gzip body that inflates past --max-size fails, the same body within it does not" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl --max-size 100K "$FIXTURE/gzip/10000000" "$FIXTURE/gzip/100000"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.line == 1) | .fail' <<<"$output")" = "too-large" ]
		[ "$(jq -r 'select(.line == 2) | .length' <<<"$output")" = "100000" ]
		[ "$(jq -r 'select(.line == 2) | .wire_bytes < 10000' <<<"$output")" = "true" ]
	done
}

# bats test_tags=models
@test "SIGINT: a partial table, unfinished URLs cancelled, exit 130, in every model" {
	for m in $MODES; do
		out="$BATS_TEST_TMPDIR/sig-$m"
		done_before=$(curl -s "$FIXTURE/stats" | jq '.requests - .active')
		"$CRAWL" --mode=$m -c 2 "$FIXTURE/delay/100/a-$m" "$FIXTURE/delay/8000/b-$m" "$FIXTURE/delay/8000/c-$m" "$FIXTURE/bytes/5" >"$out" 2>&1 &
		pid=$!
		# /delay/100/a answered, /delay/8000/b asked for.
		wait_until 10 answered "$FIXTURE" $((done_before + 1))
		wait_until 10 requested "$FIXTURE" /delay/8000/b-$m
		sleep 0.1
		kill -INT $pid
		t0=$(date +%s%N)
		rc=0; wait $pid || rc=$?
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		echo "$m: rc $rc after $ms ms"; cat "$out"
		[ "$rc" -eq 130 ]
		[ "$ms" -lt $((2 * SECOND_MS)) ]
		[ "$(grep -c '^Length:' "$out")" -eq 4 ]
		grep -q "^Length:   100   URL: $FIXTURE/delay/100/a-$m$" "$out"
		grep -q "^Length:  error  URL: $FIXTURE/delay/8000/b-$m (cancelled: interrupted)$" "$out"
		grep -q "^Length:  error  URL: $FIXTURE/bytes/5 (cancelled: interrupted)$" "$out"
	done
}

@test "a second SIGINT ends the process at once" {
	# Ending at once leaves threads unjoined, on purpose.
	TSAN_OPTIONS="${TSAN_OPTIONS:-} report_thread_leaks=0" "$CRAWL" --mode=thread "$FIXTURE/hang" >/dev/null 2>&1 &
	pid=$!
	wait_until 10 requested "$FIXTURE" /hang
	kill -INT $pid; kill -INT $pid
	rc=0; wait $pid || rc=$?
	[ "$rc" -eq 130 ]
}

@test "SIGTERM cancels like SIGINT and exits 143" {
	"$CRAWL" --mode=coro "$FIXTURE/delay/8000/x" >"$BATS_TEST_TMPDIR/out" 2>&1 &
	pid=$!
	wait_until 10 requested "$FIXTURE" /delay/8000/x
	kill -TERM $pid
	rc=0; wait $pid || rc=$?
	[ "$rc" -eq 143 ]
	grep -q "cancelled: interrupted" "$BATS_TEST_TMPDIR/out"
}

# bats test_tags=models
@test "--deadline cancels what has not finished, in every model" {
	for m in $MODES; do
		run timeout 10 "$CRAWL" --mode=$m --deadline 0.8 "$FIXTURE/delay/50/a" "$FIXTURE/delay/6000/b"
		[ "$status" -eq 1 ]
		grep -q "^Length:   100   URL: $FIXTURE/delay/50/a$" <<<"$output"
		grep -q "^Length:  error  URL: $FIXTURE/delay/6000/b (cancelled: --deadline reached)$" <<<"$output"
		t=$(sed -n 's/^Use time: \(.*\)s$/\1/p' <<<"$output")
		awk -v t="$t" 'BEGIN { exit !(t < 2.5) }'
	done
}

# bats test_tags=models
@test "--deadline ends a transfer in flight at the deadline, not at libcurl's next progress call" {
	# A blocking fetch heard of the deadline only when libcurl called its
	# progress callback, about once a second while no byte came: 1.0 to
	# 1.2 s for a 0.3 s deadline.
	for m in $MODES; do
		run timeout 10 "$CRAWL" --mode=$m --deadline 0.3 --format=jsonl "$FIXTURE/hang" "$FIXTURE/delay/5000/b"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.url) | .error' <<<"$output" | sort -u)" = "cancelled: --deadline reached" ]
		wall=$(jq -r 'select(.summary) | .wall_s' <<<"$output")
		echo "$m: $wall s"
		# The deadline is armed before the run's set-up, and wall_s counts
		# from the end of it: a loaded machine's set-up comes off wall_s.
		awk -v t="$wall" 'BEGIN { exit !(t >= 0.2 && t < 0.8) }'
	done
}

# bats test_tags=models
@test "--mode=all stops after SIGINT and prints what ran" {
	"$CRAWL" --mode=all -q "$FIXTURE/delay/3000/a" >"$BATS_TEST_TMPDIR/out" 2>&1 &
	pid=$!
	wait_until 10 requested "$FIXTURE" /delay/3000/a
	kill -INT -- $pid
	rc=0; wait $pid || rc=$?
	cat "$BATS_TEST_TMPDIR/out"
	[ "$rc" -eq 130 ]
	grep -q '^mode  *urls  *ok  *failed' "$BATS_TEST_TMPDIR/out"
}

# bats test_tags=models
@test "a closed output pipe ends quietly" {
	urls=()
	for i in $(seq 200); do urls+=("$FIXTURE/bytes/$i"); done
	for m in $MODES; do
		run bash -c "'$CRAWL' --mode=$m ${urls[*]} | head -1"
		[ "$output" = "$(echo "$output" | grep '^Use time:')" ]
		[ "${#lines[@]}" -eq 1 ]
	done
}

@test "the fixture server keeps serving with 1,000 idle connections and garbage clients" {
	start_private_fixture
	port=${PFIX##*:}
	fds=()
	for i in $(seq 1000); do
		exec {fd}<>"/dev/tcp/127.0.0.1/$port"
		fds+=("$fd")
	done
	for i in $(seq 20); do
		exec {g}<>"/dev/tcp/127.0.0.1/$port"
		printf 'GARBAGE\x00\x01 /// HTTP/9\r\n\r\n' >&$g
		exec {g}>&-
	done
	run "$CRAWL" --mode=coro -c 10 "$PFIX/bytes/10" "$PFIX/delay/10/x" "$PFIX/status/204"
	[ "$status" -eq 0 ]
	[ "$(rows | wc -l)" -eq 3 ]
	for fd in "${fds[@]}"; do exec {fd}>&-; done
	stop_private_fixture
}

# bats test_tags=models
@test "ulimit -n 256: a link-following crawl keeps in flight what the descriptors allow, in every model" {
	for m in $MODES; do
		run bash -c "ulimit -n 256 && '$CRAWL' --mode=$m -c 500 --depth 3 --max-pages 3000 --no-robots --format=jsonl '$FIXTURE/graph/100000/20/' 2>/dev/null"
		echo "$m: $(tail -1 <<<"$output" | cut -c1-120)"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.summary) | .ok' <<<"$output")" = "3000" ]
	done
	run bash -c "ulimit -n 256 && '$CRAWL' --mode=thread --depth 3 --max-pages 300 --no-robots -q '$FIXTURE/graph/100000/20/' 2>&1 >/dev/null"
	[ "$output" = "crawl: only 256 file descriptors (3 a transfer): keeping 63 in flight" ]
}
