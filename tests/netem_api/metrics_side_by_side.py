#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
GET /metrics of toxiproxy-server and of pinwheel-netem for the same
traffic, printed one after the other (docs/metrics.md shows a run):

    metrics_side_by_side.py --toxiproxy .../toxiproxy-server --pinwheel .../pinwheel-netem

Each server is started with -host 127.0.0.1 -port P -proxy-metrics; a proxy
"redis" on 127.0.0.1:26379 is made, deleted and made again to a local echo
server, a 20 ms latency toxic added downstream, and three connections of
10,000 bytes each way pass; then the toxiproxy_proxy_* lines (and, from
pinwheel, its downstream delay histogram around 20 ms and the configured
latency) are printed.  A tool, not a test (api_cli.py's checks are the
test); exit 0, or 1 when a server did not start.  Python 3 standard
library only.
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import HOST, Ctx, EchoServer, Failure, expect, free_port  # noqa: E402
from api_cli import Started, scrape, through  # noqa: E402


def keep(ln):
    if ln.startswith("toxiproxy_proxy"):
        return True
    if 'direction="downstream"' not in ln:
        return False
    if ln.startswith("pinwheel_proxy_latency_configured_seconds"):
        return True
    return ln.startswith("pinwheel_proxy_delay_seconds") and (
        "_sum" in ln or "_count" in ln or any('le="%s"' % b in ln for b in
                                              ("0.012582912", "0.016777216", "0.025165824", "+Inf")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toxiproxy", required=True)
    ap.add_argument("--pinwheel", required=True)
    args = ap.parse_args()
    for kind, binary in (("toxiproxy", args.toxiproxy), ("pinwheel", args.pinwheel)):
        class S:  # what api_cli.Started needs of the server under test
            pass
        S.binary, S.workdir, S.kind, S.port = os.path.abspath(binary), tempfile.mkdtemp(), kind, 0
        echo = EchoServer()
        port = free_port()
        try:
            srv = Started(Ctx(S), ["-host", HOST, "-port", str(port), "-proxy-metrics"], port, "side")
        except Failure as e:
            print("%s: %s" % (kind, e))
            return 1
        try:
            c = srv.ctx
            body = {"name": "redis", "listen": HOST + ":26379", "upstream": echo.addr}
            expect(c, "POST", "/proxies", 201, body)
            expect(c, "DELETE", "/proxies/redis", 204)
            expect(c, "POST", "/proxies", 201, body)
            expect(c, "POST", "/proxies/redis/toxics", 200,
                   {"type": "latency", "stream": "downstream", "attributes": {"latency": 20}})
            for i in range(3):
                through(26379, 10000, i)
            time.sleep(0.5)  # toxiproxy counts a connection when it ends
            print("== %s" % kind)
            for ln in scrape(c).splitlines():
                if keep(ln):
                    print(ln)
        finally:
            srv.stop()
            echo.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
