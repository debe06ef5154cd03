# SPDX-License-Identifier: MIT
"""
The checks of api_test.py on toxiproxy-server's command line and its
GET /metrics (issue 38), run against both servers with the same argv:

  cli_toxiproxy_flags  the spellings Go's flag package takes (-flag value,
                       -flag=value, --flag value, --flag=value, booleans
                       alone or =true/=false, -seed in Go's integer syntax,
                       -config), each server started so and answering
                       GET /version;
  cli_bad_flags        an unknown flag, a value missing, a boolean that is
                       none, a positional argument: no server, a non-zero
                       exit (toxiproxy: 2 for the flags);
  cli_version          -version and --version print a version and exit 0;
  cli_help             -h prints the usage and exits 0;
  cli_defaults         no argument at all: the API on localhost:8474, as
                       toxiproxy-server (skipped when 8474 is taken);
  metrics_off          without -proxy-metrics/-runtime-metrics GET /metrics
                       is a 404 (the server under test is started so);
  metrics_side_by_side a server with -proxy-metrics -runtime-metrics: the
                       same traffic gives the same toxiproxy_proxy_* lines
                       (names, labels, values, order) on both, kept after
                       DELETE and added to when the proxy is made again;
                       process_* present; pinwheel's own series beside them
                       (a latency toxic's configured 0.05 s and the delay
                       histogram at least that); `promtool check metrics`
                       clean on pinwheel's text (toxiproxy's own has empty
                       HELP lines, which promtool's lint refuses: a DIFF).
  relay_metrics        pinwheel only: the command line's UDP relay with
                       --metrics ADDR:PORT -runtime-metrics: its datagrams
                       and its qdiscs' packets under proxy="relay", every
                       label set once (an mq's children apart by parent),
                       the runtime's wake-up lateness histogram (at most
                       one timed wake-up a round trip through the netem,
                       none while idle, buckets cumulative, +Inf =
                       count), the timers pending when idle (the one
                       client's idle timer), /metrics only (404
                       elsewhere), the API's browser and Host rules,
                       promtool clean; and the flags refused where they
                       mean nothing (-proxy-metrics on the relay,
                       -runtime-metrics without --metrics, --metrics with
                       --api, a bad address), each naming the option.
Python 3 standard library only (promtool from Debian's prometheus, looked
up on PATH: absent, that part says it was skipped, and fails under
CI=true).
"""

import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import time

from common import (HOST, Ctx, EchoServer, Failure, check, connect, die_with_parent, expect,
                    free_port, pattern, per_server, proxy_port, recv_exact_or_close, request,
                    test)
from api_udp import udp_echo, udp_round_trips


def run_exit(ctx, argv, secs=10):
    """Run the server binary with @argv; (exit status, output) when it
    exits within @secs, else Failure (it was serving: killed)."""
    p = subprocess.Popen([ctx.server.binary] + argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         cwd=ctx.server.workdir, preexec_fn=die_with_parent)
    try:
        out, _ = p.communicate(timeout=secs)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise Failure("%r did not exit in %d s" % (argv, secs))
    return p.returncode, out.decode(errors="replace")


class Started:
    """The binary under test started with @argv, serving its API on
    @port (GET /version answers), stopped by stop()."""

    def __init__(self, ctx, argv, port, tag):
        self.log = os.path.join(ctx.server.workdir, "cli_%s.log" % tag)
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen([ctx.server.binary] + argv, stdin=subprocess.DEVNULL,
                                     stdout=logf, stderr=logf, cwd=ctx.server.workdir,
                                     preexec_fn=die_with_parent)
        logf.close()
        self.ctx = Ctx(ctx.server)
        self.ctx.port = port
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                with open(self.log, "rb") as f:
                    tail = f.read()[-600:].decode(errors="replace")
                raise Failure("%r exited %d: %s" % (argv, self.proc.returncode, tail))
            try:
                if request(self.ctx, "GET", "/version", timeout=1).status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise Failure("%r: no API on port %d in 15 s" % (argv, port))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@test
