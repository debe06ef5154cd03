#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
GET /metrics scraped by a real Prometheus server (Debian's prometheus):

    prometheus_test.py --bin .../pinwheel-netem

starts pinwheel-netem as toxiproxy-server would be started
(-host 127.0.0.1 -port P -proxy-metrics -runtime-metrics), makes a proxy
to a local echo server and passes 5,000 bytes through it each way, then
starts `prometheus` on a loopback port and a storage folder of its own (the
package may run its own service on :9090), scraping the API every second,
and asks its query API until it returns what the proxy carried:
toxiproxy_proxy_received_bytes_total and pinwheel_proxy_read_bytes_total
for the proxy (5000 each way), up{job="pinwheel"} 1, and runtime series
(pinwheel_runtime_wakeups_total, _timers_pending).  Beside it the command
line's UDP relay with --metrics ADDR:PORT -runtime-metrics, 10 datagrams
each way through a 2 ms netem, scraped as a second job: up 1, its
pinwheel_udp_* under proxy="relay" (10 each way), and its workers' timed
wake-ups in pinwheel_runtime_wakeup_lateness_seconds (10 at least).  A scrape Prometheus could not parse
would leave up at 0 and the series absent.

Exit: 0 when Prometheus returned every series with its value; 1 otherwise;
77 (ctest's skip) without prometheus on PATH, or the binary, except under
CI=true, where a missing prometheus fails.  Python 3 standard library only.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (HOST, Ctx, EchoServer, Failure, check, connect, expect, free_port,  # noqa: E402
                    pattern, proxy_port, recv_exact_or_close)
from api_cli import Started  # noqa: E402
from api_udp import udp_echo, udp_round_trips  # noqa: E402




def query(port, q):
    url = "http://%s:%d/api/v1/query?%s" % (HOST, port, urllib.parse.urlencode({"query": q}))
    with urllib.request.urlopen(url, timeout=5) as r:
        js = json.loads(r.read())
    check(js.get("status") == "success", "query %r: %r" % (q, js))
    return [(s["metric"], float(s["value"][1])) for s in js["data"]["result"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="pinwheel-netem")
    args = ap.parse_args()
    prom = shutil.which("prometheus")
    if not prom:
        if os.environ.get("CI") == "true":
            print("FAIL: no prometheus on PATH (CI=true: .ci/run installs it)")
            return 1
        print("SKIP: no prometheus on PATH (apt-get install --no-install-recommends prometheus)")
        return 77
    if not os.access(args.bin, os.X_OK):
        print("SKIP: %s: no executable" % args.bin)
        return 77
    wd = tempfile.mkdtemp(prefix="netem_prom_")

    class S:  # what api_cli.Started needs of the server under test
        binary = os.path.abspath(args.bin)
        workdir = wd
        kind = "pinwheel"
        port = 0

    echo = EchoServer()
    port = free_port()
    ok = False
    srv = proms = relay = uecho = None
    try:
        srv = Started(Ctx(S), ["-host", HOST, "-port", str(port), "-proxy-metrics",
                               "-runtime-metrics"], port, "prometheus")
        c = srv.ctx
        r = expect(c, "POST", "/proxies", 201, {"name": "pm", "listen": HOST + ":0",
                                                "upstream": echo.addr})
        s = connect(proxy_port(r.json))
        data = pattern(9, 5000)
        s.sendall(data)
        got, how = recv_exact_or_close(s, len(data), time.monotonic() + 5)
        s.close()
        check(got == data, "through pm: %d of 5000 bytes (%s)" % (len(got), how))
        # the command line's UDP relay with --metrics, 10 datagrams each way
        uecho, uport = udp_echo()
        lport, mport = free_port(), free_port()
        rlog = open(os.path.join(wd, "relay.log"), "wb")
        relay = subprocess.Popen([S.binary, "--listen", "%s:%d" % (HOST, lport), "--to",
                                  "%s:%d" % (HOST, uport), "--up", "netem delay 2ms",
                                  "--metrics", "%s:%d" % (HOST, mport), "-runtime-metrics"],
                                 stdin=subprocess.DEVNULL, stdout=rlog, stderr=rlog, cwd=wd)
        rlog.close()
        deadline = time.monotonic() + 15
        while True:
            check(relay.poll() is None, "the relay exited %r" % relay.returncode)
            try:
                with socket.create_connection((HOST, mport), timeout=1):
                    break
            except OSError:
                check(time.monotonic() < deadline, "no relay metrics on %d" % mport)
                time.sleep(0.05)
        udp_round_trips("%s:%d" % (HOST, lport), 10, "pr")
        pport = free_port()
        cfg = os.path.join(wd, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: pinwheel\n    static_configs:\n"
                    "      - targets: ['%s:%d']\n"
                    "  - job_name: pinwheel_relay\n    static_configs:\n"
                    "      - targets: ['%s:%d']\n" % (HOST, port, HOST, mport))
        plog = open(os.path.join(wd, "prometheus.log"), "wb")
        proms = subprocess.Popen([prom, "--config.file=" + cfg,
                                  "--storage.tsdb.path=" + os.path.join(wd, "data"),
                                  "--web.listen-address=%s:%d" % (HOST, pport)],
                                 stdin=subprocess.DEVNULL, stdout=plog, stderr=plog, cwd=wd)
        plog.close()
        want = {
            'toxiproxy_proxy_received_bytes_total{proxy="pm",direction="upstream"}': 5000,
            'toxiproxy_proxy_sent_bytes_total{proxy="pm",direction="downstream"}': 5000,
            'pinwheel_proxy_read_bytes_total{proxy="pm",direction="downstream"}': 5000,
            'up{job="pinwheel"}': 1,
            'count(pinwheel_runtime_wakeups_total{runtime="tcp"}) > bool 0': 1,
            'count(process_open_fds) > bool 0': 1,
            'count(pinwheel_runtime_timers_pending{runtime="tcp"}) > bool 0': 1,
            'up{job="pinwheel_relay"}': 1,
            'pinwheel_udp_received_datagrams_total{proxy="relay",direction="upstream"}': 10,
            'pinwheel_udp_sent_datagrams_total{proxy="relay",direction="downstream"}': 10,
            'sum(pinwheel_runtime_wakeup_lateness_seconds_count{runtime="relay"}) >= bool 10': 1,
        }
        deadline = time.monotonic() + 60
        got = {}
        while time.monotonic() < deadline:
            check(proms.poll() is None, "prometheus exited %r (log %s/prometheus.log)"
                  % (proms.returncode, wd))
            try:
                got = {}
                for q in want:
                    res = query(pport, q)
                    got[q] = res[0][1] if len(res) == 1 else res
                if got == want:
                    break
            except OSError:
                pass  # not listening yet
            time.sleep(0.5)
        for q, v in want.items():
            print("%s %s: %r (want %r)" % ("PASS" if got.get(q) == v else "FAIL", q, got.get(q), v))
        ok = got == want
    except Failure as e:
        print("FAIL: %s" % e)
    finally:
        if proms:
            proms.terminate()
            try:
                proms.wait(15)
            except subprocess.TimeoutExpired:
                proms.kill()
                proms.wait()
        if srv:
            srv.stop()
        if relay:
            relay.terminate()
            try:
                relay.wait(10)
            except subprocess.TimeoutExpired:
                relay.kill()
                relay.wait()
        if uecho:
            uecho.sendto(b"quit", uecho.getsockname())
            uecho.close()
        echo.stop()
    if ok:
        shutil.rmtree(wd, ignore_errors=True)
        print("prometheus scraped pinwheel-netem's /metrics: ok")
        return 0
    print("logs in %s" % wd)
    return 1


if __name__ == "__main__":
    sys.exit(main())
