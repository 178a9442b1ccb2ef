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
	[ "$(jq -r 'select(.summary) | .threads' <<<"$output")" -eq 10 ]    # 1 + 3 x (loop + reader + heartbeat)
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

@test "--links-out across workers: every link of every page, those a worker sent before and those at --depth too, in one file" {
	start_private_fixture
	run "$CRAWL" --mode=procs --procs 2 --depth 3 --format=jsonl --links-out "$BATS_TEST_TMPDIR/l.jsonl" "$PFIX/graph/300/5/"
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.url) | (.worker / 1000000 | floor)' <<<"$output" | sort -u | wc -l)" -eq 2 ]
	# 156 pages within depth 3; a page links to its children, its parent
	# and itself: the root is linked to from itself and its five children.
	[ "$(jq -r 'select(.url) | .url' <<<"$output" | wc -l)" -eq 156 ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/l.jsonl")" -eq "$(jq -s 'map(select(.url) | .links) | add' <<<"$output")" ]
	[ "$(jq -r 'select(.to == "'"$PFIX"'/graph/300/5/") | .from' "$BATS_TEST_TMPDIR/l.jsonl" | sort -u | wc -l)" -eq 6 ]
	[ "$(jq -c 'select(.admitted)' "$BATS_TEST_TMPDIR/l.jsonl" | wc -l)" -eq 155 ]
	[ "$(jq -c 'select(.reason == "depth")' "$BATS_TEST_TMPDIR/l.jsonl" | wc -l)" -eq "$(jq -s 'map(select(.url and .depth == 3) | .links) | add' <<<"$output")" ]
	parents_hold <<<"$output"
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
	# Four in flight over the two workers: 10 s of pages, so that the kill
	# lands while the worker still has URLs, however loaded the machine.
	list 40 "$BATS_TEST_TMPDIR/l.txt" "delay/1000/k"
	out="$BATS_TEST_TMPDIR/out.jsonl"
	"$CRAWL" --mode=procs --procs 2 -c 4 --format=jsonl -o "$out" "$BATS_TEST_TMPDIR/l.txt" \
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
	[ "$(jq -r 'select(.mode == "procs") | .threads' <<<"$output")" -eq 7 ]
	# Three processes' resident sets: more than coro's one.
	jq -s -e '(.[] | select(.mode == "procs") | .rss_mb) > (.[] | select(.mode == "coro") | .rss_mb)' <<<"$output"
	run "$CRAWL" --mode=all -q --modes coro,seq "$FIXTURE/bytes/1"
	! grep -q '^procs:' <<<"$output"
}

@test "a worker stopped with SIGSTOP is given up after --worker-timeout: its URLs go to the others, one row each" {
	# Eight at a time, half a second each: the crawl outlasts the stop.
	list 40 "$BATS_TEST_TMPDIR/l.txt" "delay/500/s"
	out="$BATS_TEST_TMPDIR/out.jsonl"
	timeout 30 "$CRAWL" --mode=procs --procs 2 -c 8 --worker-timeout 1 --format=jsonl -o "$out" \
		"$BATS_TEST_TMPDIR/l.txt" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	w=$(workers_of "$(crawl_under $pid)" 2)
	[ "$(wc -w <<<"$w")" -eq 2 ]
	wait_until 10 requests_seen "$FIXTURE" 1
	stopped=${w%% *}
	kill -STOP $stopped
	start=$(date +%s%N)
	rc=0
	wait $pid || rc=$?
	end=$(date +%s%N)
	kill -CONT $stopped 2>/dev/null || true
	cat "$BATS_TEST_TMPDIR/err"
	[ "$rc" -eq 0 ]
	grep -q "^crawl: worker process [01] stopped answering (not heard from for 1\.[0-9] s): killed, with [0-9]* URLs in flight: they go to another worker$" "$BATS_TEST_TMPDIR/err"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/err")" -eq 1 ]
	[ "$(jq -c 'select(.url)' "$out" | wc -l)" -eq 40 ]
	[ "$(jq -r 'select(.url) | .url' "$out" | sort -u | wc -l)" -eq 40 ]
	jq -s -e 'map(select(.url) | .status == 200 and .length == 100) | all' "$out" >/dev/null
	# Rows in input order are not held behind it: its jobs ran again once
	# it had been silent a second, and the crawl ended (2.5 s of fetches).
	[ $(((end - start) / 1000000)) -lt 10000 ]
	# It is gone, not left stopped.
	! kill -0 $stopped 2>/dev/null
}

