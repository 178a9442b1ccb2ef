#!/usr/bin/env bats
# --mode=procs: worker processes, one writer, per-host rules across
# workers, and workers that die.

load helpers

# list N FILE PATH: N URLs of the fixture, PATH/1 to PATH/N, in FILE.
list() {
	for i in $(seq "$1"); do echo "$FIXTURE/$3/$i"; done >"$2"
}

# urls_of: the rows' URLs in $output, sorted.
urls_of() { jq -r 'select(.url) | .url' <<<"$output" | sort; }

# workers_of PID N: the worker processes of crawl PID, once N are up.
workers_of() {
	local w
	for _ in $(seq 100); do
		w=$(pgrep -P "$1" | tr '\n' ' ')
		[ "$(wc -w <<<"$w")" -ge "$2" ] && break
		sleep 0.05
	done
	echo "$w"
}

@test "--procs N starts N workers; worker ids say the process and the coroutine" {
	run "$CRAWL" --mode=procs --procs 3 --format=jsonl \
		"$FIXTURE/bytes/1" "http://localhost:$FIXTURE_PORT/bytes/2" "$FIXTURE/bytes/3"
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.summary) | .threads' <<<"$output")" -eq 7 ]     # 1 + 3 x (loop + reader)
	# Two hosts: two processes, each the owner of one.
	[ "$(jq -r 'select(.url) | (.worker / 1000000 | floor)' <<<"$output" | sort -u | wc -l)" -eq 2 ]
	jq -s -e 'map(select(.url) | .worker >= 0) | all' <<<"$output" >/dev/null
	run "$CRAWL" --mode=procs --procs 0 "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- "--procs" <<<"$output"
}

@test "every page once across workers on a link-following crawl" {
	start_private_fixture
	run "$CRAWL" --mode=procs --procs 2 --depth 10 --format=jsonl "$PFIX/graph/300/5/"
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.url) | .url' <<<"$output" | wc -l)" -eq 300 ]
	[ "$(jq -r 'select(.url) | .url' <<<"$output" | sort -u | wc -l)" -eq 300 ]
	# One site, both processes: it overflows to the idle worker.
	[ "$(jq -r 'select(.url) | (.worker / 1000000 | floor)' <<<"$output" | sort -u | wc -l)" -eq 2 ]
	# The fixture saw each page once, and robots.txt once.
	[ "$(stat_of "$PFIX" requests)" -eq 301 ]
	stop_private_fixture
}

