# netns-lib.sh: network namespaces and the processes in them, for the
# scripts that make machines out of them (web.sh: the synthetic web with
# real names; lab.sh: a small network of machines). Sourced, not run.
# Needs root and ip (iproute2); the web's machine needs dnsmasq.
#
#   ns_has NS                 NS exists
#   ns_make NS                makes NS, its loopback up
#   ns_remove NS              ends every process in NS (SIGTERM, then
#                             SIGKILL after 2 s), removes NS and its
#                             /etc/netns/NS; nothing when NS is not there
#   ns_resolver NS ADDR       a process run in NS (ip netns exec) asks the
#                             name server at ADDR
#   pid_alive DIR NAME        DIR/NAME.pid names a live process running NAME
#   pid_stop DIR NAME         ends it within 2 s, if it is ours
#   wait_for SECONDS CMD...   true once CMD is, tried every 20 ms
#   web_checks N SEED         the caller's die unless N is a web's count of
#                             hosts and SEED a number, and needs up (the
#                             caller's) and what a web runs are there
#   same_up ARGS...           the caller's is_up, with DIR/args ARGS
#   web_start NS DIR NET PORT DNS N SEED [FIXTURE-OPTION...]
#                             the synthetic web of N hosts in NS: its
#                             server on every address of NET/16 (routed
#                             to NS's loopback) at PORT, dnsmasq answering
#                             the hosts' names on DNS (an address of NS);
#                             their pids, logs, hosts and resolve files in
#                             DIR; SERVER: the fixture-server to run

ns_has() {
	ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qxF "$1"
}

ns_make() {
	ip netns add "$1"
	ip -n "$1" link set lo up
}

ns_remove() {
	ns_has "$1" || { rm -rf "/etc/netns/$1"; return 0; }
	local pids i
	pids=$(ip netns pids "$1" 2>/dev/null || true)
	if [ -n "$pids" ]; then
		# A stopped process takes SIGTERM once it goes on.
		kill $pids 2>/dev/null || true
		kill -CONT $pids 2>/dev/null || true
		for i in $(seq 100); do
			pids=$(ip netns pids "$1" 2>/dev/null || true)
			[ -z "$pids" ] && break
			sleep 0.02
		done
		[ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
	fi
	ip netns delete "$1"
	rm -rf "/etc/netns/$1"
}

ns_resolver() {
	mkdir -p "/etc/netns/$1"
	echo "nameserver $2" >"/etc/netns/$1/resolv.conf"
}

pid_alive() {
	local pid
	pid=$(cat "$1/$2.pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$2"
}

pid_stop() {
	pid_alive "$1" "$2" || { rm -f "$1/$2.pid"; return 0; }
	local pid i
	pid=$(cat "$1/$2.pid")
	kill "$pid" 2>/dev/null || true
	for i in $(seq 100); do pid_alive "$1" "$2" || break; sleep 0.02; done
	pid_alive "$1" "$2" && kill -9 "$pid" 2>/dev/null
	rm -f "$1/$2.pid"
}

wait_for() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 50; i++)); do "$@" && return 0; sleep 0.02; done
	return 1
}

web_checks() {
	[[ $1 =~ ^[1-9][0-9]*$ ]] && [ "$1" -le 65534 ] || die "up: N is 1 to 65534, got '$1'"
	[[ $2 =~ ^[0-9]+$ ]] || die "up: SEED is a number, got '$2'"
	needs up
	command -v dnsmasq >/dev/null || die "no dnsmasq: install dnsmasq-base"
	[ -x "$SERVER" ] || die "no $SERVER: run make"
}

same_up() {
	is_up && [ "$(cat "$DIR/args")" = "$*" ]
}

web_start() {
	local ns=$1 dir=$2 net=$3 port=$4 dns=$5 n=$6 seed=$7
	shift 7
	ip -n "$ns" route add local "$net/16" dev lo
	ip netns exec "$ns" "$SERVER" --web "$n" --seed "$seed" --web-net "$net" --port "$port" \
		--port-file "$dir/port" --hosts-file "$dir/hosts" --resolve-file "$dir/resolve" -q "$@" \
		</dev/null >"$dir/fixture-server.log" 2>&1 &
	echo $! >"$dir/fixture-server.pid"
	wait_for 10 test -s "$dir/port" ||
		{ cat "$dir/fixture-server.log" >&2; return 1; }
	chmod 644 "$dir/hosts"
	# Answers from the hosts file alone: no upstream server, nothing asked
	# outside the namespace, nothing else of web.test known.
	ip netns exec "$ns" dnsmasq --keep-in-foreground --no-resolv --no-hosts --no-poll \
		--addn-hosts="$dir/hosts" --local=/web.test/ --domain-needed \
		--listen-address="$dns" --bind-interfaces --port=53 --cache-size=10000 \
		--user=root --pid-file= --log-facility="$dir/dnsmasq.log" \
		</dev/null >>"$dir/dnsmasq.log" 2>&1 &
	echo $! >"$dir/dnsmasq.pid"
}
