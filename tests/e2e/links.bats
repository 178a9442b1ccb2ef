#!/usr/bin/env bats
# Link-following crawls: depth, de-duplication, --max-pages, scope,
# --include/--exclude, robots.txt, --per-host, --delay, --follow/--extract,
# in every model.

load helpers


urls_of() { jq -r 'select(.url) | .url' <<<"$output" | sort; }

# expected_graph N F D: the URLs of /graph/N/F/ pages reachable within depth D.
expected_graph() {
	local n=$1 f=$2 d=$3 s=1 level=1
	for _ in $(seq "$d"); do level=$((level * f)); s=$((s + level)); done
	[ "$s" -gt "$n" ] && s=$n
	echo "$PFIX/graph/$n/$f/"
	for i in $(seq 1 $((s - 1))); do echo "$PFIX/graph/$n/$f/$i"; done
}

# bats test_tags=models
@test "every model finds exactly the reachable set at each depth, each page once" {
	for m in $MODES; do
		for d in 0 1 2 3; do
			start_private_fixture
			run "$CRAWL" --mode=$m --depth $d --format=jsonl "$PFIX/graph/40/3/"
			echo "mode $m depth $d"
			[ "$status" -eq 0 ]
			diff <(urls_of) <(expected_graph 40 3 $d | sort)
			n=$(expected_graph 40 3 $d | wc -l)
			# One request per page, plus robots.txt when links are followed.
			r=$((d > 0 ? n + 1 : n))
			[ "$(stat_of "$PFIX" requests)" -eq "$r" ]
			[ "$(curl -s "$PFIX/stats?path=/graph/40/3/1" | jq .count)" -eq $((d > 0 ? 1 : 0)) ]
			[ "$(jq -r 'select(.url) | select(.depth > '"$d"')' <<<"$output" | wc -l)" -eq 0 ]
			stop_private_fixture
		done
	done
}

# bats test_tags=models
@test "--max-pages bounds the crawl" {
	for m in $MODES; do
		start_private_fixture
		run "$CRAWL" --mode=$m --depth 5 --max-pages 10 --format=jsonl "$PFIX/graph/1000/4/"
		[ "$status" -eq 0 ]
		[ "$(urls_of | wc -l)" -eq 10 ]
		[ "$(stat_of "$PFIX" requests)" -eq 11 ]
		stop_private_fixture
	done
}

# bats test_tags=models
@test "--include and --exclude filter the links followed" {
	start_private_fixture
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 2 --format=jsonl --exclude '/graph/40/3/[23]$' "$PFIX/graph/40/3/"
		[ "$status" -eq 0 ]
		# Pages 2 and 3 and their children (7..12) are not reached.
		[ "$(urls_of | sed 's|.*/||' | sort -n | tr '\n' ' ')" = " 1 4 5 6 " ]
		run "$CRAWL" --mode=$m --depth 2 --format=jsonl --include '/graph/40/3/1?$' "$PFIX/graph/40/3/"
		[ "$(urls_of | sed 's|.*/||' | sort -n | tr '\n' ' ')" = " 1 " ]
	done
	stop_private_fixture
}

