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
#   AGAINST=dir  a folder holding another build's crawl (an earlier commit's,
#                built with make BUILD=...): every crawl row runs with it too,
#                in turn within each run, which of the two goes first
#                alternating ("against:" rows), and the end lists this build's
#                wall time and peak RSS over the other's, row by row
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
OTHER=
if [ -n "${AGAINST:-}" ]; then
	OTHER=$(cd "$AGAINST" 2>/dev/null && pwd)/crawl
	[ -x "$OTHER" ] || { echo "bench-coro: AGAINST=$AGAINST holds no crawl" >&2; exit 1; }
fi

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

rows=() ratios=()
# row_line CASE WHO N WALLS RSSS NOTE: a row of medians (WALLS and RSSS:
# one figure a line); sets MED_WALL and MED_RSS_KB.
row_line() {
	local case=$1 who=$2 n=$3 note=$6 w r
	w=$(printf '%s' "$4" | median)
	MED_RSS_KB=$(printf '%s' "$5" | median)
	MED_WALL=$w
	r=$MED_RSS_KB
	[ "$r" != - ] && r=$(awk -v k="$r" 'BEGIN{printf "%.1f", k / 1024}')
	rows+=("$(printf '%-36s %-34s %7.3f %9.0f %8s %7s %7s  %s' "$case" "$who" "$w" \
		"$(awk -v n="$n" -v w="$w" 'BEGIN{print n / w}')" "$r" "$reqs" "$conns" "$note")")
}

# against_ratio CASE WHO WALL RSS OTHER_WALL OTHER_RSS: a line of this
# build's figures over the other's.
against_ratio() {
	ratios+=("$(awk -v c="$1" -v w="$2" -v a="$3" -v m="$4" -v b="$5" -v n="$6" 'BEGIN {
		printf "  %-36s %-26s wall %5.2fx", c, w, (b > 0 ? a / b : 0)
		if (m != "-" && n != "-" && n > 0) printf ", peak RSS %5.2fx", m / n
		printf "\n" }')")
}

# row CASE WHO N RUNS LIMIT CMD...: measures CMD RUNS times and adds a row
# of medians. With AGAINST, a crawl command runs with the other build's
# crawl too, the two in turn, and adds its row and their ratio.
row() {
	local case=$1 who=$2 n=$3 runs=$4 limit=$5; shift 5
	local walls="" rsss="" note="" owalls="" orsss="" onote="" treqs=0 tconns=0 oreqs=0 oconns=0 i k
	local against=0
	[ -n "$OTHER" ] && [ "$1" = "$CRAWL" ] && against=1
	CASES=$((${CASES:-0} + 1))
	printf 'bench-coro: case %d: %s, %s (%d run%s%s; %ds so far)\n' "$CASES" "$case" "$who" "$runs" \
		"$([ "$runs" -eq 1 ] || echo s)" "$([ "$against" = 1 ] && echo ", each with the other build's")" "$SECONDS" >&2
	for i in $(seq "$runs"); do
		for k in $(turns "$i" $((against + 1))); do
			if [ "$k" = 0 ]; then
				measure "$limit" "$@"
				[ "$status" -eq 124 ] && note="timed out"
				[ "$status" -ne 0 ] && [ "$status" -ne 124 ] && note="exit status $status"
				walls+="$wall"$'\n' rsss+="$rss"$'\n' treqs=$reqs tconns=$conns
			else
				measure "$limit" "$OTHER" "${@:2}"
				[ "$status" -eq 124 ] && onote="timed out"
				[ "$status" -ne 0 ] && [ "$status" -ne 124 ] && onote="exit status $status"
				owalls+="$wall"$'\n' orsss+="$rss"$'\n' oreqs=$reqs oconns=$conns
			fi
		done
	done
	reqs=$treqs conns=$tconns
	[ "$reqs" -ne "$n" ] && note="${note:+$note; }$reqs requests for $n URLs"
	row_line "$case" "$who" "$n" "$walls" "$rsss" "$note"
	LAST_RSS_KB=$MED_RSS_KB
	[ "$against" = 1 ] || return 0
	local w=$MED_WALL m=$MED_RSS_KB
	reqs=$oreqs conns=$oconns
	[ "$reqs" -ne "$n" ] && onote="${onote:+$onote; }$reqs requests for $n URLs"
	row_line "$case" "against: $who" "$n" "$owalls" "$orsss" "$onote"
	OTHER_RSS_KB=$MED_RSS_KB
	against_ratio "$case" "$who" "$w" "$m" "$MED_WALL" "$MED_RSS_KB"
}

