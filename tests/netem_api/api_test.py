#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
End-to-end test of pinwheel-netem's toxiproxy-compatible HTTP API, written
so that the same checks run against the real toxiproxy (the reference) and
against pinwheel-netem:

    api_test.py --server toxiproxy --bin .../toxiproxy-server
    api_test.py --server pinwheel  --bin .../pinwheel-netem

It starts the server on a free loopback port, then checks every endpoint's
status codes and bodies (GET /version, GET|POST /proxies, POST /populate,
GET|POST|PATCH|DELETE /proxies/{name}, GET|POST /proxies/{name}/toxics,
GET|POST|PATCH|DELETE /proxies/{name}/toxics/{toxic}, POST /reset,
enabled false/true, listen port 0 resolved), bad input (malformed JSON,
unknown toxic type, negative or non-numeric attributes, duplicate names,
unknown proxy, listen address in use, oversized body), a slowloris client
holding API connections open byte by byte while other requests are served,
1,000 concurrent connections through one proxy to a local echo server with
every byte checked, the data path's toxics (limit_data, slicer, reset_peer,
timeout, latency and toxicity 0, slow_close; toxics changed and the proxy
disabled with bytes in flight; enabled false; a client's half-close, a
server's reset, upstream refused) and a
SIGTERM with data in flight (pinwheel: the byte balance of
/proxies/{name}/stats while the bytes are held, then a clean exit 0).
Against pinwheel, every data check ends with the proxy's statistics
balanced: each direction's bytes in = out + cut by a toxic + dropped at a
close, none held.

What toxiproxy does defines the expected result.  Where pinwheel-netem
differs on purpose, the check carries one expectation per server and the
difference is listed in the output ("DIFF ...") of both runs: the list
docs/relay.md keeps.  Timing checks are one-sided ("never early": a latency
adds at least its value, a timeout closes no sooner than its time) with a
generous upper bound only so that a hang fails instead of blocking.