# bats test_tags=models
@test "links stay on the listed URL's host unless --span-hosts" {
	start_private_fixture
	port=${PFIX##*:}
	other="http%3A%2F%2Flocalhost%3A$port%2Fbytes%2F5"
	page="$PFIX/links?u=$other&u=%2Fbytes%2F7"
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl "$page"
		[ "$(urls_of | tr '\n' ' ')" = "$PFIX/bytes/7 $page " ]
		run "$CRAWL" --mode=$m --depth 1 --span-hosts --format=jsonl "$page"
		[ "$(urls_of | tr '\n' ' ')" = "$PFIX/bytes/7 $page http://localhost:$port/bytes/5 " ]
	done
	stop_private_fixture
}

# bats test_tags=models
@test "a listed URL and the links to it are one page, however each is spelled" {
	start_private_fixture
	port=${PFIX##*:}
	for m in $MODES; do
		# The page links to itself as http://localhost:PORT/graph/40/3/.
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl "HTTP://LOCALHOST:$port/graph/40/3/#top"
		[ "$status" -eq 0 ]
		[ "$(urls_of | wc -l)" -eq 4 ]
	done
	[ "$(curl -s "$PFIX/stats?path=/graph/40/3/" | jq .count)" -eq "$NMODES" ]
	stop_private_fixture
}

@test "two spellings of one link are fetched once; an empty query is a query" {
	start_private_fixture
	port=${PFIX##*:}
	# /bytes/5?x=%7e, ?x=~ and ?x=%7E; /bytes/6? and /bytes/6; /bytes/7
	# absolute, with dot segments written %2E, and with backslashes.
	links="u=%2Fbytes%2F5%3Fx%3D%257e&u=%2Fbytes%2F5%3Fx%3D~&u=%2Fbytes%2F5%3Fx%3D%257E"
	links+="&u=%2Fbytes%2F6%3F&u=%2Fbytes%2F6"
	links+="&u=http%3A%2F%2F127.0.0.1%3A$port%2Fbytes%2F7&u=%2Fa%2F%252E%252E%2Fbytes%2F7&u=%5Cbytes%5C7"
	run "$CRAWL" --depth 1 --format=jsonl "$PFIX/links?$links"
	[ "$status" -eq 0 ]
	[ "$(urls_of | wc -l)" -eq 5 ]
	urls_of | grep -qx "$PFIX/bytes/5?x=%7e"
	urls_of | grep -qx "$PFIX/bytes/6?"
	[ "$(curl -s "$PFIX/stats?path=/bytes/5" | jq .count)" -eq 1 ]
	[ "$(curl -s "$PFIX/stats?path=/bytes/6" | jq .count)" -eq 2 ]
	[ "$(curl -s "$PFIX/stats?path=/bytes/7" | jq .count)" -eq 1 ]
	stop_private_fixture
}

# bats test_tags=models
@test "robots.txt: a disallowed path is never requested, and --no-robots ignores it" {
	for m in $MODES; do
		start_private_fixture --root "$PWD/testdata/site"
		run "$CRAWL" --mode=$m --depth 2 --format=jsonl "$PFIX/site/"
		[ "$status" -eq 0 ]
		urls_of | grep -q "/site/about.html$"
		! urls_of | grep -q private
		[ "$(curl -s "$PFIX/stats?path=/site/private/secret.html" | jq .count)" -eq 0 ]
		[ "$(curl -s "$PFIX/stats?path=/robots.txt" | jq .count)" -eq 1 ]
		[ "$(jq -r 'select(.summary) | [.robots_fetched, .robots_blocked] | join(" ")' <<<"$output")" = "1 1" ]
		# A listed URL that robots.txt forbids gets a failed row.
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl "$PFIX/site/private/secret.html"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.url) | .fail' <<<"$output")" = "robots" ]
		[ "$(curl -s "$PFIX/stats?path=/site/private/secret.html" | jq .count)" -eq 0 ]
		run "$CRAWL" --mode=$m --depth 2 --no-robots --format=jsonl "$PFIX/site/"
		urls_of | grep -q "/site/private/secret.html$"
		stop_private_fixture
	done
}

@test "robots.txt is read for the user agent's product token, or --robots-agent's" {
	root="$BATS_TEST_TMPDIR/root"
	mkdir -p "$root/private"
	printf '%s\n' 'User-agent: *' 'Disallow: /' '' \
		'User-agent: crawl/0.1 (any version: the product token is crawl)' 'Disallow: /site/private/' '' \
		'User-agent: OtherBot' 'Disallow: /site/' >"$root/robots.txt"
	echo '<a href="a.html">a</a> <a href="private/b.html">b</a>' >"$root/index.html"
	echo a >"$root/a.html"
	echo b >"$root/private/b.html"
	start_private_fixture --root "$root"
	fetched() { jq -r 'select(.url and .fail == null) | .url' <<<"$output" | sort | tr '\n' ' '; }

	# crawl/0.1.0 reads the group for crawl.
	run "$CRAWL" --depth 1 --format=jsonl "$PFIX/site/"
	[ "$status" -eq 0 ]
	[ "$(fetched)" = "$PFIX/site/ $PFIX/site/a.html " ]
	[ "$(curl -s "$PFIX/stats?path=/site/private/b.html" | jq .count)" -eq 0 ]
	# Another product token, another group; one the file does not name, "*".
	for ua in 'OtherBot/2.0 (+http://example.invalid/bot)' 'Mozilla/5.0 (compatible)'; do
		run "$CRAWL" -A "$ua" --depth 1 --format=jsonl "$PFIX/site/"
		[ "$status" -eq 1 ]
		[ "$(jq -r 'select(.url) | .fail' <<<"$output")" = robots ]
	done
	# --robots-agent names the token whatever the User-Agent says.
	run "$CRAWL" -A 'Mozilla/5.0 (compatible)' --robots-agent crawl --depth 1 --format=jsonl "$PFIX/site/"
	[ "$status" -eq 0 ]
	[ "$(fetched)" = "$PFIX/site/ $PFIX/site/a.html " ]
	[ "$(curl -s "$PFIX/stats?path=/site/private/b.html" | jq .count)" -eq 0 ]
	stop_private_fixture
}

@test "a product token is letters, '-' and '_': others are usage errors" {
	run "$CRAWL" --robots-agent 'crawl/1.0' --depth 1 "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--robots-agent: expected a product token"*"'crawl/1.0'"* ]]
	# A user agent that starts with no token cannot be read for, unless
	# robots.txt is not read at all.
	run "$CRAWL" -A '1bot' --depth 1 "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--user-agent: '1bot' does not start with a product token"*"--robots-agent"* ]]
	run "$CRAWL" -A '1bot' --depth 1 --no-robots -q "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
	run "$CRAWL" -A '1bot' --robots-agent bot --depth 1 -q "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
}

