#!/usr/bin/env bats
# End-to-end tests of the crawl command against the fixture server, run for
# every model.

load helpers
bats_require_minimum_version 1.5.0   # run --separate-stderr


# rows: the article rows of the last run's output, in order.
rows() { grep '^Length:' <<<"$output"; }

# bats test_tags=models
@test "exact body lengths for /bytes/N in every model" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m "$FIXTURE/bytes/0" "$FIXTURE/bytes/1" "$FIXTURE/bytes/1024" "$FIXTURE/bytes/100000"
		echo "mode $m: $output"
		[ "$status" -eq 0 ]
		[ "$(rows | sed -n 1p)" = "Length:    0    URL: $FIXTURE/bytes/0" ]
		[ "$(rows | sed -n 2p)" = "Length:    1    URL: $FIXTURE/bytes/1" ]
		[ "$(rows | sed -n 3p)" = "Length:  1024   URL: $FIXTURE/bytes/1024" ]
		[ "$(rows | sed -n 4p)" = "Length: 100000  URL: $FIXTURE/bytes/100000" ]
		[ "$(rows | wc -l)" -eq 4 ]
	done
}

# bats test_tags=models
@test "output starts with the Use time line and ends with the mode summary" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m "$FIXTURE/bytes/10"
		[ "$status" -eq 0 ]
		[[ "${lines[0]}" =~ ^Use\ time:\ [0-9]+\.[0-9][0-9]s$ ]]
		[[ "${lines[2]}" =~ ^Mode:\ $m\;\ 1\ URLs,\ 1\ ok,\ 0\ failed ]]
	done
}

# bats test_tags=models
@test "chunked and gzip bodies are measured decoded" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m "$FIXTURE/chunked/5000" "$FIXTURE/gzip/5000"
		[ "$status" -eq 0 ]
		[ "$(rows | sed -n 1p)" = "Length:  5000   URL: $FIXTURE/chunked/5000" ]
		[ "$(rows | sed -n 2p)" = "Length:  5000   URL: $FIXTURE/gzip/5000" ]
	done
}

# bats test_tags=models
@test "one row per input line, in input order, bad lines included" {
	list="$BATS_TEST_TMPDIR/list.txt"
	{
		echo "# a comment"
		for i in 5 4 3 2 1; do echo "$FIXTURE/delay/$((i * 40))/$i"; done
		echo "not a url"
		echo ""
		echo "ftp://127.0.0.1/x"
		echo "http://127.0.0.1:1/refused"
	} >"$list"
	for m in $MODES; do
		run "$CRAWL" --mode=$m "$list"
		echo "mode $m: $output"
		[ "$status" -eq 1 ]
		[ "$(rows | wc -l)" -eq 8 ]
		for i in 5 4 3 2 1; do
			[ "$(rows | sed -n "$((6 - i))p" | awk '{print $4}')" = "$FIXTURE/delay/$((i * 40))/$i" ]
		done
		rows | sed -n 6p | grep -q "^Length:  error  URL: not a url (not an absolute http or https URL"
		rows | sed -n 7p | grep -q "^Length:  error  URL: ftp://127.0.0.1/x (unsupported scheme"
		rows | sed -n 8p | grep -q "^Length:  error  URL: http://127.0.0.1:1/refused (.*connect"
		grep -q "list.txt:7: not an absolute http or https URL" <<<"$output"
		grep -q "list.txt:9: unsupported scheme" <<<"$output"
	done
}

# bats test_tags=models
@test "completion order lists the fastest first, in every concurrent model" {
	for m in $CONCURRENT_MODES; do
		run "$CRAWL" --mode=$m --order=completion "$FIXTURE/delay/600/a" "$FIXTURE/delay/300/b" "$FIXTURE/delay/10/c"
		[ "$status" -eq 0 ]
		[ "$(rows | awk '{print $NF}' | tr '\n' ' ')" = "$FIXTURE/delay/10/c $FIXTURE/delay/300/b $FIXTURE/delay/600/a " ]
	done
}

# bats test_tags=models
@test "standard input is read with -" {
	for m in $MODES; do
		run bash -c "printf '%s\n' '$FIXTURE/bytes/7' 'bad' | '$CRAWL' --mode=$m -"
		[ "$status" -eq 1 ]
		[ "$(rows | sed -n 1p)" = "Length:    7    URL: $FIXTURE/bytes/7" ]
		grep -q '^-:2: not an absolute http or https URL' <<<"$output"
	done
}

# bats test_tags=models
@test "HTTP error statuses are results, and failures with --fail" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/status/404" "$FIXTURE/status/500"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .status' <<<"$output" | tr '\n' ' ')" = "404 500 " ]
		[ "$(jq -r 'select(.url) | .error' <<<"$output" | sort -u)" = "null" ]
		run "$CRAWL" --mode=$m --fail --format=jsonl "$FIXTURE/status/404" "$FIXTURE/bytes/3"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.line == 1) | .fail' <<<"$output")" = "http" ]
		[ "$(jq -r 'select(.line == 1) | .error' <<<"$output")" = "HTTP status 404" ]
		[ "$(jq -r 'select(.line == 2) | .error' <<<"$output")" = "null" ]
	done
}

