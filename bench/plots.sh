#!/bin/sh
# Draw the benchmark as SVG charts with gnuplot: ns/op against pending
# timers, log-log, one line per implementation, one chart per workload.
# usage: bench/plots.sh RESULTS.csv OUTDIR   (RESULTS.csv from pinwheel-bench --csv)
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