def cli_toxiproxy_flags(ctx):
    wd = ctx.server.workdir
    cfg = os.path.join(wd, "cli_config.json")
    with open(cfg, "w") as f:
        json.dump([{"name": "clicfg", "listen": HOST + ":0", "upstream": HOST + ":9"}], f)
    forms = [
        lambda p: ["-host", HOST, "-port", str(p)],
        lambda p: ["-host=" + HOST, "-port=%d" % p],
        lambda p: ["--host", HOST, "--port=%d" % p],
        lambda p: ["--host=" + HOST, "--port", str(p), "-proxy-metrics", "-runtime-metrics=false"],
        lambda p: ["-port", str(p), "-host", HOST, "-seed", "-42", "--proxy-metrics=true"],
        lambda p: ["-host", HOST, "-port", str(p), "-seed=0x2a"],
        lambda p: ["-host", HOST, "-port", str(p), "-config", cfg],
        lambda p: ["-host", HOST, "-port", str(p), "--config=" + cfg, "--"],
    ]
    for i, form in enumerate(forms):
        port = free_port()
        argv = form(port)
        s = Started(ctx, argv, port, "flags%d" % i)
        try:
            if any("config" in a for a in argv):
                r = expect(s.ctx, "GET", "/proxies", 200)
                check("clicfg" in r.json, "%r: the config's proxy missing: %r" % (argv, r.json))
        finally:
            s.stop()


@test
def cli_bad_flags(ctx):
    port = str(free_port())
    for argv, words in ((["-host", HOST, "-port", port, "-nosuch"], "nosuch"),
                        (["-host", HOST, "-port"], "port"),
                        (["-host", HOST, "-port", port, "-proxy-metrics=maybe"], "maybe"),
                        (["-host", HOST, "-port", port, "-seed", "12x"], "12x"),
                        (["---host", HOST], "---host")):
        rc, out = run_exit(ctx, argv)
        check(rc == 2, "%r: exit %d, expected 2: %r" % (argv, rc, out[-300:]))
        check(words in out, "%r: the message does not name %r: %r" % (argv, words, out[-300:]))
    # a positional argument: toxiproxy's flag parsing stops there and
    # ignores it (it serves); pinwheel refuses it, naming it
    argv = ["-host", HOST, "-port", port, "stray"]
    if ctx.kind == "pinwheel":
        rc, out = run_exit(ctx, argv)
        check(rc == 2 and "stray" in out, "%r: %d %r" % (argv, rc, out[-300:]))
        # the metrics flags belong to the API: with the relay's options, refused
        argv = ["-proxy-metrics", "--listen", HOST + ":0", "--to", HOST + ":9"]
        rc, out = run_exit(ctx, argv)
        check(rc == 2 and "-proxy-metrics" in out, "%r: %d %r" % (argv, rc, out[-300:]))
    per_server(ctx, "cli: a positional argument", "ignored (and every flag after it)",
               "exit 2 naming it", "a stray word is a mistake pinwheel names")


@test
def cli_version(ctx):
    for argv in (["-version"], ["--version"], ["-version=true"]):
        rc, out = run_exit(ctx, argv)
        check(rc == 0, "%r: exit %d: %r" % (argv, rc, out[-300:]))
        check(re.search(r"version \S+", out), "%r printed no version: %r" % (argv, out[-300:]))


@test
def cli_help(ctx):
    rc, out = run_exit(ctx, ["-h"])
    check(rc == 0, "-h: exit %d: %r" % (rc, out[-300:]))
    check("-proxy-metrics" in out and "-host" in out, "-h: no usage of the flags: %r" % out[-500:])


@test
def cli_defaults(ctx):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind((HOST, 8474))
    except OSError:
        print("    (cli_defaults: port 8474 is taken here: skipped)")
        return
    finally:
        s.close()
    srv = Started(ctx, [], 8474, "defaults")
    srv.stop()


