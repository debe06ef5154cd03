#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
pinwheel-netem's dashboard (GET / and /dashboard) in a real browser:

    dashboard_test.py --bin .../pinwheel-netem

starts pinwheel-netem --api on a free loopback port with no proxy and a
local echo server.  First, over plain HTTP with a browser's User-Agent,
the guard's exceptions: GET and HEAD of / and /dashboard pass (the page,
HTML with its policy headers, no cookie, the process's token in its meta
tag: 32 hex digits, the same on every load); any other method or path
(/dashboard/data, /proxies, /metrics, /dashboard/) is refused 403 without
the token, or with a wrong one (another value, a prefix, a second header
beside the right one), and passes with it; a foreign Host is refused 403,
token or not.  Then it runs dashboard_browser.js, which opens the page in
headless Chromium (Debian's chromium, driven by puppeteer-core), creates
proxy "dash" (listening on a port picked here, upstream the echo server)
and its latency toxic from the page's forms, and checks what it shows and
what the guard lets a page do (its header lists the checks); a client
here passes traffic through "dash" as soon as it listens.  Here, after
it: the proxies are what the page left (dash, its toxic changed by the
page to CHANGED_MS; the POST made without the token created nothing).

Finds chromium (PW_CHROMIUM, else chromium on PATH), node, and
puppeteer-core under $PW_NPM_PREFIX (.ci/run installs it there; default
the repository's .ci-npm).  PW_DASHBOARD_SCREENSHOT=FILE.png saves the
page as the browser drew it (docs/img/dashboard.png).  Exit: 0 when every check passed; 1 otherwise;
77 (ctest's skip) when one of the three is missing (the HTTP checks having
passed), except under CI=true, where that fails.  Python 3 standard
library only.
"""

import argparse
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (HOST, Ctx, EchoServer, Failure, Server, check, connect,  # noqa: E402
                    expect, free_port, pattern, recv_exact_or_close)

HERE = os.path.dirname(os.path.abspath(__file__))
LATENCY_MS = 40
CHANGED_MS = 60
PUPPETEER = "puppeteer-core"


BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0"


def get(port, method, path, ua=BROWSER_UA, host=None, tokens=()):
    """One request with a browser's User-Agent (and @host as Host, each of
    @tokens in an X-Pinwheel-Token header)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=bool(host), skip_accept_encoding=True)
        conn.putheader("User-Agent", ua)
        if host:
            conn.putheader("Host", host)
        for t in tokens:
            conn.putheader("X-Pinwheel-Token", t)
        body = b"{}" if method in ("POST", "PUT") else None
        if body:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def http_checks(port):
    """The guard's exceptions, over plain HTTP."""
    tok = None
    for path in ("/", "/dashboard"):
        st, h, body = get(port, "GET", path)
        check(st == 200 and h.get("content-type", "").startswith("text/html")
              and body.startswith(b"<!DOCTYPE html>"), "GET %s (browser): %d %r" % (path, st, h))
        csp = h.get("content-security-policy", "")
        check("default-src 'none'" in csp and "connect-src 'self'" in csp
              and h.get("x-frame-options") == "DENY" and "set-cookie" not in h,
              "the page's headers (policy, no cookie): %r" % h)
        check(b"http://" not in body.split(b"-->", 1)[1] and b"https://" not in body,
              "the page names no other resource")
        m = re.search(rb'<meta name="pinwheel-token" content="([0-9a-f]{32})">', body)
        check(m is not None and b"@PINWHEEL_TOKEN@" not in body, "the page's token: %r" % m)
        check(tok in (None, m.group(1).decode()), "the token differs between loads")
        tok = m.group(1).decode()
        check(get(port, "HEAD", path)[0] == 200, "HEAD %s (browser)" % path)
    wrong = ("0" * 32 if tok != "0" * 32 else "1" * 32, tok[:-1], tok + "0", tok.upper(), "")
    for m, path in (("GET", "/dashboard/data"), ("GET", "/proxies"), ("POST", "/dashboard"),
                    ("POST", "/proxies"), ("GET", "/dashboard/"), ("GET", "/metrics"),
                    ("GET", "/version"), ("DELETE", "/proxies/x"), ("POST", "/")):
        for tokens in [()] + [(w,) for w in wrong] + [(tok, wrong[0]), (wrong[0], tok)]:
            st, h, body = get(port, m, path, tokens=tokens)
            check(st == 403 and body == b"User agent not allowed\n",
                  "%s %s (browser, tokens %r): %d %r, want toxiproxy's 403"
                  % (m, path, tokens, st, body[:100]))
    st, h, body = get(port, "GET", "/dashboard/data", tokens=(tok,))
    js = json.loads(body) if st == 200 else None
    check(js is not None and js["proxies"] == [] and "now_ms" in js,
          "GET /dashboard/data (browser, token): %d %r" % (st, body[:200]))
    for m, path, want in (("GET", "/proxies", 200), ("GET", "/version", 200),
                          ("DELETE", "/proxies/x", 404), ("POST", "/dashboard", 404)):
        st = get(port, m, path, tokens=(tok,))[0]
        check(st == want, "%s %s (browser, token): %d, want %d" % (m, path, st, want))
    for path in ("/", "/dashboard", "/dashboard/data", "/proxies"):
        st, h, body = get(port, "GET", path, host="evil.test:%d" % port, tokens=(tok,))
        check(st == 403 and b"evil.test" in body, "GET %s, Host evil.test, token: %d" % (path, st))
        st = get(port, "GET", path, ua="curl/8", host="evil.test")[0]
        check(st == 403, "GET %s, Host evil.test, no browser: %d" % (path, st))
    st = get(port, "POST", "/dashboard", ua="curl/8")[0]
    check(st == 404, "POST /dashboard (no browser): %d, want the API's 404" % st)
    print("PASS: over HTTP: a browser gets GET/HEAD / and /dashboard (the token in the page, "
          "no cookie); anything else 403 without the token or with a wrong one, passes with it; "
          "a foreign Host 403, token or not")
    return tok


