#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
UDP proxies ("protocol":"udp", pinwheel only: toxiproxy makes a TCP
proxy of one): datagrams through the relay byte-exact, toxics mapped on
the relay's qdiscs, the statistics' ledger across disable and enable,
and the tc toxic's batch, schedule and accuracy report there.

Part of tests/netem_api/api_test.py (the runner: it imports this module,
runs its @test checks in its ORDER and prints the DIFF lines).  Threads:
the runner's main thread; echo servers on threads of their own.
"""

import socket
import threading
import time

from common import *  # noqa: F401,F403 (the shared helpers)


def udp_echo():
    """A UDP echo server on a thread: (socket, port); b"quit" stops it."""
    sk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sk.bind((HOST, 0))

    def loop():
        while True:
            d, a = sk.recvfrom(65535)
            if d == b"quit":
                return
            sk.sendto(d, a)
    threading.Thread(target=loop, daemon=True).start()
    return sk, sk.getsockname()[1]


def udp_round_trips(listen, n, tag):
    """@n datagrams through the proxy at @listen, each answered byte-exact;
    the mean round trip in seconds."""
    host, port = parse_hostport(listen)
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    c.settimeout(5)
    t0 = time.monotonic()
    for i in range(n):
        m = ("%s-%d-" % (tag, i)).encode() * 7
        c.sendto(m, (host, port))
        d = c.recvfrom(65535)[0]
        check(d == m, "udp proxy: datagram %d came back as %r, sent %r" % (i, d, m))
    c.close()
    return (time.monotonic() - t0) / n


def udp_balance(ctx, name, settle=True):
    """@name's stats, each stream checked to balance; with @settle, once
    nothing is in flight (a datagram is counted out after its send
    returns, so a client may have its answer a moment before), or 2 s."""
    deadline = time.monotonic() + 2
    while True:
        r = expect(ctx, "GET", "/proxies/%s/stats" % name, 200)
        if (not settle or time.monotonic() > deadline or
                all(r.json.get(d, {}).get("backlog", 0) == 0 for d in ("upstream", "downstream"))):
            break
        time.sleep(0.01)
    for d in ("upstream", "downstream"):
        s = r.json[d]
        check(s["rx"] + s["clones"] == s["out"] + s["dropped_total"] + s["backlog"],
              "udp stats %s do not balance: %r" % (d, s))
    return r.json


def udp_send(listen, n, tag):
    """@n datagrams to the proxy at @listen, no answer awaited."""
    host, port = parse_hostport(listen)
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(n):
        c.sendto(("%s-%d" % (tag, i)).encode(), (host, port))
    c.close()


def udp_counts(js, stream):
    s = js[stream]
    return (s["rx"], s["out"], s["dropped_total"], s["backlog"])


@test
def udp_proxy(ctx):
    """pinwheel's "protocol":"udp" proxies: a UDP relay per proxy."""
    what = per_server(ctx, 'a proxy created with "protocol":"udp"', "a TCP proxy (the field ignored)",
                      "a UDP relay", "toxiproxy is TCP-only (toxiproxy#39)")
    if ctx.kind != "pinwheel":
        return
    del what
    echo, eport = udp_echo()
    up = "%s:%d" % (HOST, eport)
    try:
        expect(ctx, "POST", "/proxies", 400, {"name": "ub", "upstream": up, "protocol": "sctp"})
        r = expect(ctx, "POST", "/proxies", 201, {"name": "u1", "listen": HOST + ":0", "upstream": up,
                                                  "protocol": "udp"})
        check(r.json.get("protocol") == "udp", "udp proxy JSON: %r" % r.json)
        lis = r.json["listen"]
        check(parse_hostport(lis)[1] != 0, "udp listen port 0 not resolved: %r" % lis)
        udp_round_trips(lis, 20, "a")
        js = udp_balance(ctx, "u1")
        check(js["upstream"]["rx"] == 20 and js["upstream"]["out"] == 20 and
              js["downstream"]["out"] == 20, "udp stats counts: %r" % js)
        expect(ctx, "POST", "/proxies/u1/toxics", 200,
               {"type": "latency", "attributes": {"latency": 40, "jitter": 0}})
        rtt = udp_round_trips(lis, 5, "b")
        check(rtt >= 0.040, "udp latency 40 ms: round trip %.4f s, early" % rtt)
        check(rtt < 2.0, "udp latency 40 ms: round trip %.4f s" % rtt)
        expect(ctx, "POST", "/proxies/u1/toxics", 200,
               {"type": "bandwidth", "stream": "upstream", "attributes": {"rate": 1000}})
        for t in ("slicer", "slow_close", "timeout", "reset_peer", "limit_data"):
            r = expect(ctx, "POST", "/proxies/u1/toxics", 400, {"type": t, "attributes": {}})
            check(t in r.json["error"], "udp %s refusal does not name it: %r" % (t, r.json))
        r = expect(ctx, "POST", "/proxies/u1/toxics", 400,
                   {"type": "latency", "name": "half", "toxicity": 0.5, "attributes": {"latency": 1}})
        check("toxicity" in r.json["error"], "udp toxicity refusal: %r" % r.json)
        # a replaced root drops what it held, counted: nothing lost silently
        expect(ctx, "DELETE", "/proxies/u1/toxics/bandwidth_upstream", 204)
        expect(ctx, "POST", "/proxies/u1/toxics", 200,
               {"type": "tc", "name": "slow", "stream": "upstream",
                "attributes": {"qdisc": "netem delay 2000ms"}})
        host, port = parse_hostport(lis)
        c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for i in range(5):
            c.sendto(b"held-%d" % i, (host, port))
        # all 5 read and queued in netem
        before = poll(lambda: udp_balance(ctx, "u1", False)["upstream"], lambda b: b["backlog"] >= 5)
        # netem to tbf: a replace of the root (netem to netem is a change, kept)
        expect(ctx, "PATCH", "/proxies/u1/toxics/slow", 200,
               {"attributes": {"qdisc": "tbf rate 1mbit burst 32kb latency 50ms"}})
        time.sleep(0.5)
        after = udp_balance(ctx, "u1")["upstream"]
        c.close()
        check(after["dropped_total"] - before["dropped_total"] == 5 and after["backlog"] == 0,
              "a replaced root's 5 queued datagrams are not counted: %r -> %r" % (before, after))
        expect(ctx, "PATCH", "/proxies/u1", 400, {"protocol": "tcp"})
        expect(ctx, "POST", "/proxies/u1", 200, {"enabled": False})
        expect(ctx, "POST", "/proxies/u1", 200, {"enabled": True})
        udp_round_trips(lis, 3, "c")
        udp_balance(ctx, "u1")
        expect(ctx, "DELETE", "/proxies/u1", 204)
        r = expect(ctx, "POST", "/populate", 201,
                   [{"name": "u2", "listen": HOST + ":0", "upstream": up, "protocol": "udp"}])
        p = r.json["proxies"][0]
        check(p.get("protocol") == "udp", "populated udp proxy: %r" % p)
        udp_round_trips(p["listen"], 3, "d")
        # a TCP proxy's JSON has no "protocol" (toxiproxy's, unchanged)
        r = expect(ctx, "GET", "/proxies", 200)
        check(all("protocol" not in v for k, v in r.json.items() if k != "u2"),
              "a TCP proxy shows protocol: %r" % r.json)
    finally:
        delete_proxy(ctx, "u1")
        delete_proxy(ctx, "u2")
        echo.sendto(b"quit", echo.getsockname())
        echo.close()


