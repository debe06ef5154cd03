#!/bin/sh
# Draw the benchmark as SVG charts with gnuplot: ns/op against pending
# timers, log-log, one line per implementation, one chart per workload.
# usage: bench/plots.sh RESULTS.csv OUTDIR [SCALING.csv]
#   RESULTS.csv from pinwheel-bench --csv; SCALING.csv from pinwheel-bench scaling --csv
set -eu
csv=${1:?usage: bench/plots.sh RESULTS.csv OUTDIR}
out=${2:?usage: bench/plots.sh RESULTS.csv OUTDIR}
command -v gnuplot >/dev/null || { echo "plots.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }
[ -r "$csv" ] || { echo "plots.sh: cannot read '$csv'" >&2; exit 1; }
mkdir -p "$out"

# chart FILE SETTINGS PLOTS: one SVG chart with the common look.
chart() {
  gnuplot <<GP
set terminal svg size 760,460 dynamic font "sans,12"
set output "$1"
set key outside right
set grid
$2
plot $3
GP
  echo "plots.sh: wrote $1"
}

# line CSV IMPL AWK-FILTER Y-EXPR: one line of a chart, the rows of IMPL.
line() {
  echo "\"< awk -F, '\$1 == \\\"$2\\\" && $3 { print \$3, $4 }' $1\" using 1:2 with linespoints lw 2 title \"$2\""
}

for wl in rearm rearm_same cancel_add expire conn_mix; do
  plot=""
  for im in $(awk -F, -v w="$wl" 'NR > 1 && $2 == w && $4 != "" { print $1 }' "$csv" | awk '!seen[$0]++'); do
    plot="$plot${plot:+, }$(line "$csv" "$im" "\$2 == \\\"$wl\\\"" '$4')"
  done
  [ -n "$plot" ] || continue
  chart "$out/$wl.svg" "set title \"$wl: ns per operation (median), lower is better\"
set logscale xy
set xlabel \"pending timers\"
set ylabel \"ns per operation\"" "$plot"
done

scaling=${3:-}
if [ -n "$scaling" ] && [ -r "$scaling" ]; then
  plot=""
  for im in $(awk -F, 'NR > 1 { print $1 }' "$scaling" | awk '!seen[$0]++'); do
    plot="$plot${plot:+, }$(line "$scaling" "$im" 1 '$4 / 1e6')"
  done
  chart "$out/scaling.svg" "set title \"scaling: re-arms per second, all workers together (higher is better)\"
set xlabel \"worker threads\"
set ylabel \"million re-arms per second\"
set xtics 1" "$plot"
fi
