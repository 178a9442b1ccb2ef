# bash completion for crawl (installed as
# $(PREFIX)/share/bash-completion/completions/crawl; or source it).
#
# The options come from `crawl --help` and the models from `crawl
# --list-modes`, asked of the crawl being completed (build/crawl or the one
# on PATH) each time TAB is pressed, a few milliseconds: a new option or a
# new model in the registry needs no change here, nothing is generated at
# build time, and a shell never offers what that crawl would refuse. Only
# the values crawl has no list for (--format, --order) are written here;
# tests/e2e/completion.bats holds them to crawl's own error messages.
#
# Plain bash is enough: nothing here needs the bash-completion package.

# _crawl_options CRAWL: every option CRAWL --help lists, one a line, as
# "SHORT LONG": "-c --concurrency=", "- --timeout=" (no short form),
# "- --reuse". A long option that takes a value ends in "=".
_crawl_options()
{
	"$1" --help 2>/dev/null | awk '
		match($0, /^ +(-[A-Za-z], )?--[a-z][a-z-]*=?/) {
			s = substr($0, RSTART, RLENGTH)
			sub(/^ +/, "", s)
			short = "-"
			if (s ~ /^-[A-Za-z], /) {
				short = substr(s, 1, 2)
				s = substr(s, 5)
			}
			print short, s
		}'
}

# _crawl_values CRAWL LONG CUR: the values LONG (without "=") takes that
# start with CUR, one a line.
_crawl_values()
{
	local crawl=$1 opt=$2 cur=$3
	case $opt in
	--mode)
		compgen -W "$("$crawl" --list-modes 2>/dev/null) all" -- "$cur"
		;;
	--modes)
		# A comma-separated list: the names before the last comma stay,
		# and no space follows, for the next comma.
		compopt -o nospace 2>/dev/null
		compgen -P "${cur%"${cur##*,}"}" -W "$("$crawl" --list-modes 2>/dev/null)" \
			-- "${cur##*,}"
		;;
	--format)
		compgen -W "table jsonl csv" -- "$cur"
		;;
	--order)
		compgen -W "input completion" -- "$cur"
		;;
	--output|--cacert)
		compopt -o filenames 2>/dev/null
		compgen -f -- "$cur"
		;;
	esac
}

_crawl()
{
	local crawl=${COMP_WORDS[0]} cword=$COMP_CWORD
	local cur=${COMP_WORDS[COMP_CWORD]} opt="" prefix="" short long i
	local -a longs=() shorts=()
	local -A takes=() long_of=()
	COMPREPLY=()

	while read -r short long; do
		longs+=("$long")
		[[ $short != - ]] && long_of[$short]=${long%=}
		[[ $long == *= ]] && takes[${long%=}]=1
		[[ $short != - ]] && shorts+=("$short")
	done < <(_crawl_options "$crawl")

	# After "--" every word is a URL, a list or -.
	for ((i = 1; i < cword; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return 0
		fi
	done

	# The option whose value is being completed, if any. Where "=" breaks
	# words (bash's default), "--mode=co" arrives as "--mode" "=" "co" and
	# "--mode=" as "--mode" "="; where it does not, as one word, and the
	# answers must then carry the "--mode=" themselves.
	if [[ $cur == = && $cword -ge 2 ]]; then
		opt=${COMP_WORDS[cword-1]} cur=""
	elif [[ $cword -ge 3 && ${COMP_WORDS[cword-1]} == = ]]; then
		opt=${COMP_WORDS[cword-2]}
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*} prefix=${cur%%=*}= cur=${cur#*=}
	elif [[ $cword -ge 2 ]]; then
		# "--mode co", "-o FILE": the value as the next word.
		opt=${COMP_WORDS[cword-1]}
		[[ $opt == -[A-Za-z] ]] && opt=${long_of[$opt]:-$opt}
		[[ -n ${takes[$opt]:-} ]] || opt=""
	fi

	if [[ -n $opt ]]; then
		mapfile -t COMPREPLY < <(_crawl_values "$crawl" "$opt" "$cur")
		[[ -n $prefix ]] && COMPREPLY=("${COMPREPLY[@]/#/$prefix}")
		return 0
	fi

	if [[ $cur == -* ]]; then
		if [[ $cur == --* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "${longs[*]}" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "${shorts[*]} ${longs[*]}" -- "$cur")
		fi
		# "--mode=" wants its value right after it.
		[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] &&
			compopt -o nospace 2>/dev/null
		return 0
	fi

	# A URL-list file (or a URL, or - for standard input).
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	return 0
}

complete -F _crawl crawl
