#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The soak (`make soak`; not part of `make test`):
#  1. SOAK_OPS (default 1e8) random wheel-timer operations through the
#     differential test (tests/test_diff.c) and SOAK_OPS/10 hrtimer
#     operations (tests/test_hrdiff.c) against their reference models, on
#     the simulated clock (the RelWithDebInfo build);
#  2. the real-thread stress test under TSan with 8 CPUs served and 8
#     arming threads (16 threads on these 2-core machines) for SOAK_MS
#     (default 60000) under each way of serving the CPUs: plain loop
#     threads, workers under migration off, push and pull.
# Prints each step's result and time, and a summary line with the commit,
# to paste into docs/reliability.md.
#
#   bash tests/soak.sh BUILD-DIR TSAN-BUILD-DIR
set -euo pipefail
build=${1:?usage: bash tests/soak.sh BUILD-DIR TSAN-BUILD-DIR}
tsan=${2:?usage: bash tests/soak.sh BUILD-DIR TSAN-BUILD-DIR}
ops=${SOAK_OPS:-100000000}
ms=${SOAK_MS:-60000}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
start=$(date +%s)
step() {
	local name=$1
	shift
	local t0=$(date +%s)
	echo "== $name"
	"$@" | tail -4
	echo "   ($(( $(date +%s) - t0 )) s)"
}
step "wheel timers: $ops operations vs the reference" \
	env PW_DIFF_OPS="$ops" "$build/tests/test_diff"
step "hrtimers: $((ops / 10)) operations vs the reference" \
	env PW_HRDIFF_OPS=$((ops / 10)) "$build/tests/test_hrdiff"
for mode in loop off push pull; do
	arg=$mode
	[[ $mode == loop ]] && arg=
	step "TSan stress, 8 CPUs + 8 arming threads, $mode, ${ms} ms" \
		env PW_STRESS_CPUS=8 PW_STRESS_ARMERS=8 PW_STRESS_MS="$ms" PW_STRESS_OPS=1 \
		"$tsan/tests/test_stress" $arg
done
rev=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "soak passed: $ops + $((ops / 10)) timer operations, 4 x ${ms} ms TSan stress, $(( $(date +%s) - start )) s, commit $rev, $(date -u +%F)"
