#!/usr/bin/env bats
# --sitemaps, in every model: a listed host's robots.txt Sitemap lines (or
# /sitemap.xml) are read, sitemap indexes, urlsets and .xml.gz files alike,
# and their URLs join the crawl at depth 0 under the rules links follow:
# scope, --include/--exclude, robots.txt, the seen set, --max-pages, and the
# protocol's 50,000-URL and 50 MiB limits. The fixture's /robots/sitemap/REST
# is the default robots.txt with "Disallow: /bytes/2$" and a Sitemap line
# for /sitemap/REST; /sitemap/index/N/K lists N urlsets of K /bytes URLs,
# every other one gzip-compressed.

load helpers

# rows: the JSON lines of the last output (its warnings, from stderr, left out).
rows() { jq -c -R 'fromjson? // empty' <<<"$output"; }

# urls: the rows' URLs of the last output, paths only, sorted, on one line.
urls() { rows | jq -r 'select(.url) | .url' | sed 's|^http://[^/]*||' | sort -V | tr '\n' ' '; }

# summary FIELD: FIELD of the last output's JSON summary.
summary() { rows | jq -r "select(.summary) | .$1"; }

# bats test_tags=models
@test "--sitemaps reads robots.txt's sitemap index, its urlsets and .xml.gz ones, in every model" {
	start_private_fixture --robots /robots/sitemap/index/3/2
	for m in $MODES; do
		run "$CRAWL" --mode=$m --sitemaps --format=jsonl "$PFIX/bytes/10"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		# /bytes/1 to /bytes/6 but /bytes/2, which robots.txt forbids.
		[ "$(urls)" = "/bytes/1 /bytes/3 /bytes/4 /bytes/5 /bytes/6 /bytes/10 " ]
		[ "$(rows | jq -r 'select(.url) | .depth' | sort -u)" = 0 ]
		[ "$(rows | jq -r 'select(.url) | .line' | sort | tr '\n' ' ')" = "1 null null null null null " ]
		# A sitemap's URL has the sitemap for its parent, a listed one none.
		[ "$(rows | jq -r 'select(.url) | "\(.url | sub(".*/bytes/"; "")) \(.parent | tostring | sub("^http://[^/]*"; ""))"' | sort -n | tr '\n' ';')" = "1 /sitemap/urls/2/1.xml;3 /sitemap/urls/2/3.xml.gz;4 /sitemap/urls/2/3.xml.gz;5 /sitemap/urls/2/5.xml;6 /sitemap/urls/2/5.xml;10 null;" ]
		[ "$(summary robots_blocked)" = 1 ]
	done
	# Each sitemap once a run, the index's gzip-compressed urlset included.
	[ "$(curl -s "$PFIX/stats?path=/sitemap/index/3/2" | jq .count)" -eq "$NMODES" ]
	[ "$(curl -s "$PFIX/stats?path=/sitemap/urls/2/3.xml.gz" | jq .count)" -eq "$NMODES" ]
}

# bats test_tags=models
@test "without Sitemap lines /sitemap.xml is read, and a URL listed and in the sitemap is fetched once" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --sitemaps --format=jsonl "$FIXTURE/bytes/1" "$FIXTURE/bytes/9"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(urls)" = "/bytes/1 /bytes/2 /bytes/3 /bytes/9 " ]
	done
}

# bats test_tags=models
@test "--include, --exclude and --max-pages hold for sitemap URLs" {
	start_private_fixture --robots /robots/sitemap/urls/20/1.xml
	for m in $MODES; do
		run "$CRAWL" --mode=$m --sitemaps --include '/bytes/1[0-9]?$' --exclude '/bytes/1[5-9]$' --format=jsonl "$PFIX/bytes/30"
		echo "$m: $output"
		[ "$(urls)" = "/bytes/1 /bytes/10 /bytes/11 /bytes/12 /bytes/13 /bytes/14 /bytes/30 " ]
		run "$CRAWL" --mode=$m --sitemaps --max-pages 4 --format=jsonl "$PFIX/bytes/30"
		[ "$(rows | jq -r 'select(.url) | .url' | wc -l)" -eq 4 ]
	done
}

