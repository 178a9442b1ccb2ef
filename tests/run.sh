#!/bin/bash
# Runs every test: the C unit tests (cmocka), then the end-to-end bats tests
# against a fixture server started here on a free loopback port. Ends with
# one "N passed, N failed" line and a non-zero status when anything failed.
#   BUILD=dir       where the programs are (default build)
#   TESTS="a b"     only these bats files (names under tests/e2e, no .bats)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
passed=0 failed=0 failures=()

. scripts/fixture-lib.sh
log=$(mktemp -d "${TMPDIR:-/tmp}/crawl-tests.XXXXXX")
trap 'fixture_stop; rm -rf "$log"' EXIT

echo "== unit tests"
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	if "$t" >"$log/$name.out" 2>&1; then rc=0; else rc=$?; fi
	ok=$(grep -c '^\[       OK \]' "$log/$name.out")
	bad=$(grep -c '^\[  FAILED  \] [a-z_]' "$log/$name.out")
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then bad=1; fi   # crashed
	passed=$((passed + ok)); failed=$((failed + bad))
	printf '%-28s %3d passed, %d failed\n' "$name" "$ok" "$bad"
	if [ "$bad" -ne 0 ]; then
		failures+=("$name"); sed 's/^/    /' "$log/$name.out" | tail -40
	fi
done

echo "== end-to-end tests"
if ! fixture_start "$log" --root testdata/site; then
	failed=$((failed + 1))
else
	export FIXTURE_PORT=$(cat "$log/port")
	export FIXTURE=$FIXTURE_BASE
	export BUILD CRAWL="$PWD/$BUILD/crawl" FIXTURE_SERVER="$PWD/$BUILD/fixture-server"
	files=()
	if [ -n "${TESTS:-}" ]; then
		for t in $TESTS; do files+=("tests/e2e/$t.bats"); done
	else
		files=(tests/e2e/*.bats)
	fi
	for f in "${files[@]}"; do
		[ -f "$f" ] || continue
		name=$(basename "$f" .bats)
		bats --tap "$f" >"$log/$name.tap" 2>&1
		ok=$(grep -c '^ok ' "$log/$name.tap")
		bad=$(grep -c '^not ok ' "$log/$name.tap")
		if ! grep -q '^1\.\.' "$log/$name.tap"; then bad=$((bad + 1)); fi
		passed=$((passed + ok)); failed=$((failed + bad))
		printf '%-28s %3d passed, %d failed\n' "$name" "$ok" "$bad"
		if [ "$bad" -ne 0 ]; then
			failures+=("$name"); sed -n '/^not ok/,/^ok /p' "$log/$name.tap" | grep -v '^ok ' | sed 's/^/    /' | head -60
		fi
	done
fi

echo
[ ${#failures[@]} -gt 0 ] && echo "failing: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
