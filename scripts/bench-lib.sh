# Sourced by the benchmark scripts: medians and one timed run.

# median: the median of the numbers on standard input, one a line ("nan" when
# there are none; the lower middle one of an even count).
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "nan") }'; }

# med N...: the median of its arguments.
med() { printf '%s\n' "$@" | median; }

# run_timed LIMIT OUT CMD...: runs CMD, killed after LIMIT seconds, with its
# standard output in OUT and its standard error in OUT.err; sets WALL (wall
# seconds), CPU (user plus system seconds), RSS (peak resident kB of the
# process, as /usr/bin/time reads it) and STATUS (CMD's exit status, 124 when
# it was cut). time(1) runs outside timeout(1), so that a run cut at LIMIT
# still has its figures.
run_timed() {
	local limit=$1 out=$2 t0 t1
	shift 2
	t0=$(date +%s%N)
	/usr/bin/time -f "%U %S %M" -o "$out.time" timeout "$limit" "$@" >"$out" 2>"$out.err"
	STATUS=$?
	t1=$(date +%s%N)
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
	read -r CPU RSS < <(tail -1 "$out.time" | awk '{ printf "%.2f %d\n", $1 + $2, $3 }')
}
