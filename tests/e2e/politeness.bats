#!/usr/bin/env bats
# Per-host politeness, in every model: robots.txt's Crawl-delay (with
# --delay as its floor, --ignore-crawl-delay to opt out), the pause a 429 or
# 503 with Retry-After puts on its host alone, and --auto-throttle. Each
# test reads when each row's request started (the JSON "start", seconds
# from the run's start) and holds it to loose bounds only: never earlier
# than the rule allows, and far sooner than a rule that was not meant to
# apply would give.

load helpers

# starts: the start of every row of the last output, ascending, one a line.
starts() { jq -r 'select(.url) | .start_s' <<<"$output" | sort -g; }

# gaps_at_least SEC: consecutive starts are SEC or more apart.
gaps_at_least() {
	starts | awk -v min="$1" 'NR > 1 && $1 - prev < min { bad = 1 } { prev = $1 } END { exit bad }'
}

# start_of URL: URL's row's start in the last output.
start_of() { jq -r --arg u "$1" 'select(.url == $u) | .start_s' <<<"$output"; }

# below A B, at_least A B: numeric comparisons.
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# bats test_tags=models
@test "robots.txt's Crawl-delay spaces a host's requests, in every model" {
	start_private_fixture --robots /robots/delay/300
	for m in $MODES; do
		run "$CRAWL" --mode=$m --depth 1 --format=jsonl "$PFIX/wide/3"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .url' <<<"$output" | wc -l)" -eq 4 ]
		# The first page waits its turn after robots.txt's request too.
		at_least "$(starts | head -1)" 0.25
		gaps_at_least 0.25
	done
}

# bats test_tags=models
@test "--ignore-crawl-delay and --no-robots do not wait for Crawl-delay" {
	start_private_fixture --robots /robots/delay/2000
	for m in $MODES; do
		for flag in --ignore-crawl-delay --no-robots; do
			run "$CRAWL" --mode=$m $flag --depth 1 --format=jsonl "$PFIX/wide/3"
			echo "$m $flag: $output"
			[ "$status" -eq 0 ]
			[ "$(jq -r 'select(.url) | .url' <<<"$output" | wc -l)" -eq 4 ]
			# Crawl-delay would put the last past 6 s.
			below "$(starts | tail -1)" "$(soon 1.5)"
		done
	done
}

# bats test_tags=models
@test "--delay is the floor under a shorter Crawl-delay, in every model" {
	start_private_fixture --robots /robots/delay/50
	for m in $MODES; do
		run "$CRAWL" --mode=$m --delay 250 --depth 1 --format=jsonl "$PFIX/wide/2"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .url' <<<"$output" | wc -l)" -eq 3 ]
		gaps_at_least 0.22
	done
}

# bats test_tags=models
@test "a 429 with Retry-After pauses its host and not the crawl, in every model" {
	start_private_fixture
	other="http://localhost:${PFIX##*:}"
	for m in $MODES; do
		flaky="$PFIX/flaky/1/p$m?status=429&retry-after=1"
		run "$CRAWL" --mode=$m --per-host 1 --format=jsonl "$flaky" "$PFIX/bytes/1" "$PFIX/bytes/2" "$other/bytes/3"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .status' <<<"$output" | tr '\n' ' ')" = "429 200 200 200 " ]
		at_least "$(start_of "$PFIX/bytes/1")" 0.9
		at_least "$(start_of "$PFIX/bytes/2")" 0.9
		# Not behind the other host's pause (0.9 s and more).
		below "$(start_of "$other/bytes/3")" "$(awk -v s="$(soon 0.5)" 'BEGIN { print s < 0.85 ? s : 0.85 }')"
	done
}

# bats test_tags=models
@test "a 503's pause lasts at most --retry-max-delay, and a retry waits it too" {
	start_private_fixture
	for m in $MODES; do
		flaky="$PFIX/flaky/1/m$m?retry-after=100"
		run "$CRAWL" --mode=$m --per-host 1 --retry 1 --retry-max-delay 1 --format=jsonl "$flaky" "$PFIX/bytes/1"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(jq -r --arg u "$flaky" 'select(.url == $u) | "\(.status) \(.attempts)"' <<<"$output")" = "200 2" ]
		at_least "$(start_of "$PFIX/bytes/1")" 0.9
		below "$(start_of "$PFIX/bytes/1")" 5
	done
}

