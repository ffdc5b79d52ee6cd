#!/usr/bin/env bash
# Pinned against unpinned: runs the 2008 seed study (studies/2008-sweep.yaml)
# RUNS times as written and RUNS times with `pin: auto` added to its
# measure (backbench on the first half of the CPUs, the backends on the
# rest), alternately, and prints per run the median and the quartiles of
# the relative width of its req/s ratio intervals ((high − low) / ratio)
# and the share of req/s comparisons decided; then the medians of each.
# The rows of docs/study.md's pinning table come from here:
#
#   make build && bash scripts/pin-widths.sh [-c LEVELS] [-n REQUESTS]
#
# Any flags are passed to every `backbench study` (default: the file's
# own 51 levels of 1,000 requests; -c 1,101,201,301,401 -n 1000 is 10 times
# quicker). Needs jq. Results stay in $OUT (default ./pin-out).
set -euo pipefail
cd "$(dirname "$0")/.."
BB=${BB:-bin/backbench}
OUT=${OUT:-pin-out}
RUNS=${RUNS:-5}
bindir=$(cd "$(dirname "$BB")" && pwd)
export PATH="$bindir:$PATH"
command -v jq >/dev/null || { echo "pin-widths: needs jq" >&2; exit 2; }
mkdir -p "$OUT"
: >"$OUT/medians.txt"
pinned="$OUT/2008-sweep-pinned.yaml"
sed 's/^measure:$/measure:\n  pin: auto/' studies/2008-sweep.yaml >"$pinned"
grep -q '^  pin: auto' "$pinned" || { echo "pin-widths: no measure: line in studies/2008-sweep.yaml" >&2; exit 1; }

# widths DIR: "median q1 q3 decided/total" of DIR/study.json's req/s comparisons.
widths() {
  jq -r '[.comparisons[] | select(.metric == "requests_per_second")] as $c
    | ([$c[] | (.ratio_ci95[1] - .ratio_ci95[0]) / .ratio] | sort) as $w
    | def q(p): $w[(($w|length) - 1) * p | floor];
    "\(q(0.5)) \(q(0.25)) \(q(0.75)) \([$c[] | select(.verdict != "undecided" and .verdict != "none")] | length)/\($c|length)"' "$1/study.json"
}

echo "| run | design | median width | quartiles | req/s decided | time |"
echo "|---|---|---|---|---|---|"
for i in $(seq 1 "$RUNS"); do
  for design in unpinned pinned; do
    file=studies/2008-sweep.yaml
    [ "$design" = pinned ] && file=$pinned
    dir="$OUT/$design-$i"
    "$BB" study -q "$@" --out "$dir" "$file" >"$dir.txt" 2>&1 || true
    read -r med q1 q3 dec < <(widths "$dir")
    secs=$(jq -r '.seconds | floor' "$dir/study.json")
    printf '| %d | %s | %.3f | %.3f to %.3f | %s | %d s |\n' "$i" "$design" "$med" "$q1" "$q3" "$dec" "$secs"
    echo "$design $med" >>"$OUT/medians.txt"
  done
done
for design in unpinned pinned; do
  awk -v d="$design" '$1 == d { print $2 }' "$OUT/medians.txt" | sort -g |
    awk -v d="$design" '{ v[NR] = $1 } END { printf "%s: median of the runs'"'"' median widths %.3f (%d runs)\n", d, v[int((NR + 1) / 2)], NR }'
done
