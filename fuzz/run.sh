#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Run every fuzz target for SECONDS each (default 60), over its seed corpus
# fuzz/corpus/NAME (read only) plus a scratch corpus for what it finds.
# A crash leaves its input in DIR/crash-* and fails the run.
#
#   bash fuzz/run.sh BUILD-DIR [SECONDS] [TARGET...]
set -u
build=${1:?usage: bash fuzz/run.sh BUILD-DIR [SECONDS] [TARGET...]}
secs=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
if ((${#targets[@]} == 0)); then
	targets=(timer hrtimer tc dist qdisc trace schedule relay)
	# the API's target exists only where libmicrohttpd and jansson were found
	[[ -x $build/fuzz/fuzz_api ]] && targets+=(api)
	[[ -x $build/fuzz/fuzz_tc_toxic ]] && targets+=(tc_toxic)
fi
out=${FUZZ_OUT:-$build/fuzz-out}
mkdir -p "$out"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
fail=0
for t in "${targets[@]}"; do
	bin=$build/fuzz/fuzz_$t
	[[ -x $bin ]] || { echo "fuzz: no $bin (configure with -DPW_BUILD_FUZZ=ON)" >&2; exit 2; }
	mkdir -p "$out/$t"
	echo "== fuzz_$t: ${secs}s"
	dict=()
	[[ -f $here/dict/$t.dict ]] && dict=(-dict="$here/dict/$t.dict")
	if "$bin" -max_total_time="$secs" -max_len=4096 -timeout=20 -print_final_stats=1 \
		"${dict[@]}" -artifact_prefix="$out/$t/" "$out/$t" "$here/corpus/$t" >"$out/$t.log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^#[0-9]+ +DONE' "$out/$t.log" | tail -2
	else
		echo "fuzz_$t FAILED (log: $out/$t.log; input: $(ls "$out/$t"/crash-* "$out/$t"/leak-* "$out/$t"/timeout-* 2>/dev/null | head -1))"
		tail -30 "$out/$t.log"
		fail=1
	fi
done
exit $fail
