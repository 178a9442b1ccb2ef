#!/usr/bin/env bats
# --warc, --warc-max-size and --cdx: the archive is read back by readers
# crawl has no part in: tests/tools/warc-check.py (Python's standard
# library: gzip members, every digest recomputed), warcio.js (`warcio
# index`, installed by scripts/deps.sh under tests/tools) and wget 1.21's
# own --warc-file on the same crawl of the fixture site.

load helpers

CHECK=$BATS_TEST_DIRNAME/../tools/warc-check.py
WARCIO=$BATS_TEST_DIRNAME/../tools/node_modules/.bin/warcio

setup() {
	fixture_up
	D=$BATS_TEST_TMPDIR
}

# need_warcio: fails the test, saying why, when warcio.js is not installed.
need_warcio() {
	[ -x "$WARCIO" ] || { echo "warcio.js is not installed: run scripts/deps.sh" >&2; return 1; }
}

teardown() {
	if [ -n "${RAW_PID:-}" ]; then kill "$RAW_PID" 2>/dev/null || true; fi
	h2_stop
	stop_fixtures
}

# warc_files MODE STEM: the files a run with --warc STEM.warc.gz wrote.
warc_files() {
	if [ "$1" = procs ]; then ls "$2"-w*.warc.gz; else ls "$2".warc.gz; fi
}

# curl_codings: the content codings this machine's libcurl decodes, as it
# lists them in Accept-Encoding and its errors (curl -V: libz, brotli, zstd).
curl_codings() {
	local f l=
	f=" $(curl -V | sed -n 's/^Features: //p') "
	[[ $f == *" libz "* ]] && l="deflate, gzip"
	[[ $f == *" brotli "* ]] && l="${l:+$l, }br"
	[[ $f == *" zstd "* ]] && l="${l:+$l, }zstd"
	echo "${l:-identity}"
}

# rows: the rows of the JSON lines on standard input without their timings
# and worker (which differ from run to run), keys sorted, in URL order.
rows() {
	jq -Sc 'select(.url) | del(.start_s, .time_dns_s, .time_connect_s, .time_tls_s,
		.time_ttfb_s, .time_total_s, .worker)' | sort
}

# b32sha1: the sha1: base32 digest of standard input.
b32sha1() {
	python3 -c 'import sys,hashlib,base64; print("sha1:" + base64.b32encode(hashlib.sha1(sys.stdin.buffer.read()).digest()).decode())'
}

# bats test_tags=models
@test "--warc writes request and response records that the checker accepts, in every model" {
	for m in $MODES; do
		rm -f "$D"/a*.warc.gz
		run "$CRAWL" --mode=$m --format=jsonl --warc "$D/a.warc.gz" "$FIXTURE/bytes/100" \
			"$FIXTURE/chunked/3000" "$FIXTURE/site/" "$FIXTURE/status/404"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		run python3 "$CHECK" check $(warc_files $m "$D/a")
		echo "$output"
		[ "$status" -eq 0 ]
		# 4 responses, 4 requests, a warcinfo per file
		nfiles=$(warc_files $m "$D/a" | wc -l)
		[ "${lines[-1]}" = "ok: $((8 + nfiles)) records" ]
		[ "$(grep -c ' 200 sha1:' <<<"$output")" -eq 3 ]
		grep -qx "$FIXTURE/status/404 404 sha1:.*" <<<"$output"
		[ "$(grep "^$FIXTURE/bytes/100 " <<<"$output" | cut -d' ' -f3)" = "$(curl -s "$FIXTURE/bytes/100" | b32sha1)" ]
		[ "$(grep "^$FIXTURE/chunked/3000 " <<<"$output" | cut -d' ' -f3)" = "$(curl -s "$FIXTURE/chunked/3000" | b32sha1)" ]
	done
}

@test "warcio.js indexes every record: the same target URIs, in order, and a warcinfo first" {
	need_warcio
	run "$CRAWL" --mode=coro -c 1 -q --warc "$D/a.warc.gz" "$FIXTURE/redirect/2" "$FIXTURE/gzip/1000" "$FIXTURE/site/about.html"
	[ "$status" -eq 0 ]
	run "$WARCIO" index "$D/a.warc.gz" --fields warc-type,warc-target-uri,offset
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r '."warc-type"' <<<"${lines[0]}")" = warcinfo ]
	[ "$(jq -r 'select(."warc-type" == "response") | ."warc-target-uri"' <<<"$output" | tr '\n' ' ')" = \
		"$FIXTURE/redirect/2 $FIXTURE/redirect/1 $FIXTURE/redirect/0 $FIXTURE/gzip/1000 $FIXTURE/site/about.html " ]
	[ "$(jq -r 'select(."warc-type" == "request")' <<<"$output" | jq -s length)" -eq 5 ]
	# warcio's offsets are where the checker finds each gzip member
	run python3 "$CHECK" check "$D/a.warc.gz"
	[ "$status" -eq 0 ]
}

@test "the payload keeps the content coding; the Length column is the decoded length" {
	run "$CRAWL" --mode=seq --format=jsonl --warc "$D/a.warc.gz" "$FIXTURE/gzip/100000"
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.url) | .length' <<<"$output")" -eq 100000 ]
	run python3 "$CHECK" check "$D/a.warc.gz"
	[ "$status" -eq 0 ]
	[ "$(grep "^$FIXTURE/gzip/100000 " <<<"$output" | cut -d' ' -f3)" = \
		"$(curl -s -H 'Accept-Encoding: gzip' "$FIXTURE/gzip/100000" | b32sha1)" ]
	zcat "$D/a.warc.gz" | grep -aqi '^Content-Encoding: gzip'
	# the chunked coding is gone from the payload, and the header says so
	zcat "$D/a.warc.gz" | grep -aqi '^X-Crawl-Original-Transfer-Encoding: chunked'
}

