#!/usr/bin/env bats
# crawl-cost: the quick run prints every figure, positive and with its unit,
# as a table and as CSV. It needs no fixture server.

load helpers

COST="$BUILD/crawl-cost"

LABELS=(
	"thread create+join"
	"coroutine new+run+free"
	"coroutine reset+run (reused)"
	"thread switch (condvar)"
	"thread switch (pipe)"
	"coroutine switch"
	"swapcontext switch"
	"memory per idle thread"
	"memory per suspended coroutine"
	"address space per idle thread"
	"address space per suspended coroutine"
)

setup_file() {
	# One quick run of each format serves every test: the program takes
	# about a second, more under sanitizers.
	"$COST" --quick >"$BATS_FILE_TMPDIR/table"
	"$COST" --quick --format=csv >"$BATS_FILE_TMPDIR/csv"
}

# is_positive NUMBER: true when NUMBER is a decimal number above zero.
is_positive() {
	[[ $1 =~ ^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$ ]] && awk -v v="$1" 'BEGIN { exit !(v > 0) }'
}

@test "quick table has every row with a positive median, a unit, min and max" {
	for label in "${LABELS[@]}"; do
		line=$(awk -v l="$label" 'index($0, l " ") == 1' "$BATS_FILE_TMPDIR/table")
		[ -n "$line" ] || { echo "missing row: $label"; return 1; }
		read -r median unit min max extra <<<"${line#"$label"}"
		is_positive "$median" || { echo "bad median: $line"; return 1; }
		[[ $unit =~ ^(us|ns|KiB)$ ]] || { echo "bad unit: $line"; return 1; }
		is_positive "$min" && is_positive "$max" || { echo "bad min/max: $line"; return 1; }
		[ -z "$extra" ]
	done
}

@test "quick table names the coroutine switch in use" {
	grep -Eq '^coroutine switch: (asm-x86_64|asm-aarch64|ucontext);' "$BATS_FILE_TMPDIR/table"
}

@test "csv has its header and seven columns on every row, one row per figure" {
	run head -1 "$BATS_FILE_TMPDIR/csv"
	[ "$output" = "key,label,median,unit,min,max,runs" ]
	[ "$(wc -l <"$BATS_FILE_TMPDIR/csv")" -eq $((${#LABELS[@]} + 1)) ]
	run awk -F, 'NF != 7 { print NR ": " $0 }' "$BATS_FILE_TMPDIR/csv"
	[ -z "$output" ]
	for label in "${LABELS[@]}"; do
		median=$(awk -F, -v l="$label" '$2 == l { print $3 }' "$BATS_FILE_TMPDIR/csv")
		is_positive "$median" || { echo "bad median for $label: '$median'"; return 1; }
	done
	run awk -F, 'NR > 1 && $7 != 3' "$BATS_FILE_TMPDIR/csv" # --quick takes 3 runs
	[ -z "$output" ]
}

@test "help explains the rows and options" {
	run "$COST" --help
	[ "$status" -eq 0 ]
	[[ $output == usage:* ]]
	for word in "thread create+join" "coroutine reset+run" "swapcontext switch" \
		"memory per idle thread" "--quick" "--format=csv"; do
		[[ $output == *"$word"* ]] || { echo "help lacks: $word"; return 1; }
	done
}

@test "unknown option or format is a usage error" {
	run "$COST" --format=xml
	[ "$status" -eq 2 ]
	run "$COST" --bogus
	[ "$status" -eq 2 ]
	run "$COST" --runs=0
	[ "$status" -eq 2 ]
}
