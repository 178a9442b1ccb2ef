#!/usr/bin/env bats
# --state FILE: a crawl killed in any way (SIGKILL, Ctrl-C) and run again
# continues; the outputs of the runs hold every page once; a finished crawl
# says so; another list or scope is refused; in every model. Each test has
# a fixture of its own, so that its request counts are the crawl's.

load helpers

# The graph these tests crawl: 600 pages, fan-out 4, all reachable within
# depth 5. --delay spaces the requests (2 ms), so that a crawl lasts long
# enough for a kill to land mid-crawl whatever the model.
N=600
graph() { echo "$PFIX/graph/$N/4/"; }

expected() {
	echo "$PFIX/graph/$N/4/"
	for i in $(seq 1 $((N - 1))); do echo "$PFIX/graph/$N/4/$i"; done
}

# crawl_state ARGS...: the crawl every run of a test repeats, of the
# graph, or of the URLs and lists in $LIST.
crawl_state() {
	(exec_state "$@")
}

# exec_state ARGS...: the same, but for the process itself (exec), so that
# a signal sent to a background run reaches crawl.
exec_state() {
	exec "$CRAWL" --depth 5 --delay 2 --format=jsonl --no-progress \
		--state "$BATS_TEST_TMPDIR/s.db" -o "$BATS_TEST_TMPDIR/out.jsonl" "$@" ${LIST:-$(graph)}
}

# kill_after ROWS SIGNAL ARGS...: runs crawl_state ARGS in the background and
# sends SIGNAL once the output holds ROWS lines more than before the run (a
# resumed run cuts it back first: more still), so that the kill lands
# mid-crawl however fast the machine is; its status goes to $rc.
kill_after() {
	local more=$1 sig=$2 out="$BATS_TEST_TMPDIR/out.jsonl" before pid
	shift 2
	before=$(wc -l <"$out" 2>/dev/null || echo 0)
	exec_state "$@" 2>>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	wait_until 60 eval "has_lines '$out' $((before + more)) || ! kill -0 $pid 2>/dev/null"
	kill -"$sig" $pid 2>/dev/null || true
	rc=0; wait $pid || rc=$?
}

urls() { jq -r 'select(.url) | .url' "$BATS_TEST_TMPDIR/out.jsonl"; }
rows() { urls | wc -l; }

# count PATH: requests the fixture saw for PATH.
count() { curl -s "$PFIX/stats?path=$1" | jq -r .count; }

# path_counts: "PATH COUNT" for every path the fixture saw, in one request.
path_counts() { curl -s "$PFIX/stats?paths" | jq -r '"\(.path) \(.count)"'; }

# sample_counts: "OFFSET URL COUNT" for every row of the output as it is
# now: where the row ends in the file, and its fetches so far.
sample_counts() {
	LC_ALL=C awk -v base="$PFIX" '
		NR == FNR { count[$1] = $2; next }
		{ off += length($0) + 1 }
		match($0, /"url":"[^"]*"/) {
			u = substr($0, RSTART + 7, RLENGTH - 8)
			print off, u, count[substr(u, length(base) + 1)] + 0
		}' <(path_counts) "$BATS_TEST_TMPDIR/out.jsonl"
}

# never_refetched SAMPLE CUT: the sampled rows that end within the first CUT
# bytes (committed before the kill: the next run kept them) were not
# fetched again. Fails when none of them was.
never_refetched() {
	awk -v cut="$2" -v base="$PFIX" '
		NR == FNR { count[$1] = $2; next }
		NF == 3 && $1 <= cut {
			if (count[substr($2, length(base) + 1)] + 0 != $3) { print "fetched again: " $2; bad = 1; exit }
			checked++
		}
		END { if (bad) exit 1; print checked + 0 " committed rows sampled"; exit !(checked > 0) }
	' <(path_counts) <(printf '%s\n' "$1")
}

# cut_at K: the bytes the K-th "continuing" message of this test kept.
cut_at() {
	grep -o 'cut back to [0-9]* bytes' "$BATS_TEST_TMPDIR/err" | sed -n "${1}p" | tr -dc 0-9
}

