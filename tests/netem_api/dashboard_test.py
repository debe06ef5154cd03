#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
pinwheel-netem's dashboard (GET /dashboard) in a real browser:

    dashboard_test.py --bin .../pinwheel-netem

starts pinwheel-netem --api on a free loopback port, a proxy "dash" to a
local echo server with a latency toxic (downstream, LATENCY_MS), and a
client passing a little traffic through it the whole time.  First, over
plain HTTP with a browser's User-Agent, the guard's exception: GET and
HEAD of /dashboard and /dashboard/data pass (the page is HTML with its
policy headers, the data JSON naming the proxy), any other method on them,
any other path (/dashboard/, /proxies, /metrics) is refused 403, and a
foreign Host is refused on the dashboard's paths too.  Then it runs
dashboard_browser.js, which opens the page in headless Chromium (Debian's
chromium, driven by puppeteer-core) and checks what it shows and what the
guard lets the page do (its header lists the checks).  Here, after it: the
POST it tried from the page's origin created no proxy.

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
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (HOST, Ctx, EchoServer, Failure, Server, add_toxic, check, connect,  # noqa: E402
                    expect, make_proxy, pattern, proxy_port, recv_exact_or_close)

HERE = os.path.dirname(os.path.abspath(__file__))
LATENCY_MS = 40
PUPPETEER = "puppeteer-core"


BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0"


def get(port, method, path, ua=BROWSER_UA, host=None):
    """One request with a browser's User-Agent (and @host as Host)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        headers = {"User-Agent": ua}
        if host:
            headers["Host"] = host
        conn.request(method, path, body=b"{}" if method in ("POST", "PUT") else None,
                     headers=headers)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def http_checks(port):
    """The guard's dashboard exception, over plain HTTP."""
    st, h, body = get(port, "GET", "/dashboard")
    check(st == 200 and h.get("content-type", "").startswith("text/html")
          and body.startswith(b"<!DOCTYPE html>"), "GET /dashboard (browser): %d %r" % (st, h))
    csp = h.get("content-security-policy", "")
    check("default-src 'none'" in csp and "connect-src 'self'" in csp
          and h.get("x-frame-options") == "DENY", "the page's policy headers: %r" % h)
    check(b"http://" not in body.split(b"-->", 1)[1] and b"https://" not in body,
          "the page names no other resource")
    st, h, body = get(port, "GET", "/dashboard/data")
    js = json.loads(body) if st == 200 else None
    check(js is not None and [p["name"] for p in js["proxies"]] == ["dash"]
          and "downstream" in js["proxies"][0]["stats"] and "now_ms" in js,
          "GET /dashboard/data (browser): %d %r" % (st, body[:200]))
    for m, path in (("HEAD", "/dashboard"), ("HEAD", "/dashboard/data")):
        st = get(port, m, path)[0]
        check(st == 200, "%s %s (browser): %d, want 200" % (m, path, st))
    for m, path in (("POST", "/dashboard"), ("POST", "/dashboard/data"), ("PUT", "/dashboard"),
                    ("DELETE", "/dashboard/data"), ("GET", "/dashboard/"),
                    ("GET", "/dashboard/data/x"), ("GET", "/proxies"), ("POST", "/proxies"),
                    ("GET", "/metrics"), ("GET", "/version")):
        st, h, body = get(port, m, path)
        check(st == 403 and body == b"User agent not allowed\n",
              "%s %s (browser): %d %r, want toxiproxy's 403" % (m, path, st, body[:100]))
    for path in ("/dashboard", "/dashboard/data"):
        st, h, body = get(port, "GET", path, host="evil.test:%d" % port)
        check(st == 403 and b"evil.test" in body, "GET %s, Host evil.test: %d" % (path, st))
        st = get(port, "GET", path, ua="curl/8", host="evil.test")[0]
        check(st == 403, "GET %s, Host evil.test, no browser: %d" % (path, st))
    st = get(port, "POST", "/dashboard", ua="curl/8")[0]
    check(st == 404, "POST /dashboard (no browser): %d, want the API's 404" % st)
    print("PASS: over HTTP: a browser gets GET/HEAD /dashboard and /dashboard/data, "
          "403 for anything else; a foreign Host 403 on both")


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
    reading them back, until stop()."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.halt = threading.Event()
        self.error = None
        self.rounds = 0

    def run(self):
        try:
            s = connect(self.port)
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
        p = make_proxy(c, "dash", echo.addr)
        add_toxic(c, "dash", {"name": "lat", "type": "latency", "stream": "downstream",
                              "attributes": {"latency": LATENCY_MS, "jitter": 0}})
        traffic = Traffic(proxy_port(p))
        traffic.start()
        http_checks(srv.port)
        (chromium, node, module), why = find_browser()
        if why:
            return missing(why)
        out = subprocess.run([node, os.path.join(HERE, "dashboard_browser.js"),
                              "--module", module, "--chromium", chromium,
                              "--port", str(srv.port), "--proxy", "dash",
                              "--latency", str(LATENCY_MS), "--profile",
                              os.path.join(wd, "profile")] +
                             (["--screenshot", os.environ["PW_DASHBOARD_SCREENSHOT"]]
                              if os.environ.get("PW_DASHBOARD_SCREENSHOT") else []),
                             stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=60)
        sys.stdout.write(out.stdout)
        sys.stdout.write(out.stderr)
        check(out.returncode == 0, "dashboard_browser.js exited %d" % out.returncode)
        names = sorted(x["name"] for x in expect(c, "GET", "/proxies", 200).json.values())
        check(names == ["dash"], "the page's POST made no proxy: the proxies are %r" % names)
        print("PASS: the POST from the page created nothing (proxies: %s)" % json.dumps(names))
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
