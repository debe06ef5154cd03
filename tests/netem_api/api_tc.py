#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
pinwheel's own toxic type, tc (a DIFF: toxiproxy has none): tc words on
the direction's device, schedules sent inline (running, disabled with
the proxy) and the accuracy reports of /proxies/{name}/stats.

Part of tests/netem_api/api_test.py (the runner: it imports this module,
runs its @test checks in its ORDER and prints the DIFF lines).  Threads:
the runner's main thread; echo servers on threads of their own.
"""

import time

from common import *  # noqa: F401,F403 (the shared helpers)


@test
def tc_toxic(ctx):
    """pinwheel's own toxic type: tc words for the direction's device."""
    make_proxy(ctx, "tct", "127.0.0.1:9")
    try:
        st = per_server(ctx, 'toxic type "tc" on a TCP proxy', 400, 200,
                        "pinwheel's tc toxic: tc words for the direction")
        add_toxic(ctx, "tct", {"type": "tc", "name": "tc1", "stream": "upstream",
                               "attributes": {"qdisc": "tbf rate 1mbit burst 10k latency 50ms"}}, st)
        if ctx.kind == "pinwheel":
            add_toxic(ctx, "tct", {"type": "tc", "name": "tc2",
                                   "attributes": {"qdisc": "nosuchqdisc 1"}}, 400)
            # a disabled proxy refuses what it could not run once enabled
            expect(ctx, "PATCH", "/proxies/tct", 200, {"enabled": False})
            for words in ("nosuchqdisc 1", "netem delay 5ms loss 1%", "tbf rate"):
                add_toxic(ctx, "tct", {"type": "tc", "name": "tc3",
                                       "attributes": {"qdisc": words}}, 400)
            r = add_toxic(ctx, "tct", {"type": "tc", "name": "tc4", "attributes": {
                "batch": "# shaping\nqdisc add dev x root handle 1: netem delay 5ms loss 2%"}}, 400)
            check("loss" in r.json.get("error", ""), "batch with netem loss: %r" % r)
            add_toxic(ctx, "tct", {"type": "tc", "name": "tc5", "attributes": {
                "batch": "tc qdisc add dev x root handle 1: htb default 1\n"
                         "class add dev x parent 1: classid 1:1 htb rate 1mbit"}})
            r = expect(ctx, "PATCH", "/proxies/tct", 200, {"enabled": True})
            check(r.json["enabled"] is True, "enable after tc toxics: %r" % r)
            check(sorted(t["name"] for t in r.json["toxics"]) == ["tc1", "tc5"],
                  "toxics after enable: %r" % r.json["toxics"])
    finally:
        delete_proxy(ctx, "tct")


@test
def tc_schedule_inline(ctx):
    """pinwheel's tc toxic takes a schedule's text inline ("schedule":
    timed tc commands for its device); a bad one is refused with its line
    and token; a trace comes inline too (trace text), never as a path the
    server would read (trace file: 400 naming it)."""
    if ctx.kind != "pinwheel":
        return  # toxiproxy has no tc toxic (tc_toxic lists the difference)
    make_proxy(ctx, "tsch", "127.0.0.1:9")
    try:
        sched = "# degrade, then recover\n2s qdisc change dev link root netem delay 80ms\n" \
                "4s qdisc change dev link root netem delay 10ms\nloop\n"
        r = add_toxic(ctx, "tsch", {"type": "tc", "name": "s1", "attributes": {
            "qdisc": "netem delay 10ms", "schedule": sched}})
        check(r.json["attributes"].get("schedule") == sched, "schedule not echoed: %r" % r)
        r = add_toxic(ctx, "tsch", {"type": "tc", "name": "s2", "attributes": {
            "qdisc": "netem delay 10ms",
            "schedule": "1s qdisc change dev x root netem delay 5ms\n"
                        "2s qdisc change dev x root netem delay bogus\n"}}, 400)
        err = r.json.get("error", "") if r.json else r.body
        check("schedule:2" in err and "bogus" in err, "bad schedule's error: %r" % r)
        r = add_toxic(ctx, "tsch", {"type": "tc", "name": "s3", "attributes": {
            "qdisc": "netem delay 10ms",
            "schedule": "5s qdisc change dev x root netem delay 5ms\n1s qdisc change dev x root netem delay 6ms\n"}}, 400)
        check("schedule:2" in (r.json or {}).get("error", ""), "times going back: %r" % r)
        # PATCH: a changed schedule replaces the old one
        r = expect(ctx, "PATCH", "/proxies/tsch/toxics/s1", 200, {"attributes": {
            "schedule": "1s qdisc change dev up root netem delay 20ms\n"}})
        check(r.json["attributes"].get("schedule", "").startswith("1s "), "PATCH schedule: %r" % r)
        r = expect(ctx, "PATCH", "/proxies/tsch/toxics/s1", 400, {"attributes": {
            "schedule": "1s qdisc change dev up root netem delay 20ms jitter\n"}})
        check("schedule:1" in (r.json or {}).get("error", ""), "PATCH bad schedule: %r" % r)
        r = add_toxic(ctx, "tsch", {"type": "tc", "name": "s4", "attributes": {
            "qdisc": "netem delay 10ms", "schedule": "x" * 70000}}, 400)
        check("longer than" in (r.json or {}).get("error", ""), "oversized schedule: %r" % r)
        # traces: inline only
        for attrs in ({"qdisc": "trace file /etc/passwd"},
                      {"batch": "qdisc add dev x root handle 1: trace file /tmp/up.trace limit 10"},
                      {"qdisc": "netem delay 1ms",
                       "schedule": "1s qdisc replace dev x root trace file /etc/shadow\n"}):
            r = add_toxic(ctx, "tsch", {"type": "tc", "name": "tr", "stream": "upstream",
                                        "attributes": attrs}, 400)
            check("trace file" in (r.json or {}).get("error", ""), "trace file refused: %r" % r)
        add_toxic(ctx, "tsch", {"type": "tc", "name": "tr", "stream": "upstream",
                                "attributes": {"qdisc": 'trace text "1 1 3" limit 100'}})
    finally:
        delete_proxy(ctx, "tsch")


@test
def tc_schedule_disabled(ctx):
    """A disabled proxy checks a tc toxic's schedule as the plane would
    (the registry's validator, without opening anything)."""
    if ctx.kind != "pinwheel":
        return
    make_proxy(ctx, "tsd", "127.0.0.1:9")
    try:
        expect(ctx, "PATCH", "/proxies/tsd", 200, {"enabled": False})
        r = add_toxic(ctx, "tsd", {"type": "tc", "name": "s5", "attributes": {
            "qdisc": "netem delay 10ms",
            "schedule": "1s qdisc change dev x root netem delay bogus\n"}}, 400)
        check("schedule:1" in (r.json or {}).get("error", ""), "disabled proxy: %r" % r)
        add_toxic(ctx, "tsd", {"type": "tc", "name": "s6", "attributes": {
            "qdisc": "netem delay 10ms",
            "schedule": "1s qdisc change dev x root netem delay 20ms\n"}})
        r = expect(ctx, "PATCH", "/proxies/tsd", 200, {"enabled": True})
        check(r.json["enabled"] is True, "enable with a schedule: %r" % r)
    finally:
        delete_proxy(ctx, "tsd")


@test
def tc_stats_accuracy(ctx):
    """GET /proxies/NAME/stats shows, per direction, each tc toxic's
    device: its qdiscs with their accuracy (achieved beside configured),
    the check's verdict, and the step its schedule has in force."""
    if ctx.kind != "pinwheel":
        return  # toxiproxy has neither the stats endpoint nor the tc toxic
    echo, port = with_echo_proxy(ctx, "tacc", [
        {"type": "tc", "name": "d", "stream": "downstream", "attributes": {
            "qdisc": "netem delay 5ms",
            "schedule": "10ms qdisc change dev link root netem delay 3ms\n"}}])
    try:
        s = connect(port)
        for i in range(30):
            msg = pattern(i, 100)
            s.sendall(msg)
            got, how = recv_exact_or_close(s, len(msg), time.monotonic() + 5)
            check(got == msg, "echo %d came back as %r (%s)" % (i, got[:16], how))
        s.close()
        r = expect(ctx, "GET", "/proxies/tacc/stats", 200)
        tc = dir_stats(r.json, "downstream").get("tc")
        check(isinstance(tc, list) and len(tc) == 1, "stats: no tc report: %r" % r)
        dev = tc[0]
        check(dev.get("toxic") == "d", "tc report's toxic: %r" % dev)
        check(dev.get("check") in ("pass", "fail"), "check not judged: %r" % dev)
        acc = dev["qdiscs"][0]["accuracy"]
        check(acc["sojourn_ns"]["count"] >= 30 and "configured_sojourn_ns" in acc,
              "accuracy: %r" % acc)
        check(dev.get("schedule", {}).get("step") == 0 and dev["schedule"].get("line") == 1,
              "schedule step: %r" % dev.get("schedule"))
        check(dir_stats(r.json, "upstream").get("tc") == [], "upstream tc: %r" % r.json)
    finally:
        delete_proxy(ctx, "tacc")
        echo.stop()