# page_requests: requests the fixture saw, robots.txt and /stats left out.
page_requests() {
	echo $(( $(stat_of "$PFIX" requests) - $(curl -s "$PFIX/stats?path=/robots.txt" | jq .count) ))
}

# bats test_tags=models
@test "a --state crawl killed with SIGKILL three times continues to every page, each once, in every model" {
	for m in $MODES; do
		start_private_fixture
		rm -f "$BATS_TEST_TMPDIR"/s.db* "$BATS_TEST_TMPDIR/out.jsonl" "$BATS_TEST_TMPDIR/err"
		kills=0 samples=()
		for _ in 1 2 3; do
			kill_after 40 KILL --mode=$m -c 4
			echo "$m: killed run: rc $rc, $(rows) rows"
			[ "$rc" -eq 137 ]
			kills=$((kills + 1))
			samples+=("$(sample_counts)")
		done
		# Killed mid-crawl: some pages done, not all.
		[ "$(rows)" -gt 0 ]
		[ "$(rows)" -lt $N ]
		crawl_state --mode=$m -c 4 2>>"$BATS_TEST_TMPDIR/err" || { cat "$BATS_TEST_TMPDIR/err"; false; }
		diff <(urls | sort) <(expected | sort)
		[ "$(urls | sort | uniq -d | wc -l)" -eq 0 ]
		# Each page found says on which: the queue in the store keeps it.
		parents_hold "$BATS_TEST_TMPDIR/out.jsonl"
		# A page whose row was committed is never fetched again: only the
		# ones in flight, or whose rows waited in the output's buffer
		# (50 ms), at a kill are.
		for k in 1 2 3; do
			never_refetched "${samples[$((k - 1))]}" "$(cut_at $k)"
		done
		r=$(page_requests)
		echo "$m: $r page requests"
		[ "$r" -ge $N ]
		[ "$r" -le $((N + kills * 60)) ]
		# robots.txt was fetched once, by the first run: the others read
		# it from the state.
		[ "$(count /robots.txt)" -eq 1 ]
		stop_private_fixture
	done
}

# bats test_tags=models
@test "Ctrl-C ends a --state crawl with 130 and no cancelled rows; the same command continues it" {
	for m in $MODES; do
		start_private_fixture
		rm -f "$BATS_TEST_TMPDIR"/s.db* "$BATS_TEST_TMPDIR/out.jsonl"
		kill_after 40 INT --mode=$m -c 4
		echo "$m: interrupted: rc $rc, $(rows) rows"
		[ "$rc" -eq 130 ]
		[ "$(rows)" -gt 0 ]
		[ "$(rows)" -lt $N ]
		[ "$(jq -r 'select(.url) | select(.fail != null) | .url' "$BATS_TEST_TMPDIR/out.jsonl" | wc -l)" -eq 0 ]
		run crawl_state --mode=$m -c 4
		[ "$status" -eq 0 ]
		diff <(urls | sort) <(expected | sort)
		[ "$(page_requests)" -le $((N + 60)) ]
		stop_private_fixture
	done
}

@test "a finished --state crawl says so, exits 0 and fetches nothing" {
	start_private_fixture
	run crawl_state
	[ "$status" -eq 0 ]
	[ "$(rows)" -eq $N ]
	before=$(stat_of "$PFIX" requests)
	sum=$(md5sum <"$BATS_TEST_TMPDIR/out.jsonl")
	run crawl_state
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "crawl: --state $BATS_TEST_TMPDIR/s.db: this crawl is finished ($N pages fetched); nothing to do ($BATS_TEST_TMPDIR/out.jsonl holds $(stat -c %s "$BATS_TEST_TMPDIR/out.jsonl") bytes of its rows)" ]
	[ "$(stat_of "$PFIX" requests)" -eq "$before" ]
	[ "$(md5sum <"$BATS_TEST_TMPDIR/out.jsonl")" = "$sum" ]
}

