#!/usr/bin/env bats
# --mode=all: every model on the same list, and the comparison table.

load helpers
bats_require_minimum_version 1.5.0   # run --separate-stderr

setup() {
	fixture_up
	list="$BATS_TEST_TMPDIR/list.txt"
	# Delays of the suite's seconds: a sanitizer's thread starts would
	# otherwise take what concurrency saves.
	printf '%s\n' "$FIXTURE/delay/$((SECOND_MS / 5))/1" "$FIXTURE/delay/$((3 * SECOND_MS / 10))/2" \
		"$FIXTURE/bytes/64" "http://127.0.0.1:1/" >"$list"
}

# table_rows: the comparison rows of the last output (after the header).
table_rows() { sed -n '/^mode  *urls  *ok  *failed/,/^$/p' <<<"$output" | tail -n +2 | grep -v '^$'; }

# bats test_tags=models
@test "one comparison row per model with the right counts" {
	run "$CRAWL" --mode=all "$list"
	[ "$status" -eq 1 ]
	grep -q '^Shared: timeout 30s' <<<"$output"
	header=$(grep '^mode ' <<<"$output")
	[ "$(awk '{print $1, $2, $3, $4}' <<<"$header")" = "mode urls ok failed" ]
	[ "$(table_rows | awk '{print $1, $2, $3, $4}' | tr '\n' ';')" = "$(per_mode "4 3 1")" ]
	# Each model's article table came first.
	[ "$(grep -c '^Use time:' <<<"$output")" -eq "$NALL" ]
	[ "$(grep -c '^Length:' <<<"$output")" -eq $((4 * NALL)) ]
}

# bats test_tags=models
@test "-q prints only the comparison table" {
	run "$CRAWL" --mode=all -q "$list"
	[ "$status" -eq 1 ]
	[ "$(grep -c '^Length:' <<<"$output")" -eq 0 ]
	[ "$(table_rows | wc -l)" -eq "$NALL" ]
}

@test "--modes picks a subset, in the order given" {
	run "$CRAWL" --mode=all -q --modes coro,seq "$list"
	[ "$(table_rows | awk '{print $1}' | tr '\n' ' ')" = "coro seq " ]
	run "$CRAWL" --mode=all --modes coro,nope "$list"
	[ "$status" -eq 2 ]
	grep -q -- "--modes: unknown mode 'nope'" <<<"$output"
}

@test "--repeat reports the median and the spread" {
	run "$CRAWL" --mode=all --format=jsonl --repeat 3 --modes seq,coro "$list"
	[ "$(wc -l <<<"$output")" -eq 2 ]
	for m in seq coro; do
		row=$(jq -c "select(.mode == \"$m\")" <<<"$output")
		jq -e '.min_s <= .wall_s and .wall_s <= .max_s and .urls == 4 and .ok == 3' <<<"$row"
	done
}

# bats test_tags=models
@test "CSV comparison parses with the named columns" {
	run "$CRAWL" --mode=all --format=csv "$list"
	[ "${lines[0]}" = "mode,urls,ok,failed,retries,wall_s,min_s,max_s,speedup,user_s,sys_s,rss_mb,threads,vcsw,ivcsw,conns,dns,reuse,concurrency,p50_ms,p90_ms,p99_ms,max_ms,ttfb_p50_ms,ttfb_p90_ms,ttfb_p99_ms,ttfb_max_ms" ]
	[ "${#lines[@]}" -eq $((NALL + 1)) ]
	for i in $(seq "$NALL"); do
		[ "$(awk -F, '{print NF}' <<<"${lines[$i]}")" -eq 27 ]
	done
	# Data, not display: a plain speed-up, times to the microsecond.
	[ "$(printf '%s\n' "${lines[@]:1}" | awk -F, '$9 !~ /^[0-9]+\.[0-9]+$/ || $6 !~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]$/' | wc -l)" -eq 0 ]
	# The JSON lines have the same columns in the same order.
	run "$CRAWL" --mode=all --format=jsonl --modes seq "$list"
	[ "$(jq -r 'keys_unsorted | join(",")' <<<"$output")" = "mode,urls,ok,failed,retries,wall_s,min_s,max_s,speedup,user_s,sys_s,rss_mb,threads,vcsw,ivcsw,conns,dns,reuse,concurrency,p50_ms,p90_ms,p99_ms,max_ms,ttfb_p50_ms,ttfb_p90_ms,ttfb_p99_ms,ttfb_max_ms" ]
}

