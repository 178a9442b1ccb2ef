#!/usr/bin/env bats
# The manual pages (doc/*.1): they render without a warning, and they cannot
# drift from the programs: every option --help prints has an entry in the
# page's OPTIONS and every entry there is one --help prints, the fixture
# server's endpoints likewise, crawl(1) lists every model of the registry,
# and the pages carry crawl's version.

# The whole file runs on make check-model's build too: its manual is
# built from that build's registry.
# bats file_tags=models

load helpers

DOC="$BATS_TEST_DIRNAME/../../doc"
# crawl(1) as built: its MODELS section comes from the registry.
case $BUILD in
/*) CRAWL_1="$BUILD/crawl.1" ;;
*) CRAWL_1="$BATS_TEST_DIRNAME/../../$BUILD/crawl.1" ;;
esac
PAGES=("$CRAWL_1" "$DOC/crawl-fixture-server.1")
LONG='--[a-z][a-z-]*'
SHORT='(^| )-[A-Za-z]\b'
ENDPOINT='/[a-z][a-z.-]*(/[a-z][a-z.-]*)*'

# plain PAGE: the page's source without comments, with \- as - and font
# changes and quotes dropped, so that options read as on the terminal.
plain() {
	grep -v '^\.\\"' "$1" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e 's/"//g'
}

# items PAGE SECTION: the heading line of every .TP item in SECTION.
items() {
	plain "$1" | awk -v sec=".SH $2" '
		/^\.SH / { inside = ($0 == sec); next }
		inside && take { print; take = 0; next }
		inside && /^\.TP/ { take = 1 }'
}

# outside PAGE SECTION: the page without SECTION.
outside() {
	plain "$1" | awk -v sec=".SH $2" '/^\.SH / { inside = ($0 == sec) } !inside'
}

# same WHAT A B: A and B list the same words, or the test fails saying which
# differ ("<" only in A, ">" only in B).
same() {
	local a b
	a=$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort -u)
	b=$(tr ' ' '\n' <<<"$3" | sed '/^$/d' | sort -u)
	if [ "$a" != "$b" ]; then
		echo "$1 differ:"
		diff <(echo "$a") <(echo "$b") | grep '^[<>]'
		return 1
	fi
}

@test "every long option crawl --help prints has an entry in crawl(1), and every entry is in --help" {
	help=$("$CRAWL" --help | grep -oE -e "$LONG")
	man=$(items "$CRAWL_1" OPTIONS | grep -oE -e "$LONG")
	[ -n "$help" ]
	same "crawl --help (<) and crawl(1) OPTIONS (>)" "$help" "$man"
}

@test "every short option crawl --help prints has an entry in crawl(1), and every entry is in --help" {
	help=$("$CRAWL" --help | grep -oE '^ +-[A-Za-z],' | tr -d ' ,')
	man=$(items "$CRAWL_1" OPTIONS | grep -oE "$SHORT" | tr -d ' ')
	[ -n "$help" ]
	same "crawl --help (<) and crawl(1) OPTIONS (>)" "$help" "$man"
}

@test "every option crawl(1) names anywhere, and in its examples of crawl, is one crawl --help prints" {
	help=$("$CRAWL" --help | grep -oE -e "$LONG")
	named=$(outside "$CRAWL_1" EXAMPLES | grep -oE -e "$LONG")
	# In the examples, only what follows the command crawl itself.
	examples=$(plain "$CRAWL_1" | sed -n '/^\.SH EXAMPLES/,/^\.SH /p' |
		grep -E '(^|\| *)crawl ' | sed -E 's/.*(^|\| *)crawl //' | grep -oE -e "$LONG")
	[ -n "$examples" ]
	for o in $named $examples; do
		grep -qxF -e "$o" <<<"$help" || { echo "crawl(1) names $o, which crawl --help does not"; return 1; }
	done
}

@test "every option fixture-server --help prints has an entry in crawl-fixture-server(1), and every entry is in --help" {
	usage=$("$FIXTURE_SERVER" --help | sed '/^Endpoints/,$d')
	help="$(grep -oE -e "$LONG" <<<"$usage") $(grep -oE '^ +-[A-Za-z],' <<<"$usage" | tr -d ' ,')"
	man="$(items "$DOC/crawl-fixture-server.1" OPTIONS | grep -oE -e "$LONG") $(items "$DOC/crawl-fixture-server.1" OPTIONS | grep -oE "$SHORT" | tr -d ' ')"
	same "fixture-server --help (<) and crawl-fixture-server(1) OPTIONS (>)" "$help" "$man"
}

@test "every endpoint fixture-server --help lists has an entry in crawl-fixture-server(1), and every entry is in --help" {
	# The first column of each endpoint line, up to its first placeholder.
	help=$("$FIXTURE_SERVER" --help | sed -n '/^Endpoints/,$p' |
		awk -F '  +' '/^  \// { print $2 }' | grep -oE "$ENDPOINT")
	man=$(items "$DOC/crawl-fixture-server.1" ENDPOINTS | grep -oE "$ENDPOINT")
	[ "$(wc -w <<<"$help")" -ge 20 ]
	same "fixture-server --help (<) and crawl-fixture-server(1) ENDPOINTS (>)" "$help" "$man"
}

@test "crawl(1) describes every model of the registry, and no other" {
	man=$(items "$CRAWL_1" MODELS | grep -v '^\.B all$' | sed 's/^\.B //')
	same "crawl --list-modes (<) and crawl(1) MODELS (>)" "$ALL_MODES" "$man"
}

@test "crawl(1) lists the exit statuses the help text names, and no other" {
	help=$("$CRAWL" --help | sed -n '/^Exit status/,$p' | grep -oE '\b[0-9]+\b')
	man=$(items "$CRAWL_1" "EXIT STATUS" | sed 's/^\.B //')
	same "crawl --help (<) and crawl(1) EXIT STATUS (>)" "$help" "$man"
}

@test "the pages carry crawl's version" {
	version=$("$CRAWL" --version | awk '{ print $2 }')
	for page in "${PAGES[@]}"; do
		grep -q "^\.TH .* \"crawl $version\" " "$page" || { echo "$page: not crawl $version"; return 1; }
	done
}

@test "groff renders every page without a warning" {
	for page in "${PAGES[@]}"; do
		for dev in ps utf8; do
			run groff -ww -z -man -T"$dev" "$page"
			[ "$status" -eq 0 ]
			[ -z "$output" ] || { echo "$page (-T$dev): $output"; return 1; }
		done
	done
}

@test "man -l renders every page without a warning" {
	for page in "${PAGES[@]}"; do
		run bash -c 'MANWIDTH=80 man --warnings=w -l "$1" 2>&1 >/dev/null' _ "$page"
		[ "$status" -eq 0 ]
		[ -z "$output" ] || { echo "$page: $output"; return 1; }
	done
}

@test "crawl(1)'s JSON lines members are the output's columns, in the CSV header's order" {
	printf 'not a url\n' >"$BATS_TEST_TMPDIR/l"
	header=$("$CRAWL" --format=csv "$BATS_TEST_TMPDIR/l" 2>/dev/null | head -1 | tr ',' ' ')
	# The heading line of every .TP item of the JSON lines subsection,
	# up to the summary's paragraph.
	man=$(plain "$CRAWL_1" | awk '/^\.SS JSON lines/ { inside = 1; next }
		inside && /^\.(PP|SS|SH)/ { exit }
		inside && take { print; take = 0; next }
		inside && /^\.TP/ { take = 1 }' | sed -E 's/^\.BR? //; s/,/ /g' | tr -s ' \n' '  ' | sed 's/ $//')
	echo "header: $header"
	echo "man:    $man"
	[ "$(wc -w <<<"$header")" -ge 23 ]
	[ "$man" = "$header" ]
}
