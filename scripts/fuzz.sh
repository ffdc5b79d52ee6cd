#!/usr/bin/env bash
# Runs every native fuzzer of the module for FUZZTIME each (make fuzz). The
# fuzzers are found with `go test -list`, so a new one runs without editing
# this file. A crasher is written under the package's testdata/fuzz and fails
# the run; a bare "context deadline exceeded" at the end of -fuzztime with no
# input written is a known race of Go's fuzzing coordinator
# (golang/go#75804), reported and not counted as a failure.
#
# FUZZMINIMIZETIME bounds the minimization of each new interesting input
# (Go's default is 60 s each, which left FuzzMergeInput and FuzzRecordJSON
# a handful of executions in the whole -fuzztime); a count like 100x keeps
# a crasher small enough to read and costs a fraction of a second.
set -u
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-20s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-100x}
FUZZTIMEOUT=${FUZZTIMEOUT:-2h}
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for pkg in $($GO list ./...); do
  for f in $($GO test -list '^Fuzz' "$pkg" | grep '^Fuzz'); do
    echo "== $pkg $f ($FUZZTIME, minimize $FUZZMINIMIZETIME)"
    $GO test -run '^$' -fuzz "^$f\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" -timeout "$FUZZTIMEOUT" "$pkg" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ]; then
      if grep -q 'Failing input written' "$log" || ! grep -q 'context deadline exceeded' "$log"; then
        echo "FAIL: $pkg $f"
        failed=1
      else
        echo "note: $pkg $f: context deadline exceeded at the end of -fuzztime with no failing input (golang/go#75804); not a failure"
      fi
    fi
  done
done
exit $failed
