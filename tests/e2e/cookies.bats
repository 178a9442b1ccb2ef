#!/usr/bin/env bats
# --cookie and --cookie-jar, in every model: the fixture's /set-cookie/N/V
# sets a cookie, /header/Cookie answers with the Cookie header the request
# carried (its length is the row's), 404 "no such header\n" without one.

load helpers

# one MODE: "-c 1", but for seq, which has one transfer anyway (and warns).
one() { sequential "$1" || echo "-c 1"; }

# len URL: the length in URL's JSON row of the last output.
len() { jq -r --arg u "$1" 'select(.url == $u) | .length' <<<"$output"; }

@test "--cookie sends its cookies with every request" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl --cookie 'a=1; bb=22' "$FIXTURE/header/Cookie"
		[ "$status" -eq 0 ]
		[ "$(len "$FIXTURE/header/Cookie")" = 10 ]     # "a=1; bb=22"
	done
}

@test "without --cookie-jar a cookie a response sets is not sent back" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m $(one $m) --format=jsonl "$FIXTURE/set-cookie/k/v" "$FIXTURE/header/Cookie"
		[ "$(jq -r 'select(.url) | .status' <<<"$output" | tr '\n' ' ')" = "200 404 " ]
	done
}

@test "with --cookie-jar a cookie one response sets goes with later requests, in every model" {
	for m in $MODES; do
		jar="$BATS_TEST_TMPDIR/jar-$m"
		run "$CRAWL" --mode=$m $(one $m) --format=jsonl --cookie-jar "$jar" "$FIXTURE/set-cookie/s$m/v1" "$FIXTURE/header/Cookie"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(len "$FIXTURE/header/Cookie")" = $((${#m} + 4)) ]   # "sMODE=v1"
	done
}

@test "coro with two loops shares one jar between them" {
	jar="$BATS_TEST_TMPDIR/jar"
	run "$CRAWL" --mode=coro --loops 2 -c 2 --format=jsonl --cookie-jar "$jar" "$FIXTURE/set-cookie/l/v1" "$FIXTURE/delay/300/x" "$FIXTURE/header/Cookie" "$FIXTURE/delay/300/y"
	[ "$(len "$FIXTURE/header/Cookie")" = 4 ]
}

@test "the jar is written at the end and read by the next run, with --cookie beside it" {
	for m in seq thread pool coro; do
		jar="$BATS_TEST_TMPDIR/jar-$m"
		run "$CRAWL" --mode=$m --cookie-jar "$jar" "$FIXTURE/set-cookie/j$m/v2"
		[ "$status" -eq 0 ]
		grep -q "j$m	v2$" "$jar"
		run "$CRAWL" --mode=$m --format=jsonl --cookie-jar "$jar" --cookie 'x=y' "$FIXTURE/header/Cookie"
		[ "$(len "$FIXTURE/header/Cookie")" = $((${#m} + 9)) ]   # "x=y; jMODE=v2"
	done
}

@test "procs: each worker reads the jar, and what the workers receive is written back to it" {
	jar="$BATS_TEST_TMPDIR/jar"
	"$CRAWL" --mode=coro --cookie-jar "$jar" "$FIXTURE/set-cookie/old/v" >/dev/null
	run "$CRAWL" --mode=procs --procs 2 -c 1 --format=jsonl --cookie-jar "$jar" "$FIXTURE/set-cookie/new/v" "$FIXTURE/header/Cookie"
	[ "$(len "$FIXTURE/header/Cookie")" = 12 ]     # "old=v; new=v": -c 1 keeps the host on one worker
	grep -q "old	v$" "$jar"
	grep -q "new	v$" "$jar"
	[ "$(grep -c "	v$" "$jar")" -eq 2 ]
	# Two hosts, one a worker: both workers' cookies reach the file.
	host2=${FIXTURE/127.0.0.1/localhost}
	run "$CRAWL" --mode=procs --procs 2 --format=jsonl --cookie-jar "$jar" "$FIXTURE/set-cookie/a/1" "$host2/set-cookie/b/2"
	[ "$status" -eq 0 ]
	grep -q "^127.0.0.1	.*	a	1$" "$jar"
	grep -q "^localhost	.*	b	2$" "$jar"
	grep -q "old	v$" "$jar"
}

@test "bad --cookie and --cookie-jar values exit 2 naming the flag" {
	run "$CRAWL" --cookie 'novalue' "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- "--cookie: expected 'NAME=VALUE; ...'" <<<"$output"
	run "$CRAWL" --cookie-jar /nonexistent/dir/jar "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- "--cookie-jar: cannot read and write '/nonexistent/dir/jar'" <<<"$output"
}
