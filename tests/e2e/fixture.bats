#!/usr/bin/env bats
# The fixture server itself: every endpoint's status, headers and exact bytes,
# connection handling (keep-alive, pipelining, malformed input, misbehaviour)
# and the /stats counters the other tests rely on.

load helpers

LINE=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.

# pattern N: the body /bytes/N must have.
pattern() {
	yes "$LINE" | head -c "$1"
}

# raw REQUEST: sends bytes (printf format) on a fresh connection to the shared
# server and prints everything it answers until it closes (2 s at most),
# then "<EOF>" (bats' run would strip trailing newlines). Uses fd 7: fd 3 is
# bats' own.
raw() {
	exec 7<>"/dev/tcp/127.0.0.1/$FIXTURE_PORT"
	printf "$1" >&7
	timeout 2 cat <&7
	exec 7<&-
	printf '<EOF>'
}

# header NAME: the value of header NAME in $output (from curl -si / -sI).
header() {
	printf '%s\n' "$output" | tr -d '\r' | sed -n "s/^$1: //Ip" | head -1
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

@test "--help lists every endpoint" {
	run "$FIXTURE_SERVER" --help
	[ "$status" -eq 0 ]
	for ep in /delay/ /bytes/ /chunked/ /gzip/ /br/ /zstd/ /status/ /redirect/ /redirect-loop \
		/redirect-to /headers /graph/ /site/ /robots.txt /hang /reset /trickle/ \
		/garbage /slow/ /robots/bom /robots/cr /robots/huge/ /robots/delay/ /robots/sitemap/ \
		/sitemap/urls/ /sitemap/index/ /sitemap/big/ /sitemap.xml /deep/ /wide/ /big-header/ /lengths/ /stats; do
		[[ "$output" == *"$ep"* ]] || { echo "missing $ep"; return 1; }
	done
	[[ "$output" == *"same 100-byte HTML body"* ]]
}

@test "an unknown flag exits 2 naming the flag" {
	run "$FIXTURE_SERVER" --frobnicate
	[ "$status" -eq 2 ]
	[[ "$output" == *"--frobnicate"* ]]
	run "$FIXTURE_SERVER" --port nope
	[ "$status" -eq 2 ]
	[[ "$output" == *"--port"* ]]
	run "$FIXTURE_SERVER" --port
	[ "$status" -eq 2 ]
	run "$FIXTURE_SERVER" --root /nonexistent/dir
	[ "$status" -eq 2 ]
	[[ "$output" == *"--root"* ]]
}

@test "--port 0 prints the port it picked and SIGTERM stops it with status 0" {
	"$FIXTURE_SERVER" --port 0 --port-file "$BATS_TEST_TMPDIR/port" >"$BATS_TEST_TMPDIR/out" 3>&- &
	pid=$!
	for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/out" ] && break; sleep 0.05; done
	port=$(cat "$BATS_TEST_TMPDIR/port")
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "listening on http://127.0.0.1:$port" ]
	[ "$(curl -s "http://127.0.0.1:$port/bytes/3")" = abc ]
	kill -TERM "$pid"
	wait "$pid"
}

@test "SIGINT stops it with status 0 while connections are open" {
	start_private_fixture
	curl -s -m 5 "$PFIX/hang" &
	wait_until 5 requested "$PFIX" /hang
	kill -INT "$PFIX_PID"
	wait "$PFIX_PID"
	PFIX_PID=
}

@test "/bytes/N sends exactly N bytes of the pattern with Content-Length N" {
	run curl -si "$FIXTURE/bytes/1000"
	[ "$status" -eq 0 ]
	[[ "$output" == "HTTP/1.1 200 OK"* ]]
	[ "$(header Content-Length)" = 1000 ]
	[ "$(header Content-Type)" = "text/plain; charset=utf-8" ]
	cmp <(curl -s "$FIXTURE/bytes/1000") <(pattern 1000)
	cmp <(curl -s "$FIXTURE/bytes/1") <(pattern 1)
	[ "$(curl -s "$FIXTURE/bytes/0" | wc -c)" -eq 0 ]
}

@test "/bytes streams a large body without holding it in memory" {
	start_private_fixture
	n=$((200 * 1024 * 1024))
	[ "$(curl -s "$PFIX/bytes/$n" | sha1sum)" = "$(pattern $n | sha1sum)" ]
	rss=$(awk '/^VmHWM/ { print $2 }' "/proc/$PFIX_PID/status")
	echo "peak RSS ${rss} kB"
	[ "$rss" -lt 65536 ]
}

@test "/chunked/N is chunked and decodes to the same bytes as /bytes/N" {
	run curl -si "$FIXTURE/chunked/10"
	[ "$(header Transfer-Encoding)" = chunked ]
	[ -z "$(header Content-Length)" ]
	for n in 0 1 65536 300000; do
		cmp <(curl -s "$FIXTURE/chunked/$n") <(pattern "$n")
	done
	# the framing on the wire, exactly
	run raw 'GET /chunked/5 HTTP/1.1\r\nConnection: close\r\n\r\n'
	[[ "$output" == *$'\r\n\r\n5\r\nabcde\r\n0\r\n\r\n<EOF>' ]]
}

@test "/gzip/N is gzip when accepted, plain otherwise, same bytes either way" {
	run curl -si -H 'Accept-Encoding: gzip' "$FIXTURE/gzip/100000" -o /dev/null -D -
	[ "$(header Content-Encoding)" = gzip ]
	[ "$(header Transfer-Encoding)" = chunked ]
	cmp <(curl -s --compressed "$FIXTURE/gzip/100000") <(pattern 100000)
	cmp <(curl -s -H 'Accept-Encoding: gzip' "$FIXTURE/gzip/3000000" | gzip -dc) <(pattern 3000000)
	cmp <(curl -s -H 'Accept-Encoding: gzip' "$FIXTURE/gzip/0" | gzip -dc) /dev/null
	# highly compressible: a decompression bomb in miniature
	size=$(curl -s -H 'Accept-Encoding: gzip' -o /dev/null -w '%{size_download}' "$FIXTURE/gzip/10000000")
	[ "$size" -lt 100000 ]

	run curl -si "$FIXTURE/gzip/100"
	[ -z "$(header Content-Encoding)" ]
	[ "$(header Content-Length)" = 100 ]
	run curl -si -H 'Accept-Encoding: gzip;q=0, identity' "$FIXTURE/gzip/100"
	[ -z "$(header Content-Encoding)" ]
	cmp <(curl -s "$FIXTURE/gzip/5000") <(pattern 5000)
}

@test "/br/N and /zstd/N are brotli and zstd when accepted, plain otherwise, same bytes either way" {
	for e in br zstd; do
		run curl -si -H "Accept-Encoding: $e" "$FIXTURE/$e/100000" -o /dev/null -D -
		[ "$(header Content-Encoding)" = $e ]
		[ "$(header Transfer-Encoding)" = chunked ]
		for n in 0 1 100000 3000000; do
			cmp <(curl -s --compressed -H "Accept-Encoding: $e" "$FIXTURE/$e/$n") <(pattern "$n")
		done
		size=$(curl -s -H "Accept-Encoding: $e" -o /dev/null -w '%{size_download}' "$FIXTURE/$e/10000000")
		[ "$size" -lt 100000 ]
		run curl -si -H 'Accept-Encoding: gzip' "$FIXTURE/$e/100"
		[ -z "$(header Content-Encoding)" ]
		[ "$(header Content-Length)" = 100 ]
		run curl -si -H "Accept-Encoding: $e;q=0, identity" "$FIXTURE/$e/100"
		[ -z "$(header Content-Encoding)" ]
		# HTTP/1.0: the end of the connection ends the body
		cmp <(curl -s --http1.0 --compressed -H "Accept-Encoding: $e" "$FIXTURE/$e/5000") <(pattern 5000)
	done
	# an independent decoder: zstd(1)
	cmp <(curl -s -H 'Accept-Encoding: zstd' "$FIXTURE/zstd/3000000" | zstd -dc) <(pattern 3000000)
}

@test "HEAD sends the headers of GET and no body" {
	run curl -sI "$FIXTURE/bytes/12345"
	[[ "$output" == "HTTP/1.1 200 OK"* ]]
	[ "$(header Content-Length)" = 12345 ]
	# a second request on the same connection still works after HEAD
	run raw 'HEAD /bytes/7 HTTP/1.1\r\n\r\nGET /bytes/2 HTTP/1.1\r\nConnection: close\r\n\r\n'
	[[ "$output" == *$'Content-Length: 7\r\nConnection: keep-alive\r\n\r\nHTTP/1.1 200 OK'* ]]
	[[ "$output" == *$'\r\n\r\nab<EOF>' ]]
}

@test "/delay/MS answers after MS ms with the same 100-byte body for any path" {
	t0=$(now_ms)
	run curl -si "$FIXTURE/delay/300"
	t1=$(now_ms)
	[[ "$output" == "HTTP/1.1 200 OK"* ]]
	[ "$(header Content-Length)" = 100 ]
	[ "$(header Content-Type)" = "text/html; charset=utf-8" ]
	[ $((t1 - t0)) -ge 300 ]
	[ $((t1 - t0)) -lt 2000 ]
	a=$(curl -s "$FIXTURE/delay/0" | sha1sum)
	b=$(curl -s "$FIXTURE/delay/10/some/other/page.html" | sha1sum)
	[ "$a" = "$b" ]
	[ "$(curl -s "$FIXTURE/delay/0/x" | wc -c)" -eq 100 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/delay/abc")" = 404 ]
}

@test "/slow/MS/PATH answers as /PATH after MS ms: a site page, a failure, nested delays added" {
	t=$(curl -s -o "$BATS_TEST_TMPDIR/page" -w '%{http_code} %{time_total}' "$FIXTURE/slow/300/site/cinema/film/3.html")
	echo "$t"
	awk -v t="${t#* }" 'BEGIN { exit !(t >= 0.3 && t < 2) }'
	[ "${t% *}" = 200 ]
	cmp "$BATS_TEST_TMPDIR/page" testdata/site/cinema/film/3.html
	t=$(curl -s -o "$BATS_TEST_TMPDIR/page" -w '%{http_code} %{time_total}' "$FIXTURE/slow/200/slow/100/status/500")
	awk -v t="${t#* }" 'BEGIN { exit !(t >= 0.3 && t < 2) }'
	[ "${t% *}" = 500 ]
	[ "$(cat "$BATS_TEST_TMPDIR/page")" = "500 Internal Server Error" ]
	# Counted once, under the path as sent.
	[ "$(curl -s "$FIXTURE/stats?path=/slow/300/site/cinema/film/3.html")" = '{"path":"/slow/300/site/cinema/film/3.html","count":1}' ]
	# The request is answered as sent: its query, its HEAD, its Connection: close.
	[ "$(curl -s "$FIXTURE/slow/10/site/cinema/film/1.html?charset=latin1" -o /dev/null -w '%{content_type}')" = "text/html; charset=latin1" ]
	run curl -sI "$FIXTURE/slow/10/bytes/7"
	[ "$(header Content-Length)" = 7 ]
	run raw 'GET /slow/100/bytes/3 HTTP/1.1\r\n\r\nGET /slow/50/bytes/2 HTTP/1.1\r\nConnection: close\r\n\r\n'
	[ "$(grep -o 'HTTP/1.1 200 OK' <<<"$output" | wc -l)" -eq 2 ]
	[[ "$output" == *$'\r\n\r\nabcHTTP/1.1 200 OK'* ]]
	[[ "$output" == *$'Connection: close\r\n\r\nab<EOF>' ]]
	for bad in /slow/abc/bytes/1 /slow/100 /slow/100/slow/x/bytes/1; do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE$bad")" = 404 ]
	done
}