# raw_server FILE: a loopback server of this test's own that answers every
# connection with FILE's bytes and closes it; sets RAW (its base URL).
raw_server() {
	python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[2], "w").write(str(s.getsockname()[1]))
body = open(sys.argv[1], "rb").read()
while True:
    c, _ = s.accept(); c.recv(65536); c.sendall(body); c.close()
' "$1" "$D/raw.port" 3>&- &
	RAW_PID=$!
	for _ in $(seq 100); do [ -s "$D/raw.port" ] && break; sleep 0.05; done
	RAW="http://127.0.0.1:$(cat "$D/raw.port")"
}

# raw_paths DIR: a loopback server of this test's own that answers a
# request for /NAME with the bytes of DIR/NAME (a whole response) and closes
# the connection; sets RAW (its base URL).
raw_paths() {
	python3 -c '
import os, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[2], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept()
    words = c.recv(65536).split(b" ")
    name = os.path.basename(words[1].decode()) if len(words) > 1 else ""
    try:
        c.sendall(open(os.path.join(sys.argv[1], name), "rb").read())
    except OSError:
        c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    c.close()
' "$1" "$D/raw.port" 3>&- &
	RAW_PID=$!
	for _ in $(seq 100); do [ -s "$D/raw.port" ] && break; sleep 0.05; done
	RAW="http://127.0.0.1:$(cat "$D/raw.port")"
}

# response NAME HEADERS: DIR $D/raw/NAME, a 200 response with HEADERS (each
# line ending in \r\n) and standard input as its body.
response() {
	mkdir -p "$D/raw"
	cat >"$D/body"
	{ printf 'HTTP/1.1 200 OK\r\n%bContent-Length: %d\r\nConnection: close\r\n\r\n' "$2" "$(stat -c %s "$D/body")"
	  cat "$D/body"; } >"$D/raw/$1"
}

# bats test_tags=models
@test "--warc offers every content coding libcurl decodes, br and zstd included: payload as sent, Length decoded, in every model" {
	codings=$(curl_codings)
	echo "libcurl decodes: $codings"
	for m in $MODES; do
		rm -f "$D"/a*.warc.gz "$D"/a*.cdx
		run "$CRAWL" --mode=$m --format=jsonl --warc "$D/a.warc.gz" "$FIXTURE/br/100000" \
			"$FIXTURE/zstd/100000" "$FIXTURE/gzip/100000" "$FIXTURE/header/Accept-Encoding"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(jq -c 'select(.url | test("/(br|zstd|gzip)/")) | [.status, .length, .fail]' <<<"$output" | sort -u)" = '[200,100000,null]' ]
		files=$(warc_files $m "$D/a")
		# what was asked for: every coding libcurl decodes, as without --warc
		[ "$(python3 "$CHECK" payload "$FIXTURE/header/Accept-Encoding" $files)" = "$codings" ]
		run python3 "$CHECK" check $files
		echo "$output"
		[ "$status" -eq 0 ]
		for e in br zstd gzip; do
			[[ ", $codings, " == *", $e, "* ]] || continue
			# the payload is the body as the server sent it, in its coding
			[ "$(grep "^$FIXTURE/$e/100000 " <<<"$output" | cut -d' ' -f3)" = \
				"$(curl -s -H "Accept-Encoding: $e" "$FIXTURE/$e/100000" | b32sha1)" ]
			zcat $files | grep -aqx "Content-Encoding: $e"$'\r'
		done
		# and an independent decoder gets the page back from the archive
		if [[ $codings == *zstd* ]]; then
			cmp <(python3 "$CHECK" payload "$FIXTURE/zstd/100000" $files | zstd -dc) <(curl -s "$FIXTURE/bytes/100000")
		fi
	done
	[[ $codings == *br* && $codings == *zstd* ]] || skip "this libcurl decodes only $codings"
}

# bats test_tags=models
@test "a br response forced with -H 'Accept-Encoding: br' is archived as sent and decoded, the row as without --warc" {
	for m in $MODES; do
		rm -f "$D"/a*.warc.gz
		run "$CRAWL" --mode=$m --format=jsonl -H 'Accept-Encoding: br' --warc "$D/a.warc.gz" \
			"$FIXTURE/br/5000" "$FIXTURE/gzip/5000"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		with=$(rows <<<"$output")
		[ "$(jq -c 'select(.url) | [.status, .length, .fail, .error]' <<<"$output" | sort -u)" = '[200,5000,null,null]' ]
		run "$CRAWL" --mode=$m --format=jsonl -H 'Accept-Encoding: br' "$FIXTURE/br/5000" "$FIXTURE/gzip/5000"
		[ "$with" = "$(rows <<<"$output")" ]
		run python3 "$CHECK" check $(warc_files $m "$D/a")
		[ "$status" -eq 0 ]
		[ "$(grep "^$FIXTURE/br/5000 " <<<"$output" | cut -d' ' -f3)" = \
			"$(curl -s -H 'Accept-Encoding: br' "$FIXTURE/br/5000" | b32sha1)" ]
		# gzip was not asked for: sent plain
		[ "$(grep "^$FIXTURE/gzip/5000 " <<<"$output" | cut -d' ' -f3)" = "$(curl -s "$FIXTURE/bytes/5000" | b32sha1)" ]
	done
}

