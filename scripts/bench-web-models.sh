#!/bin/bash
# What each model pays on the real shape of work: crawl --mode=all on a
# slice of the synthetic web (docs/web.md) in web.sh's namespace, names
# from its dnsmasq, a link-following crawl from three seeds across HOSTS
# hosts, every host's transfers in flight at once (-c C, one per host).
# The comparison table shows, per model, the connections it opened, the
# names it looked up, its threads and its context switches.
#
#   scripts/bench-web-models.sh        the table to OUT
#   HOSTS=500 PAGES=20 SEED=1          the web (fixture-server --web HOSTS
#                                      --seed SEED --web-pages PAGES)
#   C=500 PER_HOST=1 DELAY=0           in flight, per host, ms between two
#                                      requests to a host
#   REPEAT=1                           --repeat (medians of that many)
#   OUT=scripts/results/bench-web-models.txt
#   WEB_NS, WEB_NET                    as web.sh's (another namespace lets
#                                      it run beside scripts/bench-web.sh)
#   NODEPS=1                           do not call scripts/deps.sh
#
# One web serves every model, in turn: a throttled page answers 429 or
# 503 the first time it is asked only, so the first model alone retries
# those (the retries column says how many).
# Needs root (web.sh's namespace).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
me=bench-web-models.sh

HOSTS=${HOSTS:-500} PAGES=${PAGES:-20} SEED=${SEED:-1}
C=${C:-500} PER_HOST=${PER_HOST:-1} DELAY=${DELAY:-0} REPEAT=${REPEAT:-1}
OUT=${OUT:-scripts/results/bench-web-models.txt}
NS=${WEB_NS:-crawlweb}

[ "$(id -u)" -eq 0 ] || { echo "$me: needs root, for web.sh's network namespace" >&2; exit 2; }
if [ -z "${NODEPS:-}" ]; then
	timeout 900 scripts/deps.sh time jq curl dnsmasq-base=dnsmasq iproute2=ip ||
		{ echo "$me: could not install what it needs" >&2; exit 1; }
fi
[ -x build/crawl ] && [ -x build/fixture-server ] || make -s all
trap 'scripts/web.sh down >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT TERM

scripts/web.sh down >/dev/null
scripts/web.sh up "$HOSTS" "$SEED" --web-pages "$PAGES" >/dev/null
seeds=(http://h00000.web.test/ http://h00001.web.test/ http://h00002.web.test/)
cmd=(build/crawl --mode=all --repeat "$REPEAT" -q -c "$C" --depth 1000 --span-hosts
     --per-host "$PER_HOST" --delay "$DELAY" --retry 1 --timeout 1 "${seeds[@]}")
echo "$me: ${cmd[*]}" >&2
status=0
ip netns exec "$NS" "${cmd[@]}" >"$OUT.tmp" 2>"$OUT.err" || status=$?
# 1: some URLs failed (the hanging hosts' pages time out); anything else
# is the run's failure.
[ "$status" -le 1 ] || { cat "$OUT.err" >&2; rm -f "$OUT.tmp" "$OUT.err"; exit 1; }
{
	echo "# scripts/bench-web-models.sh: $HOSTS hosts x $PAGES pages (fixture-server --web $HOSTS"
	echo "# --seed $SEED --web-pages $PAGES) in web.sh's namespace, names from dnsmasq;"
	echo "#   ${cmd[*]}"
	echo "# $(build/crawl --version | head -1); $(nproc) cores; $(date -u +%Y-%m-%d)"
	echo "# One web for every model: only the first meets the throttled pages' 429 and 503."
	echo
	cat "$OUT.tmp"
} >"$OUT"
rm -f "$OUT.tmp" "$OUT.err"
cat "$OUT"
