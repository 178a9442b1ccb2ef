#!/usr/bin/env bats
# --frontier redis://HOST:PORT/NAME: crawl processes that share one crawl
# through a real redis-server (started here, on a free loopback port):
# each page once over the union of the workers' outputs, whatever model
# each runs, with one of them killed; per-host bounds and --max-pages over
# all of them; a server down at the start or lost mid-crawl; --status.
# Each test has a fixture of its own and a crawl NAME of its own.

load helpers

setup_file() {
	mkdir -p "$BATS_FILE_TMPDIR/redis"
	redis_start "$BATS_FILE_TMPDIR/redis"
	export REDIS_ADDR REDIS_PID
}

teardown_file() {
	redis_stop
}

# The graph most tests crawl: 600 pages, fan-out 4, all within depth 5.
N=600
graph() { echo "$PFIX/graph/$N/4/"; }
expected() {
	echo "$PFIX/graph/$N/4/"
	for i in $(seq 1 $((N - 1))); do echo "$PFIX/graph/$N/4/$i"; done
}

# front [NAME]: this test's crawl in the server.
front() { echo "redis://$REDIS_ADDR/t$BATS_TEST_NUMBER${1:-}"; }

# worker K ARGS...: worker K's process (exec, so that a signal reaches it),
# writing out.K.jsonl, its messages appended to err.K.
worker() {
	local k=$1
	shift
	exec "$CRAWL" --depth 5 --format=jsonl --no-progress --frontier "$(front)" \
		-o "$BATS_TEST_TMPDIR/out.$k.jsonl" "$@" ${LIST:-$(graph)} 2>>"$BATS_TEST_TMPDIR/err.$k"
}

# union: the URLs of every worker's rows.
union() { cat "$BATS_TEST_TMPDIR"/out.*.jsonl | jq -r 'select(.url) | .url'; }

# together ARGS...: three workers at once, with ARGS each; waits for them
# (not for the fixture) and fails unless all exit 0.
together() {
	local k pids=() rc=0
	for k in 1 2 3; do
		(worker $k "$@") &
		pids+=($!)
	done
	for k in "${pids[@]}"; do wait "$k" || rc=1; done
	cat "$BATS_TEST_TMPDIR"/err.*
	return $rc
}

# count PATH: requests the fixture saw for PATH.
count() { curl -s "$PFIX/stats?path=$1" | jq -r .count; }

@test "one --frontier worker crawls every page once, in every model, and --status says finished" {
	for m in $MODES; do
		start_private_fixture
		rm -f "$BATS_TEST_TMPDIR"/out.* "$BATS_TEST_TMPDIR"/err.*
		run worker 1 --mode=$m --frontier "$(front $m)"
		cat "$BATS_TEST_TMPDIR/err.1"
		[ "$status" -eq 0 ]
		diff <(union | sort) <(expected | sort)
		[ "$(jq -r 'select(.summary) | .urls' "$BATS_TEST_TMPDIR/out.1.jsonl")" -eq $N ]
		run "$CRAWL" --frontier "$(front $m)" --status
		[ "$status" -eq 0 ]
		[[ "${lines[0]}" == "crawl t$BATS_TEST_NUMBER$m at $REDIS_ADDR: finished" ]]
		grep -qx "  done      $N (fetched $N, failed 0)" <<<"$output"
		grep -qx "  queued    0" <<<"$output"
		grep -qx "  workers   0" <<<"$output"
		stop_private_fixture
	done
}

