#!/bin/bash
# SPDX-License-Identifier: MIT
#
# pinwheel-netem's figures: packets/s, relay CPU per datagram and direction,
# and the latency added beyond the configured delay (p50/p99), for the plain
# forwarder (pfifo), netem delay, netem delay+jitter+loss and tbf at 1
# Gbit/s, each with 1 and 2 workers.  Not a test (nothing is asserted); on
# a shared 2-core VM the load generator, the echo server and the relay
# share the cores, so the packet rates are the machine's, not the relay's.
#
#   bash bench/relay.sh BUILD-DIR [SECONDS]
set -eu
build=${1:?usage: bash bench/relay.sh BUILD-DIR [SECONDS]}
secs=${2:-3}
relay=$build/tools/pinwheel-netem
load=$build/bench/pinwheel-relay-load
[[ -x $relay && -x $load ]] || { echo "relay.sh: build pinwheel-netem and pinwheel-relay-load first" >&2; exit 2; }
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
specs=(
	"0|pfifo"
	"10|netem delay 10ms limit 100000"
	"10|netem delay 10ms 2ms loss 1% limit 100000"
	"0|tbf rate 1gbit burst 1mb latency 10ms"
)
for w in 1 2; do
	for s in "${specs[@]}"; do
		d=${s%%|*}
		spec=${s#*|}
		"$load" "$relay" --workers "$w" --up "$spec" --delay-ms "$d" --secs "$secs"
	done
done
