#!/usr/bin/env bash
# The study demo: runs the 2008 seed study (studies/2008-sweep.yaml:
# FastCGI over TCP and a Unix socket, keep-alive on and off), short
# (concurrency 1 and 8, 300 requests a level, rounds until decided: at
# most 12, within 20 s), on the built-in FastCGI backend, which the study
# starts and stops itself. Prints the answers and leaves study.json and
# study.html in $OUT/study (default ./demo-out/study). About 10 seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
BB=${BB:-bin/backbench}
OUT=${OUT:-demo-out}
# The study's backend command is "backbench serve": this build, first in PATH.
bindir=$(cd "$(dirname "$BB")" && pwd)
echo
echo "\$ backbench study -q -c 1,8 -n 300 --until decided --budget 20s --max-repeat 12 --out $OUT/study studies/2008-sweep.yaml"
PATH="$bindir:$PATH" "$BB" study -q -c 1,8 -n 300 --until decided --budget 20s --max-repeat 12 --out "$OUT/study" studies/2008-sweep.yaml |
  sed -n '/^Answers/,$p'