@test "/delay runs concurrently: 100 parallel /delay/500 finish in under 3 s" {
	args=()
	for i in $(seq 100); do args+=(-o /dev/null "$FIXTURE/delay/500/$i"); done
	t0=$(now_ms)
	run curl -s --parallel --parallel-immediate --parallel-max 100 -w '%{http_code}\n' "${args[@]}"
	t1=$(now_ms)
	echo "took $((t1 - t0)) ms"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^200$' <<<"$output")" -eq 100 ]
	[ $((t1 - t0)) -lt 3000 ]
}

@test "/status/CODE answers CODE with a short text body" {
	for code in 200 201 302 400 404 418 429 500 503 599; do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/status/$code")" = "$code" ]
	done
	[ "$(curl -s "$FIXTURE/status/503")" = "503 Service Unavailable" ]
	[ "$(curl -s "$FIXTURE/status/599")" = "599 Unknown" ]
	run curl -si "$FIXTURE/status/204"
	[[ "$output" == "HTTP/1.1 204 No Content"* ]]
	[ -z "$(header Content-Length)" ]
	# 1xx is interim: the final answer is 200
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/status/103")" = 200 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/status/101")" = 400 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/status/99")" = 404 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/status/600")" = 404 ]
}

@test "/redirect/N is a chain of N 302s ending in 200" {
	run curl -si "$FIXTURE/redirect/3"
	[[ "$output" == "HTTP/1.1 302 Found"* ]]
	[ "$(header Location)" = /redirect/2 ]
	run curl -sL -w '\n%{num_redirects} %{http_code}' "$FIXTURE/redirect/3"
	[ "$output" = $'end of redirect chain\n\n3 200' ]
}

