#!/usr/bin/env bats
# Conditional requests: --state's --recrawl (a finished crawl's next pass,
# each page asked for with the validators the store kept of it, a 304 a
# row of its own with the page's links from the last pass admitted again),
# --recrawl-older, and for a list without a store --validators FILE and
# --if-modified-since DATE. The fixture's /etag pages answer ETag and
# Last-Modified, a 304 to a conditional request that matches, and change
# with /etag-bump/PATH. (--frontier's recrawl: frontier.bats.)

load helpers

setup() {
	fixture_up
	D=$BATS_TEST_TMPDIR
}

# The site: /etag-graph/7/2/, pages 0 to 6, within depth 2; page I links
# to 2I+1 and 2I+2. A bumped page links to page 7+I as well. Body
# lengths: a page with two children 208 bytes, a leaf 118; page 2 bumped
# (three links) 251.
SITE=/etag-graph/7/2
site() { echo "$PFIX$SITE/0"; }

# crawl_state ARGS...: the crawl every pass of a test repeats.
crawl_state() {
	"$CRAWL" --depth 3 --format=jsonl --no-progress --state "$D/s.db" -o "$D/out.jsonl" "$@" \
		${LIST:-$(site)}
}

# pass K: "PAGE STATUS LENGTH NOT_MODIFIED" for each row of the K-th pass
# in -o (each pass ends with its summary line), sorted by page.
pass() {
	jq -r --arg base "$PFIX$SITE/" 'if .summary then "--" else
		"\(.url | ltrimstr($base)) \(.status) \(.length) \(.not_modified)" end' "$D/out.jsonl" |
		awk -v k="$1" '$0 == "--" { n++; next } n == k - 1' | sort -n
}

# count PATH: requests the fixture saw for PATH.
count() { curl -s "$PFIX/stats?path=$1" | jq -r .count; }

# bats test_tags=models
@test "a recrawl asks for every page with its validators: 304 rows for the unchanged, 200 for the changed and the page it now links to, the page set whole, both passes in -o, in every model" {
	for m in $MODES; do
		start_private_fixture
		rm -f "$D"/s.db* "$D/out.jsonl"
		run crawl_state --mode=$m
		[ "$status" -eq 0 ]
		diff <(pass 1) - <<-EOF
			0 200 208 false
			1 200 208 false
			2 200 208 false
			3 200 118 false
			4 200 118 false
			5 200 118 false
			6 200 118 false
		EOF
		curl -s "$PFIX/etag-bump$SITE/2" >/dev/null
		run crawl_state --mode=$m --recrawl
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[[ "$output" == "crawl: --state $D/s.db: recrawl, pass 2: 1 listed URL again, each page asked for with its validators ($D/out.jsonl holds "*" bytes of the passes before)" ]]
		# Pages 3 and 4 are reached only through page 1, which answered
		# 304: its links came from the store.
		diff <(pass 2) - <<-EOF
			0 304 null true
			1 304 null true
			2 200 251 false
			3 304 null true
			4 304 null true
			5 304 null true
			6 304 null true
			9 200 118 false
		EOF
		[ "$(jq -r 'select(.status == 304) | .wire_bytes' "$D/out.jsonl" | sort -u)" = 0 ]
		# Every page twice, the new one once; robots.txt was kept.
		for i in 0 1 2 3 4 5 6; do [ "$(count $SITE/$i)" -eq 2 ]; done
		[ "$(count $SITE/9)" -eq 1 ]
		[ "$(count /robots.txt)" -eq 1 ]
		# Finished again: a third run without --recrawl does nothing.
		before=$(stat_of "$PFIX" requests)
		run crawl_state --mode=$m
		[ "$status" -eq 0 ]
		[ "$output" = "crawl: --state $D/s.db: this crawl is finished (8 pages fetched); nothing to do ($D/out.jsonl holds $(stat -c %s "$D/out.jsonl") bytes of its rows)" ]
		[ "$(stat_of "$PFIX" requests)" -eq "$before" ]
		stop_private_fixture
	done
}

