# Shared helpers for the end-to-end tests. tests/run.sh exports BUILD, CRAWL
# and FIXTURE_SERVER; every test gets a fixture server of its own (setup,
# fixture_up), at FIXTURE (http://127.0.0.1:PORT) and FIXTURE_PORT.

: "${BUILD:=build}"
: "${CRAWL:=$PWD/$BUILD/crawl}"
: "${FIXTURE_SERVER:=$PWD/$BUILD/fixture-server}"

# "Within a second", as the tests that time the answer to a signal read
# it: under a sanitizer every start, thread and exit of a process is
# slower, and a second of wall time is not one of crawl's.
SECOND_MS=1000
case "$BUILD" in *asan*|*tsan*) SECOND_MS=2500 ;; esac

# sanitized: crawl is a sanitizer's build (make sanitize, make tsan).
sanitized() { [ "$SECOND_MS" -ne 1000 ]; }

# others_reach PATH: whether a user other than root can run PATH: not when
# the checkout sits in a folder only root may enter (mktemp -d's).
others_reach() { setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$1" 2>/dev/null; }

# soon SEC: SEC of those seconds, for a bound on how soon a thing happens.
soon() { awk -v s="$1" -v ms="$SECOND_MS" 'BEGIN { print s * ms / 1000 }'; }

# Every model, from the registry: a new model is tested wherever $MODES is.
# SKIP_MODES (names, space-separated) leaves some out of the loops;
# ALL_MODES keeps them all, for the tests of the registry itself (--help,
# the manual, the completion). NMODES counts the models looped over; NALL
# and per_mode count every model, as --mode=all runs them all. No test
# counts the models or knows their names: a test that runs every model
# carries "# bats test_tags=models", and make check-model runs those
# tests on a build with a sixth model (suite.bats holds them to it).
ALL_MODES=$("$CRAWL" --list-modes | tr '\n' ' ')
NALL=$(wc -w <<<"$ALL_MODES")
MODES=
for m in $ALL_MODES; do
	[[ " ${SKIP_MODES:-} " == *" $m "* ]] || MODES+="$m "
done
NMODES=$(wc -w <<<"$MODES")

# looped MODE: true when the loops over $MODES run MODE (SKIP_MODES does
# not leave it out), for a test of one model by name.
looped() {
	[[ " $MODES " == *" $1 "* ]]
}

# sequential MODE: true when the model runs one transfer at a time (the
# registry says so: --list-modes=limits), whatever it is called.
SEQUENTIAL=$("$CRAWL" --list-modes=limits | awk '$2 == 1 { printf "%s ", $1 }')
sequential() {
	[[ " $SEQUENTIAL " == *" $1 "* ]]
}

# The models of $MODES split by that: SEQUENTIAL_MODES pay the sum of their
# transfers' times, CONCURRENT_MODES only the longest, for the tests of
# what only concurrency shows (an order of completion, a wall time).
SEQUENTIAL_MODES= CONCURRENT_MODES=
for m in $MODES; do
	if sequential "$m"; then SEQUENTIAL_MODES+="$m "; else CONCURRENT_MODES+="$m "; fi
done

# per_mode TEXT: "MODE TEXT;" for every model in registry order, as the
# comparison rows of --mode=all list them.
per_mode() {
	local m
	for m in $("$CRAWL" --list-modes); do printf '%s %s;' "$m" "$1"; done
}

# tls_cert, h2_start, h2_stop
. "$BATS_TEST_DIRNAME/../../scripts/fixture-lib.sh"

# spawn_fixture PORTFILE ARGS...: starts a fixture server on a free port
# (written to PORTFILE) and sets SPAWNED_PID and SPAWNED_URL.
spawn_fixture() {
	local pf=$1
	shift
	rm -f "$pf"
	"$FIXTURE_SERVER" --port 0 --port-file "$pf" -q "$@" </dev/null >/dev/null 3>&- &
	SPAWNED_PID=$!
	for _ in $(seq 500); do [ -s "$pf" ] && break; sleep 0.01; done
	[ -s "$pf" ] || { echo "fixture server did not start" >&2; return 1; }
	SPAWNED_URL="http://127.0.0.1:$(cat "$pf")"
}

# fixture_up: this test's own fixture server, serving testdata/site, so
# that its counters are this test's alone; sets FIXTURE (its base URL),
# FIXTURE_PORT and FIXTURE_PID. The default setup calls it; a file with a
# setup of its own calls it first.
fixture_up() {
	spawn_fixture "$BATS_TEST_TMPDIR/fixture.port" --root "$BATS_TEST_DIRNAME/../../testdata/site" || return 1
	FIXTURE=$SPAWNED_URL FIXTURE_PID=$SPAWNED_PID
	FIXTURE_PORT=${FIXTURE##*:}
	export FIXTURE FIXTURE_PORT
}

# start_private_fixture [ARGS...]: one more fixture server, with ARGS (a
# second site, a robots.txt of its own, a server to restart); sets PFIX
# (its base URL) and PFIX_PID.
start_private_fixture() {
	spawn_fixture "$BATS_TEST_TMPDIR/pfix.port" "$@" || return 1
	PFIX=$SPAWNED_URL PFIX_PID=$SPAWNED_PID
}

stop_private_fixture() {
	[ -n "${PFIX_PID:-}" ] && kill "$PFIX_PID" 2>/dev/null && wait "$PFIX_PID" 2>/dev/null
	PFIX_PID=
	return 0
}

# stop_fixtures: stops this test's fixture servers, both kinds.
stop_fixtures() {
	stop_private_fixture
	[ -n "${FIXTURE_PID:-}" ] && kill "$FIXTURE_PID" 2>/dev/null && wait "$FIXTURE_PID" 2>/dev/null
	FIXTURE_PID=
	return 0
}

setup() {
	fixture_up
}

# A file that needs a teardown of its own calls stop_fixtures too.
teardown() {
	stop_fixtures
}

# stat_of URL_BASE FIELD: prints one counter from the fixture's /stats.
stat_of() {
	curl -s "$1/stats" | jq -r ".$2"
}

# alone: the first line of a test whose outcome the machine's load would
# upset (a thousand transfers against their timeouts, counts reached by a
# deadline). tests/run.sh skips such tests among the others and runs them
# afterwards, one at a time; run by bats directly, they just run.
alone() {
	if [ "${CRAWL_TEST_PASS:-}" = together ]; then
		skip "runs alone, after the others"
	fi
}

# parents_hold FILE...: the rows in FILEs (JSON lines, a crawl's every
# page once) say where each page was found: a listed one nowhere (null),
# a found one on the page one hop up whose final URL is its parent.
parents_hold() {
	cat "$@" | jq -s -e 'map(select(.url)) as $r |
		($r | map(select(.final_url) | {key: .final_url, value: .depth}) | from_entries) as $at |
		($r | length) > 0 and
		($r | all(if .depth == 0 then .parent == null else ($at[.parent // ""] // -1) == .depth - 1 end))' >/dev/null
}

# wait_until SECONDS COMMAND...: runs COMMAND every 20 ms until it succeeds;
# fails, saying what it waited for, when SECONDS pass first. Tests wait for
# an event (a request seen, a row written), not for a time.
wait_until() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 50; i++)); do
		"$@" && return 0
		sleep 0.02
	done
	echo "still not true after $t s: $*" >&2
	return 1
}

# requested URL_BASE PATH [N]: true once the fixture at URL_BASE has seen N
# requests (default 1) for exactly PATH.
requested() {
	[ "$(curl -s "$1/stats?path=$2" | jq .count)" -ge "${3:-1}" ]
}

# requests_seen URL_BASE N: true once the fixture has seen N requests.
requests_seen() {
	[ "$(curl -s "$1/stats" | jq .requests)" -ge "$2" ]
}

# answered URL_BASE N: true once the fixture has answered N requests in full.
answered() {
	[ "$(curl -s "$1/stats" | jq '.requests - .active')" -ge "$2" ]
}

# has_lines FILE N: true once FILE holds N lines.
has_lines() {
	[ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]
}
