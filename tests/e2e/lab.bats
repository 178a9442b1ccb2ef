#!/usr/bin/env bats
# A crawl shared across machines, on this one: scripts/lab.sh makes each
# machine a network namespace of its own on a switch (a bridge), the web
# of 60 hosts with real names on one, redis-server on another, and three
# workers, one per model, on three more, each reaching the server through
# a delaying proxy of its own (tcpdelay) when a test asks for a distance.
# Whatever happens to one worker (killed, stopped past its lease, cut off
# past its lease) or to the server (killed and started again from its
# append-only file), the web's own checker (scripts/web-check.sh) finds
# no rule broken over all the workers and the union of their outputs the
# reachable set, each page once. Each test makes a lab of its own and
# teardown removes it, whatever the test did. Without the rights to make
# network namespaces, the suite is skipped, saying why.

load helpers

ROOT="$BATS_TEST_DIRNAME/../.."
CHECK="$ROOT/scripts/web-check.sh"
SEEDS=(http://h00000.web.test/ http://h00001.web.test/ http://h00002.web.test/)

setup_file() {
	local why=""
	if [ "$(id -u)" -ne 0 ]; then
		why="needs root (network namespaces)"
	elif ! command -v ip >/dev/null; then
		why="needs ip (iproute2)"
	elif ! command -v dnsmasq >/dev/null; then
		why="needs dnsmasq (dnsmasq-base)"
	elif ! ip netns add "crawllab-probe-$$" 2>/dev/null; then
		why="network namespaces are not allowed here"
	else
		ip -n "crawllab-probe-$$" link add br0 type bridge 2>/dev/null ||
			why="bridges cannot be made in a network namespace here"
		ip netns delete "crawllab-probe-$$"
	fi
	echo "$why" >"$BATS_FILE_TMPDIR/skip"
}

setup() {
	local why
	why=$(cat "$BATS_FILE_TMPDIR/skip")
	[ -z "$why" ] || skip "$why"
	T=$BATS_TEST_TMPDIR
	LAB_NAME=crawllab$$t$BATS_TEST_NUMBER
}

teardown() {
	[ -n "${LAB_NAME:-}" ] && lab down >/dev/null 2>&1
	return 0
}

# lab ARGS...: scripts/lab.sh for this test's lab.
lab() { LAB=$LAB_NAME LAB_DIR=$T/lab BUILD=$BUILD "$ROOT/scripts/lab.sh" "$@"; }

# Gaps are judged with the web's 20 ms of slack; under a sanitizer, whose
# threads leave late by more than that, with 100.
slack() { if sanitized; then echo 100; else echo 20; fi; }

# lab_up: the lab, with a web of 60 hosts of 8 pages on average, a 5 ms
# unit (latencies of 2.5 to 250 ms, Crawl-delays of 20 to 60 ms), and
# redis-server on its machine, keeping an append-only file.
lab_up() {
	lab up 3 60 1 --web-pages 8 --web-ms 5 --web-slack "$(slack)" >/dev/null
	rm -rf "$T/r"
	mkdir -p "$T/r"
	redis_up
	local k m modes=()
	for m in $MODES; do sequential "$m" || modes+=("$m"); done
	[ ${#modes[@]} -gt 0 ] || modes=($MODES)
	MODE=(x)
	for k in 1 2 3; do MODE[k]=${modes[(k - 1) % ${#modes[@]}]}; done
	AT=(x "" "" "")
}

# redis_up: redis-server on its machine (again), from its files in T/r.
redis_up() {
	lab exec redis redis-server --bind "$(lab addr redis)" --port 6379 --protected-mode no \
		--save '' --appendonly yes --appendfsync always --dir "$T/r" --logfile "$T/r/log" \
		</dev/null >/dev/null 2>&1 &
	RPID=$!
	wait_until 10 eval 'lab exec w1 redis-cli -h 10.78.0.3 ping 2>/dev/null | grep -q PONG'
}

# rcli ARGS...: redis-cli, from worker 1's machine.
rcli() { lab exec w1 redis-cli -h 10.78.0.3 "$@"; }

# distance MS: each worker reaches the server through a proxy on its own
# machine that holds every chunk MS in each direction.
distance() {
	local k
	for k in 1 2 3; do
		lab exec "w$k" "$(cd "$BUILD" && pwd)/tools/tcpdelay" -t 10.78.0.3:6379 -d "$1" -p "$T/delay.$k" \
			</dev/null >/dev/null 3>&- &
		wait_until 5 test -s "$T/delay.$k"
		AT[k]=127.0.0.1:$(cat "$T/delay.$k")
	done
}

# front K: the crawl in the server, as worker K reaches it.
front() { echo "redis://${AT[$1]:-10.78.0.3:6379}/lab"; }

# worker K ARGS...: worker K on its machine (exec: a signal reaches crawl).
worker() {
	local k=$1
	shift
	exec "$ROOT/scripts/lab.sh" exec "w$k" "$CRAWL" --mode="${MODE[k]}" -c 4 --depth 1000 \
		--span-hosts --per-host 2 --retry 1 --timeout 0.6 --lease 2 --format=jsonl --no-progress \
		--frontier "$(front "$k")" -o "$T/out.$k.jsonl" "$@" "${SEEDS[@]}" 2>>"$T/err.$k"
}

# workers: the three, in the background; their pids in PID[1..3].
workers() {
	local k
	PID=()
	for k in 1 2 3; do
		(LAB=$LAB_NAME LAB_DIR=$T/lab BUILD=$BUILD worker "$k" --trace "$T/trace.$k.json") &
		PID[k]=$!
		START[k]=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print $20 / hz }' "/proc/${PID[k]}/stat")
	done
}

# rows K: worker K's rows so far.
rows() { jq -r 'select(.url) | .url' "$T/out.$1.jsonl" 2>/dev/null | wc -l; }

# ends K [STATUS...]: worker K ends within a minute, with one of STATUSes
# (default 0 or 1: some of the web's pages fail, by design).
ends() {
	local k=$1 rc=0
	shift
	[ $# -gt 0 ] || set -- 0 1
	wait_until 60 eval "! kill -0 ${PID[k]} 2>/dev/null" || { kill -KILL "${PID[k]}"; false; }
	wait "${PID[k]}" || rc=$?
	echo "worker $k: exit $rc"
	[[ " $* " == *" $rc "* ]] || { cat "$T/err.$k"; false; }
}

# uptime: now, in seconds since the machine booted.
uptime() { cut -d' ' -f1 /proc/uptime; }

# started_since K T: the transfers worker K started after T (seconds
# since boot), from its trace, whose times count from its start: its
# process's start (/proc/PID/stat) is before the trace's by the time
# lab.sh takes to exec it (tens of milliseconds), which the callers' bounds
# leave room for.
started_since() {
	jq --argjson from "$(awk -v s="${START[$1]}" -v t="$2" 'BEGIN { print (t - s) * 1e6 }')" \
		'[.traceEvents[] | select(.ph == "X" and .cat == "transfer" and .ts > $from)] | length' \
		"$T/trace.$1.json"
}

# judged [VICTIM]: the web's checker finds no rule broken over all the
# workers, and their rows the reachable set, each page once. With VICTIM
# (a worker killed, stopped or cut off), one thing more is allowed: a
# robots.txt asked again, once, by the worker that took its host over, for
# at most as many hosts as the victim had transfers (-c 4). The victim's
# request for it was left unanswered (a robots.txt that never answers), or
# its answer went with the victim in the round trip that takes it to the
# server.
judged() {
	cat "$T"/out.*.jsonl >"$T/union.jsonl"
	run lab exec web "$CHECK" --fixture http://127.0.0.1 --fixture-server "$FIXTURE_SERVER" \
		--per-host 2 --rows "$T/union.jsonl" "${SEEDS[@]}"
	echo "$output"
	local verdict=("${lines[@]}") rc=$status stats allowed=0
	stats=$(lab exec web curl -s "http://127.0.0.1/stats?web")
	# The hosts a rule was broken for, if any, with the web's counters.
	jq -c 'select(.robots_fetches > 1 or .short_gaps > 0 or .peak_in_flight > 2 or
		.disallowed > 0 or .during_pause > 0)' <<<"$stats"
	if [ -n "${1:-}" ]; then
		[ "$(jq -s 'map(select(.robots_fetches > 2)) | length' <<<"$stats")" -eq 0 ]
		allowed=4
	fi
	[[ "${verdict[0]}" =~ ^violations:\ ([0-9]+)\ .*robots.txt\ again:\ ([0-9]+)\)$ ]]
	[ "${BASH_REMATCH[1]}" -eq "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[2]}" -le "$allowed" ]
	[ "$rc" -eq 0 ] || [ "${BASH_REMATCH[1]}" -gt 0 ]
	[[ "${verdict[1]}" =~ ^pages:\ ([0-9]+)\ reachable,\ ([0-9]+)\ fetched,\ 0\ missed,\ 0\ extra$ ]]
	[ "${BASH_REMATCH[1]}" -ge 200 ]
	printf '%s\n' "${verdict[@]}" | grep -qE "^rows: [0-9]+, 0 missed, 0 extra, 0 twice$"
}

# finished: the server says the crawl is over.
finished() {
	run lab exec w1 "$CRAWL" --frontier "$(front 1)" --status
	echo "$output"
	[[ "${lines[0]}" == *": finished" ]]
}

# bats test_tags=models
@test "the lab: every worker's machine reaches the web by name and the server by address, and nothing else; cut off, it reaches neither; down removes every namespace" {
	alone
	lab_up
	run lab exec w2 getent hosts h00042.web.test
	[ "$output" = "10.77.0.43      h00042.web.test" ]
	[ "$(lab exec w3 curl -s -o /dev/null -w '%{http_code}' http://h00001.web.test/robots.txt)" != 000 ]
	[ "$(rcli ping)" = PONG ]
	# The web's server takes connections from the lab, and its machine's
	# own counters from its loopback.
	lab exec web curl -sf "http://127.0.0.1/stats?web" >/dev/null
	# Each machine has its loopback and its cable, no other way out.
	[ "$(lab exec w1 ip -o link | awk -F': ' '{ print $2 }' | cut -d@ -f1 | tr '\n' ' ')" = "lo eth0 " ]
	lab cut w2
	run lab exec w2 curl -s -m 1 -o /dev/null -w '%{http_code}' http://h00001.web.test/robots.txt
	[ "$output" = 000 ]
	run lab exec w2 timeout 1 redis-cli -h 10.78.0.3 ping
	[ "$output" != PONG ]
	lab mend w2
	wait_until 5 eval '[ "$(lab exec w2 timeout 1 redis-cli -h 10.78.0.3 ping 2>/dev/null)" = PONG ]'
	run lab exec w9 true
	[ "$status" -eq 1 ]
	[ "$output" = "lab.sh: $LAB_NAME has no machine w9 (web, redis, w1 to w3)" ]
	lab down
	! ip netns list | grep -q "^$LAB_NAME-"
	[ ! -e "$T/lab" ]
	! pgrep -f "redis-server 10.78.0.3:6379" >/dev/null
}

# bats test_tags=models
@test "a round trip of 2 ms and of 20 ms between each worker's machine and the server's: three workers, one per model, no rule broken, the union the reachable set, each page once" {
	alone
	local ms
	for ms in 1 10; do
		echo "== a round trip of $((2 * ms)) ms"
		rm -f "$T"/out.* "$T"/err.* "$T"/delay.*
		lab_up
		distance "$ms"
		workers
		for k in 1 2 3; do ends $k; done
		judged
		finished
		lab down >/dev/null
	done
}

# bats test_tags=models
@test "a worker killed (SIGKILL) on its machine: the others take its hosts after its lease; its command again cuts its output back; no rule broken, the union the reachable set, each page once" {
	alone
	lab_up
	workers
	wait_until 20 eval '[ "$(rows 2)" -ge 10 ]'
	kill -KILL "${PID[2]}"
	ends 2 137
	ends 1
	ends 3
	(LAB=$LAB_NAME LAB_DIR=$T/lab BUILD=$BUILD worker 2) &
	PID[2]=$!
	ends 2 0
	grep -q "this crawl is finished (.* pages fetched); nothing to do" "$T/err.2"
	judged 2
	finished
}

# bats test_tags=models
@test "a worker stopped (SIGSTOP) past its lease and let go on (SIGCONT): it starts no page of the hosts it lost, stops with exit 7, cut back to its last commit; no rule broken, the union the reachable set, each page once" {
	alone
	lab_up
	workers
	wait_until 20 eval '[ "$(rows 3)" -ge 10 ]'
	kill -STOP "${PID[3]}"
	local stopped
	stopped=$(uptime)
	sleep 3.5
	kill -CONT "${PID[3]}"
	ends 3 7
	# Nothing started once it went on: its lease could not be vouched for.
	[ "$(started_since 3 "$(awk -v t="$stopped" 'BEGIN { print t + 0.1 }')")" -eq 0 ]
	grep -q "this worker's lease lapsed (the server heard nothing from it for --lease 2 s): its pages went to the other workers; $T/out.3.jsonl cut back to [0-9]* bytes, its last commit; stopped" "$T/err.3"
	ends 1
	ends 2
	judged 3
	finished
}

# bats test_tags=models
@test "a worker cut off (its cable pulled) past its lease and plugged in again: it starts no page of the hosts it lost, stops with exit 7, cut back to its last commit; no rule broken, the union the reachable set, each page once" {
	alone
	lab_up
	workers
	wait_until 20 eval '[ "$(rows 1)" -ge 10 ]'
	lab cut w1
	sleep 3.5
	local mended
	mended=$(uptime)
	lab mend w1
	ends 1 7
	# Nothing started in the last second of the cut or after it: the lease
	# could not be vouched for from 1.8 s after the last heartbeat taken.
	[ "$(started_since 1 "$(awk -v t="$mended" 'BEGIN { print t - 1 }')")" -eq 0 ]
	grep -q "this worker's lease lapsed (the server heard nothing from it for --lease 2 s): its pages went to the other workers; $T/out.1.jsonl cut back to [0-9]* bytes, its last commit; stopped" "$T/err.1"
	ends 2
	ends 3
	judged 1
	finished
}

# bats test_tags=models
@test "the server killed (SIGKILL) on its machine and started again from its append-only file (appendfsync always): every worker goes on; no rule broken, the union the reachable set, each page once" {
	alone
	lab_up
	workers
	wait_until 20 eval '[ "$(( $(rows 1) + $(rows 2) + $(rows 3) ))" -ge 60 ]'
	kill -KILL "$RPID"
	sleep 0.5
	redis_up
	for k in 1 2 3; do ends $k; done
	! grep -q "lost\|went back" "$T"/err.*
	judged
	finished
}
