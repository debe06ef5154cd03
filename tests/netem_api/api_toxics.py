#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
Each TCP toxic's measured effect on the bytes (limit_data, slicer,
reset_peer, timeout, latency and toxicity 0, slow_close, a toxic changed
with bytes in flight), the close semantics (a client's half-close, a
server's reset, an upstream refused) and pinwheel's byte balance in
/proxies/{name}/stats after each.

Part of tests/netem_api/api_test.py (the runner: it imports this module,
runs its @test checks in its ORDER and prints the DIFF lines).  Threads:
the runner's main thread; echo servers on threads of their own.
"""

import socket
import struct
import threading
import time

from common import *  # noqa: F401,F403 (the shared helpers)


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
                poll(lambda: echo.bytes, lambda n: n >= limit)
                time.sleep(0.1)  # and no more comes
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
        if ctx.kind == "pinwheel":
            # the achieved delay beside the configured: no chunk early, and
            # the quantiles between the smallest and the largest
            # (polled: a worker counts a write after the write returns,
            # which may be after the echo was read here)
            d = poll(lambda: dir_stats(expect(ctx, "GET", "/proxies/lat/stats", 200).json, "downstream"),
                     lambda d: d.get("delay_count") == 5, 3)
            keys = ("delay_min_ms", "delay_p50_ms", "delay_p99_ms", "delay_max_ms")
            v = [d.get(k) for k in keys]
            check(d.get("delay_count") == 5 and None not in v, "latency stats: %r" % d)
            check(v[0] >= ms and v == sorted(v) and d["latency_ms"] == ms,
                  "latency %d ms: achieved %s" % (ms, dict(zip(keys, v))))
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
        poll(lambda: echo.bytes, lambda n: n >= size + 50000, 3)
        check(echo.bytes == size + 50000, "the echo server got %d of %d bytes"
              % (echo.bytes, size + 50000))
        if ctx.kind == "pinwheel":
            # the echo's answer read back into the toxic before the disable
            poll(lambda: dir_stats(expect(ctx, "GET", "/proxies/cf/stats", 200).json, "downstream")["held"],
                 lambda held: held >= 50000)
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