# bats test_tags=models
@test "the rows are those of a crawl without --warc, timings apart: codings, redirects followed, refused and too many, in every model" {
	urls=("$FIXTURE/br/100000" "$FIXTURE/zstd/100000" "$FIXTURE/gzip/100000" "$FIXTURE/bytes/10"
		"$FIXTURE/redirect/2" "$FIXTURE/redirect-to?url=file%3A%2F%2F%2Fetc%2Fpasswd"
		"$FIXTURE/redirect-to?url=ftp%3A%2F%2F127.0.0.1%2Fx" "$FIXTURE/redirect-loop" "$FIXTURE/status/404"
		"$FIXTURE/header/Accept-Encoding" "$FIXTURE/headers")
	for m in $MODES; do
		rm -f "$D"/a*.warc.gz
		run "$CRAWL" --mode=$m --format=jsonl --max-redirs 3 "${urls[@]}"
		[ "$status" -eq 1 ]
		without=$(rows <<<"$output")
		run "$CRAWL" --mode=$m --format=jsonl --max-redirs 3 --warc "$D/a.warc.gz" "${urls[@]}"
		[ "$status" -eq 1 ]
		with=$(rows <<<"$output")
		diff <(echo "$without") <(echo "$with") || { echo "$m: the rows differ (< without, > with --warc)"; return 1; }
		# the refused redirect, as libcurl's own following reports it
		[ "$(jq -c 'select(.line == 6) | [.status, .length, .wire_bytes, .redirects, .final_url, .fail, .error]' <<<"$output")" = \
			'[302,0,0,1,"file:///etc/passwd","protocol","redirect refused, only http and https are followed (file)"]' ]
		[ "$(jq -c 'select(.line == 8) | [.status, .wire_bytes, .redirects, .final_url, .fail]' <<<"$output")" = \
			"[302,0,3,\"$FIXTURE/redirect-loop\",\"redirects\"]" ]
		run python3 "$CHECK" check $(warc_files $m "$D/a")
		[ "$status" -eq 0 ]
	done
}

