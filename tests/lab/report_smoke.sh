#!/bin/bash
# pinwheel-lab report --smoke: the report's structure (not its numbers):
# the verdicts lead (the first tables of report.md and report.html are each
# seed's claims table, before the charts and the sections), the model's
# charts' numbers written (model_*.csv, with a row beyond the header; the
# SVGs where gnuplot is installed), every experiment's section, table and
# invariant line in report.md and report.html, the samples and
# results.json written, exit 0; and the command line's refusals (exit 2,
# the bad token named).
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
# the verdicts lead: the first table after the title is seed000's claims
# table, and the first three tables are the seeds' claims tables, in
# order, before the charts and the side-by-side table
claims_head="| the seed's claim | the model (deterministic) | the live run"
first=$(grep -n "^|" "$out/report.md" | head -1 | cut -d: -f1)
[[ -n $first ]] || fail "report.md has no table"
sed -n "${first}p" "$out/report.md" | grep -qF "$claims_head" ||
	fail "report.md's first table is not a claims table: $(sed -n "${first}p" "$out/report.md")"
prev=0
for s in seed000 seed001 seed003; do
	h=$(grep -n "^### $s: " "$out/report.md" | head -1 | cut -d: -f1)
	[[ -n $h && $h -gt $prev ]] || fail "report.md: no verdicts heading for $s, or out of order"
	t=$(awk -v from="$h" 'NR > from && /^\|/ { print NR; exit }' "$out/report.md")
	if [[ -z $t ]] || ! sed -n "${t}p" "$out/report.md" | grep -qF "$claims_head"; then
		fail "report.md: $s's first table is not its claims table"
	fi
	prev=$t
done
verdicts=$(grep -n "^## The verdicts" "$out/report.md" | cut -d: -f1)
charts=$(grep -n "^## Charts: the model" "$out/report.md" | cut -d: -f1)
side=$(grep -n "^## Side by side" "$out/report.md" | cut -d: -f1)
[[ -n $verdicts && -n $charts && -n $side ]] || fail "report.md: no verdicts, charts or side-by-side heading"
((verdicts < first && first < charts && charts < side)) ||
	fail "report.md: not verdicts, then charts, then the details"
# report.html: the first <table> is a claims table, three of them before the charts
html_first=$(grep -o "<table[^>]*><tr><th>[^<]*" "$out/report.html" | head -1)
[[ $html_first == "<table class=\"claims\"><tr><th>the seed's claim" ]] ||
	fail "report.html's first table is not a claims table: $html_first"
n_before=$(sed -n '1,/<h2>Charts: the model<\/h2>/p' "$out/report.html" | grep -c '<table class="claims">')
[[ $n_before == 3 ]] || fail "report.html: $n_before claims tables before the charts, not 3"
# the model's charts: each one's numbers as CSV (a header and rows), the
# SVG and its place in the pages where gnuplot is installed
for c in model_seed000_irq model_seed000_in_cpus model_seed001_mod_timer model_seed003_deq_cpu \
	model_seed003_lockwait; do
	[[ -s $out/$c.csv && $(wc -l <"$out/$c.csv") -ge 2 ]] || fail "no numbers in $out/$c.csv"
	grep -q "$c.csv" "$out/report.md" || fail "report.md does not name $c.csv"
	if command -v gnuplot >/dev/null 2>&1; then
		[[ -s $out/$c.svg ]] || fail "gnuplot is installed but $out/$c.svg is missing"
		grep -q "($c.svg)" "$out/report.md" || fail "report.md does not show $c.svg"
	else
		grep -q "gnuplot is not installed" "$out/report.md" || fail "report.md: no word on gnuplot's absence"
	fi
done
[[ $(wc -l <"$out/model_seed000_in_cpus.csv") -ge 4 ]] || fail "model_seed000_in_cpus.csv: fewer than 3 CPU counts"
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