# bats test_tags=models
@test "JSON lines carry every field and a summary object" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/redirect/2" "$FIXTURE/bytes/42"
		[ "$status" -eq 0 ]
		[ "$(wc -l <<<"$output")" -eq 3 ]
		for f in url source line depth final_url status length wire_bytes redirects attempts worker start_s time_dns_s time_connect_s time_tls_s time_ttfb_s time_total_s links fail error extract parent digest duplicate_of not_modified; do
			[ "$(jq -c "select(.url) | has(\"$f\")" <<<"$output" | sort -u)" = "true" ]
		done
		[ "$(jq -r 'select(.line == 1) | .redirects' <<<"$output")" = "2" ]
		[ "$(jq -r 'select(.line == 1) | .final_url' <<<"$output")" = "$FIXTURE/redirect/0" ]
		[ "$(jq -r 'select(.line == 2) | .length' <<<"$output")" = "42" ]
		[ "$(jq -r 'select(.line == 2) | .wire_bytes' <<<"$output")" = "42" ]
		[ "$(jq -r 'select(.summary) | [.mode, .urls, .ok, .failed] | join(" ")' <<<"$output")" = "$m 2 2 0" ]
	done
}

# bats test_tags=models
@test "CSV has a header and one row per URL" {
	printf '%s\n' "$FIXTURE/bytes/5" "bad line, with comma" >"$BATS_TEST_TMPDIR/list"
	for m in $MODES; do
		run bash -c "'$CRAWL' --mode=$m --format=csv '$BATS_TEST_TMPDIR/list' 2>/dev/null"
		[ "$status" -eq 1 ]
		[ "${lines[0]}" = "url,source,line,depth,final_url,status,length,wire_bytes,redirects,attempts,worker,start_s,time_dns_s,time_connect_s,time_tls_s,time_ttfb_s,time_total_s,links,fail,error,extract,parent,digest,duplicate_of,not_modified" ]
		[ "${#lines[@]}" -eq 3 ]
		grep -q "^$FIXTURE/bytes/5,$BATS_TEST_TMPDIR/list,1,0,$FIXTURE/bytes/5,200,5,5,0,1,[0-9]*,[0-9.]*,[0-9.]*,[0-9.]*,,[0-9.]*,[0-9.]*,,,,,,sha1:[A-Z2-7]\{32\},,false\$" <<<"$output"
		# A line that never ran: no status, worker, start or times (empty cells).
		grep -q "^\"bad line, with comma\",$BATS_TEST_TMPDIR/list,2,0,,,0,0,0,0,,,,,,,,,input,not an absolute http or https URL (no scheme),,,,,\$" <<<"$output"
	done
}

# bats test_tags=models
@test "JSON lines and CSV agree row by row: the same columns, order and values" {
	# Every kind of row: fetched anew, over a reused connection, an HTTP
	# error, a redirect, a refused port, a line that is not a URL; two lists
	# with a line 1 each, told apart by source.
	printf '%s\n' "$FIXTURE/bytes/5" "$FIXTURE/redirect/1" "not a url" >"$BATS_TEST_TMPDIR/a"
	printf '%s\n' "$FIXTURE/status/404" "http://127.0.0.1:1/x" "$FIXTURE/bytes/5?b" >"$BATS_TEST_TMPDIR/b"
	for m in $MODES; do
		for f in jsonl csv; do
			"$CRAWL" --mode=$m -c 1 --dedupe --format=$f -o "$BATS_TEST_TMPDIR/out.$f" "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" 2>/dev/null || true
		done
		# The CSV read back as JSON: empty cells are null, numbers numbers.
		/usr/bin/python3 - "$BATS_TEST_TMPDIR/out.csv" >"$BATS_TEST_TMPDIR/csv.json" <<-'PY'
		import csv, json, sys
		def value(s):
		    if s == "":
		        return None
		    try:
		        return json.loads(s) if s[0] in "-0123456789{[" or s in ("true", "false") else s
		    except ValueError:
		        return s
		with open(sys.argv[1], newline="") as f:
		    rows = list(csv.reader(f))
		for r in rows[1:]:
		    print(json.dumps(dict(zip(rows[0], map(value, r))), separators=(",", ":"), ensure_ascii=False))
		print(json.dumps(rows[0], separators=(",", ":")))
		PY
		[ "$(tail -1 "$BATS_TEST_TMPDIR/csv.json")" = "$(head -1 "$BATS_TEST_TMPDIR/out.jsonl" | jq -c 'keys_unsorted')" ]
		[ "$(grep -c . "$BATS_TEST_TMPDIR/out.jsonl")" -eq 7 ]
		[ "$(tail -1 "$BATS_TEST_TMPDIR/out.jsonl" | jq -r .summary)" = "true" ]
		# Row by row, the same values, ignoring the timings (two runs).
		# libcurl's error text holds a timing of its own ("after 1 ms").
		norm='del(.worker, .start_s, .time_dns_s, .time_connect_s, .time_ttfb_s, .time_total_s) | .error |= (if . then sub(" after [0-9]+ ms"; "") else . end)'
		diff <(grep -v '"summary":true' "$BATS_TEST_TMPDIR/out.jsonl" | jq -c "$norm") \
			<(sed '$d' "$BATS_TEST_TMPDIR/csv.json" | jq -c "$norm")
		# ... and the same nulls where a time does not apply.
		diff <(grep -v '"summary":true' "$BATS_TEST_TMPDIR/out.jsonl" | jq -c '[.worker, .start_s, .time_dns_s, .time_connect_s, .time_ttfb_s, .time_total_s] | map(. == null)') \
			<(sed '$d' "$BATS_TEST_TMPDIR/csv.json" | jq -c '[.worker, .start_s, .time_dns_s, .time_connect_s, .time_ttfb_s, .time_total_s] | map(. == null)')
		# Sources tell the two line 1s apart; null where nothing applies.
		[ "$(jq -r 'select(.line == 1) | .source' "$BATS_TEST_TMPDIR/out.jsonl" | tr '\n' ' ')" = "$BATS_TEST_TMPDIR/a $BATS_TEST_TMPDIR/b " ]
		jq -e -s '.[2] | .status == null and .worker == null and .start_s == null and .time_total_s == null and .fail == "input"' "$BATS_TEST_TMPDIR/out.jsonl"
		jq -e -s '.[4] | .status == null and .time_ttfb_s == null and .time_total_s >= 0 and .fail == "connect"' "$BATS_TEST_TMPDIR/out.jsonl"
		jq -e -s 'map(select(.url)) | all(.time_tls_s == null and .links == null and .extract == null and .parent == null)' "$BATS_TEST_TMPDIR/out.jsonl"
		# bytes/5?b is bytes/5 again: one digest, and --dedupe names the first.
		jq -e -s --arg f "$FIXTURE/bytes/5" '.[5].digest == .[0].digest and .[5].duplicate_of == $f and .[0].duplicate_of == null and .[3].digest == null' "$BATS_TEST_TMPDIR/out.jsonl"
	done
}

