#!/usr/bin/env bats
# --save DIR: every 2xx body, decoded, as DIR/HOST[:PORT]/PATH (wget's
# mirror layout), written through a temporary file and a rename, and never
# outside DIR whatever the URL says.

load helpers

setup() {
	fixture_up
	D=$BATS_TEST_TMPDIR
	H="127.0.0.1:$FIXTURE_PORT"
}

teardown() {
	mountpoint -q "$D/full" 2>/dev/null && umount "$D/full"
	stop_fixtures
}

# files DIR: every file under DIR, relative, sorted, one a line.
files() {
	(cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
}

# bats test_tags=models
@test "--save writes every 2xx body, decoded, as DIR/HOST:PORT/PATH, in every model" {
	for m in $MODES; do
		rm -rf "$D/m"
		run "$CRAWL" --mode=$m -q --save "$D/m" "$FIXTURE/site/" "$FIXTURE/site/about.html" \
			"$FIXTURE/bytes/1000" "$FIXTURE/gzip/5000" "$FIXTURE/status/404" "$FIXTURE/redirect/1"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		run files "$D/m"
		echo "$output"
		[ "$output" = "$H/bytes/1000
$H/gzip/5000
$H/redirect/0
$H/site/about.html
$H/site/index.html" ]
		cmp "$D/m/$H/site/index.html" testdata/site/index.html
		cmp "$D/m/$H/site/about.html" testdata/site/about.html
		cmp "$D/m/$H/bytes/1000" <(curl -s "$FIXTURE/bytes/1000")
		cmp "$D/m/$H/gzip/5000" <(curl -s "$FIXTURE/bytes/5000")
		# nothing temporary is left behind
		[ -z "$(find "$D/m" -name '.crawl-*')" ]
	done
}

@test "--save with --warc saves the decoded body, while the archive keeps it compressed" {
	run "$CRAWL" --mode=coro -q --save "$D/m" --warc "$D/a.warc.gz" "$FIXTURE/gzip/70000"
	[ "$status" -eq 0 ]
	cmp "$D/m/$H/gzip/70000" <(curl -s "$FIXTURE/bytes/70000")
	zcat "$D/a.warc.gz" | grep -aqi '^Content-Encoding: gzip'
}

@test "a query is kept in the file name; names a file system cannot hold are percent-encoded" {
	run "$CRAWL" --mode=seq -q --save "$D/m" "$FIXTURE/delay/0/page?a=1&b=x%2Fy" \
		"$FIXTURE/delay/0/dir/" "$FIXTURE/delay/0/caf%C3%A9" "$FIXTURE/delay/0/a%3Fb" \
		"$FIXTURE/delay/0/pct%25"
	[ "$status" -eq 0 ]
	run files "$D/m"
	echo "$output"
	[ "$output" = "$H/delay/0/a%3Fb
$H/delay/0/café
$H/delay/0/dir/index.html
$H/delay/0/page?a=1&b=x%2Fy
$H/delay/0/pct%25" ]
}

@test "--save never writes outside DIR: .., %2e%2e, %2F, absolute paths, NUL, overlong names" {
	mkdir -p "$D/m"
	# a name no other file on the machine has, so a search of / finds only what this run wrote
	e=esc$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	run "$CRAWL" --mode=seq --format=jsonl --save "$D/m" \
		"$FIXTURE/delay/0/%2e%2e/%2e%2e/%2e%2e/${e}1" \
		"$FIXTURE/delay/0/%2E%2E%2F%2E%2E%2F${e}2" \
		"$FIXTURE/delay/0/..%2f..%2f${e}3" \
		"$FIXTURE/delay/0//etc/${e}4" \
		"$FIXTURE/delay/0/%2Fabs%2F${e}5" \
		"$FIXTURE/delay/0/nul%00byte" \
		"$FIXTURE/delay/0/.." \
		"$FIXTURE/delay/0/$(printf 'x%.0s' $(seq 400))" \
		"$FIXTURE/delay/0/?$(printf 'q%.0s' $(seq 300))"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '"fail":null' <<<"$output")" -eq 9 ]
	# every file is under DIR/HOST:PORT, and nothing else appeared anywhere
	[ "$(files "$D/m" | grep -vc "^$H/delay/0/")" -eq 0 ]
	[ "$(files "$D/m" | wc -l)" -eq 8 ]    # /delay/0/.. is /delay/ once resolved: its own file
	[ -z "$(find "$D" -name "$e*" -not -path "$D/m/*")" ]
	[ -z "$(find / -xdev -name "$e[0-9]" -not -path "$D/m/*" 2>/dev/null | head -1)" ]
	files "$D/m" | grep -qx "$H/delay/0/%2E%2E/%2E%2E/%2E%2E/${e}1"
	files "$D/m" | grep -qx "$H/delay/0/..%2F..%2F${e}3"
	files "$D/m" | grep -qx "$H/delay/0/%2Fabs%2F${e}5"
	files "$D/m" | grep -qx "$H/delay/0/nul%00byte"
	# overlong names are cut and end in a hash of the whole; none is over 200 bytes
	long=$(files "$D/m" | grep 'xxxxxxxx')
	[[ "$(basename "$long")" =~ ^x{183}~[0-9a-f]{16}$ ]]
	[ "$(files "$D/m" | tr '/' '\n' | awk 'length > 200' | wc -l)" -eq 0 ]
}

@test "--save does not follow a symbolic link planted under DIR" {
	mkdir -p "$D/m/$H" "$D/outside"
	ln -s "$D/outside" "$D/m/$H/site"
	run "$CRAWL" --mode=seq --format=jsonl --save "$D/m" "$FIXTURE/site/about.html"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(grep '^{"url"' <<<"$output" | jq -r .error)" = "--save: $D/m/$H/site/about.html: Not a directory" ]
	[ -z "$(ls -A "$D/outside")" ]
}

# bats test_tags=models
@test "a path that is both a file and a directory keeps both bodies as wget2 does, whichever comes first, in every model" {
	# /c and /c/d: the directory is c, the page /c is c.1 beside it, as
	# wget2 names it (wget 1.21 loses one of the two).
	c="$FIXTURE/delay/0/c" d="$FIXTURE/delay/0/c/d"
	body="$BATS_TEST_TMPDIR/body"
	curl -s "$c" >"$body"
	[ "$(wc -c <"$body")" -eq 100 ]
	for m in $MODES; do
		for run in file-first dir-first both-at-once again; do
			echo "$m: $run"
			case $run in
				file-first) rm -rf "$D/m"; args=(-c 1 "$c" "$d") ;;
				dir-first) rm -rf "$D/m"; args=(-c 1 "$d" "$c") ;;
				both-at-once) rm -rf "$D/m"; args=(-c 2 "$c" "$d") ;;
				again) args=(-c 2 "$d" "$c") ;;   # over the last run's files
			esac
			run "$CRAWL" --mode=$m --format=jsonl --save "$D/m" "${args[@]}"
			echo "$output"
			[ "$status" -eq 0 ]
			[ "$(files "$D/m")" = "$H/delay/0/c.1
$H/delay/0/c/d" ]
			cmp "$D/m/$H/delay/0/c.1" "$body"
			cmp "$D/m/$H/delay/0/c/d" "$body"
		done
	done
	# A symbolic link where a directory must go is still not followed,
	# nor moved: the URL fails.
	rm -rf "$D/m" "$D/outside"
	mkdir -p "$D/m/$H/delay/0" "$D/outside"
	ln -s "$D/outside" "$D/m/$H/delay/0/c"
	run "$CRAWL" --mode=seq --format=jsonl --save "$D/m" "$d"
	[ "$status" -eq 1 ]
	[ "$(jq -r 'select(.url) | .error' <<<"$output")" = "--save: $D/m/$H/delay/0/c/d: Not a directory" ]
	[ -L "$D/m/$H/delay/0/c" ] && [ -z "$(ls -A "$D/outside")" ]
}

# bats test_tags=models
@test "a full disk gives a clear failed row, and no partial file" {
	[ "$(id -u)" = 0 ] || skip "needs root to mount a small tmpfs"
	mkdir -p "$D/full"
	mount -t tmpfs -o size=64k tmpfs "$D/full" || skip "cannot mount tmpfs"
	for m in $MODES; do
		run "$CRAWL" --mode=$m --format=jsonl --save "$D/full" "$FIXTURE/bytes/1000000" "$FIXTURE/bytes/10"
		echo "$output"
		[ "$status" -eq 1 ]
		[ "$(grep '^{"url"' <<<"$output" | jq -r "select(.url == \"$FIXTURE/bytes/1000000\") | [.fail, .error] | join(\"|\")")" = \
			"other|--save: $D/full/$H/bytes/1000000: No space left on device" ]
		# the small body, written while the disk fills, is whole or failed so
		small=$(grep '^{"url"' <<<"$output" | jq -r "select(.url == \"$FIXTURE/bytes/10\") | [.fail, .error] | join(\"|\")")
		if [ "$small" = "|" ]; then
			[ "$(cat "$D/full/$H/bytes/10")" = abcdefghij ]
		else
			[ "$small" = "other|--save: $D/full/$H/bytes/10: No space left on device" ]
			[ ! -e "$D/full/$H/bytes/10" ]
		fi
		[ ! -e "$D/full/$H/bytes/1000000" ]
		[ -z "$(find "$D/full" -name '.crawl-*')" ]
		rm -rf "${D:?}/full/$H"
	done
	umount "$D/full"
}

@test "--save's usage errors: a path that is not a directory" {
	touch "$D/file"
	run "$CRAWL" --save "$D/file" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --save: '$D/file' is not a directory crawl can write in" ]
	run "$CRAWL" --save "$D/no/such" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --save: cannot make directory '$D/no/such': No such file or directory" ]
}