Exit: 0 when every check passed, 1 otherwise; 77 (ctest's skip) when the
server binary is missing or cannot run here.  Python 3 standard library
only.  Threads: the main thread runs the checks; echo servers, the
slowloris clients and the server's stderr reader run on threads of their
own.
"""

import argparse
import errno
import http.client
import json
import os
import re
import resource
import select
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from common import *  # noqa: F401,F403 (the shared helpers)
from common import DIFFS

# ---------------------------------------------------------------- the checks

CHECKS = []


def test(fn):
    CHECKS.append(fn)
    return fn


@test
def version(ctx):
    r = expect(ctx, "GET", "/version", 200)
    check(isinstance(r.json, dict) and isinstance(r.json.get("version"), str) and r.json["version"],
          "GET /version: %r" % r.body)
    expect(ctx, "POST", "/version", 405)
    expect(ctx, "GET", "/no-such-endpoint", 404)


@test
def proxies_crud(ctx):
    echo_addr = "127.0.0.1:9"
    r = expect(ctx, "GET", "/proxies", 200)
    check(isinstance(r.json, dict), "GET /proxies is not an object: %r" % r.body)
    p = make_proxy(ctx, "crud", echo_addr)
    host, port = parse_hostport(p["listen"])
    check(host == HOST and port != 0, "listen port 0 not resolved: %r" % p["listen"])
    check(p["enabled"] is True and p["toxics"] == [], "new proxy: %r" % p)
    r = expect(ctx, "GET", "/proxies", 200)
    check("crud" in r.json, "GET /proxies lacks the new proxy: %r" % r.body)
    check_proxy_json(r.json["crud"], "crud", echo_addr, True)
    check(r.json["crud"]["listen"] == p["listen"], "listen differs between answers")
    r = expect(ctx, "GET", "/proxies/crud", 200)
    check_proxy_json(r.json, "crud", echo_addr, True)
    # duplicate name
    expect(ctx, "POST", "/proxies", 409, {"name": "crud", "listen": HOST + ":0", "upstream": echo_addr})
    # update: POST and PATCH (the clients use POST)
    r = expect(ctx, "POST", "/proxies/crud", 200, {"upstream": "127.0.0.1:10"})
    check_proxy_json(r.json, "crud", "127.0.0.1:10", True)
    check(r.json["listen"] == p["listen"], "an update moved listen: %r" % r.json)
    r = expect(ctx, "PATCH", "/proxies/crud", 200, {"upstream": "127.0.0.1:11"})
    check_proxy_json(r.json, "crud", "127.0.0.1:11", True)
    expect(ctx, "PATCH", "/proxies/crud", 400, raw=b"{bad")
    expect(ctx, "PUT", "/proxies/crud", 405, {"upstream": "127.0.0.1:12"})
    # unknown proxy
    expect(ctx, "GET", "/proxies/nosuch", 404)
    expect(ctx, "POST", "/proxies/nosuch", 404, {"enabled": False})
    expect(ctx, "PATCH", "/proxies/nosuch", 404, {"enabled": False})
    expect(ctx, "DELETE", "/proxies/nosuch", 404)
    # delete: the port is closed, a second delete is 404
    expect(ctx, "DELETE", "/proxies/crud", 204)
    expect(ctx, "DELETE", "/proxies/crud", 404)
    expect(ctx, "GET", "/proxies/crud", 404)
    check(port_refuses(port), "a deleted proxy still accepts on %d" % port)
    r = expect(ctx, "GET", "/proxies", 200)
    check("crud" not in r.json, "GET /proxies still lists a deleted proxy")
    # no listen: port 0 on toxiproxy's all addresses, on pinwheel's loopback
    r = expect(ctx, "POST", "/proxies", 201, {"name": "nolisten", "upstream": echo_addr})
    host, port = parse_hostport(r.json["listen"])
    want = per_server(ctx, "the listen address of a proxy created without one", "::", HOST,
                      "pinwheel listens on a non-loopback address only when the user writes one")
    check(host == want and port != 0, "no listen given: listen %r, expected %s:N"
          % (r.json["listen"], want))
    expect(ctx, "DELETE", "/proxies/nolisten", 204)


@test
def proxies_bad_input(ctx):
    expect(ctx, "POST", "/proxies", 400, raw=b"{bad")
    expect(ctx, "POST", "/proxies", 400, raw=b"")
    expect(ctx, "POST", "/proxies", 400, raw=b"[]")
    expect(ctx, "POST", "/proxies", 400, {"name": "nofields"})            # no upstream
    expect(ctx, "POST", "/proxies", 400, {"listen": HOST + ":0", "upstream": "127.0.0.1:9"})
    expect(ctx, "POST", "/proxies", 400, raw=b'{"name":7,"upstream":"127.0.0.1:9"}')
    # the listen address in use: the API's own
    st = per_server(ctx, "POST /proxies with a listen address in use", 500, 500, "")
    expect(ctx, "POST", "/proxies", st,
           {"name": "inuse", "listen": "%s:%d" % (HOST, ctx.port), "upstream": "127.0.0.1:9"})
    expect(ctx, "GET", "/proxies/inuse", 404)
    st = per_server(ctx, "POST /proxies with a listen address without a port", 500, 400,
                    "a listen address that does not parse is the client's error (400), not the server's")
    expect(ctx, "POST", "/proxies", st, {"name": "badlisten", "listen": "bogus", "upstream": "127.0.0.1:9"})
    expect(ctx, "GET", "/proxies/badlisten", 404)
    st = per_server(ctx, "POST /proxies with an upstream address without a port", 201, 400,
                    "pinwheel refuses an upstream that is no HOST:PORT when the proxy is "
                    "made; a name that does not resolve yet is taken")
    expect(ctx, "POST", "/proxies", st, {"name": "badup", "listen": HOST + ":0", "upstream": "bogus"})
    request(ctx, "DELETE", "/proxies/badup")
    st = per_server(ctx, "a proxy name with '/'", 201, 400,
                    "a name with '/' could not be addressed in /proxies/{name}")
    expect(ctx, "POST", "/proxies", st, {"name": "a/b", "listen": HOST + ":0", "upstream": "127.0.0.1:9"})
    request(ctx, "DELETE", "/proxies/a/b")


@test
def oversized_body(ctx):
    pad = "x" * (2 << 20)
    body = {"name": "big", "listen": HOST + ":0", "upstream": "127.0.0.1:9", "pad": pad}
    st = per_server(ctx, "a request body over 1 MiB (2 MiB of JSON)", 201, 413,
                    "pinwheel bounds what one request may make it hold")
    r = request(ctx, "POST", "/proxies", body=body, timeout=20)
    check(r.status == st, "2 MiB body: expected %d, got %r" % (st, r))
    if st == 413:
        check(isinstance(r.json, dict) and r.json.get("status") == 413 and r.json.get("error"),
              "413 without toxiproxy's error body: %r" % r.body[:200])
    request(ctx, "DELETE", "/proxies/big")
    # the server still serves
    expect(ctx, "GET", "/version", 200)


@test
def enabled_false_true(ctx):
    echo = EchoServer()
    try:
        p = make_proxy(ctx, "en", echo.addr, enabled=False)
        check(p["enabled"] is False, "created with enabled false: %r" % p)
        lst = per_server(ctx, "listen of a proxy created disabled with port 0", "127.0.0.1:0",
                         "127.0.0.1:0", "")
        check(p["listen"] == lst, "disabled proxy's listen %r, expected %r" % (p["listen"], lst))
        r = expect(ctx, "POST", "/proxies/en", 200, {"enabled": True})
        check_proxy_json(r.json, "en", echo.addr, True)
        host, port = parse_hostport(r.json["listen"])
        check(port != 0, "enabling did not resolve port 0: %r" % r.json["listen"])
        s = connect(port)
        s.sendall(b"hello")
        got, how = recv_exact_or_close(s, 5, time.monotonic() + 5)
        check(got == b"hello", "through an enabled proxy: %r (%s)" % (got, how))
        # disabling closes the listener and the live connection
        r = expect(ctx, "PATCH", "/proxies/en", 200, {"enabled": False})
        check(r.json["enabled"] is False, "after disable: %r" % r.json)
        how, n, _ = wait_close(s, time.monotonic() + 5)
        check(how in ("eof", "reset"), "disabling left the connection open (%s)" % how)
        s.close()
        check(port_refuses(port), "a disabled proxy still accepts")
        r = expect(ctx, "POST", "/proxies/en", 200, {"enabled": True})
        port2 = proxy_port(r.json)
        s = connect(port2)
        s.sendall(b"again")
        got, how = recv_exact_or_close(s, 5, time.monotonic() + 5)
        check(got == b"again", "re-enabled: %r (%s)" % (got, how))
        s.close()
    finally:
        delete_proxy(ctx, "en")
        echo.stop()


@test
def toxics_crud(ctx):
    make_proxy(ctx, "tx", "127.0.0.1:9")
    try:
        r = add_toxic(ctx, "tx", {"type": "latency", "attributes": {"latency": 100, "jitter": 5}})
        check_toxic_json(r.json, "latency_downstream", "latency", "downstream", 1,
                         {"latency": 100, "jitter": 5})
        add_toxic(ctx, "tx", {"type": "latency", "attributes": {"latency": 1}}, 409)
        r = add_toxic(ctx, "tx", {"type": "bandwidth", "name": "bw", "stream": "upstream",
                                  "toxicity": 0.5, "attributes": {"rate": 100}})
        check_toxic_json(r.json, "bw", "bandwidth", "upstream", 0.5, {"rate": 100})
        defaults = {
            "slow_close": ({"delay": 10}, {"delay": 10}),
            "timeout": ({"timeout": 10}, {"timeout": 10}),
            "reset_peer": ({"timeout": 10}, {"timeout": 10}),
            "limit_data": ({"bytes": 10}, {"bytes": 10}),
            "slicer": ({}, {"average_size": 0, "size_variation": 0, "delay": 0}),
        }
        for typ, (attrs, want) in defaults.items():
            r = add_toxic(ctx, "tx", {"type": typ, "stream": "upstream", "attributes": attrs})
            check_toxic_json(r.json, typ + "_upstream", typ, "upstream", 1, want)
        # missing attributes: zero values; unknown attributes: ignored
        r = add_toxic(ctx, "tx", {"type": "latency", "name": "noattr"})
        check_toxic_json(r.json, "noattr", "latency", "downstream", 1, {"latency": 0, "jitter": 0})
        r = add_toxic(ctx, "tx", {"type": "latency", "name": "extra", "attributes": {"bogus": 1}})
        check_toxic_json(r.json, "extra", "latency", "downstream", 1, {"latency": 0})
        # pinwheel's "seed" on a random toxic: kept and shown; toxiproxy
        # ignores it as any unknown attribute
        r = add_toxic(ctx, "tx", {"type": "latency", "name": "seeded",
                                  "attributes": {"latency": 10, "jitter": 5, "seed": 7}})
        check_toxic_json(r.json, "seeded", "latency", "downstream", 1, {"latency": 10, "jitter": 5})
        want = per_server(ctx, 'a toxic\'s "seed" attribute, in the answer', None, 7,
                          "pinwheel's seed: the toxic's random stream, replayable")
        check(r.json["attributes"].get("seed") == want, "seed in the answer: %r, expected %r"
              % (r.json["attributes"].get("seed"), want))
        expect(ctx, "DELETE", "/proxies/tx/toxics/seeded", 204)
        # list, get
        r = expect(ctx, "GET", "/proxies/tx/toxics", 200)
        check(isinstance(r.json, list), "toxic list is not a list: %r" % r.body)
        names = sorted(t["name"] for t in r.json)
        want = sorted(["latency_downstream", "bw", "noattr", "extra"] +
                      [t + "_upstream" for t in defaults])
        check(names == want, "toxic list %r, expected %r" % (names, want))
        r = expect(ctx, "GET", "/proxies/tx", 200)
        check(sorted(t["name"] for t in r.json["toxics"]) == want, "proxy's toxics: %r" % r.json)
        r = expect(ctx, "GET", "/proxies/tx/toxics/bw", 200)
        check_toxic_json(r.json, "bw", "bandwidth", "upstream", 0.5, {"rate": 100})
        expect(ctx, "GET", "/proxies/tx/toxics/nosuch", 404)
        expect(ctx, "GET", "/proxies/nosuch/toxics/bw", 404)
        expect(ctx, "GET", "/proxies/nosuch/toxics", 404)
        expect(ctx, "POST", "/proxies/nosuch/toxics", 404, {"type": "latency", "attributes": {"latency": 1}})
        # update: POST and PATCH; type and stream do not change
        r = expect(ctx, "POST", "/proxies/tx/toxics/bw", 200, {"attributes": {"rate": 200}})
        check_toxic_json(r.json, "bw", "bandwidth", "upstream", 0.5, {"rate": 200})
        r = expect(ctx, "PATCH", "/proxies/tx/toxics/bw", 200, {"toxicity": 0.25})
        check_toxic_json(r.json, "bw", "bandwidth", "upstream", 0.25, {"rate": 200})
        r = expect(ctx, "PATCH", "/proxies/tx/toxics/bw", 200, {"type": "latency", "stream": "downstream"})
        check_toxic_json(r.json, "bw", "bandwidth", "upstream", 0.25, {"rate": 200})
        expect(ctx, "PATCH", "/proxies/tx/toxics/bw", 400, {"attributes": {"rate": "x"}})
        expect(ctx, "PATCH", "/proxies/tx/toxics/bw", 400, raw=b"{bad")
        expect(ctx, "PATCH", "/proxies/tx/toxics/nosuch", 404, {"attributes": {"rate": 1}})
        expect(ctx, "PATCH", "/proxies/nosuch/toxics/bw", 404, {"attributes": {"rate": 1}})
        r = expect(ctx, "GET", "/proxies/tx/toxics/bw", 200)
        check_toxic_json(r.json, "bw", "bandwidth", "upstream", 0.25, {"rate": 200})
        # delete
        expect(ctx, "DELETE", "/proxies/tx/toxics/bw", 204)
        expect(ctx, "DELETE", "/proxies/tx/toxics/bw", 404)
        expect(ctx, "DELETE", "/proxies/nosuch/toxics/bw", 404)
        r = expect(ctx, "GET", "/proxies/tx/toxics", 200)
        check("bw" not in [t["name"] for t in r.json], "deleted toxic still listed")
    finally:
        delete_proxy(ctx, "tx")


@test
def toxics_bad_input(ctx):
    make_proxy(ctx, "tb", "127.0.0.1:9")
    try:
        expect(ctx, "POST", "/proxies/tb/toxics", 400, raw=b"{bad")
        expect(ctx, "POST", "/proxies/tb/toxics", 400, raw=b"")
        add_toxic(ctx, "tb", {"type": "nosuch", "attributes": {"latency": 1}}, 400)
        add_toxic(ctx, "tb", {"name": "notype", "attributes": {"latency": 1}}, 400)
        add_toxic(ctx, "tb", {"type": "latency", "name": "s", "stream": "sideways",
                              "attributes": {"latency": 1}}, 400)
        # non-numeric attributes: 400 on both
        for typ, attr in (("latency", "latency"), ("latency", "jitter"), ("bandwidth", "rate"),
                          ("limit_data", "bytes"), ("timeout", "timeout"), ("slicer", "average_size")):
            add_toxic(ctx, "tb", {"type": typ, "name": "nn_" + attr,
                                  "attributes": {attr: "abc"}}, 400)
        add_toxic(ctx, "tb", {"type": "latency", "name": "frac", "attributes": {"latency": 1.5}}, 400)
        # negative values: toxiproxy takes them, pinwheel refuses them
        why = "a negative time, rate or size has no meaning: pinwheel refuses it (400) naming the attribute"
        for typ, attr in (("latency", "latency"), ("latency", "jitter"), ("bandwidth", "rate"),
                          ("limit_data", "bytes"), ("timeout", "timeout"), ("reset_peer", "timeout"),
                          ("slow_close", "delay"), ("slicer", "average_size"), ("slicer", "delay")):
            st = per_server(ctx, "a negative %s.%s" % (typ, attr), 200, 400, why)
            add_toxic(ctx, "tb", {"type": typ, "name": "neg_%s_%s" % (typ, attr),
                                  "attributes": {attr: -5}}, st)
        st = per_server(ctx, "a latency over a day (99999999999 ms)", 200, 400,
                        "pinwheel bounds times to a day, rates to 100 GB/s, sizes to 2^50 bytes")
        add_toxic(ctx, "tb", {"type": "latency", "name": "huge", "attributes": {"latency": 99999999999}}, st)
        for tox in (2, -1):
            st = per_server(ctx, "toxicity %r (outside 0..1)" % tox, 200, 400,
                            "toxicity is a probability: pinwheel refuses one outside 0..1")
            add_toxic(ctx, "tb", {"type": "latency", "name": "tox%d" % tox, "toxicity": tox,
                                  "attributes": {"latency": 1}}, st)
    finally:
        delete_proxy(ctx, "tb")


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


@test
def stream_text_kept(ctx):
    """A toxic's stream is read without regard to case and shown as written
    (toxiproxy keeps the text: default name latency_UpStream)."""
    make_proxy(ctx, "stx", "127.0.0.1:9")
    try:
        r = add_toxic(ctx, "stx", {"type": "latency", "stream": "UpStream",
                                   "attributes": {"latency": 5}})
        check_toxic_json(r.json, "latency_UpStream", "latency", "UpStream", 1, {"latency": 5})
        r = expect(ctx, "GET", "/proxies/stx/toxics/latency_UpStream", 200)
        check(r.json["stream"] == "UpStream", "GET toxic: %r" % r)
        r = add_toxic(ctx, "stx", {"type": "timeout", "stream": "DOWNSTREAM"})
        check_toxic_json(r.json, "timeout_DOWNSTREAM", "timeout", "DOWNSTREAM", 1, {"timeout": 0})
        r = add_toxic(ctx, "stx", {"type": "slicer"})
        check(r.json["name"] == "slicer_downstream" and r.json["stream"] == "downstream",
              "default stream: %r" % r)
        add_toxic(ctx, "stx", {"type": "latency", "stream": "sideways"}, 400)
        r = expect(ctx, "GET", "/proxies/stx/toxics", 200)
        check([t["name"] for t in r.json][0] == "latency_UpStream",
              "an UpStream toxic is an upstream one (listed first): %r" % r.json)
    finally:
        delete_proxy(ctx, "stx")


@test
def upstream_change_closes(ctx):
    """A changed upstream closes the proxy's connections (toxiproxy stops
    and starts the proxy); the listen address stays, new connections go to
    the new upstream."""
    e1, e2 = EchoServer(), EchoServer()
    s = None
    try:
        p = make_proxy(ctx, "upc", e1.addr)
        port = proxy_port(p)
        s = connect(port)
        s.sendall(b"hello")
        got, how = recv_exact_or_close(s, 5, time.monotonic() + 5)
        check(got == b"hello", "echo before the change: %r %s" % (got, how))
        r = expect(ctx, "PATCH", "/proxies/upc", 200, {"upstream": e2.addr})
        check(r.json["upstream"] == e2.addr and proxy_port(r.json) == port,
              "after the change: %r" % r.json)
        how, _, _ = wait_close(s, time.monotonic() + 5)
        check(how in ("eof", "reset"), "the old connection was not closed: %s" % how)
        s.close()
        s = connect(port)
        s.sendall(b"again")
        got, how = recv_exact_or_close(s, 5, time.monotonic() + 5)
        check(got == b"again", "echo after the change: %r %s" % (got, how))
        check(e2.accepted == 1, "the new upstream accepted %d" % e2.accepted)
        s.close()
        s = None
        balance(ctx, "upc", {"upstream": 10, "downstream": 10})
    finally:
        if s:
            s.close()
        delete_proxy(ctx, "upc")
        e1.stop()
        e2.stop()


@test
def upstream_name_later(ctx):
    """An upstream name that does not resolve (yet: a container not up) is
    taken (201), the proxy listens, and each connection is closed at once
    (pinwheel: with no connect tried, the proxy having no upstream address;
    each one counted in upstream_failed, exactly; the name looked up again
    every 2 s)."""
    try:
        p = make_proxy(ctx, "unr", "nosuch-upstream.invalid:9")
        made = 1
        check(p["enabled"] is True, "a proxy on a name that does not resolve: %r" % p)
        s = connect(proxy_port(p))
        how, n, _ = wait_close(s, time.monotonic() + 5)
        s.close()
        check(how in ("eof", "reset") and n == 0, "its connection: %s after %d bytes" % (how, n))
        r = expect(ctx, "PATCH", "/proxies/unr", 200, {"upstream": "nosuch-other.invalid:10"})
        check(r.json["upstream"] == "nosuch-other.invalid:10", "update to a name: %r" % r.json)
        if ctx.kind == "pinwheel":
            # the resolver thread looks the name up again meanwhile (every
            # 2 s): requests and connections go on while it does
            t_end = time.monotonic() + 2.5
            while time.monotonic() < t_end:
                expect(ctx, "GET", "/proxies/unr", 200)
                s = connect(proxy_port(p))
                how, n, _ = wait_close(s, time.monotonic() + 5)
                s.close()
                check(how in ("eof", "reset") and n == 0, "a connection: %s" % how)
                made += 1
                time.sleep(0.1)
            js = balance(ctx, "unr")
            check(js["upstream_failed"] == made and js["accepted"] == made and
                  js["closed"] == made and js["fd_exhausted"] == 0,
                  "stats of %d connections to nowhere: %r" % (made, js))
    finally:
        delete_proxy(ctx, "unr")


@test
def populate_keeps_running(ctx):
    """/populate naming a proxy with its listen and upstream unchanged but
    "enabled": false leaves it as it is, running (toxiproxy)."""
    echo = EchoServer()
    s = None
    try:
        p = make_proxy(ctx, "pkr", echo.addr)
        s = connect(proxy_port(p))
        r = expect(ctx, "POST", "/populate", 201,
                   [{"name": "pkr", "listen": p["listen"], "upstream": echo.addr, "enabled": False}])
        ans = per_server(ctx, "POST /populate's answer for an unchanged proxy given enabled:false",
                         False, True, "pinwheel answers the proxy as it is (running)")
        check(r.json["proxies"][0]["enabled"] is ans, "populate answer: %r" % r.body)
        r = expect(ctx, "GET", "/proxies/pkr", 200)
        check(r.json["enabled"] is True, "populate disabled an unchanged proxy: %r" % r.json)
        s.sendall(b"still")
        got, how = recv_exact_or_close(s, 5, time.monotonic() + 5)
        check(got == b"still", "the connection after populate: %r %s" % (got, how))
    finally:
        if s:
            s.close()
        delete_proxy(ctx, "pkr")
        echo.stop()


@test
def populate_and_reset(ctx):
    r = expect(ctx, "POST", "/populate", 201, [
        {"name": "pa", "listen": HOST + ":0", "upstream": "127.0.0.1:9"},
        {"name": "pb", "listen": HOST + ":0", "upstream": "127.0.0.1:9", "enabled": False}])
    check(isinstance(r.json, dict) and isinstance(r.json.get("proxies"), list),
          "populate answer: %r" % r.body)
    got = {p["name"]: p for p in r.json["proxies"]}
    check(sorted(got) == ["pa", "pb"], "populate answer's proxies: %r" % r.body)
    check_proxy_json(got["pa"], "pa", "127.0.0.1:9", True)
    check_proxy_json(got["pb"], "pb", "127.0.0.1:9", False)
    check(proxy_port(got["pa"]) != 0, "populate did not resolve port 0")
    # the same again: kept; a changed one: replaced
    pa_listen = got["pa"]["listen"]
    r = expect(ctx, "POST", "/populate", 201, [
        {"name": "pa", "listen": pa_listen, "upstream": "127.0.0.1:9"},
        {"name": "pb", "listen": HOST + ":0", "upstream": "127.0.0.1:19", "enabled": False}])
    got = {p["name"]: p for p in r.json["proxies"]}
    check(got["pa"]["listen"] == pa_listen, "populate moved an unchanged proxy")
    check(got["pb"]["upstream"] == "127.0.0.1:19", "populate did not replace a changed proxy")
    expect(ctx, "POST", "/populate", 400, raw=b"{bad")
    expect(ctx, "POST", "/populate", 400, {"name": "pa"})
    r = expect(ctx, "POST", "/populate", 201, [])
    check(isinstance(r.json, dict) and "proxies" in r.json and not r.json["proxies"],
          "empty populate: %r" % r.body)
    # one bad entry: the ones before it are made (toxiproxy), the answer is an error
    st = per_server(ctx, "POST /populate whose second proxy's listen is in use", 500, 500, "")
    r = expect(ctx, "POST", "/populate", st, [
        {"name": "pc", "listen": HOST + ":0", "upstream": "127.0.0.1:9"},
        {"name": "pd", "listen": "%s:%d" % (HOST, ctx.port), "upstream": "127.0.0.1:9"}])
    check([p["name"] for p in r.json.get("proxies") or []] == ["pc"],
          "a failed populate's answer should list the proxies made before the failure: %r" % r.body)
    expect(ctx, "GET", "/proxies/pc", 200)
    expect(ctx, "GET", "/proxies/pd", 404)
    # reset: every toxic gone, every proxy enabled
    add_toxic(ctx, "pa", {"type": "latency", "attributes": {"latency": 10}})
    add_toxic(ctx, "pa", {"type": "timeout", "stream": "upstream", "attributes": {"timeout": 10}})
    expect(ctx, "POST", "/reset", 204)
    for name in ("pa", "pb"):
        r = expect(ctx, "GET", "/proxies/" + name, 200)
        check(r.json["toxics"] == [], "reset left toxics on %s: %r" % (name, r.json))
        check(r.json["enabled"] is True, "reset did not enable %s: %r" % (name, r.json))
        check(proxy_port(r.json) != 0, "reset-enabled %s did not resolve its port" % name)
    expect(ctx, "GET", "/reset", 405)
    for name in ("pa", "pb", "pc", "pd"):
        request(ctx, "DELETE", "/proxies/" + name)


@test
def slowloris(ctx):
    """Clients sending their requests a byte at a time hold API connections
    open, more of them from 127.0.0.1 than a bound per address of 64 would
    let in; every other request (GET /version, GET /proxies) is still
    answered, and so are they."""
    nslow = 100
    req = ("GET /version HTTP/1.1\r\nHost: %s:%d\r\nX-Slow: %s\r\n\r\n"
           % (HOST, ctx.port, "z" * 20)).encode()
    socks = [socket.create_connection((HOST, ctx.port), timeout=5) for _ in range(nslow)]
    answers = {}
    errs = []

    def drip():
        try:
            step = 1.5 / len(req)   # the whole request over ~1.5 s
            for i in range(len(req)):
                for s in socks:
                    s.send(req[i:i + 1])
                time.sleep(step)
        except OSError as e:
            errs.append("slow client send: %r" % e)

    t = threading.Thread(target=drip)
    t.start()
    served = 0
    worst = 0.0
    while t.is_alive():
        t0 = time.monotonic()
        r = request(ctx, "GET", "/proxies" if served % 2 else "/version", timeout=5)
        worst = max(worst, time.monotonic() - t0)
        check(r.status == 200, "while slow clients hold connections: %r" % r)
        served += 1
        time.sleep(0.02)
    t.join()
    check(not errs, "; ".join(errs))
    check(served >= 10, "only %d requests served during the slowloris" % served)
    for i, s in enumerate(socks):
        s.settimeout(5)
        buf = b""
        try:
            while b"\r\n\r\n" not in buf:
                d = s.recv(4096)
                if not d:
                    break
                buf += d
        except OSError:
            pass
        answers[i] = buf.split(b"\r\n", 1)[0]
        s.close()
    bad = [i for i, a in answers.items() if not a.startswith(b"HTTP/1.1 200")]
    check(not bad, "%d slow clients got no 200 (%r)" % (len(bad), answers[bad[0]] if bad else ""))
    print("    slowloris: %d requests served meanwhile, slowest %.3f s" % (served, worst))


@test
def slowloris_cut(ctx):
    """A request dripped a byte every 0.2 s, which never goes idle, is cut
    once it has taken longer than the server's bound on receiving a
    request (pinwheel: 10 s from the connection's start; toxiproxy: Go's
    ReadTimeout, 15 s); the API answers meanwhile and after."""
    limit = per_server(ctx, "a request dripped byte by byte is cut after (s)", 15, 10,
                       "pinwheel bounds a request's headers and body to 10 s")
    s = socket.create_connection((HOST, ctx.port), timeout=5)
    req = b"GET /version HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"z" * 400
    t0 = time.monotonic()
    cut = None
    try:
        for i in range(len(req)):
            try:
                s.send(req[i:i + 1])
            except OSError:
                cut = time.monotonic() - t0
                break
            r, _, _ = select.select([s], [], [], 0.2)
            if r:
                try:
                    d = s.recv(4096)
                except OSError:
                    d = b""
                check(not d, "a dripped request was answered: %r" % d[:80])
                cut = time.monotonic() - t0
                break
            if i % 10 == 0:
                check(request(ctx, "GET", "/version", timeout=5).status == 200,
                      "GET /version during a drip")
            if time.monotonic() - t0 > limit + 5:
                break
    finally:
        s.close()
    check(cut is not None, "a drip of %.1f s was not cut (bound %d s)"
          % (time.monotonic() - t0, limit))
    check(limit - 0.5 <= cut <= limit + 3, "the drip was cut after %.1f s, not ~%d s" % (cut, limit))
    expect(ctx, "GET", "/version", 200)
    print("    slowloris_cut: cut after %.1f s" % cut)


@test
def thousand_connections(ctx):
    """1,000 connections open at once through one proxy to an echo server,
    each with its own bytes; every byte comes back in order."""
    nconn, size = 1000, 16384
    echo = EchoServer()
    p = make_proxy(ctx, "thou", echo.addr)
    port = proxy_port(p)
    sel = selectors.DefaultSelector()
    conns = []
    try:
        for i in range(nconn):
            s = socket.socket()
            s.setblocking(False)
            err = s.connect_ex((HOST, port))
            check(err in (0, errno.EINPROGRESS), "connect %d: %s" % (i, os.strerror(err)))
            conns.append(s)
        state = {}
        for i, s in enumerate(conns):
            data = pattern(i, size)
            state[s] = {"i": i, "out": data, "sent": 0, "got": bytearray()}
            sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, state[s])
        # wait until all are connected and each has sent its first byte
        # before any sends the rest: all 1,000 are open at once
        deadline = time.monotonic() + 60
        first = 0
        while first < nconn and time.monotonic() < deadline:
            for key, ev in sel.select(1.0):
                st = key.data
                if ev & selectors.EVENT_WRITE and st["sent"] == 0:
                    err = key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    check(err == 0, "connection %d: %s" % (st["i"], os.strerror(err)))
                    st["sent"] = key.fileobj.send(st["out"][:1])
                    first += 1
                    sel.modify(key.fileobj, selectors.EVENT_READ, st)
                if ev & selectors.EVENT_READ:
                    d = key.fileobj.recv(65536)
                    check(d, "connection %d closed early" % st["i"])
                    st["got"] += d
        check(first == nconn, "only %d of %d connections opened in 60 s" % (first, nconn))
        t_open = time.monotonic()
        while echo.peak < nconn and time.monotonic() < t_open + 10:
            time.sleep(0.05)
        check(echo.peak == nconn, "the echo server saw at most %d of %d connections at once"
              % (echo.peak, nconn))
        for s, st in state.items():
            sel.modify(s, selectors.EVENT_READ | selectors.EVENT_WRITE, st)
        done = 0
        while done < nconn and time.monotonic() < deadline:
            for key, ev in sel.select(1.0):
                st = key.data
                s = key.fileobj
                if ev & selectors.EVENT_WRITE and st["sent"] < size:
                    try:
                        st["sent"] += s.send(st["out"][st["sent"]:])
                    except BlockingIOError:
                        pass
                if ev & selectors.EVENT_READ:
                    try:
                        d = s.recv(65536)
                    except BlockingIOError:
                        d = None
                    if d == b"":
                        raise Failure("connection %d closed after %d of %d bytes"
                                      % (st["i"], len(st["got"]), size))
                    if d:
                        st["got"] += d
                        check(len(st["got"]) <= size, "connection %d: more bytes back than sent" % st["i"])
                want = selectors.EVENT_READ | (selectors.EVENT_WRITE if st["sent"] < size else 0)
                if len(st["got"]) == size:
                    check(bytes(st["got"]) == st["out"],
                          "connection %d: the bytes came back changed or reordered" % st["i"])
                    sel.unregister(s)
                    done += 1
                else:
                    sel.modify(s, want, st)
        check(done == nconn, "only %d of %d connections echoed all their bytes in time" % (done, nconn))
        for s in conns:
            s.close()
        js = balance(ctx, "thou", {"upstream": nconn * size, "downstream": nconn * size})
        if js is not None:
            check(js["accepted"] == nconn, "stats: accepted %r, expected %d" % (js["accepted"], nconn))
            for stream in ("upstream", "downstream"):
                d = dir_stats(js, stream)
                check(d["bytes_out"] == nconn * size and d["bytes_cut"] == 0 and d["bytes_dropped"] == 0,
                      "stats %s: %r" % (stream, d))
        print("    %d connections at once, %d bytes each way each, all checked" % (nconn, size))
    finally:
        for s in conns:
            s.close()
        delete_proxy(ctx, "thou")
        echo.stop()


def balance(ctx, name, want_in=None):
    """pinwheel: once @name's connections are closed, every byte each
    direction read was written, cut by a toxic or dropped at the close,
    none held (polled: the counters are read one by one).  Returns the
    stats."""
    if ctx.kind != "pinwheel":
        return None
    deadline = time.monotonic() + 3
    while True:
        r = expect(ctx, "GET", "/proxies/%s/stats" % name, 200)
        bad = []
        for stream in ("upstream", "downstream"):
            d = dir_stats(r.json, stream)
            check(d is not None, "stats lack %s's counters: %r" % (stream, r.body[:300]))
            if d["held"] != 0 or d["bytes_in"] != d["bytes_out"] + d["bytes_cut"] + d["bytes_dropped"]:
                bad.append("%s %r" % (stream, d))
            if want_in and stream in want_in and d["bytes_in"] != want_in[stream]:
                bad.append("%s bytes_in %d, expected %d" % (stream, d["bytes_in"], want_in[stream]))
        if r.json.get("active") != 0:
            bad.append("active %r" % r.json.get("active"))
        if not bad:
            return r.json
        if time.monotonic() > deadline:
            raise Failure("%s: stats do not balance after the close: %s" % (name, "; ".join(bad)))
        time.sleep(0.05)


def with_echo_proxy(ctx, name, toxics):
    echo = EchoServer()
    p = make_proxy(ctx, name, echo.addr)
    for t in toxics:
        add_toxic(ctx, name, t)
    return echo, proxy_port(p)


@test
def toxic_limit_data(ctx):
    for stream in ("downstream", "upstream"):
        limit = 1000
        echo, port = with_echo_proxy(ctx, "ld", [{"type": "limit_data", "stream": stream,
                                                  "attributes": {"bytes": limit}}])
        try:
            s = connect(port)
            data = pattern(7, 5000)
            s.sendall(data)
            got, how = recv_exact_or_close(s, len(data), time.monotonic() + 5)
            check(how in ("eof", "reset"), "limit_data %s: connection not closed (%s, %d bytes)"
                  % (stream, how, len(got)))
            if stream == "downstream":
                # the client gets exactly the first N bytes, then the close
                check(got == data[:limit], "limit_data %s %d: got %d bytes back%s"
                      % (stream, limit, len(got), "" if len(got) != limit else " (changed)"))
            else:
                # the server gets exactly the first N bytes; the connection
                # closes then, both ways (what the echo had sent back may
                # be cut: toxiproxy delivers none of it)
                time.sleep(0.1)
                check(echo.bytes == limit, "limit_data %s %d: the server got %d bytes"
                      % (stream, limit, echo.bytes))
                check(got == data[:len(got)], "limit_data %s: the bytes back are changed" % stream)
            s.close()
            js = balance(ctx, "ld")
            if js is not None:
                d = dir_stats(js, stream)
                check(d["bytes_out"] == limit, "limit_data %s: stats bytes_out %d" % (stream, d["bytes_out"]))
        finally:
            delete_proxy(ctx, "ld")
            echo.stop()


@test
def toxic_slicer(ctx):
    echo, port = with_echo_proxy(ctx, "sl", [
        {"type": "slicer", "attributes": {"average_size": 16, "size_variation": 8, "delay": 50}},
        {"type": "slicer", "stream": "upstream",
         "attributes": {"average_size": 100, "size_variation": 50, "delay": 0}}])
    try:
        s = connect(port)
        data = pattern(11, 20000)
        s.sendall(data)
        got, how = recv_exact_or_close(s, len(data), time.monotonic() + 20)
        check(how == "full" and got == data, "slicer: %d of %d bytes back in order (%s)%s"
              % (len(got), len(data), how, "" if got == data[:len(got)] else ", changed"))
        s.close()
        js = balance(ctx, "sl")
        if js is not None:
            # sliced: at least one write per average_size + size_variation bytes
            for stream, most in (("downstream", 16 + 8), ("upstream", 100 + 50)):
                d = dir_stats(js, stream)
                check(d["chunks_out"] >= len(data) // most, "slicer %s: %d bytes in %d writes"
                      % (stream, len(data), d["chunks_out"]))
    finally:
        delete_proxy(ctx, "sl")
        echo.stop()


@test
def toxic_reset_peer(ctx):
    ms = 200
    echo, port = with_echo_proxy(ctx, "rp", [{"type": "reset_peer", "attributes": {"timeout": ms}}])
    try:
        t0 = time.monotonic()
        s = connect(port)
        s.sendall(b"ping")
        how, n, t1 = wait_close(s, time.monotonic() + 5)
        check(how == "reset", "reset_peer: the connection ended by %s, not a reset (ECONNRESET)" % how)
        check(t1 - t0 >= ms / 1000.0 - 0.002, "reset_peer %d ms: reset after %.1f ms (early)"
              % (ms, (t1 - t0) * 1000))
        s.close()
        balance(ctx, "rp")
    finally:
        delete_proxy(ctx, "rp")
        echo.stop()


@test
def toxic_timeout(ctx):
    ms = 300
    echo, port = with_echo_proxy(ctx, "to", [{"type": "timeout", "attributes": {"timeout": ms}}])
    try:
        t0 = time.monotonic()
        s = connect(port)
        s.sendall(b"ping" * 100)
        how, n, t1 = wait_close(s, time.monotonic() + 5)
        check(how in ("eof", "reset"), "timeout %d ms: not closed in 5 s" % ms)
        check(n == 0, "timeout: %d bytes got through" % n)
        check(t1 - t0 >= ms / 1000.0 - 0.002, "timeout %d ms: closed after %.1f ms (early)"
              % (ms, (t1 - t0) * 1000))
        s.close()
        balance(ctx, "to")
    finally:
        delete_proxy(ctx, "to")
        echo.stop()


@test
def toxic_latency(ctx):
    ms = 100
    echo, port = with_echo_proxy(ctx, "lat", [
        {"type": "latency", "attributes": {"latency": ms, "jitter": 0}},
        {"type": "latency", "stream": "upstream", "attributes": {"latency": ms // 2, "jitter": 0}}])
    try:
        s = connect(port)
        rtts = []
        for i in range(5):
            msg = pattern(i, 64)
            t0 = time.monotonic()
            s.sendall(msg)
            got, how = recv_exact_or_close(s, len(msg), time.monotonic() + 5)
            rtts.append(time.monotonic() - t0)
            check(got == msg, "latency: echo %d came back as %r (%s)" % (i, got[:16], how))
        want = (ms + ms // 2) / 1000.0
        check(min(rtts) >= want - 0.002, "latency %d+%d ms: a round trip took %.1f ms (early)"
              % (ms, ms // 2, min(rtts) * 1000))
        print("    latency %d ms down + %d up: round trips %.1f..%.1f ms"
              % (ms, ms // 2, min(rtts) * 1000, max(rtts) * 1000))
        s.close()
        # toxicity 0: the toxic applies to no connection
        expect(ctx, "DELETE", "/proxies/lat/toxics/latency_downstream", 204)
        expect(ctx, "DELETE", "/proxies/lat/toxics/latency_upstream", 204)
        add_toxic(ctx, "lat", {"type": "latency", "toxicity": 0, "attributes": {"latency": 3000}})
        s = connect(port)
        t0 = time.monotonic()
        s.sendall(b"zero")
        got, how = recv_exact_or_close(s, 4, time.monotonic() + 5)
        check(got == b"zero" and time.monotonic() - t0 < 1.5,
              "latency 3000 ms with toxicity 0: applied (%.0f ms, %s)" % ((time.monotonic() - t0) * 1000, how))
        s.close()
    finally:
        delete_proxy(ctx, "lat")
        echo.stop()


@test
def toxic_slow_close(ctx):
    ms = 200
    echo, port = with_echo_proxy(ctx, "sc", [{"type": "slow_close", "attributes": {"delay": ms}}])
    try:
        s = connect(port)
        s.sendall(b"bye")
        got, how = recv_exact_or_close(s, 3, time.monotonic() + 5)
        check(got == b"bye", "slow_close: the echo came back as %r (%s)" % (got, how))
        t0 = time.monotonic()
        s.shutdown(socket.SHUT_WR)   # the echo server closes; its close is delayed
        how, n, t1 = wait_close(s, time.monotonic() + 5)
        check(how in ("eof", "reset"), "slow_close: not closed in 5 s")
        check(t1 - t0 >= ms / 1000.0 - 0.002, "slow_close %d ms: closed after %.1f ms (early)"
              % (ms, (t1 - t0) * 1000))
        print("    slow_close %d ms: closed %.1f ms after the client's FIN" % (ms, (t1 - t0) * 1000))
        s.close()
    finally:
        delete_proxy(ctx, "sc")
        echo.stop()


@test
def toxic_change_in_flight(ctx):
    """A bandwidth toxic removed and a latency toxic changed while bytes
    are in them: every byte arrives, in order.  Then the proxy disabled
    with bytes held: the connection closes (pinwheel: the stats count
    what it held as dropped)."""
    size = 400000
    echo, port = with_echo_proxy(ctx, "cf", [{"type": "bandwidth", "name": "bw",
                                              "attributes": {"rate": 200}}])
    s = None
    try:
        s = connect(port)
        data = pattern(21, size)
        threading.Thread(target=s.sendall, args=(data,), daemon=True).start()
        got, how = recv_exact_or_close(s, size // 4, time.monotonic() + 5)
        check(how == "full", "bandwidth 200 KB/s: %d bytes in 5 s (%s)" % (len(got), how))
        add_toxic(ctx, "cf", {"type": "latency", "name": "lat", "attributes": {"latency": 300}})
        expect(ctx, "PATCH", "/proxies/cf/toxics/lat", 200, {"attributes": {"latency": 100}})
        expect(ctx, "DELETE", "/proxies/cf/toxics/bw", 204)
        rest, how = recv_exact_or_close(s, size - len(got), time.monotonic() + 10)
        got += rest
        check(got == data, "toxics changed in flight: %d of %d bytes back%s (%s)"
              % (len(got), size, "" if got == data[:len(got)] else ", changed", how))
        # bytes held when the proxy is disabled: the connection closes
        expect(ctx, "DELETE", "/proxies/cf/toxics/lat", 204)
        add_toxic(ctx, "cf", {"type": "latency", "name": "lat2", "attributes": {"latency": 5000}})
        s.sendall(data[:50000])
        deadline = time.monotonic() + 3
        while echo.bytes < size + 50000 and time.monotonic() < deadline:
            time.sleep(0.02)
        expect(ctx, "PATCH", "/proxies/cf", 200, {"enabled": False})
        how, n, _ = wait_close(s, time.monotonic() + 5)
        check(how in ("eof", "reset") and n == 0, "disabled with bytes held: %s, %d bytes" % (how, n))
        js = balance(ctx, "cf")
        if js is not None:
            d = dir_stats(js, "downstream")
            check(d["bytes_dropped"] > 0, "disabled with bytes held: stats %r" % d)
    finally:
        if s:
            s.close()
        delete_proxy(ctx, "cf")
        echo.stop()


def one_shot_server(mode):
    """A listener whose every connection, after reading, either answers
    only after the client's FIN ("halfclose") or resets ("rst")."""
    ls = socket.socket()
    ls.bind((HOST, 0))
    ls.listen(8)

    def run():
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            try:
                if mode == "halfclose":
                    while c.recv(65536):
                        pass
                    time.sleep(0.1)
                    c.sendall(b"late answer")
                else:
                    c.recv(10)
                    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
            c.close()
    threading.Thread(target=run, daemon=True).start()
    return ls


