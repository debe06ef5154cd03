# SPDX-License-Identifier: MIT
"""The Python module `pinwheel` (python/pinwheel) over <pinwheel/link.h>:
exact delays and rates, loss within its binomial bounds, determinism by
seed, mid-run changes, every packet back once, errors with tc's message,
the tree reached through priority, flow and txqueues, the batch form, the
many-a-call form, times in ns beside seconds.  Run by ctest (python_link)
through run_pytest.py."""
import math

import pytest

import pinwheel

MS = 1_000_000


def ledger(link, deps, drops, n):
    """Every tag in range(n) back once as an original; the link's sums."""
    seen = {}
    dups = 0
    for p in list(deps) + list(drops):
        if p.dup:
            dups += 1
            continue
        assert p.tag not in seen, p
        seen[p.tag] = p
    assert sorted(seen) == list(range(n))
    st = link.stats()
    assert st["handed_in"] == n
    assert st["duplicates"] == dups
    assert st["departed"] == len(deps) and st["dropped_total"] == len(drops)
    assert st["in_flight"] == 0


def test_readme_example():
    link = pinwheel.Link("netem delay 20ms 5ms loss 1%", seed=7)
    assert link.send(b"payload", at=0.0, tag=1) is True
    deps = link.advance(to=1.0)
    assert len(deps) == 1
    d = deps[0]
    assert d.data == b"payload" and d.tag == 1
    assert 0.015 <= d.time <= 0.025 and d.time == d.time_ns / 1e9
    out = link.tc("qdisc change dev link root netem delay 50ms")
    assert out == ""
    st = link.stats()
    assert st["sent"] == 1 and st["dropped"] == 0 and st["backlog"] == 0
    assert "delay 50ms" in link.tc("qdisc show dev link")


def test_exact_delay():
    link = pinwheel.Link("netem delay 20ms", seed=1)
    for i in range(200):
        assert link.send(b"p%d" % i, at_ns=i * 100_000, tag=i)
    deps = link.advance(to=1.0)
    assert [d.tag for d in deps] == list(range(200))
    for d in deps:
        assert d.time_ns == d.tag * 100_000 + 20 * MS
        assert d.data == b"p%d" % d.tag and d.len == len(d.data) and not d.dup
    assert link.now == 1.0 and link.now_ns == 10**9
    assert link.drops() == []


def test_exact_rates():
    # tbf: 1000-byte packets at 1 Mbit/s leave 8 ms apart once the burst is spent
    link = pinwheel.Link("tbf rate 1mbit burst 1600 latency 1s", seed=1)
    for i in range(20):
        link.send(1000, at=0.0, tag=i)
    deps = link.advance(to=1.0)
    assert len(deps) == 20
    gaps = [b.time_ns - a.time_ns for a, b in zip(deps, deps[1:])]
    assert all(g == 8 * MS for g in gaps[2:]), gaps
    # netem rate: each packet's wire time exactly, 1000 bytes at 8 Mbit/s = 1 ms
    link = pinwheel.Link("netem rate 8mbit", seed=1)
    link.send_many([1000] * 50, at=0.0)
    deps = link.advance(to=1.0)
    assert [d.time_ns for d in deps] == [(i + 1) * MS for i in range(50)]


@pytest.mark.parametrize("p,seed", [(1.0, 3), (5.0, 4), (20.0, 5)])
def test_loss_binomial(p, seed):
    n = 20000
    link = pinwheel.Link(f"netem loss {p}%", seed=seed)
    taken = link.send_many([b"x" * 64] * n, at_ns=list(range(0, n * 1000, 1000)))
    deps = link.advance(to=1.0)
    drops = link.drops()
    assert taken == len(deps)  # netem's loss counts as taken-then-dropped or not: both add up
    lost = len(drops)
    assert all(d.reason == "netem_loss" for d in drops)
    mean, sd = n * p / 100, math.sqrt(n * p / 100 * (1 - p / 100))
    # within 5 standard deviations: a correct netem fails this with p < 1e-6
    assert abs(lost - mean) <= 5 * sd, (lost, mean, sd)
    ledger(link, deps, drops, n)


def run_lossy(seed):
    link = pinwheel.Link("netem delay 20ms 5ms distribution normal loss 5% duplicate 2% "
                         "corrupt 2% reorder 5% gap 5", seed=seed)
    out = []
    for i in range(3000):
        link.send(bytes([i % 256]) * (20 + i % 50), at_ns=i * 200_000, tag=i)
        if i % 100 == 99:
            out += [(d.time_ns, d.tag, d.data, d.dup) for d in link.advance()]
    out += [(d.time_ns, d.tag, d.data, d.dup) for d in link.advance(to=2.0)]
    drops = [(d.time_ns, d.tag, d.reason) for d in link.drops()]
    return out, drops


