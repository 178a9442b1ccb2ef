#!/usr/bin/env bats
# README.md's examples, run as they are written: the block under the
# "tests/e2e/readme.bats runs this block" marker, and the cinema example,
# with build/ standing for the build under test.

load helpers

# sh_block PATTERN: the ```sh block of README.md that follows the first line
# matching PATTERN (the marker), or that contains it.
sh_block() {
	awk -v pat="$1" '
		$0 ~ pat && !inblock { armed = 1 }
		/^```sh$/ { inblock = 1; buf = ""; next }
		/^```$/ && inblock { inblock = 0; if (armed || hit) { printf "%s", buf; exit } next }
		inblock { buf = buf $0 "\n"; if ($0 ~ pat) hit = 1 }
	' "$BATS_TEST_DIRNAME/../../README.md"
}

@test "README's usage examples run as written" {
	usage=$(sh_block 'tests/e2e/readme.bats runs this block')
	cinema=$(sh_block 'showing-soon')
	[ -n "$usage" ] && [ -n "$cinema" ]
	cd "$BATS_TEST_TMPDIR"
	ln -s "$BATS_TEST_DIRNAME/../../testdata" testdata
	# The cinema example runs while the server of the first block is up.
	script=$(printf '%s\n' "$usage" | sed '/^kill %1$/d'; printf '%s\nkill %%1\n' "$cinema")
	script=${script//build\/crawl/$CRAWL}
	script=${script//build\/fixture-server/$FIXTURE_SERVER}
	run timeout 120 bash -c "$script" 2>&1
	echo "$output" | head -80
	# The first crawl.
	grep -q '^Length:  1024   URL: http://127.0.0.1:[0-9]*/bytes/1024$' <<<"$output"
	grep -q '^Length:  error  URL: http://127.0.0.1:1/ (Failed to connect' <<<"$output"
	# The list: eight URLs, in the pool's table, as JSON lines, and per model.
	[ "$(grep -c '^Length: .*URL: http://127.0.0.1:[0-9]*/delay/300/a$' <<<"$output")" -eq 1 ]
	[ "$(grep -c '^{"url":' <<<"$output")" -eq 8 ]
	grep -q '"url":"http://127.0.0.1:[0-9]*/hang".*"fail":"timeout"' <<<"$output"
	all=$("$CRAWL" --list-modes | paste -sd'|')
	[ "$(grep -Ec "^($all) +8 +7 +1 " <<<"$output")" -eq "$NALL" ]
	# The cinema example.
	grep -q "^Length:   454   URL: http://127.0.0.1:[0-9]*/site/cinema/film/1.html name=The Lighthouse Keeper's Daughter date=2025-07-04 poster=/site/cinema/posters/1.jpg$" <<<"$output"
	# The server is gone.
	! kill -0 "$(pgrep -f -- "--port-file port.txt" | head -1)" 2>/dev/null
}
