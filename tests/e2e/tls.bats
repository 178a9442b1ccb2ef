#!/usr/bin/env bats
# HTTPS against a local `openssl s_server` with a self-signed certificate:
# certificates are verified unless --insecure, in every model, and a TLS
# failure is a failed row of class "tls" for that URL alone. Then HTTP/2
# against a local nghttpd (nghttp2-server), with the same certificate.

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
	[ -n "${H2_PID:-}" ] && kill "$H2_PID" 2>/dev/null && wait "$H2_PID" 2>/dev/null
	stop_private_fixture
}

# start_h2: nghttpd serving $BATS_TEST_TMPDIR/h2root (files f1.txt..f30.txt
# of 100 x i bytes) over TLS; sets H2 (its base URL) and H2_PID. nghttpd
# cannot say which port it got, so free ports are tried until one serves.
start_h2() {
	local d=$BATS_TEST_TMPDIR port
	mkdir -p "$d/h2root"
	for i in $(seq 30); do head -c $((100 * i)) /dev/zero | tr '\0' x >"$d/h2root/f$i.txt"; done
	for _ in $(seq 20); do
		port=$((20000 + RANDOM % 30000))
		/usr/sbin/nghttpd -d "$d/h2root" --address=127.0.0.1 "$port" "$d/key.pem" "$d/cert.pem" \
			>"$d/nghttpd.log" 2>&1 </dev/null 3>&- &
		H2_PID=$!
		for _ in $(seq 40); do
			[ "$(curl -sk --http2 -o /dev/null -w '%{http_version}' "https://127.0.0.1:$port/f1.txt")" = 2 ] &&
				{ H2="https://127.0.0.1:$port"; return 0; }
			kill -0 "$H2_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill "$H2_PID" 2>/dev/null; wait "$H2_PID" 2>/dev/null
	done
	H2_PID=
	return 1
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
	[ "$(jq -r 'select(.summary) | "\(.reuse) \(.connections)"' <<<"$output")" = "on 1" ]
	grep -q '"options":"in flight all, reuse on (auto),' <<<"$output"
	run "$CRAWL" --mode=coro -k --no-reuse --format=jsonl "${urls[@]}"
	[ "$(jq -r 'select(.summary) | "\(.reuse) \(.connections)"' <<<"$output")" = "off 30" ]
}
