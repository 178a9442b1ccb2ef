#!/bin/bash
# A crawl of the synthetic web (fixture-server --web, docs/web.md) judged:
# what it should not have done, by kind, from the web's own counters
# (/stats?web), and the pages it fetched (the web's /stats?web-urls, and
# the crawl's rows when given) against the set a polite crawl from the same
# seeds fetches (fixture-server --list-reachable). Works for any crawler:
# the web counts what reached it.
#
#   scripts/web-check.sh [OPTIONS] --fixture URL SEED-URL...
#   --fixture URL        the web's server, e.g. http://127.0.0.1:PORT
#   --rows FILE          crawl's rows (--format=jsonl): their URLs are held
#                        to the reachable set too, each once
#   --per-host N         requests in flight to one host at most (default 1)
#   --delay MS           the least gap between two requests to one host, a
#                        host's larger Crawl-delay above it (default 0)
#   --ignore-crawl-delay the gap's rule is --delay alone
#   --failed-robots-allow  a robots.txt that fails (5xx, no answer) allows
#                        all: its host's pages are expected, not forbidden
#   --fixture-server PATH  the program that lists the reachable set
#                        (default: BUILD/fixture-server, BUILD=build, of
#                        the source tree the script is in)
#   --keep DIR           keep the lists compared (reachable, fetched,
#                        missed, extra, rows) in DIR
#   --json               the verdict as one JSON object
#
# A gap or a pause counts only when shorter than its rule by more than the
# web's slack (20 ms). Exit status: 0 polite and every page as expected, 1
# not, 2 a usage error or a web that cannot be read.
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '/^#   scripts\/web-check.sh/,/^#$/{/^#$/d;s/^# //p}' "$0"; }
die() { echo "web-check.sh: $*" >&2; exit 2; }

