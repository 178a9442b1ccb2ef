# Sourced by the scripts and the tests: the fixture server on a free
# loopback port (needs BUILD, the folder holding fixture-server), and a
# local HTTPS/HTTP/2 server (openssl and nghttpd).

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
		kill "$FIXTURE_PID" 2>/dev/null && { wait "$FIXTURE_PID" 2>/dev/null || true; }
	fi
	FIXTURE_PID=
	return 0
}

# tls_cert DIR: a throwaway self-signed certificate for 127.0.0.1, valid two
# days, in DIR/cert.pem with its key in DIR/key.pem.
tls_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$1/key.pem" -out "$1/cert.pem" -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
}

# h2_start DIR FILE: nghttpd (nghttp2-server) serving DIR/h2root over TLS
# with DIR's certificate (tls_cert); sets H2 (https://127.0.0.1:PORT) and
# H2_PID. nghttpd cannot say which port it got, so free ports are tried
# until one serves FILE (under h2root) over HTTP/2.
h2_start() {
	local dir=$1 file=$2 port
	[ -x /usr/sbin/nghttpd ] || return 1
	for _ in $(seq 20); do
		port=$((20000 + RANDOM % 30000))
		/usr/sbin/nghttpd -d "$dir/h2root" --address=127.0.0.1 "$port" "$dir/key.pem" \
			"$dir/cert.pem" >"$dir/nghttpd.log" 2>&1 </dev/null 3>&- &
		H2_PID=$!
		for _ in $(seq 100); do
			[ "$(curl -sk --http2 --max-time 2 -o /dev/null -w '%{http_version}' \
				"https://127.0.0.1:$port/$file")" = 2 ] &&
				{ H2="https://127.0.0.1:$port"; return 0; }
			kill -0 "$H2_PID" 2>/dev/null || break
			sleep 0.05
		done
		# Gone already when the port was taken: the next one is tried.
		kill "$H2_PID" 2>/dev/null || true
		wait "$H2_PID" 2>/dev/null || true
	done
	H2_PID=
	echo "h2_start: nghttpd did not serve $file over HTTP/2; its last log:" >&2
	tail -5 "$dir/nghttpd.log" >&2
	return 1
}

# h2_stop: stops the server h2_start started, if any.
h2_stop() {
	if [ -n "${H2_PID:-}" ]; then
		kill "$H2_PID" 2>/dev/null && { wait "$H2_PID" 2>/dev/null || true; }
	fi
	H2_PID=
	return 0
}

# redis_start DIR [ARGS...]: a throwaway redis-server on a free loopback
# port, with nothing saved to disk (its working folder is DIR) and ARGS
# added to its command line; sets REDIS_PID and REDIS_ADDR (127.0.0.1:PORT).
# A port taken by another process makes it try the next; with REDIS_PORT
# set, that port only (a server started again where one was killed).
redis_start() {
	local dir=$1 port auth=()
	shift
	# A server that asks for a password is asked with it.
	[ "${1:-}" = --requirepass ] && auth=(-a "$2" --no-auth-warning)
	for _ in $(seq 20); do
		port=${REDIS_PORT:-$((20000 + RANDOM % 30000))}
		redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
			--dir "$dir" --logfile "$dir/redis.log" "$@" </dev/null >/dev/null 2>&1 &
		REDIS_PID=$!
		# Up, and ours (not another server that had the port).
		for _ in $(seq 100); do
			redis-cli -p "$port" "${auth[@]}" info server 2>/dev/null |
				grep -q "^process_id:$REDIS_PID" && break
			kill -0 "$REDIS_PID" 2>/dev/null || break
			sleep 0.05
		done
		if redis-cli -p "$port" "${auth[@]}" info server 2>/dev/null | grep -q "^process_id:$REDIS_PID"; then
			REDIS_ADDR=127.0.0.1:$port
			return 0
		fi
		kill "$REDIS_PID" 2>/dev/null || true
		wait "$REDIS_PID" 2>/dev/null || true
	done
	echo "${0##*/}: redis-server did not start" >&2
	cat "$dir/redis.log" >&2 2>/dev/null
	return 1
}

# redis_stop: stops the server redis_start started, if any.
redis_stop() {
	if [ -n "${REDIS_PID:-}" ]; then
		kill "$REDIS_PID" 2>/dev/null && { wait "$REDIS_PID" 2>/dev/null || true; }
	fi
	REDIS_PID=
	return 0
}
