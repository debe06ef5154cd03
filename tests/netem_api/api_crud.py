#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
The API's bookkeeping, checked against both servers: GET /version, the
proxies' and toxics' create/read/update/delete, enabled false/true,
/populate and /reset, an upstream changed or not resolving yet, and bad
input (malformed JSON, unknown types, negative or non-numeric
attributes, duplicate names, an address in use, an oversized body), an
error message cut inside a UTF-8 character, and a failed update that
must change nothing.

Part of tests/netem_api/api_test.py (the runner: it imports this module,
runs its @test checks in its ORDER and prints the DIFF lines).  Threads:
the runner's main thread; echo servers on threads of their own.
"""

import json
import socket
import time

from common import *  # noqa: F401,F403 (the shared helpers)


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


def utf8_error_answer(r, what):
    """@r is a 400 whose body is valid UTF-8 JSON with a non-empty error."""
    check(r.status == 400, "%s: expected 400, got %r" % (what, r))
    try:
        text = r.body.decode("utf-8")  # strict: a split character fails here
    except UnicodeDecodeError as e:
        raise Failure("%s: the error body is not UTF-8 (%s): %r" % (what, e, r.body[-80:]))
    j = json.loads(text)
    check(isinstance(j, dict) and isinstance(j.get("error"), str) and j["error"].strip()
          and j.get("status") == 400, "%s: the error lost its message: %r" % (what, r.body[-200:]))
    return j["error"]


@test
def error_body_utf8(ctx):
    """A message cut to fit (the tc words repeated in it, cut at 120 or 512
    bytes) is cut on a UTF-8 character's boundary: the 400 carries a
    non-empty error that is valid UTF-8 (issue 34: the JSON encoder failed
    on a split "é" and the answer was {"status":400} alone).  Two paddings,
    so that one of them puts the cut inside a character."""
    make_proxy(ctx, "utf", "127.0.0.1:9")
    try:
        for pad in range(2):
            words = "netem delay 1ms " + "x" * pad + "\u00e9" * 300
            r = request(ctx, "POST", "/proxies/utf/toxics",
                        {"name": "q%d" % pad, "type": "tc", "attributes": {"qdisc": words}})
            utf8_error_answer(r, "qdisc with %d bytes of padding" % pad)
            line = "qdisc add dev tcx0 root netem delay 1ms " + "x" * pad + "\u00e9" * 100
            r = request(ctx, "POST", "/proxies/utf/toxics",
                        {"name": "b%d" % pad, "type": "tc", "attributes": {"batch": line}})
            utf8_error_answer(r, "batch line with %d bytes of padding" % pad)
        check(expect(ctx, "GET", "/proxies/utf/toxics", 200).json == [], "a refused toxic was kept")
    finally:
        delete_proxy(ctx, "utf")


@test
def update_all_or_nothing(ctx):
    """A PATCH (or POST on the proxy) with a new upstream and a listen
    address already in use: 500 on both (toxiproxy's status), and on
    pinwheel nothing changes: listen, upstream, "enabled" and the toxics
    as before, the old listener never closed (a connection made before
    goes on echoing); toxiproxy keeps the new fields and disables the
    proxy (a DIFF).  The same for an enable with a listen in use."""
    echo = EchoServer()
    busy = socket.socket()
    busy.bind((HOST, 0))
    busy.listen(1)
    busy_addr = "%s:%d" % (HOST, busy.getsockname()[1])
    other = "%s:%d" % (HOST, free_port())
    keeps = per_server(ctx, "a PATCH whose new listen is in use (500)",
                       "the new listen and upstream kept, the proxy disabled",
                       "nothing changed: enabled, listening, its fields as before",
                       "an update is all or nothing")
    s = None
    try:
        for method, body, enabled in (
                ("PATCH", {"upstream": other, "listen": busy_addr}, True),
                ("POST", {"upstream": other, "listen": busy_addr}, True),
                ("PATCH", {"listen": busy_addr}, True),
                ("PATCH", {"upstream": other, "listen": busy_addr, "enabled": True}, False)):
            p = make_proxy(ctx, "aon", echo.addr, enabled=enabled)
            add_toxic(ctx, "aon", {"type": "latency", "name": "lat", "attributes": {"latency": 1}})
            what = "%s %r on a proxy %s" % (method, body, "enabled" if enabled else "disabled")
            if enabled:
                s = connect(proxy_port(p))
                s.sendall(b"before")
                got, how = recv_exact_or_close(s, 6, time.monotonic() + 5)
                check(got == b"before", "%s: echo before: %r %s" % (what, got, how))
            r = expect(ctx, method, "/proxies/aon", 500, body)
            g = expect(ctx, "GET", "/proxies/aon", 200).json
            if ctx.kind == "pinwheel":
                check(g["listen"] == p["listen"] and g["upstream"] == echo.addr
                      and g["enabled"] is enabled and len(g["toxics"]) == 1,
                      "%s: answered %r, then %r: expected %s (%r)" % (what, r, g, keeps, p))
                if enabled:
                    s.sendall(b"after")
                    got, how = recv_exact_or_close(s, 5, time.monotonic() + 5)
                    check(got == b"after", "%s: the connection made before: %r %s" % (what, got, how))
                    s2 = connect(proxy_port(p))
                    s2.sendall(b"new")
                    got, how = recv_exact_or_close(s2, 3, time.monotonic() + 5)
                    s2.close()
                    check(got == b"new", "%s: a new connection: %r %s" % (what, got, how))
            else:
                check(g["listen"] == busy_addr and g["enabled"] is False,
                      "%s: toxiproxy answered %r, then %r: expected %s" % (what, r, g, keeps))
            if s:
                s.close()
                s = None
            delete_proxy(ctx, "aon")
    finally:
        if s:
            s.close()
        delete_proxy(ctx, "aon")
        busy.close()
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
def names_longer_than_127(ctx):
    """A proxy or toxic name of 128 bytes: pinwheel refuses it (400 naming
    the limit), toxiproxy takes it; 127 bytes pass on both."""
    why = "pinwheel bounds a name to 127 bytes (a fixed field, no allocation per name)"
    make_proxy(ctx, "n" * 127, "127.0.0.1:9")
    try:
        st = per_server(ctx, "a proxy name of 128 bytes", 201, 400, why)
        r = expect(ctx, "POST", "/proxies", st,
                   {"name": "m" * 128, "listen": HOST + ":0", "upstream": "127.0.0.1:9"})
        if st == 400:
            check("127" in r.json["error"], "the refusal does not name the limit: %r" % r.json)
        add_toxic(ctx, "n" * 127, {"type": "latency", "name": "t" * 127, "attributes": {"latency": 1}})
        st = per_server(ctx, "a toxic name of 128 bytes", 200, 400, why)
        r = add_toxic(ctx, "n" * 127, {"type": "latency", "name": "u" * 128,
                                       "attributes": {"latency": 1}}, st)
        if st == 400:
            check("127" in r.json["error"], "the refusal does not name the limit: %r" % r.json)
    finally:
        delete_proxy(ctx, "n" * 127)
        delete_proxy(ctx, "m" * 128)


@test
def identity(ctx):
    """What tells the servers apart without changing a status code: the
    version string, the proxy JSON's "Logger", an error's text (a body
    that is not JSON: each server's parser words it) and the
    X-Toxiproxy-Request-Id header."""
    r = expect(ctx, "GET", "/version", 200)
    got = r.json["version"]
    want = per_server(ctx, "GET /version's version", "2.8.0 (a build may add a suffix)",
                      "2.8.0-pinwheel", "a client can tell pinwheel from toxiproxy")
    if ctx.kind == "pinwheel":
        check(got == want, "version %r, expected %r" % (got, want))
    else:
        check(got.startswith("2.8.0") and "pinwheel" not in got, "toxiproxy's version %r" % got)
    has = "x-toxiproxy-request-id" in r.headers
    want = per_server(ctx, "an X-Toxiproxy-Request-Id header", True, False,
                      "pinwheel keeps no per-request log to correlate it with")
    check(has == want, "X-Toxiproxy-Request-Id %r in %r" % (has, r.headers))
    p = make_proxy(ctx, "ident", "127.0.0.1:9")
    try:
        want = per_server(ctx, 'the proxy JSON\'s "Logger":{}', True, False,
                          "toxiproxy serializes its logger's (empty) state; pinwheel has none to show")
        check(("Logger" in p) == want, "Logger in %r" % p)
        r = expect(ctx, "POST", "/proxies", 400, raw=b"{bad")
        got = r.json["error"]
        want = per_server(ctx, "the error text of a body that is not JSON ({bad})",
                          "bad request body: invalid character 'b' looking for beginning of object key string",
                          "bad request body: string or '}' expected near 'bad' (line 1, column 4)",
                          "the same status; each server's JSON parser words the error")
        check(got == want, "error text %r, expected %r" % (got, want))
    finally:
        delete_proxy(ctx, "ident")


@test
def limits(ctx):
    """pinwheel's limits, each reached: the 1,025th proxy (populated up to
    1,024, one POST more), the 65th toxic of a proxy, and a tc text of
    64 KiB (pinwheel only: toxiproxy has no tc toxic).  toxiproxy has no
    such limits and takes the one more."""
    why = "pinwheel bounds what the API can make it hold: 1,024 proxies, 64 toxics each, 64 KiB of tc text"
    r = expect(ctx, "GET", "/proxies", 200)
    have = len(r.json)
    names = ["lim%d" % i for i in range(1024 - have)]
    t0 = time.monotonic()
    try:
        r = expect(ctx, "POST", "/populate", 201,
                   [{"name": n, "listen": HOST + ":0", "upstream": "127.0.0.1:9"} for n in names])
        check(len(r.json["proxies"]) == len(names),
              "/populate answered %d proxies of %d" % (len(r.json["proxies"]), len(names)))
        st = per_server(ctx, "the 1,025th proxy", 201, 400, why)
        r = expect(ctx, "POST", "/proxies", st,
                   {"name": "lim_over", "listen": HOST + ":0", "upstream": "127.0.0.1:9"})
        if st == 400:
            check("1024" in r.json["error"], "the refusal does not name the limit: %r" % r.json)
    finally:
        for n in names + ["lim_over"]:
            delete_proxy(ctx, n)
    print("    1,024 proxies made and deleted in %.2f s" % (time.monotonic() - t0))
    make_proxy(ctx, "tlim", "127.0.0.1:9")
    try:
        for i in range(64):
            add_toxic(ctx, "tlim", {"type": "latency", "name": "l%d" % i, "attributes": {"latency": 1}})
        st = per_server(ctx, "the 65th toxic of a proxy", 200, 400, why)
        r = add_toxic(ctx, "tlim", {"type": "latency", "name": "l64", "attributes": {"latency": 1}}, st)
        if st == 400:
            check("64" in r.json["error"], "the refusal does not name the limit: %r" % r.json)
        if ctx.kind == "pinwheel":
            expect(ctx, "DELETE", "/proxies/tlim/toxics/l0", 204)
            long = "netem delay 1ms" + " " * (65536 - len("netem delay 1ms"))
            r = add_toxic(ctx, "tlim", {"type": "tc", "name": "long", "stream": "upstream",
                                        "attributes": {"qdisc": long}}, 400)
            check("65535" in r.json["error"] and "qdisc" in r.json["error"],
                  "a 64 KiB tc text's refusal does not name the attribute and the limit: %r" % r.json)
    finally:
        delete_proxy(ctx, "tlim")


@test
def listen_port_past_65535(ctx):
    """A listen port past 65535: pinwheel 400 (the client's error), as a
    listen address without a port; toxiproxy 500."""
    st = per_server(ctx, "POST /proxies with a listen port past 65535", 500, 400,
                    "a listen address that does not parse is the client's error (400), not the server's")
    r = expect(ctx, "POST", "/proxies", st, {"name": "bigport", "listen": HOST + ":70000",
                                             "upstream": "127.0.0.1:9"})
    if st == 400:
        check("listen" in r.json["error"], "the refusal does not name listen: %r" % r.json)
    expect(ctx, "GET", "/proxies/bigport", 404)
