# SPDX-License-Identifier: MIT
"""A toy retransmission scheme against 5% loss and 20 ms +- 5 ms each way,
on two links (data and acks): selective repeat with a window of 8 and a
100 ms retransmission timeout, 300 messages.  The links are seeded, so the
test passes or fails the same way on every run: the same losses, the same
delays, the same retransmissions, the same finishing time."""
import pinwheel

MS = 1_000_000


def transfer(seed, n=300, window=8, rto_ns=100 * MS):
    data = pinwheel.Link("netem delay 20ms 5ms loss 5%", seed=seed)
    acks = pinwheel.Link("netem delay 20ms 5ms loss 5%", seed=seed + 1)
    base, nxt = 0, 0           # the sender's window [base, nxt)
    deadline = {}              # seq -> when to send it again
    acked = set()
    got, delivered = {}, []    # the receiver: out-of-order buffer, in-order output
    sends = retransmits = 0
    t = 0
    trace = []
    while base < n:
        # the sender acts at each millisecond: new packets, then timeouts
        while nxt < n and nxt < base + window:
            data.send(b"msg%d" % nxt, at_ns=t, tag=nxt)
            deadline[nxt] = t + rto_ns
            nxt += 1
            sends += 1
        for seq in sorted(s for s, d in deadline.items() if d <= t):
            data.send(b"msg%d" % seq, at_ns=t, tag=seq)
            deadline[seq] = t + rto_ns
            sends += 1
            retransmits += 1
        t += MS
        # the receiver: each data packet acked at the time it arrives
        for d in data.advance(to_ns=t):
            assert d.data == b"msg%d" % d.tag
            acks.send(b"ack", at_ns=d.time_ns, tag=d.tag)
            if d.tag >= len(delivered) and d.tag not in got:
                got[d.tag] = d.data
                while len(delivered) in got:
                    delivered.append(got.pop(len(delivered)))
            trace.append(("data", d.time_ns, d.tag))
        for a in acks.advance(to_ns=t):
            trace.append(("ack", a.time_ns, a.tag))
            if a.tag not in acked:
                acked.add(a.tag)
                deadline.pop(a.tag, None)
        while base in acked:
            base += 1
        assert t < 60_000 * MS, "the transfer never finished"
    lost = len(data.drops()) + len(acks.drops())
    return {"finished_ns": t, "sends": sends, "retransmits": retransmits, "lost": lost,
            "delivered": delivered, "trace": trace}


def test_retransmission_is_reproducible():
    a = transfer(seed=2026)
    b = transfer(seed=2026)
    assert a == b                                   # the same run, event for event
    assert a["delivered"] == [b"msg%d" % i for i in range(300)]  # all, in order, once
    assert a["retransmits"] > 0 and a["lost"] > 0   # the losses happened, and were repaired
    # what a seeded run gives: fixed, so a change in the scheme shows here
    assert 300 + a["retransmits"] == a["sends"]
    # seed 2026's run, the same on every machine (a change of netem's draws
    # or of this scheme changes it: then read the new figures and set them)
    assert (a["finished_ns"], a["retransmits"], a["lost"]) == (3486 * MS, 38, 38)


def test_another_seed_another_run():
    a, c = transfer(seed=2026), transfer(seed=7)
    assert c["delivered"] == a["delivered"]
    assert c["trace"] != a["trace"]
