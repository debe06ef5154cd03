#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
The API server as a network service and a process: clients dripping a
request byte by byte (slowloris) while others are served, 1,000
connections at once through one proxy with every byte checked, a server
started with a config file (toxiproxy's -config, pinwheel's --config: the
proxies made at start, a bad or missing file), the guard against web
pages (a browser's User-Agent, a Host that does not name a loopback API,
--allow-host), and a SIGTERM with bytes in flight (run last: it stops the
server).

Part of tests/netem_api/api_test.py (the runner: it imports this module,
runs its @test checks in its ORDER and prints the DIFF lines).  Threads:
the runner's main thread; echo servers on threads of their own.
"""

import errno
import http.client
import json
import os
import select
import selectors
import signal
import socket
import subprocess
import threading
import time

from api_udp import udp_echo, udp_round_trips

from common import *  # noqa: F401,F403 (the shared helpers)


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
        poll(lambda: echo.bytes, lambda n: n >= total, 4)
        check(echo.bytes == total, "the echo server got %d of %d bytes" % (echo.bytes, total))
        if ctx.kind == "pinwheel":
            def both():
                r = expect(ctx, "GET", "/proxies/term/stats", 200)
                ud = dir_stats(r.json, "upstream"), dir_stats(r.json, "downstream")
                check(None not in ud, "stats lack upstream/downstream counters: %r" % r.body[:500])
                return ud
            # the counters are not read at one instant: both ledgers balanced too
            up, down = poll(both, lambda ud: ud[1]["bytes_in"] == total and all(map(ledger_ok, ud)), 4)
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


def config_argv(ctx, path):
    """The config-file argument of the server under test."""
    return ["-config" if ctx.kind == "toxiproxy" else "--config", path]


@test
def config_file(ctx):
    """A second server started with a config file of two proxies, one TCP
    and one "protocol":"udp" (toxiproxy: a TCP one): GET /proxies shows both
    listening, bytes go through the TCP one (and, pinwheel, datagrams
    through the UDP one) byte-exact."""
    echo = EchoServer()
    uecho, uport = udp_echo()
    wd = ctx.server.workdir
    path = os.path.join(wd, "config.json")
    with open(path, "w") as f:
        json.dump([{"name": "ct", "listen": HOST + ":0", "upstream": echo.addr},
                   {"name": "cu", "listen": HOST + ":0", "upstream": "%s:%d" % (HOST, uport),
                    "protocol": "udp"}], f)
    srv = Server(ctx.kind, ctx.server.binary, wd, extra=config_argv(ctx, path))
    srv.log = os.path.join(wd, "config.log")  # scanned for sanitizer reports too
    try:
        srv.start()
        c2 = Ctx(srv)
        r = expect(c2, "GET", "/proxies", 200)
        check(sorted(r.json) == ["ct", "cu"], "GET /proxies after the config: %r" % r.json)
        for name in ("ct", "cu"):
            check_proxy_json(r.json[name], name, enabled=True)
            check(proxy_port(r.json[name]) != 0, "%s's listen port 0 not resolved: %r" % (name, r.json[name]))
        s = connect(proxy_port(r.json["ct"]))
        data = pattern(77, 4096)
        s.sendall(data)
        got, how = recv_exact_or_close(s, len(data), time.monotonic() + 5)
        s.close()
        check(got == data, "through ct: %d of %d bytes back (%s)" % (len(got), len(data), how))
        if ctx.kind == "pinwheel":
            check(r.json["cu"].get("protocol") == "udp", "cu from the config: %r" % r.json["cu"])
            udp_round_trips(r.json["cu"]["listen"], 3, "cfg")
            with open(srv.log, "rb") as f:
                log = f.read().decode(errors="replace")
            check("2 proxies from %s (2 listening)" % path in log,
                  "the start does not say what the config made: %r" % log[-500:])
    finally:
        srv.stop()
        echo.stop()
        uecho.sendto(b"quit", uecho.getsockname())
        uecho.close()


def start_outcome(ctx, argv, log):
    """Start the server under test with @argv more; ("exit", status) when
    it exits, ("serving", Ctx) when its API answers (the caller stops it),
    within 15 s."""
    port = free_port()
    if ctx.kind == "toxiproxy":
        base = [ctx.server.binary, "-host", HOST, "-port", str(port)]
    else:
        base = [ctx.server.binary, "--api", "%s:%d" % (HOST, port)]
    with open(log, "ab") as logf:
        proc = subprocess.Popen(base + argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                                cwd=ctx.server.workdir, preexec_fn=die_with_parent)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        rc = proc.poll()
        if rc is not None:
            return "exit", rc, proc
        try:
            socket.create_connection((HOST, port), timeout=0.5).close()
            srv = Server(ctx.kind, ctx.server.binary, ctx.server.workdir)
            srv.proc, srv.port = proc, port
            return "serving", Ctx(srv), proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise Failure("the server neither exited nor answered in 15 s (log %s)" % log)


@test
def config_file_bad(ctx):
    """A config file that does not parse, one that misses a field, and one
    that is not there: pinwheel exits 2 with a message naming the file and
    the problem; toxiproxy logs the error and serves with no proxies."""
    wd = ctx.server.workdir
    cases = []
    for name, text, words in (("bad.json", '[{"name":"ct",', "expected near end of file"),
                              ("nofield.json", '[{"name":"ct","listen":"127.0.0.1:0"}]',
                               "missing required field: upstream"),
                              ("missing.json", None, "No such file or directory")):
        path = os.path.join(wd, name)
        if text is not None:
            with open(path, "w") as f:
                f.write(text)
        cases.append((name, path, words))
    what = per_server(ctx, "a config file that does not parse or is not there",
                      "the error logged, the API served with no proxies", "exit 2, naming the file",
                      "a server started without the proxies it was told to make fails its "
                      "clients' tests later and less clearly")
    for name, path, words in cases:
        log = os.path.join(wd, "config_%s.log" % name)
        how, res, proc = start_outcome(ctx, config_argv(ctx, path), log)
        try:
            with open(log, "rb") as f:
                out = f.read().decode(errors="replace")
            if ctx.kind == "pinwheel":
                check(how == "exit" and res == 2, "%s: %s %r, expected %s (%s)" % (name, how, res, what, out))
                check(path in out and words in out,
                      "%s: the message does not name the file and the problem: %r" % (name, out))
            else:
                check(how == "serving", "%s: toxiproxy %s %r, expected %s" % (name, how, res, what))
                r = expect(res, "GET", "/proxies", 200)
                check(r.json == {}, "%s: toxiproxy made %r" % (name, r.json))
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(10)


# ---------------------------------------------------------------- the browser guard


BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


def send_headers(port, method, path, headers, body=None, timeout=5.0):
    """One request with exactly @headers (a list of pairs: no Host, no
    User-Agent unless given) and @body (bytes) on a fresh connection."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in headers:
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        return Resp(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


def proxy_names(ctx):
    return sorted(expect(ctx, "GET", "/proxies", 200).json)


@test
def browser_guard(ctx):
    """Every request whose User-Agent starts with "Mozilla/" (every
    browser's) is refused with toxiproxy's 403 "User agent not allowed",
    reads included, and changes nothing, except the dashboard's: GET or
    HEAD of its page (/ and /dashboard) and a request carrying the page's
    token in X-Pinwheel-Token (docs/security.md; tested by
    dashboard_test.py); "mozilla/" (toxiproxy's rule is case-sensitive)
    and other clients pass."""
    own = "%s:%d" % (HOST, ctx.port)
    body = json.dumps({"name": "brw", "listen": HOST + ":0", "upstream": HOST + ":9"}).encode()
    for method, path, data in (("GET", "/version", None), ("GET", "/proxies", None),
                               ("POST", "/proxies", body), ("POST", "/reset", None),
                               ("DELETE", "/proxies/brw", None)):
        for ua in (BROWSER_UA, "Mozilla/"):
            r = send_headers(ctx.port, method, path, [("Host", own), ("User-Agent", ua)], data)
            check(r.status == 403 and r.body == b"User agent not allowed\n",
                  "%s %s with User-Agent %r: expected toxiproxy's 403, got %r" % (method, path, ua, r))
            check(r.headers.get("content-type") == "text/plain; charset=utf-8",
                  "%s %s: the 403's content type %r" % (method, path, r.headers.get("content-type")))
    check("brw" not in proxy_names(ctx), "a browser's POST made a proxy")
    for ua in ("mozilla/5.0", "curl/8.5.0", "Go-http-client/1.1"):
        r = send_headers(ctx.port, "GET", "/version", [("Host", own), ("User-Agent", ua)])
        check(r.status == 200, "GET /version with User-Agent %r: %r" % (ua, r))


@test
def host_guard(ctx):
    """An API on a loopback address answers only a Host that names it: its
    address, localhost, 127.0.0.1 or [::1], with its port or none
    (pinwheel; toxiproxy does not look at Host: a DIFF).  A request with no
    Host at all (HTTP/1.0: no browser's) is served."""
    for host in ("%s:%d" % (HOST, ctx.port), HOST, "localhost:%d" % ctx.port, "LocalHost",
                 "[::1]:%d" % ctx.port, "[::1]"):
        r = send_headers(ctx.port, "GET", "/version", [("Host", host)])
        check(r.status == 200, "GET /version with Host %r: %r" % (host, r))
    want = per_server(ctx, "a loopback API asked with another Host (DNS rebinding)", 200, 403,
                      "a page whose name is made to resolve to 127.0.0.1 is of the API's "
                      "origin to the browser; its requests carry its own name")
    for host in ("evil.example", "evil.example:%d" % ctx.port, "localhost:1",
                 "127.0.0.1.evil.example:%d" % ctx.port, "localhost.evil.example",
                 "localhost:%d:%d" % (ctx.port, ctx.port)):
        r = send_headers(ctx.port, "GET", "/proxies", [("Host", host)])
        check(r.status == want, "GET /proxies with Host %r: expected %d, got %r" % (host, want, r))
        if ctx.kind == "pinwheel":
            check(isinstance(r.json, dict) and r.json.get("status") == 403
                  and host in r.json.get("error", ""),
                  "the 403 should be a JSON error naming the Host %r: %r" % (host, r))
    s = socket.create_connection((HOST, ctx.port), timeout=5)
    try:
        s.sendall(b"GET /version HTTP/1.0\r\n\r\n")
        got, _ = recv_exact_or_close(s, 1 << 16, time.monotonic() + 5)
    finally:
        s.close()
    check(got.split(b"\r\n", 1)[0].endswith(b" 200 OK"),
          "HTTP/1.0 without Host: %r" % got[:120])


@test
def rebinding_attack(ctx):
    """The attack of issue 34 as a web page would make it: a text/plain
    POST (no CORS preflight) with a browser's User-Agent, Origin and Host
    evil.example, creating a proxy on 0.0.0.0 to 127.0.0.1:22: refused
    (403) by both, no proxy made; without the browser's User-Agent
    pinwheel still refuses it for its Host (toxiproxy makes the proxy)."""
    body = json.dumps({"name": "rebind", "listen": "0.0.0.0:0", "upstream": "127.0.0.1:22"}).encode()
    attack = [("Host", "evil.example"), ("User-Agent", BROWSER_UA), ("Origin", "http://evil.example"),
              ("Content-Type", "text/plain;charset=UTF-8"), ("Accept", "*/*")]
    try:
        r = send_headers(ctx.port, "POST", "/proxies", attack, body)
        check(r.status == 403, "the page's POST: %r" % r)
        check("rebind" not in proxy_names(ctx), "the page's POST made a proxy")
        body = json.dumps({"name": "rebind", "listen": HOST + ":0", "upstream": "127.0.0.1:22"}).encode()
        want = per_server(ctx, "the rebinding POST without a browser's User-Agent", 201, 403,
                          "the Host check does not rest on the User-Agent")
        r = send_headers(ctx.port, "POST", "/proxies",
                         [h for h in attack if h[0] != "User-Agent"], body)
        check(r.status == want, "the POST without the User-Agent: expected %d, got %r" % (want, r))
        check(("rebind" in proxy_names(ctx)) == (want == 201), "proxies after it: %r" % proxy_names(ctx))
    finally:
        delete_proxy(ctx, "rebind")


@test
def allow_host(ctx):
    """pinwheel: --allow-host NAME (repeatable) admits NAME as a Host, with
    the API's port or none, in any case; other names stay refused; a bad
    NAME stops the start.  An API on a non-loopback address (0.0.0.0, a
    container's) does not check Host.  toxiproxy has no such option and
    checks no Host (host_guard's DIFF)."""
    if ctx.kind != "pinwheel":
        r = send_headers(ctx.port, "GET", "/version", [("Host", "dev.example")])
        check(r.status == 200, "toxiproxy with Host dev.example: %r" % r)
        return
    wd = ctx.server.workdir
    log = os.path.join(wd, "allow_host.log")
    how, res, proc = start_outcome(ctx, ["--allow-host", "dev.example", "--allow-host", "[fe80::1]"], log)
    try:
        check(how == "serving", "with --allow-host: %s %r" % (how, res))
        port = res.port
        for host, want in (("dev.example", 200), ("dev.example:%d" % port, 200), ("DEV.Example", 200),
                           ("[fe80::1]:%d" % port, 200), ("localhost:%d" % port, 200),
                           ("dev.example:1", 403), ("evil.example", 403), ("www.dev.example", 403),
                           ("fe80::1", 403)):
            r = send_headers(port, "GET", "/version", [("Host", host)])
            check(r.status == want, "--allow-host dev.example, Host %r: expected %d, got %r"
                  % (host, want, r))
    finally:
        proc.terminate()
        proc.wait(10)
    how, res, proc = start_outcome(ctx, ["--allow-host", "a b"], log)
    if proc.poll() is None:
        proc.terminate()
        proc.wait(10)
    with open(log, "rb") as f:
        out = f.read().decode(errors="replace")
    check(how == "exit" and res != 0 and '--allow-host "a b"' in out,
          "--allow-host \"a b\": %s %r (%r)" % (how, res, out[-300:]))
    # on 0.0.0.0 no Host is checked (requests still go to 127.0.0.1)
    port = free_port()
    with open(log, "ab") as logf:
        proc = subprocess.Popen([ctx.server.binary, "--api", "0.0.0.0:%d" % port],
                                stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                                cwd=wd, preexec_fn=die_with_parent)
    try:
        r = poll(lambda: _try_version(port, "evil.example"), lambda v: v is not None, 10)
        check(r is not None and r.status == 200, "--api 0.0.0.0, Host evil.example: %r" % r)
    finally:
        proc.terminate()
        proc.wait(10)


def _try_version(port, host):
    try:
        return send_headers(port, "GET", "/version", [("Host", host)], timeout=2)
    except OSError:
        return None
