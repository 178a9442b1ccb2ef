#!/usr/bin/env bats
# HTTPS against a local `openssl s_server` with a self-signed certificate:
# certificates are verified unless --insecure, in every model, and a TLS
# failure is a failed row of class "tls" for that URL alone.

load helpers

MODES="seq thread pool coro"

setup() {
	local d=$BATS_TEST_TMPDIR
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$d/key.pem" -out "$d/cert.pem" -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
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
	return 0
}

@test "a self-signed certificate fails verification, and only its URL" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl "$TLS/" "$FIXTURE/bytes/3"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.line == 1) | .fail' <<<"$output")" = "tls" ]
		jq -r 'select(.line == 1) | .error' <<<"$output" | grep -q 'self-signed certificate'
		[ "$(jq -r 'select(.line == 2) | "\(.status) \(.length)"' <<<"$output")" = "200 3" ]
	done
}

@test "--insecure fetches it over TLS" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --insecure --format=jsonl "$TLS/" "$TLS/second"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .status' <<<"$output" | tr '\n' ' ')" = "200 200 " ]
		# s_server's page is some kilobytes; the handshake took time.
		[ "$(jq -r 'select(.url) | .length > 1000 and .time_tls > 0' <<<"$output" | sort -u)" = "true" ]
		run "$CRAWL" --mode=$m -k -q "$TLS/"
		[ "$status" -eq 0 ]
	done
}