@test
def close_semantics(ctx):
    """toxiproxy's closes: a client's FIN closes the connection both ways
    (an answer the server sends after it is not delivered); a server's
    RST reaches the client as a plain close (EOF)."""
    for mode in ("halfclose", "rst"):
        ls = one_shot_server(mode)
        try:
            p = make_proxy(ctx, "cl", "%s:%d" % ls.getsockname())
            s = connect(proxy_port(p))
            s.sendall(b"x" * 1000)
            if mode == "halfclose":
                s.shutdown(socket.SHUT_WR)
            got, how = recv_exact_or_close(s, 100, time.monotonic() + 5)
            check(got == b"" and how == "eof", "%s: the client got %r, then %s" % (mode, got, how))
            s.close()
            balance(ctx, "cl")
        finally:
            delete_proxy(ctx, "cl")
            ls.close()


@test
def upstream_refused(ctx):
    p = make_proxy(ctx, "refused", "127.0.0.1:%d" % free_port())
    try:
        s = connect(proxy_port(p))
        s.sendall(b"x")
        how, n, _ = wait_close(s, time.monotonic() + 5)
        check(how in ("eof", "reset") and n == 0, "upstream refused: the client's connection %s" % how)
        s.close()
    finally:
        delete_proxy(ctx, "refused")