@test "the summary: last in JSON lines, out of band for CSV, a CSV of its own with -q" {
	run --separate-stderr "$CRAWL" --format=csv "$FIXTURE/bytes/5"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	grep -q '^Mode: coro; 1 URLs, 1 ok, 0 failed;' <<<"$stderr"
	run --separate-stderr "$CRAWL" -q --format=csv "$FIXTURE/bytes/5" "http://127.0.0.1:1/"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "mode,urls,ok,failed,retries,queued_left,queue_dropped,wall_s,conns,reuse,concurrency,threads,robots_fetched,robots_blocked,options,p50_ms,p90_ms,p99_ms,max_ms,ttfb_p50_ms,ttfb_p90_ms,ttfb_p99_ms,ttfb_max_ms,dns_lookups,dns_p50_ms,dns_p99_ms" ]
	[ "$(cut -d, -f1-6 <<<"${lines[1]}")" = "coro,2,1,1,0,0" ]
	[ "${#lines[@]}" -eq 2 ]
	run "$CRAWL" -q --format=jsonl "$FIXTURE/bytes/5"
	[ "$(jq -c 'keys_unsorted' <<<"$output")" = '["summary","mode","urls","ok","failed","retries","queued_left","queue_dropped","wall_s","conns","reuse","concurrency","threads","robots_fetched","robots_blocked","options","p50_ms","p90_ms","p99_ms","max_ms","ttfb_p50_ms","ttfb_p90_ms","ttfb_p99_ms","ttfb_max_ms","dns_lookups","dns_p50_ms","dns_p99_ms"]' ]
}

# bats test_tags=models
@test "the summary counts the names looked up and their time, not an address nor a --resolve name, in every model" {
	local=http://localhost:$FIXTURE_PORT
	for m in $MODES; do
		run "$CRAWL" --mode=$m -c 1 -q --format=jsonl "$local/bytes/1" "$local/bytes/2" "$FIXTURE/bytes/3"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		jq -e '.dns_lookups == 1 and .dns_p50_ms > 0 and .dns_p50_ms <= .dns_p99_ms' <<<"$output"
		run "$CRAWL" --mode=$m -c 1 --resolve "localhost:$FIXTURE_PORT:127.0.0.1" -q --format=jsonl "$local/bytes/1" "$FIXTURE/bytes/3"
		[ "$(jq -c '[.dns_lookups, .dns_p50_ms, .dns_p99_ms]' <<<"$output")" = "[0,null,null]" ]
	done
	run "$CRAWL" --mode=coro "$local/bytes/1"
	[[ "${lines[-1]}" =~ \;\ 1\ connections\;\ 1\ name\ lookup\ \(p50\ [0-9.]+\ ms,\ p99\ [0-9.]+\ ms\)\;\ in\ flight ]]
	run "$CRAWL" --mode=coro "$FIXTURE/bytes/1"
	[[ "${lines[-1]}" != *lookup* ]]
}

