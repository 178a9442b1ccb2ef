#!/bin/bash
# Measures the coroutine model against the fixture server on this machine
# (issue 4), next to the other models and to curl and wget2 on the same
# lists, and prints a table of medians:
#   1. 1,000 x /delay/100/i, all at once (coro);
#   2. 10,000 x /delay/1000/i, all at once (coro, thread; pool -c 100);
#   3. 20,000 x /bytes/1024?i=N, 100 in flight, keep-alive: coro with one
#      and two loops, curl --parallel, wget2 --max-threads 100;
#   4. memory per URL in flight: peak RSS / 1,000 x /delay/1000, coro and
#      thread (and net of a one-URL run);
#   5. 1,000 https URLs to a local HTTP/2 server (nghttpd, a throwaway
#      self-signed certificate), all at once: the default policy (reuse on,
#      each transfer waiting to learn that the host multiplexes) against
#      --no-reuse; "conns" is what crawl counted.
# Wall time is the process's (start to exit), peak RSS from /usr/bin/time;
# "reqs" and "conns" are what the fixture server counted (its /stats), so a
# peer that skipped requests or did not keep connections alive shows it.
# Every command runs under timeout; only 127.0.0.1 is contacted. It takes
# about 3 minutes on 2 cores (the pool case alone 100 s); each case says on
# stderr when it starts, with the time gone so far.
#   BUILD=dir    where crawl and fixture-server are (default build; built if missing)
#   RUNS=3       runs per case (the median is shown); the pool case runs once
#                unless POOL_RUNS says otherwise (10,000 x 1 s / 100 = 100 s a run)
#   QUICK=1      small lists and one run of everything: about 10 s, for tests
#   NODEPS=1     do not call scripts/deps.sh (which installs missing packages as root)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
QUICK=${QUICK:-0}

if [ "${NODEPS:-0}" != 1 ]; then
	scripts/deps.sh time wget2 curl openssl=openssl nghttp2-server || echo "bench-coro: some packages are missing; their rows are skipped" >&2
fi
[ -x "$BUILD/crawl" ] && [ -x "$BUILD/fixture-server" ] ||
	make --no-print-directory BUILD="$BUILD" "$BUILD/crawl" "$BUILD/fixture-server" >&2 || exit 1
case $BUILD in
/*) CRAWL=$BUILD/crawl ;;
*)  CRAWL=$PWD/$BUILD/crawl ;;
esac

if [ "$QUICK" = 1 ]; then
	RUNS=1 POOL_RUNS=1
	N1=200 D1=100 N2=1000 D2=100 N3=2000 NM=200 DM=300 NH=100
else
	RUNS=${RUNS:-3} POOL_RUNS=${POOL_RUNS:-1}
	N1=1000 D1=100 N2=10000 D2=1000 N3=20000 NM=1000 DM=1000 NH=1000
fi

# Every transfer in flight holds a descriptor, and so does every thread's.
ulimit -n "$(ulimit -Hn)" 2>/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-coro.XXXXXX")
. scripts/fixture-lib.sh
. scripts/bench-lib.sh
cleanup() {
	h2_stop
	fixture_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
fixture_start "$tmp" || exit 1
BASE=$FIXTURE_BASE

have_time=0; [ -x /usr/bin/time ] && have_time=1
have_curl=0; command -v curl >/dev/null && curl --help all 2>/dev/null | grep -q -- --parallel-immediate && have_curl=1
have_wget2=0; command -v wget2 >/dev/null && have_wget2=1
have_jq=0; command -v jq >/dev/null && have_jq=1

# The lists; a query string makes every /bytes URL distinct, so that no peer
# can skip one as a duplicate.
seq "$N1" | sed "s|^|$BASE/delay/$D1/|" >"$tmp/delay1"
seq "$N2" | sed "s|^|$BASE/delay/$D2/|" >"$tmp/delay2"
seq "$N3" | sed "s|^|$BASE/bytes/1024?i=|" >"$tmp/bytes"
sed 's/.*/url = "&"\noutput = "\/dev\/null"/' "$tmp/bytes" >"$tmp/bytes.curl"
seq "$NM" | sed "s|^|$BASE/delay/$DM/|" >"$tmp/mem"
echo "$BASE/delay/$DM/0" >"$tmp/one"

