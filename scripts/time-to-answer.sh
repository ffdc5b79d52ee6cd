#!/usr/bin/env bash
# Time to answer: runs each comparison seed study (studies/*.yaml of kind
# bench or sweep) twice, at its own fixed rounds and then with rounds
# until decided within a budget of twice the fixed run's time, and prints
# one Markdown table row per seed and design: the time, the share of
# comparisons decided (a direction or "same") in requests per second and
# in all metrics, how the rounds ended, and the answers' first words.
# The rows of docs/study.md's time-to-answer table come from here:
#
#   make build && bash scripts/time-to-answer.sh [SEED.yaml ...]
#
# Needs jq. Seeds whose backend is not installed (php-fpm) are skipped
# with a line on stderr. The study files' backends are built-in ones
# ("backbench serve": this build, first in PATH) or php-fpm. Results stay
# in $OUT (default ./tta-out), one directory per seed and design.
set -euo pipefail
cd "$(dirname "$0")/.."
BB=${BB:-bin/backbench}
OUT=${OUT:-tta-out}
MAXREPEAT=${MAXREPEAT:-20}
bindir=$(cd "$(dirname "$BB")" && pwd)
export PATH="$bindir:$PATH"
command -v jq >/dev/null || { echo "time-to-answer: needs jq" >&2; exit 2; }
seeds=("$@")
if [ ${#seeds[@]} -eq 0 ]; then
  for f in studies/*.yaml; do
    grep -Eq '^  kind: (bench|sweep)' "$f" && seeds+=("$f")
  done
fi

# row SEED DESIGN DIR: one table row from DIR/study.json.
row() {
  jq -r --arg seed "$1" --arg design "$2" '
    def share(c): if (c|length) == 0 then "-" else
      "\([c[] | select(.verdict != "undecided" and .verdict != "none")] | length)/\(c|length)" end;
    [ $seed, $design,
      "\(.seconds | floor) s",
      share([.comparisons[] | select(.metric == "requests_per_second")]),
      share(.comparisons),
      (if .until then "\(.until.stopped) after \(.until.rounds) rounds" else "\(.rounds) rounds" end),
      ([.answers[].conclusion | split(":")[1] // "" | split("(")[0] | ltrimstr(" ") | rtrimstr(" ")] | join("; "))
    ] | "| " + join(" | ") + " |"' "$3/study.json"
}

echo "| seed | design | time | req/s decided | all decided | rounds | answers |"
echo "|---|---|---|---|---|---|---|"
mkdir -p "$OUT"
for f in "${seeds[@]}"; do
  name=$(basename "$f" .yaml)
  if grep -q php-fpm "$f" && ! command -v php-fpm >/dev/null && ! command -v php-fpm8.2 >/dev/null; then
    echo "time-to-answer: $name skipped: php-fpm is not installed" >&2
    continue
  fi
  "$BB" study -q --out "$OUT/$name/fixed" "$f" >"$OUT/$name.fixed.txt" 2>&1 || true
  fixed=$(jq -r '.seconds' "$OUT/$name/fixed/study.json")
  row "$name" fixed "$OUT/$name/fixed"
  budget=$(awk -v s="$fixed" 'BEGIN { printf "%ds", (2 * s < 10 ? 10 : 2 * s) }')
  "$BB" study -q --until decided --budget "$budget" --max-repeat "$MAXREPEAT" \
    --out "$OUT/$name/until" "$f" >"$OUT/$name.until.txt" 2>&1 || true
  row "$name" "until decided, budget $budget" "$OUT/$name/until"
done