# bats test_tags=models
@test "five 1 s delays take about 5 s sequentially and about 1 s concurrently" {
	urls=()
	for i in 1 2 3 4 5; do urls+=("$FIXTURE/delay/1000/$i"); done
	for m in $MODES; do
		run "$CRAWL" --mode=$m -q "${urls[@]}"
		[ "$status" -eq 0 ]
		t=$(sed -n 's/^Use time: \(.*\)s$/\1/p' <<<"$output")
		echo "$m $t"
		if sequential $m; then
			awk -v t="$t" 'BEGIN { exit !(t >= 4.9 && t < 7) }'
		else
			awk -v t="$t" 'BEGIN { exit !(t >= 0.95 && t < 2) }'
		fi
	done
}

# bats test_tags=models
@test "connections are reused when reuse is on and never with --no-reuse" {
	for m in $MODES; do
		start_private_fixture
		urls=()
		for i in $(seq 20); do urls+=("$PFIX/bytes/100"); done
		c=(-c 2); sequential $m && c=()         # one at a time anyway
		run "$CRAWL" --mode=$m "${c[@]}" --format=jsonl "${urls[@]}"
		[ "$status" -eq 0 ]
		accepted=$(stat_of "$PFIX" accepted)
		echo "$m reuse: accepted $accepted"
		[ "$(stat_of "$PFIX" requests)" -eq 20 ]
		[ "$accepted" -le 2 ]
		[ "$(jq -r 'select(.summary) | .reuse' <<<"$output")" = "on" ]
		[ "$(jq -r 'select(.summary) | .conns' <<<"$output")" -eq "$accepted" ]
		stop_private_fixture

		start_private_fixture
		urls=()
		for i in $(seq 20); do urls+=("$PFIX/bytes/100"); done
		run "$CRAWL" --mode=$m -c 2 --no-reuse --format=jsonl "${urls[@]}"
		[ "$status" -eq 0 ]
		[ "$(stat_of "$PFIX" accepted)" -eq 20 ]
		[ "$(jq -r 'select(.summary) | .reuse' <<<"$output")" = "off" ]
		stop_private_fixture
	done
}

# bats test_tags=models
@test "user agent and extra headers are sent" {
	# /header/NAME answers with the value of request header NAME as its body.
	for m in $MODES; do
		run "$CRAWL" --mode=$m -o "$BATS_TEST_TMPDIR/out" --format=jsonl -A "tester/1.0" -H "X-One: 1" -H "X-Two: three" \
			"$FIXTURE/header/User-Agent" "$FIXTURE/header/X-One" "$FIXTURE/header/X-Two"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		[ "$(jq -r 'select(.url) | .length' "$BATS_TEST_TMPDIR/out" | tr '\n' ' ')" = "10 1 5 " ]
		run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/header/User-Agent"
		[ "$(jq -r 'select(.url) | .length' <<<"$output")" -eq "$(printf 'crawl/%s' "$("$CRAWL" --version | awk '{print $2}')" | wc -c)" ]
	done
}

# bats test_tags=models
@test "--buffer-size sets libcurl's receive buffer; bodies come out whole" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --buffer-size 1K --format=jsonl "$FIXTURE/bytes/1000000" "$FIXTURE/gzip/300000"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .length' <<<"$output" | tr '\n' ' ')" = "1000000 300000 " ]
		jq -r 'select(.summary) | .options' <<<"$output" | grep -q ', buffer 1K, '
		run "$CRAWL" --mode=$m --buffer-size 524288 --format=jsonl "$FIXTURE/bytes/10"
		jq -r 'select(.summary) | .options' <<<"$output" | grep -q ', buffer 512K, '
		# Without it: libcurl's 16 KiB, said by saying nothing.
		run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/bytes/10"
		! jq -r 'select(.summary) | .options' <<<"$output" | grep -q 'buffer'
	done
}

# bats test_tags=models
@test "a connection that will not be reused is announced with Connection: close" {
	for m in $MODES; do
		# One URL: it is all that is in flight, so reuse is off.
		run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/header/Connection"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | "\(.status) \(.length)"' <<<"$output")" = "200 5" ]
		[ "$(jq -r 'select(.summary) | .reuse' <<<"$output")" = "off" ]
		# Reuse on (asked for, or fewer in flight than URLs): no such header.
		run "$CRAWL" --mode=$m --reuse --format=jsonl "$FIXTURE/header/Connection"
		[ "$(jq -r 'select(.url) | .status' <<<"$output")" = "404" ]
		c=(-c 1); sequential $m && c=()
		run "$CRAWL" --mode=$m "${c[@]}" --format=jsonl "$FIXTURE/header/Connection" "$FIXTURE/header/Connection"
		[ "$(jq -r 'select(.url) | .status' <<<"$output" | tr '\n' ' ')" = "404 404 " ]
		# A Connection header of the user's is sent as it is, and alone.
		run "$CRAWL" --mode=$m -H "connection: keep-alive" --format=jsonl "$FIXTURE/header/Connection"
		[ "$(jq -r 'select(.url) | "\(.status) \(.length)"' <<<"$output")" = "200 10" ]
		run "$CRAWL" --mode=$m --no-reuse -H "X-A: b" --format=jsonl "$FIXTURE/header/Connection" "$FIXTURE/header/X-A"
		[ "$(jq -r 'select(.url) | "\(.status) \(.length)"' <<<"$output" | tr '\n' ' ')" = "200 5 200 1 " ]
	done
}

