#!/usr/bin/env bash
# The last lines of make test: the real-backend tests that skipped and why,
# from the log that internal/realbackend.Skip appends to ($BACKBENCH_SKIPLOG),
# each once (the poller run repeats the first run's skips).
log=${1:?usage: skipped-tests.sh LOG}
if [ -s "$log" ]; then
  echo "Skipped real-backend tests: $(sort -u "$log" | wc -l) (CI=true makes them fail; bash scripts/backends.sh install installs the backends):"
  sort -u "$log" | sed 's/^/  /'
else
  echo "No real-backend test was skipped."
fi