@test
def udp_stats_ledger(ctx):
    """A UDP proxy's counters across disable and enable: what a disable
    dropped (in flight at the stop: dev_destroy) stays counted, and every
    stream balances exactly over all of the proxy's relays."""
    if ctx.kind != "pinwheel":
        return
    echo, eport = udp_echo()
    up = "%s:%d" % (HOST, eport)
    try:
        r = expect(ctx, "POST", "/proxies", 201, {"name": "ul", "listen": HOST + ":0",
                                                  "upstream": up, "protocol": "udp"})
        lis = r.json["listen"]
        udp_round_trips(lis, 10, "a")
        # 4 datagrams held upstream by a 30 s delay when the proxy stops
        expect(ctx, "POST", "/proxies/ul/toxics", 200,
               {"type": "tc", "name": "hold", "stream": "upstream",
                "attributes": {"qdisc": "netem delay 30s"}})
        udp_send(lis, 4, "held")
        deadline = time.monotonic() + 5
        while udp_balance(ctx, "ul", False)["upstream"]["backlog"] < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        js = udp_balance(ctx, "ul", False)
        check(udp_counts(js, "upstream") == (14, 10, 0, 4), "before the disable: %r" % js)
        expect(ctx, "POST", "/proxies/ul", 200, {"enabled": False})
        js = expect(ctx, "GET", "/proxies/ul/stats", 200).json
        if js.get("counted_since") != "created":
            print("    NOTE: the registry keeps no ledger for UDP proxies (counted_since %r): "
                  "the sums across enables are not checked" % js.get("counted_since"))
        else:
            js = udp_balance(ctx, "ul")
            check(udp_counts(js, "upstream") == (14, 10, 4, 0) and
                  js["upstream"]["dropped"].get("dev_destroy") == 4 and
                  udp_counts(js, "downstream") == (10, 10, 0, 0),
                  "a disabled proxy's counters: %r" % js)
            check(js["upstream"]["tc"] == [] and js["clients"] == 0,
                  "a disabled proxy shows a device: %r" % js)
        expect(ctx, "DELETE", "/proxies/ul/toxics/hold", 204)
        expect(ctx, "POST", "/proxies/ul", 200, {"enabled": True})
        udp_round_trips(lis, 5, "b")
        js = udp_balance(ctx, "ul")
        if js.get("counted_since") == "created":
            check(udp_counts(js, "upstream") == (19, 15, 4, 0) and
                  udp_counts(js, "downstream") == (15, 15, 0, 0) and js["clients_new"] == 3,
                  "the sums over two enables: %r" % js)
            # a deleted proxy's ledger goes with it
            expect(ctx, "DELETE", "/proxies/ul", 204)
            r = expect(ctx, "POST", "/proxies", 201, {"name": "ul", "listen": HOST + ":0",
                                                      "upstream": up, "protocol": "udp"})
            js = udp_balance(ctx, "ul")
            check(udp_counts(js, "upstream") == (0, 0, 0, 0), "a new proxy's counters: %r" % js)
        else:
            check(udp_counts(js, "upstream") == (5, 5, 0, 0), "after the enable: %r" % js)
    finally:
        delete_proxy(ctx, "ul")
        echo.sendto(b"quit", echo.getsockname())
        echo.close()


