#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Packets per second through a link of `netem delay 20ms` (a benchmark, not
a test: it prints numbers and judges nothing), from Python one packet a call
and many a call, beside the C figures in the same run:

  PINWHEEL_LIBRARY=build/libpinwheel.so PYTHONPATH=python \\
    python3 tests/python_link/bench_link.py [--bench build/bench/pinwheel-bench] \\
      [--test-link build/tests/test_link] [--packets N]

The shape is pinwheel-bench net's configuration 2 with --batch 1: one packet
every 2 us of link time, so 10,000 are in flight under the 20 ms delay and
each clock step releases about one; departures are read every 32 sends (one
a call) or once per call of 1,024 packets (many a call), each turned into a
Departure object.  1000-byte packets sent as lengths (no bytes copied), as
the C runs.  Each figure the median of 5 runs, in the process's CPU time.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import pinwheel

STEP = 2000  # ns between packets: 10,000 in flight under 20 ms


def one_a_call(n):
    link = pinwheel.Link("netem delay 20ms limit 1000000", seed=1)
    send, advance = link.send, link.advance
    got = 0
    t0 = time.process_time()
    for i in range(n):
        send(1000, at_ns=i * STEP, tag=i)
        if i % 32 == 31:
            got += len(advance())
    dt = time.process_time() - t0
    link.free()
    return dt / n, got


def many_a_call(n, batch=1024):
    link = pinwheel.Link("netem delay 20ms limit 1000000", seed=1)
    lens = [1000] * batch
    got = 0
    t0 = time.process_time()
    for i in range(0, n, batch):
        link.send_many(lens, at_ns=range(i * STEP, (i + batch) * STEP, STEP),
                       tags=range(i, i + batch))
        got += len(link.advance())
    dt = time.process_time() - t0
    link.free()
    return dt / n, got


def run_c(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        return f"({' '.join(cmd)}: {e})\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", help="pinwheel-bench, for net --config 2 --batch 1 beside")
    ap.add_argument("--test-link", help="test_link, for its bench mode (the C link)")
    ap.add_argument("--packets", type=int, default=400_000)
    a = ap.parse_args()
    if a.bench:
        out = run_c([a.bench, "net", "--config", "2", "--batch", "1", "--inflight", "10000",
                     "--reps", "5", "--quiet"])
        print("# pinwheel-bench net --config 2 --batch 1 --inflight 10000 (the layer alone)")
        print(out, end="")
    if a.test_link:
        print(run_c([a.test_link, "bench", str(max(a.packets, 1_000_000))]), end="")
    one = [one_a_call(a.packets) for _ in range(5)]
    many = [many_a_call(a.packets) for _ in range(5)]
    for name, r in (("one a call", one), ("many a call (1024)", many)):
        ns = statistics.median(x[0] for x in r) * 1e9
        print(f"python {name}: {ns:.0f} ns/pkt ({1e3 / ns:.3f} Mpps), departures read "
              f"{r[0][1]}")
    print(f"# python {sys.version.split()[0]}, library {pinwheel._lib.path}, "
          f"{os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
