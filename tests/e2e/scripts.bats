#!/usr/bin/env bats
# The benchmark and cost scripts, in their short forms, so that they cannot rot.

load helpers

@test "scripts/bench.sh QUICK=1 writes both CSV files with a row per run" {
	out="$BATS_TEST_TMPDIR/bench"
	run env BUILD="$BUILD" QUICK=1 OUT="$out" scripts/bench.sh
	echo "$output"
	[ "$status" -eq 0 ]
	for sw in sweep sweep-fixed; do
		[ "$(head -1 "$out/$sw.csv")" = "tool,urls,delay_ms,limit,wall_s,rss_mb,runs_ok,runs,note" ]
		# Every crawl model at both sizes, every run saw all its requests.
		for t in crawl-seq crawl-thread crawl-pool crawl-coro crawl-procs; do
			[ "$(grep -c "^$t," "$out/$sw.csv")" -eq 2 ]
		done
		[ "$(awk -F, 'NR > 1 && $7 != $8' "$out/$sw.csv" | wc -l)" -eq 0 ]
	done
	# Matched limits: each peer at its crawl model's (QUICK: POOL 100, 50 URLs).
	lim() { awk -F, -v t="$2" -v n="$3" '$1 == t && $2 == n { print $4 }' "$out/$1.csv"; }
	[ "$(lim sweep crawl-seq 50) $(lim sweep crawl-coro 50) $(lim sweep crawl-pool 50)" = "1 50 100" ]
	if command -v curl >/dev/null; then [ "$(lim sweep curl 50)" = 50 ]; fi
	if /usr/bin/python3 -c 'import requests' 2>/dev/null; then [ "$(lim sweep threadpool 10)" = 100 ]; fi
	# The fixed sweep: everyone at FIXED (QUICK: 100), seq at 1.
	[ "$(lim sweep-fixed crawl-coro 10) $(lim sweep-fixed crawl-pool 50) $(lim sweep-fixed crawl-seq 10)" = "100 100 1" ]
	grep -q '^load: ' "$out/machine.txt"
	[ "$(tail -n +2 "$out/pool.csv" | cut -d, -f1 | tr '\n' ' ')" = "1 4 16 " ]
	grep -q '^machine: ' "$out/machine.txt"
	# Each case is announced, numbered out of all of them, the last one last.
	total=$(grep -m1 -o '^bench: case 1 of [0-9]*' <<<"$output" | awk '{print $NF}')
	[ "$(grep -c '^bench: case [0-9]* of ' <<<"$output")" -eq "$total" ]
	grep -q "^bench: case $total of $total: crawl-pool-16, 16 URLs, 16 in flight (1 run; [0-9]*s so far)$" <<<"$output"
	if command -v gnuplot >/dev/null; then
		for p in wall rss wall-fixed rss-fixed pool; do [ -s "$out/$p.png" ] && [ -s "$out/$p.svg" ]; done
	fi
}

@test "scripts/bench-memory.sh QUICK=1 writes a CSV row per tool and size, every one ok" {
	out="$BATS_TEST_TMPDIR/bench-memory"
	run env BUILD="$BUILD" QUICK=1 OUT="$out" scripts/bench-memory.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(head -1 "$out/bench-memory.csv")" = "tool,urls,wall_s,rss_mb,ok" ]
	# The default tools, the peers when installed, at both sizes (1000 5000).
	tools="crawl-coro crawl-pool"
	command -v curl >/dev/null && curl --help all | grep -q -- --parallel-immediate && tools="$tools curl"
	command -v wget2 >/dev/null && tools="$tools wget2"
	for t in $tools; do
		[ "$(grep -c "^$t,1000," "$out/bench-memory.csv")" -eq 1 ]
		[ "$(grep -c "^$t,5000," "$out/bench-memory.csv")" -eq 1 ]
	done
	[ "$(tail -n +2 "$out/bench-memory.csv" | wc -l)" -eq "$((2 * $(wc -w <<<"$tools")))" ]
	# Every row: a number of seconds, of megabytes, and every URL fetched.
	[ "$(awk -F, 'NR > 1 && !($3 ~ /^[0-9.]+$/ && $4 ~ /^[0-9.]+$/ && $5 == "yes")' "$out/bench-memory.csv" | wc -l)" -eq 0 ]
	grep -q '^crawl: .*built from commit' "$out/bench-memory.txt"
	if command -v gnuplot >/dev/null; then
		for p in rss-vs-n wall-vs-n; do [ -s "$out/$p.png" ] && [ -s "$out/$p.svg" ]; done
	fi
}