@test
def udp_tc_report(ctx):
    """A UDP proxy's stats: per stream the device's report (the achieved
    beside the configured), the shape of a TCP proxy's tc toxic's; a tc
    toxic's batch and schedule run on the stream's device; a change tc
    refuses is a 400 that leaves the old one running."""
    if ctx.kind != "pinwheel":
        return
    echo, eport = udp_echo()
    up = "%s:%d" % (HOST, eport)
    try:
        r = expect(ctx, "POST", "/proxies", 201, {"name": "ur", "listen": HOST + ":0",
                                                  "upstream": up, "protocol": "udp"})
        lis = r.json["listen"]
        expect(ctx, "POST", "/proxies/ur/toxics", 200,
               {"type": "latency", "attributes": {"latency": 20}})
        udp_round_trips(lis, 10, "a")
        js = udp_balance(ctx, "ur")
        d = js["downstream"]
        check(d["latency_ms"] == 20 and d["check"] in ("pass", "fail", "not judged") and
              len(d["tc"]) == 1, "downstream stats: %r" % d)
        rep = d["tc"][0]
        for k in ("toxic", "device", "qdiscs", "check", "why"):
            check(k in rep, "the report lacks %r: %r" % (k, rep))
        check(rep["toxic"] == "latency_downstream" and rep["device"] == "down",
              "the report's toxic and device: %r" % rep)
        acc = rep["qdiscs"][0]["accuracy"]
        check(acc["sojourn_ns"]["count"] == 10 and acc["configured_sojourn_ns"]["p50"] == 20000000,
              "the achieved beside the configured: %r" % acc)
        check(acc["sojourn_ns"]["min"] >= 20000000,
              "a datagram left early: sojourn %r" % acc["sojourn_ns"])
        check(js["upstream"]["tc"][0]["toxic"] == "" and js["upstream"]["latency_ms"] == 0,
              "upstream report: %r" % js["upstream"])
        # a batch: an htb tree, a netem under its class, on the upstream device
        tree = ("qdisc add dev X root handle 1: htb default 10\n"
                "# a comment\n"
                "tc class add dev X parent 1: classid 1:10 htb rate 100mbit\n"
                "qdisc add dev X parent 1:10 handle 10: netem delay 30ms\n")
        expect(ctx, "POST", "/proxies/ur/toxics", 200,
               {"type": "tc", "name": "tree", "stream": "upstream", "attributes": {"batch": tree}})
        rtt = udp_round_trips(lis, 3, "b")
        check(rtt >= 0.050, "batch netem 30 ms + latency 20 ms: round trip %.4f s, early" % rtt)
        rep = udp_balance(ctx, "ur")["upstream"]["tc"][0]
        kinds = sorted(q["kind"] for q in rep["qdiscs"])
        check(rep["toxic"] == "tree" and kinds == ["htb", "netem"], "the tree's report: %r" % rep)
        # a batch tc refuses (a class under a qdisc that does not exist): 400, the old tree stays
        r = expect(ctx, "PATCH", "/proxies/ur/toxics/tree", 400,
                   {"attributes": {"batch": "qdisc add dev X root handle 1: htb default 10\n"
                                            "class add dev X parent 7: classid 7:10 htb rate 1mbit"}})
        check("batch line 2" in r.json["error"], "a refused batch line is not named: %r" % r.json)
        r = expect(ctx, "GET", "/proxies/ur/toxics/tree", 200)
        check(r.json["attributes"].get("batch") == tree, "the refused batch was kept: %r" % r.json)
        rtt = udp_round_trips(lis, 3, "c")
        check(rtt >= 0.050, "the old tree after a refused change: round trip %.4f s" % rtt)
        rep = udp_balance(ctx, "ur")["upstream"]["tc"][0]
        check(sorted(q["kind"] for q in rep["qdiscs"]) == ["htb", "netem"],
              "the old tree after a refused change: %r" % rep)
        # a schedule: 1 ms, then 60 ms from 0.2 s on
        expect(ctx, "DELETE", "/proxies/ur/toxics/latency_downstream", 204)
        expect(ctx, "POST", "/proxies/ur/toxics", 200,
               {"type": "tc", "name": "steps", "attributes": {
                   "qdisc": "netem delay 1ms",
                   "schedule": "0.2s qdisc change dev X root netem delay 60ms\n"}})
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            s = udp_balance(ctx, "ur")["downstream"]["tc"][0].get("schedule", {})
            if s.get("applied", 0) >= 1:
                break
            time.sleep(0.05)
        rep = udp_balance(ctx, "ur")["downstream"]["tc"][0]
        check(rep["toxic"] == "steps" and rep.get("schedule", {}).get("applied") == 1 and
              rep["schedule"].get("failed") == 0, "the schedule's report: %r" % rep)
        rtt = udp_round_trips(lis, 2, "d")
        check(rtt >= 0.090, "after the schedule's step (60 + 30 ms): round trip %.4f s, early" % rtt)
        # a schedule tc refuses: 400 naming its line, the old one stays
        r = expect(ctx, "PATCH", "/proxies/ur/toxics/steps", 400,
                   {"attributes": {"schedule": "0.1s qdisc change dev X root netem delay 5ms\n"
                                               "0.2s qdisc frobnicate dev X root\n"}})
        check("schedule:2" in r.json["error"], "a refused schedule line is not named: %r" % r.json)
        rep = udp_balance(ctx, "ur")["downstream"]["tc"][0]
        check(rep.get("schedule", {}).get("steps") == 1, "the old schedule after a refusal: %r" % rep)
        # disabled and enabled: the tree and the schedule set up again on the new relay
        expect(ctx, "POST", "/proxies/ur", 200, {"enabled": False})
        expect(ctx, "POST", "/proxies/ur", 200, {"enabled": True})
        js = udp_balance(ctx, "ur")
        check(sorted(q["kind"] for q in js["upstream"]["tc"][0]["qdiscs"]) == ["htb", "netem"] and
              js["downstream"]["tc"][0].get("schedule", {}).get("steps") == 1,
              "the tree and the schedule after an enable: %r" % js)
        rtt = udp_round_trips(lis, 2, "f")
        check(rtt >= 0.030, "the tree after an enable: round trip %.4f s, early" % rtt)
        # the tc toxic gone: a plain netem again, no schedule
        expect(ctx, "DELETE", "/proxies/ur/toxics/steps", 204)
        rep = udp_balance(ctx, "ur")["downstream"]["tc"][0]
        check("schedule" not in rep and rep["toxic"] == "", "no toxic, no schedule: %r" % rep)
        udp_round_trips(lis, 2, "e")
        udp_balance(ctx, "ur")
    finally:
        delete_proxy(ctx, "ur")
        echo.sendto(b"quit", echo.getsockname())
        echo.close()