# bats test_tags=models
@test "--no-robots with --sitemaps still reads the Sitemap lines and obeys no rule" {
	start_private_fixture --robots /robots/sitemap/index/1/3
	for m in $MODES; do
		run "$CRAWL" --mode=$m --sitemaps --no-robots --format=jsonl "$PFIX/bytes/10"
		echo "$m: $output"
		[ "$(urls)" = "/bytes/1 /bytes/2 /bytes/3 /bytes/10 " ]
		[ "$(summary robots_blocked)" = 0 ]
	done
}

# bats test_tags=models
@test "past 50,000 URLs a sitemap's rest is ignored, with a warning" {
	start_private_fixture --robots /robots/sitemap/urls/50005/1.xml.gz
	for m in $MODES; do
		run "$CRAWL" --mode=$m --sitemaps --include '/bytes/(4999[0-9]|5000[0-9])$' --format=jsonl "$PFIX/bytes/1"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(rows | jq -r 'select(.url) | .url' | grep -c '/bytes/')" -eq 12 ]
		grep -q '/bytes/50000"' <<<"$output"
		! grep -q '/bytes/50001"' <<<"$output"
		grep -qx "crawl: sitemap $PFIX/sitemap/urls/50005/1.xml.gz: more than 50,000 URLs: the rest ignored" <<<"$output"
	done
}

@test "past 50 MiB uncompressed a sitemap's rest is ignored, compressed or not" {
	for f in 50.xml.gz 49.xml 50.xml; do
		start_private_fixture --robots /robots/sitemap/big/$f
		# The bound is the sitemap reader's, whichever model fetches: coro
		# stands for the models that fetch in the crawl's own process,
		# procs for its workers, whose sitemap URLs cross the wire. Not
		# every model: each run reads some 50 MiB.
		for m in coro procs; do
			looped $m || continue
			run "$CRAWL" --mode=$m --sitemaps --no-robots --format=jsonl "$PFIX/bytes/5"
			echo "$f $m: $output"
			[ "$status" -eq 0 ]
			case $f in
			49.*) [ "$(urls)" = "/bytes/1 /bytes/2 /bytes/5 " ] ;;
			*)    [ "$(urls)" = "/bytes/1 /bytes/5 " ]
			      grep -q "sitemap/big/$f: over 50 MiB: the rest ignored" <<<"$output" ;;
			esac
		done
		stop_private_fixture
	done
}

# bats test_tags=models
@test "a sitemap that is not one gives no URL and a warning; the listed URL still gets its row" {
	start_private_fixture --robots /robots/sitemap/../bytes/64
	for m in $MODES; do
		run "$CRAWL" --mode=$m --sitemaps --format=jsonl "$PFIX/bytes/5"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(urls)" = "/bytes/5 " ]
		grep -q "^crawl: sitemap .*: not a sitemap (not XML)$" <<<"$output"
	done
}

@test "without --sitemaps no sitemap and no robots.txt is fetched for a list" {
	start_private_fixture --robots /robots/sitemap/index/1/3
	run "$CRAWL" --format=jsonl "$PFIX/bytes/10"
	[ "$(urls)" = "/bytes/10 " ]
	[ "$(stat_of "$PFIX" requests)" -eq 1 ]
}

# bats test_tags=models
@test "a sitemap's URLs on another host are left out, unless --span-hosts" {
	# The private server's sitemap lists /bytes/1 and /bytes/2 of the shared
	# one, named localhost: another host.
	start_private_fixture --robots "/robots/sitemap/urls/2/1.xml?host=localhost:$FIXTURE_PORT"
	for m in $MODES; do
		run "$CRAWL" --mode=$m --sitemaps --format=jsonl "$PFIX/bytes/7"
		echo "$m: $output"
		[ "$(rows | jq -r 'select(.url) | .url' | tr '\n' ' ')" = "$PFIX/bytes/7 " ]
		run "$CRAWL" --mode=$m --sitemaps --span-hosts --format=jsonl "$PFIX/bytes/7"
		[ "$(urls)" = "/bytes/1 /bytes/2 /bytes/7 " ]
		[ "$(rows | jq -r 'select(.url) | .url' | grep -c "^http://localhost:$FIXTURE_PORT/bytes/")" -eq 2 ]
	done
}