@test "/redirect-loop never ends" {
	run curl -si "$FIXTURE/redirect-loop"
	[ "$(header Location)" = /redirect-loop ]
	run curl -sL --max-redirs 5 "$FIXTURE/redirect-loop"
	[ "$status" -eq 47 ]
}

@test "/redirect-to?url= redirects to any percent-decoded URL" {
	run curl -si "$FIXTURE/redirect-to?url=file%3A%2F%2F%2Fetc%2Fpasswd"
	[[ "$output" == "HTTP/1.1 302 Found"* ]]
	[ "$(header Location)" = file:///etc/passwd ]
	run curl -si "$FIXTURE/redirect-to?x=1&url=http://127.0.0.1:1/a%20b"
	[ "$(header Location)" = "http://127.0.0.1:1/a b" ]
	# no header injection through the URL
	run curl -si "$FIXTURE/redirect-to?url=%2Fa%0d%0aSet-Cookie:%20x=1"
	[[ "$output" == "HTTP/1.1 400"* ]]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/redirect-to")" = 400 ]
}

@test "/headers echoes the request's header lines" {
	run curl -s -A 'crawl-test/1.0' -H 'X-Fixture: one two' "$FIXTURE/headers"
	[ "$status" -eq 0 ]
	grep -qx 'User-Agent: crawl-test/1.0' <<<"$output"
	grep -qx 'X-Fixture: one two' <<<"$output"
	grep -qx "Host: 127.0.0.1:$FIXTURE_PORT" <<<"$output"
	run raw 'GET /headers HTTP/1.1\r\nA:1\r\nbB:  two  \r\nConnection: close\r\n\r\n'
	[[ "$output" == *$'Content-Length: 31\r\nConnection: close\r\n\r\nA: 1\nbB: two\nConnection: close\n<EOF>' ]]
}

