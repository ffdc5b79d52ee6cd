#!/usr/bin/env bash
# The end of make demo: six lines from what demo.sh, sweepdemo.sh and
# studydemo.sh left in $OUT (default ./demo-out): req/s of each bench
# target without and with keep-alive, the sweep's best model at its highest
# level, and where the chart is, the study's conclusions, and the sweep's
# page (its path last, absolute).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-demo-out}
line() { # line on|off: "fcgi tcp 1234.5, fcgi unix ..." from bench.tsv
  awk -F'\t' -v ka="$1" '$2==ka{printf "%s%s %s", sep, $1, $3; sep=", "}' "$OUT/bench.tsv"
}
top=$(awk -F, 'NR>1 && $2+0>max{max=$2+0} END{print max}' "$OUT/sweep.csv")
best=$(awk -F, -v c="$top" 'NR>1 && $2==c && $7+0>r{r=$7+0; l=$1} END{printf "%s, %.1f req/s", l, r}' "$OUT/sweep.csv")
echo
echo "Summary"
echo "  bench req/s, keep-alive off: $(line off)"
echo "  bench req/s, keep-alive on:  $(line on)"
echo "  sweep: best at c=$top: $best; chart $OUT/sweep.png"
# The study's conclusions, each cut to its factor and first words.
study=$(grep -o '"conclusion": "[^"]*"' "$OUT/study/study.json" | sed 's/"conclusion": "//; s/"$//; s/ in \(all \)\{0,1\}[0-9]* comparisons\{0,1\}\.$//; s/\.$//' | awk 'NR>1{printf "; "} {printf "%s", $0}')
echo "  study: $study"
echo "  page: $(cd "$OUT" && pwd)/sweep.html"