def test_determinism_by_seed():
    a, b, c = run_lossy(42), run_lossy(42), run_lossy(43)
    assert a == b
    assert a != c
    deps, drops = a
    assert any(dup for _, _, _, dup in deps)           # duplicates seen
    assert any(data != bytes([tag % 256]) * (20 + tag % 50)  # corruption seen
               for _, tag, data, _ in deps)
    assert any(x[1] > y[1] for x, y in zip(deps, deps[1:]))  # reordered
    assert drops


def test_midrun_change_and_flush():
    link = pinwheel.Link("netem delay 20ms", seed=1)
    for i in range(5):
        link.send(b"a", at=i * 0.001, tag=i)
    link.tc("qdisc change dev link root netem delay 50ms")
    for i in range(5, 10):
        link.send(b"b", at=i * 0.001, tag=i)
    deps = link.advance(to=0.1)
    assert [d.time_ns for d in deps] == [i * MS + (20 if i < 5 else 50) * MS for i in range(10)]
    # a replace flushes what the old root held, at the clock
    for i in range(10, 20):
        link.send(b"c", tag=i)
    link.tc("qdisc replace dev link root pfifo")
    drops = link.drops()
    assert [d.tag for d in drops] == list(range(10, 20))
    assert all(d.reason == "flush" and d.time == 0.1 for d in drops)
    assert link.send(b"d", at=0.2, tag=20)
    deps2 = link.advance()
    assert [(d.tag, d.time) for d in deps2] == [(20, 0.2)]
    ledger(link, deps + deps2, drops, 21)


def test_every_packet_back_once_with_close():
    link = pinwheel.Link("netem delay 100ms limit 30", seed=9)
    deps, drops = [], []
    res = [link.send(100, at=0.0, tag=i) for i in range(50)]
    assert res.count(False) == 20
    drops += link.drops()
    assert [d.reason for d in drops] == ["qdisc_limit"] * 20
    link.tc("qdisc del dev link root")
    drops += link.drops()
    link.tc("qdisc add dev link root tbf rate 100kbit burst 1600 latency 10s")
    link.send_many([1000] * 10, at=0.05, tags=range(50, 60))
    deps += link.advance(to=0.1)
    link.close()
    drops += link.drops()
    assert any(d.reason == "dev_destroy" for d in drops)
    with pytest.raises(ValueError):
        link.send(b"x")
    ledger(link, deps, drops, 60)


def test_errors_carry_tcs_message():
    with pytest.raises(ValueError) as e:
        pinwheel.Link("netem delay 20ms lossy 5%")
    assert "lossy" in str(e.value)
    assert e.value.errno == 22
    with pytest.raises(ValueError) as e:
        pinwheel.Link("bogus")
    assert str(e.value) == "Error: Specified qdisc kind is unknown."  # the kernel's, as tc prints it
    with pytest.raises(ValueError) as e:
        pinwheel.Link(batch="qdisc add dev link root handle 1: htb default 10\n"
                            "class add dev link parent 1: classid 1:10 htb rate 1mbitt\n")
    assert str(e.value).startswith("line 2: ")
    with pytest.raises(ValueError) as e:  # no file is read
        pinwheel.Link("netem delay 10ms 1ms distribution /etc/passwd")
    assert e.value.errno == 1
    link = pinwheel.Link("netem delay 20ms")
    link.send(b"x", at=0.5)
    with pytest.raises(ValueError) as e:
        link.send(b"y", at=0.4)
    assert "earlier than the link's clock" in str(e.value)
    with pytest.raises(ValueError):
        link.advance(to=0.1)
    with pytest.raises(ValueError) as e:
        link.tc("qdisc change dev link root netem delay 5xx")
    assert "latency" in str(e.value)
    with pytest.raises(ValueError) as e:
        link.tc("qdisc change dev eth0 root netem delay 5ms")
    assert "eth0" in str(e.value)
    with pytest.raises(ValueError):
        pinwheel.Link("pfifo", txqueues=0)
    assert link.stats()["handed_in"] == 1  # the refused calls did nothing


