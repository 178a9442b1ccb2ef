#!/usr/bin/env bats
# The suite's own rules. make check-model builds crawl with a sixth model
# (tests/model/) and runs the tests tagged models ("# bats test_tags=models"
# before the test, or file_tags for a whole file) against it, their loops
# over the models running the sixth alone. A test that runs every model
# and lacks the tag would never see it: here every such test is found by
# what it reads and held to the tag.

E2E="$BATS_TEST_DIRNAME"

# every_model FILE...: "every|other TAB tagged|untagged TAB FILE TAB TEST"
# for each test of each FILE. A test runs every model when a line of it
# (not a comment) or of a function of its file that it calls reads the
# registry (a read, not an assignment): MODES, ALL_MODES, NMODES, NALL,
# CONCURRENT_MODES, SEQUENTIAL_MODES, SEQUENTIAL, per_mode, --list-modes,
# or runs them all: --mode=all without --modes, scripts/compare.sh,
# demo.sh lightless.
every_model() {
	local f
	for f in "$@"; do
		awk '
			BEGIN {
				reads = "(^|[^A-Za-z0-9_])(MODES|ALL_MODES|NMODES|NALL|CONCURRENT_MODES|SEQUENTIAL_MODES|SEQUENTIAL)([^A-Za-z0-9_=]|$)|per_mode|--list-modes"
				runs = "--mode[= ]all|scripts/compare[.]sh|demo[.]sh lightless"
			}
			function every(line) {
				if (line ~ /^[ \t]*#/) return 0
				return line ~ reads || (line ~ runs && line !~ /--modes/)
			}
			# First pass: the functions of the file that run every model.
			FNR == NR {
				if (match($0, /^[a-z_][a-z0-9_]*\(\) *\{/)) {
					fn = substr($0, 1, index($0, "(") - 1)
					if (every($0)) model_fn[fn] = 1
					if ($0 ~ /\} *$/) fn = ""
				} else if (fn != "" && /^\}/) {
					fn = ""
				} else if (fn != "" && every($0)) {
					model_fn[fn] = 1
				}
				next
			}
			/^# bats file_tags=(.*,)?models(,|$)/ { file_tag = 1 }
			/^@test "/ {
				name = $0; sub(/^@test "/, "", name); sub(/" *\{ *$/, "", name)
				tagged = file_tag || prev ~ /^# bats test_tags=(.*,)?models(,|$)/
				hit = 0; in_test = 1
				next
			}
			in_test && /^\}/ {
				printf "%s\t%s\t%s\t%s\n", hit ? "every" : "other", tagged ? "tagged" : "untagged", FILENAME, name
				in_test = 0
				next
			}
			in_test {
				if (every($0)) hit = 1
				for (g in model_fn)
					if ($0 !~ /^[ \t]*#/ && $0 ~ ("(^|[^A-Za-z0-9_-])" g "([^A-Za-z0-9_]|$)")) hit = 1
			}
			NF { prev = $0 }' "$f" "$f"
	done
}

@test "every test that runs every model is tagged models, so that make check-model runs it" {
	files=()
	for f in "$E2E"/*.bats; do
		[ "$(basename "$f")" = suite.bats ] || files+=("$f")
	done
	run every_model "${files[@]}"
	[ "$status" -eq 0 ]
	# Every test of every file is seen, tagged models or not.
	[ "${#lines[@]}" -eq "$(cat "${files[@]}" | grep -c '^@test "')" ]
	untagged=$(awk -F'\t' '$1 == "every" && $2 == "untagged" { print $3 ": " $4 }' <<<"$output")
	echo "$untagged"
	[ -z "$untagged" ]
	# The most of them, not a few.
	[ "$(awk -F'\t' '$1 == "every"' <<<"$output" | wc -l)" -ge 150 ]
}

@test "a test is found to run every model by the registry's lists, --mode=all or a function of its file that does" {
	f="$BATS_TEST_TMPDIR/t.bats"
	# Written with stand-ins, for bats would read these lines as its own.
	sed 's/^TEST /@test /; s/^TAGS /# bats test_tags=/' >"$f" <<-'EOF'
		# loops LIST: runs each model of LIST.
		loops() {
			for m in $MODES; do "$CRAWL" --mode=$m "$@"; done
		}
		one() { "$CRAWL" --mode=coro "$@"; }

		TEST "a loop over the models" {
			for m in $MODES; do :; done
		}

		TAGS models
		TEST "a loop over the models, tagged" {
			for m in ${MODES}; do :; done
		}

		TEST "every model by --mode=all" {
			run "$CRAWL" --mode=all "$list"
		}

		TEST "two models by --mode=all --modes" {
			run "$CRAWL" --mode=all --modes seq,coro "$list"
		}

		TEST "a function of the file that loops" {
			loops -q "$list"
		}

		TEST "a function of the file that does not" {
			one -q "$list"
			# $MODES in a comment is not a loop
		}

		TEST "a count of the models" {
			[ "$n" -eq $((2 * NMODES)) ]
		}

		TEST "the sequential ones" {
			for m in $SEQUENTIAL_MODES; do :; done
		}
	EOF
	run every_model "$f"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cut -f1,2,4 <<<"$output" | tr '\t' ' ' | tr '\n' ';')" = "$(printf '%s;' \
		"every untagged a loop over the models" \
		"every tagged a loop over the models, tagged" \
		"every untagged every model by --mode=all" \
		"other untagged two models by --mode=all --modes" \
		"every untagged a function of the file that loops" \
		"other untagged a function of the file that does not" \
		"every untagged a count of the models" \
		"every untagged the sequential ones")" ]
	# A file tagged as a whole.
	sed -i '1i # bats file_tags=models' "$f"
	run every_model "$f"
	[ "$(cut -f2 <<<"$output" | sort -u)" = tagged ]
}
