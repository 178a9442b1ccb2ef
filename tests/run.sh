#!/bin/bash
# Runs every test: the C unit tests (cmocka), then the end-to-end bats tests,
# many at once (bats --jobs, through GNU parallel). Each end-to-end test
# starts a fixture server of its own on a free loopback port and works in a
# scratch folder of its own, so tests share nothing but the machine; a test
# whose body starts with "alone" (helpers.bash) is skipped among the others
# and run afterwards by itself, and a test that failed among the others is
# run once more by itself (see below). Ends with the ten slowest tests, the
# tests that passed only alone, one "N passed, N failed" line and a
# non-zero status when anything failed.
#   BUILD=dir       where the programs are (default build)
#   TESTS="a b"     only these bats files (names under tests/e2e, no .bats)
#   TAGS=t          only the end-to-end tests tagged t ("# bats test_tags=t";
#                   make check-model runs those tagged models)
#   JOBS=N          end-to-end tests at once (default 4 per core)
#   TEST_TIMEOUT=S  a test still running after S seconds fails (default 600)
#   RERUN=0         a test that failed among the others is not run again
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
JOBS=${JOBS:-$(($(nproc) * 4))}
passed=0 failed=0 failures=()

log=$(mktemp -d "${TMPDIR:-/tmp}/crawl-tests.XXXXXX")
trap 'rm -rf "$log"' EXIT

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

files=()
if [ -n "${TESTS:-}" ]; then
	for t in $TESTS; do files+=("tests/e2e/$t.bats"); done
