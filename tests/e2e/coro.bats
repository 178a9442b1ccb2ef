#!/usr/bin/env bats
# End-to-end tests of the coroutine model at scale: many transfers in
# flight in one loop, several loops, a timeout among many, and the
# benchmark script's short form.

load helpers

rows() { grep '^Length:' <<<"$output"; }

# The rows with the milliseconds of libcurl's connect errors left out.
stable_rows() { rows | sed 's/after [0-9]* ms/after N ms/'; }

@test "2,000 concurrent /delay/500 URLs finish in one loop, 2,000 rows of length 100" {
	alone
	[ "$(ulimit -Hn)" -ge 2200 ] || skip "needs 2,200 descriptors; the hard limit is $(ulimit -Hn)"
	start_private_fixture
	seq 2000 | sed "s|^|$PFIX/delay/500/|" >"$BATS_TEST_TMPDIR/list"
	run "$CRAWL" --mode=coro --loops 1 "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	[ "$(rows | wc -l)" -eq 2000 ]
	[ "$(rows | grep -c '^Length:   100   URL: ')" -eq 2000 ]
	[ "$(rows | sed -n 1p)" = "Length:   100   URL: $PFIX/delay/500/1" ]
	[ "$(rows | sed -n 2000p)" = "Length:   100   URL: $PFIX/delay/500/2000" ]
	grep -q '^Mode: coro; 2000 URLs, 2000 ok, 0 failed; 2000 connections' <<<"$output"
	# They were in flight together, not one batch after another (unless
	# ThreadSanitizer makes starting 2,000 take longer than 500 ms).
	[ -n "${TSAN_OPTIONS:-}" ] || [ "$(stat_of "$PFIX" peak_active)" -ge 1000 ]
	t=$(sed -n 's/^Use time: \(.*\)s$/\1/p' <<<"$output")
	awk -v t="$t" 'BEGIN { exit !(t >= 0.5 && t < 20) }'
	stop_private_fixture
}

# A list with something of everything: sizes, codings, delays, statuses,
# redirects, a refused port and lines that are not URLs.
mixed_list() {
	for i in $(seq 60); do
		echo "$FIXTURE/bytes/$((i * 37))"
		echo "$FIXTURE/chunked/$((i * 11))"
		echo "$FIXTURE/delay/$((i % 5 * 20))/$i"
	done
	for code in 200 204 301 404 500; do echo "$FIXTURE/status/$code"; done
	echo "$FIXTURE/gzip/5000"
	echo "$FIXTURE/redirect/3"
	echo "not a url"
	echo "http://127.0.0.1:1/refused"
}

@test "past 512 in flight, a host's transfers keep to one multi handle: 600 hosts x 3 URLs over 600 connections" {
	[ "$(ulimit -Hn)" -ge 1400 ] || skip "needs 1,400 descriptors; the hard limit is $(ulimit -Hn)"
	# A web server answers every loopback address; 127.0.x.y outside the
	# web's range gets the plain endpoints, each address a host of its own.
	start_private_fixture --web 1 --seed 1
	port=${PFIX##*:}
	for i in 1 2 3; do
		for h in $(seq 0 599); do echo "http://127.0.$((1 + h / 250)).$((1 + h % 250)):$port/bytes/100"; done
	done >"$BATS_TEST_TMPDIR/list"
	run "$CRAWL" --mode=coro --loops 1 -c 1000 --per-host 1 --format=jsonl "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.summary) | "\(.ok) \(.failed) \(.reuse) \(.conns)"' <<<"$output")" = "1800 0 on 600" ]
	# The server counted as many (its /stats request's own is not yet in).
	[ "$(stat_of "$PFIX" accepted)" -eq 600 ]
	stop_private_fixture
}