@test "another start URL, list or scope is refused with exit 2 and the output left alone" {
	start_private_fixture
	kill_after 20 KILL -c 2
	sum=$(md5sum <"$BATS_TEST_TMPDIR/out.jsonl")
	s="$BATS_TEST_TMPDIR/s.db"
	tail="; not continuing it (give the same list and options, or another state file)"
	LIST="$PFIX/graph/$N/4/1" run crawl_state
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: --state $s: started with another list of URLs (1 listed then, 1 now)$tail" ]
	LIST="$(graph) $PFIX/graph/$N/4/7" run crawl_state
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: --state $s: started with another list of URLs (1 listed then, 2 now)$tail" ]
	run "$CRAWL" --depth 4 --format=jsonl --state "$s" -o "$BATS_TEST_TMPDIR/out.jsonl" "$(graph)"
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: --state $s: started with depth=5, not depth=4$tail" ]
	run crawl_state --span-hosts
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: --state $s: started with span-hosts=0, not span-hosts=1$tail" ]
	run crawl_state --include /graph/
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: --state $s: started with includes=0, not includes=1$tail" ]
	run crawl_state --max-pages 10
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: --state $s: started with max-pages=0, not max-pages=10$tail" ]
	run crawl_state --canonical
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: --state $s: started with canonical=0, not canonical=1$tail" ]
	run crawl_state --strip-query 'utm_.*'
	[ "$status" -eq 2 ]
	[ "$output" = "crawl: --state $s: started with strip-queries=0, not strip-queries=1$tail" ]
	[ "$(md5sum <"$BATS_TEST_TMPDIR/out.jsonl")" = "$sum" ]
	# The model and the concurrency may change between runs.
	run crawl_state --mode=pool -c 3
	[ "$status" -eq 0 ]
	diff <(urls | sort) <(expected | sort)
}

@test "a list file is read into the state: the same file continues, an edited one is refused" {
	start_private_fixture
	printf '%s\n' "$(graph)" "$PFIX/bytes/7" "not a url" >"$BATS_TEST_TMPDIR/list"
	LIST="$BATS_TEST_TMPDIR/list"
	kill_after 20 KILL -c 2
	echo "$PFIX/bytes/8" >>"$BATS_TEST_TMPDIR/list"
	run crawl_state
	[ "$status" -eq 2 ]
	[[ "$output" == *"started with another list of URLs (3 listed then, 4 now)"* ]]
	sed -i '$d' "$BATS_TEST_TMPDIR/list"
	run crawl_state
	# The line that is no URL failed in the first run or in this one.
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	[ "$(rows)" -eq $((N + 2)) ]
	[ "$(urls | sort | uniq -d | wc -l)" -eq 0 ]
	[ "$(jq -r 'select(.url == "not a url") | .line' "$BATS_TEST_TMPDIR/out.jsonl")" = 3 ]
	[ "$(jq -r --arg u "$PFIX/bytes/7" 'select(.url == $u) | .length' "$BATS_TEST_TMPDIR/out.jsonl")" = 7 ]
}

# bats test_tags=models
@test "--max-pages and --depth hold across killed runs, in every model" {
	for m in $MODES; do
		start_private_fixture
		rm -f "$BATS_TEST_TMPDIR"/s.db* "$BATS_TEST_TMPDIR/out.jsonl"
		kill_after 60 KILL --mode=$m -c 4 --max-pages 250
		kill_after 60 KILL --mode=$m -c 4 --max-pages 250
		run crawl_state --mode=$m -c 4 --max-pages 250
		echo "$m: $status, $(rows) rows"
		[ "$status" -eq 0 ]
		[ "$(rows)" -eq 250 ]
		[ "$(urls | sort -u | wc -l)" -eq 250 ]
		[ "$(page_requests)" -le $((250 + 2 * 60)) ]
		stop_private_fixture
	done
	start_private_fixture
	rm -f "$BATS_TEST_TMPDIR"/s.db* "$BATS_TEST_TMPDIR/out.jsonl"
	"$CRAWL" --depth 2 --delay 2 --format=jsonl --state "$BATS_TEST_TMPDIR/s.db" \
		-o "$BATS_TEST_TMPDIR/out.jsonl" -c 2 "$(graph)" 2>/dev/null &
	pid=$!; sleep 0.05; kill -9 $pid 2>/dev/null || true; wait $pid || true
	run "$CRAWL" --depth 2 --format=jsonl --state "$BATS_TEST_TMPDIR/s.db" \
		-o "$BATS_TEST_TMPDIR/out.jsonl" "$(graph)"
	[ "$status" -eq 0 ]
	[ "$(rows)" -eq 21 ]      # 1 + 4 + 16
	[ "$(jq -r 'select(.url) | select(.depth > 2)' "$BATS_TEST_TMPDIR/out.jsonl" | wc -l)" -eq 0 ]
}

