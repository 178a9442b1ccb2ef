#!/usr/bin/env bats
# --trace FILE: a Chrome trace-event file for Perfetto, every model.

load helpers

setup() {
	fixture_up
	list="$BATS_TEST_TMPDIR/list.txt"
	printf '%s\n' "$FIXTURE/delay/200/1" "$FIXTURE/delay/100/2" "$FIXTURE/bytes/64" \
		"$FIXTURE/status/404" "http://127.0.0.1:1/" >"$list"
	# The demo's five URLs (1, 2, 3, 4 and 4 seconds), a fifth as long.
	demo="$BATS_TEST_TMPDIR/demo.txt"
	i=0
	for d in 200 400 600 800 800; do i=$((i + 1)); echo "$FIXTURE/delay/$d/$i"; done >"$demo"
	trace="$BATS_TEST_TMPDIR/trace.json"
}

# transfers: the transfer slices of the trace, one JSON object a line.
transfers() { jq -c '.traceEvents[] | select(.ph == "X" and .cat == "transfer")' "$trace"; }

# bats test_tags=models
@test "every model: valid JSON, one transfer per URL, on the tracks of the rows' workers" {
	for m in $MODES; do
		run "$CRAWL" --mode="$m" --format=jsonl --trace "$trace" "$list"
		[ "$status" -eq 1 ]
		jq -e '.traceEvents | length > 0' "$trace" >/dev/null
		[ "$(transfers | wc -l)" -eq 5 ]
		[ "$(transfers | jq -r '.args.url' | sort | tr '\n' ' ')" = "$(sort "$list" | tr '\n' ' ')" ]
		# The tracks (tid) are the worker ids of the JSON lines.
		rows=$(grep -v '"summary"' <<<"$output" | jq -r '.worker' | sort -n | tr '\n' ' ')
		[ "$(transfers | jq -r '.tid' | sort -n | tr '\n' ' ')" = "$rows" ]
		# Status, length and failure are in the arguments.
		[ "$(transfers | jq -r 'select(.args.url | endswith("/bytes/64")) | "\(.args.status) \(.args.length)"')" = "200 64" ]
		[ "$(transfers | jq -r 'select(.args.url | endswith("/status/404")) | .args.status')" = 404 ]
		[ "$(transfers | jq -r 'select(.args.url | startswith("http://127.0.0.1:1/")) | .args.fail')" = connect ]
		# A process track per process: procs has one per worker process.
		if [ "$m" = procs ]; then
			transfers | jq -e 'select(.pid != 1001 + (.tid / 1000000 | floor))' && false
		else
			[ "$(transfers | jq -r '.pid' | sort -u)" = 1000 ]
		fi
		name=$(jq -r '.traceEvents[] | select(.ph == "M" and .name == "process_name" and .pid == 1000) | .args.name' "$trace")
		[ "$name" = "$m" ]
	done
}

# bats test_tags=models
@test "every model: phases nest inside their transfer, in order, from its start" {
	for m in $MODES; do
		run "$CRAWL" --mode="$m" -q --trace "$trace" "$list"
		jq -e '
			[.traceEvents[] | select(.ph == "X")] as $x
			| [$x[] | select(.cat == "transfer")] as $t
			| [$x[] | select(.cat == "phase")] as $p
			| ($p | length) > 0
			and all($p[]; . as $q | any($t[]; .pid == $q.pid and .tid == $q.tid
				and .ts <= $q.ts and $q.ts + $q.dur <= .ts + .dur))
			and all($t[] | select(.args.status == 200); . as $s
				| [$p[] | select(.pid == $s.pid and .tid == $s.tid and .ts >= $s.ts
					and .ts + .dur <= $s.ts + $s.dur)] | map(.name) | last == "body")' "$trace" >/dev/null
	done
}

@test "a sequential run never has two transfers at once" {
	run "$CRAWL" --mode=seq -q --trace "$trace" "$demo" "$list"
	[ "$(transfers | wc -l)" -eq 10 ]
	transfers | jq -s -e 'sort_by(.ts) | [range(1; length) as $i | .[$i].ts >= .[$i - 1].ts + .[$i - 1].dur] | all' >/dev/null
	jq -e '[.traceEvents[] | select(.name == "transfers in flight") | .args.transfers] | max == 1' "$trace"
	# One connection, kept: the refused port's is the only other one.
	jq -e '[.traceEvents[] | select(.name == "connections open") | .args.connections] | max <= 2' "$trace"
}

@test "thread and coro have the demo's five URLs in flight at once" {
	# The two models with a lane (tid) a transfer in the trace: a thread
	# each, a coroutine each. pool's lanes are its workers, procs' its
	# processes; every model's trace is the test of the one file below.
	for m in thread coro; do
		run "$CRAWL" --mode="$m" -q --trace "$trace" "$demo"
		[ "$status" -eq 0 ]
		[ "$(transfers | wc -l)" -eq 5 ]
		# A moment inside all five: the last start is before the first end.
		transfers | jq -s -e '(map(.ts) | max) < (map(.ts + .dur) | min)' >/dev/null
		jq -e '[.traceEvents[] | select(.name == "transfers in flight") | .args.transfers] | max == 5' "$trace"
		# Sampled as each starts (before it connects) and ends (its own
		# connection closed): the others' four are open when the first ends.
		jq -e '[.traceEvents[] | select(.name == "connections open") | .args.connections] | max == 4' "$trace"
		[ "$(transfers | jq -r '.tid' | sort -u | wc -l)" -eq 5 ]
	done
}

@test "the pool takes a job only when a worker is free where a pace may hold jobs back, and queues ahead where none can" {
	# --per-host keeps hosts apart: a job is taken only for a free worker.
	run "$CRAWL" --mode=pool -c 2 --per-host 5 -q --trace "$trace" "$demo"
	[ "$status" -eq 0 ]
	[ "$(jq '[.traceEvents[] | select(.cat == "queue" and .ph == "b")] | length' "$trace")" -eq 5 ]
	[ "$(jq '[.traceEvents[] | select(.cat == "queue" and .ph == "e")] | length' "$trace")" -eq 5 ]
	# Two workers: the third URL starts when the first (200 ms) ends, and
	# is taken then, not queued for a worker meanwhile.
	transfers | jq -s -e 'map(select(.args.url | endswith("/3")))[0].ts >= 150000' >/dev/null
	transfers | jq -s -e 'map(.args.queued_ms) | max < 50' >/dev/null
	jq -e '[.traceEvents[] | select(.name == "transfers in flight") | .args.transfers] | max == 2' "$trace"
	# A plain list: nothing can hold a job back, and the pool's queue
	# holds the next ones (the executor's way), so a worker that is done
	# starts one at once; the third URL waited there for a worker.
	run "$CRAWL" --mode=pool -c 2 -q --trace "$trace" "$demo"
	[ "$status" -eq 0 ]
	transfers | jq -s -e 'map(select(.args.url | endswith("/3")))[0].args.queued_ms >= 150' >/dev/null
	jq -e '[.traceEvents[] | select(.name == "transfers in flight") | .args.transfers] | max == 2' "$trace"
}

# bats test_tags=models
@test "--mode=all writes one process track per model into one file" {
	run "$CRAWL" --mode=all -q --trace "$trace" "$list"
	[ "$status" -eq 1 ]
	[ "$(transfers | wc -l)" -eq $((5 * NALL)) ]
	names=$(jq -r '.traceEvents[] | select(.ph == "M" and .name == "process_name" and .pid % 1000 == 0 and .pid > 0) | .args.name' "$trace" | tr '\n' ' ')
	[ "$names" = "$ALL_MODES" ]
	# Each model's transfers under its own pid (procs: its workers').
	[ "$(transfers | jq -r '(.pid / 1000 | floor)' | sort -u | wc -l)" -eq "$NALL" ]
}

# bats test_tags=models
@test "a trace that cannot be written ends the run with 23, in every model" {
	for m in $MODES all; do
		run "$CRAWL" --mode="$m" -q --trace /dev/full "$list"
		[ "$status" -eq 23 ]
		grep -q '^crawl: writing trace: No space left on device' <<<"$output"
	done
	# Past its first kilobyte: the run stops there.
	for m in $MODES; do
		run bash -c "trap '' XFSZ; ulimit -f 1; exec \"\$0\" --mode=$m -q --trace \"\$1\" \"\$2\" \"\$2\"" \
			"$CRAWL" "$trace" "$list"
		[ "$status" -eq 23 ]
		grep -q '^crawl: writing trace: File too large' <<<"$output"
	done
	run "$CRAWL" -q --trace "$BATS_TEST_TMPDIR/no/such/dir" "$list"
	[ "$status" -eq 2 ]
}
