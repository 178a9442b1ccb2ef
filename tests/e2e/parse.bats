#!/usr/bin/env bats
# Parse threads (--parse-threads): coro and procs hand the pages they fetch
# to threads that parse them while the loops fetch. What a crawl finds, and
# the rows it writes, must not depend on where pages are parsed.

load helpers

# A list of listed URLs: three link graphs of different shapes, a page of
# 300 links, a compressed page, failures and a line that is no URL. Pages
# of 8 KiB and more go to the parse threads (the first graph's pages with
# children, 250 links each, and the page of links); the smaller ones are
# parsed on the loop.
parse_list() {
	# A sanitizer's build crawls a smaller graph: nine crawls of it fit the
	# test's time.
	if sanitized; then echo "$PFIX/graph/600/250/"; else echo "$PFIX/graph/2000/250/"; fi
	echo "$PFIX/status/404"
	echo "$PFIX/graph/120/2/"
	echo "not a url"
	echo "$PFIX/wide/300"
	echo "$PFIX/gzip/5000"
	echo "$PFIX/graph/50/7/"
	echo "http://127.0.0.1:1/refused"
}

# The JSON lines of the output (run mixes in stderr's warnings).
json() { grep '^{' <<<"$output"; }

# The rows' stable fields, in output order.
fields() { json | jq -c 'select(.url) | [.url, .line, .depth, .status, .length, .links, .fail]'; }

# The summary's counts.
counts() { json | jq -c 'select(.summary) | [.urls, .ok, .failed, .queued_left]'; }

@test "parse threads keep the pages, depths, links, row count and input order of parsing on the loop" {
	start_private_fixture
	parse_list >"$BATS_TEST_TMPDIR/list"
	run "$CRAWL" --mode=coro --parse-threads 0 --depth 3 --no-robots --format=jsonl "$BATS_TEST_TMPDIR/list"
	[ "$status" -eq 1 ]
	ref=$(fields | sort)
	ref_counts=$(counts)
	listed=$(jq -c 'select(.url) | select(.depth == 0) | .line' <<<"$(json)" | tr '\n' ' ')
	[ "$listed" = "1 2 3 4 5 6 7 8 " ]
	n=$(fields | wc -l)
	[ "$n" -gt 300 ]
	[ "$ref_counts" = "[$n,$((n - 2)),2,0]" ]
	runs=("coro --parse-threads 1" "coro --parse-threads 3" "coro --parse-threads 1 -c 2"
	      "coro --loops 2 --parse-threads 0" "coro --loops 2 --parse-threads 2"
	      "coro --loops 2 --parse-threads 1 -c 3" "coro")
	looped procs && runs+=("procs --procs 2 --parse-threads 1" "procs --procs 2")
	for r in "${runs[@]}"; do
		run "$CRAWL" --mode=$r --depth 3 --no-robots --format=jsonl "$BATS_TEST_TMPDIR/list"
		echo "$r: status $status"
		[ "$status" -eq 1 ]
		[ "$(fields | sort)" = "$ref" ]
		[ "$(fields | wc -l)" -eq "$n" ]
		[ "$(counts)" = "$ref_counts" ]
		[ "$(jq -c 'select(.url) | select(.depth == 0) | .line' <<<"$(json)" | tr '\n' ' ')" = "$listed" ]
	done
}

@test "--extract and --follow values are the same from parse threads, XPath rules through libxml2" {
	start_private_fixture
	for pt in 0 1 2; do
		for m in "coro" "coro --loops 2"; do
			run "$CRAWL" --mode=$m --parse-threads $pt --depth 1 --no-robots --format=jsonl \
				--follow '//a[contains(@href, "/2")]/@href' --extract 'title=//title' "$PFIX/graph/600/200/"
			[ "$status" -eq 0 ]
			got=$(jq -c 'select(.url) | [.url, .depth, .links, .extract]' <<<"$(json)" | sort)
			[ -n "${want:-}" ] || want=$got
			echo "$m --parse-threads $pt"
			[ "$got" = "$want" ]
		done
	done
	[ "$(jq -c 'select(.url)' <<<"$(json)" | wc -l)" -gt 1 ]
	[ "$(jq -r 'select(.url) | .extract.title[0]' <<<"$(json)" | sort -u)" != null ]
}

