#!/usr/bin/env bats
# The synthetic web (fixture-server --web, docs/web.md): its bytes follow
# from its seed, it draws every kind of host, its counters catch what an
# impolite client does, and a polite crawl in every model fetches exactly
# the set it says is reachable (scripts/web-check.sh). The web runs on
# 127.77.x.y, names given to crawl and curl by --resolve; with root and
# dnsmasq, scripts/web.sh's namespace resolves them through DNS too.

load helpers

ROOT="$BATS_TEST_DIRNAME/../.."
CHECK="$ROOT/scripts/web-check.sh"
# A small web: 50 hosts, pages of 8 on average, a 5 ms unit (latencies of
# 2.5 to 250 ms, Crawl-delays of 20 to 60 ms). Seed 1 draws every kind.
WEB=(--web 50 --web-pages 8 --web-ms 5)

setup() {
	:
}

teardown() {
	local p
	for p in ${WEB_PIDS:-}; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	[ -n "${NS_UP:-}" ] && WEB_NS=$NS_UP WEB_DIR=$BATS_TEST_TMPDIR/ns BUILD=$BUILD "$ROOT/scripts/web.sh" down >/dev/null
	return 0
}

# web_up NAME SEED [OPTIONS...]: a web server of its own (seed SEED) whose
# base is $NAME (http://127.0.0.1:PORT), port ${NAME}_PORT, names in
# $BATS_TEST_TMPDIR/NAME.resolve.
web_up() {
	local name=$1 seed=$2
	shift 2
	spawn_fixture "$BATS_TEST_TMPDIR/$name.port" "${WEB[@]}" --seed "$seed" \
		--resolve-file "$BATS_TEST_TMPDIR/$name.resolve" "$@" || return 1
	WEB_PIDS="${WEB_PIDS:-} $SPAWNED_PID"
	printf -v "$name" '%s' "$SPAWNED_URL"
	printf -v "${name}_PORT" '%s' "${SPAWNED_URL##*:}"
}

# hosts BASE FILTER: the names of the web's hosts that jq FILTER selects.
hosts() {
	curl -s "$1/stats?web&all" | jq -r "select($2) | .host"
}

