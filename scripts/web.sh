#!/bin/bash
# The synthetic web (fixture-server --web, docs/web.md) with real name
# resolution: a network namespace of its own, the web's server in it on
# every address of a range routed to its loopback, and dnsmasq answering
# the hosts' names (h00042.web.test), so that a crawler run in the
# namespace (ip netns exec NAME CMD, or web.sh exec CMD) resolves them as
# it would on the real web. It is made only of the namespace, the
# namespace's resolv.conf (/etc/netns/NAME), a state folder and the two
# processes it starts; down removes them all, and so does an up that fails.
#
#   scripts/web.sh up N SEED [FIXTURE-OPTION...]   start it, or keep it
#                                 when it is up with the same arguments
#   scripts/web.sh down           stop it and remove what up made
#   scripts/web.sh status         say whether it is up, and how to use it
#   scripts/web.sh exec CMD...    run CMD in the namespace
#   WEB_NS=NAME     the namespace (default crawlweb)
#   WEB_NET=ADDR    the range's first address, a /16 (default 10.77.0.0)
#   WEB_PORT=N      the port every host listens on (default 80)
#   WEB_DIR=DIR     the state folder (default /run/crawl-web/NAME)
#   BUILD=DIR       where fixture-server is (default build)
#
# FIXTURE-OPTIONs go to fixture-server (--web-pages, --web-ms, --web-links).
# Needs root (network namespaces), ip (iproute2) and dnsmasq (dnsmasq-base).
# Exit status: 0 done, 1 up failed (what it made is removed), 2 a usage
# error or something missing.
set -eEuo pipefail

NS=${WEB_NS:-crawlweb}
NET=${WEB_NET:-10.77.0.0}
PORT=${WEB_PORT:-80}
DIR=${WEB_DIR:-/run/crawl-web/$NS}
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
cd "$(dirname "$0")/.."
SERVER=${BUILD:-build}/fixture-server
. scripts/netns-lib.sh

usage() { sed -n '/^#   scripts\/web.sh/,/^#$/{/^#$/d;s/^# //p}' "$0"; }
die() { echo "web.sh: $*" >&2; exit 2; }
fail() { echo "web.sh: $*" >&2; exit 1; }

needs() {
	[ "$(id -u)" -eq 0 ] ||
		die "$1 needs root, for a network namespace (ip netns); without root, serve the web on 127.77.0.0/16: $SERVER --web N --seed S --resolve-file FILE, and crawl with --resolve @FILE (docs/web.md)"
	command -v ip >/dev/null || die "no ip command: install iproute2"
}

# up: the namespace exists and both processes live.
is_up() {
	ns_has "$NS" && pid_alive "$DIR" fixture-server && pid_alive "$DIR" dnsmasq
}

# teardown: everything up makes, whatever of it is there.
teardown() {
	pid_stop "$DIR" dnsmasq
	pid_stop "$DIR" fixture-server
	ns_remove "$NS"
	rm -rf "$DIR"
}

# url H: host H's home page.
url() {
	local p=""
	[ "$PORT" = 80 ] || p=":$PORT"
	printf 'http://h%05d.web.test%s/' "$1" "$p"
}

info() {
	local n seed base="http://127.0.0.1"
	read -r n seed _ <"$DIR/args"
	[ "$PORT" = 80 ] || base="$base:$PORT"
	echo "web up: $n hosts (seed $seed) in namespace $NS: $(url 0) to $(url $((n - 1))), names by dnsmasq"
	echo "  crawl:  ip netns exec $NS build/crawl --depth 1000 --span-hosts --per-host 2 --retry 1 $(url 0)"
	echo "  check:  ip netns exec $NS scripts/web-check.sh --fixture $base --per-host 2 $(url 0)"
	echo "  stop:   scripts/web.sh down"
}

up() {
	[ $# -ge 2 ] || die "up needs N and SEED (see --help)"
	web_checks "$1" "$2"
	local want="$*"
	if same_up "$@"; then
		info
		return 0
	fi
	teardown
	trap 'echo "web.sh: up failed; what it made is removed" >&2; teardown; exit 1' ERR
	mkdir -p "$DIR"
	chmod 755 "$DIR"
	ns_make "$NS"
	local n=$1 seed=$2
	shift 2
	web_start "$NS" "$DIR" "$NET" "$PORT" 127.0.0.1 "$n" "$seed" "$@"
	ns_resolver "$NS" 127.0.0.1
	wait_for 10 ip netns exec "$NS" getent hosts "h00000.web.test" >/dev/null ||
		{ cat "$DIR/dnsmasq.log" >&2; false; }
	echo "$want" >"$DIR/args"
	trap - ERR
	info
}

case ${1:-} in
up)       shift; up "$@" ;;
down)     [ $# -eq 1 ] || die "down takes no argument"; needs down; teardown; echo "web down: $NS" ;;
status)   if is_up; then info; else echo "web down: $NS"; exit 1; fi ;;
exec)     shift; [ $# -gt 0 ] || die "exec needs a command"; needs exec
          is_up || fail "$NS is not up (scripts/web.sh up N SEED)"
          exec ip netns exec "$NS" "$@" ;;
-h|--help) usage ;;
*)        die "expected up, down, status or exec (see --help)" ;;
esac