# bats test_tags=models
@test "percentiles of total time and time to first byte are present and ordered" {
	run "$CRAWL" --mode=all --format=jsonl "$list"
	[ "$(wc -l <<<"$output")" -eq "$NALL" ]
	for m in $ALL_MODES; do
		row=$(jq -c "select(.mode == \"$m\")" <<<"$output")
		# Three URLs were fetched, the slowest after 300 ms.
		jq -e '0 < .p50_ms and .p50_ms <= .p90_ms and .p90_ms <= .p99_ms and .p99_ms <= .max_ms
			and .max_ms >= 300 and .max_ms < 2000
			and 0 < .ttfb_p50_ms and .ttfb_p50_ms <= .ttfb_p90_ms and .ttfb_p90_ms <= .ttfb_p99_ms
			and .ttfb_p99_ms <= .ttfb_max_ms and .ttfb_max_ms <= .max_ms' <<<"$row"
	done
	run "$CRAWL" --mode=all -q "$list"
	header=$(grep '^mode ' <<<"$output")
	[ "$(awk '{for (i = NF - 7; i <= NF; i++) printf "%s ", $i}' <<<"$header")" = "p50_ms p90_ms p99_ms max_ms ttfb_p50_ms ttfb_p90_ms ttfb_p99_ms ttfb_max_ms " ]
}

# bats test_tags=models
@test "the JSON summary of every model has the percentiles, ordered" {
	for m in $MODES; do
		run "$CRAWL" --mode="$m" --format=jsonl "$list"
		[ "$status" -eq 1 ]
		sum=$(jq -c 'select(.summary)' <<<"$output")
		jq -e '.urls == 4 and .ok == 3
			and 0 < .p50_ms and .p50_ms <= .p90_ms and .p90_ms <= .p99_ms and .p99_ms <= .max_ms
			and .max_ms >= 300
			and 0 < .ttfb_p50_ms and .ttfb_p50_ms <= .ttfb_p90_ms and .ttfb_p90_ms <= .ttfb_p99_ms
			and .ttfb_p99_ms <= .ttfb_max_ms' <<<"$sum"
	done
}

# bats test_tags=models
@test "concurrent models beat sequential on delays, and thread counts differ" {
	# Two delays of 1 and 1.5 of the suite's seconds: the sequential run
	# waits for both, a concurrent one for the longer, and the second
	# between them is more than a loaded machine's noise.
	printf '%s\n' "$FIXTURE/delay/$SECOND_MS/1" "$FIXTURE/delay/$((3 * SECOND_MS / 2))/2" \
		"$FIXTURE/bytes/64" "http://127.0.0.1:1/" >"$list"
	run "$CRAWL" --mode=all --format=jsonl "$list"
	# --mode=all runs every model, whatever SKIP_MODES leaves out.
	wall() { jq -r --arg m "$1" 'select(.mode == $m) | .wall_s' <<<"$output"; }
	for s in $ALL_MODES; do
		sequential $s || continue
		for m in $ALL_MODES; do
			sequential $m && continue
			echo "$s $(wall $s) s, $m $(wall $m) s"
			awk -v s="$(wall $s)" -v w="$(wall $m)" 'BEGIN { exit !(w < s) }'
		done
	done
	[ "$(jq -r 'select(.mode == "seq") | .threads' <<<"$output")" -eq 1 ]
	[ "$(jq -r 'select(.mode == "coro") | .threads' <<<"$output")" -eq 1 ]
	[ "$(jq -r 'select(.mode == "pool") | .threads' <<<"$output")" -eq 11 ]
	[ "$(jq -r 'select(.mode == "thread") | .threads' <<<"$output")" -ge 2 ]
}