@test "csv: the header once, at the top, across killed runs" {
	start_private_fixture
	for _ in 1 2; do
		"$CRAWL" --depth 5 --delay 2 --format=csv --state "$BATS_TEST_TMPDIR/s.db" \
			-o "$BATS_TEST_TMPDIR/out.csv" -c 2 "$(graph)" 2>/dev/null &
		pid=$!
		lines=$(wc -l <"$BATS_TEST_TMPDIR/out.csv" 2>/dev/null || echo 0)
		wait_until 10 has_lines "$BATS_TEST_TMPDIR/out.csv" $((lines + 2))
		kill -9 $pid 2>/dev/null || true; wait $pid || true
	done
	run "$CRAWL" --depth 5 --format=csv --state "$BATS_TEST_TMPDIR/s.db" -o "$BATS_TEST_TMPDIR/out.csv" "$(graph)"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^url,' "$BATS_TEST_TMPDIR/out.csv")" -eq 1 ]
	head -1 "$BATS_TEST_TMPDIR/out.csv" | grep -q '^url,'
	[ "$(wc -l <"$BATS_TEST_TMPDIR/out.csv")" -eq $((N + 1)) ]
	[ "$(cut -d, -f1 "$BATS_TEST_TMPDIR/out.csv" | sort | uniq -d | wc -l)" -eq 0 ]
}

# bats test_tags=models
@test "--state refuses what it cannot continue: no -o, a table, -q, --sitemaps, --warc, --order=input, --mode=all, a cut output" {
	s="$BATS_TEST_TMPDIR/s.db"
	run "$CRAWL" --state "$s" --format=jsonl "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "$output" == "crawl: --state: needs -o FILE, which the next run continues"* ]]
	run "$CRAWL" --state "$s" -o "$BATS_TEST_TMPDIR/o" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "$output" == "crawl: --state: needs --format=jsonl or --format=csv (rows written as pages finish)"* ]]
	run "$CRAWL" --state "$s" -q --format=jsonl -o "$BATS_TEST_TMPDIR/o" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "$output" == "crawl: --state: the rows are the crawl's record; -q would drop them"* ]]
	run "$CRAWL" --state "$s" --sitemaps --format=jsonl -o "$BATS_TEST_TMPDIR/o" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "$output" == "crawl: --state: --sitemaps is not kept in the store"* ]]
	run "$CRAWL" --state "$s" --warc "$BATS_TEST_TMPDIR/a.warc.gz" --format=jsonl -o "$BATS_TEST_TMPDIR/o" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "$output" == "crawl: --state: --warc is not continued by a resumed run"* ]]
	run "$CRAWL" --state "$s" --order=input --format=jsonl -o "$BATS_TEST_TMPDIR/o" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "$output" == "crawl: --state: rows are written in completion order, not --order=input"* ]]
	run "$CRAWL" --state "$s" --mode=all --format=jsonl -o "$BATS_TEST_TMPDIR/o" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "$output" == "crawl: --state: one model at a time, not --mode=all"* ]]
	[ ! -e "$s" ]
	# A list crawl (no --depth) resumes too; an output shorter than the
	# state says is not this crawl's.
	run "$CRAWL" --state "$s" --format=jsonl -o "$BATS_TEST_TMPDIR/o" "$FIXTURE/bytes/1" "$FIXTURE/bytes/2"
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.url) | .length' "$BATS_TEST_TMPDIR/o" | sort | tr '\n' ' ')" = "1 2 " ]
	start_private_fixture
	rm -f "$s"*
	kill_after 20 KILL -c 2
	[ "$(rows)" -gt 0 ]
	: >"$BATS_TEST_TMPDIR/out.jsonl"
	run crawl_state -c 2
	[ "$status" -eq 2 ]
	[[ "$output" == "crawl: $BATS_TEST_TMPDIR/out.jsonl: holds 0 bytes, but the crawl in $s wrote "*" there: not its output" ]]
}