@test "scripts/cost.sh --quick prints the cost table" {
	run env BUILD="$BUILD" scripts/cost.sh --quick
	[ "$status" -eq 0 ]
	grep -qi "thread" <<<"$output"
	grep -qi "coroutine" <<<"$output"
}

@test "scripts/bench-crawl.sh QUICK=1 crawls the whole site in every model" {
	run env BUILD="$BUILD" QUICK=1 scripts/bench-crawl.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -cE '^(seq|thread|pool|coro|coro-all) +500 ' <<<"$output")" -eq 5 ]
	# The parse cost is never negative: 0.0 with a mark when noise says so.
	[ "$(grep -E '^(seq|thread|pool|coro|coro-all) +500 ' <<<"$output" | awk '$6 !~ /^[0-9]+\.[0-9]\*?$/' | wc -l)" -eq 0 ]
}

@test "scripts/timeline.sh draws a lane per worker and a bar per transfer, as PNG and SVG" {
	command -v gnuplot >/dev/null || skip "gnuplot is not installed"
	list="$BATS_TEST_TMPDIR/list.txt"
	for i in $(seq 20); do echo "$FIXTURE/delay/20/$i"; done >"$list"
	"$CRAWL" --mode=pool -c 4 -q --trace "$BATS_TEST_TMPDIR/t.json" "$list"
	run scripts/timeline.sh "$BATS_TEST_TMPDIR/t.json" "$BATS_TEST_TMPDIR/pic"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "timeline: $BATS_TEST_TMPDIR/pic.png $BATS_TEST_TMPDIR/pic.svg (4 lanes, 20 transfers)" ]
	[ "$(head -c 8 "$BATS_TEST_TMPDIR/pic.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ]
	grep -q '<svg' "$BATS_TEST_TMPDIR/pic.svg"
	grep -q 'pool worker 3' "$BATS_TEST_TMPDIR/pic.svg"
	run scripts/timeline.sh /dev/null "$BATS_TEST_TMPDIR/none"
	[ "$status" -ne 0 ]
}

# bats test_tags=models
@test "scripts/compare.sh fits 100 columns and ends with a legend, the shared settings and the takeaway" {
	run env BUILD="$BUILD" DELAYS="50 100" TIMELINE="$BATS_TEST_TMPDIR/demo" scripts/compare.sh
	[ "$status" -eq 0 ]
	# (The picture's line names its files, under a test's long temporary path.)
	[ "$(grep -v '^picture of the run: ' <<<"$output" | awk 'length($0) > 100' | wc -l)" -eq 0 ]
	grep -q '^mode  *ok  *failed  *wall_s  *speedup  *user_s  *sys_s  *rss_mb  *threads  *vcsw  *conns  *p50_ms  *max_ms$' <<<"$output"
	# A row for every model of the registry, in its order.
	[ "$(grep -E '^[^ ]+ +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+x ' <<<"$output" | awk '{ printf "%s ", $1 }')" = "$ALL_MODES" ]
	grep -q '^wall_s: the crawl.s wall time; speedup: ' <<<"$output"
	grep -q '^Shared: timeout 30s' <<<"$output"
	takeaway=$(sed -n '/^Takeaway:/,$p' <<<"$output" | tr '\n' ' ')
	# The sequential models, as the registry says, pay the sum; the others
	# the longest. (What each took is compare.bats' to judge: on a loaded
	# machine seq's 0.15 s can take a second.)
	one=$(for m in $SEQUENTIAL; do printf '%s [0-9.]* s, ' "$m"; done)
	grep -q "sequential code pays the sum of the delays (${one%, }; the delays add up to 0\\.15 s); every concurrent model pays only the longest one (0\\.1 s)" <<<"$takeaway"
	grep -q 'threads alive at most, seq 1, thread 3, pool 11, coro 1, procs [0-9]' <<<"$takeaway"
	# Every column of the run is kept.
	grep -q '^mode  *urls  *ok  *failed  *retries  *wall_s .* ttfb_max_ms$' "$BUILD/demo-comparison.txt"
}