skip() { rows+=("$(printf '%-36s %-34s  skipped: %s' "$1" "$2" "$3")"); }

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
# per_url WHO ALL_KB ONE_KB: the memory a URL in flight costs.
per_url() {
	awk -v m="$1" -v all="$2" -v one="$3" -v n="$NM" 'BEGIN{
		printf "%-15s %7.1f KB per URL in flight (peak RSS / %d), %6.1f KB net of a one-URL run",
			m, all / n, n, (all - one) / (n - 1)}'
}
mem=()
for m in coro thread; do
	row "$c4" "crawl $m" "$NM" "$RUNS" 60 "$CRAWL" --mode=$m -q "$tmp/mem"
	all=$LAST_RSS_KB oall=${OTHER_RSS_KB:-}
	row "$c4 (1 URL)" "crawl $m" 1 "$RUNS" 60 "$CRAWL" --mode=$m -q "$tmp/one"
	one=$LAST_RSS_KB oone=${OTHER_RSS_KB:-}
	if [ "$all" != - ]; then
		mem+=("$(per_url "$m" "$all" "$one")")
		[ -n "$OTHER" ] && mem+=("$(per_url "against: $m" "$oall" "$oone")")
	fi
done

# h2row WHO CRAWL-ARGS...: like row, for crawl against the HTTP/2 server;
# conns from crawl's own summary, reqs not counted.
h2row() {
	local who=$1; shift
	local i k bin walls="" rsss="" owalls="" orsss="" cc=- occ=- note="" onote=""
	for i in $(seq "$RUNS"); do
		for k in $(turns "$i" $((${#OTHER} > 0 ? 2 : 1))); do
			bin=$CRAWL
			[ "$k" = 1 ] && bin=$OTHER
			measure 60 "$bin" -k -q --format=jsonl "$@" "$tmp/h2list"
			if [ "$k" = 0 ]; then
				walls+="$wall"$'\n' rsss+="$rss"$'\n'
				cc=$(sed -n 's/.*"conns":\([0-9]*\).*/\1/p' "$tmp/out")
				[ "$status" -ne 0 ] && note="exit status $status"
			else
				owalls+="$wall"$'\n' orsss+="$rss"$'\n'
				occ=$(sed -n 's/.*"conns":\([0-9]*\).*/\1/p' "$tmp/out")
				[ "$status" -ne 0 ] && onote="exit status $status"
			fi
		done
	done
	reqs=- conns=${cc:--}
	row_line "$c5" "$who" "$NH" "$walls" "$rsss" "$note"
	[ -n "$OTHER" ] || return 0
	local w=$MED_WALL m=$MED_RSS_KB
	conns=${occ:--}
	row_line "$c5" "against: $who" "$NH" "$owalls" "$orsss" "$onote"
	against_ratio "$c5" "$who" "$w" "$m" "$MED_WALL" "$MED_RSS_KB"
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

printf '%-36s %-34s %7s %9s %8s %7s %7s  %s\n' case model/peer "wall s" "URLs/s" "RSS MB" reqs conns note
printf '%s\n' "${rows[@]}"
echo
if [ ${#mem[@]} -gt 0 ]; then
	printf '%s\n' "${mem[@]}"
else
	echo "memory per URL: skipped (/usr/bin/time is not installed)"
fi
if [ ${#ratios[@]} -gt 0 ]; then
	echo
	echo "this build over the other (AGAINST=$AGAINST, commit $(git -C "$AGAINST" rev-parse --short HEAD 2>/dev/null || echo unknown); below 1: this build takes less):"
	printf '%s\n' "${ratios[@]}"
fi
echo
echo "medians of $RUNS run(s) (pool: $POOL_RUNS); wall is the process's; reqs and conns as the fixture server counted them (HTTP/2 rows: conns as counted by crawl)"
