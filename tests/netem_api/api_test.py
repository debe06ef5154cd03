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

This file is the runner: the arguments, the server started and stopped,
the checks run in ORDER and the DIFF lines printed.  The checks live in
modules beside it, by concern: api_crud.py (the API's bookkeeping and bad
input, the kept differences in names, identity and limits), api_tc.py
(the tc toxic, schedules, accuracy), api_toxics.py (each toxic's effect,
close semantics), api_udp.py (UDP proxies and their refusals),
api_server.py (slowloris, 1,000 connections, --config at start, SIGTERM),
api_cli.py (toxiproxy-server's command line, GET /metrics side by side);
common.py holds the helpers and the @test registry.

Exit: 0 when every check passed, 1 otherwise; 77 (ctest's skip) when the
server binary is missing or cannot run here.  Python 3 standard library
only.  Threads: the main thread runs the checks; echo servers, the
slowloris clients and the server's stderr reader run on threads of their
own.
"""

import argparse
import os
import re
import resource
import shutil
import sys
import tempfile
import time
import traceback

from common import *  # noqa: F401,F403 (the shared helpers)
from common import DIFFS, TESTS
import api_crud  # noqa: F401 (each module registers its checks)
import api_tc  # noqa: F401
import api_toxics  # noqa: F401
import api_udp  # noqa: F401
import api_server  # noqa: F401
import api_cli  # noqa: F401

# ---------------------------------------------------------------- the checks

# The order the checks run in (the modules register them by name):
# sigterm_in_flight stops the server, so it is last.
ORDER = [
    "version",
    "proxies_crud",
    "proxies_bad_input",
    "oversized_body",
    "browser_guard",
    "host_guard",
    "rebinding_attack",
    "allow_host",
    "enabled_false_true",
    "toxics_crud",
    "toxics_bad_input",
    "error_body_utf8",
    "tc_toxic",
    "tc_schedule_inline",
    "tc_schedule_disabled",
    "tc_stats_accuracy",
    "tc_reads_no_file",
    "tc_own_device_only",
    "tc_stream_refusals_parsed",
    "tc_schedules_one_thread",
    "tc_memory_budget",
    "stream_text_kept",
    "upstream_change_closes",
    "upstream_name_later",
    "update_all_or_nothing",
    "populate_keeps_running",
    "populate_and_reset",
    "slowloris",
    "slowloris_cut",
    "thousand_connections",
    "toxic_limit_data",
    "toxic_slicer",
    "toxic_reset_peer",
    "toxic_timeout",
    "toxic_latency",
    "toxic_slow_close",
    "toxic_change_in_flight",
    "close_semantics",
    "upstream_refused",
    "stats",
    "udp_proxy",
    "udp_stats_ledger",
    "udp_tc_report",
    "listen_port_past_65535",
    "names_longer_than_127",
    "identity",
    "limits",
    "udp_refusals",
    "config_file",
    "config_file_bad",
    "cli_toxiproxy_flags",
    "cli_bad_flags",
    "cli_version",
    "cli_help",
    "cli_defaults",
    "metrics_off",
    "metrics_side_by_side",
    "relay_metrics",
    "sigterm_in_flight",
]


def checks():
    """The registered checks in ORDER; a check registered but not in
    ORDER, or named there but not registered, stops the run."""
    missing = sorted(set(TESTS) - set(ORDER))
    unknown = sorted(set(ORDER) - set(TESTS))
    if missing or unknown or len(set(ORDER)) != len(ORDER):
        raise SystemExit("api_test.py: ORDER and the registered checks differ: not in ORDER %r, "
                         "not registered %r" % (missing, unknown))
    return [TESTS[name] for name in ORDER]


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
        for fn in checks():
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
    # a sanitizer's report in a server's output (a build with ASan, UBSan
    # or TSan: UBSan and TSan go on running) fails the run: the server's
    # log and those of the servers a check started (config_file*)
    for log in sorted(os.path.join(workdir, n) for n in os.listdir(workdir) if n.endswith(".log")):
        with open(log, "rb") as f:
            bad = [ln for ln in f.read().decode(errors="replace").splitlines()
                   if SANITIZER_RE.search(ln)]
        if bad:
            failed += 1
            print("FAIL sanitizer: the log %s has %d report lines, first: %s"
                  % (log, len(bad), bad[0]))
    for what, tox, pw, why in DIFFS:
        print("DIFF %s: toxiproxy %r, pinwheel %r%s" % (what, tox, pw, (" (" + why + ")") if why else ""))
    print("%d passed, %d failed" % (passed, failed))
    if failed == 0:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

