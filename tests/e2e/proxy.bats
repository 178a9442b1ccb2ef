#!/usr/bin/env bats
# -x/--proxy and --noproxy, in every model, as curl spells them, and the
# proxy environment variables. The proxy is a private fixture server: it
# answers the absolute-form requests a client sends a proxy, and counts
# them in its /stats as "proxied"; requests that bypass it go to the shared
# fixture directly.

load helpers

# bats test_tags=models
@test "--proxy sends every request through the proxy, in every model" {
	start_private_fixture
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl -x "$PFIX" "$FIXTURE/bytes/7" "$FIXTURE/bytes/9"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .length' <<<"$output" | sort | tr '\n' ' ')" = "7 9 " ]
	done
	[ "$(stat_of "$PFIX" proxied)" -eq $((2 * NMODES)) ]
	[ "$(stat_of "$PFIX" requests)" -eq $((2 * NMODES)) ]
}

# bats test_tags=models
@test "--noproxy names the hosts reached directly, in every model" {
	start_private_fixture
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl --proxy "$PFIX" --noproxy 127.0.0.1 "$FIXTURE/bytes/7"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .length' <<<"$output")" = 7 ]
		run "$CRAWL" --mode=$m --format=jsonl --proxy "$PFIX" --noproxy '*' "$FIXTURE/bytes/3"
		[ "$status" -eq 0 ]
	done
	[ "$(stat_of "$PFIX" proxied)" -eq 0 ]
	[ "$(stat_of "$PFIX" requests)" -eq 0 ]
}

@test "--noproxy with a host that does not match keeps the proxy" {
	start_private_fixture
	run "$CRAWL" --format=jsonl --proxy "$PFIX" --noproxy example.org "$FIXTURE/bytes/4"
	[ "$status" -eq 0 ]
	[ "$(stat_of "$PFIX" proxied)" -eq 1 ]
}

# bats test_tags=models
@test "http_proxy in the environment keeps working, and --noproxy overrides no_proxy" {
	start_private_fixture
	for m in $MODES; do
		http_proxy="$PFIX" run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/bytes/5"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .length' <<<"$output")" = 5 ]
	done
	[ "$(stat_of "$PFIX" proxied)" -eq "$NMODES" ]
	# no_proxy bypasses it; --noproxy replaces no_proxy's list.
	http_proxy="$PFIX" no_proxy=127.0.0.1 run "$CRAWL" "$FIXTURE/bytes/5"
	[ "$status" -eq 0 ]
	[ "$(stat_of "$PFIX" proxied)" -eq "$NMODES" ]
	http_proxy="$PFIX" no_proxy=127.0.0.1 run "$CRAWL" --noproxy example.org "$FIXTURE/bytes/5"
	[ "$status" -eq 0 ]
	[ "$(stat_of "$PFIX" proxied)" -eq $((NMODES + 1)) ]
}

@test "-x '' turns off the proxy the environment names" {
	start_private_fixture
	http_proxy="$PFIX" run "$CRAWL" -x '' --format=jsonl "$FIXTURE/bytes/5"
	[ "$status" -eq 0 ]
	[ "$(stat_of "$PFIX" requests)" -eq 0 ]
}

# bats test_tags=models
@test "a proxy that refuses connections fails every row as connect" {
	start_private_fixture
	dead=$PFIX
	stop_private_fixture
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl -x "$dead" "$FIXTURE/bytes/5"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.url) | .fail' <<<"$output")" = connect ]
	done
}