# bats test_tags=models
@test "--per-host 2 never has more than two requests in flight" {
	for m in $MODES; do
		sequential $m && continue
		start_private_fixture
		urls=()
		for i in $(seq 10); do urls+=("$PFIX/delay/200/$i"); done
		run "$CRAWL" --mode=$m -c 10 --per-host 2 -q "${urls[@]}"
		[ "$status" -eq 0 ]
		[ "$(stat_of "$PFIX" peak_active)" -eq 2 ]
		t=$(sed -n 's/^Use time: \(.*\)s$/\1/p' <<<"$output")
		awk -v t="$t" 'BEGIN { exit !(t >= 0.95) }'
		stop_private_fixture
	done
	# The same bound on a link-following crawl.
	start_private_fixture
	run "$CRAWL" --mode=coro --depth 3 --per-host 2 -q "$PFIX/graph/200/4/"
	[ "$(stat_of "$PFIX" peak_active)" -le 2 ]
	stop_private_fixture
}

# bats test_tags=models
@test "--delay spaces requests to one host" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --delay 150 --format=jsonl "$FIXTURE/bytes/1" "$FIXTURE/bytes/2" "$FIXTURE/bytes/3" "$FIXTURE/bytes/4"
		[ "$status" -eq 0 ]
		starts=$(jq -r 'select(.url) | .start_s' <<<"$output" | sort -g)
		awk 'NR > 1 && $1 - prev < 0.13 { bad = 1 } { prev = $1 } END { exit bad }' <<<"$starts"
	done
}

@test "the cinema example: names, dates and posters of every film" {
	# The article's two crawlers, requests' one page after another and
	# aiohttp's: the extraction is the HTML stage's, the same in every model.
	for m in seq coro; do
		run "$CRAWL" --mode=$m --depth 1 --follow '//div[@id="showing-soon"]//a/@href' \
			--extract 'name=//h1' --extract 'date=//span[@class="date"]' --extract 'poster=//img/@src' \
			"$FIXTURE/site/cinema/"
		[ "$status" -eq 0 ]
		[ "$(grep -c '^Length:' <<<"$output")" -eq 23 ]
		grep -qx "Length:   454   URL: $FIXTURE/site/cinema/film/1.html name=The Lighthouse Keeper's Daughter date=2025-07-04 poster=/site/cinema/posters/1.jpg" <<<"$output"
		grep -qx "Length:   413   URL: $FIXTURE/site/cinema/film/8.html name=The Last Cartographer date=2025-08-22 poster=/site/cinema/posters/8.jpg" <<<"$output"
		grep -qx "Length:   416   URL: $FIXTURE/site/cinema/film/22.html name=Northbound Night Train date=2025-11-28 poster=/site/cinema/posters/22.jpg" <<<"$output"
		[ "$(grep -c ' poster=/site/cinema/posters/[0-9]*.jpg$' <<<"$output")" -eq 22 ]
	done
	run "$CRAWL" --depth 1 --follow '//div[@id="showing-soon"]//a/@href' --extract 'poster=//img/@src' --format=jsonl "$FIXTURE/site/cinema/"
	[ "$(jq -r 'select(.extract) | .extract.poster[0]' <<<"$output" | sort | head -1)" = "/site/cinema/posters/1.jpg" ]
	run "$CRAWL" --depth 1 --extract 'poster=//img/@src' --format=csv "$FIXTURE/site/cinema/film/2.html"
	grep -q ',"{""poster"":\[""/site/cinema/posters/2.jpg""\]}",,sha1:[A-Z2-7]\{32\},,false$' <<<"$output"
	# The extract cell is the JSON of the extract field, in CSV quoting.
	"$CRAWL" --depth 1 --extract 'poster=//img/@src' --format=csv "$FIXTURE/site/cinema/film/2.html" 2>/dev/null >"$BATS_TEST_TMPDIR/x.csv"
	[ "$(/usr/bin/python3 -c 'import csv, json, sys; r = list(csv.DictReader(sys.stdin)); print(json.loads(r[0]["extract"])["poster"][0])' <"$BATS_TEST_TMPDIR/x.csv")" = "/site/cinema/posters/2.jpg" ]
}

