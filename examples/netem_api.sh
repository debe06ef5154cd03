#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Driving pinwheel-netem's toxiproxy API from a shell script with curl:
# a TCP proxy in front of a small HTTP server, a latency toxic added,
# measured, made longer and removed while a request waits in it, and what
# the API says afterwards.  A test's fixture would do the same around its
# own client and server.
#
#   examples/netem_api.sh [PINWHEEL_NETEM]     (default: pinwheel-netem on PATH)
#
# Needs bash, curl and python3 (the upstream: python3 -m http.server).
# Everything listens on 127.0.0.1 on ports the kernel picks (port 0), so
# it runs beside anything else.  Checks its own result: exit 0 when every
# step did what its comment says, 1 otherwise (the failing step named),
# 2 when a tool is missing or a server does not start.  The checks are
# properties, not timings: a toxic never delivers early, and a request
# held by a 10 s toxic that is removed ends well before 10 s.
set -euo pipefail

netem=${1:-pinwheel-netem}
for tool in curl python3 "$netem"; do
	command -v "$tool" >/dev/null || { echo "netem_api.sh: $tool not found" >&2; exit 2; }
done

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok  : $*"; }

# wait_for FILE REGEX: the first match of REGEX (sed -E, one group) in FILE
# within 10 s, printed; exit 2 when none comes.
wait_for() {
	local i v
	for ((i = 0; i < 200; i++)); do
		v=$(sed -nE "s/.*$2.*/\\1/p" "$1" | head -n1)
		[[ -n $v ]] && { echo "$v"; return; }
		sleep 0.05
	done
	echo "netem_api.sh: nothing matched '$2' in $1:" >&2
	cat "$1" >&2
	exit 2
}

# The upstream: an HTTP server with one file, on a free port.
mkdir "$tmp/www"
printf "hello through the proxy" >"$tmp/www/hello.txt"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$tmp/www" >"$tmp/upstream.log" 2>&1 &
pids+=($!)
upstream=$(wait_for "$tmp/upstream.log" 'port ([0-9]+)')

# pinwheel-netem serving the API on a free port (it prints the one it got).
"$netem" --api 127.0.0.1:0 2>"$tmp/netem.log" &
pids+=($!)
api=http://127.0.0.1:$(wait_for "$tmp/netem.log" 'api listening on 127\.0\.0\.1:([0-9]+)')
echo "upstream 127.0.0.1:$upstream, API $api"

# request METHOD PATH [BODY]: the API's answer in $body, its HTTP status
# in $status (000: no connection).
request() {
	local out
	out=$(curl -s -X "$1" "$api$2" ${3:+-d "$3"} -w '\n%{http_code}') || true
	status=${out##*$'\n'}
	body=${out%$'\n'*}
}

# get_ms: one request through the proxy; the body checked, the time in ms
# on stdout (call it as ms=$(get_ms): a failure then ends the script).
get_ms() {
	local out
	out=$(curl -s --max-time 30 -w '\n%{time_total}' "http://$listen/hello.txt") ||
		fail "no answer through the proxy"
	[[ ${out%$'\n'*} == "hello through the proxy" ]] || fail "wrong body through the proxy: ${out%$'\n'*}"
	awk -v s="${out##*$'\n'}" 'BEGIN { printf "%d\n", s * 1000 }'
}

# 1. A proxy (port 0: the answer says which port it listens on).
request POST /proxies "{\"name\":\"web\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:$upstream\"}"
[[ $status == 201 ]] || fail "POST /proxies: $status $body"
listen=$(sed -nE 's/.*"listen": *"([^"]+)".*/\1/p' <<<"$body")
ok "proxy web: $listen -> 127.0.0.1:$upstream"
ms=$(get_ms)
ok "without a toxic: $ms ms"

# 2. A latency toxic on the responses (downstream): 300 ms.
request POST /proxies/web/toxics '{"name":"slow","type":"latency","stream":"downstream","attributes":{"latency":300}}'
[[ $status == 200 ]] || fail "POST /proxies/web/toxics: $status $body"
for i in 1 2 3; do
	ms=$(get_ms)
	((ms >= 300)) || fail "a request took $ms ms through a 300 ms latency toxic"
	ok "with the 300 ms toxic: $ms ms"
done

# 3. Mid-test: the toxic made 10 s long, a request sent into it, the toxic
# removed while the response waits; what it held moves on at once.
request POST /proxies/web/toxics/slow '{"attributes":{"latency":10000}}'
[[ $status == 200 ]] || fail "POST /proxies/web/toxics/slow: $status $body"
get_ms >"$tmp/held.ms" &
held=$!
sleep 1
request DELETE /proxies/web/toxics/slow
[[ $status == 204 ]] || fail "DELETE /proxies/web/toxics/slow: $status"
wait "$held" || fail "the request held by the toxic did not complete"
ms=$(cat "$tmp/held.ms")
((ms < 10000)) || fail "the request held by the 10 s toxic took $ms ms (removed after 1 s)"
ok "held by the 10 s toxic, released by its removal: $ms ms"

# 4. What the API says now, and a request without the toxic.
request GET /proxies/web/toxics
[[ $status == 200 && $body == "[]" ]] || fail "GET /proxies/web/toxics: $status $body"
request GET /proxies/web/toxics/slow
[[ $status == 404 ]] || fail "GET of the removed toxic: $status, not 404"
ok "the toxic is gone (GET: 404, the list: [])"
ms=$(get_ms)
ok "after the removal: $ms ms"
request GET /proxies/web/stats
[[ $status == 200 ]] || fail "GET /proxies/web/stats: $status $body"
echo "stats: $body" | cut -c1-300

# 5. The proxy removed: its listener closes.
request DELETE /proxies/web
[[ $status == 204 ]] || fail "DELETE /proxies/web: $status"
if curl -s --max-time 5 -o /dev/null "http://$listen/hello.txt"; then
	fail "the deleted proxy still answers"
fi
ok "proxy deleted: $listen refuses"
echo "netem_api.sh: all as expected"