# bats test_tags=models
@test "scripts/compare.sh draws the run of every model when gnuplot is there" {
	command -v gnuplot >/dev/null || skip "gnuplot is not installed"
	run env BUILD="$BUILD" DELAYS="50 100" TIMELINE="$BATS_TEST_TMPDIR/demo" scripts/compare.sh -q
	[ "$status" -eq 0 ]
	grep -q "^picture of the run: $BATS_TEST_TMPDIR/demo.png $BATS_TEST_TMPDIR/demo.svg" <<<"$output"
	[ -s "$BATS_TEST_TMPDIR/demo.png" ] && [ -s "$BATS_TEST_TMPDIR/demo.svg" ]
}

@test "scripts/bench-docs.sh QUICK=1 fetches the same pages with every tool, as nginx counted them" {
	command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || skip "nginx is not installed (scripts/bench-docs.sh installs it)"
	[ -f /usr/share/doc/python3.11/html/index.html ] || skip "python3.11-doc is not installed (scripts/bench-docs.sh installs it)"
	out="$BATS_TEST_TMPDIR/bench-docs"
	run env BUILD="$BUILD" QUICK=1 OUT="$out" scripts/bench-docs.sh
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^# scripts/bench-docs.sh, .*, [0-9]* cores .*python3.11-doc .*: [0-9]* pages .* MB of HTML, crawl commit ' "$out/bench-docs.txt"
	grep -q '^# load average (1, 5, 15 min) at the start: ' "$out/bench-docs.txt"
	# One round: a row per tool in each table, every one with the first
	# crawl's pages (the tree) or every URL once (the flat list).
	rows=3
	command -v wget2 >/dev/null && rows=4
	[ "$(head -1 "$out/bench-docs.csv")" = "table,tool,round,wall_s,cpu_s,rss_kb,requests,bytes,conns,crawl_urls,same,status" ]
	[ "$(grep -c '^docs,' "$out/bench-docs.csv")" -eq $((rows + 1)) ]
	[ "$(grep -c '^flat,' "$out/bench-docs.csv")" -eq "$rows" ]
	[ "$(awk -F, 'NR > 1 && $11 != "yes"' "$out/bench-docs.csv" | wc -l)" -eq 0 ]
	[ "$(awk -F, '$1 == "flat" && $7 != 2000' "$out/bench-docs.csv" | wc -l)" -eq 0 ]
	# crawl's own count of URLs fetched is what nginx logged.
	[ "$(awk -F, 'NR > 1 && $2 != "wget2" && $10 != $7' "$out/bench-docs.csv" | wc -l)" -eq 0 ]
	for t in "crawl coro -c 16 " "crawl coro --parse-threads 0 -c 16 " "crawl coro --loops 2 -c 16 " "crawl procs --procs 2 -c 16 " \
		"crawl coro -c 100 " "crawl coro --loops 2 -c 100 " "crawl procs --procs 2 -c 100 "; do
		grep -q "^$t" "$out/bench-docs.txt"
	done
}