def find_browser():
    """(chromium, node, puppeteer-core's folder), and why not when one is missing."""
    chromium = os.environ.get("PW_CHROMIUM") or shutil.which("chromium")
    node = shutil.which("node") or shutil.which("nodejs")
    prefix = os.environ.get("PW_NPM_PREFIX") or os.path.join(HERE, "..", "..", ".ci-npm")
    module = os.path.abspath(os.path.join(prefix, "node_modules", PUPPETEER))
    found = (chromium, node, module)
    if not chromium:
        return found, ("no chromium on PATH (Debian: apt-get install --no-install-recommends "
                       "chromium)")
    if not node:
        return found, "no node (Debian: apt-get install nodejs npm)"
    if not os.path.isfile(os.path.join(module, "package.json")):
        return found, ("no %s under %s (.ci/run installs it: npm install --prefix DIR "
                       "%s@VERSION; PW_NPM_PREFIX=DIR names the folder)"
                       % (PUPPETEER, prefix, PUPPETEER))
    return found, None


def missing(why):
    if os.environ.get("CI") == "true":
        print("FAIL: %s (CI=true: .ci/run installs it)" % why)
        return 1
    print("SKIP: %s" % why)
    return 77


class Traffic(threading.Thread):
    """A client writing 2,000 bytes through the proxy every 100 ms and
    reading them back, until stop(); it connects as soon as the proxy
    listens (the page creates it), within 30 s."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.halt = threading.Event()
        self.error = None
        self.rounds = 0

    def run(self):
        try:
            end = time.monotonic() + 30
            while True:
                try:
                    s = connect(self.port)
                    break
                except OSError:
                    if time.monotonic() > end or self.halt.wait(0.05):
                        raise
            while not self.halt.is_set():
                data = pattern(self.rounds, 2000)
                s.sendall(data)
                got, how = recv_exact_or_close(s, len(data), time.monotonic() + 5)
                if got != data:
                    raise Failure("echo through the proxy: %d of %d bytes (%s)"
                                  % (len(got), len(data), how))
                self.rounds += 1
                self.halt.wait(0.1)
            s.close()
        except (OSError, Failure) as e:
            self.error = str(e)

    def stop(self):
        self.halt.set()
        self.join(10)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="pinwheel-netem")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        print("SKIP: %s: no executable" % args.bin)
        return 77
    wd = tempfile.mkdtemp(prefix="netem_dash_")
    srv = Server("pinwheel", os.path.abspath(args.bin), wd)
    echo = EchoServer()
    traffic = None
    ok = False
    try:
        srv.start()
        c = Ctx(srv)
        tok = http_checks(srv.port)
        listen = free_port()
        traffic = Traffic(listen)
        traffic.start()
        (chromium, node, module), why = find_browser()
        if why:
            return missing(why)
        out = subprocess.run([node, os.path.join(HERE, "dashboard_browser.js"),
                              "--module", module, "--chromium", chromium,
                              "--port", str(srv.port), "--proxy", "dash",
                              "--listen", "%s:%d" % (HOST, listen), "--upstream", echo.addr,
                              "--latency", str(LATENCY_MS), "--changed", str(CHANGED_MS),
                              "--token", tok, "--profile",
                              os.path.join(wd, "profile")] +
                             (["--screenshot", os.environ["PW_DASHBOARD_SCREENSHOT"]]
                              if os.environ.get("PW_DASHBOARD_SCREENSHOT") else []),
                             stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=60)
        sys.stdout.write(out.stdout)
        sys.stdout.write(out.stderr)
        check(out.returncode == 0, "dashboard_browser.js exited %d" % out.returncode)
        px = expect(c, "GET", "/proxies", 200).json
        check(sorted(px) == ["dash"], "the proxies the page left: %r, want dash alone" % sorted(px))
        tox = px["dash"]["toxics"]
        check(len(tox) == 1 and tox[0]["name"] == "lat" and tox[0]["type"] == "latency"
              and tox[0]["stream"] == "downstream"
              and tox[0]["attributes"]["latency"] == CHANGED_MS,
              "dash's toxics, as the page left them: %r" % tox)
        print("PASS: the API holds what the page made (dash, toxic lat at %d ms), and "
              "nothing of the requests without the token" % CHANGED_MS)
        traffic.stop()
        check(traffic.error is None, "the traffic: %s" % traffic.error)
        check(traffic.rounds > 0, "no traffic passed")
        ok = True
    except (Failure, subprocess.TimeoutExpired) as e:
        print("FAIL: %s (server log %s)" % (e, srv.log))
    finally:
        if traffic:
            traffic.stop()
        srv.stop()
        echo.stop()
    if ok:
        shutil.rmtree(wd, ignore_errors=True)
        print("PASS")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
