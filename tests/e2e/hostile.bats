#!/usr/bin/env bats
# Hostile servers: robots.txt files that are huge, oddly spelled or out of
# reach, response headers past libcurl's limits, international host names,
# pages nested too deep for libxml2 and pages whose tree outgrows their
# size; in every model.

load helpers

MODES="seq thread pool coro"

# row URL: the JSON line of URL in $output.
row() { jq -c --arg u "$1" 'select(.url == $u)' <<<"$output"; }
fail_of() { jq -r --arg u "$1" 'select(.url == $u) | .fail // "ok"' <<<"$output"; }
error_of() { jq -r --arg u "$1" 'select(.url == $u) | .error // ""' <<<"$output"; }
count_of() { curl -s "$1/stats?path=$2" | jq .count; }

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
		[ "$(count_of "$PFIX" /robots.txt)" -eq 4 ]
		stop_private_fixture
	done
}