@test "--loops 2 returns the same rows as --loops 1" {
	mixed_list >"$BATS_TEST_TMPDIR/list"
	for extra in "" "-c 7" "--reuse" "--no-reuse -c 50"; do
		run "$CRAWL" --mode=coro --loops 1 $extra "$BATS_TEST_TMPDIR/list"
		[ "$status" -eq 1 ]
		one=$(stable_rows)
		summary_one=$(grep '^Mode:' <<<"$output" | sed 's/; [0-9]* connections.*//')
		run "$CRAWL" --mode=coro --loops 2 $extra "$BATS_TEST_TMPDIR/list"
		[ "$status" -eq 1 ]
		[ "$(rows | wc -l)" -eq 189 ]
		[ "$(stable_rows)" = "$one" ]
		[ "$(grep '^Mode:' <<<"$output" | sed 's/; [0-9]* connections.*//')" = "$summary_one" ]
		grep -q '^Mode: coro; 189 URLs, 187 ok, 2 failed' <<<"$output"
	done
}

@test "among 500 transfers in flight, the one that times out fails alone" {
	{
		for i in $(seq 250); do echo "$FIXTURE/delay/100/$i"; done
		echo "$FIXTURE/hang"
		for i in $(seq 249); do echo "$FIXTURE/bytes/$i"; done
	} >"$BATS_TEST_TMPDIR/list"
	for loops in 1 2; do
		# A second (the suite's: longer under a sanitizer) for each, the
		# hanging one's only way to end.
		run "$CRAWL" --mode=coro --loops $loops --timeout "$(soon 1)" --format=jsonl "$BATS_TEST_TMPDIR/list"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.line == 251) | .fail' <<<"$output")" = "timeout" ]
		[ "$(jq -r 'select(.url and .fail != null) | .line' <<<"$output")" = "251" ]
		[ "$(jq -r 'select(.line == 250) | .length' <<<"$output")" = "100" ]
		[ "$(jq -r 'select(.line == 500) | .length' <<<"$output")" = "249" ]
		[ "$(jq -r 'select(.summary) | "\(.ok) \(.failed)"' <<<"$output")" = "499 1" ]
	done
}

@test "QUICK=1 scripts/bench-coro.sh runs and prints its table" {
	sanitized && skip "a benchmark script: the plain build's run tests it"
	run env NODEPS=1 QUICK=1 BUILD="$BUILD" timeout 120 scripts/bench-coro.sh
	echo "$output"
	[ "$status" -eq 0 ]
	grep -Eq '^case +model/peer +wall s +URLs/s +RSS MB +reqs +conns' <<<"$output"
	for who in "crawl coro" "crawl thread" "crawl pool -c 100" "crawl coro --loops 1" \
		"crawl coro --loops 2" "curl --parallel-max 100" "wget2 --max-threads 100" \
		"crawl coro (reuse auto)" "crawl coro --no-reuse"; do
		grep -q " $who " <<<"$output"
	done
	# Every crawl row reports a time and a rate (the lines that announce
	# each case, on stderr, aside).
	[ -z "$(grep -v '^bench-coro: case ' <<<"$output" | grep ' crawl ' | grep -Ev ' [0-9]+\.[0-9]{3} +[0-9]+ ')" ]
	grep -q '^bench-coro: case 1: .* (1 run; [0-9]*s so far)$' <<<"$output"
	grep -Eq '^coro +[0-9.]+ KB per URL in flight' <<<"$output"
	grep -Eq '^thread +[0-9.]+ KB per URL in flight' <<<"$output"
	# Over HTTP/2 the default multiplexes: fewer connections than URLs.
	[ "$(grep 'HTTP/2 server' <<<"$output" | grep -c ' crawl coro --no-reuse .* 100 *$')" -eq 1 ]
	[ "$(grep 'HTTP/2 server' <<<"$output" | grep ' (reuse auto) ' | awk '{print $NF}')" -lt 100 ]
}

@test "--stack-size sets the coroutines' stack, and the rows do not change" {
	urls=()
	for i in $(seq 50); do urls+=("$FIXTURE/bytes/$i"); done
	run "$CRAWL" --mode=coro --format=jsonl "${urls[@]}"
	default=$(jq -r 'select(.url) | .length' <<<"$output")
	for s in 16K 32K 1M; do
		run "$CRAWL" --mode=coro --stack-size "$s" --format=jsonl "${urls[@]}"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .length' <<<"$output")" = "$default" ]
	done
	run "$CRAWL" --stack-size 8K "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- '--stack-size' <<<"$output"
}