@test
def stats(ctx):
    st = per_server(ctx, "GET /proxies/{name}/stats", 404, 200, "pinwheel's per-proxy statistics")
    make_proxy(ctx, "sx", "127.0.0.1:9")
    try:
        r = request(ctx, "GET", "/proxies/sx/stats")
        check(r.status == st, "GET /proxies/sx/stats: expected %d, got %r" % (st, r))
        if ctx.kind == "pinwheel":
            check(isinstance(r.json, dict), "stats are not a JSON object: %r" % r.body)
            expect(ctx, "GET", "/proxies/nosuch/stats", 404)
    finally:
        delete_proxy(ctx, "sx")


def dir_stats(js, stream):
    """The counters of @stream ("upstream" or "downstream") in pinwheel's
    stats JSON, wherever the object nests them."""
    if isinstance(js, dict):
        if stream in js and isinstance(js[stream], dict) and "bytes_in" in js[stream]:
            return js[stream]
        for v in js.values():
            r = dir_stats(v, stream)
            if r is not None:
                return r
    return None


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


def udp_balance(ctx, name):
    r = expect(ctx, "GET", "/proxies/%s/stats" % name, 200)
    for d in ("upstream", "downstream"):
        s = r.json[d]
        check(s["rx"] + s["clones"] == s["out"] + s["dropped_total"] + s["backlog"],
              "udp stats %s do not balance: %r" % (d, s))
    return r.json


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
        time.sleep(0.2)
        before = udp_balance(ctx, "u1")["upstream"]
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