def test_htb_classes_by_priority():
    link = pinwheel.Link(batch="qdisc add dev link root handle 1: htb default 20\n"
                               "class add dev link parent 1: classid 1:10 htb rate 1mbit\n"
                               "class add dev link parent 1: classid 1:20 htb rate 8mbit\n")
    for i in range(10):
        link.send(1000, at=0.0, tag=i, priority=(1 << 16) | 0x10)
        link.send(1000, at=0.0, tag=100 + i)
    deps = link.advance(to=1.0)
    slow = [d.time_ns for d in deps if d.tag < 100]
    fast = [d.time_ns for d in deps if d.tag >= 100]
    assert [b - a for a, b in zip(slow, slow[1:])][2:] == [8 * MS] * 7
    assert [b - a for a, b in zip(fast, fast[1:])][2:] == [1 * MS] * 7
    out = link.tc("-s class show dev link")
    assert out.count("Sent 10000 bytes 10 pkt") == 2


def test_fq_flows_by_hash():
    def last(flows, n):
        link = pinwheel.Link("fq maxrate 8mbit quantum 1514 initial_quantum 1514")
        for i in range(n):
            for f in range(flows):
                link.send(1000, tag=i * flows + f, flow=0x100 + f)
        return link.advance(to=1.0)[-1].time_ns
    assert last(2, 10) == last(1, 10) < last(1, 20)


def test_mq_queues_by_flow():
    link = pinwheel.Link(batch="qdisc add dev link root handle 1: mq\n" + "".join(
        f"qdisc replace dev link parent 1:{q + 1} netem delay {10 * (q + 1)}ms\n"
        for q in range(4)), txqueues=4)
    for q in range(4):
        link.send(b"q", at=0.0, tag=q, flow=(q << 30) | 7)
    deps = link.advance(to=1.0)
    assert [(d.tag, d.txq, d.time_ns) for d in deps] == [
        (q, q, 10 * (q + 1) * MS) for q in range(4)]


def test_qdisc_and_batch_together():
    link = pinwheel.Link("handle 1: htb default 10",
                         batch="class add dev link parent 1: classid 1:10 htb rate 8mbit\n"
                               "qdisc add dev link parent 1:10 netem delay 5ms")
    link.send(1000, at=0.0, tag=1)
    assert [d.time_ns for d in link.advance(to=1.0)] == [5 * MS]


def test_duplicate_and_corrupt_visible():
    link = pinwheel.Link("netem duplicate 100% corrupt 100%", seed=5)
    link.send(b"\x00" * 32, tag=7)
    deps = link.advance(to=0.001)
    assert len(deps) == 2 and [d.dup for d in deps].count(True) == 1
    assert all(d.tag == 7 for d in deps)
    # the copy is made before the original is corrupted (the kernel's order)
    orig = [d for d in deps if not d.dup][0]
    assert sum(bin(b).count("1") for b in orig.data) == 1


def test_send_many_equals_send():
    words = "netem delay 10ms 2ms loss 10% duplicate 5%"
    a, b = pinwheel.Link(words, seed=3), pinwheel.Link(words, seed=3)
    pk = [bytes([i % 256]) * (10 + i % 30) for i in range(2000)]
    times = [i * 0.0001 for i in range(2000)]
    ta = a.send_many(pk, at=times, flow=list(range(2000)))
    tb = sum(b.send(p, at=t, flow=i) for i, (p, t) in enumerate(zip(pk, times)))
    assert ta == tb
    da = [(d.time_ns, d.tag, d.data, d.dup) for d in a.advance(to=1.0)]
    db = [(d.time_ns, d.tag, d.data, d.dup) for d in b.advance(to=1.0)]
    assert da == db
    # a refusal stops it at the packet, the ones before it sent
    with pytest.raises(ValueError) as e:
        a.send_many([b"x"] * 3, at=[2.0, 2.0, 1.5])
    assert "packet 2:" in str(e.value)
    assert a.stats()["handed_in"] == 2002


def test_stats_text_and_dict():
    link = pinwheel.Link("netem delay 1s limit 5")
    for i in range(8):
        link.send(b"abcd", tag=i)
    st = link.stats()
    assert st["backlog"] == 20 and st["qlen"] == 5 and st["dropped"] == 3
    assert st["drops_by_reason"] == {"qdisc_limit": 3}
    txt = link.tc("-s qdisc show dev link")
    assert "backlog 20b 5p" in txt and "dropped 3" in txt
    assert link.tc("-j qdisc show dev link").startswith("[")


def test_context_manager_and_free():
    with pinwheel.Link("netem delay 1s") as link:
        link.send(b"x", tag=1)
    assert [d.reason for d in link.drops()] == ["dev_destroy"]
    link.free()
    with pytest.raises(ValueError):
        link.stats()