# bats test_tags=models
@test "the charset of the HTTP Content-Type decodes the page" {
	# testdata/site/cp1251.html is in windows-1251 and does not say so:
	# told by the header, its title and link read as meant.
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --extract 't=//title' --format=jsonl \
			"$FIXTURE/site/cp1251.html?charset=windows-1251"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.depth == 0) | .extract.t[0]' <<<"$output")" = "Дом" ]
		jq -r 'select(.depth == 1) | .url' <<<"$output" | grep -qx "$FIXTURE/site/%D0%B4%D0%BE%D0%BC.html"
		# Without it, the bytes are not UTF-8, and ISO-8859-1 is the guess.
		run "$CRAWL" --mode=$m --extract 't=//title' --format=jsonl "$FIXTURE/site/cp1251.html"
		[ "$(jq -r 'select(.url) | .extract.t[0]' <<<"$output")" = "Äîì" ]
	done
}

@test "bad XPath and regex name their flag" {
	run "$CRAWL" --follow '//a[' "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- '^crawl: --follow:' <<<"$output"
	run "$CRAWL" --extract 'x=//b[' "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- '^crawl: --extract:' <<<"$output"
	run "$CRAWL" --include '(' "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- '^crawl: --include: bad regular expression' <<<"$output"
	run "$CRAWL" --depth -1 "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
}

# bats test_tags=models
@test "--mode=all on a link-following crawl: every model the same pages" {
	run "$CRAWL" --mode=all -q --format=jsonl --depth 2 "$FIXTURE/graph/40/3/"
	[ "$status" -eq 0 ]
	[ "$(jq -r '[.mode, .urls, .ok] | join(" ")' <<<"$output" | tr '\n' ';')" = "$(per_mode "13 13")" ]
}

# bats test_tags=models
@test "--canonical and --strip-query make one page of a query's spellings; without them, three" {
	start_private_fixture
	# /bytes/5?b=2&a=1, ?a=1&b=2 and ?a=1&b=2&utm_source=z; /bytes/6?sid=1&x=1,
	# ?x=1 and ?side=1&x=1.
	links="u=%2Fbytes%2F5%3Fb%3D2%26a%3D1&u=%2Fbytes%2F5%3Fa%3D1%26b%3D2&u=%2Fbytes%2F5%3Fa%3D1%26b%3D2%26utm_source%3Dz"
	links+="&u=%2Fbytes%2F6%3Fsid%3D1%26x%3D1&u=%2Fbytes%2F6%3Fx%3D1&u=%2Fbytes%2F6%3Fside%3D1%26x%3D1"
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl --canonical --strip-query 'utm_.*' --strip-query sid "$PFIX/links?$links"
		[ "$status" -eq 0 ]
		# The row keeps the URL as the page wrote it, the first spelling found.
		[ "$(urls_of | grep -c /bytes/)" -eq 3 ]
		urls_of | grep -qx "$PFIX/bytes/5?b=2&a=1"
		urls_of | grep -qx "$PFIX/bytes/6?sid=1&x=1"
		urls_of | grep -qx "$PFIX/bytes/6?side=1&x=1"
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl "$PFIX/links?$links"
		[ "$status" -eq 0 ]
		[ "$(urls_of | grep -c /bytes/)" -eq 6 ]
	done
	[ "$(curl -s "$PFIX/stats?path=/bytes/5" | jq .count)" -eq $((4 * NMODES)) ]
	[ "$(curl -s "$PFIX/stats?path=/bytes/6" | jq .count)" -eq $((5 * NMODES)) ]
	stop_private_fixture
}