# bats test_tags=models
@test "proxy variables in the environment are used as libcurl reads them" {
	for m in $MODES; do
		# Nothing listens on 127.0.0.2:1; the fixture, as the proxy, answers.
		run env http_proxy="$FIXTURE" "$CRAWL" --mode=$m --format=jsonl "http://127.0.0.2:1/bytes/5"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | "\(.status) \(.length)"' <<<"$output")" = "200 5" ]
		run env all_proxy="$FIXTURE" "$CRAWL" --mode=$m --format=jsonl "http://127.0.0.2:1/bytes/6"
		[ "$(jq -r 'select(.url) | "\(.status) \(.length)"' <<<"$output")" = "200 6" ]
		# A proxy that refuses fails the URL; no_proxy exempts its host.
		run env http_proxy=http://127.0.0.1:1 "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/bytes/5"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.url) | .fail' <<<"$output")" = "connect" ]
		run env http_proxy=http://127.0.0.1:1 no_proxy=127.0.0.1 "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/bytes/5"
		[ "$status" -eq 0 ]
		# Not HTTP_PROXY: libcurl leaves it alone for http (CGI sets it from a header).
		run env HTTP_PROXY=http://127.0.0.1:1 "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/bytes/5"
		[ "$status" -eq 0 ]
	done
}

# bats test_tags=models
@test "redirects: followed up to --max-redirs, and a loop fails" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl --max-redirs 3 "$FIXTURE/redirect/3" "$FIXTURE/redirect/4" "$FIXTURE/redirect-loop"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.line == 1) | .status' <<<"$output")" = "200" ]
		[ "$(jq -r 'select(.line == 2) | .fail' <<<"$output")" = "redirects" ]
		[ "$(jq -r 'select(.line == 3) | .fail' <<<"$output")" = "redirects" ]
		run "$CRAWL" --mode=$m --format=jsonl --max-redirs 0 "$FIXTURE/redirect/1"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.line == 1) | .status' <<<"$output")" = "302" ]
	done
}

# bats test_tags=models
@test "--connect-timeout fails a connect that never completes, and only that URL" {
	# The private fixture's stalled port takes no connection: SYNs are dropped.
	start_private_fixture --stall-port-file "$BATS_TEST_TMPDIR/stall"
	stall="http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/stall")/never"
	for m in $MODES; do
		t0=$(date +%s%N)
		run "$CRAWL" --mode=$m --connect-timeout 0.5 --format=jsonl "$stall" "$FIXTURE/bytes/3"
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		echo "$m: $ms ms"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.line == 1) | .fail' <<<"$output")" = "timeout" ]
		# libcurl words it as whichever of its checks notices first.
		jq -r 'select(.line == 1) | .error' <<<"$output" | grep -Eq "onnect.* after [0-9]+ (ms|milliseconds)"
		[ "$(jq -r 'select(.line == 2) | .length' <<<"$output")" = "3" ]
		# Well before the kernel's own give-up (two minutes of SYN retries).
		[ "$ms" -lt 5000 ]
	done
	stop_private_fixture
}

# bats test_tags=models
@test "a transfer that times out fails alone" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --timeout 0.5 --format=jsonl "$FIXTURE/hang" "$FIXTURE/bytes/9" "$FIXTURE/delay/100/x"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.line == 1) | .fail' <<<"$output")" = "timeout" ]
		[ "$(jq -r 'select(.line == 2) | .length' <<<"$output")" = "9" ]
		[ "$(jq -r 'select(.line == 3) | .status' <<<"$output")" = "200" ]
	done
}

# bats test_tags=models
@test "a body over --max-size fails that URL" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --max-size 1000 --format=jsonl "$FIXTURE/bytes/1001" "$FIXTURE/chunked/5000" "$FIXTURE/bytes/1000"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.line == 1) | .fail' <<<"$output")" = "too-large" ]
		[ "$(jq -r 'select(.line == 2) | .fail' <<<"$output")" = "too-large" ]
		[ "$(jq -r 'select(.line == 3) | .length' <<<"$output")" = "1000" ]
	done
}

# bats test_tags=models
@test "-q prints only the Use time line" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m -q "$FIXTURE/bytes/1" "$FIXTURE/bytes/2"
		[ "$status" -eq 0 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "${lines[0]}" =~ ^Use\ time: ]]
	done
}

@test "thread mode with -c keeps at most N threads and requests in flight" {
	start_private_fixture
	urls=()
	for i in $(seq 12); do urls+=("$PFIX/delay/200/$i"); done
	run "$CRAWL" --mode=thread -c 3 --format=jsonl "${urls[@]}"
	[ "$status" -eq 0 ]
	[ "$(stat_of "$PFIX" peak_active)" -le 3 ]
	[ "$(jq -r 'select(.summary) | .threads' <<<"$output")" -le 4 ]
	stop_private_fixture
}

@test "pool mode runs with -c workers" {
	start_private_fixture
	urls=()
	for i in $(seq 12); do urls+=("$PFIX/delay/200/$i"); done
	run "$CRAWL" --mode=pool -c 4 --format=jsonl "${urls[@]}"
	[ "$status" -eq 0 ]
	[ "$(stat_of "$PFIX" peak_active)" -eq 4 ]
	[ "$(jq -r 'select(.url) | .worker' <<<"$output" | sort -u | wc -l)" -eq 4 ]
	stop_private_fixture
}

