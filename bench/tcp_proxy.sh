#!/bin/bash
# SPDX-License-Identifier: MIT
#
# TCP proxies side by side (issue 23's benchmark): pinwheel-netem --api,
# toxiproxy (../shared/tools/toxiproxy-server, or $TOXIPROXY) and socat
# (-b 1048576, a process a connection), in the same run, interleaved,
# REPEAT times:
#   - throughput with no toxic, 1 connection and 100: MB/s the server
#     received, and the proxy's CPU seconds per GB (what decides it on a
#     2-vCPU machine where the load, the server and the proxy share cores);
#   - the proxy's own hop (the round trip it adds with no toxic), then the
#     latency toxic (50 ms downstream): the added delay p50/p99 beside the
#     OS's own lateness for a 50 ms sleep (the toxic's) in the same run
#     (toxiproxy and pinwheel: socat has none); "toxic_ms" says which;
#   - memory per idle connection (1,000 connections).
# One JSON object a line (the proxy named in "proxy"), then nothing else:
# not a test, nothing is asserted.
#
#   bash bench/tcp_proxy.sh BUILD-DIR [SECONDS] [REPEAT]
set -eu
build=${1:?usage: bash bench/tcp_proxy.sh BUILD-DIR [SECONDS] [REPEAT]}
secs=${2:-3}
repeat=${3:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
netem=$build/tools/pinwheel-netem
load=$build/bench/pinwheel-tcp-load
toxi=${TOXIPROXY:-$here/../shared/tools/toxiproxy-server}
[[ -x $netem && -x $load ]] || { echo "tcp_proxy.sh: build pinwheel-netem and pinwheel-tcp-load first" >&2; exit 2; }
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

api=127.0.0.1:${PW_BENCH_API_PORT:-28474}
server=127.0.0.1:28500
proxy=127.0.0.1:28501
pid=
# stop the proxy and its children (socat's forks hold the listening socket
# too), and wait until nothing listens on the proxy's port
cleanup() {
	if [[ -n $pid ]]; then
		pkill -P "$pid" 2>/dev/null || true
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	pid=
	for _ in $(seq 100); do
		ss -Hltn "sport = :${proxy#*:}" | grep -q . || break
		sleep 0.05
	done
}
trap cleanup EXIT

wait_port() {
	for _ in $(seq 100); do
		(exec 3<>/dev/tcp/${1%:*}/${1#*:}) 2>/dev/null && return 0
		sleep 0.05
	done
	echo "tcp_proxy.sh: nothing listens on $1" >&2
	return 1
}

# start KIND: the proxy from $proxy to $server, its pid in $pid
start() {
	case $1 in
	pinwheel | toxiproxy)
		if [[ $1 == pinwheel ]]; then
			"$netem" --api "$api" 2>/dev/null &
		else
			"$toxi" -host "${api%:*}" -port "${api#*:}" >/dev/null 2>&1 &
		fi
		pid=$!
		wait_port "$api"
		kill -0 "$pid" 2>/dev/null || { echo "tcp_proxy.sh: $1 did not start" >&2; exit 1; }
		curl -sf -XPOST "http://$api/proxies" \
			-d "{\"name\":\"bench\",\"listen\":\"$proxy\",\"upstream\":\"$server\"}" >/dev/null
		;;
	socat)
		socat -b 1048576 "TCP-LISTEN:${proxy#*:},bind=${proxy%:*},reuseaddr,fork,backlog=4096" \
			"TCP:$server" 2>/dev/null &
		pid=$!
		# listening (not a connection: socat would dial the server, not up yet)
		for _ in $(seq 100); do
			ss -Hltn "sport = :${proxy#*:}" | grep -q . && break
			sleep 0.05
		done
		;;
	esac
}

kinds=(pinwheel)
[[ -x $toxi ]] && kinds+=(toxiproxy) || echo "tcp_proxy.sh: no toxiproxy at $toxi" >&2
command -v socat >/dev/null && kinds+=(socat) || echo "tcp_proxy.sh: no socat" >&2

tag() { sed "s/^{/{\"proxy\":\"$1\",/"; }
for ((r = 0; r < repeat; r++)); do
	for k in "${kinds[@]}"; do
		for c in 1 100; do
			start "$k"
			"$load" throughput --server "$server" --via "$proxy" --conns "$c" --secs "$secs" --pid "$pid" | tag "$k"
			cleanup
		done
		# the proxy's own hop: the added round trip with no toxic
		start "$k"
		"$load" latency --server "$server" --via "$proxy" --count 100 |
			sed 's/^{/{"toxic_ms":0,/' | tag "$k"
		cleanup
		if [[ $k != socat ]]; then
			start "$k"
			curl -sf -XPOST "http://$api/proxies/bench/toxics" \
				-d '{"type":"latency","stream":"downstream","attributes":{"latency":50}}' >/dev/null
			"$load" latency --server "$server" --via "$proxy" --count 100 --sleep-ms 50 |
				sed 's/^{/{"toxic_ms":50,/' | tag "$k"
			cleanup
		fi
		start "$k"
		"$load" idle --server "$server" --via "$proxy" --conns 1000 --pid "$pid" | tag "$k"
		cleanup
	done
done