# bats test_tags=models
@test "content codings as libcurl takes them: stacked, unknown, too many, corrupt, cut short, bytes after the end; rows as without --warc, in every model" {
	printf 'hello\n' | gzip | zstd -q | response stacked 'Content-Encoding: gzip, zstd\r\n'
	printf 'hello\n' | gzip | gzip | response twolines 'Content-Encoding: gzip\r\nContent-Encoding: x-gzip\r\n'
	printf 'abcd' | response unknown 'Content-Encoding: compress\r\n'
	printf 'abcd' | response six 'Content-Encoding: identity, none, identity, identity, identity, identity\r\n'
	printf 'abcd' | response five 'Content-Encoding: identity, none, identity, IDENTITY, identity\r\n'
	{ printf '\037\213\010\000\000\000\000\000\000\003garbage!!!'; } | response badgz 'Content-Encoding: gzip\r\n'
	{ printf 'hello\n' | gzip; printf 'xx'; } | response gzafter 'Content-Encoding: gzip\r\n'
	python3 -c 'import sys, zlib; c = zlib.compressobj(9, zlib.DEFLATED, -15); sys.stdout.buffer.write(c.compress(b"raw deflate\n") + c.flush())' |
		response rawdeflate 'Content-Encoding: deflate\r\n'
	curl -s "$FIXTURE/bytes/100000" | zstd -q | head -c 20 | response zstdcut 'Content-Encoding: zstd\r\n'
	{ printf 'hello\n' | zstd -q; printf 'xx'; } | response zstdafter 'Content-Encoding: zstd\r\n'
	curl -s -H 'Accept-Encoding: br' "$FIXTURE/br/100000" | head -c 40 | response brcut 'Content-Encoding: br\r\n'
	printf 'abcd' | response brbad 'Content-Encoding: br\r\n'
	printf '' | response sixempty 'Content-Encoding: a, b, c, d, e, f\r\n'
	raw_paths "$D/raw"
	names=(stacked twolines unknown six five badgz gzafter rawdeflate zstdcut zstdafter brcut brbad sixempty)
	urls=("${names[@]/#/$RAW/}")
	for m in $MODES; do
		rm -f "$D"/a*.warc.gz
		run "$CRAWL" --mode=$m --format=jsonl "${urls[@]}"
		without=$(rows <<<"$output")
		run "$CRAWL" --mode=$m --format=jsonl --warc "$D/a.warc.gz" "${urls[@]}"
		echo "$m: $output"
		with=$(rows <<<"$output")
		diff <(echo "$without") <(echo "$with") || { echo "$m: the rows differ (< without, > with --warc)"; return 1; }
		got() { jq -r "select(.url == \"$RAW/$1\") | [.length, .fail, .error] | map(tostring) | join(\"|\")" <<<"$output"; }
		[ "$(got stacked)" = "6|null|null" ]
		[ "$(got twolines)" = "6|null|null" ]
		[ "$(got unknown)" = "0|protocol|Unrecognized content encoding type. libcurl understands $(curl_codings) content encodings." ]
		[ "$(got six)" = "0|protocol|Reject response due to more than 5 content encodings" ]
		[ "$(got sixempty)" = "0|protocol|Reject response due to more than 5 content encodings" ]
		[ "$(got five)" = "4|null|null" ]
		[[ "$(got badgz)" == "0|protocol|Error while processing content unencoding: "* ]]
		[ "$(got gzafter)" = "6|other|Failed writing received data to disk/application" ]
		[ "$(got rawdeflate)" = "12|null|null" ]
		[ "$(got zstdafter)" = "6|protocol|Unrecognized or bad HTTP Content or Transfer-Encoding" ]
		[ "$(jq -r "select(.url == \"$RAW/brcut\") | .fail" <<<"$output")" = null ]
		run python3 "$CHECK" check $(warc_files $m "$D/a")
		echo "$output"
		[ "$status" -eq 0 ]
		[ "$(grep -c " 200 sha1:" <<<"$output")" -eq ${#names[@]} ]
	done
}

# bats test_tags=models
@test "redirect responses are recorded, each with its own body, and the row is as without --warc" {
	for m in $MODES; do
		rm -f "$D"/a*.warc.gz
		run "$CRAWL" --mode=$m --format=jsonl --warc "$D/a.warc.gz" "$FIXTURE/redirect/2"
		[ "$status" -eq 0 ]
		row=$(jq -c 'select(.url) | [.status, .length, .redirects, .final_url]' <<<"$output")
		run "$CRAWL" --mode=$m --format=jsonl "$FIXTURE/redirect/2"
		[ "$row" = "$(jq -c 'select(.url) | [.status, .length, .redirects, .final_url]' <<<"$output")" ]
		[ "$row" = "[200,22,2,\"$FIXTURE/redirect/0\"]" ]
		run python3 "$CHECK" check $(warc_files $m "$D/a")
		[ "$status" -eq 0 ]
		[ "$(grep -c "^$FIXTURE/redirect/[12] 302 $(printf '302 Found\n' | b32sha1)$" <<<"$output")" -eq 2 ]
		grep -qx "$FIXTURE/redirect/0 200 $(printf 'end of redirect chain\n' | b32sha1)" <<<"$output"
	done
}

# bats test_tags=models
@test "--max-redirs and refused redirect schemes fail as without --warc, every response recorded" {
	urls=("$FIXTURE/redirect-loop" "$FIXTURE/redirect-to?url=ftp%3A%2F%2F127.0.0.1%2Fx"
		"$FIXTURE/redirect-to?url=file%3A%2F%2F%2Fetc%2Fpasswd" "$FIXTURE/redirect/1")
	for m in $MODES; do
		rm -f "$D"/a*.warc.gz
		run "$CRAWL" --mode=$m --format=jsonl --max-redirs 3 --warc "$D/a.warc.gz" "${urls[@]}"
		echo "$output"
		[ "$status" -eq 1 ]
		[ "$(jq -r "select(.url == \"$FIXTURE/redirect-loop\") | [.fail, .error] | join(\"|\")" <<<"$output")" = \
			"redirects|Maximum (3) redirects followed" ]
		[ "$(jq -r "select(.url | test(\"ftp\")) | [.fail, .error, .redirects, .final_url] | join(\"|\")" <<<"$output")" = \
			"protocol|redirect refused, only http and https are followed (ftp)|1|ftp://127.0.0.1/x" ]
		[ "$(jq -r "select(.url | test(\"file\")) | [.fail, .error, .redirects, .final_url] | join(\"|\")" <<<"$output")" = \
			"protocol|redirect refused, only http and https are followed (file)|1|file:///etc/passwd" ]
		with=$(rows <<<"$output")
		run "$CRAWL" --mode=$m --format=jsonl --max-redirs 3 "${urls[@]}"
		[ "$with" = "$(rows <<<"$output")" ]
		run python3 "$CHECK" check $(warc_files $m "$D/a")
		[ "$status" -eq 0 ]
		[ "$(grep -c "^$FIXTURE/redirect-loop 302 " <<<"$output")" -eq 4 ]
		[ "$(grep -c "redirect-to" <<<"$output")" -eq 2 ]
	done
}

@test "--warc-max-size starts numbered files, each with a warcinfo first" {
	need_warcio
	run "$CRAWL" --mode=seq -q --warc "$D/r.warc.gz" --warc-max-size 1K "$FIXTURE/bytes/2000" \
		"$FIXTURE/bytes/10" "$FIXTURE/bytes/20"
	[ "$status" -eq 0 ]
	[ "$(cd "$D" && ls r*.warc.gz | tr '\n' ' ')" = "r-00000.warc.gz r-00001.warc.gz r-00002.warc.gz " ]
	[ ! -e "$D/r.warc.gz" ]
	for f in "$D"/r-0000*.warc.gz; do
		run python3 "$CHECK" check "$f"
		[ "$status" -eq 0 ]
		[ "${lines[-1]}" = "ok: 3 records" ]
	done
	run "$WARCIO" index "$D/r-00001.warc.gz" --fields warc-type,warc-filename
	[ "$(jq -r '."warc-filename"' <<<"${lines[0]}")" = r-00001.warc.gz ]
}

@test "--cdx writes a sorted CDXJ index whose offsets are the response records' gzip members" {
	run "$CRAWL" --mode=pool -q --warc "$D/a.warc.gz" --cdx "$D/a.cdxj" "$FIXTURE/site/about.html" \
		"$FIXTURE/bytes/10" "$FIXTURE/redirect/1"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$D/a.cdxj")" -eq 4 ]
	LC_ALL=C sort -c "$D/a.cdxj"
	grep -q "^1,0,0,127:$FIXTURE_PORT)/site/about.html [0-9]\{14\} {" "$D/a.cdxj"
	while read -r key stamp json; do
		off=$(jq -r .offset <<<"$json")
		len=$(jq -r .length <<<"$json")
		url=$(jq -r .url <<<"$json")
		head=$(tail -c +$((off + 1)) "$D/a.warc.gz" | head -c "$len" | zcat | tr -d '\r' | head -12)
		grep -qx 'WARC-Type: response' <<<"$head"
		grep -qx "WARC-Target-URI: $url" <<<"$head"
		grep -qx "WARC-Payload-Digest: $(jq -r .digest <<<"$json")" <<<"$head"
	done <"$D/a.cdxj"
	[ "$(jq -r 'select(.url | test("redirect/1")) | .status' < <(cut -d' ' -f3- "$D/a.cdxj"))" = 302 ]
}

@test "procs writes one WARC file per worker process, named so, and one index of the whole crawl" {
	run "$CRAWL" --mode=procs --procs 2 -q --warc "$D/p.warc.gz" --cdx "$D/p.cdxj" \
		"$FIXTURE/bytes/1" "http://localhost:$FIXTURE_PORT/bytes/2" "$FIXTURE/bytes/3" \
		"http://localhost:$FIXTURE_PORT/bytes/4"
	[ "$status" -eq 0 ]
	[ "$(cd "$D" && ls p* | tr '\n' ' ')" = "p-w0.warc.gz p-w1.warc.gz p.cdxj " ]
	run python3 "$CHECK" check "$D"/p-w0.warc.gz "$D"/p-w1.warc.gz
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "ok: 10 records" ]
	[ "$(wc -l <"$D/p.cdxj")" -eq 4 ]
}

# index_points_home DIR CDXJ: every line of the index points, in the WARC
# file it names, at the response record of its URL and digest, or at its
# revisit record when the line's mime says warc/revisit.
index_points_home() {
	local off len url file digest mime head type
	while read -r off len url file digest mime; do
		head=$(tail -c +$((off + 1)) "$1/$file" | head -c "$len" | zcat | tr -d '\r' | head -16)
		type=response
		[ "$mime" = warc/revisit ] && type=revisit
		grep -qx "WARC-Type: $type" <<<"$head" || { echo "$file@$off: not a $type" >&2; return 1; }
		grep -qx "WARC-Target-URI: $url" <<<"$head" || { echo "$file@$off: not $url" >&2; return 1; }
		grep -qx "WARC-Payload-Digest: $digest" <<<"$head" || return 1
	done < <(cut -d' ' -f3- "$2" | jq -r '"\(.offset) \(.length) \(.url) \(.filename) \(.digest) \(.mime)"')
}

@test "procs --cdx: the workers' indexes merged, sorted in the C locale, each line pointing into its own worker's WARC file" {
	urls=()
	for i in $(seq 20); do urls+=("$FIXTURE/bytes/$i" "http://localhost:$FIXTURE_PORT/bytes/$i"); done
	run "$CRAWL" --mode=procs --procs 2 -q --warc "$D/p.warc.gz" --warc-max-size 4K \
		--cdx "$D/p.cdxj" "${urls[@]}"
	[ "$status" -eq 0 ]
	[ ! -e "$D/p-w0.cdxj" ] && [ ! -e "$D/p-w1.cdxj" ]
	[ "$(wc -l <"$D/p.cdxj")" -eq 40 ]
	LC_ALL=C sort -c "$D/p.cdxj"
	[ "$(cut -d' ' -f3- "$D/p.cdxj" | jq -r .url | sort -u | wc -l)" -eq 40 ]
	# Both workers' files, several parts each, are named.
	cut -d' ' -f3- "$D/p.cdxj" | jq -r .filename | sort -u >"$D/named"
	grep -q '^p-w0-0000[0-9]\.warc\.gz$' "$D/named"
	grep -q '^p-w1-0000[0-9]\.warc\.gz$' "$D/named"
	[ "$(wc -l <"$D/named")" -gt 2 ]
	index_points_home "$D" "$D/p.cdxj"
}

@test "procs --cdx with a worker killed mid-crawl: its index is merged too, cut lines dropped, every line pointing home" {
	list=$D/l.txt
	for i in $(seq 24); do echo "$FIXTURE/delay/400/k$i"; echo "http://localhost:$FIXTURE_PORT/delay/400/k$i"; done >"$list"
	"$CRAWL" --mode=procs --procs 2 -c 8 -q --warc "$D/p.warc.gz" --cdx "$D/p.cdxj" "$list" 2>"$D/err" &
	pid=$!
	w=
	for _ in $(seq 100); do
		w=$(pgrep -P $pid | head -1)
		[ -n "$w" ] && break
		sleep 0.05
	done
	wait_until 10 answered "$FIXTURE" 10
	kill -KILL "$w"
	wait $pid
	grep -q "killed by signal 9" "$D/err"
	[ ! -e "$D/p-w0.cdxj" ] && [ ! -e "$D/p-w1.cdxj" ]
	LC_ALL=C sort -c "$D/p.cdxj"
	cut -d' ' -f3- "$D/p.cdxj" | jq -e . >/dev/null
	# The survivor's 24 and more, and what the killed one wrote before it died.
	[ "$(wc -l <"$D/p.cdxj")" -ge 24 ]
	index_points_home "$D" "$D/p.cdxj"
}

@test "wget 1.21 --warc-file on the same crawl of the fixture site gives the same URIs and payload digests" {
	start_private_fixture --root "$PWD/testdata/site"
	cd "$D"
	wget -q -r -l 3 -np -e robots=off --warc-file=wget -P wget-mirror "$PFIX/site/" "$PFIX/site/cinema" || true
	run "$CRAWL" --mode=coro -q --warc "$D/ours.warc.gz" --depth 3 --no-robots \
		--follow '//a/@href|//link/@href|//img/@src' --include "^$PFIX/site/" "$PFIX/site/" "$PFIX/site/cinema"
	[ "$status" -eq 0 ]
	# sets: crawl fetches a redirect's target again when a page links to it
	python3 "$CHECK" list wget.warc.gz | sort -u >wget.txt
	python3 "$CHECK" list ours.warc.gz | sort -u >ours.txt
	cat wget.txt
	diff wget.txt ours.txt
	[ "$(wc -l <ours.txt)" -ge 10 ]
	grep -q "^$PFIX/site/cinema sha1:" ours.txt       # the 301 to the directory
}

# bats test_tags=models
@test "HTTP/2 responses are written in HTTP/1.1 syntax with WARC-Protocol: h2" {
	tls_cert "$D"
	mkdir -p "$D/h2root"
	printf 'hello h2\n' >"$D/h2root/f1.txt"
	h2_start "$D" f1.txt
	for m in $MODES; do
		rm -f "$D"/h*.warc.gz
		run "$CRAWL" --mode=$m -k -q --warc "$D/h.warc.gz" "$H2/f1.txt"
		[ "$status" -eq 0 ]
		run python3 "$CHECK" check $(warc_files $m "$D/h")
		echo "$output"
		[ "$status" -eq 0 ]
		grep -qx "$H2/f1.txt 200 $(printf 'hello h2\n' | b32sha1) h2" <<<"$output"
		zcat $(warc_files $m "$D/h") | tr -d '\r' | grep -aqx 'HTTP/1.1 200 OK'
		zcat $(warc_files $m "$D/h") | tr -d '\r' | grep -aqx 'GET /f1.txt HTTP/1.1'
	done
}

@test "a body larger than memory's bound is spooled, and its record is whole" {
	run /usr/bin/time -f 'rss %M' "$CRAWL" --mode=seq -q --warc "$D/big.warc.gz" "$FIXTURE/bytes/60000000"
	echo "$output"
	[ "$status" -eq 0 ]
	# the 60 MB body is never held: loose bound on the peak resident set
	[ "$(sed -n 's/^rss //p' <<<"$output")" -lt 40000 ]
	run python3 "$CHECK" check "$D/big.warc.gz"
	[ "$status" -eq 0 ]
	[ "$(grep "bytes/60000000" <<<"$output" | cut -d' ' -f3)" = "$(curl -s "$FIXTURE/bytes/60000000" | b32sha1)" ]
}

@test "a body cut by --max-size is recorded with WARC-Truncated: length" {
	run "$CRAWL" --mode=seq --format=jsonl --max-size 1K --warc "$D/a.warc.gz" "$FIXTURE/bytes/5000"
	[ "$status" -eq 1 ]
	[ "$(jq -r 'select(.url) | .fail' <<<"$output")" = too-large ]
	run python3 "$CHECK" check "$D/a.warc.gz"
	[ "$status" -eq 0 ]
	grep -q "bytes/5000 200 sha1:.* truncated:length" <<<"$output"
}

@test "a WARC that cannot be written: failed rows saying why, and exit status 23" {
	[ "$(id -u)" = 0 ] || skip "needs root to mount a small tmpfs"
	mkdir -p "$D/full"
	mount -t tmpfs -o size=64k tmpfs "$D/full" || skip "cannot mount tmpfs"
	# 50 MB of the fixture's text is some 150 KB gzip-compressed. thread
	# stands for the models that write the WARC from the crawl's process,
	# procs for its workers, each writing a file of its own.
	for m in thread procs; do
		rm -f "$D"/full/*
		"$CRAWL" --mode=$m --format=jsonl --warc "$D/full/a.warc.gz" "$FIXTURE/bytes/50000000" \
			"$FIXTURE/bytes/10" >"$D/$m.out" 2>&1 && echo 0 >"$D/$m.rc" || echo $? >"$D/$m.rc"
	done
	umount "$D/full"
	for m in thread procs; do
		echo "$m: $(cat "$D/$m.rc")"; cat "$D/$m.out"
		[ "$(cat "$D/$m.rc")" -eq 23 ]
		grep '^{' "$D/$m.out" | jq -r 'select(.url) | .error' | grep -q "^--warc: .*full/a.*warc.gz: No space left on device$"
		grep -q "^crawl: --warc: .*No space left on device$" "$D/$m.out"
	done
}

# bats test_tags=models
@test "a procs worker that cannot make its WARC file ends at once, named, its URLs done by the others" {
	[[ " $MODES " == *" procs "* ]] || skip "procs is not among the models run"
	for i in $(seq 100); do echo "$FIXTURE/bytes/$i"; done >"$D/l.txt"
	mkdir -p "$D/x-w0.warc.gz"
	run --separate-stderr timeout 30 "$CRAWL" --mode=procs --procs 2 --format=jsonl \
		--warc "$D/x.warc.gz" "$D/l.txt"
	echo "$status: $stderr"
	[ "$status" -eq 23 ]
	grep -qx "crawl: --warc: cannot write $D/x-w0.warc.gz: Is a directory (the archive is not written)" <<<"$stderr"
	[ "$(jq -r 'select(.url) | .url' <<<"$output" | sort -u | wc -l)" -eq 100 ]
	[ "$(jq -c 'select(.url)' <<<"$output" | wc -l)" -eq 100 ]
	# Both workers failing: every URL still gets its one row, failed.
	rm -f "$D/x-w1.warc.gz"
	mkdir -p "$D/x-w1.warc.gz"
	run --separate-stderr timeout 30 "$CRAWL" --mode=procs --procs 2 --format=jsonl \
		--warc "$D/x.warc.gz" "$D/l.txt"
	echo "$status: $stderr"
	[ "$status" -eq 23 ]
	[ "$(jq -c 'select(.url)' <<<"$output" | wc -l)" -eq 100 ]
	[ "$(jq -r 'select(.url) | select(.fail == null)' <<<"$output" | wc -l)" -eq 0 ]
}

# bats test_tags=models
@test "--warc's usage errors: the file name, --cdx or --warc-max-size alone, --mode=all" {
	run "$CRAWL" --warc "$D/a.warc" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --warc: expected a file name ending in .warc.gz, got '$D/a.warc'" ]
	run "$CRAWL" --cdx "$D/a.cdxj" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --cdx: needs --warc" ]
	run "$CRAWL" --warc-max-size 1M "$FIXTURE/bytes/1"
	[ "${lines[0]}" = "crawl: --warc-max-size: needs --warc" ]
	run "$CRAWL" --mode=all --warc "$D/a.warc.gz" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "crawl: --warc: one model at a time"* ]]
	run "$CRAWL" --warc "$D/no/such/dir/a.warc.gz" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --warc: cannot write '$D/no/such/dir/a.warc.gz': No such file or directory" ]
}

# bats test_tags=models
@test "--cdx naming a directory is the index's error, not the WARC file's: at the start, or a procs worker's own file" {
	mkdir "$D/idx" "$D/w.warc.gz"
	run "$CRAWL" --warc "$D/a.warc.gz" --cdx "$D/idx" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --cdx: cannot write '$D/idx': Is a directory" ]
	run "$CRAWL" --warc "$D/w.warc.gz" "$FIXTURE/bytes/1"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "crawl: --warc: cannot write '$D/w.warc.gz': Is a directory" ]
	[[ " $MODES " == *" procs "* ]] || return 0
	mkdir "$D/i-w0.cdxj"
	run --separate-stderr timeout 30 "$CRAWL" --mode=procs --procs 2 -q --warc "$D/p.warc.gz" \
		--cdx "$D/i.cdxj" "$FIXTURE/bytes/1" "$FIXTURE/bytes/2"
	echo "$status: $stderr"
	[ "$status" -eq 23 ]
	grep -qx "crawl: --cdx: cannot write $D/i-w0.cdxj: Is a directory (the archive is not written)" <<<"$stderr"
	[[ "$stderr" != *"--warc: cannot write"* ]]
}

@test "the warcinfo record names the software and the command line" {
	run "$CRAWL" --mode=seq -q --warc "$D/a.warc.gz" "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
	info=$(zcat "$D/a.warc.gz" | tr -d '\r' | sed -n '1,/^date:/p')
	grep -qx 'WARC-Type: warcinfo' <<<"$info"
	grep -qx "software: crawl $("$CRAWL" --version | sed 's/^crawl //')" <<<"$info"
	grep -qx "options: $CRAWL --mode=seq -q --warc $D/a.warc.gz $FIXTURE/bytes/1" <<<"$info"
	grep -qx 'format: WARC File Format 1.1' <<<"$info"
}

# bats test_tags=models
@test "a payload the crawl wrote before is a revisit record referring to its first, the checker and warcio.js reading it, in every model" {
	need_warcio
	for m in $MODES; do
		rm -f "$D"/a*.warc.gz
		run "$CRAWL" --mode=$m -c 1 --format=jsonl --warc "$D/a.warc.gz" "$FIXTURE/site/" \
			"$FIXTURE/site/index.html" "$FIXTURE/gzip/1000" "$FIXTURE/bytes/1000" "$FIXTURE/bytes/1000?again" \
			"$FIXTURE/status/404" "$FIXTURE/status/404?again" "$FIXTURE/bytes/0" "$FIXTURE/bytes/0?again"
		[ "$status" -eq 0 ]
		files=$(warc_files $m "$D/a")
		run python3 "$CHECK" check $files
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "${lines[-1]}" = "ok: $((18 + $(wc -w <<<"$files"))) records" ]
		# /site/index.html is /site/ again; bytes/1000 is gzip/1000 decoded,
		# not as sent: a response of its own, then a revisit of it.
		[ "$(grep revisit: <<<"$output" | cut -d' ' -f1,2,4,5)" = \
			"$FIXTURE/site/index.html 200 revisit:identical $FIXTURE/site/
$FIXTURE/bytes/1000?again 200 revisit:identical $FIXTURE/bytes/1000" ]
		# a 404, an empty body: never a revisit
		[ "$(grep -c "status/404" <<<"$output")" -eq 2 ]
		[ "$(grep -c "bytes/0.* 200 sha1:[A-Z0-9]*$" <<<"$output")" -eq 2 ]
		# warcio.js reads the revisits, their HTTP heads and where they point
		run "$WARCIO" index $files --fields warc-type,warc-target-uri,warc-refers-to-target-uri,http:status
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(."warc-type" == "revisit") | [."warc-target-uri", ."warc-refers-to-target-uri", ."http:status"] | join(" ")' <<<"$output")" = \
			"$FIXTURE/site/index.html $FIXTURE/site/ 200
$FIXTURE/bytes/1000?again $FIXTURE/bytes/1000 200" ]
		[ "$(jq -r 'select(."warc-type" == "response")' <<<"$output" | jq -s length)" -eq 7 ]
	done
}

@test "--cdx indexes revisit records as warcio.js cdx-index does: mime warc/revisit, the same lines" {
	need_warcio
	run "$CRAWL" --mode=seq -q --warc "$D/a.warc.gz" --cdx "$D/a.cdxj" "$FIXTURE/site/" \
		"$FIXTURE/site/index.html" "$FIXTURE/bytes/1000" "$FIXTURE/bytes/1000?again" "$FIXTURE/redirect/1"
	[ "$status" -eq 0 ]
	[ "$(cut -d' ' -f3- "$D/a.cdxj" | jq -r 'select(.mime == "warc/revisit") | .url' | sort | paste -sd' ')" = \
		"$FIXTURE/bytes/1000?again $FIXTURE/site/index.html" ]
	index_points_home "$D" "$D/a.cdxj"
	# warcio.js writes digests without "sha1:"; else the index is the same
	"$WARCIO" cdx-index "$D/a.warc.gz" | LC_ALL=C sort >"$D/w.cdxj"
	diff <(sed 's/"digest":"sha1:/"digest":"/' "$D/a.cdxj") "$D/w.cdxj"
}

# bats test_tags=models
@test "--warc-dedupe-cdx: a later crawl writes the payloads an earlier crawl's index lists as revisits referring to it, in every model" {
	need_warcio
	run "$CRAWL" --mode=seq -q --warc "$D/first.warc.gz" --cdx "$D/first.cdxj" "$FIXTURE/site/" \
		"$FIXTURE/bytes/2000" "$FIXTURE/status/404"
	[ "$status" -eq 0 ]
	"$WARCIO" cdx-index "$D/first.warc.gz" >"$D/warcio.cdxj"
	for idx in first.cdxj warcio.cdxj; do
		for m in $MODES; do
			rm -f "$D"/b*.warc.gz
			run --separate-stderr "$CRAWL" --mode=$m -q --warc "$D/b.warc.gz" --warc-dedupe-cdx "$D/$idx" \
				"$FIXTURE/site/index.html" "$FIXTURE/bytes/2000?later" "$FIXTURE/status/404" "$FIXTURE/bytes/3000"
			echo "$idx $m: $stderr"
			[ "$status" -eq 0 ]
			[ -z "$stderr" ]
			run python3 "$CHECK" check $(warc_files $m "$D/b")
			echo "$output"
			[ "$status" -eq 0 ]
			[ "$(grep revisit: <<<"$output" | cut -d' ' -f1,4,5 | sort)" = \
				"$FIXTURE/bytes/2000?later revisit:identical $FIXTURE/bytes/2000
$FIXTURE/site/index.html revisit:identical $FIXTURE/site/" ]
			# the date is the index's, to the second; no record id is in an index
			stamp=$(grep "/site/ " "$D/first.cdxj" | cut -d' ' -f2)
			zcat $(warc_files $m "$D/b") | tr -d '\r' | grep -ax "WARC-Refers-To-Date: ${stamp:0:4}-${stamp:4:2}-${stamp:6:2}T${stamp:8:2}:${stamp:10:2}:${stamp:12:2}Z" >/dev/null
			! zcat $(warc_files $m "$D/b") | grep -aq '^WARC-Refers-To:'
		done
	done
	# Lines that are not CDXJ are passed over, and said so.
	printf 'not an index line\n' >>"$D/first.cdxj"
	run --separate-stderr "$CRAWL" --mode=seq -q --warc "$D/c.warc.gz" --warc-dedupe-cdx "$D/first.cdxj" "$FIXTURE/site/"
	[ "$status" -eq 0 ]
	[ "$stderr" = "crawl: --warc-dedupe-cdx $D/first.cdxj: 1 line not CDXJ, passed over (2 responses read)" ]
	[ "$(python3 "$CHECK" check "$D/c.warc.gz" | grep -c revisit:)" -eq 1 ]
}

# bats test_tags=models
@test "procs: one digest set for the workers' WARC files: of duplicate payloads two workers fetched, one full record each, the rest revisits referring to it" {
	[[ " $MODES " == *" procs "* ]] || skip "procs is not among the models run"
	for i in $(seq 30); do
		echo "$FIXTURE/bytes/$((i % 5 + 1))000?i=$i"
		echo "http://localhost:$FIXTURE_PORT/bytes/$((i % 5 + 1))000?i=$i"
	done >"$D/l"
	run "$CRAWL" --mode=procs --procs 2 -q --warc "$D/p.warc.gz" --cdx "$D/p.cdxj" "$D/l"
	[ "$status" -eq 0 ]
	# the checker resolves every WARC-Refers-To across the two files
	run python3 "$CHECK" check "$D/p-w0.warc.gz" "$D/p-w1.warc.gz"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -vc 'revisit:\|^ok:' <<<"$output")" -eq 5 ]
	[ "$(grep -v 'revisit:\|^ok:' <<<"$output" | cut -d' ' -f3 | sort -u | wc -l)" -eq 5 ]
	[ "$(grep -c 'revisit:identical' <<<"$output")" -eq 55 ]
	# both workers wrote revisits, so each knew of the other's records
	for w in 0 1; do
		[ "$(python3 "$CHECK" list "$D/p-w$w.warc.gz" | wc -l)" -ge 1 ]
		zcat "$D/p-w$w.warc.gz" | grep -aq '^WARC-Type: revisit'
	done
	[ "$(cut -d' ' -f3- "$D/p.cdxj" | jq -r 'select(.mime == "warc/revisit")' | jq -s length)" -eq 55 ]
	index_points_home "$D" "$D/p.cdxj"
}