@test "exit status and messages for usage and input errors" {
	run "$CRAWL" --mode=fast x
	[ "$status" -eq 2 ]
	grep -q -- "--mode: unknown mode 'fast'" <<<"$output"
	run "$CRAWL" --bogus x
	[ "$status" -eq 2 ]
	grep -q -- "--bogus: unknown option" <<<"$output"
	run "$CRAWL" -c 0 x
	[ "$status" -eq 2 ]
	grep -q -- "--concurrency" <<<"$output"
	run "$CRAWL" -c -3 x
	[ "$status" -eq 2 ]
	run "$CRAWL" --timeout 0 x
	[ "$status" -eq 2 ]
	grep -q -- "--timeout" <<<"$output"
	run "$CRAWL" "$BATS_TEST_TMPDIR/missing.txt"
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: $BATS_TEST_TMPDIR/missing.txt: No such file or directory" ]
	run "$CRAWL" "$BATS_TEST_TMPDIR"
	[ "$status" -eq 2 ]
	grep -q "is a directory" <<<"$output"
	run "$CRAWL"
	[ "$status" -eq 2 ]
	run "$CRAWL" --format=xml x
	[ "$status" -eq 2 ]
}

@test "--help and --version" {
	run "$CRAWL" --help
	[ "$status" -eq 0 ]
	for w in --mode --concurrency --timeout --connect-timeout --max-redirs --no-reuse --user-agent --header --format --order --output --progress --no-progress --quiet; do
		grep -q -- "$w" <<<"$output"
	done
	run "$CRAWL" --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^crawl\ [0-9]+\.[0-9]+\.[0-9]+\ \(libcurl\ [0-9.]+,\ libev\ [0-9]+\.[0-9]+,\ libxml2\ [0-9]+\.[0-9]+\.[0-9]+\)$ ]]
}

@test "--version gives the versions of the libcurl, libev and libxml2 installed" {
	run "$CRAWL" --version
	[ "$status" -eq 0 ]
	ev=$(awk '$2 == "EV_VERSION_MAJOR" { a = $3 } $2 == "EV_VERSION_MINOR" { b = $3 } END { print a "." b }' /usr/include/ev.h)
	grep -qF "libcurl $(pkg-config --modversion libcurl)," <<<"$output"
	grep -qF "libev $ev," <<<"$output"
	grep -qF "libxml2 $(pkg-config --modversion libxml-2.0))" <<<"$output"
}

# bats test_tags=models
@test "an empty list gives an empty table and exit 0" {
	: >"$BATS_TEST_TMPDIR/empty.txt"
	for m in $MODES; do
		run "$CRAWL" --mode=$m "$BATS_TEST_TMPDIR/empty.txt"
		[ "$status" -eq 0 ]
		[ "$(rows | wc -l)" -eq 0 ]
	done
}

@test "--progress writes a live line on stderr" {
	run bash -c "'$CRAWL' --mode=pool --progress '$FIXTURE/delay/500/a' 2>&1 >/dev/null"
	[ "$status" -eq 0 ]
	grep -q "^pool: 0/1 (0%) done, 1 in flight, 0 queued, 0 failed" <<<"$(tr '\r' '\n' <<<"$output")"
	run bash -c "'$CRAWL' --mode=pool '$FIXTURE/delay/300/a' 2>&1 >/dev/null"
	[ -z "$output" ]
}

# bats test_tags=models
@test "the progress line counts transfers in flight, not jobs handed out" {
	for i in $(seq 400); do echo "$FIXTURE/delay/300/p$i"; done >"$BATS_TEST_TMPDIR/l.txt"
	for m in $MODES; do
		sequential $m && continue
		run bash -c "'$CRAWL' --mode=$m -c 50 --progress -q '$BATS_TEST_TMPDIR/l.txt' 2>&1 >/dev/null"
		[ "$status" -eq 0 ]
		inflight=$(tr '\r' '\n' <<<"$output" | sed -n "s/^$m: .* done, \([0-9]*\) in flight.*/\1/p" | sort -n | tail -1)
		echo "$m: at most $inflight in flight"
		[ "$inflight" -ge 1 ] && [ "$inflight" -le 50 ]
	done
}

@test "with --mode=all the line is drawn by the parent: the measured models have no extra thread" {
	run bash -c "'$CRAWL' --mode=all --modes seq,coro --progress --format=jsonl -q '$FIXTURE/delay/2000/a' 2>'$BATS_TEST_TMPDIR/err'"
	[ "$status" -eq 0 ]
	tr '\r' '\n' <"$BATS_TEST_TMPDIR/err" | grep -q '^seq: 0/1 (0%) done'
	tr '\r' '\n' <"$BATS_TEST_TMPDIR/err" | grep -q '^coro: 0/1 (0%) done'
	with=$(jq -r 'select(.mode == "seq") | .vcsw' <<<"$output")
	run "$CRAWL" --mode=all --modes seq --no-progress --format=jsonl -q "$FIXTURE/delay/2000/b"
	without=$(jq -r 'select(.mode == "seq") | .vcsw' <<<"$output")
	echo "seq vcsw: $with with the line, $without without"
	# A line redrawn in the child would add one switch every 200 ms.
	[ "$with" -le $((without + 4)) ]
}

