#!/usr/bin/env bats
# --cookie and --cookie-jar, in every model: the fixture's /set-cookie/N/V
# sets a cookie, /header/Cookie answers with the Cookie header the request
# carried (its length is the row's), 404 "no such header\n" without one.

load helpers
bats_require_minimum_version 1.5.0   # run --separate-stderr

teardown() {
	mountpoint -q "$BATS_TEST_TMPDIR/full" 2>/dev/null && umount "$BATS_TEST_TMPDIR/full"
	stop_fixtures
}

# one MODE: "-c 1", but for seq, which has one transfer anyway (and warns).
one() { sequential "$1" || echo "-c 1"; }

# len URL: the length in URL's JSON row of the last output.
len() { jq -r --arg u "$1" 'select(.url == $u) | .length' <<<"$output"; }

# bats test_tags=models
@test "--cookie sends its cookies with every request" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl --cookie 'a=1; bb=22' "$FIXTURE/header/Cookie"
		[ "$status" -eq 0 ]
		[ "$(len "$FIXTURE/header/Cookie")" = 10 ]     # "a=1; bb=22"
	done
}

# bats test_tags=models
@test "without --cookie-jar a cookie a response sets is not sent back" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m $(one $m) --format=jsonl "$FIXTURE/set-cookie/k/v" "$FIXTURE/header/Cookie"
		[ "$(jq -r 'select(.url) | .status' <<<"$output" | tr '\n' ' ')" = "200 404 " ]
	done
}

# bats test_tags=models
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

# bats test_tags=models
@test "the jar is written at the end and read by the next run, with --cookie beside it, in every model" {
	for m in $MODES; do
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

# bats test_tags=models
@test "a jar that cannot be written at the end: exit 23 naming it, the old jar left as it was, in every model" {
	[ "$(id -u)" = 0 ] || skip "needs root to mount a small tmpfs"
	full="$BATS_TEST_TMPDIR/full"
	mkdir -p "$full"
	mount -t tmpfs -o size=64k tmpfs "$full" || skip "cannot mount tmpfs"
	jar="$full/jar"
	run "$CRAWL" -q --cookie-jar "$jar" "$FIXTURE/set-cookie/old/v"
	[ "$status" -eq 0 ]
	cp "$jar" "$BATS_TEST_TMPDIR/before"
	dd if=/dev/zero of="$full/fill" bs=4k 2>/dev/null || true     # the disk is full
	for m in $MODES; do
		run --separate-stderr "$CRAWL" --mode=$m -q --format=jsonl --cookie-jar "$jar" "$FIXTURE/set-cookie/new/v"
		echo "$m: $status: $stderr"
		[ "$status" -eq 23 ]
		[ "$stderr" = "crawl: --cookie-jar $jar: No space left on device" ]
		[ "$(jq -r .ok <<<"$output")" -eq 1 ]
		cmp "$jar" "$BATS_TEST_TMPDIR/before"
		[ "$(ls -A "$full" | tr '\n' ' ')" = "fill jar " ]     # no temporary file left
	done
	rm "$full/fill"
	run "$CRAWL" -q --cookie-jar "$jar" "$FIXTURE/set-cookie/new/v"
	[ "$status" -eq 0 ]
	[ "$(grep -v '^#' "$jar" | grep . | cut -f6,7 | sort | tr '\n' ' ')" = "$(printf 'new\tv old\tv ')" ]
	head -1 "$jar" | grep -qx '# Netscape HTTP Cookie File'
}

# bats test_tags=models
@test "a directory as the jar is refused at start with exit 2, and one made in its place during the run fails it with 23" {
	mkdir "$BATS_TEST_TMPDIR/dir"
	run "$CRAWL" --cookie-jar "$BATS_TEST_TMPDIR/dir" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --cookie-jar: '$BATS_TEST_TMPDIR/dir' is a directory, not a cookie file" ]
	[ "$(stat_of "$FIXTURE" requests)" -eq 0 ]
	for m in $MODES; do
		jar="$BATS_TEST_TMPDIR/jar-$m"
		"$CRAWL" --mode=$m -q --format=jsonl --cookie-jar "$jar" "$FIXTURE/set-cookie/k/v" "$FIXTURE/delay/1000/$m" \
			>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
		pid=$!
		wait_until 10 requested "$FIXTURE" "/delay/1000/$m"
		mkdir "$jar"
		rc=0; wait $pid || rc=$?
		echo "$m: $rc: $(cat "$BATS_TEST_TMPDIR/err")"
		[ "$rc" -eq 23 ]
		[ "$(cat "$BATS_TEST_TMPDIR/err")" = "crawl: --cookie-jar $jar: Is a directory" ]
		[ -z "$(ls -A "$jar")" ]
	done
}
