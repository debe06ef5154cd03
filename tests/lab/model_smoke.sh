#!/bin/bash
# pinwheel-lab model all --smoke: the model's structure and invariants (not
# its numbers): the same --seed prints the same bytes (JSON and text, run
# twice); every seed's rows carry their configurations and the named counts;
# the invariants hold (the model's own count, and again here from the
# JSON: no remote arms under OFF, pinned (seed000) and PULL; under the 3.17
# rule the timer IPIs equal the remote enqueues; in = the sum of the kinds);
# a bad seed name exits 2.
set -u
lab=${1:?usage: model_smoke.sh PINWHEEL-LAB OUT-DIR}
out=${2:?}
rm -rf "$out"
mkdir -p "$out"
fail() { echo "model_smoke: $*" >&2; exit 1; }
for i in 1 2; do
	"$lab" model all --smoke --json --seed 7 >"$out/run$i.json" 2>"$out/run$i.err" ||
		fail "model --json exited $? ($(tail -3 "$out/run$i.err"))"
	"$lab" model all --smoke --seed 7 >"$out/run$i.txt" 2>>"$out/run$i.err" ||
		fail "model exited $? ($(tail -3 "$out/run$i.err"))"
done
cmp -s "$out/run1.json" "$out/run2.json" || fail "two runs with --seed 7 printed different JSON"
cmp -s "$out/run1.txt" "$out/run2.txt" || fail "two runs with --seed 7 printed different text"
"$lab" model seed9 >/dev/null 2>"$out/bad.err"
rc=$?
[[ $rc == 2 ]] || fail "'model seed9' exited $rc, not 2"
grep -q "pinwheel-lab: bad" "$out/bad.err" || fail "'model seed9': no message naming the token"
python3 - "$out/run1.json" <<'EOF' || exit 1
import json, sys

def fail(msg):
    print("model_smoke: " + msg, file=sys.stderr)
    sys.exit(1)

doc = json.load(open(sys.argv[1]))
m = doc.get("model") or fail("no model object")
want = {
    "seed000": {"off", "push-3.17", "push-4.8", "pinned", "pull"},
    "seed001": {"global-2.4", "percpu", "percpu-fastpath"},
    "seed003": {"off", "push-3.17", "push-4.8", "pinned", "pull"},
}
kinds = ["rx_per_s", "tx_per_s", "loc_per_s", "res_per_s", "cal_per_s"]
named = ["remote_arms", "timer_ipis", "in_per_s"] + kinds
for seed, configs in want.items():
    s = m.get(seed) or fail(seed + ": missing")
    inv = s["invariants"]
    if inv["failed"] or inv["checked"] < 100:
        fail("%s: invariants %s" % (seed, inv))
    rows = s["rows"]
    have = {r["config"] for r in rows}
    if not configs <= have:
        fail("%s: configurations %s, want %s" % (seed, sorted(have), sorted(configs)))
    for r in rows:
        for k in named:
            if not isinstance(r.get(k), (int, float)):
                fail("%s %s: no number %s" % (seed, r["config"], k))
        total = sum(r[k] for k in kinds)
        if abs(total - r["in_per_s"]) > 1e-6 * max(1, total) + 1:
            fail("%s %s: in_per_s %s is not the sum of the kinds %s" %
                 (seed, r["config"], r["in_per_s"], total))
        cfg = r["config"]
        if cfg in ("off", "pull") or (seed == "seed000" and cfg == "pinned"):
            if r["remote_arms"] != 0:
                fail("%s %s: %s remote arms" % (seed, cfg, r["remote_arms"]))
        if cfg == "push-3.17" and r["timer_ipis"] != r["remote_arms"]:
            fail("%s push-3.17: %s timer IPIs for %s remote enqueues" %
                 (seed, r["timer_ipis"], r["remote_arms"]))
        if seed == "seed003" and cfg == "pinned" and r["remote_deq_pct"] != 0:
            fail("seed003 pinned: dequeues by a CPU that does not own the queue")
    if not s["claims"] or any(c["model_ratio"] is None and not c["model"] for c in s["claims"]):
        fail(seed + ": claims without the model's column")
print("model_smoke: ok")
EOF
grep -q "^== seed000, the model" "$out/run1.txt" || fail "text: no seed000 section"
grep -q "^| the seed's claim | the model (deterministic) |" "$out/run1.txt" || fail "text: no claims table"
exit 0