# bats test_tags=models
@test "--canonical holds for listed URLs too: a link to a listed page spelled otherwise is seen; listed duplicates keep a row each" {
	start_private_fixture
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl --canonical \
			"$PFIX/links?u=%2Fbytes%2F5%3Fb%3D2%26a%3D1" "$PFIX/bytes/5?a=1&b=2" "$PFIX/bytes/5?b=2&a=1&"
		[ "$status" -eq 0 ]
		# Every line in gives its row, as a URL listed twice does without
		# --canonical; the link is to a page seen.
		[ "$(urls_of | tr '\n' ' ')" = "$PFIX/bytes/5?a=1&b=2 $PFIX/bytes/5?b=2&a=1& $PFIX/links?u=%2Fbytes%2F5%3Fb%3D2%26a%3D1 " ]
		[ "$(jq -r 'select(.url) | .depth' <<<"$output" | sort -u)" = 0 ]
	done
	[ "$(curl -s "$PFIX/stats?path=/bytes/5" | jq .count)" -eq $((2 * NMODES)) ]
	stop_private_fixture
}

@test "--canonical and --strip-query are ignored without a set of URLs seen; a bad pattern names its flag" {
	run "$CRAWL" --canonical -q "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
	grep -qx -- "crawl: warning: --canonical is ignored here: the set of URLs seen is kept only with --depth or --sitemaps" <<<"$output"
	run "$CRAWL" --strip-query x -q "$FIXTURE/bytes/1"
	grep -qx -- "crawl: warning: --strip-query is ignored here: the set of URLs seen is kept only with --depth or --sitemaps" <<<"$output"
	run "$CRAWL" --depth 1 --strip-query '(' "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- "^crawl: --strip-query: bad regular expression '('" <<<"$output"
}

# links_site: a static site whose pages give every verdict but a full
# queue's: robots.txt forbids /site/private/.
links_site() {
	root="$BATS_TEST_TMPDIR/root"
	mkdir -p "$root/private"
	printf '%s\n' 'User-agent: *' 'Disallow: /site/private/' >"$root/robots.txt"
	printf '%s\n' '<a href="a.html">a</a> <a href="private/b.html">b</a>' \
		'<a href="http://localhost:1/x">x</a> <a href="skip.html">s</a> <a href="./">up</a>' \
		'<a href="a.html#top">a again</a> <a href="mailto:m@example.invalid">m</a>' >"$root/index.html"
	printf '%s\n' '<a href="./">up</a> <a href="c.html">c</a>' >"$root/a.html"
	printf '%s\n' '<a href="a.html">a</a>' >"$root/c.html"
	echo b >"$root/private/b.html"
	echo s >"$root/skip.html"
	start_private_fixture --root "$root"
}

# bats test_tags=models
@test "--links-out: one line a link of every page parsed, with its verdict, in every model" {
	links_site
	s="$PFIX/site"
	for m in $MODES; do
		rm -f "$BATS_TEST_TMPDIR/links.jsonl"
		run "$CRAWL" --mode=$m --depth 2 --exclude skip --format=jsonl --links-out "$BATS_TEST_TMPDIR/links.jsonl" "$s/"
		[ "$status" -eq 0 ]
		diff <(jq -c . "$BATS_TEST_TMPDIR/links.jsonl" | sort) <(sort <<-EOF
		{"from":"$s/","to":"$s/a.html","admitted":true,"reason":null}
		{"from":"$s/","to":"$s/private/b.html","admitted":false,"reason":"robots"}
		{"from":"$s/","to":"http://localhost:1/x","admitted":false,"reason":"out of scope"}
		{"from":"$s/","to":"$s/skip.html","admitted":false,"reason":"excluded"}
		{"from":"$s/","to":"$s/","admitted":false,"reason":"seen"}
		{"from":"$s/a.html","to":"$s/","admitted":false,"reason":"seen"}
		{"from":"$s/a.html","to":"$s/c.html","admitted":true,"reason":null}
		{"from":"$s/c.html","to":"$s/a.html","admitted":false,"reason":"depth"}
		EOF
		)
		# A page's lines are together, in the order of its links.
		[ "$(jq -r .to "$BATS_TEST_TMPDIR/links.jsonl" | head -5 | tr '\n' ' ')" = "$s/a.html $s/private/b.html http://localhost:1/x $s/skip.html $s/ " ]
		# As many lines as the rows' links, each row's parent the page it came from.
		[ "$(jq -s 'map(select(.url) | .links) | add' <<<"$output")" -eq 8 ]
		[ "$(jq -r 'select(.url) | [.url, .parent] | join(" ")' <<<"$output" | sort | tr '\n' ';')" = "$s/ ;$s/a.html $s/;$s/c.html $s/a.html;" ]
	done
	[ "$(curl -s "$PFIX/stats?path=/site/private/b.html" | jq .count)" -eq 0 ]
	[ "$(curl -s "$PFIX/stats?path=/site/skip.html" | jq .count)" -eq 0 ]
}