# --- A state file that cannot be trusted: truncated, damaged, another
# program's, another format's, on a full disk. Each ends with exit 8 and a
# message that names the state file, before a byte of the output or the
# store is written, or (a damage LMDB never reads) with a correct resume.

# The full-disk test's tmpfs goes with its test, whatever happened.
teardown() {
	mountpoint -q "$BATS_TEST_TMPDIR/full" 2>/dev/null && umount "$BATS_TEST_TMPDIR/full"
	stop_fixtures
}

# partial_state [ROWS]: s.db and out.jsonl of a crawl of the graph killed
# with SIGKILL once ROWS (100) rows were out: a crawl that did not finish.
partial_state() {
	kill_after "${1:-100}" KILL -c 4
	[ "$rc" -eq 137 ]
	[ "$(rows)" -gt 0 ]
	[ "$(rows)" -lt $N ]
}

# resume DIR: the same crawl continued from DIR/s.db into DIR/out.jsonl,
# without --delay (which a run may change); its status in $status, its
# stderr in $output.
resume() {
	run "$CRAWL" --depth 5 --format=jsonl --no-progress --state "$1/s.db" -o "$1/out.jsonl" "$(graph)"
}

# copy_state DIR: DIR holds a copy of the partial state and its output.
copy_state() {
	mkdir -p "$1"
	cp "$BATS_TEST_TMPDIR/s.db" "$BATS_TEST_TMPDIR/out.jsonl" "$1/"
}

# sums DIR: the md5 sums of DIR's state and output.
sums() { md5sum "$1/s.db" "$1/out.jsonl" | awk '{ print $1 }' | tr '\n' ' '; }

# mklmdb FILE [DB KEY HEXVALUE]...: an LMDB file as another program makes
# one (DB "-" is the main database, "+NAME" a database of duplicates,
# MDB_DUPSORT), by a helper built here against LMDB.
mklmdb() {
	local bin="$BATS_TEST_TMPDIR/mklmdb"
	if [ ! -x "$bin" ]; then
		cat >"$bin.c" <<'C'
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    MDB_env *env;
    MDB_txn *txn;
    if (mdb_env_create(&env) || mdb_env_set_maxdbs(env, 8) ||
        mdb_env_open(env, argv[1], MDB_NOSUBDIR | MDB_NOLOCK, 0644) ||
        mdb_txn_begin(env, NULL, 0, &txn))
        return 1;
    for (int i = 2; i + 2 < argc; i += 3) {
        MDB_dbi dbi;
        char val[256];
        const char *name = strcmp(argv[i], "-") ? argv[i] : NULL;
        unsigned flags = MDB_CREATE;
        if (name && name[0] == '+')
            name++, flags |= MDB_DUPSORT;
        size_t n = strlen(argv[i + 2]) / 2;
        for (size_t k = 0; k < n && k < sizeof val; k++)
            sscanf(argv[i + 2] + 2 * k, "%2hhx", &val[k]);
        MDB_val key = { strlen(argv[i + 1]), argv[i + 1] }, data = { n, val };
        if (mdb_dbi_open(txn, name, flags, &dbi) ||
            mdb_put(txn, dbi, &key, &data, 0))
            return 1;
    }
    return mdb_txn_commit(txn) ? 1 : 0;
}
C
		cc -o "$bin" "$bin.c" -llmdb
	fi
	"$bin" "$@"
}

