#!/bin/sh
# Markdown tables from pinwheel-bench --csv: per workload, one row per
# implementation, one column per pending count, "ns (ratio to pinwheel)".
# usage: bench/tables.sh RESULTS.csv
set -eu
csv=${1:?usage: bench/tables.sh RESULTS.csv}
[ -r "$csv" ] || { echo "tables.sh: cannot read '$csv'" >&2; exit 1; }
awk -F, '
NR == 1 { next }
{
	impl = $1; wl = $2; n = $3
	if (!(impl in seen_impl)) { seen_impl[impl] = 1; impls[++ni] = impl }
	if (!(wl in seen_wl)) { seen_wl[wl] = 1; wls[++nw] = wl }
	if (!(n in seen_n)) { seen_n[n] = 1; ns[++nn] = n }
	if (wl == "memory") { val[impl, wl, n] = $6; rss[impl, n] = $7 }
	else val[impl, wl, n] = $4
}
END {
	for (w = 1; w <= nw; w++) {
		wl = wls[w]
		if (wl == "memory") {
			printf "\n### memory\n\n| impl | bytes per timer | RSS per 1e6 timers |\n|---|---|---|\n"
			for (i = 1; i <= ni; i++)
				for (k = 1; k <= nn; k++)
					if ((impls[i], wl, ns[k]) in val)
						printf "| %s | %.0f | %.1f MB |\n", impls[i], val[impls[i], wl, ns[k]], rss[impls[i], ns[k]] / 1e6
			continue
		}
		printf "\n### %s (ns per operation, median; in brackets: x pinwheel)\n\n| impl |", wl
		for (k = 1; k <= nn; k++) printf " %s |", ns[k]
		printf "\n|---|"
		for (k = 1; k <= nn; k++) printf "---|"
		printf "\n"
		for (i = 1; i <= ni; i++) {
			printf "| %s |", impls[i]
			for (k = 1; k <= nn; k++) {
				v = val[impls[i], wl, ns[k]]; p = val["pinwheel", wl, ns[k]]
				if (v == "") printf " – |"
				else if (impls[i] == "pinwheel" || p == "") printf " %.1f |", v
				else printf " %.1f (%.2f) |", v, v / p
			}
			printf "\n"
		}
	}
}' "$csv"