# SIGTERM is last: it stops the server


@test
def udp_refusals(ctx):
    """What a "protocol":"udp" proxy refuses (pinwheel: 400 naming the
    cause; toxiproxy, whose proxy is TCP, takes each): a stream-only toxic,
    a toxicity other than 1, a protocol other than tcp or udp, a protocol
    changed by PATCH; and an upstream that does not resolve when the proxy
    opens (pinwheel 500: the relay cannot start)."""
    why = "a UDP relay has no stream and no connections: pinwheel refuses what it cannot do"
    echo, eport = udp_echo()
    up = "%s:%d" % (HOST, eport)
    try:
        expect(ctx, "POST", "/proxies", 201, {"name": "ur", "listen": HOST + ":0", "upstream": up,
                                              "protocol": "udp"})
        for t, attrs in (("slow_close", {"delay": 10}), ("slicer", {"average_size": 10}),
                         ("timeout", {"timeout": 10}), ("reset_peer", {"timeout": 10}),
                         ("limit_data", {"bytes": 10})):
            st = per_server(ctx, "a stream-only toxic (slow_close, slicer, timeout, reset_peer, "
                            "limit_data) on a UDP proxy", 200, 400, why)
            r = add_toxic(ctx, "ur", {"type": t, "name": "x_" + t, "attributes": attrs}, st)
            if st == 400:
                check(t in r.json["error"], "the refusal does not name %s: %r" % (t, r.json))
        st = per_server(ctx, "toxicity 0.5 on a UDP proxy", 200, 400, why)
        r = add_toxic(ctx, "ur", {"type": "latency", "name": "half", "toxicity": 0.5,
                                  "attributes": {"latency": 1}}, st)
        if st == 400:
            check("toxicity" in r.json["error"], "the refusal does not name toxicity: %r" % r.json)
        st = per_server(ctx, "PATCH of a UDP proxy's protocol to tcp", 200, 400,
                        "a proxy's protocol is its data plane: delete it and create it again")
        r = expect(ctx, "PATCH", "/proxies/ur", st, {"protocol": "tcp"})
        if st == 400:
            check("protocol" in r.json["error"], "the refusal does not name protocol: %r" % r.json)
        st = per_server(ctx, "PATCH of a TCP proxy's protocol to udp", 200, 400,
                        "a proxy's protocol is its data plane: delete it and create it again")
        make_proxy(ctx, "urt", "127.0.0.1:9")
        r = expect(ctx, "PATCH", "/proxies/urt", st, {"protocol": "udp"})
        if st == 400:
            check("protocol" in r.json["error"], "the refusal does not name protocol: %r" % r.json)
        st = per_server(ctx, 'a proxy with "protocol":"sctp"', 201, 400,
                        "pinwheel makes tcp and udp proxies; another protocol is the client's error")
        r = expect(ctx, "POST", "/proxies", st, {"name": "us", "listen": HOST + ":0", "upstream": up,
                                                 "protocol": "sctp"})
        if st == 400:
            check("sctp" in r.json["error"], "the refusal does not name the protocol: %r" % r.json)
        st = per_server(ctx, "a UDP proxy on an upstream name that does not resolve", 201, 500,
                        "a UDP relay sends to an address fixed when it starts")
        r = expect(ctx, "POST", "/proxies", st, {"name": "un", "listen": HOST + ":0",
                                                 "upstream": "nosuch-upstream.invalid:9",
                                                 "protocol": "udp"})
        if st == 500:
            check("resolve" in r.json["error"], "the refusal does not say why: %r" % r.json)
        if ctx.kind == "pinwheel":  # what was refused left the proxy as it was
            r = expect(ctx, "GET", "/proxies/ur", 200)
            check(r.json["toxics"] == [] and r.json.get("protocol") == "udp", "after the refusals: %r" % r.json)
            expect(ctx, "GET", "/proxies/un", 404)
            expect(ctx, "GET", "/proxies/us", 404)
    finally:
        for n in ("ur", "urt", "us", "un"):
            delete_proxy(ctx, n)
        echo.sendto(b"quit", echo.getsockname())
        echo.close()