else
	files=(tests/e2e/*.bats)
fi
export BUILD CRAWL="$PWD/$BUILD/crawl" FIXTURE_SERVER="$PWD/$BUILD/fixture-server"
export BATS_TEST_TIMEOUT=${TEST_TIMEOUT:-600}
filter=()
[ -n "${TAGS:-}" ] && filter=(--filter-tags "$TAGS")
# GNU parallel asks once per user to be cited; bats runs it unattended.
mkdir -p "$HOME/.parallel" && touch "$HOME/.parallel/will-cite"

# tap_results NAME FIRST LAST <TAP: appends "NAME<TAB>ok|not ok<TAB>MS<TAB>TEST"
# to $log/results for tests FIRST..LAST of a TAP stream, and the diagnostics
# of the failed ones to $log/NAME.fail. A test skipped to run alone later
# is left for that run to report.
tap_results() {
	awk -v name="$1" -v a="$2" -v b="$3" -v res="$log/results" -v fail="$log/$1.fail" '
		/^(not )?ok [0-9]+ / {
			bad = ($1 == "not")
			k = bad ? $3 : $2
			cur = (k >= a && k <= b)
			if (!cur || / # skip runs alone, after the others$/) { cur = 0; next }
			ms = 0
			if (match($0, / in [0-9]+ ?ms$/)) { ms = substr($0, RSTART + 4); sub(/ ?ms$/, "", ms) }
			d = $0; sub(/^(not )?ok [0-9]+ /, "", d); sub(/( #)? in [0-9]+ ?ms$/, "", d)
			printf "%s\t%s\t%d\t%s\n", name, bad ? "not ok" : "ok", ms, d >> res
			if (bad) print "    not ok: " d >> fail
			next
		}
		cur && bad && /^#/ { print "    " $0 >> fail }'
}

echo "== end-to-end tests ($JOBS at once, then the ones that run alone)"
: >"$log/results"
start=$(date +%s)
CRAWL_TEST_PASS=together bats --jobs "$JOBS" --timing --tap "${filter[@]}" "${files[@]}" >"$log/together.tap" 2>&1
# Kept for a look at a failure: every test's TAP lines, as bats wrote them.
cp "$log/together.tap" "$BUILD/e2e.tap" 2>/dev/null
# bats numbers the tests of all files in the order of the files, whichever
# finishes first: test K belongs to the file whose range holds K.
first=1
for f in "${files[@]}"; do
	n=$(bats --count "${filter[@]}" "$f")
	tap_results "$(basename "$f" .bats)" "$first" $((first + n - 1)) <"$log/together.tap"
	echo "$n" >"$log/$(basename "$f" .bats).n"
	first=$((first + n))
done
together=$(($(date +%s) - start))
# alone_tests FILE: the names of FILE's tests whose body starts with alone.
alone_tests() {
	awk '/^@test "/ { t = $0; sub(/^@test "/, "", t); sub(/" *\{ *$/, "", t); next }
		t != "" && /^[ \t]*alone[ \t]*$/ { print t } { t = "" }' "$1"
}
# run_alone FILE NAME OUT: bats runs FILE's test called NAME, by itself, TAP to OUT.
run_alone() {
	local re
	re=$(printf '%s' "$2" | sed 's/[][\.*^$()+?{}|]/\\&/g')
	CRAWL_TEST_PASS=alone bats --timing --tap "${filter[@]}" -f "^$re\$" "$1" >"$3" 2>&1
}
# The tests whose body starts with "alone", one bats run each.
for f in "${files[@]}"; do
	alone_tests "$f" |
	while IFS= read -r t; do
		run_alone "$f" "$t" "$log/alone.tap"
		tap_results "$(basename "$f" .bats)" 1 1 <"$log/alone.tap"
	done
done
echo "($together s together, $(($(date +%s) - start - together)) s alone)"

# A test that failed among the others is run once more by itself: the
# machine's load (eight tests on two cores, under a sanitizer ten times
# slower) can push a bound on time past what it allows. One that passes
# alone counts as passed and is named below with what it said when it
# failed; one whose failure names a sanitizer's report is not run again.
# RERUN=0: no second run.
: >"$log/flaky"
if [ "${RERUN:-1}" != 0 ]; then
	awk -F'\t' '$2 == "not ok" { print $1 "\t" $4 }' "$log/results" >"$log/again"
	while IFS=$'\t' read -r name t; do
		f=tests/e2e/$name.bats
		alone_tests "$f" | grep -qxF -- "$t" && continue
		# The failure's diagnostics: from its "not ok" line to the next.
		awk -v t="    not ok: $t" '$0 == t { on = 1; print; next }
			/^    not ok: / { on = 0 } on' "$log/$name.fail" >"$log/this.fail"
		grep -qE 'Sanitizer|runtime error:' "$log/this.fail" && continue
		run_alone "$f" "$t" "$log/again.tap"
		grep -q '^ok 1 ' "$log/again.tap" || continue
		awk -F'\t' -v OFS='\t' -v n="$name" -v t="$t" \
			'$1 == n && $4 == t && $2 == "not ok" { $2 = "ok" } { print }' \
			"$log/results" >"$log/results.new" && mv "$log/results.new" "$log/results"
		awk -v t="    not ok: $t" '$0 == t { on = 1; next } /^    not ok: / { on = 0 } !on' \
			"$log/$name.fail" >"$log/rest.fail" && mv "$log/rest.fail" "$log/$name.fail"
		{ echo "$name: $t"; sed -n '2,$p' "$log/this.fail" | head -20; } >>"$log/flaky"
	done <"$log/again"
fi

for f in "${files[@]}"; do
	name=$(basename "$f" .bats)
	n=$(cat "$log/$name.n")
	ok=$(awk -F'\t' -v n="$name" '$1 == n && $2 == "ok"' "$log/results" | wc -l)
	bad=$(awk -F'\t' -v n="$name" '$1 == n && $2 == "not ok"' "$log/results" | wc -l)
	# Tests that never reported (bats stopped, a file that did not load).
	missing=$((n - ok - bad))
	[ "$missing" -gt 0 ] && bad=$((bad + missing))
	passed=$((passed + ok)); failed=$((failed + bad))
	printf '%-28s %3d passed, %d failed\n' "$name" "$ok" "$bad"
	if [ "$bad" -ne 0 ]; then
		failures+=("$name")
		if [ -s "$log/$name.fail" ]; then
			head -80 "$log/$name.fail"
		else
			grep -v '^ok ' "$log/together.tap" | tail -20 | sed 's/^/    /'
		fi
	fi
done

echo
echo "the ten slowest tests:"
sort -t "$(printf '\t')" -k3,3rn "$log/results" | head -10 |
	awk -F'\t' '{ printf "%8.1f s  %s: %s\n", $3 / 1000, $1, $4 }'

if [ -s "$log/flaky" ]; then
	echo
	echo "failed among the others, passed alone:"
	sed 's/^/    /' "$log/flaky"
fi

echo
[ ${#failures[@]} -gt 0 ] && echo "failing: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