# bats test_tags=models
@test "a host's pause never outlasts --deadline: what waits is cancelled" {
	start_private_fixture
	for m in $MODES; do
		flaky="$PFIX/flaky/1/d$m?retry-after=100"
		t0=$(date +%s.%N)
		run "$CRAWL" --mode=$m --per-host 1 --deadline 1 --retry-max-delay 100 --format=jsonl "$flaky" "$PFIX/bytes/1"
		t1=$(date +%s.%N)
		echo "$m: $output"
		[ "$status" -eq 1 ]
		[ "$(jq -r --arg u "$PFIX/bytes/1" 'select(.url == $u) | .error' <<<"$output")" = "cancelled: --deadline reached" ]
		below "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" 10
	done
}

# bats test_tags=models
@test "--auto-throttle sends a host its requests one at a time, spaced by its latency" {
	start_private_fixture
	for m in $MODES; do
		run "$CRAWL" --mode=$m --auto-throttle --format=jsonl "$PFIX/delay/200/a" "$PFIX/delay/200/b" "$PFIX/delay/200/c" "$PFIX/delay/200/d"
		echo "$m: $output"
		[ "$status" -eq 0 ]
		[ "$(jq -r 'select(.url) | .length' <<<"$output" | tr '\n' ' ')" = "100 100 100 100 " ]
		gaps_at_least 0.18
		sequential $m && continue
		run "$CRAWL" --mode=$m --format=jsonl "$PFIX/delay/200/a" "$PFIX/delay/200/b" "$PFIX/delay/200/c" "$PFIX/delay/200/d"
		# All at once: the throttled run's last started 0.54 s in or later.
		below "$(starts | tail -1)" "$(soon 0.15)"
	done
}

# bats test_tags=models
@test "--auto-throttle doubles a host's delay after each error, from half a second" {
	start_private_fixture
	for m in $MODES; do
		run "$CRAWL" --mode=$m --auto-throttle --format=jsonl "$PFIX/status/503?a" "$PFIX/status/503?b" "$PFIX/status/503?c"
		echo "$m: $output"
		[ "$(jq -r 'select(.url) | .status' <<<"$output" | tr '\n' ' ')" = "503 503 503 " ]
		s=($(starts))
		at_least "$(awk -v a="${s[0]}" -v b="${s[1]}" 'BEGIN { print b - a }')" 0.45
		at_least "$(awk -v a="${s[1]}" -v b="${s[2]}" 'BEGIN { print b - a }')" 0.95
	done
}

@test "--ignore-crawl-delay where robots.txt is not obeyed is named as ignored" {
	run "$CRAWL" --ignore-crawl-delay "$FIXTURE/bytes/1"
	[ "$status" -eq 0 ]
	grep -qx "crawl: warning: --ignore-crawl-delay is ignored here: robots.txt is obeyed only with --depth or --sitemaps, and not with --no-robots" <<<"$output"
	run "$CRAWL" --ignore-crawl-delay --depth 1 "$FIXTURE/bytes/1"
	! grep -q "warning" <<<"$output"
}

# ---- Every pacing rule the same in every model, on found links --------
# Each rule is decided by the frontier before a job is handed out, so no
# model can start a host's request sooner than the rule allows. Measured
# where it matters, at the fixture (/stats?arrivals), with 20 ms of
# tolerance; robots.txt on and off (it is the host's first request then).
# Times measured at a server are the machine's load's to upset: these
# tests run alone.

# found START [ARGS...]: a crawl of START and the pages it links to
# (--depth 1), in model $m, with robots.txt as $robots says (on, off), on a
# fixture of its own; sets PFIX.
found() {
	local start=$1
	shift
	stop_private_fixture
	start_private_fixture ${FIXARGS:-}
	local no=
	[ "$robots" = off ] && no=--no-robots
	run "$CRAWL" --mode=$m --depth 1 $no -q "$@" "$PFIX$start"
	echo "$m, robots.txt $robots, $*: status $status"
}

# gaps PREFIX: the milliseconds between consecutive requests for paths
# starting with PREFIX, in the order the fixture saw them.
gaps() {
	curl -s "$PFIX/stats?arrivals" | jq -r --arg p "$1" 'select(.path | startswith($p)) | .t' |
		awk 'NR > 1 { printf "%d\n", ($1 - prev) * 1000 } { prev = $1 }'
}

# each_gap_at_least MS PREFIX: every gap of gaps PREFIX is MS or more, and
# there are some.
each_gap_at_least() {
	local g
	g=$(gaps "$2")
	echo "gaps (ms): $(tr '\n' ' ' <<<"$g")"
	[ -n "$g" ] && ! awk -v min="$1" '$1 < min { bad = 1 } END { exit !bad }' <<<"$g"
}