@test "a slow worker is not given up: its heartbeat goes on while a transfer takes three times --worker-timeout" {
	run "$CRAWL" --mode=procs --procs 2 --worker-timeout 1 --format=jsonl \
		"$FIXTURE/delay/3000/a" "$FIXTURE/delay/3000/b" "$FIXTURE/bytes/5"
	[ "$status" -eq 0 ]
	! grep -q "stopped answering" <<<"$output"
	[ "$(jq -r 'select(.url) | .status' <<<"$output" | tr '\n' ' ')" = "200 200 200 " ]
	run "$CRAWL" --mode=procs --worker-timeout 0 "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- "--worker-timeout: expected a number of seconds above 0, got '0'" <<<"$output"
	run "$CRAWL" --mode=coro -q --worker-timeout 3 "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "crawl: warning: --worker-timeout is ignored here: it bounds the worker processes of --mode=procs" ]
}

@test "nothing in a procs crawl wakes on a timer: while a page takes 1.5 s, no wait of the coordinator or of its worker's reader runs out" {
	command -v strace >/dev/null || skip "strace is not installed"
	# LeakSanitizer cannot run under ptrace (make sanitize): its leak
	# check is left to the other tests here.
	run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -ff -qq -e trace=poll,ppoll -o "$BATS_TEST_TMPDIR/poll" \
		"$CRAWL" --mode=procs --procs 1 -q "$FIXTURE/delay/1500/a"
	[ "$status" -eq 0 ]
	cat "$BATS_TEST_TMPDIR"/poll.* >"$BATS_TEST_TMPDIR/all"
	# The coordinator waits on its waker and its worker, the worker's
	# reader on its socket and its wake-up pipe: two descriptors each.
	[ "$(grep -cE '^poll\(\[\{fd=[0-9]+, events=POLLIN\}, \{fd=[0-9]+, events=POLLIN\}\], 2, ' "$BATS_TEST_TMPDIR/all")" -ge 2 ]
	# None ran out of time: each is woken by what it waits for (the
	# memory figure is taken as processes end; libcurl's looks at a
	# socket, with no time to wait, aside).
	grep -E '= 0 \(Timeout\)$' "$BATS_TEST_TMPDIR/all" | grep -vE ', 0\) += 0 |\{tv_sec=0, tv_nsec=0\}' >"$BATS_TEST_TMPDIR/out" || true
	cat "$BATS_TEST_TMPDIR/out"
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
}

@test "a crawl stopped and continued as a whole (^Z, fg) gives up no worker" {
	# Two at a time, 0.8 s each: the crawl outlasts the stop's start.
	list 10 "$BATS_TEST_TMPDIR/l.txt" "delay/800/z"
	out="$BATS_TEST_TMPDIR/out.jsonl"
	timeout 30 "$CRAWL" --mode=procs --procs 2 -c 2 --worker-timeout 1 --format=jsonl -o "$out" \
		"$BATS_TEST_TMPDIR/l.txt" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	cpid=$(crawl_under $pid)
	w=$(workers_of $cpid 2)
	wait_until 10 requests_seen "$FIXTURE" 1
	kill -STOP $cpid $w
	sleep 2.5
	kill -CONT $w $cpid
	rc=0
	wait $pid || rc=$?
	cat "$BATS_TEST_TMPDIR/err"
	[ "$rc" -eq 0 ]
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
	[ "$(jq -c 'select(.url and .status == 200)' "$out" | wc -l)" -eq 10 ]
}

@test "SIGTERM, SIGINT and --deadline with a stopped worker are obeyed within a second: a cancelled row each" {
	list 20 "$BATS_TEST_TMPDIR/l.txt" "delay/5000/t"
	out="$BATS_TEST_TMPDIR/out.jsonl"
	for sig in TERM INT; do
		timeout 30 "$CRAWL" --mode=procs --procs 2 --format=jsonl -o "$out" \
			"$BATS_TEST_TMPDIR/l.txt" 2>"$BATS_TEST_TMPDIR/err" &
		pid=$!
		cpid=$(crawl_under $pid)
		w=$(workers_of $cpid 2)
		wait_until 10 requests_seen "$FIXTURE" 2
		kill -STOP ${w%% *}
		start=$(date +%s%N)
		kill -$sig $cpid
		rc=0
		wait $pid || rc=$?
		end=$(date +%s%N)
		[ "$rc" -eq $([ $sig = TERM ] && echo 143 || echo 130) ]
		[ $(((end - start) / 1000000)) -lt $((SECOND_MS + 800)) ]
		[ "$(jq -c 'select(.url)' "$out" | wc -l)" -eq 20 ]
		[ "$(jq -r 'select(.url) | .error' "$out" | sort -u)" = "cancelled: interrupted" ]
		! kill -0 ${w%% *} 2>/dev/null
	done

	timeout 30 "$CRAWL" --mode=procs --procs 2 --deadline 1.5 --format=jsonl -o "$out" \
		"$BATS_TEST_TMPDIR/l.txt" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	start=$(date +%s%N)
	w=$(workers_of "$(crawl_under $pid)" 2)
	kill -STOP ${w%% *}
	rc=0
	wait $pid || rc=$?
	end=$(date +%s%N)
	[ "$rc" -eq 1 ]
	[ $(((end - start) / 1000000)) -lt $((1500 + SECOND_MS + 800)) ]
	[ "$(jq -c 'select(.url)' "$out" | wc -l)" -eq 20 ]
	[ "$(jq -r 'select(.url) | .error' "$out" | sort -u)" = "cancelled: --deadline reached" ]
}