fixture='' rows='' per_host=1 delay=0 cd_param='' failed='' json=0 keep=''
case ${BUILD:-build} in
/*) server=$BUILD/fixture-server ;;
*)  server=$root/${BUILD:-build}/fixture-server ;;
esac
while [ $# -gt 0 ]; do
	case $1 in
	--fixture)             [ $# -ge 2 ] || die "--fixture needs a URL"; fixture=$2; shift 2 ;;
	--rows)                [ $# -ge 2 ] || die "--rows needs a file"; rows=$2; shift 2 ;;
	--per-host)            [ $# -ge 2 ] || die "--per-host needs a number"; per_host=$2; shift 2 ;;
	--delay)               [ $# -ge 2 ] || die "--delay needs milliseconds"; delay=$2; shift 2 ;;
	--ignore-crawl-delay)  cd_param='&crawl-delay=0'; shift ;;
	--failed-robots-allow) failed=--failed-robots-allow; shift ;;
	--fixture-server)      [ $# -ge 2 ] || die "--fixture-server needs a path"; server=$2; shift 2 ;;
	--keep)                [ $# -ge 2 ] || die "--keep needs a folder"; keep=$2; shift 2 ;;
	--json)                json=1; shift ;;
	-h|--help)             usage; exit 0 ;;
	--)                    shift; break ;;
	-*)                    die "unknown option $1 (see --help)" ;;
	*)                     break ;;
	esac
done
[ -n "$fixture" ] || die "--fixture URL is needed (see --help)"
[ $# -gt 0 ] || die "no seed URL (see --help)"
[[ $per_host =~ ^[1-9][0-9]*$ ]] || die "--per-host: expected a number above 0, got '$per_host'"
[[ $delay =~ ^[0-9]+$ ]] || die "--delay: expected milliseconds, got '$delay'"
[ -z "$rows" ] || [ -r "$rows" ] || die "--rows: cannot read '$rows'"
[ -x "$server" ] || die "no fixture server at '$server' (--fixture-server)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/web-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

get() { curl -sf --max-time 60 "$fixture/stats?$1" || die "cannot read $fixture/stats?$1"; }
get web-info >"$tmp/info"
read -r hosts seed pages unit port links < <(jq -r '[.hosts, .seed, .pages, .unit_ms, .port, .links] | @tsv' "$tmp/info") ||
	die "$fixture serves no web (fixture-server --web)"
net=$(jq -r .net "$tmp/info")

"$server" --web "$hosts" --seed "$seed" --web-pages "$pages" --web-ms "$unit" --web-net "$net" \
	--web-links "$links" --port "$port" --list-reachable $failed "$@" | sort >"$tmp/reachable" ||
	die "the reachable set could not be listed"
get web-urls | jq -r .url | grep -Ev '/(robots\.txt|sitemap\.xml)$' | sort >"$tmp/fetched" || true
comm -23 "$tmp/reachable" "$tmp/fetched" >"$tmp/missed"
comm -13 "$tmp/reachable" "$tmp/fetched" >"$tmp/extra"

# The counters, summed over the hosts that were asked anything.
get "web&delay=$delay$cd_param" >"$tmp/hosts"
read -r over most gaps disallowed failed_robots pauses again conns < <(jq -rs --argjson n "$per_host" '
	[ (map(select(.peak_in_flight > $n)) | length),
	  (map(.peak_in_flight) | max // 0),
	  (map(.short_gaps) | add // 0),
	  (map(.disallowed) | add // 0),
	  (map(.failed_robots) | add // 0),
	  (map(.during_pause) | add // 0),
	  (map([.robots_fetches - 1, 0] | max) | add // 0),
	  (map(.connections) | add // 0) ] | @tsv' "$tmp/hosts")
# A peer that holds a failed robots.txt to allow all is judged by it.
counted_failed=$failed_robots
[ -n "$failed" ] && counted_failed=0
violations=$((over + gaps + disallowed + counted_failed + pauses + again))

rows_n=0 rows_missed=0 rows_extra=0 rows_twice=0
if [ -n "$rows" ]; then
	# A listed URL robots.txt forbids has a row and no fetch.
	jq -r 'select(.url and .fail != "robots") | .url' "$rows" | sort >"$tmp/rows"
	rows_n=$(wc -l <"$tmp/rows")
	rows_twice=$(uniq -d "$tmp/rows" | wc -l)
	sort -u "$tmp/rows" -o "$tmp/rows"
	rows_missed=$(comm -23 "$tmp/reachable" "$tmp/rows" | wc -l)
	rows_extra=$(comm -13 "$tmp/reachable" "$tmp/rows" | wc -l)
fi

n_reach=$(wc -l <"$tmp/reachable") n_fetched=$(wc -l <"$tmp/fetched")
n_missed=$(wc -l <"$tmp/missed") n_extra=$(wc -l <"$tmp/extra")
bad=$((violations + n_missed + n_extra + rows_missed + rows_extra + rows_twice))
[ "$violations" -eq 0 ] && manner=polite || manner=impolite
[ $((n_missed + n_extra + rows_missed + rows_extra + rows_twice)) -eq 0 ] && pageset=complete || pageset=incomplete

if [ -n "$keep" ]; then
	mkdir -p "$keep"
	cp "$tmp/reachable" "$tmp/fetched" "$tmp/missed" "$tmp/extra" "$tmp/hosts" "$keep/"
	[ -n "$rows" ] && cp "$tmp/rows" "$keep/"
fi

if [ "$json" -eq 1 ]; then
	jq -nc --argjson v "[$over,$most,$gaps,$disallowed,$failed_robots,$counted_failed,$pauses,$again]" \
		--argjson p "[$n_reach,$n_fetched,$n_missed,$n_extra]" \
		--argjson r "[$rows_n,$rows_missed,$rows_extra,$rows_twice]" \
		--arg manner "$manner" --arg pageset "$pageset" --argjson rows "$([ -n "$rows" ] && echo true || echo false)" \
		--argjson conns "$conns" --argjson per_host "$per_host" --argjson delay "$delay" --arg policy "${failed:+failed-robots-allow}" '
		{ polite: ($manner == "polite"), complete: ($pageset == "complete"),
		  violations: { total: ($v[0] + $v[2] + $v[3] + $v[5] + $v[6] + $v[7]),
		                hosts_over_per_host: $v[0], most_in_flight: $v[1], short_gaps: $v[2],
		                disallowed: $v[3], failed_robots: $v[4], failed_robots_counted: $v[5],
		                during_pause: $v[6], robots_again: $v[7] },
		  pages: { reachable: $p[0], fetched: $p[1], missed: $p[2], extra: $p[3] },
		  connections: $conns,
		  rows: (if $rows then { rows: $r[0], missed: $r[1], extra: $r[2], twice: $r[3] } else null end),
		  rules: { per_host: $per_host, delay_ms: $delay,
		           robots_failed: (if $policy == "" then "disallows" else "allows" end) } }'
else
	echo "violations: $violations (hosts over --per-host $per_host: $over, most in flight $most;" \
		"gaps under the rule: $gaps; disallowed: $disallowed; to hosts whose robots.txt failed:" \
		"$failed_robots${failed:+, allowed}; during a Retry-After pause: $pauses; robots.txt again: $again)"
	echo "pages: $n_reach reachable, $n_fetched fetched, $n_missed missed, $n_extra extra"
	echo "connections: $conns"
	[ -n "$rows" ] && echo "rows: $rows_n, $rows_missed missed, $rows_extra extra, $rows_twice twice"
	head -5 "$tmp/missed" | sed 's/^/  missed: /'
	head -5 "$tmp/extra" | sed 's/^/  extra: /'
	echo "verdict: $manner, $pageset"
fi
[ "$bad" -eq 0 ]