# SIGTERM is last: it stops the server
@test
def sigterm_in_flight(ctx):
    """Bytes held in a latency toxic when SIGTERM comes: pinwheel's stats
    balance exactly before the stop, and it exits 0 promptly."""
    nconn, size = 4, 65536
    echo, port = with_echo_proxy(ctx, "term", [{"type": "latency", "attributes": {"latency": 5000}}])
    socks = []
    try:
        for i in range(nconn):
            s = connect(port)
            s.sendall(pattern(i, size))
            socks.append(s)
        total = nconn * size
        deadline = time.monotonic() + 4
        while echo.bytes < total and time.monotonic() < deadline:
            time.sleep(0.02)
        check(echo.bytes == total, "the echo server got %d of %d bytes" % (echo.bytes, total))
        if ctx.kind == "pinwheel":
            up = down = None
            while time.monotonic() < deadline:
                r = expect(ctx, "GET", "/proxies/term/stats", 200)
                up, down = dir_stats(r.json, "upstream"), dir_stats(r.json, "downstream")
                check(up is not None and down is not None,
                      "stats lack upstream/downstream counters: %r" % r.body[:500])
                if down["bytes_in"] == total:
                    break
                time.sleep(0.02)
            check(up["bytes_in"] == total and up["bytes_out"] == total,
                  "upstream: %d bytes sent, stats in %d out %d" % (total, up["bytes_in"], up["bytes_out"]))
            check(down["bytes_in"] == total and down["bytes_out"] == 0 and down.get("held") == total,
                  "downstream held in the latency toxic: %d bytes echoed, stats %r" % (total, down))
            print("    stats before SIGTERM: upstream in %d out %d; downstream in %d out %d held %d"
                  % (up["bytes_in"], up["bytes_out"], down["bytes_in"], down["bytes_out"], down["held"]))
        proc = ctx.server.proc
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise Failure("the server did not exit within 10 s of SIGTERM")
        took = time.monotonic() - t0
        want = 0
        check(rc == want, "exit status %d on SIGTERM, expected %d" % (rc, want))
        for i, s in enumerate(socks):
            how, n, _ = wait_close(s, time.monotonic() + 5)
            check(how in ("eof", "reset"), "connection %d still open after the server exited" % i)
        print("    SIGTERM: exit %d after %.3f s" % (rc, took))
    finally:
        for s in socks:
            s.close()
        echo.stop()