@test "a page bigger than the bodies kept for parse threads is parsed as it arrives, all its links found" {
	start_private_fixture
	# About 24 MB of HTML: past the 16 MiB kept for the parse threads. It
	# takes 12 s under ThreadSanitizer on a loaded machine: the timeout is
	# not what is tested.
	for pt in 0 1; do
		run "$CRAWL" --mode=coro --parse-threads $pt --depth 1 --max-pages 1 --no-robots --timeout 300 --format=jsonl \
			"$PFIX/wide/700000" "$PFIX/wide/20"
		jq -c 'select(.url) | [.url, .links, .length, .fail, .error]' <<<"$(json)"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | select(.url | endswith("/wide/700000")) | .links' <<<"$(json)")" -eq 10000 ]
		[ "$(jq -r 'select(.url) | select(.url | endswith("/wide/20")) | .links' <<<"$(json)")" -eq 20 ]
		[ "$(jq -r 'select(.url) | select(.url | endswith("/wide/700000")) | .length' <<<"$(json)")" -gt 16777216 ]
	done
}

@test "the summary's threads count the parse threads, started only when pages are parsed" {
	start_private_fixture
	thr() { json | jq -r 'select(.summary) | .threads'; }
	run "$CRAWL" --mode=coro --parse-threads 3 --depth 1 --no-robots --format=jsonl "$PFIX/graph/20/3/"
	[ "$status" -eq 0 ]
	[ "$(thr)" -eq 4 ]
	run "$CRAWL" --mode=coro --loops 2 --parse-threads 2 --depth 1 --no-robots --format=jsonl "$PFIX/graph/20/3/"
	[ "$(thr)" -eq 4 ]
	run "$CRAWL" --mode=coro --parse-threads 0 --depth 1 --no-robots --format=jsonl "$PFIX/graph/20/3/"
	[ "$(thr)" -eq 1 ]
	# Nothing to parse: no parse thread, and the flag is said to be ignored.
	run "$CRAWL" --mode=coro --parse-threads 3 --format=jsonl "$PFIX/graph/20/3/"
	[ "$status" -eq 0 ]
	[ "$(thr)" -eq 1 ]
	grep -q '^crawl: warning: --parse-threads is ignored here: ' <<<"$output"
	run "$CRAWL" --mode=thread --parse-threads 1 --depth 1 --no-robots "$PFIX/graph/20/3/"
	[ "$status" -eq 0 ]
	grep -q '^crawl: warning: --parse-threads is ignored here: it sets the parse threads of coro and procs' <<<"$output"
}

@test "--parse-threads takes 0 to 256" {
	for bad in -1 257 x ""; do
		run "$CRAWL" --parse-threads="$bad" "$FIXTURE/bytes/1"
		echo "'$bad': $status $output"
		[ "$status" -eq 2 ]
		grep -q -- '--parse-threads' <<<"$output"
	done
	run "$CRAWL" --parse-threads=256 --depth 1 --no-robots "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
}

@test "with parse threads, --deadline, Ctrl-C and a write error end a link-following crawl as before" {
	start_private_fixture
	for m in "coro --parse-threads 1" "coro --loops 2 --parse-threads 2"; do
		run "$CRAWL" --mode=$m --depth 50 --no-robots --deadline "$(soon 0.3)" --format=jsonl "$PFIX/graph/1000000/10/"
		echo "$m deadline: $status"
		# 1 when transfers were cut short, 0 when those in flight ended first.
		[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
		[ "$(json | jq -r 'select(.summary) | .queued_left')" -gt 0 ]
		[ "$(jq -r 'select(.url) | .url' <<<"$(json)" | sort | uniq -d | wc -l)" -eq 0 ]
		[ "$(jq -r 'select(.url) | select(.depth == 0) | .url' <<<"$(json)")" = "$PFIX/graph/1000000/10/" ]
		[ "$(jq -r 'select(.summary) | .urls' <<<"$(json)")" -eq "$(jq -r 'select(.url) | .url' <<<"$(json)" | wc -l)" ]

		out="$BATS_TEST_TMPDIR/int.jsonl"
		"$CRAWL" --mode=$m --depth 50 --no-robots --format=jsonl "$PFIX/graph/1000000/10/" >"$out" 2>&1 &
		pid=$!
		wait_until 10 eval '[ "$(grep -c "\"url\"" "$out")" -gt 1 ]'
		kill -INT $pid
		rc=0; wait $pid || rc=$?
		echo "$m Ctrl-C: $rc"
		[ "$rc" -eq 130 ]
		[ "$(grep -c '"url"' "$out")" -gt 1 ]
		[ "$(jq -r 'select(.url) | .url' "$out" | sort | uniq -d | wc -l)" -eq 0 ]
		[ "$(jq -r 'select(.summary) | .urls' "$out")" -eq "$(jq -r 'select(.url) | .url' "$out" | wc -l)" ]

		run "$CRAWL" --mode=$m --depth 50 --no-robots --format=jsonl -o /dev/full "$PFIX/graph/1000000/10/"
		echo "$m /dev/full: $status $output"
		[ "$status" -eq 23 ]
		grep -q 'writing output' <<<"$output"
	done
}
