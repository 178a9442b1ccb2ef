#!/usr/bin/env bats
# Hostile servers: robots.txt files that are huge, oddly spelled or out of
# reach, response headers past libcurl's limits, international host names,
# pages nested too deep for libxml2 and pages whose tree outgrows their
# size; in every model.

load helpers
bats_require_minimum_version 1.5.0   # run --separate-stderr


# row URL: the JSON line of URL in $output.
row() { jq -c --arg u "$1" 'select(.url == $u)' <<<"$output"; }
fail_of() { jq -r --arg u "$1" 'select(.url == $u) | .fail // "ok"' <<<"$output"; }
error_of() { jq -r --arg u "$1" 'select(.url == $u) | .error // ""' <<<"$output"; }
count_of() { curl -s "$1/stats?path=$2" | jq .count; }

# bats test_tags=models
@test "robots.txt after a byte order mark, or with CR line ends, still rules" {
	for variant in bom cr; do
		start_private_fixture --robots /robots/$variant
		for m in $MODES; do
			echo "robots $variant, mode $m"
			run "$CRAWL" --mode=$m --depth 1 --format=jsonl \
				"$PFIX/site/private/secret.html" "$PFIX/bytes/3"
			[ "$status" -eq 1 ]
			[ "$(fail_of "$PFIX/site/private/secret.html")" = robots ]
			[ "$(error_of "$PFIX/site/private/secret.html")" = "disallowed by robots.txt" ]
			[ "$(fail_of "$PFIX/bytes/3")" = ok ]
		done
		[ "$(count_of "$PFIX" /site/private/secret.html)" -eq 0 ]
		[ "$(count_of "$PFIX" /robots.txt)" -eq "$NMODES" ]
		stop_private_fixture
	done
}

# bats test_tags=models
@test "a 100 MB robots.txt is read to 512 KiB and its first rules apply" {
	for m in $MODES; do
		echo "mode $m"
		start_private_fixture --robots /robots/huge/104857600
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl \
			"$PFIX/site/private/secret.html" "$PFIX/bytes/3"
		[ "$status" -eq 1 ]
		[ "$(error_of "$PFIX/site/private/secret.html")" = "disallowed by robots.txt" ]
		[ "$(fail_of "$PFIX/bytes/3")" = ok ]
		[ "$(count_of "$PFIX" /site/private/secret.html)" -eq 0 ]
		# The transfer stopped: what was sent is the socket buffers' worth.
		sent=$(stat_of "$PFIX" bytes_out)
		echo "bytes_out $sent"
		[ "$sent" -lt 20000000 ]
		stop_private_fixture
	done
}

# bats test_tags=models
@test "robots.txt has a limit of its own: --max-size does not fail it" {
	for m in $MODES; do
		# The default robots.txt is 39 bytes; /bytes/3 fits in 20.
		run "$CRAWL" --mode=$m --depth 1 --max-size 20 --format=jsonl \
			"$FIXTURE/site/private/secret.html" "$FIXTURE/bytes/3"
		[ "$status" -eq 1 ]
		[ "$(error_of "$FIXTURE/site/private/secret.html")" = "disallowed by robots.txt" ]
		[ "$(fail_of "$FIXTURE/bytes/3")" = ok ]
	done
}