# bats test_tags=models
@test "the models come from one registry: --list-modes, --help and the error messages agree" {
	run "$CRAWL" --list-modes
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 4 ]
	names=$(tr '\n' ' ' <<<"$output")
	help=$("$CRAWL" --help)
	for m in $names; do
		grep -q "^  $m " <<<"$help"
	done
	grep -q "(default $(tr ' ' ',' <<<"${names% }"))" <<<"$help"
	run "$CRAWL" --mode=nope "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -qF "($(sed 's/ $//; s/ /, /g' <<<"$names") or all)" <<<"$output"
}

@test "an argument without a scheme is not a guess: it says so and exits 2" {
	run "$CRAWL" example.com
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: example.com: no such file, and not a URL (did you mean http://example.com?)" ]
	run "$CRAWL" "localhost:$FIXTURE_PORT/bytes/1"
	[ "$status" -eq 2 ]
	grep -q "(did you mean http://localhost:$FIXTURE_PORT/bytes/1?)" <<<"$output"
	# A missing list is a missing list.
	run "$CRAWL" missing-list.txt
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: missing-list.txt: No such file or directory" ]
}

# bats test_tags=models
@test "a flag the run does not use is named, once, and the run goes on" {
	run "$CRAWL" --mode=pool --loops 2 --procs 2 --repeat 3 --modes seq --include x -q "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
	grep -qx "crawl: warning: --loops is ignored here: it sets the event loops of --mode=coro" <<<"$output"
	grep -qx "crawl: warning: --procs is ignored here: it sets the worker processes of --mode=procs" <<<"$output"
	grep -qx "crawl: warning: --repeat is ignored here: it repeats the runs of --mode=all" <<<"$output"
	grep -qx "crawl: warning: --modes is ignored here: it picks the models of --mode=all" <<<"$output"
	grep -qx "crawl: warning: --include is ignored here: links are followed only with --depth or --sitemaps" <<<"$output"
	[ "$(grep -c 'warning' <<<"$output")" -eq 5 ]
	# Used: no word of them.
	run "$CRAWL" --mode=all --modes coro,procs --loops 2 --procs 2 --repeat 1 -q "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
	! grep -q warning <<<"$output"
	run "$CRAWL" --mode=seq -c 5 --depth 1 --include . -q "$FIXTURE/bytes/1"
	! grep -q warning <<<"$output"
}

# bats test_tags=models
@test "--resolve connects a name to the address given, from the command line or @FILE, in every model; a bad entry is refused, named by its line" {
	printf '# names of this test\n\nb.test:%s:127.0.0.1\n  c.test:%s:[::1],127.0.0.1  \n' \
		"$FIXTURE_PORT" "$FIXTURE_PORT" >"$BATS_TEST_TMPDIR/names"
	printf '%s\n' "http://a.test:$FIXTURE_PORT/header/Host" "http://b.test:$FIXTURE_PORT/header/Host" \
		"http://c.test:$FIXTURE_PORT/bytes/7" >"$BATS_TEST_TMPDIR/list"
	for m in $MODES; do
		run --separate-stderr "$CRAWL" --mode=$m --format=jsonl --resolve "a.test:$FIXTURE_PORT:127.0.0.1" \
			--resolve "@$BATS_TEST_TMPDIR/names" "$BATS_TEST_TMPDIR/list"
		echo "$m $status: $stderr"
		[ "$status" -eq 0 ]
		# The Host header names the host as the URL does; the length is
		# that of "a.test:PORT".
		[ "$(jq -r 'select(.url) | "\(.status) \(.length)"' <<<"$output" | tr '\n' ' ')" = \
			"200 $((7 + ${#FIXTURE_PORT})) 200 $((7 + ${#FIXTURE_PORT})) 200 7 " ]
	done
	[ "$(stat_of "$FIXTURE" requests)" -eq $((3 * NMODES)) ]
	run "$CRAWL" --resolve "a.test:$FIXTURE_PORT:localhost" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --resolve: expected HOST:PORT:ADDRESS, got 'a.test:$FIXTURE_PORT:localhost'" ]
	for bad in "a.test::127.0.0.1" "a.test:70000:127.0.0.1" ":80:127.0.0.1" "a.test:80:" "a.test:80:::1"; do
		run "$CRAWL" --resolve "$bad" "$FIXTURE/bytes/1"
		[ "$status" -eq 2 ]
	done
	printf 'b.test:%s:127.0.0.1\nb.test:80\n' "$FIXTURE_PORT" >"$BATS_TEST_TMPDIR/bad"
	run "$CRAWL" --resolve "@$BATS_TEST_TMPDIR/bad" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --resolve: $BATS_TEST_TMPDIR/bad:2: expected HOST:PORT:ADDRESS, got 'b.test:80'" ]
	run "$CRAWL" --resolve "@$BATS_TEST_TMPDIR/none" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --resolve: cannot read '$BATS_TEST_TMPDIR/none': No such file or directory" ]
}

# b32sha1: the sha1: base32 digest of standard input.
b32sha1() {
	python3 -c 'import sys,hashlib,base64; print("sha1:" + base64.b32encode(hashlib.sha1(sys.stdin.buffer.read()).digest()).decode())'
}

# bats test_tags=models
@test "digest: sha1: base32 of the decoded body of every 2xx row that arrived whole, null otherwise, in every model" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl --max-size 4K "$FIXTURE/bytes/100" "$FIXTURE/gzip/3000" \
			"$FIXTURE/chunked/3000" "$FIXTURE/redirect/1" "$FIXTURE/bytes/0" "$FIXTURE/status/404" \
			"$FIXTURE/bytes/5000" "http://127.0.0.1:1/"
		echo "$m: $output"
		[ "$status" -eq 1 ]
		d() { jq -r "select(.line == $1) | .digest" <<<"$output"; }
		[ "$(d 1)" = "$(curl -s "$FIXTURE/bytes/100" | b32sha1)" ]
		# decoded: the gzip page's digest is that of its bytes, as chunked's
		[ "$(d 2)" = "$(curl -s "$FIXTURE/bytes/3000" | b32sha1)" ]
		[ "$(d 3)" = "$(d 2)" ]
		[ "$(d 4)" = "$(printf 'end of redirect chain\n' | b32sha1)" ]
		[ "$(d 5)" = "$(printf '' | b32sha1)" ]
		# a 404, a body cut by --max-size, no response: none
		[ "$(d 6)$(d 7)$(d 8)" = nullnullnull ]
		# without --dedupe, no row names another
		[ "$(jq -r 'select(.url) | .duplicate_of' <<<"$output" | sort -u)" = null ]
	done
}

