# Sourced by the benchmark scripts: medians, the order of a round's runs
# and one timed run, the one place each is written.

# median: the median of the numbers on standard input, one a line ("nan" when
# there are none; the lower middle one of an even count).
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "nan") }'; }

# med N...: the median of its arguments.
med() { printf '%s\n' "$@" | median; }

# kb_to_mb KB: KB in MB with one decimal, "nan" kept as it is.
kb_to_mb() { awk -v k="$1" 'BEGIN { if (k == "nan" || k == "-") print k; else printf "%.1f\n", k / 1024 }'; }

# turns ROUND N: the indices 0 to N-1 in the order round ROUND runs its
# N commands, the other way round every other round: a run is slower or
# faster by what ran just before it, so that no command always runs after
# the same one.
turns() {
	local i
	if [ $(($1 % 2)) -eq 0 ]; then
		for ((i = $2 - 1; i >= 0; i--)); do echo "$i"; done
	else
		for ((i = 0; i < $2; i++)); do echo "$i"; done
	fi
}

# run_timed [-n] LIMIT OUT CMD...: runs CMD, cut after LIMIT seconds (and
# killed 5 s later if it ignores the cut), with its standard output in OUT
# (-n: thrown away, for a command whose output would only cost the disk's
# writes) and its standard error in OUT.err; sets WALL (wall seconds),
# CPU (user plus system seconds), RSS (peak resident kB of the process, as
# /usr/bin/time reads it: the largest of it and the children it reaped)
# and STATUS (CMD's exit status, 124 when it was cut). time(1) runs outside
# timeout(1), so that a run cut at LIMIT still has its figures; CPU and RSS
# are "nan" when time(1) left none, "-" without /usr/bin/time. Returns 0
# whatever CMD did.
run_timed() {
	local sink= limit out t0 t1
	if [ "$1" = -n ]; then sink=/dev/null; shift; fi
	limit=$1 out=$2
	shift 2
	rm -f "$out.time"
	STATUS=0
	t0=$(date +%s%N)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%U %S %M" -o "$out.time" timeout -k 5 "$limit" "$@" >"${sink:-$out}" 2>"$out.err" || STATUS=$?
	else
		timeout -k 5 "$limit" "$@" >"${sink:-$out}" 2>"$out.err" || STATUS=$?
	fi
	t1=$(date +%s%N)
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
	CPU=- RSS=-
	[ -x /usr/bin/time ] || return 0
	read -r CPU RSS < <(awk '{ l = $0 } END { if (split(l, f, " ") == 3 && f[3] ~ /^[0-9]+$/) printf "%.2f %d\n", f[1] + f[2], f[3]; else print "nan nan" }' "$out.time" 2>/dev/null || echo "nan nan")
	return 0
}
