#!/bin/sh
# Installs the Debian packages that building and testing crawl need, when
# they are missing. As root it runs apt-get; otherwise it names the packages
# and stops. Extra package names on the command line are checked too.
#   scripts/deps.sh --build [EXTRA...]   what building and the demo need
#                                        (make deps-build, make demo)
#   scripts/deps.sh [EXTRA...]           that and what the tests need
set -eu

build_only=
if [ "${1:-}" = --build ]; then
	build_only=1
	shift
fi

missing=""
need() { # need PACKAGE TEST...
	pkg=$1; shift
	if ! "$@" >/dev/null 2>&1; then
		missing="$missing $pkg"
	fi
}
have_pc()  { pkg-config --exists "$1"; }
have_hdr() { test -f "/usr/include/$1" || test -f "/usr/local/include/$1"; }
have_cmd() { command -v "$1"; }

need pkg-config           have_cmd pkg-config
need gcc                  have_cmd cc
need make                 have_cmd make
need libcurl4-openssl-dev sh -c 'pkg-config --exists libcurl'
need libxml2-dev          sh -c 'pkg-config --exists libxml-2.0'
need zlib1g-dev           sh -c 'pkg-config --exists zlib'
need libbrotli-dev        sh -c 'pkg-config --exists libbrotlidec libbrotlienc'
need libzstd-dev          sh -c 'pkg-config --exists libzstd'
need libicu-dev           sh -c 'pkg-config --exists icu-uc'
need libev-dev            have_hdr ev.h
need liblmdb-dev          sh -c 'pkg-config --exists lmdb'
need libhiredis-dev      sh -c 'pkg-config --exists hiredis'
need libssl-dev           sh -c 'pkg-config --exists libcrypto'
# The demo's pictures (scripts/timeline.sh): gnuplot draws them from the
# trace jq reads; jq also reads the demo's rows.
need gnuplot-nox          have_cmd gnuplot
need jq                   have_cmd jq
if [ -z "$build_only" ]; then
need libcmocka-dev        sh -c 'pkg-config --exists cmocka'
need libjansson-dev       sh -c 'pkg-config --exists jansson'
need bats                 have_cmd bats
need parallel             have_cmd parallel
need redis-server         have_cmd redis-server
need curl                 have_cmd curl
need python3              test -x /usr/bin/python3
need time                 test -x /usr/bin/time
need valgrind             have_cmd valgrind
need strace               have_cmd strace
need openssl              have_cmd openssl
need nghttp2-server       test -x /usr/sbin/nghttpd
need groff-base           have_cmd groff
need man-db               have_cmd man
need zsh                  have_cmd zsh
need wget                 have_cmd wget
need zstd                 have_cmd zstd
need npm                  have_cmd npm
# The synthetic web's namespace (scripts/web.sh, tests/e2e/web.bats): ip,
# and dnsmasq without its system service.
need iproute2             have_cmd ip
need dnsmasq-base         test -x /usr/sbin/dnsmasq
fi
for extra in "$@"; do
	case $extra in
	*=*) pkg=${extra%%=*}; cmd=${extra#*=}; need "$pkg" have_cmd "$cmd" ;;
	*)   need "$extra" sh -c "dpkg-query -W -f='\${Status}' $extra 2>/dev/null | grep -q 'ok installed'" ;;
	esac
done

# warcio.js, the independent WARC reader of tests/e2e/warc.bats, from the
# npm registry at the version tests/tools/package-lock.json pins, into
# tests/tools/node_modules (ignored by git). Once installed, nothing is asked
# of the registry again.
tools() {
	[ -n "$build_only" ] && return 0
	dir=$(cd "$(dirname "$0")/../tests/tools" && pwd)
	[ -x "$dir/node_modules/.bin/warcio" ] && return 0
	command -v npm >/dev/null 2>&1 || return 0
	echo "deps: installing warcio.js into $dir/node_modules" >&2
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
}

if [ -z "$missing" ]; then
	tools
	exit 0
fi

if [ "$(id -u)" = 0 ]; then
	echo "deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >&2
	tools
else
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: install them with: sudo apt-get install -y$missing" >&2
	exit 1
fi