@test "three workers, one killed with SIGKILL: the union holds every page once, none fetched more than twice" {
	start_private_fixture
	set -- $MODES
	# Each worker runs a model of its own.
	m1=coro m2=${2:-thread} m3=${3:-pool}
	(worker 1 --mode=$m1 --delay 2 --lease 1) &
	p1=$!
	(worker 2 --mode=$m2 --delay 2 --lease 1) &
	p2=$!
	(worker 3 --mode=$m3 --delay 2 --lease 1) &
	p3=$!
	# Killed once it has written rows.
	for _ in $(seq 300); do
		[ -s "$BATS_TEST_TMPDIR/out.2.jsonl" ] && break
		sleep 0.02
	done
	run "$CRAWL" --frontier "$(front)" --status
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *": running" ]]
	kill -KILL $p2
	rc2=0; wait $p2 || rc2=$?
	[ "$rc2" -eq 137 ]
	rc1=0; wait $p1 || rc1=$?
	rc3=0; wait $p3 || rc3=$?
	cat "$BATS_TEST_TMPDIR"/err.*
	[ "$rc1" -eq 0 ]
	[ "$rc3" -eq 0 ]
	run "$CRAWL" --frontier "$(front)" --status
	echo "$output"
	[[ "${lines[0]}" == *": finished" ]]
	grep -q "^  given back [1-9]" <<<"$output"
	# The killed worker's command, run again, cuts its rows past its last
	# commit (their pages were fetched again by the others).
	run worker 2 --mode=$m2 --delay 2 --lease 1
	[ "$status" -eq 0 ]
	grep -q "this crawl is finished ($N pages fetched); nothing to do" "$BATS_TEST_TMPDIR/err.2"
	diff <(union | sort) <(expected | sort)
	[ "$(union | sort | uniq -d | wc -l)" -eq 0 ]
	# Every worker did part of it.
	for k in 1 2 3; do
		[ "$(jq -r 'select(.url) | .url' "$BATS_TEST_TMPDIR/out.$k.jsonl" | wc -l)" -gt 0 ]
	done
	# Fetched at most twice: once by the killed worker, once after.
	curl -s "$PFIX/stats?paths" >"$BATS_TEST_TMPDIR/counts"
	[ "$(jq -r "select(.path | startswith(\"/graph/$N/4/\")) | .path" "$BATS_TEST_TMPDIR/counts" | wc -l)" -eq $N ]
	jq -r "select(.path | startswith(\"/graph/$N/4/\")) | select(.count > 2) | \"\\(.path) fetched \\(.count) times\"" \
		"$BATS_TEST_TMPDIR/counts" >"$BATS_TEST_TMPDIR/over"
	cat "$BATS_TEST_TMPDIR/over"
	[ ! -s "$BATS_TEST_TMPDIR/over" ]
	twice=$(jq -r "select(.path | startswith(\"/graph/$N/4/\")) | select(.count == 2) | .path" "$BATS_TEST_TMPDIR/counts" | wc -l)
	echo "$twice pages fetched twice"
	[ "$twice" -lt $N ]
}

@test "a worker stopped with Ctrl-C exits 130, writes no cancelled rows and gives its pages back at once" {
	start_private_fixture
	(worker 1 --delay 2 --lease 600) &
	p=$!
	for _ in $(seq 300); do
		[ "$(wc -l <"$BATS_TEST_TMPDIR/out.1.jsonl" 2>/dev/null || echo 0)" -ge 20 ] && break
		sleep 0.02
	done
	kill -INT $p
	rc=0; wait $p || rc=$?
	[ "$rc" -eq 130 ]
	[ "$(jq -r 'select(.url) | select(.fail != null) | .url' "$BATS_TEST_TMPDIR/out.1.jsonl" | wc -l)" -eq 0 ]
	run "$CRAWL" --frontier "$(front)" --status
	grep -qx "  leased    0" <<<"$output"
	grep -qx "  workers   0" <<<"$output"
	# With a lease of ten minutes, only pages given back let the second
	# worker finish.
	run timeout 120 "$CRAWL" --depth 5 --format=jsonl --no-progress --frontier "$(front)" \
		-o "$BATS_TEST_TMPDIR/out.2.jsonl" --delay 2 --lease 600 "$(graph)"
	[ "$status" -eq 0 ]
	diff <(union | sort) <(expected | sort)
}

@test "workers started together seed the list once: each listed line, bad ones too, has one row over all" {
	start_private_fixture
	list="$BATS_TEST_TMPDIR/list"
	for i in $(seq 200); do echo "$PFIX/bytes/$i"; done >"$list"
	echo "not a url" >>"$list"
	# The worker that writes the bad line's row exits 1.
	LIST=$list together --depth 0 -c 4 || true
	[ "$(union | wc -l)" -eq 201 ]
	[ "$(union | sort | uniq -d | wc -l)" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR"/out.*.jsonl | jq -r 'select(.url == "not a url") | .line')" -eq 201 ]
	for i in $(seq 200); do
		[ "$(count /bytes/$i)" -eq 1 ] || { echo "/bytes/$i: $(count /bytes/$i)"; false; }
	done
}

@test "--per-host holds over all the workers, not per worker" {
	start_private_fixture
	list="$BATS_TEST_TMPDIR/list"
	for i in $(seq 12); do echo "$PFIX/delay/150/$i"; done >"$list"
	LIST=$list together --depth 0 -c 4 --per-host 2
	[ "$(union | sort -u | wc -l)" -eq 12 ]
	[ "$(stat_of "$PFIX" peak_active)" -eq 2 ]
}

@test "--delay spaces a host's requests over all the workers" {
	start_private_fixture
	list="$BATS_TEST_TMPDIR/list"
	for i in $(seq 10); do echo "$PFIX/bytes/$i"; done >"$list"
	t0=$(date +%s.%N)
	LIST=$list together --depth 0 --delay 100
	t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
	echo "10 requests in $t s"
	[ "$(union | sort -u | wc -l)" -eq 10 ]
	# Nine gaps of 100 ms, whichever worker sent each request.
	awk -v t="$t" 'BEGIN { exit !(t >= 0.85) }'
}

@test "--max-pages bounds the pages over all the workers" {
	start_private_fixture
	together --max-pages 100
	[ "$(union | wc -l)" -eq 100 ]
	[ "$(union | sort | uniq -d | wc -l)" -eq 0 ]
}

@test "a worker that joins a finished crawl says so and fetches nothing; other options or a busy output are refused" {
	start_private_fixture
	run worker 1
	[ "$status" -eq 0 ]
	before=$(stat_of "$PFIX" requests)
	run worker 1
	[ "$status" -eq 0 ]
	grep -q "this crawl is finished ($N pages fetched); nothing to do" "$BATS_TEST_TMPDIR/err.1"
	[ "$(stat_of "$PFIX" requests)" -eq "$before" ]
	[ "$(union | wc -l)" -eq $N ]
	run worker 2 --depth 4
	[ "$status" -eq 2 ]
	grep -q "started with depth=5, not depth=4; not joining it" "$BATS_TEST_TMPDIR/err.2"
	# Another crawl, with a worker running: a second one writing the same
	# output is refused.
	(worker 3 --frontier "$(front b)" --delay 20) &
	p=$!
	for _ in $(seq 200); do [ -s "$BATS_TEST_TMPDIR/out.3.jsonl" ] && break; sleep 0.02; done
	run worker 3 --frontier "$(front b)" --delay 20
	kill $p
	wait $p || true
	[ "$status" -eq 2 ]
	grep -q "another worker writing .*out.3.jsonl is running" "$BATS_TEST_TMPDIR/err.3"
}

@test "a server that cannot be reached: exit 7 with a message, at the start and for --status" {
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	run "$CRAWL" --depth 1 --format=jsonl --frontier "redis://127.0.0.1:$port/x" \
		-o "$BATS_TEST_TMPDIR/o.jsonl" "$FIXTURE/bytes/1"
	[ "$status" -eq 7 ]
	[[ "$output" == "crawl: --frontier redis://127.0.0.1:$port/x: cannot reach redis at 127.0.0.1:$port: Connection refused" ]]
	run "$CRAWL" --frontier "redis://127.0.0.1:$port/x" --status
	[ "$status" -eq 7 ]
	[[ "$output" == *"cannot reach redis at 127.0.0.1:$port"* ]]
}

@test "a server lost mid-crawl: the worker tries for --frontier-retry, then exits 7 with its rows intact" {
	start_private_fixture
	mkdir -p "$BATS_TEST_TMPDIR/r"
	# A server of this test's own, to stop.
	(
		redis_start "$BATS_TEST_TMPDIR/r"
		echo "$REDIS_ADDR $REDIS_PID" >"$BATS_TEST_TMPDIR/r/addr"
	)
	read -r addr pid <"$BATS_TEST_TMPDIR/r/addr"
	"$CRAWL" --depth 5 --delay 20 --format=jsonl --no-progress --frontier "redis://$addr/lost" \
		--frontier-retry 1 -o "$BATS_TEST_TMPDIR/out.1.jsonl" "$(graph)" 2>"$BATS_TEST_TMPDIR/err.1" &
	p=$!
	for _ in $(seq 300); do [ -s "$BATS_TEST_TMPDIR/out.1.jsonl" ] && break; sleep 0.02; done
	kill "$pid"
	rc=0; wait $p || rc=$?
	cat "$BATS_TEST_TMPDIR/err.1"
	[ "$rc" -eq 7 ]
	grep -q "stopped (the rows of the pages done are in .*out.1.jsonl)" "$BATS_TEST_TMPDIR/err.1"
	! grep -q "writing output" "$BATS_TEST_TMPDIR/err.1"
	# Whole rows, each page once; the crawl did not get far.
	jq -e . "$BATS_TEST_TMPDIR/out.1.jsonl" >/dev/null
	[ "$(union | wc -l)" -gt 0 ]
	[ "$(union | wc -l)" -lt $N ]
	[ "$(union | sort | uniq -d | wc -l)" -eq 0 ]
}

@test "a server that asks for a password: the URL's is given, a wrong or missing one is refused with exit 7" {
	mkdir -p "$BATS_TEST_TMPDIR/r"
	(
		redis_start "$BATS_TEST_TMPDIR/r" --requirepass s3cret
		echo "$REDIS_ADDR $REDIS_PID" >"$BATS_TEST_TMPDIR/r/addr"
	)
	read -r addr pid <"$BATS_TEST_TMPDIR/r/addr"
	run "$CRAWL" --depth 1 --format=jsonl --frontier "redis://:s3cret@$addr/a" \
		-o "$BATS_TEST_TMPDIR/o.jsonl" "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.url) | .length' "$BATS_TEST_TMPDIR/o.jsonl")" -eq 1 ]
	run "$CRAWL" --frontier "redis://default:s3cret@$addr/a" --status
	[ "$status" -eq 0 ]
	grep -qx "  done      1 (fetched 1, failed 0)" <<<"$output"
	run "$CRAWL" --frontier "redis://:wrong@$addr/a" --status
	kill "$pid"
	[ "$status" -eq 7 ]
	[[ "$output" == *"redis at $addr refused the password: WRONGPASS"* ]]
}

@test "--frontier's usage errors" {
	run "$CRAWL" --frontier redis:/x -o "$BATS_TEST_TMPDIR/o" --format=jsonl "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "crawl: --frontier: expected redis://HOST[:PORT]/NAME, got 'redis:/x'" ]]
	run "$CRAWL" --frontier "$(front)" --format=jsonl "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "crawl: --frontier: needs -o FILE, which the next run continues" ]]
	run "$CRAWL" --frontier "$(front)" --state "$BATS_TEST_TMPDIR/s" -o "$BATS_TEST_TMPDIR/o" --format=jsonl "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "crawl: --state and --frontier: one store or the other" ]]
	run "$CRAWL" --status
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "crawl: --status: needs --frontier URL, the crawl to report on" ]]
	run "$CRAWL" --lease 3 "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "crawl: --lease: needs --frontier" ]]
	run "$CRAWL" --frontier "redis://$REDIS_ADDR/bad name" -o "$BATS_TEST_TMPDIR/o" --format=jsonl "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not redis://[[USER]:PASSWORD@]HOST[:PORT]/NAME (NAME: letters, digits, '.', '_', '-')"* ]]
}