@test
def metrics_off(ctx):
    r = request(ctx, "GET", "/metrics")
    check(r.status == 404, "GET /metrics without the flags: %r" % r)


def scrape(c):
    r = request(c, "GET", "/metrics")
    check(r.status == 200, "GET /metrics: %r" % r)
    check(r.headers.get("content-type", "").startswith("text/plain"),
          "GET /metrics: content-type %r" % r.headers.get("content-type"))
    return r.body.decode()


def tp_lines(text):
    return [ln for ln in text.splitlines() if ln.startswith("toxiproxy_proxy_")]


def through(port, n, tag):
    s = connect(port)
    data = pattern(tag, n)
    s.sendall(data)
    got, how = recv_exact_or_close(s, n, time.monotonic() + 5)
    s.close()
    check(got == data, "%d of %d bytes back (%s)" % (len(got), n, how))


def wait_lines(c, want, secs=5.0):
    """toxiproxy counts a connection when it ends: poll until the lines
    are @want."""
    deadline = time.monotonic() + secs
    while True:
        got = tp_lines(scrape(c))
        if got == want or time.monotonic() > deadline:
            check(got == want, "toxiproxy's series:\n  got  %s\n  want %s"
                  % ("\n       ".join(got), "\n       ".join(want)))
            return
        time.sleep(0.1)


def expected(listener, upstream, name, n):
    out = []
    for fam in ("received", "sent"):
        for d in ("downstream", "upstream"):
            out.append('toxiproxy_proxy_%s_bytes_total{direction="%s",listener="%s",proxy="%s",'
                       'upstream="%s"} %d' % (fam, d, listener, name, upstream, n))
    return out


def sample(text, name, **labels):
    """The value of the sample @name{labels...} (all the labels given
    must match), or None."""
    for ln in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$", ln)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            return float(m.group(4))
    return None


