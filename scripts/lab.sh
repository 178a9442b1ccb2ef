#!/bin/bash
# A small network of machines made of network namespaces, for the tests
# and benchmarks of a crawl shared across machines (docs/crawling.md,
# "Across machines"): a switch, the synthetic web's machine, a machine for
# the shared crawl's server and K worker machines, each with an address of
# its own on the switch and nothing else reachable:
#
#   LAB-sw      the switch: a bridge, a port for each machine
#   LAB-web     10.78.0.2: the synthetic web (fixture-server --web) on every
#               address of 10.77.0.0/16, routed to it; dnsmasq answering
#               the hosts' names (h00042.web.test) on 10.78.0.2
#   LAB-redis   10.78.0.3: for the server of the shared crawl (started by
#               whoever uses the lab: lab.sh exec redis redis-server ...)
#   LAB-w1...   10.78.0.11 and on: the workers' machines
#
# Every machine but the web's reaches the web's range through 10.78.0.2
# and asks its names of it. Made only of the namespaces, their resolv.conf
# (/etc/netns/NS) and a state folder; down ends every process in them and
# removes them all, and so does an up that fails.
#
#   scripts/lab.sh up K N SEED [FIXTURE-OPTION...]  K workers' machines and
#                                 a web of N hosts (its options as web.sh's)
#   scripts/lab.sh down           end every process in the lab, remove it
#   scripts/lab.sh status         say whether it is up, and what it holds
#   scripts/lab.sh exec M CMD...  run CMD on machine M (web, redis, w1...)
#   scripts/lab.sh addr M         machine M's address
#   scripts/lab.sh cut M          pull M's cable: its port on the switch
#                                 goes down, nothing reaches it or leaves it
#   scripts/lab.sh mend M         plug it in again
#   LAB=NAME        the namespaces' prefix (default crawllab)
#   LAB_DIR=DIR     the state folder (default /run/crawl-lab/NAME)
#   BUILD=DIR       where fixture-server is (default build)
#
# Needs root (network namespaces), ip (iproute2) and dnsmasq (dnsmasq-base).
# Exit status: 0 done, 1 up failed (what it made is removed) or a machine
# that is not there, 2 a usage error or something missing.
set -eEuo pipefail

LAB=${LAB:-crawllab}
DIR=${LAB_DIR:-/run/crawl-lab/$LAB}
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
cd "$(dirname "$0")/.."
SERVER=${BUILD:-build}/fixture-server
. scripts/netns-lib.sh
NET=10.78.0                     # the machines' /24
WEB_NET=10.77.0.0               # the web's /16

usage() { sed -n '/^#   scripts\/lab.sh/,/^#$/{/^#$/d;s/^# //p}' "$0"; }
die() { echo "lab.sh: $*" >&2; exit 2; }
fail() { echo "lab.sh: $*" >&2; exit 1; }

needs() {
	[ "$(id -u)" -eq 0 ] || die "$1 needs root, for network namespaces (ip netns)"
	command -v ip >/dev/null || die "no ip command: install iproute2"
}

# workers: the count of worker machines the lab was made with.
workers() { cut -d' ' -f1 "$DIR/args" 2>/dev/null || echo 0; }

# machines: every machine of the lab as it is, the switch last.
machines() {
	local k
	echo web redis
	for ((k = 1; k <= $(workers); k++)); do echo "w$k"; done
}

# addr M: machine M's address, or nothing for no such machine.
addr() {
	case $1 in
	web)   echo "$NET.2" ;;
	redis) echo "$NET.3" ;;
	w[1-9]*)
		local k=${1#w}
		[[ $k =~ ^[1-9][0-9]*$ ]] && [ "$k" -le "$(workers)" ] && [ "$k" -le 200 ] &&
			echo "$NET.$((10 + k))" ;;
	esac
	return 0
}

is_up() {
	[ -s "$DIR/args" ] || return 1
	local m
	for m in $(machines) sw; do ns_has "$LAB-$m" || return 1; done
	pid_alive "$DIR" fixture-server && pid_alive "$DIR" dnsmasq
}