# bats test_tags=models
@test "--links-out: from and parent are the final URL, after redirects; the links alone parse pages, every link at depth" {
	start_private_fixture
	page="$PFIX/links?u=%2Fbytes%2F1&u=%2Fbytes%2F2"
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl --links-out "$BATS_TEST_TMPDIR/l.jsonl" "$PFIX/redirect-to?url=%2Flinks%3Fu%3D%252Fbytes%252F1%26u%3D%252Fbytes%252F2"
		[ "$status" -eq 0 ]
		[ "$(jq -r '[.from, .to, .admitted] | join(" ")' "$BATS_TEST_TMPDIR/l.jsonl" | tr '\n' ';')" = "$page $PFIX/bytes/1 true;$page $PFIX/bytes/2 true;" ]
		[ "$(jq -r 'select(.depth == 1) | .parent' <<<"$output" | sort -u)" = "$page" ]
		# Without --depth, --links-out parses the pages: their links, not followed.
		run "$CRAWL" --mode=$m --format=jsonl --links-out "$BATS_TEST_TMPDIR/l.jsonl" "$page" "$PFIX/bytes/3"
		[ "$status" -eq 0 ]
		[ "$(jq -r '[.to, .admitted, .reason] | join(" ")' "$BATS_TEST_TMPDIR/l.jsonl" | tr '\n' ';')" = "$PFIX/bytes/1 false depth;$PFIX/bytes/2 false depth;" ]
		[ "$(jq -r 'select(.url) | .links' <<<"$output" | tr '\n' ' ')" = "2 0 " ]
	done
}

# bats test_tags=models
@test "--links-out: a graph's every link, as many lines as the rows' links, in every model" {
	for m in $MODES; do
		start_private_fixture
		run "$CRAWL" --mode=$m --depth 2 --format=jsonl --links-out "$BATS_TEST_TMPDIR/l.jsonl" "$PFIX/graph/40/3/"
		[ "$status" -eq 0 ]
		n=$(jq -s 'map(select(.url) | .links) | add' <<<"$output")
		[ "$n" -eq "$(wc -l <"$BATS_TEST_TMPDIR/l.jsonl")" ]
		# 13 pages: 12 links admitted, each page fetched once; the rest seen or at depth.
		[ "$(jq -r 'select(.admitted) | .to' "$BATS_TEST_TMPDIR/l.jsonl" | sort | uniq | wc -l)" -eq 12 ]
		[ "$(jq -c 'select(.admitted)' "$BATS_TEST_TMPDIR/l.jsonl" | wc -l)" -eq 12 ]
		[ "$(jq -r 'select(.admitted | not) | .reason' "$BATS_TEST_TMPDIR/l.jsonl" | sort | uniq -c | awk '{ print $2 "=" $1 }' | tr '\n' ' ')" = "depth=$(jq -s 'map(select(.url and .depth == 2) | .links) | add' <<<"$output") seen=$((n - 12 - $(jq -s 'map(select(.url and .depth == 2) | .links) | add' <<<"$output"))) " ]
		# Each found page's parent is a page one hop up that links to it.
		jq -s -e 'map(select(.url)) as $r | ($r | map(select(.depth > 0)) | length) == 12 and
			($r | all(.depth == 0 or (.parent as $p | .depth as $d | $r | any(.final_url == $p and .depth == $d - 1))))' <<<"$output"
		stop_private_fixture
	done
}

