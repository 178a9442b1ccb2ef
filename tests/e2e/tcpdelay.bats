#!/usr/bin/env bats
# tests/tools/tcpdelay, the proxy that the --frontier tests and
# scripts/bench-frontier.sh put between crawl and its server: every chunk
# held its delay in each direction (a round trip twice that), the bytes
# forwarded whole, the delay kept per chunk rather than added up over a
# burst; SIGUSR1 cuts (connections reset, new ones refused or, with -b,
# blackholed), SIGUSR2 restores on the same port. Against this test's
# fixture server.

load helpers

TCPDELAY=$PWD/$BUILD/tools/tcpdelay

# delay_start ARGS...: tcpdelay to this test's fixture with ARGS; sets
# PROXY (http://127.0.0.1:PORT), PROXY_PORT and PROXY_PID.
delay_start() {
	local pf=$BATS_TEST_TMPDIR/delay.port
	rm -f "$pf"
	"$TCPDELAY" -t "127.0.0.1:$FIXTURE_PORT" -p "$pf" "$@" </dev/null >"$BATS_TEST_TMPDIR/said" 3>&- &
	PROXY_PID=$!
	wait_until 5 test -s "$pf"
	PROXY_PORT=$(cat "$pf")
	PROXY=http://127.0.0.1:$PROXY_PORT
}

# said WHAT [N]: true once tcpdelay has said WHAT N times (default 1).
said() {
	[ "$(grep -cx "$1" "$BATS_TEST_TMPDIR/said")" -ge "${2:-1}" ]
}

teardown() {
	[ -n "${PROXY_PID:-}" ] && kill "$PROXY_PID" 2>/dev/null && wait "$PROXY_PID" 2>/dev/null
	stop_fixtures
}

# took URL: curl's total time for URL, in ms, in $MS; the body's md5 in
# $SUM.
took() {
	local t
	t=$(curl -s -o "$BATS_TEST_TMPDIR/body" -w '%{time_total}' "$1")
	SUM=$(md5sum <"$BATS_TEST_TMPDIR/body")
	MS=$(awk -v t="$t" 'BEGIN { printf "%d\n", t * 1000 }')
	echo "$1: $MS ms"
}

@test "a request through tcpdelay -d 50 takes a 100 ms round trip, its body the same bytes as without it" {
	delay_start -d 50
	took "$FIXTURE/bytes/100000"
	local direct=$SUM
	took "$PROXY/bytes/100000"
	[ "$SUM" = "$direct" ]
	[ "$MS" -ge 100 ]
	[ "$MS" -lt $((250 * SECOND_MS / 1000)) ]
	[ "$(wc -c <"$BATS_TEST_TMPDIR/body")" -eq 100000 ]
}

@test "a 2 MB body through tcpdelay -d 100 arrives whole in one round trip and a little: the delay is each chunk's, not added up over the chunks" {
	delay_start -d 100
	took "$PROXY/bytes/2000000"
	[ "$SUM" = "$(yes abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789. | head -c 2000000 | md5sum)" ]
	[ "$MS" -ge 200 ]
	[ "$MS" -lt $((600 * SECOND_MS / 1000)) ]
}

@test "-d 0 forwards without a delay; ten requests on one connection through -d 20 take ten round trips of 40 ms" {
	delay_start -d 0
	took "$PROXY/bytes/10"
	# Loose: a loaded machine takes tens of ms; a delay of 50 takes 100.
	[ "$MS" -lt $((100 * SECOND_MS / 1000)) ]
	kill "$PROXY_PID"; wait "$PROXY_PID" || true
	delay_start -d 20
	local urls=() i t
	for i in $(seq 10); do urls+=(-o /dev/null "$PROXY/bytes/$i"); done
	t=$(curl -s -w '%{time_total} %{num_connects}\n' "${urls[@]}" |
		awk '{ s += $1; c += $2 } END { printf "%d %d\n", s * 1000, c }')
	echo "$t"
	[ "${t#* }" -eq 1 ]
	[ "${t% *}" -ge 400 ]
	[ "${t% *}" -lt $((800 * SECOND_MS / 1000)) ]
}

@test "SIGUSR1 resets a connection in flight and refuses new ones; SIGUSR2 listens again on the same port" {
	delay_start -d 10
	curl -s -o /dev/null "$PROXY/hang" &
	local c=$!
	wait_until 5 requested "$FIXTURE" /hang
	kill -USR1 "$PROXY_PID"
	wait_until 5 said cut
	local rc=0
	wait "$c" || rc=$?
	# curl: 56, a failure receiving (the connection reset).
	[ "$rc" -eq 56 ]
	rc=0; curl -s -o /dev/null "$PROXY/bytes/1" || rc=$?
	[ "$rc" -eq 7 ]
	kill -USR2 "$PROXY_PID"
	wait_until 5 said restored
	[ "$(curl -s "$PROXY/bytes/5")" = abcde ]
}

@test "with -b a cut blackholes: a new connection is accepted and never answered; restored, it is reset and new ones go through" {
	delay_start -d 10 -b
	kill -USR1 "$PROXY_PID"
	wait_until 5 said cut
	local rc=0
	curl -s -o /dev/null --max-time 0.5 "$PROXY/bytes/1" || rc=$?
	[ "$rc" -eq 28 ]
	curl -s -o /dev/null --max-time 5 "$PROXY/hang" &
	local c=$!
	wait_until 5 said held 2
	kill -USR2 "$PROXY_PID"
	rc=0; wait "$c" || rc=$?
	[ "$rc" -eq 56 ]
	[ "$(curl -s --max-time 5 "$PROXY/bytes/5")" = abcde ]
	# The fixture never saw a request made while cut.
	! requested "$FIXTURE" /hang
}

@test "scripts/bench-frontier.sh LATENCY=1 crawls in memory, on --frontier direct and through tcpdelay, plain, with --delay and with --per-host, each run checked, the server's work per page counted" {
	sanitized && skip "a benchmark script: the plain build's run tests it"
	run env BUILD="$BUILD" LATENCY=1 PAGES=200 RUNS=1 RTTS=2 scripts/bench-frontier.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "# scripts/bench-frontier.sh LATENCY=1: 200 pages of /graph/200/4/, depth 4, one --mode=coro worker at -c 50, medians of 1 "* ]]
	[ "${#lines[@]}" -eq 12 ]
	[ "$(printf '%s\n' "${lines[@]:2:9}" | awk '{ s = $1; for (i = 2; i <= NF - 8; i++) s = s " " $i; print s }' | tr '\n' ';')" = "in memory;--frontier direct;--frontier, 2 ms round trip;--delay 1, in memory;--delay 1, --frontier direct;--delay 1, 2 ms round trip;--per-host 4, in memory;--per-host 4, --frontier direct;--per-host 4, 2 ms round trip;" ]
	# In memory the server does nothing; on --frontier, scripts (EVALSHA)
	# and the commands they run.
	[ "$(awk '$1 == "in" && $2 == "memory" { print $(NF-3) }' <<<"${lines[2]}")" = 0.00 ]
	awk '{ exit !($(NF-3) > 1 && $(NF-2) > 0 && $(NF-1) > 0) }' <<<"${lines[3]}"
	[[ "${lines[11]}" == "# The round trips are tcpdelay's"* ]]
}
