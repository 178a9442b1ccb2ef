#!/usr/bin/env bats
# --retry: transient failures tried again, in every model, with backoff,
# Retry-After, and cancellation by --deadline and Ctrl-C. The fixture's
# /flaky/N/KEY fails the first N requests for its path; each test uses keys
# of its own, since the fixture's counts last the whole run.

load helpers

# one MODE: "-c 1", but for seq, which has one transfer anyway (and warns).
one() { sequential "$1" || echo "-c 1"; }

# key NAME: a path segment no other test (or run) of this file uses.
key() { echo "$1-$BATS_TEST_NUMBER-$$"; }

# count PATH: requests the fixture saw for PATH.
count() { curl -s "$FIXTURE/stats?path=$1" | jq -r .count; }

# field URL FIELD: FIELD of URL's JSON row in the last output.
field() { jq -r --arg u "$1" "select(.url == \$u) | .$2" <<<"$output"; }

# holds URL EXPR: EXPR is true of URL's JSON row in the last output.
holds() { jq -e -s --arg u "$1" "map(select(.url == \$u))[0] | $2" <<<"$output"; }

# bats test_tags=models
@test "a page that fails twice succeeds on the third try in every model: attempts 3" {
	for m in $MODES; do
		k=$(key $m)
		run "$CRAWL" --mode=$m --format=jsonl --retry 3 --retry-delay 0.01 "$FIXTURE/flaky/2/$k" "$FIXTURE/bytes/5"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(field "$FIXTURE/flaky/2/$k" status)" = 200 ]
		[ "$(field "$FIXTURE/flaky/2/$k" length)" = 3 ]
		[ "$(field "$FIXTURE/flaky/2/$k" attempts)" = 3 ]
		[ "$(field "$FIXTURE/bytes/5" attempts)" = 1 ]
		[ "$(jq -r 'select(.summary) | .retries' <<<"$output")" = 2 ]
		[ "$(count "/flaky/2/$k")" = 3 ]
	done
}

# bats test_tags=models
@test "--retry N gives up after N more tries: the row shows the last outcome" {
	for m in $MODES; do
		k=$(key $m)
		run "$CRAWL" --mode=$m --format=jsonl --retry 2 --retry-delay 0.01 "$FIXTURE/flaky/9/$k"
		[ "$status" -eq 0 ]
		[ "$(field "$FIXTURE/flaky/9/$k" status)" = 503 ]
		[ "$(field "$FIXTURE/flaky/9/$k" attempts)" = 3 ]
		[ "$(count "/flaky/9/$k")" = 3 ]
		run "$CRAWL" --mode=$m --format=jsonl --fail --retry 1 --retry-delay 0.01 "$FIXTURE/flaky/9/$k"
		[ "$status" -eq 1 ]
		[ "$(field "$FIXTURE/flaky/9/$k" fail)" = http ]
		[ "$(field "$FIXTURE/flaky/9/$k" attempts)" = 2 ]
		[ "$(count "/flaky/9/$k")" = 5 ]
	done
}