# bats test_tags=models
@test "following links, a redirect is a link: its target's robots.txt decides, and the target has a row of its own, in every model" {
	start_private_fixture
	secret="$PFIX/site/private/secret.html"
	to=$(jq -rn --arg u "$secret" '$u | @uri')
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl "$PFIX/redirect-to?url=$to" "$PFIX/redirect/1"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		# The redirects' own rows (302, nothing followed), and the one page
		# a redirect named that robots.txt allows.
		[ "$(jq -c 'select(.url) | [.url, .status, .redirects, .depth]' <<<"$output" | sort | tr '\n' ' ')" = \
			"[\"$PFIX/redirect-to?url=$to\",302,0,0] [\"$PFIX/redirect/0\",200,0,0] [\"$PFIX/redirect/1\",302,0,0] " ]
		[ "$(tail -1 <<<"$output" | jq .robots_blocked)" -eq 1 ]
	done
	[ "$(curl -s "$PFIX/stats?path=/site/private/secret.html" | jq .count)" -eq 0 ]
}

# bats test_tags=models
@test "following links, a redirect to another host waits for that host's Crawl-delay, in every model" {
	alone
	# Alone: the fixture stamps an arrival as it reads the request, and a
	# loaded machine had it read the first 75 ms late, the gap that much short.
	for m in $MODES; do
		start_private_fixture --robots /robots/delay/400
		other="http://localhost:${PFIX##*:}"
		run "$CRAWL" --mode=$m --depth 1 --span-hosts --format=jsonl "$PFIX/bytes/1" "$other/redirect-to?url=$PFIX/bytes/2"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(jq -r "select(.url == \"$PFIX/bytes/2\") | .status" <<<"$output")" = 200 ]
		# The two requests to 127.0.0.1, as the server saw them come.
		curl -s "$PFIX/stats?arrivals" | jq -rs 'map(select(.path | test("^/bytes/[12]$")) | .t) |
			(.[1] - .[0]) | if . < 0 then -. else . end | . >= 0.35' | grep -qx true
		stop_private_fixture
	done
}

# bats test_tags=models
@test "--links-out that cannot be written: a directory is a usage error, a full disk exit 23, as -o" {
	run "$CRAWL" --depth 1 --links-out "$BATS_TEST_TMPDIR" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --links-out: cannot write '$BATS_TEST_TMPDIR': Is a directory" ]
	run "$CRAWL" --depth 1 --links-out "$BATS_TEST_TMPDIR/no/such/dir/l.jsonl" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --links-out: cannot write '$BATS_TEST_TMPDIR/no/such/dir/l.jsonl': No such file or directory" ]
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl --links-out /dev/full "$FIXTURE/graph/40/3/"
		[ "$status" -eq 23 ]
		grep -qx "crawl: writing /dev/full: No space left on device" <<<"$output"
	done
	run "$CRAWL" --mode=all --links-out "$BATS_TEST_TMPDIR/l.jsonl" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	grep -q -- "^crawl: --links-out: one model at a time" <<<"$output"
}

# bats test_tags=models
@test "following links, --max-redirs bounds a chain of redirects, each a row; a refused scheme fails as without links" {
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --max-redirs 2 --format=jsonl "$FIXTURE/redirect/5" \
			"$FIXTURE/redirect-to?url=file%3A%2F%2F%2Fetc%2Fpasswd"
		echo "$m: $output"
		[ "$status" -eq 1 ]
		[ "$(jq -c 'select(.url) | [.url, .status, .fail]' <<<"$output" | sort | tr '\n' ' ')" = \
			"[\"$FIXTURE/redirect-to?url=file%3A%2F%2F%2Fetc%2Fpasswd\",302,\"protocol\"] [\"$FIXTURE/redirect/3\",302,\"redirects\"] [\"$FIXTURE/redirect/4\",302,null] [\"$FIXTURE/redirect/5\",302,null] " ]
		[ "$(jq -r "select(.url == \"$FIXTURE/redirect/3\") | .error" <<<"$output")" = "Maximum (2) redirects followed" ]
		[ "$(jq -r 'select(.fail == "protocol") | [.error, .redirects, .final_url] | join("|")' <<<"$output")" = \
			"redirect refused, only http and https are followed (file)|1|file:///etc/passwd" ]
	done
}