# ---------------------------------------------------------------- main

SANITIZER_RE = re.compile(r"runtime error:|ERROR: (Address|Leak|Memory|Undefined)Sanitizer|"
                          r"WARNING: ThreadSanitizer")



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", choices=("toxiproxy", "pinwheel"), required=True)
    ap.add_argument("--bin", required=True, help="the server's binary")
    ap.add_argument("--only", default="", help="comma-separated names of checks to run")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    if not (os.path.isfile(args.bin) and os.access(args.bin, os.X_OK)):
        print("SKIP: %s: no executable server binary" % args.bin)
        return 77
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096 and hard > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    workdir = tempfile.mkdtemp(prefix="netem_api_")
    server = Server(args.server, args.bin, workdir)
    try:
        server.start()
    except Failure as e:
        print("FAIL: start: %s" % e)
        return 1
    print("%s on %s:%d (log %s)" % (args.server, HOST, server.port, server.log))
    ctx = Ctx(server)
    only = set(x for x in args.only.split(",") if x)
    passed = failed = 0
    try:
        for fn in CHECKS:
            if only and fn.__name__ not in only:
                continue
            if server.proc.poll() is not None:
                print("FAIL %s: the server is gone (exit %d)" % (fn.__name__, server.proc.returncode))
                failed += 1
                continue
            t0 = time.monotonic()
            try:
                fn(ctx)
                passed += 1
                print("PASS %s (%.2f s)" % (fn.__name__, time.monotonic() - t0))
            except Failure as e:
                failed += 1
                print("FAIL %s: %s" % (fn.__name__, e))
            except Exception:
                failed += 1
                print("FAIL %s: %s" % (fn.__name__, traceback.format_exc().strip().replace("\n", "\n    ")))
            sys.stdout.flush()
    finally:
        server.stop()
    # a sanitizer's report in the server's output (a build with ASan, UBSan
    # or TSan: UBSan and TSan go on running) fails the run
    with open(server.log, "rb") as f:
        bad = [ln for ln in f.read().decode(errors="replace").splitlines()
               if SANITIZER_RE.search(ln)]
    if bad:
        failed += 1
        print("FAIL sanitizer: the server's log (%s) has %d report lines, first: %s"
              % (server.log, len(bad), bad[0]))
    for what, tox, pw, why in DIFFS:
        print("DIFF %s: toxiproxy %r, pinwheel %r%s" % (what, tox, pw, (" (" + why + ")") if why else ""))
    print("%d passed, %d failed" % (passed, failed))
    if failed == 0:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