@test "a third pass sends the validators the second one got: only the page bumped again is fetched whole" {
	start_private_fixture
	crawl_state
	curl -s "$PFIX/etag-bump$SITE/2" >/dev/null
	crawl_state --recrawl
	curl -s "$PFIX/etag-bump$SITE/4" >/dev/null
	run crawl_state --recrawl
	[ "$status" -eq 0 ]
	[[ "$output" == *"recrawl, pass 3: "* ]]
	diff <(pass 3) - <<-EOF
		0 304 null true
		1 304 null true
		2 304 null true
		3 304 null true
		4 200 162 false
		5 304 null true
		6 304 null true
		9 304 null true
		11 200 120 false
	EOF
}

@test "--recrawl-older skips the pages fetched within SEC of the pass: no request, no row, their links followed all the same; a page that failed is always asked for" {
	start_private_fixture
	crawl_state
	before=$(stat_of "$PFIX" requests)
	run crawl_state --recrawl --recrawl-older 3600
	[ "$status" -eq 0 ]
	# Every page was fetched a moment ago: none is asked for, and the
	# pass reached each of them through the links the store kept.
	[ "$(stat_of "$PFIX" requests)" -eq "$before" ]
	[ "$(pass 2 | wc -l)" -eq 0 ]
	[ "$(jq -r 'select(.summary) | .urls' "$D/out.jsonl" | tail -1)" -eq 0 ]
	# A list: what answered an error keeps nothing in the store.
	rm -f "$D"/s.db* "$D/out.jsonl"
	LIST="$PFIX/etag/a $PFIX/bytes/3 $PFIX/status/404"
	run crawl_state --depth 0
	[ "$status" -eq 0 ]
	run crawl_state --depth 0 --recrawl --recrawl-older 3600
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.url) | "\(.url) \(.status)"' "$D/out.jsonl" | tail -n +4)" = "$PFIX/status/404 404" ]
	[ "$(count /etag/a)" -eq 1 ]
	[ "$(count /bytes/3)" -eq 1 ]
	[ "$(count /status/404)" -eq 2 ]
}

@test "a recrawl killed mid-pass is continued by the same command: each page of the pass once" {
	start_private_fixture
	# exec: a kill of the background run reaches crawl itself.
	big() { exec "$CRAWL" --depth 5 --delay 2 -c 4 --format=jsonl --no-progress \
		--state "$D/s.db" -o "$D/out.jsonl" "$@" "$PFIX/etag-graph/600/4/0"; }
	run big
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.url) | .url' "$D/out.jsonl" | wc -l)" -eq 600 ]
	before=$(wc -l <"$D/out.jsonl")
	(big --recrawl) 2>"$D/err" &
	pid=$!
	wait_until 60 eval "has_lines '$D/out.jsonl' $((before + 40)) || ! kill -0 $pid 2>/dev/null"
	kill -KILL $pid 2>/dev/null || true
	wait $pid || true
	run big --recrawl
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "crawl: --state $D/s.db: continuing (pass 2, "*" pages fetched before; "* ]]
	# Pass 2's rows: every page once, each a 304.
	second=$(jq -r 'select(.url) | "\(.url) \(.status)"' "$D/out.jsonl" | tail -n +601)
	[ "$(sort <<<"$second" | uniq -d | wc -l)" -eq 0 ]
	[ "$(wc -l <<<"$second")" -eq 600 ]
	[ "$(cut -d' ' -f2 <<<"$second" | sort -u)" = 304 ]
}

@test "--recrawl of a crawl not yet finished continues it; of a new one, starts it" {
	start_private_fixture
	run crawl_state --recrawl
	[ "$status" -eq 0 ]
	[ "$(pass 1 | wc -l)" -eq 7 ]
	[ "$(pass 1 | awk '{ print $2 }' | sort -u)" = 200 ]
}