# web_resolve BASE: curl's --resolve arguments for the web at BASE's names.
web_resolve() {
	local port=${1##*:} f
	f=$(ls "$BATS_TEST_TMPDIR"/*.resolve | while read -r r; do grep -q ":$port:" "$r" && echo "$r"; done | head -1)
	sed 's/^/--resolve /' "$f"
}
# curl_web BASE ARGS...: curl with the web at BASE's names resolved.
curl_web() {
	local base=$1
	shift
	curl -s $(web_resolve "$base") "$@"
}

# seeds PORT: the three seed URLs the crawls start from.
seeds() {
	printf 'http://h%05d.web.test:%s/\n' 0 "$1" 1 "$1" 2 "$1"
}

@test "the same seed gives the same bytes, another seed other bytes" {
	web_up A 1
	web_up B 1
	web_up C 2
	# Every answer (head and body) of hosts 0 to 9, robots.txt and sitemaps
	# included, asked in the same order, hanging hosts aside.
	for w in A B C; do
		base=${!w} port=$(eval echo "\$${w}_PORT")
		skip=$(hosts "$base" '.speed == "hang" or .robots == "hang"' | tr '\n' '|')
		for h in $(seq 0 9); do
			name=$(printf 'h%05d.web.test' "$h")
			[[ "|$skip" == *"|$name|"* ]] && continue
			curl -s "$base/stats?web-host=$name" | jq -r .url
			echo "http://$name:$port/robots.txt"
			echo "http://$name:$port/sitemap.xml"
		done | sed "s/:$port\//:PORT\//" >"$BATS_TEST_TMPDIR/$w.urls"
		sed "s/:PORT\//:$port\//; s/^/url = /" "$BATS_TEST_TMPDIR/$w.urls" >"$BATS_TEST_TMPDIR/$w.curl"
		curl_web "$base" -i -K "$BATS_TEST_TMPDIR/$w.curl" | sed "s/:$port\b/:PORT/g" >"$BATS_TEST_TMPDIR/$w.bytes"
	done
	[ "$(wc -l <"$BATS_TEST_TMPDIR/A.urls")" -ge 50 ]
	cmp "$BATS_TEST_TMPDIR/A.urls" "$BATS_TEST_TMPDIR/B.urls"
	cmp "$BATS_TEST_TMPDIR/A.bytes" "$BATS_TEST_TMPDIR/B.bytes"
	[ "$(grep -c '^HTTP/1.1 200' "$BATS_TEST_TMPDIR/A.bytes")" -ge 30 ]
	! cmp -s "$BATS_TEST_TMPDIR/A.bytes" "$BATS_TEST_TMPDIR/C.bytes"
	# The hosts' draws too, and the reachable sets.
	[ "$(curl -s "$A/stats?web&all" | jq -c '[.robots, .speed, .pages, .crawl_delay_ms]' | md5sum)" = \
		"$(curl -s "$B/stats?web&all" | jq -c '[.robots, .speed, .pages, .crawl_delay_ms]' | md5sum)" ]
	[ "$(curl -s "$A/stats?web&all" | jq -c '[.robots, .speed, .pages]' | md5sum)" != \
		"$(curl -s "$C/stats?web&all" | jq -c '[.robots, .speed, .pages]' | md5sum)" ]
}

@test "every kind of robots.txt, host and page is drawn, and each answers as its kind says" {
	web_up A 1
	all=$(curl -s "$A/stats?web&all")
	[ "$(jq -rs 'map(.robots) | unique | join(" ")' <<<"$all")" = "404 5xx allow hang some" ]
	[ "$(jq -rs 'map(.speed) | unique | join(" ")' <<<"$all")" = "hang normal slow" ]
	u() { echo "http://$1:$A_PORT$2"; }
	first() { jq -r "select($1) | .host" <<<"$all" | head -1; }
	h=$(first '.robots == "allow" and .crawl_delay_ms == 0')
	[ "$(curl_web "$A" "$(u "$h" /robots.txt)" | sed -n '/^User-agent: \*/,$p' | head -2 | tr '\n' '|')" = "User-agent: *|Disallow:|" ]
	h=$(first '.robots == "some"')
	curl_web "$A" "$(u "$h" /robots.txt)" | grep -qx 'Disallow: /private/'
	h=$(first '.crawl_delay_ms > 0')
	ms=$(jq -r "select(.host == \"$h\") | .crawl_delay_ms" <<<"$all")
	curl_web "$A" "$(u "$h" /robots.txt)" | grep -qx "Crawl-delay: $(printf '0.%03d' "$ms")"
	[ "$(curl_web "$A" -o /dev/null -w '%{http_code}' "$(u "$(first '.robots == "404"')" /robots.txt)")" = 404 ]
	[[ "$(curl_web "$A" -o /dev/null -w '%{http_code}' "$(u "$(first '.robots == "5xx"')" /robots.txt)")" =~ ^50[03]$ ]]
	run curl_web "$A" --max-time 0.3 "$(u "$(first '.robots == "hang"')" /robots.txt)"
	[ "$status" -eq 28 ]
	run curl_web "$A" --max-time 0.3 "$(u "$(first '.speed == "hang" and .robots != "hang"')" /)"
	[ "$status" -eq 28 ]
	# Pages of each class, across the hosts that answer.
	pages=$(for h in $(jq -r 'select(.speed != "hang") | .host' <<<"$all"); do curl -s "$A/stats?web-host=$h"; done)
	t=$(jq -r 'select(.class == "throttle") | .url' <<<"$pages" | head -1)
	[[ "$(curl_web "$A" -i "$t" | tr -d '\r' | grep -E '^(HTTP|Retry-After)' | tr '\n' '|')" =~ ^HTTP/1.1\ (429|503)\ [A-Za-z\ ]+\|Retry-After:\ 1\|$ ]]
	[ "$(curl_web "$A" -o /dev/null -w '%{http_code}' "$t")" = 200 ]
	r=$(jq -r 'select(.class == "redirect") | .url' <<<"$pages" | head -1)
	[[ "$(curl_web "$A" -o /dev/null -w '%{http_code} %{redirect_url}' "$r")" =~ ^30[12]\ http://h[0-9]{5}\.web\.test:$A_PORT/ ]]
	d=$(jq -r 'select(.dup) | .url' <<<"$pages" | head -1)
	[ "$(curl_web "$A" "$d" | md5sum)" = "$(curl_web "$A" "$d?v=2" | md5sum)" ]
	s=$(jq -r 'select(.sitemap) | .url' <<<"$pages" | sed 's|\(http://[^/]*\)/.*|\1|' | sort -u | head -1)
	diff <(curl_web "$A" "$s/sitemap.xml" | grep -o '<loc>[^<]*' | sed 's/<loc>//') \
		<(jq -r "select(.sitemap and (.url | startswith(\"$s/\"))) | .url" <<<"$pages")
}

@test "the counters: an impolite client's requests are counted by kind, and the checker says so" {
	web_up A 1
	all=$(curl -s "$A/stats?web&all")
	u() { echo "http://$1:$A_PORT$2"; }
	# A host for each kind. Three requests at once to the slowest host
	# without a Crawl-delay: three in flight.
	i=$(jq -rs 'map(select(.crawl_delay_ms == 0 and .speed != "hang" and (.robots | test("allow|some|404"))))
		| max_by(.latency_ms) | .host' <<<"$all")
	curl_web "$A" --parallel --parallel-immediate -o /dev/null -o /dev/null -o /dev/null \
		"$(u "$i" /)" "$(u "$i" /)" "$(u "$i" /)"
	# Three in a row to the host with the longest Crawl-delay: two gaps
	# under it.
	h=$(jq -rs 'map(select(.speed == "normal")) | max_by(.crawl_delay_ms) | .host' <<<"$all")
	curl_web "$A" -o /dev/null -o /dev/null -o /dev/null "$(u "$h" /)" "$(u "$h" /)" "$(u "$h" /)"
	# robots.txt twice and a disallowed page, on a host without Crawl-delay.
	for s in $(jq -r "select(.robots == \"some\" and .crawl_delay_ms == 0 and .speed == \"normal\" and .host != \"$i\") | .host" <<<"$all"); do
		p=$(curl -s "$A/stats?web-host=$s" | jq -r 'select(.allowed | not) | .url' | head -1)
		[ -n "$p" ] && break
	done
	[ -n "$p" ]
	curl_web "$A" -o /dev/null -o /dev/null -o /dev/null "$(u "$s" /robots.txt)" "$(u "$s" /robots.txt)" "$p"
	# A page of a host whose robots.txt fails.
	f=$(jq -r 'select(.robots == "5xx" and .speed != "hang") | .host' <<<"$all" | head -1)
	curl_web "$A" -o /dev/null "$(u "$f" /)"
	# A throttled page, then another page of its host within the pause, and
	# one after it.
	t=$(for x in $(jq -r "select(.speed == \"normal\" and (.robots == \"allow\" or .robots == \"some\")
			and .host != \"$h\" and .host != \"$s\" and .host != \"$i\") | .host" <<<"$all"); do
		curl -s "$A/stats?web-host=$x" | jq -r 'select(.class == "throttle") | .url'; done | head -1)
	th=$(sed 's|http://\([^:]*\):.*|\1|' <<<"$t")
	# The pause is 1 s; a request counts inside it from 0.2 s to 0.98 s.
	# The names are read before, so that a loaded machine's delay is
	# only curl's start.
	res=$(web_resolve "$A")
	curl -s $res -o /dev/null "$t"
	sleep 0.25
	curl -s $res -o /dev/null "$(u "$th" /)"
	sleep 1
	curl -s $res -o /dev/null "$(u "$th" /)"
	stats=$(curl -s "$A/stats?web")
	# Three at once on three connections; three in a row on one.
	[ "$(jq -r "select(.host == \"$i\") | [.requests, .peak_in_flight, .short_gaps, .connections] | @tsv" <<<"$stats")" = "$(printf '3\t3\t0\t3')" ]
	[ "$(jq -r "select(.host == \"$h\") | [.requests, .peak_in_flight, .short_gaps, .connections] | @tsv" <<<"$stats")" = "$(printf '3\t1\t2\t1')" ]
	[ "$(jq -r "select(.host == \"$s\") | [.robots_fetches, .disallowed] | @tsv" <<<"$stats")" = "$(printf '2\t1')" ]
	[ "$(jq -r "select(.host == \"$f\") | .failed_robots" <<<"$stats")" = 1 ]
	[ "$(jq -r "select(.host == \"$th\") | [.requests, .during_pause, .connections] | @tsv" <<<"$stats")" = "$(printf '3\t1\t3')" ]
	# The checker: those, by kind, and the pages asked that no crawl from
	# h00000 reaches are extra.
	run "$CHECK" --fixture "$A" --fixture-server "$FIXTURE_SERVER" --json "http://h00000.web.test:$A_PORT/"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(jq -c '.violations | [.hosts_over_per_host, .most_in_flight, .short_gaps, .disallowed, .failed_robots, .during_pause, .robots_again, .total]' <<<"$output")" = "[1,3,2,1,1,1,1,7]" ]
	jq -e '.polite == false and .pages.fetched > 0' <<<"$output"
	run "$CHECK" --fixture "$A" --fixture-server "$FIXTURE_SERVER" --per-host 3 --failed-robots-allow "http://h00000.web.test:$A_PORT/"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "violations: 5 (hosts over --per-host 3: 0, most in flight 3; gaps under the rule: 2; disallowed: 1; to hosts whose robots.txt failed: 1, allowed; during a Retry-After pause: 1; robots.txt again: 1)" ]]
}

# bats test_tags=models
@test "a polite crawl fetches exactly the reachable set in every model, names by --resolve, and breaks no rule" {
	alone
	# Gaps are judged with the fixture's 20 ms of slack; under a sanitizer,
	# whose threads leave late by more than that on a loaded machine, not at
	# all (100 ms, past every Crawl-delay of this web). The five crawls run
	# alone: among eight test files at once on two cores, one gap in a
	# few thousand came in under its rule by more than the slack.
	local slack=20
	[ "$SECOND_MS" -eq 1000 ] || slack=100
	for m in $MODES; do
		web_up "W_$m" 1 --web-slack "$slack"
	done
	w=W_${MODES%% *}
	[ "$(curl -s "${!w}/stats?web-info" | jq .slack_ms)" = "$slack" ]
	pids=()
	for m in $MODES; do
		port=$(eval echo "\$W_${m}_PORT")
		"$CRAWL" --mode=$m --depth 1000 --span-hosts --per-host 2 --retry 1 --timeout 0.6 \
			--resolve "@$BATS_TEST_TMPDIR/W_$m.resolve" --format=jsonl -o "$BATS_TEST_TMPDIR/$m.jsonl" \
			$(seeds "$port") 2>"$BATS_TEST_TMPDIR/$m.err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || true; done
	for m in $MODES; do
		port=$(eval echo "\$W_${m}_PORT")
		run "$CHECK" --fixture "http://127.0.0.1:$port" --fixture-server "$FIXTURE_SERVER" --per-host 2 \
			--rows "$BATS_TEST_TMPDIR/$m.jsonl" $(seeds "$port")
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "${lines[0]:0:13}" = "violations: 0" ]
		[[ "${lines[1]}" =~ ^pages:\ ([0-9]+)\ reachable,\ ([0-9]+)\ fetched,\ 0\ missed,\ 0\ extra$ ]]
		[ "${BASH_REMATCH[1]}" -ge 200 ]
		[ "$(tail -1 "$BATS_TEST_TMPDIR/$m.jsonl" | jq -c '[.dns_lookups, .robots_fetched > 0]')" = "[0,true]" ]
	done
}

@test "links by address (--web-links addrs): the crawl of address URLs, without names, is the reachable set" {
	web_up A 2 --web-links addrs
	run "$CRAWL" --mode=coro --depth 1000 --span-hosts --per-host 1 --retry 1 --timeout 0.6 --format=jsonl \
		-o "$BATS_TEST_TMPDIR/rows" "http://127.77.0.1:$A_PORT/" "http://127.77.0.2:$A_PORT/"
	run "$CHECK" --fixture "$A" --fixture-server "$FIXTURE_SERVER" --rows "$BATS_TEST_TMPDIR/rows" \
		"http://127.77.0.1:$A_PORT/" "http://127.77.0.2:$A_PORT/"
	echo "$output"
	[ "$status" -eq 0 ]
	! grep -q 'web\.test' "$BATS_TEST_TMPDIR/rows"
	[ "$(jq -r 'select(.url) | .url' "$BATS_TEST_TMPDIR/rows" | grep -cv '^http://127\.77\.0\.[0-9]*:')" -eq 0 ]
}

@test "--failed-robots-allow: the pages of hosts whose robots.txt fails join the set, with what only they link to" {
	web_up A 1
	list() { "$FIXTURE_SERVER" "${WEB[@]}" --seed 1 --port "$A_PORT" --list-reachable "$@" $(seeds "$A_PORT") | sort; }
	list >"$BATS_TEST_TMPDIR/rfc"
	list --failed-robots-allow >"$BATS_TEST_TMPDIR/allow"
	[ -z "$(comm -23 "$BATS_TEST_TMPDIR/rfc" "$BATS_TEST_TMPDIR/allow")" ]
	failed=$(hosts "$A" '.robots == "5xx" or .robots == "hang"' | sed "s/$/:$A_PORT\//")
	# None of their pages under RFC 9309, some when a failure allows all.
	! grep -qFf <(echo "$failed") "$BATS_TEST_TMPDIR/rfc"
	[ "$(grep -cFf <(echo "$failed") "$BATS_TEST_TMPDIR/allow")" -ge 5 ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/allow")" -gt "$(wc -l <"$BATS_TEST_TMPDIR/rfc")" ]
}

@test "fixture-server's web flags: each needs --web, --list-reachable a port and seeds of the web" {
	run "$FIXTURE_SERVER" --seed 3
	[ "$status" -eq 2 ]
	[ "$output" = "fixture-server: the web's options need --web N (see --help)" ]
	run "$FIXTURE_SERVER" --web 0
	[ "$status" -eq 2 ]
	[ "$output" = "fixture-server: --web: expected a whole number from 1 to 65534, got '0' (see --help)" ]
	run "$FIXTURE_SERVER" --web 5 --web-slack 10001
	[ "$status" -eq 2 ]
	[ "$output" = "fixture-server: --web-slack: expected a whole number from 0 to 10000, got '10001' (see --help)" ]
	run "$FIXTURE_SERVER" --web 5 --web-links other
	[ "$output" = "fixture-server: --web-links: expected names or addrs, got 'other' (see --help)" ]
	run "$FIXTURE_SERVER" --web 5 --list-reachable http://h00000.web.test/
	[ "$status" -eq 2 ]
	[ "$output" = "fixture-server: --list-reachable needs the port of the web's links, --port N (see --help)" ]
	run "$FIXTURE_SERVER" --web 5 --port 80 --list-reachable
	[ "$output" = "fixture-server: --list-reachable needs one seed URL or more (see --help)" ]
	run "$FIXTURE_SERVER" --web 5 --port 80 http://h00000.web.test/
	[ "$output" = "fixture-server: unknown flag 'http://h00000.web.test/' (see --help)" ]
	run "$FIXTURE_SERVER" --web 5 --port 80 --list-reachable http://h00005.web.test/
	[ "$status" -eq 1 ]
	[ "$output" = "fixture-server: --list-reachable: not a page of this web: 'http://h00005.web.test/'" ]
	run "$FIXTURE_SERVER" --web 5 --port 80 --list-reachable http://h00000.web.test/
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "http://h00000.web.test/" ]
}

@test "web.sh: a namespace whose dnsmasq resolves every host; a crawl there looks names up, is polite and complete" {
	alone
	[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
	command -v dnsmasq >/dev/null || skip "needs dnsmasq (dnsmasq-base)"
	ip netns add "crawlweb-probe-$$" 2>/dev/null || skip "network namespaces are not allowed here"
	ip netns delete "crawlweb-probe-$$"
	NS_UP=crawlweb-t$$
	web() { WEB_NS=$NS_UP WEB_DIR=$BATS_TEST_TMPDIR/ns BUILD=$BUILD "$ROOT/scripts/web.sh" "$@"; }
	run web up 50 1 --web-pages 8 --web-ms 5
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "web up: 50 hosts (seed 1) in namespace $NS_UP: http://h00000.web.test/ to http://h00049.web.test/, names by dnsmasq" ]]
	pid=$(cat "$BATS_TEST_TMPDIR/ns/fixture-server.pid")
	run web up 50 1 --web-pages 8 --web-ms 5        # up already: kept as it is
	[ "$status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/ns/fixture-server.pid")" = "$pid" ]
	[ "$(web exec getent hosts h00042.web.test)" = "10.77.0.43      h00042.web.test" ]
	# -c 1000: transfers spread over several multi handles, each host's
	# kept on one (its robots.txt's URL names port 80, its pages do not).
	run web exec "$CRAWL" -c 1000 --depth 1000 --span-hosts --per-host 1 --retry 1 --timeout 0.6 --format=jsonl \
		-o "$BATS_TEST_TMPDIR/rows" $(printf 'http://h%05d.web.test/\n' 0 1 2)
	[ "$status" -le 1 ]       # 1: the hanging host's pages time out
	run web exec "$CHECK" --fixture http://127.0.0.1 --fixture-server "$FIXTURE_SERVER" --per-host 1 \
		--rows "$BATS_TEST_TMPDIR/rows" $(printf 'http://h%05d.web.test/\n' 0 1 2)
	echo "$output"
	[ "$status" -eq 0 ]
	# One lookup a host asked anything (its robots.txt first), none twice.
	asked=$(web exec curl -s "http://127.0.0.1/stats?web" | jq -s length)
	[ "$(tail -1 "$BATS_TEST_TMPDIR/rows" | jq .dns_lookups)" -eq "$asked" ]
	# One connection a host, robots.txt's carrying its pages, but where a
	# timeout closed one (the hanging hosts).
	web exec curl -s "http://127.0.0.1/stats?web" | jq -c 'select(.speed != "hang" and .connections != 1)' >"$BATS_TEST_TMPDIR/conns"
	cat "$BATS_TEST_TMPDIR/conns"
	[ ! -s "$BATS_TEST_TMPDIR/conns" ]
	run web down
	[ "$status" -eq 0 ]
	NS_UP=
	! ip netns list | grep -q "^crawlweb-t$$\b"
	[ ! -e "/etc/netns/crawlweb-t$$" ] && [ ! -e "$BATS_TEST_TMPDIR/ns" ]
	# Gone, or a zombie its new parent has yet to reap.
	[ ! -e "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status"
}

@test "web.sh refuses to run without root, saying what to do instead, and rejects bad arguments" {
	run "$ROOT/scripts/web.sh" up 50
	[ "$status" -eq 2 ]
	[ "$output" = "web.sh: up needs N and SEED (see --help)" ]
	run "$ROOT/scripts/web.sh" up 70000 1
	[ "$output" = "web.sh: up: N is 1 to 65534, got '70000'" ]
	run "$ROOT/scripts/web.sh" sideways
	[ "$status" -eq 2 ]
	if [ "$(id -u)" -eq 0 ]; then
		command -v setpriv >/dev/null || skip "needs setpriv to drop root"
		others_reach "$ROOT/scripts/web.sh" ||
			skip "another user cannot reach scripts/web.sh (a folder above it is root's alone)"
		run setpriv --reuid=nobody --regid=nogroup --clear-groups "$ROOT/scripts/web.sh" up 5 1
	else
		run "$ROOT/scripts/web.sh" up 5 1
	fi
	[ "$status" -eq 2 ]
	[[ "$output" == "web.sh: up needs root, for a network namespace (ip netns); without root, serve the web on 127.77.0.0/16: "*"--resolve @FILE (docs/web.md)" ]]
}