@test "a link a worker has sent is sent again from a page of another scope" {
	# A worker sends a link once: the coordinator would decide it the same
	# way again, unless the page is of another listed URL's host. One worker,
	# one job at a time: the first page's link is to another host, not
	# followed; the second page, of that host, has it too: followed, once.
	start_private_fixture
	port=${PFIX##*:}
	link="http%3A%2F%2Flocalhost%3A$port%2Fbytes%2F7"
	first="$PFIX/links?u=$link&u=%2Fbytes%2F5"
	second="http://localhost:$port/links?u=$link&u=%2Fbytes%2F5"
	run "$CRAWL" --mode=procs --procs 1 -c 1 --depth 1 --format=jsonl "$first" "$second"
	[ "$status" -eq 0 ]
	[ "$(urls_of | tr '\n' ' ')" = "$PFIX/bytes/5 $first http://localhost:$port/bytes/5 http://localhost:$port/bytes/7 $second " ]
	[ "$(jq -r "select(.url == \"http://localhost:$port/bytes/7\") | \"\\(.depth) \\(.length)\"" <<<"$output")" = "1 7" ]
	# Each page's row counts the links it has, sent or not.
	[ "$(jq -r 'select(.url and .depth == 0) | .links' <<<"$output" | tr '\n' ' ')" = "2 2 " ]
	stop_private_fixture
}

@test "--per-host holds across workers" {
	start_private_fixture
	urls=()
	for i in $(seq 12); do urls+=("$PFIX/delay/200/$i"); done
	run "$CRAWL" --mode=procs --procs 2 -c 12 --per-host 3 --format=jsonl "${urls[@]}"
	[ "$status" -eq 0 ]
	[ "$(stat_of "$PFIX" peak_active)" -eq 3 ]
	# The host's jobs ran in both processes, and still no more than 3 at once.
	[ "$(jq -r 'select(.url) | (.worker / 1000000 | floor)' <<<"$output" | sort -u | wc -l)" -eq 2 ]
	stop_private_fixture
}

@test "a worker killed mid-crawl: its URLs go to another worker, one row each" {
	list 40 "$BATS_TEST_TMPDIR/l.txt" "delay/1000/k"
	out="$BATS_TEST_TMPDIR/out.jsonl"
	"$CRAWL" --mode=procs --procs 2 --format=jsonl -o "$out" "$BATS_TEST_TMPDIR/l.txt" \
		2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	w=$(workers_of $pid 2)
	[ "$(wc -w <<<"$w")" -eq 2 ]
	wait_until 10 requests_seen "$FIXTURE" 1
	kill -KILL ${w%% *}
	wait $pid
	grep -q "^crawl: worker process [01] killed by signal 9 (Killed) with [0-9]* URLs in flight: they go to another worker$" "$BATS_TEST_TMPDIR/err"
	[ "$(jq -r 'select(.url) | .url' "$out" | sort -u | wc -l)" -eq 40 ]
	[ "$(jq -c 'select(.url)' "$out" | wc -l)" -eq 40 ]
	jq -s -e 'map(select(.url) | .status == 200 and .length == 100) | all' "$out" >/dev/null
}

@test "every worker killed: the rest fail with rows that say why, one each" {
	list 40 "$BATS_TEST_TMPDIR/l.txt" "delay/1500/k"
	out="$BATS_TEST_TMPDIR/out.jsonl"
	"$CRAWL" --mode=procs --procs 2 -c 10 --format=jsonl -o "$out" "$BATS_TEST_TMPDIR/l.txt" \
		2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	w=$(workers_of $pid 2)
	wait_until 10 requests_seen "$FIXTURE" 1
	kill -KILL $w
	rc=0
	wait $pid || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(jq -c 'select(.url)' "$out" | wc -l)" -eq 40 ]
	[ "$(jq -r 'select(.url) | .url' "$out" | sort -u | wc -l)" -eq 40 ]
	jq -s -e 'map(select(.url) | .fail == "other") | all' "$out" >/dev/null
	jq -r 'select(.url) | .error' "$out" | sort -u >"$BATS_TEST_TMPDIR/why"
	cat "$BATS_TEST_TMPDIR/why"
	grep -qx "worker process [01] killed by signal 9 (Killed) while fetching it" "$BATS_TEST_TMPDIR/why"
	grep -qx "no worker process left" "$BATS_TEST_TMPDIR/why"
	[ "$(jq -r 'select(.summary) | .failed' "$out")" -eq 40 ]
}

@test "the workers end with the crawl when it is killed" {
	list 20 "$BATS_TEST_TMPDIR/l.txt" "delay/5000/k"
	"$CRAWL" --mode=procs --procs 2 -q "$BATS_TEST_TMPDIR/l.txt" 2>/dev/null &
	pid=$!
	w=$(workers_of $pid 2)
	[ -n "$w" ]
	kill -KILL $pid
	wait $pid || true
	for _ in $(seq 40); do
		alive=0
		for p in $w; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive -eq 0 ] && break
		sleep 0.05
	done
	[ $alive -eq 0 ]
}

@test "Ctrl-C and --deadline cancel the workers' transfers: one cancelled row each" {
	list 10 "$BATS_TEST_TMPDIR/l.txt" "delay/5000/k"
	out="$BATS_TEST_TMPDIR/out.jsonl"
	"$CRAWL" --mode=procs --procs 2 --format=jsonl -o "$out" "$BATS_TEST_TMPDIR/l.txt" \
		"$FIXTURE/bytes/5" 2>/dev/null &
	pid=$!
	workers_of $pid 2 >/dev/null
	wait_until 10 requests_seen "$FIXTURE" 1
	kill -INT $pid
	rc=0
	wait $pid || rc=$?
	[ "$rc" -eq 130 ]
	[ "$(jq -c 'select(.url)' "$out" | wc -l)" -eq 11 ]
	[ "$(jq -r 'select(.url and .fail == "cancelled") | .error' "$out" | sort -u)" = "cancelled: interrupted" ]
	[ "$(jq -r 'select(.url and .fail == null) | .url' "$out")" = "$FIXTURE/bytes/5" ]

	start=$(date +%s%N)
	run "$CRAWL" --mode=procs --procs 2 --deadline 0.5 --format=jsonl "$BATS_TEST_TMPDIR/l.txt"
	end=$(date +%s%N)
	[ "$status" -eq 1 ]
	[ "$(jq -c 'select(.url)' <<<"$output" | wc -l)" -eq 10 ]
	[ "$(jq -r 'select(.url) | .error' <<<"$output" | sort -u)" = "cancelled: --deadline reached" ]
	[ $(((end - start) / 1000000)) -lt 3000 ]
}

@test "--mode=all: the procs row sums its processes, and the legend says so" {
	run "$CRAWL" --mode=all -q --modes coro,procs --procs 2 "$FIXTURE/bytes/1" "$FIXTURE/bytes/2"
	[ "$status" -eq 0 ]
	grep -q '^procs: user_s, sys_s, vcsw, ivcsw and threads summed over its processes' <<<"$output"
	run "$CRAWL" --mode=all -q --modes coro,procs --procs 2 --format=jsonl "$FIXTURE/bytes/1"
	[ "$(jq -r 'select(.mode == "procs") | .threads' <<<"$output")" -eq 5 ]
	# Three processes' resident sets: more than coro's one.
	jq -s -e '(.[] | select(.mode == "procs") | .rss_mb) > (.[] | select(.mode == "coro") | .rss_mb)' <<<"$output"
	run "$CRAWL" --mode=all -q --modes coro,seq "$FIXTURE/bytes/1"
	! grep -q '^procs:' <<<"$output"
}