# requests_for PREFIX: requests the fixture saw for paths starting with it.
requests_for() {
	curl -s "$PFIX/stats?arrivals" | jq -r --arg p "$1" 'select(.path | startswith($p)) | .path' | wc -l
}

# after_429: the milliseconds from the arrival of the 429 (the /slow/
# path) to each later request for /delay/ and for /bytes/, as the fixture
# saw them: "delay MS" and "bytes MS" lines.
after_429() {
	curl -s "$PFIX/stats?arrivals" | jq -r --slurp '
		(map(select(.path | startswith("/slow/"))) | first | .t) as $t0 | .[] |
		select(.path | test("^/(delay|bytes)/")) |
		"\(.path | split("/")[1]) \((.t - $t0) * 1000 | floor)"'
}

LINKS4="/links?u=%2Fbytes%2F11&u=%2Fbytes%2F12&u=%2Fbytes%2F13&u=%2Fbytes%2F14"

# bats test_tags=models
@test "--delay spaces a host's found links at the server, the same in every model, robots.txt on and off" {
	alone
	for m in $MODES; do
		for robots in on off; do
			found "$LINKS4" --delay 60
			[ "$status" -eq 0 ]
			[ "$(requests_for /bytes/1)" -eq 4 ]
			each_gap_at_least 40 /
		done
	done
}

# bats test_tags=models
@test "Crawl-delay spaces a host's found links at the server in every model; without robots.txt it does not apply" {
	alone
	for m in $MODES; do
		for robots in on off; do
			FIXARGS="--robots /robots/delay/60" found "$LINKS4"
			[ "$status" -eq 0 ]
			[ "$(requests_for /bytes/1)" -eq 4 ]
			if [ "$robots" = on ]; then
				each_gap_at_least 40 /
			else
				! each_gap_at_least 30 /bytes/
			fi
		done
	done
}

# bats test_tags=models
@test "--per-host 1 keeps one request in flight to a host in every model, robots.txt on and off" {
	for m in $MODES; do
		for robots in on off; do
			found "/links?u=%2Fdelay%2F100%2Fa&u=%2Fdelay%2F100%2Fb&u=%2Fdelay%2F100%2Fc" --per-host 1
			[ "$status" -eq 0 ]
			[ "$(requests_for /delay/)" -eq 3 ]
			[ "$(stat_of "$PFIX" peak_active)" -eq 1 ]
		done
	done
}

# bats test_tags=models
@test "--auto-throttle spaces a host's found links by its latency, the same in every model, robots.txt on and off" {
	alone
	for m in $MODES; do
		for robots in on off; do
			# The page that links takes 100 ms, and so does each page it links to.
			found "/links?ms=100&u=%2Fdelay%2F100%2Fa&u=%2Fdelay%2F100%2Fb&u=%2Fdelay%2F100%2Fc" --auto-throttle
			[ "$status" -eq 0 ]
			[ "$(requests_for /delay/)" -eq 3 ]
			each_gap_at_least 80 /delay/
		done
	done
}

# bats test_tags=models
@test "a 429's Retry-After pauses its host for the found links after it, the same in every model at -c 4, robots.txt on and off" {
	alone
	# The 429 is answered 50 ms after it came, pages of 150 ms beside it:
	# a slot is free from then on, and what a model took meanwhile must
	# wait out the second's pause too. So must the two links after them.
	local L="/links?u=%2Fslow%2F50%2Fflaky%2F5%2Fk%3Fstatus%3D429%26retry-after%3D1"
	L+="&u=%2Fdelay%2F150%2Fa&u=%2Fdelay%2F150%2Fb&u=%2Fdelay%2F150%2Fc&u=%2Fbytes%2F11&u=%2Fbytes%2F12"
	for m in $MODES; do
		for robots in on off; do
			found "$L" -c 4
			[ "$status" -eq 0 ]
			local t
			t=$(after_429)
			echo "ms after the 429 came: $(tr '\n' ' ' <<<"$t")"
			# Both links, after 50 ms to its answer and the pause (20 ms
			# of slack); a page not beside the 429 no sooner.
			[ "$(awk '$1 == "bytes" && $2 >= 1030' <<<"$t" | wc -l)" -eq 2 ]
			[ "$(awk '$2 >= 50 && $2 < 1030' <<<"$t" | wc -l)" -eq 0 ]
			sequential $m && continue
			# Pages were in flight beside the 429 (two at least: the page
			# that links may hold its slot a moment longer).
			[ "$(awk '$1 == "delay" && $2 < 50' <<<"$t" | wc -l)" -ge 2 ]
		done
	done
}