# hex TEXT: TEXT's bytes in hex.
hex() { printf %s "$1" | od -An -tx1 | tr -d ' \n'; }

@test "a truncated state file is refused with exit 8 before a byte is written: at 4096 bytes, at half, all but its last page" {
	start_private_fixture
	partial_state
	size=$(stat -c %s "$BATS_TEST_TMPDIR/s.db")
	before=$(stat_of "$PFIX" requests)
	for cut in 4096 $((size / 2)) $((size - 4096)); do
		d="$BATS_TEST_TMPDIR/cut.$cut"
		copy_state "$d"
		truncate -s $cut "$d/s.db"
		sum=$(sums "$d")
		resume "$d"
		echo "$cut: $status $output"
		[ "$status" -eq 8 ]
		if [ $cut -eq 4096 ]; then
			[ "$output" = "crawl: --state $d/s.db: not a usable state file (truncated: it holds 4096 bytes, less than LMDB's two meta pages (8192))" ]
		else
			[ "$output" = "crawl: --state $d/s.db: not a usable state file (truncated: it holds $cut bytes, its last commit needs $size)" ]
		fi
		[ "$(sums "$d")" = "$sum" ]
	done
	[ "$(stat_of "$PFIX" requests)" -eq "$before" ]
}

@test "512 random bytes written into a state file: each of 16 runs resumes to every page once or is refused with exit 8, never a crash" {
	# A graph of 200 pages: 16 resumes of it stay quick.
	N=200
	start_private_fixture
	partial_state 50
	size=$(stat -c %s "$BATS_TEST_TMPDIR/s.db")
	refused=0 resumed=0
	for seed in $(seq 1 16); do copy_state "$BATS_TEST_TMPDIR/seed.$seed"; done
	# Seed k writes its bytes into seed.k's copy, at an offset of its own.
	python3 - "$BATS_TEST_TMPDIR" "$size" <<'PY'
import random, sys
top, size = sys.argv[1], int(sys.argv[2])
for seed in range(1, 17):
    rng = random.Random(seed)
    at = rng.randrange(0, size - 512)
    with open(f"{top}/seed.{seed}/s.db", "r+b") as f:
        f.seek(at)
        f.write(bytes(rng.randrange(256) for _ in range(512)))
    print("seed", seed, "at", at)
PY
	for seed in $(seq 1 16); do
		d="$BATS_TEST_TMPDIR/seed.$seed"
		sum=$(sums "$d")
		before=$(stat_of "$PFIX" requests)
		resume "$d"
		echo "seed $seed: status $status: $output"
		[ "$status" -lt 128 ]
		if [ "$status" -eq 8 ]; then
			[[ "$output" =~ ^"crawl: --state $d/s.db: "("not a usable state file ("|"not a crawl state file ("|"a crawl state file of format ") ]]
			[ "${#lines[@]}" -eq 1 ]
			[ "$(sums "$d")" = "$sum" ]
			[ "$(stat_of "$PFIX" requests)" -eq "$before" ]
			refused=$((refused + 1))
		else
			[ "$status" -eq 0 ]
			diff <(jq -r 'select(.url) | .url' "$d/out.jsonl" | sort) <(expected | sort)
			resumed=$((resumed + 1))
		fi
	done
	echo "$refused refused, $resumed resumed"
	[ $((refused + resumed)) -eq 16 ]
}