# bats test_tags=models
@test "an unreachable robots.txt says what happened, not that rules forbid" {
	unreachable() { echo "robots.txt unreachable ($1): host treated as disallowed"; }
	start_private_fixture --robots /status/503
	for m in $MODES; do
		echo "mode $m, 503 and refused"
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl "$PFIX/bytes/3" "http://127.0.0.1:1/x"
		[ "$status" -eq 1 ]
		[ "$(fail_of "$PFIX/bytes/3")" = robots ]
		[ "$(error_of "$PFIX/bytes/3")" = "$(unreachable 503)" ]
		[ "$(error_of "http://127.0.0.1:1/x")" = "$(unreachable connect)" ]
	done
	[ "$(count_of "$PFIX" /bytes/3)" -eq 0 ]
	stop_private_fixture
	start_private_fixture --robots /hang
	for m in $MODES; do
		echo "mode $m, timeout and deadline"
		run "$CRAWL" --mode=$m --depth 1 --timeout 1 --format=jsonl "$PFIX/bytes/3"
		[ "$(error_of "$PFIX/bytes/3")" = "$(unreachable timeout)" ]
		run "$CRAWL" --mode=$m --depth 1 --deadline 1 --format=jsonl "$PFIX/bytes/3"
		[ "$(error_of "$PFIX/bytes/3")" = "$(unreachable "cancelled: --deadline reached")" ]
	done
	[ "$(count_of "$PFIX" /bytes/3)" -eq 0 ]
	stop_private_fixture
}

# bats test_tags=models
@test "a response header line over libcurl's 100 KiB is a too-large header, not out of memory" {
	for m in $MODES; do
		echo "mode $m"
		run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/big-header/10485760" \
			"$FIXTURE/big-header/200000" "$FIXTURE/big-header/100000"
		[ "$status" -eq 1 ]
		for n in 10485760 200000; do
			[ "$(fail_of "$FIXTURE/big-header/$n")" = recv ]
			[ "$(error_of "$FIXTURE/big-header/$n")" = "response header too large: a header line over 102400 bytes" ]
		done
		[ "$(fail_of "$FIXTURE/big-header/100000")" = ok ]
	done
}

# bats test_tags=models
@test "two different Content-Length values fail the URL as RFC 9112 says; equal ones do not" {
	for m in $MODES; do
		echo "mode $m"
		run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/lengths/5/7" "$FIXTURE/lengths/7/5" \
			"$FIXTURE/lengths/5,7" "$FIXTURE/lengths/7/7" "$FIXTURE/lengths/7,7/7" \
			"$FIXTURE/lengths/7,,7"
		[ "$status" -eq 1 ]
		[ "$(jq -s 'map(select(.url)) | length' <<<"$output")" -eq 6 ]
		for p in 5/7 5,7; do
			[ "$(fail_of "$FIXTURE/lengths/$p")" = protocol ]
			[ "$(error_of "$FIXTURE/lengths/$p")" = "conflicting Content-Length headers (5 and 7)" ]
		done
		[ "$(error_of "$FIXTURE/lengths/7/5")" = "conflicting Content-Length headers (7 and 5)" ]
		for p in 7/7 7,7/7 7,,7; do
			[ "$(fail_of "$FIXTURE/lengths/$p")" = ok ]
			[ "$(jq -r --arg u "$FIXTURE/lengths/$p" 'select(.url == $u) | .length' <<<"$output")" -eq 7 ]
		done
	done
}

# bats test_tags=models
@test "a response of two lengths is not followed on its connection, with --warc too" {
	# libcurl alone would read 5 of the 7 bytes and take the other two as
	# the start of the next response on a reused connection.
	for m in $MODES; do
		for warc in "" "--warc=$BATS_TEST_TMPDIR/$m.warc.gz"; do
			echo "mode $m $warc"
			start_private_fixture
			run "$CRAWL" --mode=$m --reuse --concurrency 1 --format=jsonl $warc \
				"$PFIX/lengths/7/5" "$PFIX/bytes/3" "$PFIX/bytes/4"
			[ "$status" -eq 1 ]
			[ "$(fail_of "$PFIX/lengths/7/5")" = protocol ]
			[ "$(error_of "$PFIX/lengths/7/5")" = "conflicting Content-Length headers (7 and 5)" ]
			[ "$(fail_of "$PFIX/bytes/3")" = ok ]
			[ "$(fail_of "$PFIX/bytes/4")" = ok ]
			[ "$(stat_of "$PFIX" accepted)" -eq 2 ]
			stop_private_fixture
		done
	done
}

# bats test_tags=models
@test "an international host name is fetched as curl fetches it, whatever the locale" {
	# *.localhost names resolve to loopback inside libcurl, so
	# xn--bcher-kva.localhost reaches the fixture without any DNS.
	url="http://bücher.localhost:$FIXTURE_PORT/bytes/3"
	link="http%3A%2F%2Fb%C3%BCcher.localhost%3A$FIXTURE_PORT%2Fbytes%2F5"
	for locale in unset C C.UTF-8; do
		if [ $locale = unset ]; then
			envs=(env -u LANG -u LC_ALL -u LC_CTYPE)
		else
			envs=(env -u LANG -u LC_CTYPE LC_ALL=$locale)
		fi
		for m in $MODES; do
			echo "locale $locale, mode $m"
			run "${envs[@]}" "$CRAWL" --mode=$m --format=jsonl "$url"
			[ "$status" -eq 0 ]
			[ "$(fail_of "$url")" = ok ]
			[ "$(jq -r 'select(.url) | .length' <<<"$output")" -eq 3 ]
			# A link to such a host is followed too; its row shows it as a
			# browser requests it, in punycode.
			run "${envs[@]}" "$CRAWL" --mode=$m --depth 1 --span-hosts --format=jsonl \
				"$FIXTURE/links?u=$link"
			[ "$status" -eq 0 ]
			[ "$(fail_of "http://xn--bcher-kva.localhost:$FIXTURE_PORT/bytes/5")" = ok ]
		done
	done
}

# bats test_tags=models
@test "a page nested past libxml2's depth limit gets a warning naming it, once however often it comes" {
	warning=": elements nested deeper than libxml2's limit (256): --follow and --extract see only the page before them"
	for m in $MODES; do
		echo "mode $m"
		run --separate-stderr "$CRAWL" --mode=$m --depth 1 --follow '//div//a/@href' --format=jsonl \
			"$FIXTURE/deep/100" "$FIXTURE/deep/300" "$FIXTURE/deep/400" "$FIXTURE/deep/300"
		echo "$stderr"
		[ "$status" -eq 0 ]
		[ "$(jq -r --arg u "$FIXTURE/deep/100" 'select(.url == $u) | .links' <<<"$output")" -eq 1 ]
		[ "$(jq -r --arg u "$FIXTURE/deep/300" 'select(.url == $u) | .links' <<<"$output" | sort -u)" -eq 0 ]
		# One format, two texts: both said; the same text twice: once.
		[ "$(sort <<<"$stderr")" = "crawl: $FIXTURE/deep/300$warning
crawl: $FIXTURE/deep/400$warning" ]
		# Streamed (the default rule), nothing is too deep.
		run --separate-stderr "$CRAWL" --mode=$m --depth 1 --format=jsonl "$FIXTURE/deep/300"
		[ "$(jq -r 'select(.depth == 0) | .links' <<<"$output")" -eq 2 ]
		[ -z "$stderr" ]
	done
}

# bats test_tags=models
@test "the tree built for XPath rules is bounded by --max-size" {
	# 20,000 links in 578 KiB: a tree of some 14 MB, bounded at 1 MiB.
	page="$FIXTURE/wide/20000"
	for m in $MODES; do
		echo "mode $m"
		run --separate-stderr "$CRAWL" --mode=$m --depth 1 --max-pages 1 --max-size 1M \
			--follow '//body//a/@href' --format=jsonl "$page"
		[ "$status" -eq 0 ]
		links=$(jq -r 'select(.url) | .links' <<<"$output")
		echo "links $links"
		[ "$links" -gt 100 ] && [ "$links" -lt 2000 ]
		[ "$stderr" = "crawl: $page: the page's document tree reached --max-size (1048576 bytes): --follow and --extract see only the page before that point" ]
		# Without a bound every link is there (up to the cap of 10,000).
		run --separate-stderr "$CRAWL" --mode=$m --depth 1 --max-pages 1 --max-size 0 \
			--follow '//body//a/@href' --format=jsonl "$page"
		[ "$(jq -r 'select(.url) | .links' <<<"$output")" -eq 10000 ]
		[ -z "$stderr" ]
	done
}

# bats test_tags=models
@test "links waiting for robots.txt do not use up --max-pages, in every model" {
	# 150 links to hosts whose robots.txt cannot be had, then 50 to this host.
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --span-hosts --max-pages 100 --timeout 5 --format=jsonl "$FIXTURE/site/hostile/many-hosts.html"
		echo "$m: $(tail -1 <<<"$output" | cut -c1-160)"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .url' <<<"$output" | wc -l)" -eq 51 ]
		[ "$(jq -r 'select(.url) | .url' <<<"$output" | grep -c "^$FIXTURE/bytes/")" -eq 50 ]
		[ "$(jq -r 'select(.summary) | .robots_blocked' <<<"$output")" -eq 150 ]
	done
}

# bats test_tags=models
@test "each warning said once per crawl is said: one does not mute another" {
	# Two of them in one run: too few descriptors for every URL at once,
	# and a page nested past libxml2's limit.
	for i in $(seq 300); do echo "$FIXTURE/bytes/$i"; done >"$BATS_TEST_TMPDIR/l.txt"
	echo "$FIXTURE/deep/300" >>"$BATS_TEST_TMPDIR/l.txt"
	for m in $MODES; do
		sequential $m && continue       # one transfer at a time: descriptors enough
		run --separate-stderr bash -c "ulimit -n 256 && exec '$CRAWL' --mode=$m -c 1000 \
			--depth 1 --follow '//div//a/@href' -q '$BATS_TEST_TMPDIR/l.txt'"
		echo "$m: $status: $stderr"
		[ "$status" -eq 0 ]
		[ "$(grep -c "file descriptors" <<<"$stderr")" -eq 1 ]
		[ "$(grep -c "nested deeper than libxml2's limit" <<<"$stderr")" -eq 1 ]
	done
}