# bats test_tags=models
@test "--validators FILE: written after the run, ETags as sent; the next run sends them, 304 rows keep them, a changed page's replace them, in every model" {
	for m in $MODES; do
		rm -f "$D/v.txt"
		start_private_fixture
		urls=("$PFIX/etag/a" "$PFIX/etag/b" "$PFIX/bytes/5")
		run "$CRAWL" --mode=$m --format=jsonl --validators "$D/v.txt" "${urls[@]}"
		[ "$status" -eq 0 ]
		diff "$D/v.txt" - <<-EOF
			# crawl --validators: URL ETAG LAST-MODIFIED, '-' for a validator there is none of
			$PFIX/etag/a "a-0" Mon, 01 Jan 2024 00:00:00 GMT
			$PFIX/etag/b "b-0" Mon, 01 Jan 2024 00:00:00 GMT
		EOF
		curl -s "$PFIX/etag-bump/etag/b" >/dev/null
		run "$CRAWL" --mode=$m --format=jsonl --validators "$D/v.txt" "${urls[@]}"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | "\(.url) \(.status) \(.length) \(.not_modified)"' <<<"$output" | sort)" = "$(printf '%s\n' "$PFIX/bytes/5 200 5 false" "$PFIX/etag/a 304 null true" "$PFIX/etag/b 200 93 false")" ]
		# A URL the file did not have goes in its place: lines by URL.
		run "$CRAWL" --mode=$m --format=jsonl --validators "$D/v.txt" "$PFIX/etag/0" "${urls[@]}"
		[ "$(jq -r 'select(.url) | .status' <<<"$output" | sort | tr '\n' ' ')" = "200 200 304 304 " ]
		diff "$D/v.txt" - <<-EOF
			# crawl --validators: URL ETAG LAST-MODIFIED, '-' for a validator there is none of
			$PFIX/etag/0 "0-0" Mon, 01 Jan 2024 00:00:00 GMT
			$PFIX/etag/a "a-0" Mon, 01 Jan 2024 00:00:00 GMT
			$PFIX/etag/b "b-1" Mon, 01 Jan 2024 01:00:00 GMT
		EOF
		# The requests carried them.
		run "$CRAWL" --format=jsonl --validators "$D/v.txt" "$PFIX/etag/a"
		[ "$(jq -r 'select(.url) | .status' <<<"$output")" = 304 ]
		[ -z "$(ls "$D" | grep 'v.txt.crawl-')" ]
		stop_private_fixture
	done
}

@test "--validators: a line that cannot be read is named and left out, the rest used; a file that cannot be written exits 23" {
	cat >"$D/v.txt" <<-EOF
		# a comment, and a blank line

		$FIXTURE/etag/a "a-0" -
		$FIXTURE/etag/b b-0 -
		$FIXTURE/etag/c - yesterday
		$FIXTURE/etag/d "d-0"
		ftp://example/ "x" -
		$FIXTURE/etag/e - Mon, 01 Jan 2024 00:00:00 GMT
	EOF
	run "$CRAWL" --format=jsonl --validators "$D/v.txt" "$FIXTURE/etag/a" "$FIXTURE/etag/b" \
		"$FIXTURE/etag/e"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qxF "crawl: --validators $D/v.txt:4: ETag b-0 is not an entity tag (\"...\", or W/\"...\" for a weak one); line left out" <<<"$output"
	grep -qxF "crawl: --validators $D/v.txt:5: Last-Modified 'yesterday' is not an HTTP date; line left out" <<<"$output"
	grep -qxF "crawl: --validators $D/v.txt:6: expected URL ETAG LAST-MODIFIED, '-' for a validator there is none of; line left out" <<<"$output"
	grep -qxF "crawl: --validators $D/v.txt:7: 'ftp://example/' is not an http or https URL; line left out" <<<"$output"
	[ "$(grep -c 'line left out' <<<"$output")" -eq 4 ]
	[ "$(grep '^{"url"' <<<"$output" | jq -r '"\(.url) \(.status)"' | sort)" = "$(printf '%s\n' "$FIXTURE/etag/a 304" "$FIXTURE/etag/b 200" "$FIXTURE/etag/e 304")" ]
	# A directory where the file goes: refused before the run.
	mkdir "$D/dir"
	run "$CRAWL" --validators "$D/dir" "$FIXTURE/etag/a"
	[ "$status" -eq 2 ]
	[[ "$output" == "crawl: --validators: cannot write '$D/dir': Is a directory"* ]]
	# Its folder gone during the run (a full disk would do as well): the
	# file cannot be written at the end, which is exit 23.
	mkdir "$D/gone"
	"$CRAWL" --validators "$D/gone/v.txt" "$FIXTURE/delay/1000/a" >"$D/o" 2>"$D/e" &
	pid=$!
	wait_until 10 requested "$FIXTURE" /delay/1000/a
	rmdir "$D/gone"
	rc=0; wait $pid || rc=$?
	cat "$D/e"
	[ "$rc" -eq 23 ]
	grep -qxF "crawl: --validators $D/gone/v.txt: No such file or directory" "$D/e"
}

