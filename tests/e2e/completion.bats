#!/usr/bin/env bats
# Shell completion (completion/): the bash completion in plain bash, with
# the completion function called as bash calls it on TAB (COMP_WORDS and
# COMP_CWORD set), for options, the models of the registry, the values of
# --format and --order, and files; the zsh completion's specs.

# The whole file runs on make check-model's build too: the completion asks
# that build's registry.
# bats file_tags=models

load helpers

COMPLETION="$BATS_TEST_DIRNAME/../../completion"

# tab WORD...: COMPREPLY, one a line, after TAB on the last WORD of
# "crawl WORD..." (the command word is $CRAWL), in a bash without startup
# files or the bash-completion package. Words are split as bash splits them
# by default: "--mode=co" is "--mode" "=" "co". NOBREAK=1 takes "=" out of
# the word breaks, so that "--mode=co" is one word.
tab() {
	bash --norc --noprofile -c '
		[ -n "${NOBREAK:-}" ] && COMP_WORDBREAKS=${COMP_WORDBREAKS//=}
		. "$1/crawl.bash"
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_crawl
		printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$CRAWL" "$@"
}

# lines WORD...: the words, one a line, as tab prints them.
lines() {
	printf '%s\n' "$@"
}

# starting PREFIX: the models of the registry whose names start with
# PREFIX, one a line: what TAB offers after it, however many there are.
starting() {
	printf '%s\n' $ALL_MODES | grep "^$1"
}

@test "the bash completion needs nothing from the bash-completion package" {
	run bash --norc --noprofile -c '
		. "$1/crawl.bash"
		type _init_completion >/dev/null 2>&1 && echo "bash-completion is loaded"
		complete -p crawl' _ "$COMPLETION"
	[ "$status" -eq 0 ]
	[ "$output" = "complete -F _crawl crawl" ]
}

@test "crawl --mo<TAB> offers --mode= and --modes=" {
	run tab --mo
	[ "$status" -eq 0 ]
	[ "$output" = "$(lines --mode= --modes=)" ]
}

@test "crawl --span<TAB> completes --span-hosts, and -<TAB> offers every option" {
	run tab --span
	[ "$output" = --span-hosts ]
	run tab -
	for o in -c -A -H -o -q -k -h -V --mode= --concurrency= --no-progress --version; do
		grep -qxF -e "$o" <<<"$output" || { echo "missing $o"; return 1; }
	done
}

@test "crawl --<TAB> offers exactly the long options crawl --help prints, those with a value ending in =" {
	run tab --
	[ "$status" -eq 0 ]
	got=$(sed 's/=$//' <<<"$output" | sort)
	want=$("$CRAWL" --help | grep -oE -e '--[a-z][a-z-]*' | sort -u)
	[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
	grep -qxF -e --timeout= <<<"$output"
	grep -qxF -e --fail <<<"$output"
}

@test "crawl --mode=<TAB> offers every model of crawl --list-modes, and all" {
	run tab --mode =
	[ "$output" = "$(lines $ALL_MODES all)" ]
	run tab --mode = c
	[ "$output" = "$(starting c)" ]
	run tab --mode = se
	[ "$output" = "$(starting se)" ]
}

@test "--mode's value completes as the next word too, and where = does not break words" {
	run tab --mode th
	[ "$output" = "$(starting th)" ]
	NOBREAK=1 run tab --mode=po
	[ "$output" = "$(starting po | sed 's/^/--mode=/')" ]
	NOBREAK=1 run tab --mode=
	[ "$output" = "$(lines $ALL_MODES all | sed 's/^/--mode=/')" ]
}

@test "--modes=<TAB> completes the last name of a comma-separated list" {
	run tab --modes = seq,th
	[ "$output" = "$(starting th | sed 's/^/seq,/')" ]
	run tab --modes = ''
	[ "$output" = "$(lines $ALL_MODES)" ]
}

@test "--format= and --order= offer exactly the values crawl accepts" {
	run tab --format =
	formats=$output
	run "$CRAWL" --format=nope x
	[ "$status" -eq 2 ]
	# "expected table, jsonl or csv, got 'nope'"
	accepted=$(sed -n "s/.*expected \(.*\), got .*/\1/p" <<<"$output" | sed 's/,\| or / /g' | tr -s ' ' '\n' | sort)
	[ "$(sort <<<"$formats")" = "$accepted" ]

	run tab --order =
	orders=$output
	run "$CRAWL" --order=nope x
	[ "$status" -eq 2 ]
	accepted=$(sed -n "s/.*expected \(.*\), got .*/\1/p" <<<"$output" | sed 's/,\| or / /g' | tr -s ' ' '\n' | sort)
	[ "$(sort <<<"$orders")" = "$accepted" ]

	run tab --format = j
	[ "$output" = jsonl ]
	run tab --order c
	[ "$output" = completion ]
}

@test "list arguments, -o, --output= and --cacert= complete file names" {
	dir=$BATS_TEST_TMPDIR/files
	mkdir -p "$dir/sub"
	: >"$dir/list.txt"
	: >"$dir/other list.txt"
	run tab "$dir/li"
	[ "$output" = "$dir/list.txt" ]
	run tab -o "$dir/oth"
	[ "$output" = "$dir/other list.txt" ]
	run tab --output = "$dir/s"
	[ "$output" = "$dir/sub" ]
	run tab --cacert = "$dir/li"
	[ "$output" = "$dir/list.txt" ]
	run tab --mode=coro -- "$dir/li"
	[ "$output" = "$dir/list.txt" ]
}

@test "options with values crawl has no list for complete nothing" {
	run tab --timeout =
	[ -z "$output" ]
	run tab -c ''
	[ -z "$output" ]
	run tab --header ''
	[ -z "$output" ]
}

@test "the zsh completion takes the models from crawl --list-modes and the rest of the options from --help" {
	command -v zsh >/dev/null || skip "zsh is not installed"
	zsh -n "$COMPLETION/_crawl"
	# _arguments and _call_program stubbed: what the completion hands zsh.
	run zsh -f -c '
		_call_program() { shift; "$@"; }
		_arguments() { print -rl -- "$@"; }
		words=("$2")
		fpath=("$1" $fpath)
		autoload -U _crawl
		_crawl' _ "$COMPLETION" "$CRAWL"
	[ "$status" -eq 0 ]
	models=$(echo $ALL_MODES all)
	grep -qxF -e "--mode=[the model to run]:model:($models)" <<<"$output"
	grep -qxF -e "--format=[output format]:format:(table jsonl csv)" <<<"$output"
	# The "--" form: every other option from crawl --help.
	[ "$(tail -1 <<<"$output")" = -- ]
}
