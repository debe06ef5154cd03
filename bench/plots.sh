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

# style IMPL: the colour, point type and width of IMPL's line, fixed by name
# so that an implementation looks the same in every chart (gnuplot's own
# cycle has 8 colours: fewer than the implementations).  pinwheel: thick.
style() {
  case $1 in
    pinwheel)         echo 'lc rgb "#d62728" pt 7 ps 1.3 lw 4' ;;
    pinwheel-hrtimer) echo 'lc rgb "#ff7f0e" pt 5 lw 2' ;;
    libevent)         echo 'lc rgb "#1f77b4" pt 9 lw 2' ;;
    libuv)            echo 'lc rgb "#2ca02c" pt 11 lw 2' ;;
    libev)            echo 'lc rgb "#9467bd" pt 13 lw 2' ;;
    dpdk)             echo 'lc rgb "#8c564b" pt 15 lw 2' ;;
    heap)             echo 'lc rgb "#7f7f7f" pt 4 lw 2' ;;
    heap4)            echo 'lc rgb "#17becf" pt 6 lw 2' ;;
    global-lock)      echo 'lc rgb "#000000" pt 8 lw 2' ;;
    push)             echo 'lc rgb "#bcbd22" pt 12 lw 2' ;;
    *)                echo 'lc rgb "#e377c2" pt 1 lw 2' ;; # a new one: give it a case
  esac
}

# line CSV IMPL AWK-FILTER Y-EXPR: one line of a chart, the rows of IMPL.
line() {
  echo "\"< awk -F, '\$1 == \\\"$2\\\" && $3 { print \$3, $4 }' $1\" using 1:2 with linespoints $(style "$2") title \"$2\""
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
