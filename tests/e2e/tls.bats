#!/usr/bin/env bats
# HTTPS against a local `openssl s_server` with a self-signed certificate:
# certificates are verified unless --insecure, in every model, and a TLS
# failure is a failed row of class "tls" for that URL alone. Then HTTP/2
# against a local nghttpd (nghttp2-server), with the same certificate.

load helpers


setup() {
	fixture_up
	local d=$BATS_TEST_TMPDIR
	tls_cert "$d"
	# -www answers every request with a status page; the port is printed as
	# "ACCEPT 127.0.0.1:PORT".
	openssl s_server -accept 127.0.0.1:0 -cert "$d/cert.pem" -key "$d/key.pem" -www \
		>"$d/s_server.out" 2>&1 </dev/null 3>&- &
	TLS_PID=$!
	for _ in $(seq 100); do grep -q '^ACCEPT' "$d/s_server.out" && break; sleep 0.05; done
	TLS="https://127.0.0.1:$(sed -n 's/^ACCEPT 127\.0\.0\.1://p' "$d/s_server.out")"
	[ "$TLS" != "https://127.0.0.1:" ]
}

teardown() {
	[ -n "${TLS_PID:-}" ] && kill "$TLS_PID" 2>/dev/null && wait "$TLS_PID" 2>/dev/null
	h2_stop
	stop_fixtures
}

# start_h2: nghttpd serving files f1.txt..f30.txt of 100 x i bytes over
# TLS; sets H2 and H2_PID.
start_h2() {
	mkdir -p "$BATS_TEST_TMPDIR/h2root"
	for i in $(seq 30); do
		head -c $((100 * i)) /dev/zero | tr '\0' x >"$BATS_TEST_TMPDIR/h2root/f$i.txt"
	done
	h2_start "$BATS_TEST_TMPDIR" f1.txt
}

# bats test_tags=models
@test "a self-signed certificate fails verification, and only its URL" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl "$TLS/" "$FIXTURE/bytes/3"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.line == 1) | .fail' <<<"$output")" = "tls" ]
		jq -r 'select(.line == 1) | .error' <<<"$output" | grep -q 'self-signed certificate'
		[ "$(jq -r 'select(.line == 2) | "\(.status) \(.length)"' <<<"$output")" = "200 3" ]
	done
}

# bats test_tags=models
@test "--cacert trusts the certificates of a file: verified, and no other" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --cacert "$BATS_TEST_TMPDIR/cert.pem" --format=jsonl "$TLS/"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .status' <<<"$output")" = "200" ]
	done
	# Another throwaway certificate does not vouch for this one.
	mkdir "$BATS_TEST_TMPDIR/other"
	tls_cert "$BATS_TEST_TMPDIR/other"
	run "$CRAWL" --cacert "$BATS_TEST_TMPDIR/other/cert.pem" --format=jsonl "$TLS/"
	[ "$status" -eq 1 ]
	[ "$(jq -r 'select(.url) | .fail' <<<"$output")" = "tls" ]
	run "$CRAWL" --cacert "$BATS_TEST_TMPDIR/missing.pem" "$TLS/"
	[ "$status" -eq 2 ]
	grep -q -- "--cacert: cannot read '$BATS_TEST_TMPDIR/missing.pem'" <<<"$output"
}

# bats test_tags=models
@test "--insecure fetches it over TLS" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --insecure --format=jsonl "$TLS/" "$TLS/second"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .status' <<<"$output" | tr '\n' ' ')" = "200 200 " ]
		# s_server's page is some kilobytes; the handshake took time.
		[ "$(jq -r 'select(.url) | .length > 1000 and .time_tls_s > 0' <<<"$output" | sort -u)" = "true" ]
		run "$CRAWL" --mode=$m -k -q "$TLS/"
		[ "$status" -eq 0 ]
	done
}

# bats test_tags=models
@test "HTTP/2: every model fetches whole bodies; coroutines multiplex them on one connection" {
	start_h2
	urls=()
	for i in $(seq 30); do urls+=("$H2/f$i.txt"); done
	want=$(seq 30 | awk '{printf "%d ", 100 * $1}')
	for m in $MODES; do
		run "$CRAWL" --mode=$m -k --format=jsonl "${urls[@]}"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .length' <<<"$output" | tr '\n' ' ')" = "$want" ]
	done
	# Every URL in flight at once, over https: reuse stays on, and each
	# transfer waits to learn that the host multiplexes.
	run "$CRAWL" --mode=coro -k --format=jsonl "${urls[@]}"
	[ "$(jq -r 'select(.summary) | "\(.reuse) \(.conns)"' <<<"$output")" = "on 1" ]
	grep -q '"options":"in flight all, reuse on (auto),' <<<"$output"
	run "$CRAWL" --mode=coro -k --no-reuse --format=jsonl "${urls[@]}"
	[ "$(jq -r 'select(.summary) | "\(.reuse) \(.conns)"' <<<"$output")" = "off 30" ]
}
