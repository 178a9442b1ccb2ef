#!/usr/bin/env bats
# valgrind memcheck on one run of each model: no definite leaks, no errors.

load helpers

setup() {
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	# Sanitizer builds cannot run under valgrind.
	nm "$CRAWL" 2>/dev/null | grep -q '__asan_init\|__tsan_init' && skip "sanitizer build"
	fixture_up
}

# bats test_tags=models
@test "no definite leaks or memory errors in any model" {
	list="$BATS_TEST_TMPDIR/list.txt"
	printf '%s\n' "$FIXTURE/bytes/100" "$FIXTURE/gzip/5000" "$FIXTURE/redirect/2" \
		"$FIXTURE/status/404" "http://127.0.0.1:1/" "not a url" "$FIXTURE/delay/50/x" >"$list"
	# coro's two loops too, when the loops run coro.
	runs=($MODES)
	looped coro && runs+=("coro --loops 2")
	for m in "${runs[@]}"; do
		run valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
			--error-exitcode=99 "$CRAWL" --mode=$m --format=jsonl "$list"
		echo "mode $m: $status"
		echo "$output" | grep '^==' | head -40
		[ "$status" -eq 1 ]
		[ "$(grep -c '"url"' <<<"$output")" -eq 7 ]
	done
}
