# Shared helpers for the end-to-end tests. tests/run.sh exports CRAWL,
# FIXTURE_SERVER, FIXTURE (http://127.0.0.1:PORT) and FIXTURE_PORT.

: "${BUILD:=build}"
: "${CRAWL:=$PWD/$BUILD/crawl}"
: "${FIXTURE_SERVER:=$PWD/$BUILD/fixture-server}"

# Every model, from the registry: a new model is tested wherever $MODES is.
# SKIP_MODES (names, space-separated) leaves some out of the loops: the
# ThreadSanitizer run skips procs, whose workers start threads after a fork
# of a threaded process, which ThreadSanitizer cannot follow ("dup thread"
# reports on stderr). NMODES counts the models looped over; NALL and
# per_mode count every model, as --mode=all runs them all.
MODES=$("$CRAWL" --list-modes | tr '\n' ' ')
NALL=$(wc -w <<<"$MODES")
for skip in ${SKIP_MODES:-}; do MODES=${MODES/$skip /}; done
NMODES=$(wc -w <<<"$MODES")

# per_mode TEXT: "MODE TEXT;" for every model in registry order, as the
# comparison rows of --mode=all list them.
per_mode() {
	local m
	for m in $("$CRAWL" --list-modes); do printf '%s %s;' "$m" "$1"; done
}

# tls_cert, h2_start, h2_stop
. "$BATS_TEST_DIRNAME/../../scripts/fixture-lib.sh"

# start_private_fixture [ARGS...]: starts a fixture server of this test's own
# (fresh counters) and sets PFIX (its base URL) and PFIX_PID.
start_private_fixture() {
	local pf="$BATS_TEST_TMPDIR/pfix.port"
	rm -f "$pf"
	"$FIXTURE_SERVER" --port 0 --port-file "$pf" -q "$@" 3>&- &
	PFIX_PID=$!
	for _ in $(seq 100); do [ -s "$pf" ] && break; sleep 0.05; done
	[ -s "$pf" ] || { echo "private fixture server did not start" >&2; return 1; }
	PFIX="http://127.0.0.1:$(cat "$pf")"
}

stop_private_fixture() {
	[ -n "${PFIX_PID:-}" ] && kill "$PFIX_PID" 2>/dev/null && wait "$PFIX_PID" 2>/dev/null
	PFIX_PID=
	return 0
}

# A test that fails before it stops its private fixture leaves it to this
# (a file that needs a teardown of its own calls stop_private_fixture too).
teardown() {
	stop_private_fixture
}

# stat_of URL_BASE FIELD: prints one counter from the fixture's /stats.
stat_of() {
	curl -s "$1/stats" | jq -r ".$2"
}