counter() { # counter FIELD: one of the fixture's /stats counters
	if [ "$have_jq" = 1 ]; then
		curl -s --max-time 5 "$BASE/stats" 2>/dev/null | jq -r ".$1" 2>/dev/null
	else
		curl -s --max-time 5 "$BASE/stats" 2>/dev/null | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"
	fi
}

# measure LIMIT CMD...: runs CMD under timeout LIMIT (run_timed); sets
# wall (s), rss (KB; "-" without /usr/bin/time), status, and reqs and
# conns (the fixture's counts).
measure() {
	local limit=$1; shift
	local r0 c0
	r0=$(counter requests); c0=$(counter accepted)
	run_timed "$limit" "$tmp/out" "$@"
	status=$STATUS wall=$WALL rss=$RSS
	reqs=$(( $(counter requests) - r0 ))
	conns=$(( $(counter accepted) - c0 ))
	# Connections still closing count as they finish: let them.
	sleep 0.1
}

rows=()
# row CASE WHO N RUNS LIMIT CMD...: measures CMD RUNS times and adds a row
# of medians.
row() {
	local case=$1 who=$2 n=$3 runs=$4 limit=$5; shift 5
	local walls=() rsss=() note=""
	CASES=$((${CASES:-0} + 1))
	printf 'bench-coro: case %d: %s, %s (%d run%s; %ds so far)\n' "$CASES" "$case" "$who" "$runs" \
		"$([ "$runs" -eq 1 ] || echo s)" "$SECONDS" >&2
	for _ in $(seq "$runs"); do
		measure "$limit" "$@"
		[ "$status" -eq 124 ] && note="timed out"
		walls+=("$wall"); rsss+=("$rss")
	done
	local w r
	w=$(printf '%s\n' "${walls[@]}" | median)
	r=$(printf '%s\n' "${rsss[@]}" | median)
	[ "$r" != - ] && r=$(awk -v k="$r" 'BEGIN{printf "%.1f", k / 1024}')
	[ "$reqs" -ne "$n" ] && note="${note:+$note; }$reqs requests for $n URLs"
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] && note="${note:+$note; }exit status $status"
	rows+=("$(printf '%-36s %-26s %7.3f %9.0f %8s %7s %7s  %s' "$case" "$who" "$w" \
		"$(awk -v n="$n" -v w="$w" 'BEGIN{print n / w}')" "$r" "$reqs" "$conns" "$note")")
	LAST_RSS_KB=$(printf '%s\n' "${rsss[@]}" | median)
}

skip() { rows+=("$(printf '%-36s %-26s  skipped: %s' "$1" "$2" "$3")"); }

c1="$N1 x /delay/$D1, all at once"
row "$c1" "crawl coro --loops 1" "$N1" "$RUNS" 60 "$CRAWL" --mode=coro --loops 1 -q "$tmp/delay1"
row "$c1" "crawl coro --loops 2" "$N1" "$RUNS" 60 "$CRAWL" --mode=coro --loops 2 -q "$tmp/delay1"

c2="$N2 x /delay/$D2, all at once"
row "$c2" "crawl coro --loops 1" "$N2" "$RUNS" 60 "$CRAWL" --mode=coro --loops 1 -q "$tmp/delay2"
row "$c2" "crawl coro --loops 2" "$N2" "$RUNS" 60 "$CRAWL" --mode=coro --loops 2 -q "$tmp/delay2"
row "$c2" "crawl thread" "$N2" "$RUNS" 120 "$CRAWL" --mode=thread -q "$tmp/delay2"
row "$c2" "crawl pool -c 100" "$N2" "$POOL_RUNS" 300 "$CRAWL" --mode=pool -c 100 -q "$tmp/delay2"

