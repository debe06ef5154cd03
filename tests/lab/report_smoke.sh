#!/bin/bash
# pinwheel-lab report --smoke: the report's structure (not its numbers):
# every experiment's section, table and invariant line in report.md and
# report.html, the samples and results.json written, exit 0; and the
# command line's refusals (exit 2, the bad token named).
set -u
lab=${1:?usage: report_smoke.sh PINWHEEL-LAB OUT-DIR}
out=${2:?}
rm -rf "$out"
fail() { echo "report_smoke: $*" >&2; exit 1; }
"$lab" report --smoke --out "$out" >"$out.stdout" 2>"$out.stderr" || fail "report exited $? ($(tail -3 "$out.stderr"))"
for f in report.md report.html results.json seed000.csv seed001.csv seed003.csv; do
	[[ -s $out/$f ]] || fail "no $out/$f"
done
for s in seed000 seed001 seed003; do
	grep -q "^## $s: " "$out/report.md" || fail "report.md has no $s section"
	grep -q "<h2>$s: " "$out/report.html" || fail "report.html has no $s section"
	grep -q "\"$s\":{\"title\"" "$out/results.json" || fail "results.json has no $s"
done
[[ $(grep -c "^Invariants checked: [0-9]*, all held" "$out/report.md") == 3 ]] || fail "an invariant failed"
grep -q "^| experiment | the seed's figure and ours |" "$out/report.md" || fail "no side-by-side table"
grep -q "</html>" "$out/report.html" || fail "report.html not closed"
# the command line
for bad in "--cpus x all" "--seconds 0 all" "seed9" "all --nosuch" "all seed000"; do
	# shellcheck disable=SC2086
	"$lab" $bad >/dev/null 2>"$out.err"
	rc=$?
	[[ $rc == 2 ]] || fail "'$bad' exited $rc, not 2"
	grep -q "pinwheel-lab: bad" "$out.err" || fail "'$bad': no message naming the token"
done
"$lab" --help | grep -q "^usage: pinwheel-lab" || fail "--help"
echo "report_smoke: ok"