# bats test_tags=models
@test "--if-modified-since DATE: an HTTP date or an ISO 8601 one; 304 for the pages not changed since, in every model; a bad date is named" {
	curl -s "$FIXTURE/etag-bump/etag/b" >/dev/null
	# /etag/a's Last-Modified is Mon, 01 Jan 2024 00:00:00 GMT, /etag/b's
	# an hour later.
	for m in $MODES; do
		for date in "Mon, 01 Jan 2024 00:30:00 GMT" 2024-01-01T00:30:00Z "2024-01-01 01:30+01:00"; do
			run "$CRAWL" --mode=$m --format=jsonl --if-modified-since "$date" "$FIXTURE/etag/a" \
				"$FIXTURE/etag/b"
			echo "$m $date: $output"
			[ "$status" -eq 0 ]
			[ "$(jq -r 'select(.url) | "\(.url) \(.status) \(.not_modified)"' <<<"$output" | sort)" = "$(printf '%s\n' "$FIXTURE/etag/a 304 true" "$FIXTURE/etag/b 200 false")" ]
		done
	done
	run "$CRAWL" --format=jsonl --if-modified-since 2024-01-02 "$FIXTURE/etag/a" "$FIXTURE/etag/b"
	[ "$(jq -r 'select(.url) | .status' <<<"$output" | sort -u)" = 304 ]
	for bad in 2024-13-01 2024-02-30 yesterday "Jan 2024" 1704067200; do
		run "$CRAWL" --if-modified-since "$bad" "$FIXTURE/etag/a"
		[ "$status" -eq 2 ]
		[ "${lines[0]}" = "crawl: --if-modified-since: expected an HTTP date (Sun, 06 Nov 1994 08:49:37 GMT) or an ISO 8601 date (1994-11-06, 1994-11-06T08:49:37Z), got '$bad'" ]
	done
}

@test "a 304 goes into --warc as a server-not-modified revisit record the checker accepts" {
	run "$CRAWL" --format=jsonl --if-modified-since 2024-01-02 --warc "$D/a.warc.gz" \
		"$FIXTURE/etag/a" "$FIXTURE/bytes/3"
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.url) | .status' <<<"$output" | sort | tr '\n' ' ')" = "200 304 " ]
	run python3 "$BATS_TEST_DIRNAME/../tools/warc-check.py" check "$D/a.warc.gz"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx "$FIXTURE/etag/a 304 - revisit:not-modified -" <<<"$output"
	grep -qx "$FIXTURE/bytes/3 200 sha1:.*" <<<"$output"
}

# bats test_tags=models
@test "conditional requests' usage errors" {
	run "$CRAWL" --recrawl "$FIXTURE/etag/a"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --recrawl: needs --state FILE or --frontier URL, whose store keeps each page's validators and links" ]
	run "$CRAWL" --recrawl-older 60 --state "$D/s.db" --format=jsonl -o "$D/o" "$FIXTURE/etag/a"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --recrawl-older: needs --recrawl, whose pass it limits" ]
	run "$CRAWL" --recrawl --recrawl-older 0 --state "$D/s.db" --format=jsonl -o "$D/o" "$FIXTURE/etag/a"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --recrawl-older: expected a number of seconds above 0, got '0'" ]
	run "$CRAWL" --validators "$D/v.txt" --state "$D/s.db" --format=jsonl -o "$D/o" "$FIXTURE/etag/a"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --validators: not with --state, whose store keeps each page's validators (--recrawl)" ]
	run "$CRAWL" --if-modified-since 2024-01-01 --depth 1 "$FIXTURE/etag/a"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --if-modified-since: for a list, not with --depth (a page that answers 304 gives no links to follow; --state and --recrawl keep them)" ]
	run "$CRAWL" --validators "$D/v.txt" --mode=all "$FIXTURE/etag/a"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --validators: one model at a time (with --mode=all each model would find the validators the one before it wrote)" ]
	[ ! -e "$D/s.db" ]
	[ ! -e "$D/v.txt" ]
}