# bats test_tags=models
@test "no retry for a 404, nor for anything with --retry 0 (the default)" {
	for m in $MODES; do
		k=$(key $m)
		run "$CRAWL" --mode=$m --format=jsonl --retry 3 --retry-delay 0.01 "$FIXTURE/flaky/1/$k-404?status=404"
		[ "$(field "$FIXTURE/flaky/1/$k-404?status=404" status)" = 404 ]
		[ "$(field "$FIXTURE/flaky/1/$k-404?status=404" attempts)" = 1 ]
		[ "$(count "/flaky/1/$k-404")" = 1 ]
		run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/flaky/1/$k" "http://127.0.0.1:1/"
		[ "$status" -eq 1 ]
		[ "$(field "$FIXTURE/flaky/1/$k" status)" = 503 ]
		[ "$(field "$FIXTURE/flaky/1/$k" attempts)" = 1 ]
		[ "$(field "http://127.0.0.1:1/" attempts)" = 1 ]
		[ "$(count "/flaky/1/$k")" = 1 ]
		[ "$(jq -r 'select(.summary) | .retries' <<<"$output")" = 0 ]
	done
}

# bats test_tags=models
@test "a refused connection is tried again, and its row keeps the connect failure" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl --retry 2 --retry-delay 0.01 "http://127.0.0.1:1/"
		[ "$status" -eq 1 ]
		[ "$(field "http://127.0.0.1:1/" fail)" = connect ]
		[ "$(field "http://127.0.0.1:1/" attempts)" = 3 ]
	done
}

# bats test_tags=models
@test "Retry-After: 1 on a 429 is waited out before the second try" {
	for m in $MODES; do
		u="$FIXTURE/flaky/1/$(key $m)?status=429&retry-after=1"
		run "$CRAWL" --mode=$m --format=jsonl --retry 1 --retry-delay 0.01 "$u"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(field "$u" status)" = 200 ]
		[ "$(field "$u" attempts)" = 2 ]
		# The last try's start, from the run's start: at least the 1 s asked.
		holds "$u" '.start_s >= 1.0 and .start_s < 5'
	done
}

# bats test_tags=models
@test "a Retry-After HTTP date on a 503 is waited out" {
	for m in $MODES; do
		u="$FIXTURE/flaky/1/$(key $m)?retry-date=2"
		run "$CRAWL" --mode=$m --format=jsonl --retry 1 --retry-delay 0.01 "$u"
		echo "$m: $output"
		[ "$(field "$u" status)" = 200 ]
		[ "$(field "$u" attempts)" = 2 ]
		# A date has whole seconds: 2 s ahead is at least 1 s away.
		holds "$u" '.start_s >= 1.0 and .start_s < 5'
	done
}

# bats test_tags=models
@test "--retry-max-delay caps what Retry-After asks" {
	for m in $MODES; do
		u="$FIXTURE/flaky/1/$(key $m)?retry-after=60"
		run "$CRAWL" --mode=$m --format=jsonl --retry 1 --retry-max-delay 0.2 "$u"
		[ "$(field "$u" status)" = 200 ]
		holds "$u" '.start_s >= 0.2 and .start_s < 5'
	done
}

# bats test_tags=models
@test "a waiting retry holds no slot: with -c 1 the other URLs run meanwhile" {
	for m in $MODES; do
		u="$FIXTURE/flaky/1/$(key $m)?retry-after=1"
		run "$CRAWL" --mode=$m $(one $m) --format=jsonl --retry 1 "$u" "$FIXTURE/bytes/1" "$FIXTURE/bytes/2"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		# Rows stay in input order; the others started while it waited.
		[ "$(jq -r 'select(.url) | .url' <<<"$output" | head -1)" = "$u" ]
		holds "$FIXTURE/bytes/2" '.start_s < 0.9'
		holds "$u" '.start_s >= 1.0'
	done
}

# bats test_tags=models
@test "a retry whose time comes starts within a few hundred ms while other transfers are in flight" {
	# Every concurrent model: a sequential one's one transfer at a time is
	# the slow one.
	for m in $CONCURRENT_MODES; do
		u="$FIXTURE/flaky/1/$(key $m)?retry-after=1"
		run "$CRAWL" --mode=$m --format=jsonl --retry 1 "$u" "$FIXTURE/delay/2500/slow"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		holds "$u" '.start_s >= 1.0 and .start_s < 1.5'
	done
}

# bats test_tags=models
@test "--deadline cancels a waiting retry: its row says cancelled" {
	for m in $MODES; do
		u="$FIXTURE/flaky/5/$(key $m)?retry-after=10"
		t0=$(date +%s%N)
		run "$CRAWL" --mode=$m --format=jsonl --retry 3 --deadline 1 "$u" "$FIXTURE/bytes/3"
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		echo "$m: $ms ms: $output"
		[ "$status" -eq 1 ]
		[ "$ms" -lt 4000 ]
		[ "$(field "$u" fail)" = cancelled ]
		[ "$(field "$u" error)" = "cancelled: --deadline reached" ]
		[ "$(field "$u" attempts)" = 1 ]
		[ "$(field "$FIXTURE/bytes/3" status)" = 200 ]
	done
}

# bats test_tags=models
@test "Ctrl-C cancels a waiting retry: its row says interrupted, exit 130" {
	n=0
	for m in $MODES; do
		u="$FIXTURE/flaky/5/$(key $m)?retry-after=20"
		out="$BATS_TEST_TMPDIR/sig-$m"
		"$CRAWL" --mode=$m --retry 3 "$u" >"$out" 2>&1 &
		pid=$!
		# The first try answered: the retry waits its 20 s.
		wait_until 10 answered "$FIXTURE" "$((n + 1))"
		n=$((n + 1))
		kill -INT $pid
		rc=0; wait $pid || rc=$?
		cat "$out"
		[ "$rc" -eq 130 ]
		grep -qF "Length:  error  URL: $u (cancelled: interrupted)" "$out"
	done
}

# bats test_tags=models
@test "a retried page found by following links keeps its place in input order" {
	for m in $MODES; do
		k=$(key $m)
		start="$FIXTURE/links?u=%2Fflaky%2F1%2F$k&u=%2Fbytes%2F4"
		run "$CRAWL" --mode=$m --depth 1 --no-robots --retry 1 --retry-delay 0.01 "$start"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(grep -c '^Length:' <<<"$output")" -eq 3 ]
		grep -q "^Length:    3    URL: $FIXTURE/flaky/1/$k$" <<<"$output"
		grep -q "1 retry;" <<<"$output"
	done
}

# bats test_tags=models
@test "--mode=all shows each model's retries" {
	run "$CRAWL" --mode=all -q --retry 1 --retry-delay 0.01 "$FIXTURE/status/503" "$FIXTURE/bytes/1"
	[ "$(sed -n '/^mode  *urls  *ok  *failed  *retries/,$p' <<<"$output" | tail -n +2 | awk '{print $1, $5}' | tr '\n' ';')" = "$(per_mode 1)" ]
}

@test "bad --retry values exit 2 naming the flag" {
	run "$CRAWL" --retry -1 "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- "--retry: expected a whole number" <<<"$output"
	run "$CRAWL" --retry-delay 0 "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- "--retry-delay" <<<"$output"
	run "$CRAWL" --retry-max-delay x "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- "--retry-max-delay" <<<"$output"
}

# bats test_tags=models
@test "robots.txt is asked for once: a 503 is not tried again, and its host stays forbidden, in every model" {
	start_private_fixture --robots /status/503
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --retry 3 --retry-delay 0.01 --format=jsonl "$PFIX/bytes/$m"
		echo "$m: $output"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.url) | .fail' <<<"$output")" = robots ]
		[ "$(tail -1 <<<"$output" | jq -c '[.retries, .robots_fetched]')" = "[0,1]" ]
	done
	[ "$(curl -s "$PFIX/stats?path=/robots.txt" | jq .count)" -eq "$NMODES" ]
}