c3="$N3 x /bytes/1024, 100 in flight"
row "$c3" "crawl coro --loops 1" "$N3" "$RUNS" 120 "$CRAWL" --mode=coro -c 100 --loops 1 -q "$tmp/bytes"
row "$c3" "crawl coro --loops 2" "$N3" "$RUNS" 120 "$CRAWL" --mode=coro -c 100 --loops 2 -q "$tmp/bytes"
if [ "$have_curl" = 1 ]; then
	row "$c3" "curl --parallel-max 100" "$N3" "$RUNS" 120 \
		curl -s --parallel --parallel-max 100 --parallel-immediate -K "$tmp/bytes.curl"
else
	skip "$c3" "curl --parallel-max 100" "curl with --parallel-immediate (7.68+) is not installed"
fi
if [ "$have_wget2" = 1 ]; then
	row "$c3" "wget2 --max-threads 100" "$N3" "$RUNS" 120 \
		wget2 -q --no-hsts --no-hpkp --no-ocsp --no-netrc --max-threads 100 -i "$tmp/bytes" -O /dev/null
else
	skip "$c3" "wget2 --max-threads 100" "wget2 is not installed"
fi

c4="memory: $NM x /delay/$DM"
mem=()
for m in coro thread; do
	row "$c4" "crawl $m" "$NM" "$RUNS" 60 "$CRAWL" --mode=$m -q "$tmp/mem"
	all=$LAST_RSS_KB
	row "$c4 (1 URL)" "crawl $m" 1 "$RUNS" 60 "$CRAWL" --mode=$m -q "$tmp/one"
	one=$LAST_RSS_KB
	if [ "$all" != - ]; then
		mem+=("$(awk -v m="$m" -v all="$all" -v one="$one" -v n="$NM" 'BEGIN{
			printf "%-6s %7.1f KB per URL in flight (peak RSS / %d), %6.1f KB net of a one-URL run",
				m, all / n, n, (all - one) / (n - 1)}')")
	fi
done

# h2row WHO CRAWL-ARGS...: like row, for crawl against the HTTP/2 server;
# conns from crawl's own summary, reqs not counted.
h2row() {
	local who=$1; shift
	local walls=() rsss=() crawl_conns=- note=""
	for _ in $(seq "$RUNS"); do
		measure 60 "$CRAWL" -k -q --format=jsonl "$@" "$tmp/h2list"
		walls+=("$wall"); rsss+=("$rss")
		crawl_conns=$(sed -n 's/.*"conns":\([0-9]*\).*/\1/p' "$tmp/out")
		[ "$status" -ne 0 ] && note="exit status $status"
	done
	local w r
	w=$(printf '%s\n' "${walls[@]}" | median)
	r=$(awk -v k="$(printf '%s\n' "${rsss[@]}" | median)" 'BEGIN{printf "%.1f", k / 1024}')
	rows+=("$(printf '%-36s %-26s %7.3f %9.0f %8s %7s %7s  %s' "$c5" "$who" "$w" \
		"$(awk -v n="$NH" -v w="$w" 'BEGIN{print n / w}')" "$r" - "${crawl_conns:--}" "$note")")
}

c5="$NH x https, HTTP/2 server, at once"
mkdir -p "$tmp/h2root"
head -c 1024 /dev/zero | tr '\0' x >"$tmp/h2root/page"
if [ "$have_time" = 1 ] && command -v openssl >/dev/null && tls_cert "$tmp" && h2_start "$tmp" page; then
	seq "$NH" | sed "s|^|$H2/page?i=|" >"$tmp/h2list"
	h2row "crawl coro (reuse auto)"
	h2row "crawl coro --no-reuse" --no-reuse
else
	skip "$c5" "crawl coro" "needs /usr/bin/time, openssl and nghttpd (nghttp2-server)"
fi

printf '%-36s %-26s %7s %9s %8s %7s %7s  %s\n' case model/peer "wall s" "URLs/s" "RSS MB" reqs conns note
printf '%s\n' "${rows[@]}"
echo
if [ ${#mem[@]} -gt 0 ]; then
	printf '%s\n' "${mem[@]}"
else
	echo "memory per URL: skipped (/usr/bin/time is not installed)"
fi
echo
echo "medians of $RUNS run(s) (pool: $POOL_RUNS); wall is the process's; reqs and conns as the fixture server counted them (HTTP/2 rows: conns as counted by crawl)"
