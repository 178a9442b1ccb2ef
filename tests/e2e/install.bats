#!/usr/bin/env bats
# make install and make uninstall, staged under a temporary DESTDIR: the
# exact files, their modes, programs that run from where they land, manual
# pages man finds there, and nothing left behind by uninstall.

load helpers

ROOT="$BATS_TEST_DIRNAME/../.."

# mk TARGET VAR=VALUE...: make in the source tree, on the programs already
# built in $BUILD (-o all: never rebuilt here, whatever their flags were),
# without the make that may have started these tests leaking in.
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make --no-print-directory -C "$ROOT" -o all BUILD="$BUILD" "$@"
}

# files DIR: every file and link under DIR, relative to it, sorted.
files() {
	(cd "$1" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
}

@test "make install puts exactly the programs, manual pages and completions in DESTDIR, and make uninstall takes them away" {
	dest="$BATS_TEST_TMPDIR/stage dir"
	run mk install DESTDIR="$dest"
	[ "$status" -eq 0 ]
	[ "$(files "$dest")" = "$(printf '%s\n' \
		usr/local/bin/crawl \
		usr/local/bin/crawl-fixture-server \
		usr/local/share/bash-completion/completions/crawl \
		usr/local/share/man/man1/crawl-fixture-server.1 \
		usr/local/share/man/man1/crawl.1 \
		usr/local/share/zsh/site-functions/_crawl)" ]
	[ "$(stat -c %a "$dest/usr/local/bin/crawl")" = 755 ]
	[ "$(stat -c %a "$dest/usr/local/bin/crawl-fixture-server")" = 755 ]
	for f in share/man/man1/crawl.1 share/man/man1/crawl-fixture-server.1 \
		share/bash-completion/completions/crawl share/zsh/site-functions/_crawl; do
		[ "$(stat -c %a "$dest/usr/local/$f")" = 644 ] || { echo "$f: not 644"; return 1; }
	done
	cmp "$dest/usr/local/share/man/man1/crawl.1" "$BUILD/crawl.1"
	cmp "$dest/usr/local/share/bash-completion/completions/crawl" "$ROOT/completion/crawl.bash"

	run "$dest/usr/local/bin/crawl" --version
	[ "$status" -eq 0 ]
	[ "$output" = "$("$CRAWL" --version)" ]

	run mk uninstall DESTDIR="$dest"
	[ "$status" -eq 0 ]
	[ -z "$(files "$dest")" ]
}

@test "the installed crawl and crawl-fixture-server run" {
	dest=$BATS_TEST_TMPDIR/stage
	mk install DESTDIR="$dest" PREFIX=/opt/crawl >/dev/null
	run "$dest/opt/crawl/bin/crawl" --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^crawl\ [0-9.]+\ \(libcurl\ .*,\ libev\ .*,\ libxml2\ .*\)$ ]]
	[ "$output" = "$("$CRAWL" --version)" ]
	run "$dest/opt/crawl/bin/crawl-fixture-server" --help
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "usage: crawl-fixture-server "* ]]
}

@test "man finds the installed pages, and bash loads the installed completion" {
	dest=$BATS_TEST_TMPDIR/stage
	mk install DESTDIR="$dest" PREFIX=/usr >/dev/null
	for page in crawl crawl-fixture-server; do
		run man --manpath="$dest/usr/share/man" -w "$page"
		[ "$status" -eq 0 ]
		[ "$output" = "$dest/usr/share/man/man1/$page.1" ]
	done
	run bash --norc --noprofile -c '. "$1"; complete -p crawl' _ \
		"$dest/usr/share/bash-completion/completions/crawl"
	[ "$output" = "complete -F _crawl crawl" ]
}

@test "make uninstall removes every file make install wrote, and only those" {
	dest=$BATS_TEST_TMPDIR/stage
	mkdir -p "$dest/usr/local/bin" "$dest/usr/local/share/man/man1"
	echo keep >"$dest/usr/local/bin/other"
	echo keep >"$dest/usr/local/share/man/man1/other.1"
	mk install DESTDIR="$dest" >/dev/null
	run mk uninstall DESTDIR="$dest"
	[ "$status" -eq 0 ]
	[ "$(files "$dest")" = "$(printf '%s\n' usr/local/bin/other usr/local/share/man/man1/other.1)" ]
	# Again, with nothing left to remove.
	run mk uninstall DESTDIR="$dest"
	[ "$status" -eq 0 ]
}

@test "PREFIX and DESTDIR move every file, and uninstall follows them" {
	dest=$BATS_TEST_TMPDIR/stage
	mk install DESTDIR="$dest" PREFIX=/usr >/dev/null
	[ "$(files "$dest" | sed 's|/.*||' | sort -u)" = usr ]
	[ "$(files "$dest" | grep -c '^usr/\(bin\|share\)/')" -eq 6 ]
	mk uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null
	[ -z "$(files "$dest")" ]
}
