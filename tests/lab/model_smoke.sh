#!/bin/bash
# pinwheel-lab model all --smoke: the model's structure and invariants (not
# its numbers): the same --seed prints the same bytes (JSON and text, run
# twice); every seed's rows carry their configurations and the named counts;
# the invariants hold (the model's own count, and again here from the
# JSON: no remote arms under OFF, pinned (seed000) and PULL; under the 3.17
# rule the timer IPIs equal the remote enqueues; in = the sum of the kinds);
# the verdicts' words (reproduced only inside the size band the claim
# states, "direction only" otherwise; an infinite ratio the string "inf");
# seed000's rows carry r (runnable_avg) and cs beside the seed's columns,
# and its scheduler's counts (newly-idle balancing runs);
# seed003's ACKs are all accounted for (sent, queued, in the NIC, dropped at
# netem's limit), segments are left to the readers (3.17's prequeue and
# backlog), ksoftirqd is never woken inside __do_softirq()'s budget,
# and with one CPU a queue (--cpus 8) the unmigrated rows take no lock
# another CPU holds (_raw_spin_lock 0%) while push-3.17 does;
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
    for c in s["claims"]:
        # the words: the verdict opens with the word the JSON names; a
        # ratio is a number, "inf"/"-inf" (never null: null is "not run")
        word = c.get("word")
        if word not in ("reproduced", "direction only", "not reproduced", "inconclusive"):
            fail("%s %s: word %r" % (seed, c["id"], word))
        if not c["verdict"].startswith("model: " + word):
            fail("%s %s: verdict %r does not say %r" % (seed, c["id"], c["verdict"], word))
        r = c["model_ratio"]
        if not (isinstance(r, (int, float)) or r in ("inf", "-inf")):
            fail("%s %s: model_ratio %r" % (seed, c["id"], r))
        band = c.get("size_band")
        if band is not None:
            if not (isinstance(band, list) and len(band) == 2 and band[0] < band[1]):
                fail("%s %s: size_band %r" % (seed, c["id"], band))
            if c["seed_dir"] == 0 or not isinstance(c["seed_ratio"], (int, float)):
                fail("%s %s: a size band without a seed figure" % (seed, c["id"]))
            x = float(r)
            # "reproduced" only inside the band stated with the claim
            if word == "reproduced" and not band[0] - 1e-4 <= x <= band[1] + 1e-4:
                fail("%s %s: reproduced at x%s, outside its band %s" % (seed, c["id"], r, band))
            def fmt(v):  # lab_fmt_ratio(): 3 significant figures
                return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v
            if "size band x%s-%s" % (fmt(band[0]), fmt(band[1])) not in c["claim"]:
                fail("%s %s: the claim %r does not state its band" % (seed, c["id"], c["claim"]))
        elif c["seed_dir"] != 0 and isinstance(c["seed_ratio"], (int, float)):
            fail("%s %s: a seed figure without a size band" % (seed, c["id"]))
# seed000's rows carry vmstat's r and cs beside the seed's own columns
for r in m["seed000"]["rows"]:
    for k in ("runnable_avg", "cs_per_s"):
        if not isinstance(r.get(k), (int, float)) or r[k] < 0:
            fail("seed000 %s: no %s" % (r["config"], k))
    # 3.17's scheduler (model_sched.c): its counts, and newly-idle
    # balancing run on the CPUs whose threads sleep
    for k in ("sched_moved_pct", "sched_affine_pct", "sched_newidle_per_s",
              "sched_pulls_per_s", "r_top_cpu"):
        if not isinstance(r.get(k), (int, float)) or r[k] < 0:
            fail("seed000 %s: no %s" % (r["config"], k))
    if not r["sched_newidle_per_s"] > 0 or r["r_top_cpu"] > r["runnable_avg"] + 1e-9:
        fail("seed000 %s: newly-idle %s/s, r on the top CPU %s of %s" %
             (r["config"], r["sched_newidle_per_s"], r["r_top_cpu"], r["runnable_avg"]))
    want_seed = r["config"] in ("off", "push-3.17")
    for k in ("seed_r", "seed_cs_per_s"):
        if want_seed != isinstance(r.get(k), (int, float)):
            fail("seed000 %s: %s %r" % (r["config"], k, r.get(k)))
# seed003's pinned watchdogs make no foreign dequeue: an infinite ratio, "inf"
if not any(c["model_ratio"] == "inf" for c in m["seed003"]["claims"]):
    fail("seed003: no claim's ratio written \"inf\"")