@test "another program's LMDB file is refused with exit 8 and left byte for byte as it was, its database names colliding or not, its values sorted duplicates or not" {
	start_private_fixture
	d=$BATS_TEST_TMPDIR
	mklmdb "$d/other.db" - greeting "$(hex hello)"
	mklmdb "$d/colliding.db" meta offset 0000000000000000 page 1 "$(hex x)" seen a "" robots h "$(hex y)"
	mklmdb "$d/dupsort.db" +tags k "$(hex a)" +tags k "$(hex b)" - greeting "$(hex hello)"
	printf '{"not": "lmdb"}\n%.0s' $(seq 300) >"$d/text.db"
	for f in other colliding dupsort text; do
		sum=$(md5sum <"$d/$f.db")
		run "$CRAWL" --depth 5 --format=jsonl --state "$d/$f.db" -o "$d/$f.jsonl" "$(graph)"
		echo "$f: $status $output"
		[ "$status" -eq 8 ]
		if [ $f = text ]; then what="not an LMDB file"; else what="an LMDB file without crawl's marker"; fi
		[ "$output" = "crawl: --state $d/$f.db: not a crawl state file ($what); left as it was" ]
		[ "$(md5sum <"$d/$f.db")" = "$sum" ]
		[ ! -e "$d/$f.jsonl" ]
	done
	[ "$(stat_of "$PFIX" requests)" -eq 0 ]
}

@test "a state file of another format is refused with exit 8, naming the format found and the one this crawl reads" {
	start_private_fixture
	d=$BATS_TEST_TMPDIR
	# Format 2 had no marker, but a meta value "version" of "2".
	mklmdb "$d/v2.db" meta version "$(hex 2)" meta opt:depth "$(hex 5)" page 1 "" seen 1 "" robots h ""
	sum=$(md5sum <"$d/v2.db")
	run "$CRAWL" --depth 5 --format=jsonl --state "$d/v2.db" -o "$d/v2.jsonl" "$(graph)"
	[ "$status" -eq 8 ]
	[ "$output" = "crawl: --state $d/v2.db: a crawl state file of format 2, made by an older crawl; this crawl reads format 5 only; left as it was" ]
	[ "$(md5sum <"$d/v2.db")" = "$sum" ]
	[ ! -e "$d/v2.jsonl" ]
	# Markers of formats 3 and 4, from before pages kept their hash and
	# what a recrawl needs, and of format 6, as a newer crawl would write
	# (every copy of it in the file: LMDB keeps old pages).
	partial_state
	for f in 3 4 6; do
		for at in $(grep -obUa 'crawl state' "$d/s.db" | cut -d: -f1); do
			printf "\\x0$f" | dd of="$d/s.db" bs=1 seek=$((at + 12)) conv=notrunc status=none
		done
		sum=$(sums "$d")
		run crawl_state
		[ "$status" -eq 8 ]
		if [ $f -lt 5 ]; then made="an older"; else made="a newer"; fi
		[ "$output" = "crawl: --state $d/s.db: a crawl state file of format $f, made by $made crawl; this crawl reads format 5 only; left as it was" ]
		[ "$(sums "$d")" = "$sum" ]
	done
}

@test "a full disk under the state: exit 8 naming the state file, not the output; the rows are whole, and the crawl continues once there is room" {
	[ "$(id -u)" = 0 ] || skip "needs root to mount a small tmpfs"
	start_private_fixture
	d=$BATS_TEST_TMPDIR
	mkdir -p "$d/full"
	mount -t tmpfs -o size=300k tmpfs "$d/full" || skip "cannot mount tmpfs"
	big() { "$CRAWL" --depth 9 --format=jsonl --no-progress --state "$d/full/s.db" -o "$d/out.jsonl" "$PFIX/graph/3000/4/"; }
	run big
	echo "$output"
	[ "$status" -eq 8 ]
	[ "${lines[-1]}" = "crawl: --state $d/full/s.db: commit: No space left on device; stopped (the rows of the pages done are in $d/out.jsonl)" ]
	[[ "$output" != *"writing output"* ]]
	jq -e . "$d/out.jsonl" >/dev/null
	n=$(jq -r 'select(.url) | .url' "$d/out.jsonl" | wc -l)
	[ "$n" -gt 0 ]
	[ "$n" -lt 3000 ]
	mount -o remount,size=20m "$d/full"
	run big
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.url) | .url' "$d/out.jsonl" | sort -u | wc -l)" -eq 3000 ]
	[ "$(jq -r 'select(.url) | .url' "$d/out.jsonl" | wc -l)" -eq 3000 ]
}