@test "/graph/N/F/I links to its children, parent, itself and a relative child" {
	run curl -s "$FIXTURE/graph/13/3/1"
	[ "$status" -eq 0 ]
	links=$(grep -o 'href="[^"]*"' <<<"$output" | sed 's/href="//; s/"$//')
	[ "$links" = "/graph/13/3/4
/graph/13/3/5
/graph/13/3/6
/graph/13/3/
/graph/13/3/1#top
../3/4
mailto:page-1@example.invalid
javascript:void(0)" ]
	# page 0, no parent
	links=$(curl -s "$FIXTURE/graph/13/3/" | grep -o 'href="[^"]*"' | sed 's/href="//; s/"$//')
	[ "$links" = "/graph/13/3/1
/graph/13/3/2
/graph/13/3/3
/graph/13/3/#top
../3/1
mailto:page-0@example.invalid
javascript:void(0)" ]
	cmp <(curl -s "$FIXTURE/graph/13/3/") <(curl -s "$FIXTURE/graph/13/3/0")
	# page 4's children 13..15 are out of range for N=13: a leaf
	run curl -s "$FIXTURE/graph/13/3/4"
	! grep -q child <<<"$output"
	grep -q 'href="/graph/13/3/1">parent' <<<"$output"
	# children that exist only in part
	[ "$(curl -s "$FIXTURE/graph/12/3/3" | grep -c '<li>')" -eq 2 ]
	run curl -si "$FIXTURE/graph/13/3/1"
	[ "$(header Content-Type)" = "text/html; charset=utf-8" ]
	[ "$(header Content-Length)" -eq "$(curl -s "$FIXTURE/graph/13/3/1" | wc -c)" ]
	for bad in 13/3/13 0/3/0 13/3/x 13/3 13/x/1; do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/graph/$bad")" = 404 ]
	done
}

@test "/graph: depth d from page 0 reaches exactly min(N, 1+F+...+F^d) pages" {
	# a breadth-first walk with curl, following every http link
	declare -A seen=(["/graph/40/3/"]=1)
	level=("/graph/40/3/")
	for depth in 1 2 3; do
		next=()
		for p in "${level[@]}"; do
			dir=${p%/*}/
			for l in $(curl -s "$FIXTURE$p" | grep -o 'href="[^"]*"' | sed 's/href="//; s/"$//; s/#.*//'); do
				case $l in mailto:*|javascript:*) continue ;; ../*) l=$(realpath -m "$dir$l") ;; esac
				[ -n "${seen[$l]:-}" ] && continue
				seen[$l]=1
				next+=("$l")
			done
		done
		level=("${next[@]}")
		expected=$(( (3 ** (depth + 1) - 1) / 2 ))
		[ "$expected" -gt 40 ] && expected=40
		echo "depth $depth: ${#seen[@]} pages, expected $expected"
		[ "${#seen[@]}" -eq "$expected" ]
	done
}

@test "/site/ serves static files with their content type" {
	run curl -si "$FIXTURE/site/"
	[[ "$output" == "HTTP/1.1 200 OK"* ]]
	[ "$(header Content-Type)" = "text/html; charset=utf-8" ]
	cmp <(curl -s "$FIXTURE/site/") testdata/site/index.html
	cmp <(curl -s "$FIXTURE/site/index.html") testdata/site/index.html
	cmp <(curl -s "$FIXTURE/site/private/secret.html") testdata/site/private/secret.html
	run curl -sI "$FIXTURE/site/style.css"
	[ "$(header Content-Type)" = "text/css; charset=utf-8" ]
	[ "$(header Content-Length)" = "$(wc -c <testdata/site/style.css)" ]
	run curl -si "$FIXTURE/site"
	[[ "$output" == "HTTP/1.1 301"* ]]
	[ "$(header Location)" = /site/ ]
	run curl -si "$FIXTURE/site/private"
	[ "$(header Location)" = /site/private/ ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/site/nope.html")" = 404 ]
}

@test "/site/PATH?charset=NAME sets a text file's charset" {
	run curl -sI "$FIXTURE/site/cp1251.html?charset=windows-1251"
	[ "$(header Content-Type)" = "text/html; charset=windows-1251" ]
	run curl -sI "$FIXTURE/site/style.css?x=1&charset=latin1"
	[ "$(header Content-Type)" = "text/css; charset=latin1" ]
	cmp <(curl -s "$FIXTURE/site/cp1251.html?charset=windows-1251") testdata/site/cp1251.html
	run curl -sI "$FIXTURE/site/robots.txt?charset=x"
	[ "$(header Content-Type)" = "text/plain; charset=x" ]
	for bad in '' 'a%20b' 'a;b' "$(printf 'x%.0s' $(seq 41))"; do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/site/index.html?charset=$bad")" = 400 ]
	done
}

@test "/site/ refuses paths that escape the root" {
	for p in '/site/../../../../etc/passwd' '/site/%2e%2e/%2e%2e/%2e%2e/etc/passwd' \
		'/site/..%2f..%2f..%2fetc/passwd' '/site/./index.html' '/site/%00'; do
		run curl -s --path-as-is -w '\n%{http_code}' "$FIXTURE$p"
		echo "$p -> $output"
		[ "${output##*$'\n'}" = 404 ]
		! grep -q 'root:' <<<"$output"
	done
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/site/%zz")" = 400 ]
}

@test "/robots.txt serves ROOT/robots.txt, or 404 when there is none" {
	run curl -si "$FIXTURE/robots.txt"
	[[ "$output" == "HTTP/1.1 200 OK"* ]]
	[ "$(header Content-Type)" = "text/plain; charset=utf-8" ]
	cmp <(curl -s "$FIXTURE/robots.txt") testdata/site/robots.txt
	grep -qx 'Disallow: /site/private/' testdata/site/robots.txt
	mkdir "$BATS_TEST_TMPDIR/empty"
	start_private_fixture --root "$BATS_TEST_TMPDIR/empty"
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$PFIX/robots.txt")" = 404 ]
}

@test "--robots PATH answers /robots.txt as PATH, and the /robots/ variants" {
	start_private_fixture --robots /status/503
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$PFIX/robots.txt")" = 503 ]
	[ "$(curl -s "$PFIX/stats?path=/robots.txt" | jq .count)" -eq 1 ]
	stop_private_fixture
	start_private_fixture --robots '/redirect-to?url=/bytes/3'
	[ "$(curl -sL "$PFIX/robots.txt")" = abc ]
	stop_private_fixture
	cmp <(curl -s "$FIXTURE/robots/bom") <(printf '\357\273\277'; cat testdata/site/robots.txt)
	cmp <(curl -s "$FIXTURE/robots/cr") <(tr '\n' '\r' <testdata/site/robots.txt)
	cmp <(curl -s "$FIXTURE/robots/huge/1000") <(cat testdata/site/robots.txt; curl -s "$FIXTURE/bytes/961")
	[ "$(curl -s "$FIXTURE/robots/huge/104857600" | wc -c)" -eq 104857600 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/robots/huge/38")" = 404 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/robots/other")" = 404 ]
	run "$FIXTURE_SERVER" --robots /robots.txt
	[ "$status" -eq 2 ]
	[[ "$output" == *"--robots"* ]]
}

@test "/deep/N nests a link N <div>s deep, /wide/N is N links" {
	run curl -s "$FIXTURE/deep/3"
	[[ "$output" == *'<div><div><div><a href="/bytes/1">deep</a></div></div></div>'* ]]
	[[ "$output" == *'<a href="/bytes/2">shallow</a>'* ]]
	[ "$(curl -s "$FIXTURE/deep/1000" | grep -o '<div>' | wc -l)" -eq 1000 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/deep/100001")" = 404 ]
	[ "$(curl -s "$FIXTURE/wide/500" | grep -c '^<a href="/bytes/[0-9]*">[0-9]*</a>$')" -eq 500 ]
	curl -s "$FIXTURE/wide/500" | grep -qx '<a href="/bytes/500">500</a>'
}

@test "/big-header/N sends a header line of N bytes of value" {
	run curl -s -D - -o /dev/null "$FIXTURE/big-header/5"
	grep -q $'^X-Big: aaaaa\r$' <<<"$output"
	# curl refuses a header line over 100 KiB, as crawl's libcurl does.
	run curl -s -o /dev/null "$FIXTURE/big-header/10485760"
	[ "$status" -ne 0 ]
}

@test "/lengths/V/V sends one Content-Length line per segment and the longest body" {
	run curl -s -D - -o "$BATS_TEST_TMPDIR/body" "$FIXTURE/lengths/5/7,7"
	[ "$(grep -c '^Content-Length: ' <<<"$output")" -eq 2 ]
	grep -q $'^Content-Length: 5\r$' <<<"$output"
	grep -q $'^Content-Length: 7,7\r$' <<<"$output"
	# curl 7.88 takes the last line's first number: 7 of the 7 bytes sent.
	[ "$(cat "$BATS_TEST_TMPDIR/body")" = abcdefg ]
	for bad in x 5/x 5/ 123456789012345678901234567890123 4097; do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/lengths/$bad")" = 404 ]
	done
}

@test "unknown paths get 404, other methods 405" {
	run curl -si "$FIXTURE/no/such/thing"
	[[ "$output" == "HTTP/1.1 404 Not Found"* ]]
	[ "$(curl -s "$FIXTURE/no/such/thing")" = "not found" ]
	run curl -si -X POST -d 'x=1' "$FIXTURE/bytes/10"
	[[ "$output" == "HTTP/1.1 405"* ]]
	[ "$(header Allow)" = "GET, HEAD" ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$FIXTURE/stats")" = 405 ]
}

@test "keep-alive: one curl fetching 3 URLs is 1 connection and 3 requests" {
	start_private_fixture
	curl -s -o /dev/null -o /dev/null -o /dev/null "$PFIX/bytes/10" "$PFIX/delay/1" "$PFIX/status/404"
	run curl -s "$PFIX/stats"
	echo "$output"
	[ "$(jq .accepted <<<"$output")" -eq 1 ]
	[ "$(jq .requests <<<"$output")" -eq 3 ]
	[ "$(jq .peak_open <<<"$output")" -eq 1 ]
	[ "$(jq .peak_active <<<"$output")" -eq 1 ]
	[ "$(jq .active <<<"$output")" -eq 0 ]
	# reading /stats disturbs nothing
	[ "$(stat_of "$PFIX" requests)" -eq 3 ]
	[ "$(stat_of "$PFIX" accepted)" -eq 1 ]
	curl -s -o /dev/null "$PFIX/bytes/10"
	[ "$(stat_of "$PFIX" accepted)" -eq 2 ]
}

@test "Connection: close is honoured and announced" {
	run curl -si -H 'Connection: close' "$FIXTURE/bytes/3"
	[ "$(header Connection)" = close ]
	run curl -si "$FIXTURE/bytes/3"
	[ "$(header Connection)" = keep-alive ]
	run raw 'GET /bytes/5 HTTP/1.0\r\n\r\n'
	[[ "$output" == *$'Connection: close\r\n\r\nabcde<EOF>' ]]
	run raw 'GET /chunked/5 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /bytes/1 HTTP/1.0\r\n\r\n'
	[[ "$output" == *$'Content-Length: 5\r\nConnection: keep-alive\r\n\r\nabcdeHTTP/1.1 200 OK'* ]]
	[[ "$output" == *$'Connection: close\r\n\r\na<EOF>' ]]
}

@test "pipelined requests are answered in order" {
	run raw 'GET /delay/100/a HTTP/1.1\r\n\r\nGET /bytes/3 HTTP/1.1\r\n\r\nGET /status/201 HTTP/1.1\r\n\r\nGET /bytes/2 HTTP/1.1\r\nConnection: close\r\n\r\n'
	[ "$(grep -o 'HTTP/1.1 [0-9]*' <<<"$output" | wc -l)" -eq 4 ]
	[[ "$output" == *'delayed response.</p></body></html>'$'\n''HTTP/1.1 200 OK'* ]]
	[[ "$output" == *$'\r\n\r\nabcHTTP/1.1 201 Created'* ]]
	[[ "$output" == *$'\r\n\r\nab<EOF>' ]]
}

@test "a malformed request gets 400 and the connection closes" {
	for req in 'GARBAGE\r\n\r\n' 'GET / HTTP/2.0\r\n\r\n' 'GET /bytes/1 HTTP/1.1\r\nBad Header: x\r\n\r\n' \
		'GET /bytes/1 HTTP/1.1\r\n folded\r\n\r\n' 'GET  / HTTP/1.1\r\n\r\n' 'GET nopath HTTP/1.1\r\n\r\n' \
		'GET /bytes/1 HTTP/1.1\r\nContent-Length: x\r\n\r\n' 'GET /\x01 HTTP/1.1\r\n\r\n'; do
		run raw "$req"
		echo "$req -> ${output%%$'\r'*}"
		[[ "$output" == "HTTP/1.1 400 Bad Request"* ]]
		[[ "$output" == *$'Connection: close\r\n\r\n400 Bad Request\n<EOF>' ]]
	done
}

@test "a request head over 16 KiB gets 431" {
	exec 7<>"/dev/tcp/127.0.0.1/$FIXTURE_PORT"
	{ printf 'GET / HTTP/1.1\r\nX-Big: '; head -c 20000 /dev/zero | tr '\0' a; printf '\r\n\r\n'; } >&7
	run timeout 2 cat <&7
	exec 7<&-
	[[ "$output" == "HTTP/1.1 431 "* ]]
	[[ "$output" == *"Connection: close"* ]]
	# just under the limit is fine
	big=$(head -c 15000 /dev/zero | tr '\0' b)
	[ "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$FIXTURE/bytes/1")" = 200 ]
}

@test "random bytes on many connections do not hurt the server" {
	start_private_fixture
	for i in $(seq 20); do
		exec 7<>"/dev/tcp/127.0.0.1/${PFIX##*:}"
		head -c $((i * 1000)) /dev/urandom >&7 2>/dev/null || true
		exec 7<&-
	done
	exec 7<>"/dev/tcp/127.0.0.1/${PFIX##*:}"
	printf 'GET /bytes/1 HTTP/1.1\r\nContent-Length: 100\r\n\r\n' >&7
	exec 7<&-
	[ "$(curl -s "$PFIX/bytes/4")" = abcd ]
	kill -0 "$PFIX_PID"
}

@test "/reset resets the connection, /garbage is not HTTP, /hang never answers" {
	run curl -s "$FIXTURE/reset"
	[ "$status" -eq 56 ]                  # CURLE_RECV_ERROR: connection reset
	run curl -s "$FIXTURE/garbage"
	[ "$status" -ne 0 ]
	[[ "$(raw 'GET /garbage HTTP/1.1\r\n\r\n')" == GARBAGE* ]]
	t0=$(now_ms)
	run curl -s -m 1 "$FIXTURE/hang"
	t1=$(now_ms)
	[ "$status" -eq 28 ]                  # CURLE_OPERATION_TIMEDOUT
	[ $((t1 - t0)) -ge 900 ]
}

@test "a waiting request counts as active until the client goes away" {
	start_private_fixture
	curl -s -m 5 "$PFIX/hang" &
	c1=$!
	curl -s -m 5 "$PFIX/delay/60000" &
	c2=$!
	for _ in $(seq 40); do [ "$(stat_of "$PFIX" active)" -eq 2 ] && break; sleep 0.05; done
	[ "$(stat_of "$PFIX" active)" -eq 2 ]
	[ "$(stat_of "$PFIX" open)" -eq 2 ]
	kill "$c1" "$c2"
	for _ in $(seq 40); do [ "$(stat_of "$PFIX" open)" -eq 0 ] && break; sleep 0.05; done
	[ "$(stat_of "$PFIX" open)" -eq 0 ]
	[ "$(stat_of "$PFIX" active)" -eq 0 ]
	[ "$(stat_of "$PFIX" peak_active)" -eq 2 ]
}

@test "/trickle/N/MS sends N bytes one every MS ms" {
	t0=$(now_ms)
	run curl -si "$FIXTURE/trickle/5/100"
	t1=$(now_ms)
	[ "$(header Content-Length)" = 5 ]
	[[ "$output" == *$'\r\n\r\nabcde' ]]
	[ $((t1 - t0)) -ge 450 ]
	[ "$(curl -s "$FIXTURE/trickle/3/0")" = abc ]
	run curl -s -m 1 "$FIXTURE/trickle/100/100"
	[ "$status" -eq 28 ]
}

@test "/stats counts concurrent requests and bytes written" {
	start_private_fixture
	urls=()
	for i in $(seq 10); do urls+=("$PFIX/delay/300/$i"); done
	curl -s --parallel --parallel-immediate --parallel-max 10 -o /dev/null "${urls[@]}" >/dev/null
	run curl -s "$PFIX/stats"
	echo "$output"
	[ "$(jq .requests <<<"$output")" -eq 10 ]
	[ "$(jq .peak_active <<<"$output")" -eq 10 ]
	[ "$(jq .peak_open <<<"$output")" -eq 10 ]
	[ "$(jq .active <<<"$output")" -eq 0 ]

	stop_private_fixture
	start_private_fixture
	sizes=$(curl -s -o /dev/null -w '%{size_header} %{size_download}' "$PFIX/bytes/1000")
	[ "$(stat_of "$PFIX" bytes_out)" -eq $(( ${sizes% *} + ${sizes#* } )) ]
}

@test "/stats?path= counts requests for one exact path" {
	start_private_fixture
	curl -s -o /dev/null -o /dev/null -o /dev/null "$PFIX/bytes/7" "$PFIX/bytes/7?x=1" "$PFIX/bytes/8"
	[ "$(curl -s "$PFIX/stats?path=/bytes/7")" = '{"path":"/bytes/7","count":2}' ]
	[ "$(curl -s "$PFIX/stats?path=%2Fbytes%2F8")" = '{"path":"/bytes/8","count":1}' ]
	[ "$(curl -s "$PFIX/stats?path=/site/private/secret.html" | jq .count)" -eq 0 ]
	[ "$(curl -s "$PFIX/stats?path=/stats" | jq .count)" -eq 0 ]
	[ "$(curl -s "$PFIX/stats?path=%22q%22" | jq -r .path)" = '"q"' ]
}

@test "/links?ms=MS answers its page of links after MS ms" {
	start_private_fixture
	t=$(curl -s -o "$BATS_TEST_TMPDIR/page" -w '%{time_total}' "$PFIX/links?u=%2Fa&ms=300&u=%2Fb")
	awk -v t="$t" 'BEGIN { exit !(t >= 0.3 && t < 2) }'
	[ "$(grep -c '<a href' "$BATS_TEST_TMPDIR/page")" -eq 2 ]
	grep -q 'href="/b"' "$BATS_TEST_TMPDIR/page"
}

@test "/stats?arrivals lists every request in order with its time, /stats itself left out" {
	start_private_fixture
	curl -s -o /dev/null "$PFIX/bytes/1"
	curl -s -o /dev/null "$PFIX/stats"
	curl -s -o /dev/null "$PFIX/delay/150/x"
	curl -s -o /dev/null "$PFIX/bytes/2?q=1"
	run curl -s "$PFIX/stats?arrivals"
	[ "$(jq -r .path <<<"$output" | tr '\n' ' ')" = "/bytes/1 /delay/150/x /bytes/2 " ]
	# The third came at least the second's 150 ms after it.
	jq -s -e '.[2].t - .[1].t >= 0.15 and .[0].t > 0 and .[0].t < .[1].t' <<<"$output"
}

@test "/stats?paths lists every requested path with its count, /stats itself left out" {
	start_private_fixture
	curl -s -o /dev/null -o /dev/null -o /dev/null -o /dev/null "$PFIX/bytes/7" "$PFIX/bytes/7?x=1" "$PFIX/bytes/8" "$PFIX/a%22b"
	curl -s -o /dev/null "$PFIX/stats"
	run curl -s "$PFIX/stats?paths"
	[ "$(sort <<<"$output")" = "$(printf '%s\n' '{"path":"/a%22b","count":1}' '{"path":"/bytes/7","count":2}' '{"path":"/bytes/8","count":1}')" ]
}

@test "/header/NAME answers with the value of that request header" {
	run curl -s -H "X-Probe: hello there" "$FIXTURE/header/x-probe"
	[ "$output" = "hello there" ]
	run curl -s -A "agent/9" "$FIXTURE/header/User-Agent"
	[ "$output" = "agent/9" ]
	run curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/header/X-Absent"
	[ "$output" = "404" ]
}

@test "/robots/delay/MS and /robots/sitemap/REST add a Crawl-delay and a Sitemap line" {
	[ "$(curl -s "$FIXTURE/robots/delay/1500")" = "$(printf 'User-agent: *\nCrawl-delay: 1.500\nDisallow: /site/private/')" ]
	[ "$(curl -s "$FIXTURE/robots/sitemap/index/2/3")" = "$(printf 'User-agent: *\nDisallow: /site/private/\nDisallow: /bytes/2$\nSitemap: %s/sitemap/index/2/3' "$FIXTURE")" ]
	[ "$(curl -s "$FIXTURE/robots/sitemap/urls/1/1.xml?host=a.test:1" | tail -1)" = "Sitemap: $FIXTURE/sitemap/urls/1/1.xml?host=a.test:1" ]
}

@test "/sitemap/ serves urlsets, indexes and gzip files of known URLs" {
	[ "$(curl -s "$FIXTURE/sitemap/urls/2/7.xml" | grep -o '<loc>[^<]*</loc>' | tr '\n' ' ')" = "<loc>$FIXTURE/bytes/7</loc> <loc>$FIXTURE/bytes/8</loc> " ]
	[ "$(curl -s "$FIXTURE/sitemap/urls/1/1?host=other.test:8" | grep -o '<loc>[^<]*</loc>')" = "<loc>http://other.test:8/bytes/1</loc>" ]
	# A .xml.gz is a gzip file, not a Content-Encoding.
	[ "$(curl -s -o /dev/null -w '%{content_type}' "$FIXTURE/sitemap/urls/2/7.xml.gz")" = application/gzip ]
	cmp <(curl -s "$FIXTURE/sitemap/urls/2/7.xml.gz" | gzip -dc) <(curl -s "$FIXTURE/sitemap/urls/2/7.xml")
	[ "$(curl -s "$FIXTURE/sitemap/index/3/2" | grep -o '<loc>[^<]*</loc>' | sed 's|.*/sitemap/||; s|</loc>||' | tr '\n' ' ')" = "urls/2/1.xml urls/2/3.xml.gz urls/2/5.xml " ]
	cmp <(curl -s "$FIXTURE/sitemap.xml") <(curl -s "$FIXTURE/sitemap/urls/3/1")
	[ "$(curl -s "$FIXTURE/sitemap/big/1" | wc -c)" -gt 1048576 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$FIXTURE/sitemap/urls/x/1")" = 404 ]
}

@test "/stats counts requests in absolute form as proxied" {
	start_private_fixture
	curl -s -o /dev/null "$PFIX/bytes/1"
	curl -s -o /dev/null -x "$PFIX" "http://elsewhere.test/bytes/2"
	curl -s -o /dev/null -x "$PFIX" "http://elsewhere.test/bytes/3"
	[ "$(stat_of "$PFIX" requests)" -eq 3 ]
	[ "$(stat_of "$PFIX" proxied)" -eq 2 ]
}
