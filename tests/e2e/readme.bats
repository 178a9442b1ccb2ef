#!/usr/bin/env bats
# README.md's examples, run as they are written: the block under the
# "tests/e2e/readme.bats runs this block" marker, README's jq example, and
# docs/crawling.md's cinema example, with build/ standing for the build
# under test.

load helpers

# sh_block PATTERN [FILE]: the ```sh block of FILE (README.md) that follows
# the first line matching PATTERN (the marker), or that contains it.
sh_block() {
	awk -v pat="$1" '
		$0 ~ pat && !inblock { armed = 1 }
		/^```sh$/ { inblock = 1; buf = ""; next }
		/^```$/ && inblock { inblock = 0; if (armed || hit) { printf "%s", buf; exit } next }
		inblock { buf = buf $0 "\n"; if ($0 ~ pat) hit = 1 }
	' "$BATS_TEST_DIRNAME/../../${2:-README.md}"
}

# bats test_tags=models
@test "README's usage examples run as written" {
	usage=$(sh_block 'tests/e2e/readme.bats runs this block')
	jqex=$(sh_block "jq -r 'select")
	cinema=$(sh_block 'showing-soon' docs/crawling.md)
	[ -n "$usage" ] && [ -n "$jqex" ] && [ -n "$cinema" ]
	cd "$BATS_TEST_TMPDIR"
	ln -s "$BATS_TEST_DIRNAME/../../testdata" testdata
	# The cinema example runs while the server of the first block is up.
	script=$(printf '%s\n' "$usage" | sed '/^kill %1$/d'; printf '%s\n%s\nkill %%1\n' "$jqex" "$cinema")
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
	# The CSV file: a header and the eight rows.
	[ "$(head -1 rows.csv)" = "url,source,line,depth,final_url,status,length,wire_bytes,redirects,attempts,worker,start_s,time_dns_s,time_connect_s,time_tls_s,time_ttfb_s,time_total_s,links,fail,error,extract,parent,digest,duplicate_of,not_modified" ]
	[ "$(wc -l <rows.csv)" -eq 9 ]
	# The jq example: the failed rows' source, line and class.
	grep -qx "$(printf 'list.txt\t8\ttimeout')" <<<"$output"
	# The cinema example.
	grep -q "^Length:   454   URL: http://127.0.0.1:[0-9]*/site/cinema/film/1.html name=The Lighthouse Keeper's Daughter date=2025-07-04 poster=/site/cinema/posters/1.jpg$" <<<"$output"
	# The server is gone (another run of these examples may have one of its
	# own: only a server started in this test's directory counts).
	for pid in $(pgrep -f -- "--port-file port.txt"); do
		[ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" != "$(pwd -P)" ]
	done
}

@test "every entry at the repository's root is one ARCHITECTURE.md's Folders names" {
	top="$BATS_TEST_DIRNAME/../.."
	# A clone holds what git tracks; anything else at the root (build/, a
	# stray file) is not the project's.
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		entries=$(git -C "$top" ls-files | cut -d/ -f1 | sort -u)
	else
		entries=$(cd "$top" && ls -A | grep -vx '\.git\|build' | sort)
	fi
	named=$(sed -n '/^## Folders/,$p' "$top/ARCHITECTURE.md" | sed -n '/^```$/,/^```$/p' |
		awk '{ sub(/\/.*/, "", $1); print $1 }' | sort -u)
	unnamed=$(comm -23 <(echo "$entries") <(echo "$named"))
	echo "not named in ARCHITECTURE.md: $unnamed"
	[ -z "$unnamed" ]
	[ "$(wc -l <<<"$entries")" -ge 10 ]
}

@test "README's column table names the output's columns, in the CSV header's order" {
	printf 'not a url\n' >"$BATS_TEST_TMPDIR/l"
	header=$("$CRAWL" --format=csv "$BATS_TEST_TMPDIR/l" 2>/dev/null | head -1 | tr ',' ' ')
	table=$(sed -n '/^| column | type | meaning/,/^$/p' "$BATS_TEST_DIRNAME/../../README.md" |
		awk -F'|' 'NR > 2 { print $2 }' | grep -o '`[a-z_]*`' | tr -d '`' | paste -sd' ')
	echo "header: $header"
	echo "README: $table"
	[ "$(wc -w <<<"$header")" -ge 23 ]
	[ "$table" = "$header" ]
}