# crawl_under PID: the crawl that timeout PID runs, once it is started.
crawl_under() {
	local c
	for _ in $(seq 100); do
		c=$(pgrep -P "$1") && break
		sleep 0.02
	done
	echo "$c"
}

# as_user LIMIT CMD...: runs CMD as a user of its own (no other process:
# root ignores ulimit -u) under ulimit -u LIMIT.
as_user() {
	local limit=$1 uid=$((61000 + RANDOM % 4000))
	shift
	setpriv --reuid=$uid --regid=$uid --clear-groups bash -c "ulimit -u $limit; exec \"\$@\"" _ "$@"
}

@test "workers that cannot be forked (ulimit -u): the crawl goes on with those that could, every row written; with none, every URL fails with a row" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run as a user of its own"
	command -v setpriv >/dev/null || skip "needs setpriv"
	others_reach "$CRAWL" || skip "another user cannot reach $CRAWL (a folder above it is root's alone)"
	case "$BUILD" in *tsan*) skip "ThreadSanitizer's own thread counts against ulimit -u" ;; esac
	urls=()
	for i in $(seq 40); do urls+=("$FIXTURE/bytes/$i"); done
	# The crawl, 3 threads of its own, and one worker of 3 (its loop,
	# reader and heartbeat): room for one of 4.
	run timeout 30 bash -c "$(declare -f as_user); as_user 7 \"\$@\" 2>&1 >/dev/null" _ \
		"$CRAWL" --mode=procs --procs 4 -q "${urls[@]}"
	[ "$status" -eq 0 ]
	[ "$output" = "crawl: only 1 of 4 worker processes could be started: the process limit (ulimit -u) leaves room for no more: fork: Resource temporarily unavailable" ]
	run timeout 30 bash -c "$(declare -f as_user); as_user 7 \"\$@\" 2>/dev/null" _ \
		"$CRAWL" --mode=procs --procs 4 --format=jsonl "${urls[@]}"
	[ "$status" -eq 0 ]
	[ "$(jq -c 'select(.url and .status == 200)' <<<"$output" | wc -l)" -eq 40 ]
	# No room for a worker: a row for every URL, and why.
	run timeout 30 bash -c "$(declare -f as_user); as_user 5 \"\$@\" 2>&1" _ \
		"$CRAWL" --mode=procs --procs 4 --format=jsonl "${urls[@]}"
	[ "$status" -eq 1 ]
	grep -qx "crawl: no worker process could be started: the process limit (ulimit -u) leaves room for no more: fork: Resource temporarily unavailable; every URL fails" <<<"$output"
	[ "$(jq -c 'select(.url)' <<<"$(grep '^{' <<<"$output")" | wc -l)" -eq 40 ]
	[ "$(grep '^{' <<<"$output" | jq -r 'select(.url) | "\(.fail) \(.error)"' | sort -u)" = "other no worker process could be started" ]
}

@test "--dedupe: one digest set for the crawl's workers: of duplicate bodies fetched on two hosts, one first each, the rest naming it" {
	# Two hosts, so two workers: each of the 5 bodies comes 12 times, 6 on
	# each host, all in flight together.
	for i in $(seq 30); do
		echo "$FIXTURE/bytes/$((i % 5 + 1))000?i=$i"
		echo "http://localhost:$FIXTURE_PORT/bytes/$((i % 5 + 1))000?i=$i"
	done >"$BATS_TEST_TMPDIR/l"
	run "$CRAWL" --mode=procs --procs 2 --format=jsonl --dedupe "$BATS_TEST_TMPDIR/l"
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.url) | (.worker / 1000000 | floor)' <<<"$output" | sort -u | wc -l)" -eq 2 ]
	# Without a shared set each worker would have a first of each: 10.
	[ "$(jq -r 'select(.url and .duplicate_of == null) | .digest' <<<"$output" | sort -u | wc -l)" -eq 5 ]
	[ "$(jq -r 'select(.url and .duplicate_of == null)' <<<"$output" | jq -s length)" -eq 5 ]
	# Each duplicate names the first of its digest, wherever it was fetched.
	jq -s -e 'map(select(.url)) | (map(select(.duplicate_of == null) | {(.digest): .final_url}) | add) as $first
		| map(select(.duplicate_of)) | length == 55 and all(.duplicate_of == $first[.digest])' <<<"$output"
}