def promtool_check(text, what):
    tool = shutil.which("promtool")
    if not tool:
        if os.environ.get("CI") == "true":
            raise Failure("promtool not found (CI=true: .ci/run installs prometheus)")
        print("    (promtool not found: %s not linted)" % what)
        return None
    p = subprocess.run([tool, "check", "metrics"], input=text.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    return p.returncode, p.stdout.decode(errors="replace")


@test
def metrics_side_by_side(ctx):
    echo = EchoServer()
    port = free_port()
    srv = Started(ctx, ["-host", HOST, "-port", str(port), "-proxy-metrics", "-runtime-metrics"],
                  port, "metrics")
    c = srv.ctx
    try:
        text = scrape(c)
        check(tp_lines(text) == [], "toxiproxy's series before any proxy: %r" % tp_lines(text))
        for name in ("process_cpu_seconds_total", "process_open_fds", "process_max_fds",
                     "process_resident_memory_bytes", "process_start_time_seconds"):
            check(sample(text, name) is not None, "no %s with -runtime-metrics" % name)
        r = expect(c, "POST", "/proxies", 201,
                   {"name": "m1", "listen": HOST + ":0", "upstream": echo.addr})
        lport = proxy_port(r.json)
        listener = "%s:%d" % (HOST, lport)
        through(lport, 3000, 1)
        wait_lines(c, expected(listener, echo.addr, "m1", 3000))
        through(lport, 1000, 2)
        wait_lines(c, expected(listener, echo.addr, "m1", 4000))
        # deleted: toxiproxy's counters keep the label set
        expect(c, "DELETE", "/proxies/m1", 204)
        wait_lines(c, expected(listener, echo.addr, "m1", 4000))
        # made again on the same port: counted on from there
        expect(c, "POST", "/proxies", 201, {"name": "m1", "listen": listener, "upstream": echo.addr})
        through(lport, 10, 3)
        wait_lines(c, expected(listener, echo.addr, "m1", 4010))
        text = scrape(c)
        lint = promtool_check(text, ctx.kind)
        if lint is not None:
            want = per_server(ctx, "promtool check metrics on GET /metrics", 3, 0,
                              "toxiproxy's own series carry an empty HELP, which promtool's lint "
                              "refuses; pinwheel writes one")
            check(lint[0] == want, "promtool check metrics: exit %d (expected %d): %s"
                  % (lint[0], want, lint[1][-600:]))
        if ctx.kind != "pinwheel":
            return
        # pinwheel's own, beside them: a latency toxic's configured value
        # and the achieved delay's histogram
        expect(c, "POST", "/proxies/m1/toxics", 200,
               {"type": "latency", "stream": "downstream", "attributes": {"latency": 50}})
        through(lport, 500, 4)
        # the workers' counters reach the stats a moment after the bytes
        deadline = time.monotonic() + 5
        while True:
            text = scrape(c)
            n = sample(text, "pinwheel_proxy_delay_seconds_count", proxy="m1",
                       direction="downstream")
            rd = sample(text, "pinwheel_proxy_read_bytes_total", proxy="m1", direction="upstream")
            if (n and rd == 510) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        lat = sample(text, "pinwheel_proxy_latency_configured_seconds", proxy="m1",
                     direction="downstream")
        check(lat == 0.05, "pinwheel_proxy_latency_configured_seconds: %r" % lat)
        # the runtimes': timers pending per CPU, and the TCP plane's
        # workers slept until the 50 ms toxic's timer: timed wake-ups
        check(sample(text, "pinwheel_runtime_timers_pending", runtime="tcp", cpu="0",
                     type="timer") is not None, "pinwheel_runtime_timers_pending of tcp")
        late = sum(v for v in (sample(text, "pinwheel_runtime_wakeup_lateness_seconds_count",
                                      runtime="tcp", cpu=str(k)) for k in range(64))
                   if v is not None)
        check(late >= 1, "pinwheel_runtime_wakeup_lateness_seconds_count of tcp: %r" % late)
        n = sample(text, "pinwheel_proxy_delay_seconds_count", proxy="m1", direction="downstream")
        tot = sample(text, "pinwheel_proxy_delay_seconds_sum", proxy="m1", direction="downstream")
        inf = sample(text, "pinwheel_proxy_delay_seconds_bucket", proxy="m1",
                     direction="downstream", le="+Inf")
        check(n and n >= 1 and inf == n, "the delay histogram's count %r, +Inf %r" % (n, inf))
        check(tot / n >= 0.05, "the achieved mean delay %.4f s < the configured 0.05" % (tot / n))
        low = sample(text, "pinwheel_proxy_delay_seconds_bucket", proxy="m1",
                     direction="downstream", le="0.033554432")
        check(low == 0, "delays under 33.5 ms with a 50 ms latency: %r" % low)
        rd = sample(text, "pinwheel_proxy_read_bytes_total", proxy="m1", direction="upstream")
        check(rd == 510, "pinwheel_proxy_read_bytes_total since made again: %r" % rd)
        check(sample(text, "pinwheel_proxy_enabled", proxy="m1") == 1, "pinwheel_proxy_enabled")
        for name in ("pinwheel_runtime_timers_expired_total", "pinwheel_runtime_kicks_total",
                     "pinwheel_runtime_wakeups_total"):
            check(sample(text, name, runtime="tcp") is not None, "no %s" % name)
        # a UDP proxy with a tc toxic (pinwheel's): its datagrams and its
        # device's qdisc in the text, which stays clean for promtool
        uecho, uport = udp_echo()
        try:
            r = expect(c, "POST", "/proxies", 201,
                       {"name": "mu", "listen": HOST + ":0", "upstream": "%s:%d" % (HOST, uport),
                        "protocol": "udp"})
            expect(c, "POST", "/proxies/mu/toxics", 200,
                   {"type": "tc", "name": "slow", "stream": "upstream",
                    "attributes": {"qdisc": "netem delay 5ms"}})
            udp_round_trips(r.json["listen"], 4, "met")
        finally:
            uecho.sendto(b"quit", uecho.getsockname())
            uecho.close()
        text = scrape(c)
        got = sample(text, "pinwheel_udp_received_datagrams_total", proxy="mu", direction="upstream")
        check(got == 4, "pinwheel_udp_received_datagrams_total upstream: %r" % got)
        got = sample(text, "pinwheel_qdisc_sent_packets_total", proxy="mu", direction="upstream",
                     kind="netem")
        check(got == 4, "pinwheel_qdisc_sent_packets_total of mu's netem: %r" % got)
        check(sample(text, "pinwheel_proxy_enabled", proxy="mu", protocol="udp") == 1,
              "pinwheel_proxy_enabled of the UDP proxy")
        lint = promtool_check(text, "pinwheel's series")
        check(lint is None or lint[0] == 0, "promtool check metrics: %s" % (lint and lint[1][-600:]))
    finally:
        srv.stop()
        echo.stop()


def series_keys(text):
    """Every sample's name and label set, as written, in order."""
    return [ln.rsplit(" ", 1)[0] for ln in text.splitlines() if ln and not ln.startswith("#")]


@test
def relay_metrics(ctx):
    if ctx.kind != "pinwheel":
        return  # toxiproxy has no UDP relay
    # refused where they mean nothing, each naming its option
    lp, tp, mp = free_port(), free_port(), free_port()
    relay = ["--listen", "%s:%d" % (HOST, lp), "--to", "%s:%d" % (HOST, tp)]
    for argv, word in ((relay + ["-proxy-metrics", "--metrics", "%s:%d" % (HOST, mp)],
                        "-proxy-metrics"),
                       (relay + ["-runtime-metrics"], "-runtime-metrics"),
                       (["--api", "%s:%d" % (HOST, mp), "--metrics", "%s:%d" % (HOST, mp)],
                        "--metrics"),
                       (relay + ["--metrics", "nowhere"], "--metrics")):
        rc, out = run_exit(ctx, argv)
        check(rc == 2 and word in out, "%r: exit %d, %r (want 2 naming %s)" % (argv, rc, out, word))
    uecho, uport = udp_echo()
    c = Ctx(ctx.server)
    c.port = mp
    log = os.path.join(ctx.server.workdir, "relay_metrics.log")
    logf = open(log, "ab")
    proc = subprocess.Popen([ctx.server.binary, "--listen", "%s:%d" % (HOST, lp), "--to",
                             "%s:%d" % (HOST, uport), "--workers", "2", "--accuracy",
                             "--up", "netem delay 5ms", "--metrics", "%s:%d" % (HOST, mp),
                             "-runtime-metrics"],
                            stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                            cwd=ctx.server.workdir, preexec_fn=die_with_parent)
    logf.close()
    try:
        deadline = time.monotonic() + 15
        while True:
            check(proc.poll() is None, "the relay exited %r (log %s)" % (proc.returncode, log))
            try:
                if request(c, "GET", "/metrics", timeout=1).status == 200:
                    break
            except OSError:
                pass
            check(time.monotonic() < deadline, "no /metrics on port %d in 15 s" % mp)
            time.sleep(0.05)
        n = 20
        udp_round_trips("%s:%d" % (HOST, lp), n, "rm")
        text = scrape(c)
        check(sample(text, "pinwheel_relay_info", proxy="relay", listen="%s:%d" % (HOST, lp),
                     upstream="%s:%d" % (HOST, uport)) == 1, "pinwheel_relay_info")
        for d in ("upstream", "downstream"):
            got = sample(text, "pinwheel_udp_received_datagrams_total", proxy="relay", direction=d)
            check(got == n, "pinwheel_udp_received_datagrams_total %s: %r" % (d, got))
        got = sample(text, "pinwheel_qdisc_sent_packets_total", proxy="relay",
                     direction="upstream", kind="netem", parent="root")
        check(got == n, "the up device's netem sent %r" % got)
        # the down device: mq and a pfifo_fast per worker, all handle 0:
        kids = [ln for ln in text.splitlines()
                if ln.startswith("pinwheel_qdisc_sent_packets_total{") and 'device="down"' in ln
                and 'kind="pfifo_fast"' in ln]
        check(len(kids) == 2, "two pfifo_fast under the down device's mq: %r" % kids)
        keys = series_keys(text)
        dup = sorted(set(k for k in keys if keys.count(k) > 1))
        check(not dup, "label sets written twice: %r" % dup[:5])
        # the runtime's: pending timers per CPU, wake-up lateness
        total = 0
        for cpu in ("0", "1"):
            cnt = sample(text, "pinwheel_runtime_wakeup_lateness_seconds_count", runtime="relay",
                         cpu=cpu)
            check(cnt is not None, "wakeup_lateness count of cpu %s" % cpu)
            inf = sample(text, "pinwheel_runtime_wakeup_lateness_seconds_bucket", runtime="relay",
                         cpu=cpu, le="+Inf")
            check(inf == cnt, "cpu %s: +Inf bucket %r, count %r" % (cpu, inf, cnt))
            b = [float(m.group(1)) for m in re.finditer(
                r'^pinwheel_runtime_wakeup_lateness_seconds_bucket\{cpu="%s",le="[^"]+",'
                r'runtime="relay"\} (\S+)$' % cpu, text, re.M)]
            check(len(b) >= 2 and b == sorted(b), "cpu %s: buckets not cumulative: %r" % (cpu, b))
            total += cnt
        # 20 round trips through a 5 ms netem, one at a time: the worker
        # holding a datagram sleeps until the watchdog, at most once a
        # datagram (the kick or the socket that woke it earlier not
        # counted; fewer if a worker was still busy at the deadline)
        check(n // 2 <= total <= n, "timed wake-ups counted: %r (want %d..%d)" % (total, n // 2, n))
        # idle: the loops' 100 ms poll bound is no event, nothing is
        # counted; what is pending is the one client mapping's idle timer
        time.sleep(1.2)
        text = scrape(c)
        idle = sum(sample(text, "pinwheel_runtime_wakeup_lateness_seconds_count", runtime="relay",
                          cpu=k) for k in ("0", "1"))
        check(idle == total, "an idle relay counted %r wake-ups in 1.2 s" % (idle - total))
        pend = [sum(sample(text, "pinwheel_runtime_timers_pending", runtime="relay", cpu=k, type=ty)
                    for k in ("0", "1")) for ty in ("timer", "hrtimer")]
        check(pend == [1, 0], "timers pending when idle (timer, hrtimer): %r, want [1, 0]" % pend)
        # /metrics only, behind the API's rules
        r = request(c, "GET", "/proxies")
        check(r.status == 404, "GET /proxies on --metrics: %r" % r)
        r = request(c, "GET", "/")
        check(r.status == 404, "GET / on --metrics: %r" % r)
        conn = http.client.HTTPConnection(HOST, mp, timeout=5)
        for hdrs, want in (({"User-Agent": "Mozilla/5.0"}, 403), ({"Host": "evil.test"}, 403)):
            conn.request("GET", "/metrics", headers=hdrs)
            r = conn.getresponse()
            r.read()
            check(r.status == want, "GET /metrics with %r: %d (want %d)" % (hdrs, r.status, want))
        conn.close()
        lint = promtool_check(text, "the relay's series")
        check(lint is None or lint[0] == 0, "promtool check metrics: %s" % (lint and lint[1][-600:]))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        uecho.sendto(b"quit", uecho.getsockname())
        uecho.close()
    check(proc.returncode == 0, "the relay's exit status %r (log %s)" % (proc.returncode, log))