# bats test_tags=models
@test "scripts/compare.sh runs the article experiment in short form" {
	run env BUILD="$BUILD" DELAYS="100 200 300" scripts/compare.sh -q
	[ "$status" -eq 0 ]
	# Its table: the main columns, ok and failed after the mode.
	[ "$(sed -n '/^mode  *ok  *failed/,/^$/p' <<<"$output" | sed '1d; /^$/d' | awk '{print $1, $2, $3}' | tr '\n' ';')" = "$(per_mode "3 0")" ]
}

# bats test_tags=models
@test "each model runs as a fresh crawl: rss_mb counts what /usr/bin/time counts for the same run" {
	[ -x /usr/bin/time ] || skip "/usr/bin/time is not installed"
	# What is measured is --mode=all's child, not a model: one sequential
	# and one concurrent model stand for the others. Not procs, whose row
	# sums its processes where /usr/bin/time counts the largest one.
	for m in seq coro; do
		/usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/time" "$CRAWL" --mode=$m -q "$list" >/dev/null 2>&1 || true
		peer_kb=$(tail -1 "$BATS_TEST_TMPDIR/time")
		run "$CRAWL" --mode=all --modes $m --format=jsonl "$list"
		rss_mb=$(jq -r .rss_mb <<<"$output")
		echo "$m: --mode=all $rss_mb MB, /usr/bin/time $peer_kb KB"
		# A forked child counted under a third of it (3.8 against 13.4 MB).
		awk -v a="$rss_mb" -v b="$peer_kb" 'BEGIN { exit !(a * 1024 >= 0.75 * b && a * 1024 <= 1.5 * b) }'
	done
}

# bats test_tags=models
@test "a list on standard input is read once, its bad lines reported once, and every model gets all of it" {
	run --separate-stderr bash -c "printf '%s\n' '$FIXTURE/bytes/3' 'not a url' '$FIXTURE/bytes/4' | '$CRAWL' --mode=all --format=csv -"
	[ "$status" -eq 1 ]
	[ "$(grep -c '^-:2: not an absolute http or https URL' <<<"$stderr")" -eq 1 ]
	[ "${#lines[@]}" -eq $((NALL + 1)) ]
	# urls, ok, failed: 3, 2, 1 in every model.
	[ "$(tail -n +2 <<<"$output" | cut -d, -f1-4 | tr '\n' ';')" = "$(for m in $("$CRAWL" --list-modes); do printf '%s,3,2,1;' "$m"; done)" ]
	# A named pipe too.
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	printf '%s\n' "$FIXTURE/bytes/3" "$FIXTURE/bytes/4" >"$BATS_TEST_TMPDIR/fifo" &
	run "$CRAWL" --mode=all --modes seq,coro --format=csv "$BATS_TEST_TMPDIR/fifo"
	[ "$status" -eq 0 ]
	[ "$(tail -n +2 <<<"$output" | cut -d, -f1-4 | tr '\n' ';')" = "seq,2,2,0;coro,2,2,0;" ]
}

@test "the dns column counts the names each model looked up, none for names given by --resolve" {
	port=${FIXTURE##*:}
	printf '%s\n' "http://localhost:$port/bytes/10" "http://localhost:$port/bytes/20" "$FIXTURE/bytes/5" >"$list"
	run "$CRAWL" --mode=all --modes seq,coro --format=jsonl "$list"
	[ "$status" -eq 0 ]
	[ "$(jq -r '"\(.mode) \(.dns)"' <<<"$output" | tr '\n' ';')" = "seq 1;coro 1;" ]
	run "$CRAWL" --mode=all --modes seq,coro --format=jsonl --resolve "localhost:$port:127.0.0.1" "$list"
	[ "$(jq -r '"\(.mode) \(.dns)"' <<<"$output" | tr '\n' ';')" = "seq 0;coro 0;" ]
	run "$CRAWL" --mode=all --modes coro -q "$list"
	[ "$(grep '^mode ' <<<"$output" | awk '{ for (i = 1; i <= NF; i++) if ($i == "dns") print i }')" = 17 ]
}
