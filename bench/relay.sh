#!/bin/bash
# SPDX-License-Identifier: MIT
#
# pinwheel-netem's figures: packets/s, relay CPU per datagram and direction
# (per echo, and per datagram it sent over its life: pinwheel-relay-load's
# two figures), and the latency added beyond the configured delay
# (p50/p99, beside the OS's own lateness for a sleep of that delay), for
# the plain forwarder (pfifo), netem delay, netem delay+jitter+loss and tbf
# at 1 Gbit/s, each with 1 and 2 workers, REPEAT times; then the median of
# each figure over the repeats, as a markdown table.  Not a test (nothing
# is asserted); on a shared 2-core VM the load generator, the echo server
# and the relay share the cores, so the packet rates are the machine's,
# not the relay's.
# As root, the specs the kernel has (tbf; these VMs have no sch_netem) run
# once more through the kernel instead (pinwheel-relay-load --kernel: a
# veth pair between two network namespaces, the qdisc on one end).
#
# With OLD=PATH (another pinwheel-netem binary, e.g. the last commit's built
# in a scratch directory) every relay run is followed by the same run
# through it, rows "N old": old and new interleaved, as a shared machine
# needs.  THROUGHPUT_ONLY=1 skips the latency phase (its columns print 0).
# Every run with more than one worker is followed by the same run with
# --steer-cpu (rows "N steer"; STEER=0 leaves them out), and after the
# table each spec's steer/default (and old/default) ratios and each one's
# echo rate over the kernel's (the medians of the per-repeat ratios: each
# pair ran in the same repeat, so the machine's drift cancels more than
# in the medians' ratio).  WORKERS (default "1 2") and
# SPEC_MATCH (an extended regex on the spec, default all) narrow the runs.
#
#   bash bench/relay.sh BUILD-DIR [SECONDS] [REPEAT]
#   e.g. THROUGHPUT_ONLY=1 WORKERS=2 SPEC_MATCH='pfifo|tbf' bash bench/relay.sh build 3 5
set -eu
build=${1:?usage: bash bench/relay.sh BUILD-DIR [SECONDS] [REPEAT]}
secs=${2:-3}
repeat=${3:-1}
relay=$build/tools/pinwheel-netem
load=$build/bench/pinwheel-relay-load
[[ -x $relay && -x $load ]] || { echo "relay.sh: build pinwheel-netem and pinwheel-relay-load first" >&2; exit 2; }
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
all_specs=(
	"0|pfifo"
	"10|netem delay 10ms limit 100000"
	"10|netem delay 10ms 2ms loss 1% limit 100000"
	"0|tbf rate 1gbit burst 1mb latency 10ms"
)
specs=()
for s in "${all_specs[@]}"; do
	[[ ${s#*|} =~ ${SPEC_MATCH:-.} ]] && specs+=("$s")
done
(( ${#specs[@]} )) || { echo "relay.sh: SPEC_MATCH '$SPEC_MATCH' matches no spec" >&2; exit 2; }
json=$(mktemp)
# --steer-cpu through a wrapper (pinwheel-relay-load execs the binary it
# is given with its own options; exec keeps the pid its CPU figure reads)
steer=$(mktemp)
printf '#!/bin/bash\nexec %q --steer-cpu "$@"\n' "$(realpath "$relay")" >"$steer"
chmod +x "$steer"
trap 'rm -f "$json" "$steer"' EXIT
for ((r = 0; r < repeat; r++)); do
	(( r == 0 )) || echo "# repeat $((r + 1)), load: $(cut -d' ' -f1-3 /proc/loadavg)"
	for w in ${WORKERS:-1 2}; do
		for s in "${specs[@]}"; do
			d=${s%%|*}
			spec=${s#*|}
			"$load" "$relay" --workers "$w" --up "$spec" --delay-ms "$d" --secs "$secs" \
				--throughput-only "${THROUGHPUT_ONLY:-0}" | tee -a "$json" | grep -v '^{'
			if [[ -n ${OLD:-} ]]; then
				echo "(old: $OLD)"
				"$load" "$OLD" --workers "$w" --up "$spec" --delay-ms "$d" --secs "$secs" \
					--throughput-only "${THROUGHPUT_ONLY:-0}" |
					sed 's/^{"workers":\([0-9]*\)/{"workers":"\1 old"/' |
					tee -a "$json" | grep -v '^{'
			fi
			if (( w > 1 )) && [[ ${STEER:-1} != 0 ]]; then
				echo "(--steer-cpu)"
				"$load" "$steer" --workers "$w" --up "$spec" --delay-ms "$d" --secs "$secs" \
					--throughput-only "${THROUGHPUT_ONLY:-0}" |
					sed 's/^{"workers":\([0-9]*\)/{"workers":"\1 steer"/' |
					tee -a "$json" | grep -v '^{'
			fi
		done
	done
	if [[ $(id -u) == 0 ]]; then
		for s in "${specs[@]}"; do
			d=${s%%|*}
			spec=${s#*|}
			"$load" --kernel --up "$spec" --delay-ms "$d" --secs "$secs" \
				--throughput-only "${THROUGHPUT_ONLY:-0}" 2>/dev/null |
				tee -a "$json" | grep -v '^{' || true
		done
	fi
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# medians over the repeats (one JSON object a line from pinwheel-relay-load)
python3 - "$json" <<'PY' || echo "(python3 missing: no summary)"
import json, sys, statistics
rows = {}
for line in open(sys.argv[1]):
    if line.startswith('{'):
        j = json.loads(line)
        rows.setdefault((j['workers'], j['spec']), []).append(j)
# "x kernel": the row's echoes/s over the kernel's for the same spec (medians)
kern = {spec: statistics.median(x['pps'] for x in js)
        for (w, spec), js in rows.items() if w == 'kernel'}
print("| workers | up | echoes/s | x kernel | relay CPU ns per datagram and direction | per datagram sent | added p50 (us) | added p99 (us) | OS sleep lateness p50 / p99 (us) |")
print("|---|---|---|---|---|---|---|---|---|")
for (w, spec), js in rows.items():
    m = lambda k: statistics.median(x[k] for x in js)
    cpu = '-' if w == 'kernel' else f"{m('cpu_ns_per_pkt'):.0f}"
    sent = '-' if w == 'kernel' or 'cpu_ns_per_sent' not in js[0] else f"{m('cpu_ns_per_sent'):.0f}"
    xk = f"{m('pps') / kern[spec]:.2f}" if spec in kern and kern[spec] else '-'
    print(f"| {w} | `{spec}` | {m('pps'):.0f} | {xk} | {cpu} | {sent} | {m('added_p50_us'):.0f} | {m('added_p99_us'):.0f} | {m('sleep_late_p50_us'):.0f} / {m('sleep_late_p99_us'):.0f} |")
print(f"(medians of {len(next(iter(rows.values())))} runs each)")
# --steer-cpu (and OLD) against the default, and each against the
# kernel, run by run (the same repeat)
for (w, spec), js in rows.items():
    if not isinstance(w, str) or not w.endswith((' steer', ' old')):
        continue
    n = int(w.split()[0])
    if (n, spec) not in rows:
        continue
    pairs = list(zip(js, rows[(n, spec)]))
    # a failed run (0) is left out of the ratios; none left: "-"
    def r(k):
        xs = [a[k] / b[k] for a, b in pairs if b[k]]
        return f"{statistics.median(xs):.2f}" if xs else "-"
    line = (f"{w} / {n}, `{spec}`: relay CPU per datagram and direction x{r('cpu_ns_per_pkt')}, "
            f"per datagram sent x{r('cpu_ns_per_sent')}, echoes/s x{r('pps')}")
    if ('kernel', spec) in rows:
        def kr(xs):
            v = [a['pps'] / k['pps'] for a, k in zip(xs, rows[('kernel', spec)]) if k['pps']]
            return f"{statistics.median(v):.2f}" if v else "-"
        line += f"; echoes/s x kernel: {w} {kr(js)}, {n} {kr(rows[(n, spec)])}"
    print(line + f" (medians of {len(pairs)} per-repeat ratios)")
PY
