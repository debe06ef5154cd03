#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
The helpers of tests/netem_api/api_test.py, shared by its checks: the
HTTP requests and their expectations (per-server ones and the DIFF list
of deliberate differences from toxiproxy), the JSON checks, a loopback
echo server, socket reads with deadlines, and the server under test
(toxiproxy or pinwheel-netem) started on a free loopback port and stopped.
Python 3 standard library only.  Threads: the echo servers run on threads
of their own; everything else on the caller's.
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

HOST = "127.0.0.1"

# ---------------------------------------------------------------- helpers


def free_port():
    """A loopback TCP port nobody listens on now (the kernel's pick)."""
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


DIFFS = []   # (check, toxiproxy's behaviour, pinwheel's, why)


def per_server(ctx, what, toxiproxy, pinwheel, why):
    """The expected value of @what on the server under test; a deliberate
    difference (toxiproxy's value != pinwheel's) is listed once."""
    if toxiproxy != pinwheel and not any(d[0] == what for d in DIFFS):
        DIFFS.append((what, toxiproxy, pinwheel, why))
    return toxiproxy if ctx.kind == "toxiproxy" else pinwheel


class Resp:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return "%d %r" % (self.status, self.body[:300])


def request(ctx, method, path, body=None, raw=None, timeout=10.0):
    """One request on a fresh connection; @body is JSON-encoded, @raw sent
    as it is.  A server that answers before reading a large body and
    closes (413) is read all the same."""
    conn = http.client.HTTPConnection(HOST, ctx.port, timeout=timeout)
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": "application/json"} if data is not None else {}
    try:
        try:
            conn.request(method, path, body=data, headers=headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered and closed before the whole body went: read the answer
        r = conn.getresponse()
        return Resp(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


def expect(ctx, method, path, status, body=None, raw=None):
    """request() and check its status; an error status must carry
    toxiproxy's error body {"error": "...", "status": N}."""
    r = request(ctx, method, path, body=body, raw=raw)
    check(r.status == status, "%s %s: expected %d, got %r" % (method, path, status, r))
    if status >= 400 and status != 405 and not (status == 404 and not path.startswith("/proxies")):
        check(isinstance(r.json, dict) and isinstance(r.json.get("error"), str)
              and r.json["error"] and r.json.get("status") == status,
              "%s %s: error body should be {\"error\":..,\"status\":%d}, got %r"
              % (method, path, status, r.body[:300]))
    if 200 <= status < 300 and status != 204:
        check(r.json is not None, "%s %s: body is not JSON: %r" % (method, path, r.body[:300]))
        check("application/json" in r.headers.get("content-type", ""),
              "%s %s: content-type %r" % (method, path, r.headers.get("content-type")))
    if status == 204:
        check(r.body == b"", "%s %s: 204 with a body %r" % (method, path, r.body[:100]))
    return r


def parse_hostport(s):
    m = re.match(r"^\[?([^\]]*)\]?:(\d+)$", s)
    check(m is not None, "not HOST:PORT: %r" % s)
    return m.group(1), int(m.group(2))


def check_proxy_json(p, name, upstream=None, enabled=None):
    check(isinstance(p, dict), "proxy is not an object: %r" % (p,))
    for k in ("name", "listen", "upstream", "enabled", "toxics"):
        check(k in p, "proxy JSON lacks %r: %r" % (k, p))
    check(p["name"] == name, "proxy name %r, expected %r" % (p["name"], name))
    if upstream is not None:
        check(p["upstream"] == upstream, "upstream %r, expected %r" % (p["upstream"], upstream))
    if enabled is not None:
        check(p["enabled"] is enabled, "enabled %r, expected %r" % (p["enabled"], enabled))
    check(isinstance(p["toxics"], list), "toxics is not a list: %r" % (p["toxics"],))


def check_toxic_json(t, name, type_, stream, toxicity, attrs):
    check(isinstance(t, dict), "toxic is not an object: %r" % (t,))
    check(t.get("name") == name, "toxic name %r, expected %r" % (t.get("name"), name))
    check(t.get("type") == type_, "toxic type %r, expected %r" % (t.get("type"), type_))
    check(t.get("stream") == stream, "toxic stream %r, expected %r" % (t.get("stream"), stream))
    check(t.get("toxicity") == toxicity,
          "toxic toxicity %r, expected %r" % (t.get("toxicity"), toxicity))
    a = t.get("attributes")
    check(isinstance(a, dict), "toxic attributes not an object: %r" % (t,))
    for k, v in attrs.items():
        check(a.get(k) == v, "toxic %s attribute %s = %r, expected %r (%r)" % (name, k, a.get(k), v, a))


def make_proxy(ctx, name, upstream, listen=HOST + ":0", enabled=None):
    body = {"name": name, "listen": listen, "upstream": upstream}
    if enabled is not None:
        body["enabled"] = enabled
    r = expect(ctx, "POST", "/proxies", 201, body)
    check_proxy_json(r.json, name, upstream)
    return r.json


def proxy_port(p):
    return parse_hostport(p["listen"])[1]


def delete_proxy(ctx, name):
    """Clean-up: a server gone already is reported by the next check."""
    try:
        request(ctx, "DELETE", "/proxies/" + name)
    except OSError:
        pass


def add_toxic(ctx, proxy, body, status=200):
    return expect(ctx, "POST", "/proxies/%s/toxics" % proxy, status, body)


def pattern(conn_id, n):
    """@n bytes that differ per connection and per offset (a lost, doubled
    or misplaced byte shows)."""
    out = bytearray(n)
    x = (conn_id * 2654435761 + 12345) & 0xFFFFFFFF
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        out[i] = (x >> 16) & 0xFF
    return bytes(out)


class EchoServer:
    """A loopback TCP echo server on one thread (selectors): writes back
    every byte it reads, counts bytes and the peak of open connections."""

    def __init__(self, refuse=False):
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind((HOST, 0))
        self.lsock.listen(4096)
        self.lsock.setblocking(False)
        self.port = self.lsock.getsockname()[1]
        self.addr = "%s:%d" % (HOST, self.port)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.lsock, selectors.EVENT_READ, None)
        self.lock = threading.Lock()
        self.open = 0
        self.peak = 0
        self.accepted = 0
        self.bytes = 0
        self.stopping = False
        self.wake_r, self.wake_w = socket.socketpair()
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _close(self, s):
        try:
            self.sel.unregister(s)
        except (KeyError, ValueError):
            pass
        s.close()
        with self.lock:
            self.open -= 1

    def _run(self):
        pend = {}
        while not self.stopping:
            for key, ev in self.sel.select(0.5):
                if key.data == "wake":
                    return
                if key.data is None:
                    while True:
                        try:
                            c, _ = self.lsock.accept()
                        except (BlockingIOError, InterruptedError):
                            break
                        c.setblocking(False)
                        pend[c] = bytearray()
                        self.sel.register(c, selectors.EVENT_READ, "c")
                        with self.lock:
                            self.open += 1
                            self.accepted += 1
                            self.peak = max(self.peak, self.open)
                    continue
                s = key.fileobj
                buf = pend[s]
                if ev & selectors.EVENT_READ and len(buf) < (1 << 20):
                    try:
                        d = s.recv(65536)
                    except (ConnectionResetError, BlockingIOError):
                        d = None if sys.exc_info()[0] is BlockingIOError else b""
                    if d == b"":
                        del pend[s]
                        self._close(s)
                        continue
                    if d:
                        buf += d
                        with self.lock:
                            self.bytes += len(d)
                if buf:
                    try:
                        n = s.send(buf)
                        del buf[:n]
                    except BlockingIOError:
                        pass
                    except (BrokenPipeError, ConnectionResetError):
                        del pend[s]
                        self._close(s)
                        continue
                want = selectors.EVENT_READ | (selectors.EVENT_WRITE if buf else 0)
                if len(buf) >= (1 << 20):
                    want = selectors.EVENT_WRITE
                self.sel.modify(s, want, "c")

    def stop(self):
        self.stopping = True
        self.wake_w.send(b"x")
        self.thread.join(5)
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()
        self.wake_w.close()


def connect(port, timeout=5.0):
    s = socket.create_connection((HOST, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_exact_or_close(s, limit, deadline):
    """Read until @limit bytes or the peer closes; returns (bytes, how)
    where how is 'full', 'eof', 'reset' or 'timeout'."""
    got = bytearray()
    while len(got) < limit:
        left = deadline - time.monotonic()
        if left <= 0:
            return bytes(got), "timeout"
        s.settimeout(left)
        try:
            d = s.recv(min(65536, limit - len(got)))
        except socket.timeout:
            return bytes(got), "timeout"
        except ConnectionResetError:
            return bytes(got), "reset"
        if not d:
            return bytes(got), "eof"
        got += d
    return bytes(got), "full"


def wait_close(s, deadline):
    """Read and discard until the peer closes: (how, bytes read, time)."""
    n = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout", n, time.monotonic()
        s.settimeout(left)
        try:
            d = s.recv(65536)
        except socket.timeout:
            return "timeout", n, time.monotonic()
        except ConnectionResetError:
            return "reset", n, time.monotonic()
        if not d:
            return "eof", n, time.monotonic()
        n += len(d)


def port_refuses(port):
    try:
        s = socket.create_connection((HOST, port), timeout=2)
    except ConnectionRefusedError:
        return True
    s.close()
    return False


# ---------------------------------------------------------------- the server


def die_with_parent():
    """In the server's child process: SIGKILL when this test dies (a test
    killed by ctest's timeout leaves no server behind)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Server:
    def __init__(self, kind, binary, workdir, extra=()):
        self.kind = kind
        self.binary = binary
        self.workdir = workdir
        self.extra = list(extra)  # more arguments (e.g. the config file)
        self.proc = None
        self.port = None
        self.log = os.path.join(workdir, "server.log")

    def start(self):
        for attempt in range(5):
            self.port = free_port()
            if self.kind == "toxiproxy":
                argv = [self.binary, "-host", HOST, "-port", str(self.port)]
            else:
                argv = [self.binary, "--api", "%s:%d" % (HOST, self.port)]
            argv += self.extra
            logf = open(self.log, "ab")
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf,
                                         stderr=logf, cwd=self.workdir,
                                         preexec_fn=die_with_parent)
            logf.close()
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if self._ready():
                    return
                time.sleep(0.05)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
                raise Failure("%s did not answer GET /version in 15 s (log %s)" % (self.kind, self.log))
            with open(self.log, "rb") as f:
                tail = f.read()[-2000:].decode(errors="replace")
            if "address already in use" in tail.lower():
                continue  # the free port was taken meanwhile: another
            raise Failure("%s exited %d at start: %s" % (self.kind, self.proc.returncode, tail))
        raise Failure("no free port for the API after 5 tries")

    def _ready(self):
        if self.kind == "pinwheel":
            with open(self.log, "rb") as f:
                if b"api listening on" not in f.read():
                    return False
        try:
            s = socket.create_connection((HOST, self.port), timeout=0.5)
        except OSError:
            return False
        s.close()
        return True

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Ctx:
    def __init__(self, server):
        self.server = server
        self.kind = server.kind
        self.port = server.port


# ---------------------------------------------------------------- the checks' registry

TESTS = {}  # name -> check, filled by each module's @test; run in api_test.py's ORDER


def test(fn):
    """Register @fn as a check (its name is its name in the output)."""
    if fn.__name__ in TESTS:
        raise SystemExit("two checks named %s" % fn.__name__)
    TESTS[fn.__name__] = fn
    return fn


# ---------------------------------------------------------------- the data path's helpers


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


def poll(get, done, secs=5.0):
    """get() until done(value) holds or @secs pass; returns the last value
    (the caller checks it, so a deadline reads as that check's failure)."""
    deadline = time.monotonic() + secs
    while True:
        v = get()
        if done(v) or time.monotonic() > deadline:
            return v
        time.sleep(0.02)


def ledger_ok(d):
    """pinwheel: one direction's counters balance: every byte read was
    written, cut by a toxic, dropped at a close or is held (a snapshot
    taken while a worker moves them may not: tcp.c, "Statistics")."""
    return d["bytes_in"] == d["bytes_out"] + d["bytes_cut"] + d["bytes_dropped"] + d["held"]


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
            if d["held"] != 0 or not ledger_ok(d):
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