@test "scripts/bench-recrawl.sh QUICK=1: three passes of each tool over the same pages, the second all 304s (the page missing from the package aside)" {
	command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || skip "nginx is not installed (scripts/bench-recrawl.sh installs it)"
	[ -f /usr/share/doc/python3.11/html/index.html ] || skip "python3.11-doc is not installed (scripts/bench-recrawl.sh installs it)"
	out="$BATS_TEST_TMPDIR/bench-recrawl"
	run env BUILD="$BUILD" QUICK=1 OUT="$out" scripts/bench-recrawl.sh
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^# scripts/bench-recrawl.sh, .*, [0-9]* cores .*python3.11-doc .*, crawl commit ' "$out/bench-recrawl.txt"
	tools=1
	command -v wget2 >/dev/null && tools=2
	[ "$(head -1 "$out/bench-recrawl.csv")" = "tool,pass,round,wall_s,cpu_s,requests,r304,r200,body_bytes,out_bytes,in_bytes,conns,rows,same,status" ]
	[ "$(tail -n +2 "$out/bench-recrawl.csv" | wc -l)" -eq $((3 * tools)) ]
	[ "$(awk -F, 'NR > 1 && $14 != "yes"' "$out/bench-recrawl.csv" | wc -l)" -eq 0 ]
	# Pass 1 all 200s, pass 2 all 304s, pass 3 the ten changed 200s; the
	# one path the tree links to and lacks is a 404 in each.
	[ "$(awk -F, '$2 == 1 && ($7 != 0 || $8 != $6 - 1)' "$out/bench-recrawl.csv" | wc -l)" -eq 0 ]
	[ "$(awk -F, '$2 == 2 && ($8 != 0 || $7 != $6 - 1)' "$out/bench-recrawl.csv" | wc -l)" -eq 0 ]
	[ "$(awk -F, '$2 == 3 && ($8 != 10 || $7 != $6 - 11)' "$out/bench-recrawl.csv" | wc -l)" -eq 0 ]
	# crawl's rows: every page in every pass.
	[ "$(awk -F, '$1 == "crawl" && $13 != $6' "$out/bench-recrawl.csv" | wc -l)" -eq 0 ]
}

@test "scripts/bench-keep.sh QUICK=1 prints a row per way of keeping, every URL fetched in each" {
	run env BUILD="$BUILD" QUICK=1 scripts/bench-keep.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^nothing \|^--warc \|^--warc --cdx \|^--save \|^--warc --save ' <<<"$output")" -eq 5 ]
	# 210 listed URLs and the site's two pages reached from /site/: the same rows each time
	[ "$(awk 'NR > 2 { print $(NF - 5) }' <<<"$output" | sort -u)" = 213 ]
	# nothing kept leaves nothing on disk; each way of keeping leaves something
	[ "$(awk '$1 == "nothing" { print $NF }' <<<"$output")" = 0.0 ]
	[ "$(awk 'NR > 3 && $NF + 0 > 0' <<<"$output" | wc -l)" -eq 4 ]
}

@test "scripts/bench-polite.sh QUICK=1 prints a median for both builds in both cases" {
	run env BUILD="$BUILD" BASE="$CRAWL" QUICK=1 scripts/bench-polite.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -cE '^(plain|--retry 3) +[0-9.]+ +[0-9.]+$' <<<"$output")" -eq 2 ]
}

@test "scripts/bench-state.sh QUICK=1 prints the in-memory and the --state figures of each model asked" {
	run env BUILD="$BUILD" QUICK=1 MODES="seq coro" scripts/bench-state.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "# scripts/bench-state.sh: 1000 pages of /graph/1000/4/, depth 5, medians of 1 "* ]]
	[ "${lines[1]}" = "model     rows     mem_s   state_s    mem_kb  state_kb   ratio" ]
	[[ "${lines[2]}" =~ ^seq\ +1000\ +[0-9.]+\ +[0-9.]+\ +[0-9]+\ +[0-9]+\ +[0-9.]+x$ ]]
	[[ "${lines[3]}" =~ ^coro\ +1000\ +[0-9.]+\ +[0-9.]+\ +[0-9]+\ +[0-9]+\ +[0-9.]+x$ ]]
	[ "${#lines[@]}" -eq 4 ]
}

@test "scripts/bench-frontier.sh QUICK=1 prints one process in memory, then 1, 2 and 4 --frontier workers, each run checked" {
	run env BUILD="$BUILD" QUICK=1 scripts/bench-frontier.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "# scripts/bench-frontier.sh: 1000 pages of /graph/1000/4/, depth 5, --mode=coro, medians of 1 "* ]]
	[ "${lines[1]}" = "run                      wall_s  pages/s crawl_cpu_s redis_cpu_s  cpu_us/page" ]
	[[ "${lines[2]}" =~ ^in\ memory,\ 1\ process\ +[0-9.]+\ +[0-9]+\ +[0-9.]+\ +0.00\ +[0-9.]+$ ]]
	[[ "${lines[3]}" =~ ^--frontier,\ 1\ worker\ +[0-9.]+\ +[0-9]+\ +[0-9.]+\ +[0-9.]+\ +[0-9.]+$ ]]
	[[ "${lines[4]}" =~ ^--frontier,\ 2\ workers\ +[0-9.]+ ]]
	[[ "${lines[5]}" =~ ^--frontier,\ 4\ workers\ +[0-9.]+ ]]
	[ "${#lines[@]}" -eq 7 ]
}

