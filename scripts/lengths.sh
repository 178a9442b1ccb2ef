#!/bin/bash
# Checks that no function in lib/, cmd/ or fixture/ is longer than MAX lines
# (make lengths, run by make check): one concern a function. A function is
# counted from its opening brace to its closing one, each alone at the
# start of a line, as the house style writes them. Two are allowed to be
# longer, each a state machine that reads best whole: the link scanner's
# tokenizer and the URL parser's.
#
#   scripts/lengths.sh [--max N] [FILE...]   (default: lib/*.c cmd/*.c cmd/*/*.c fixture/*.c)
#
# Prints each function over the bound as FILE:LINE: NAME: N lines. Exit
# status: 0 none, 1 some found, 2 a usage error.
set -euo pipefail
export LC_ALL=C

max=90
while [ $# -gt 0 ]; do
	case $1 in
	--max)   [ $# -ge 2 ] || { echo "lengths.sh: --max needs a number" >&2; exit 2; }; max=$2; shift 2 ;;
	--max=*) max=${1#*=}; shift ;;
	-h|--help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*)      echo "lengths.sh: unknown option $1" >&2; exit 2 ;;
	*)       break ;;
	esac
done
[[ $max =~ ^[0-9]+$ ]] || { echo "lengths.sh: --max needs a number, got '$max'" >&2; exit 2; }
[ $# -gt 0 ] || set -- lib/*.c cmd/*.c cmd/*/*.c fixture/*.c

# The two allowed: FILE:FUNCTION.
allowed=" lib/scan.c:tokenize lib/url_parse.c:run "

awk -v max="$max" -v allowed="$allowed" '
	FNR == 1 { name = ""; start = 0 }
	# The name is the word before the first "(" of the signature that
	# precedes the brace.
	/^[A-Za-z_].*\(/ && !start {
		s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ *]+/); name = w[n]; sigline = FNR
	}
	/^\{$/ && !start { start = FNR }
	/^\}/ && start {
		len = FNR - start + 1
		if (len > max && index(allowed, " " FILENAME ":" name " ") == 0) {
			printf "%s:%d: %s: %d lines (at most %d)\n", FILENAME, sigline, name, len, max
			bad = 1
		}
		start = 0; name = ""
	}
	END { exit bad }
' "$@"