# seed003's transmit path (3.17's, model_seed003_tx.c): every ACK enqueued
# is sent, queued, in the NIC or dropped at netem's limit; ksoftirqd only
# past __do_softirq()'s budget; the lock shares as perf names them
for r in m["seed003"]["rows"]:
    cfg = r["config"]
    made = r["acks_made"]
    rest = r["acks_freed"] + r["acks_queued"] + r["acks_in_nic"]
    if made <= 0 or made != rest:
        fail("seed003 %s: %s ACKs made, %s freed + queued + in the NIC" % (cfg, made, rest))
    if r["acks_dropped"] > r["acks_freed"]:
        fail("seed003 %s: more drops than ACKs freed" % cfg)
    if r["ksoftirqd_early"] != 0:
        fail("seed003 %s: ksoftirqd woken inside the budget" % cfg)
    for k in ("spin_pct", "spin_irqsave_pct", "backlog_avg", "ksoftirqd_cpus"):
        if not isinstance(r.get(k), (int, float)) or r[k] < 0:
            fail("seed003 %s: no %s" % (cfg, k))
    # 3.17's prequeue and backlog: segments left to the reader's context,
    # whose ACKs leave from its CPU into some netem
    if not r.get("reader_q_max", 0) >= 1 or not r.get("enq_cpus_per_q", 0) > 0:
        fail("seed003 %s: no segment left to a reader (reader_q_max %s, enq_cpus_per_q %s)"
             % (cfg, r.get("reader_q_max"), r.get("enq_cpus_per_q")))
    # the skb's cache lines (model_seed003_lines.c): charged where dequeues
    # leave their queue's CPU, a footprint counted, none cold at the
    # delays' backlog (2.6 MB against 16 MB)
    for k in ("skb_line_ns_per_deq", "skb_cold_pct", "skb_footprint_mb_max", "root_held_pct"):
        if not isinstance(r.get(k), (int, float)) or r[k] < 0:
            fail("seed003 %s: no %s" % (cfg, k))
    if r.get("remote_deq_pct", 0) > 0 and not r["skb_line_ns_per_deq"] > 0:
        fail("seed003 %s: foreign dequeues but no skb line charged" % cfg)
    if not r["skb_footprint_mb_max"] > 0 or r["skb_cold_pct"] != 0:
        fail("seed003 %s: footprint %s MB, %s%% cold" % (cfg, r["skb_footprint_mb_max"],
                                                       r["skb_cold_pct"]))
ids = [c["id"] for c in m["seed000"]["claims"]]
if "in_push_over_sk_pinned" not in ids or "in_on_over_fix" in ids:
    fail("seed000: the model's claims %s (its pinned row is socket timers only)" % ids)
print("model_smoke: ok")
EOF
# one CPU per queue (8 CPUs, XPS c -> c) and watchdogs that stay with their
# queue: nobody else takes a queue's locks, so no _raw_spin_lock at all;
# migrated, some
"$lab" model seed003 --smoke --cpus 8 --json --seed 7 >"$out/cpus8.json" 2>>"$out/run1.err" ||
	fail "model seed003 --cpus 8 exited $?"
python3 - "$out/cpus8.json" <<'EOF' || exit 1
import json, sys
rows = {r["config"]: r for r in json.load(open(sys.argv[1]))["model"]["seed003"]["rows"]}
def fail(msg):
    print("model_smoke: " + msg, file=sys.stderr)
    sys.exit(1)
for cfg in ("pinned", "off", "pull"):
    if rows[cfg]["spin_pct"] != 0 or rows[cfg]["remote_deq_pct"] != 0:
        fail("seed003 --cpus 8 %s: spin %s%%, foreign dequeues %s%% (one CPU a queue)" %
             (cfg, rows[cfg]["spin_pct"], rows[cfg]["remote_deq_pct"]))
if not rows["push-3.17"]["spin_pct"] > 0 or not rows["push-3.17"]["remote_deq_pct"] > 0:
    fail("seed003 --cpus 8 push-3.17: no lock wait or no foreign dequeue")
EOF
grep -q "^== seed000, the model" "$out/run1.txt" || fail "text: no seed000 section"
grep -q "^| the seed's claim | the model (deterministic) |" "$out/run1.txt" || fail "text: no claims table"
exit 0
