#!/bin/bash
# Measures the fixture server on loopback, next to nginx as a yardstick:
#  1. keep-alive throughput on 1 KiB responses, wrk -t2 -c100 against the
#     fixture's /bytes/1024 and against a temporary nginx (2 workers, a static
#     1 KiB file), in the same run;
#  2. 10,000 concurrent connections each waiting on /delay/1000.
# Prints the figures and a summary table; takes about 25 s. Only 127.0.0.1
# traffic. Nothing is asserted: the figures depend on the machine.
#   BUILD=dir      where fixture-server is (default build; built if missing)
#   DURATION=5s    length of each wrk run
#   CONNS=10000    connections of the /delay run
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-10000}

scripts/deps.sh wrk nginx-light
[ -x "$BUILD/fixture-server" ] || make --no-print-directory BUILD="$BUILD" "$BUILD/fixture-server"

# wrk holds one descriptor per connection, so CONNS needs a high limit.
ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((CONNS + 100)) ]; then
	echo "fixture-bench: ulimit -n is $(ulimit -n), too low for $CONNS connections" >&2
	exit 1
fi

. scripts/fixture-lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fixture-bench.XXXXXX")
nginx_pid=
cleanup() {
	fixture_stop
	[ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# A free port for nginx: let the kernel pick one for a fixture server, then
# stop it and hand the port over (the window in between is tiny).
mkdir -p "$tmp/nginx" "$tmp/fixture"
fixture_start "$tmp/nginx" || exit 1
nginx_port=$(cat "$tmp/nginx/port")
fixture_stop

fixture_start "$tmp/fixture" || exit 1
fixture_port=$(cat "$tmp/fixture/port")

mkdir -p "$tmp/www"
head -c 1024 /dev/zero | tr '\0' x >"$tmp/www/1k.txt"
chmod 755 "$tmp" "$tmp/www"      # nginx's workers drop to an unprivileged user
chmod 644 "$tmp/www/1k.txt"
cat >"$tmp/nginx.conf" <<EOF
worker_processes 2;
worker_rlimit_nofile 20000;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx.err;
events { worker_connections 20000; }
http {
    access_log off;
    client_body_temp_path $tmp/body;
    proxy_temp_path $tmp/proxy;
    fastcgi_temp_path $tmp/fastcgi;
    uwsgi_temp_path $tmp/uwsgi;
    scgi_temp_path $tmp/scgi;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$nginx_port backlog=65535;
        root $tmp/www;
    }
}
EOF
nginx -e "$tmp/nginx.err" -p "$tmp/" -c "$tmp/nginx.conf" &
nginx_pid=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$nginx_port/1k.txt" && break; sleep 0.05; done
curl -sf -o /dev/null "http://127.0.0.1:$nginx_port/1k.txt" || {
	echo "fixture-bench: nginx did not start:" >&2; cat "$tmp/nginx.err" >&2; exit 1; }

fixture="http://127.0.0.1:$fixture_port"
rps() { sed -n 's/^Requests\/sec: *//p' "$1"; }

echo "== keep-alive, 1 KiB responses: wrk -t2 -c100 -d$DURATION"
echo "-- fixture-server $fixture/bytes/1024"
wrk -t2 -c100 -d"$DURATION" "$fixture/bytes/1024" | tee "$tmp/wrk-fixture"
echo "-- nginx (2 workers) http://127.0.0.1:$nginx_port/1k.txt"
wrk -t2 -c100 -d"$DURATION" "http://127.0.0.1:$nginx_port/1k.txt" | tee "$tmp/wrk-nginx"
kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true
nginx_pid=

# Fresh counters for the second run, so that its peaks are its own.
fixture_stop
fixture_start "$tmp/fixture" || exit 1
fixture=$FIXTURE_BASE

echo
echo "== $CONNS concurrent connections on /delay/1000: wrk -t2 -c$CONNS -d$DURATION --latency --timeout 5s"
wrk -t2 -c"$CONNS" -d"$DURATION" --latency --timeout 5s "$fixture/delay/1000" | tee "$tmp/wrk-delay"
stats=$(curl -s "$fixture/stats")
echo "fixture /stats: $stats"

# wrk prints latencies with units (us, ms, s, m); normalise to ms.
to_ms() {
	awk -v v="$1" 'BEGIN {
		n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
		if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
		printf "%.0f", n }'
}
f_rps=$(rps "$tmp/wrk-fixture")
n_rps=$(rps "$tmp/wrk-nginx")
ratio=$(awk -v a="$f_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
d_max=$(to_ms "$(awk '$1 == "Latency" { print $4; exit }' "$tmp/wrk-delay")")
d_p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$tmp/wrk-delay")")
d_p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$tmp/wrk-delay")")
d_req=$(awk '/requests in/ { print $1 }' "$tmp/wrk-delay")
d_err=$(sed -n 's/^ *Socket errors: //p' "$tmp/wrk-delay")
d_non2xx=$(sed -n 's/^ *Non-2xx or 3xx responses: //p' "$tmp/wrk-delay")
peak_open=$(jq -r .peak_open <<<"$stats")
peak_active=$(jq -r .peak_active <<<"$stats")

echo
echo "== summary ($(nproc) CPUs, loopback)"
printf '%-44s %s\n' "fixture /bytes/1024, 100 conns" "$f_rps req/s"
printf '%-44s %s\n' "nginx 1 KiB file, 2 workers, 100 conns" "$n_rps req/s"
printf '%-44s %s\n' "fixture / nginx" "$ratio"
printf '%-44s %s\n' "/delay/1000, $CONNS conns: responses" "$d_req"
printf '%-44s %s\n' "  latency p50 / p99 / max" "$d_p50 / $d_p99 / $d_max ms"
printf '%-44s %s\n' "  socket errors" "${d_err:-none}"
printf '%-44s %s\n' "  non-2xx responses" "${d_non2xx:-0}"
printf '%-44s %s\n' "  fixture peak_open / peak_active" "$peak_open / $peak_active"
