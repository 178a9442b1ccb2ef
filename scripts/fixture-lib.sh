# Sourced by the scripts and the test runner: the fixture server on a free
# loopback port. Needs BUILD (the folder holding fixture-server).

# fixture_start DIR [ARGS...]: starts the server (its port file goes in DIR)
# and sets FIXTURE_PID and FIXTURE_BASE (http://127.0.0.1:PORT).
fixture_start() {
	local dir=$1
	shift
	rm -f "$dir/port"
	# Its descriptors, not the caller's: a pipe the caller reads (a test
	# runner's, a command substitution's) must not stay open in the server.
	"$BUILD/fixture-server" --port 0 --port-file "$dir/port" -q "$@" </dev/null >/dev/null &
	FIXTURE_PID=$!
	for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
	if [ ! -s "$dir/port" ]; then
		echo "${0##*/}: the fixture server did not start" >&2
		return 1
	fi
	FIXTURE_BASE="http://127.0.0.1:$(cat "$dir/port")"
}

# fixture_stop: stops the server fixture_start started, if any.
fixture_stop() {
	if [ -n "${FIXTURE_PID:-}" ]; then
		kill "$FIXTURE_PID" 2>/dev/null && wait "$FIXTURE_PID" 2>/dev/null
	fi
	FIXTURE_PID=
	return 0
}