@test "scripts/bench-frontier.sh WEB=1 on a small web prints one worker in memory, direct and through tcpdelay, then workers against one, every run judged by the web's checker" {
	run env BUILD="$BUILD" WEB=1 RUNS=1 RTTS=2 WEB_HOSTS=12 WEB_PAGES=3 WEB_MS=1 WEB_SLOW_HOSTS=12 \
		WEB_SLOW_PAGES=2 WEB_SLOW_MS=2 WEB_WORKERS="1 2" WEB_DELAY=5 scripts/bench-frontier.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "# scripts/bench-frontier.sh WEB=1: the synthetic web, 12 hosts of 3 pages on average (seed 1), three seeds, --per-host 2 --delay 5, --mode=coro, medians of 1 "* ]]
	[ "${lines[1]}" = "run                                              wall_s   rows  pages/s  vs_first" ]
	[[ "${lines[2]}" =~ ^one\ worker\ -c\ 50,\ in\ memory\ +[0-9.]+\ +[0-9]+\ +[0-9]+\ +1.00x$ ]]
	[[ "${lines[3]}" =~ ^one\ worker\ -c\ 50,\ --frontier\ direct\ +[0-9.]+\ +[0-9]+\ +[0-9]+\ +[0-9.]+x$ ]]
	[[ "${lines[4]}" =~ ^one\ worker\ -c\ 50,\ 2\ ms\ round\ trip\ +[0-9.]+ ]]
	[[ "${lines[5]}" =~ ^12\ x\ 2,\ --web-ms\ 2,\ in\ memory,\ -c\ 4\ +[0-9.]+\ +[0-9]+\ +[0-9]+\ +1.00x$ ]]
	[[ "${lines[6]}" =~ ^12\ x\ 2,\ --web-ms\ 2,\ 1\ x\ -c\ 4,\ direct\ +[0-9.]+ ]]
	[[ "${lines[7]}" =~ ^12\ x\ 2,\ --web-ms\ 2,\ 2\ x\ -c\ 4,\ direct\ +[0-9.]+ ]]
	[[ "${lines[8]}" == "# vs_first: "* ]]
	[ "${#lines[@]}" -eq 9 ]
}

@test "scripts/bench-state-check.sh QUICK=1 times the check of a 2000-page crawl's state three ways" {
	run env BUILD="$BUILD" QUICK=1 scripts/bench-state-check.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "# scripts/bench-state-check.sh: the state of a 2000-page crawl of /graph/2000/4/, depth 6 ("*" pages of 4096), medians of 1 "* ]]
	[ "${lines[1]}" = "case                          seconds" ]
	[[ "${lines[2]}" =~ ^check,\ file\ in\ page\ cache\ +[0-9.]+$ ]]
	[[ "${lines[3]}" =~ ^check,\ file\ dropped\ first\ +[0-9.]+$ ]]
	[[ "${lines[4]}" =~ ^run\ on\ the\ finished\ state\ +[0-9.]+$ ]]
	[ "${#lines[@]}" -eq 5 ]
}

@test "scripts/bench-store.sh measures lib/state_lmdb.c (LMDB) and SQLite on the same work" {
	pkg-config --exists sqlite3 || skip "libsqlite3-dev is not installed"
	run env BUILD="$BUILD" PAGES=1000 RUNS=1 BATCHES=30 scripts/bench-store.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "# scripts/bench-store.sh: the store's work for 1000 pages, medians of 1 "* ]]
	[[ "${lines[2]}" =~ ^lmdb\ +30\ +[0-9.]+\ +[0-9.]+$ ]]
	[[ "${lines[3]}" =~ ^sqlite\ +30\ +[0-9.]+\ +[0-9.]+$ ]]
	[ "${#lines[@]}" -eq 4 ]
}