# bats test_tags=models
@test "--dedupe names the first page with the same decoded body in duplicate_of: /site/ and /site/index.html, gzip and plain, in every model" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m -c 1 --format=jsonl --dedupe "$FIXTURE/site/" "$FIXTURE/site/index.html" \
			"$FIXTURE/gzip/1000" "$FIXTURE/bytes/1000" "$FIXTURE/bytes/1000?again" "$FIXTURE/site/about.html" \
			"$FIXTURE/status/404" "$FIXTURE/status/404?again"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .duplicate_of' <<<"$output" | paste -sd' ')" = \
			"null $FIXTURE/site/ null $FIXTURE/gzip/1000 $FIXTURE/gzip/1000 null null null" ]
		[ "$(jq -r 'select(.line == 1 or .line == 2) | .digest' <<<"$output" | sort -u)" = "$(curl -s "$FIXTURE/site/" | b32sha1)" ]
	done
}

# bats test_tags=models
@test "--dedupe: a duplicate at another URL is parsed and followed; one at its first page's own final URL is not parsed, in every model" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m -c 1 --format=jsonl --dedupe --depth 1 --no-robots --extract 'title=//title' \
			"$FIXTURE/site/" "$FIXTURE/site/index.html" "$FIXTURE/site/"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		row() { jq -c "select(.line == $1) | [.final_url, .duplicate_of, .links, .extract]" <<<"$output"; }
		[ "$(row 1)" = "[\"$FIXTURE/site/\",null,2,{\"title\":[\"fixture site\"]}]" ]
		# another base: parsed, its links resolved against it (the same
		# pages here: the frontier has them already)
		[ "$(row 2)" = "[\"$FIXTURE/site/index.html\",\"$FIXTURE/site/\",2,{\"title\":[\"fixture site\"]}]" ]
		# the same base (listed again: a row of its own): not parsed
		[ "$(row 3)" = "[\"$FIXTURE/site/\",\"$FIXTURE/site/\",null,null]" ]
		# the pages /site/ links to, once each
		[ "$(jq -r 'select(.depth == 1) | .url' <<<"$output" | sort | paste -sd' ')" = \
			"$FIXTURE/site/about.html $FIXTURE/site/private/secret.html" ]
	done
}

@test "--dedupe and --warc-dedupe-cdx: their usage errors" {
	run "$CRAWL" --dedupe --state "$BATS_TEST_TMPDIR/s" --format=jsonl -o "$BATS_TEST_TMPDIR/o" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --state: --dedupe's digests are one run's, not kept in the store (a resumed run would not know the pages before it)" ]
	printf '\n' >"$BATS_TEST_TMPDIR/i.cdxj"
	run "$CRAWL" --warc-dedupe-cdx "$BATS_TEST_TMPDIR/i.cdxj" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --warc-dedupe-cdx: needs --warc" ]
	run "$CRAWL" --warc "$BATS_TEST_TMPDIR/a.warc.gz" --warc-dedupe-cdx "$BATS_TEST_TMPDIR/none.cdxj" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --warc-dedupe-cdx: cannot read '$BATS_TEST_TMPDIR/none.cdxj': No such file or directory" ]
	run "$CRAWL" --warc "$BATS_TEST_TMPDIR/a.warc.gz" --warc-dedupe-cdx "$BATS_TEST_TMPDIR" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --warc-dedupe-cdx: cannot read '$BATS_TEST_TMPDIR': Is a directory" ]
}
