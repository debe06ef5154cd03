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
for wl in rearm rearm_same cancel_add expire conn_mix; do
  impls=$(awk -F, -v w="$wl" 'NR > 1 && $2 == w && $4 != "" { print $1 }' "$csv" | awk '!seen[$0]++')
  [ -n "$impls" ] || continue
  plot=""
  for im in $impls; do
    plot="$plot${plot:+, }\"< awk -F, '\$1 == \\\"$im\\\" && \$2 == \\\"$wl\\\" { print \$3, \$4 }' $csv\" using 1:2 with linespoints lw 2 title \"$im\""
  done
  gnuplot <<GP
set terminal svg size 760,460 dynamic font "sans,12"
set output "$out/$wl.svg"
set title "$wl: ns per operation (median), lower is better"
set logscale xy
set xlabel "pending timers"
set ylabel "ns per operation"
set key outside right
set grid
plot $plot
GP
  echo "plots.sh: wrote $out/$wl.svg"
done
scaling=${3:-}
if [ -n "$scaling" ] && [ -r "$scaling" ]; then
  plot=""
  for im in $(awk -F, 'NR > 1 { print $1 }' "$scaling" | awk '!seen[$0]++'); do
    plot="$plot${plot:+, }\"< awk -F, '\$1 == \\\"$im\\\" { print \$3, \$4 / 1e6 }' $scaling\" using 1:2 with linespoints lw 2 title \"$im\""
  done
  gnuplot <<GP
set terminal svg size 760,460 dynamic font "sans,12"
set output "$out/scaling.svg"
set title "scaling: re-arms per second, all workers together (higher is better)"
set xlabel "worker threads"
set ylabel "million re-arms per second"
set xtics 1
set key outside right
set grid
plot $plot
GP
  echo "plots.sh: wrote $out/scaling.svg"
fi