# teardown: everything up makes, whatever of it is there.
teardown() {
	local ns
	for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep "^$LAB-" || true); do
		case ${ns#"$LAB-"} in
		sw|web|redis|w[0-9]*) ns_remove "$ns" ;;
		esac
	done
	rm -rf "$DIR"
}

# plug M: machine M's namespace, its cable to the switch, its address.
plug() {
	local m=$1 a
	a=$(addr "$m")
	ns_make "$LAB-$m"
	ip -n "$LAB-sw" link add "p-$m" type veth peer name eth0 netns "$LAB-$m"
	ip -n "$LAB-sw" link set "p-$m" master br0 up
	ip -n "$LAB-$m" addr add "$a/24" dev eth0
	ip -n "$LAB-$m" link set eth0 up
	if [ "$m" != web ]; then
		ip -n "$LAB-$m" route add "$WEB_NET/16" via "$NET.2"
		ns_resolver "$LAB-$m" "$NET.2"
	fi
}

info() {
	local k n seed
	read -r k n seed _ <"$DIR/args"
	echo "lab up: $LAB, a web of $n hosts (seed $seed) on $(addr web), redis's machine $(addr redis), $k workers' machines ($(addr w1) to $(addr "w$k"))"
	echo "  run:  scripts/lab.sh exec w1 CMD...    cut: scripts/lab.sh cut w1    stop: scripts/lab.sh down"
}

up() {
	[ $# -ge 3 ] || die "up needs K, N and SEED (see --help)"
	[[ $1 =~ ^[1-9][0-9]*$ ]] && [ "$1" -le 200 ] || die "up: K is 1 to 200, got '$1'"
	web_checks "$2" "$3"
	local want="$*"
	if same_up "$@"; then
		info
		return 0
	fi
	teardown
	trap 'echo "lab.sh: up failed; what it made is removed" >&2; teardown; exit 1' ERR
	mkdir -p "$DIR"
	chmod 755 "$DIR"
	echo "$want" >"$DIR/args"
	ns_make "$LAB-sw"
	ip -n "$LAB-sw" link add br0 type bridge
	ip -n "$LAB-sw" link set br0 up
	local m
	for m in $(machines); do plug "$m"; done
	local n=$2 seed=$3
	shift 3
	web_start "$LAB-web" "$DIR" "$WEB_NET" 80 "$NET.2" "$n" "$seed" --web-any-dev "$@"
	wait_for 10 ip netns exec "$LAB-w1" getent hosts h00000.web.test >/dev/null ||
		{ cat "$DIR/dnsmasq.log" >&2; false; }
	trap - ERR
	info
}

# machine M: M's namespace, or a failure naming M.
machine() {
	is_up || fail "$LAB is not up (scripts/lab.sh up K N SEED)"
	[ -n "$(addr "$1")" ] || fail "$LAB has no machine $1 (web, redis, w1 to w$(workers))"
	echo "$LAB-$1"
}

case ${1:-} in
up)     shift; up "$@" ;;
down)   [ $# -eq 1 ] || die "down takes no argument"; needs down; teardown; echo "lab down: $LAB" ;;
status) if is_up; then info; else echo "lab down: $LAB"; exit 1; fi ;;
exec)   [ $# -ge 3 ] || die "exec needs a machine and a command"; needs exec
        ns=$(machine "$2") || exit 1
        shift 2
        exec ip netns exec "$ns" "$@" ;;
addr)   [ $# -eq 2 ] || die "addr needs a machine"
        machine "$2" >/dev/null || exit 1
        addr "$2" ;;
cut|mend)
        [ $# -eq 2 ] || die "$1 needs a machine"; needs "$1"
        machine "$2" >/dev/null || exit 1
        ip -n "$LAB-sw" link set "p-$2" "$([ "$1" = cut ] && echo down || echo up)" ;;
-h|--help) usage ;;
*)      die "expected up, down, status, exec, addr, cut or mend (see --help)" ;;
esac
