#!/usr/bin/env bash
# Checks the dependency direction of docs/architecture.md (Dependency
# rules): which module packages each package may import. Prints the
# offending imports and fails if any.
set -euo pipefail
mod=$(go list -m)
declare -A allowed=(
  [internal/load]=""
  [internal/stats]="internal/load"
  [internal/recorder]="internal/load internal/stats"
  [internal/summary]="internal/load internal/stats"
  [internal/run]="internal/load internal/stats internal/recorder"
  [internal/report]="internal/load internal/stats internal/summary internal/trials"
  [internal/report/page]="internal/report internal/load internal/stats internal/summary internal/capacity"
  [internal/sweep]="internal/load internal/execute internal/stats internal/summary"
  [internal/execute]="internal/load internal/run internal/stats internal/recorder internal/summary internal/procstat sockets fcgi httpprobe"
  [internal/capacity]="internal/load internal/stats internal/summary"
  [internal/procstat]=""
  [sockets]=""
  [fcgi]="sockets internal/load internal/probe internal/exchange"
  [httpprobe]="sockets internal/load internal/probe internal/exchange"
  [internal/exchange]="sockets internal/load"
  [internal/probe]="sockets"
  [internal/trials]=""
  [fixtures]="sockets"
)
bad=0
for pkg in "${!allowed[@]}"; do
  [ -d "$pkg" ] || continue
  for dep in $(go list -f '{{join .Imports " "}}' "./$pkg" 2>/dev/null); do
    case "$dep" in "$mod"/*) ;; *) continue ;; esac
    rel=${dep#"$mod"/}
    ok=0
    for a in ${allowed[$pkg]}; do [ "$rel" = "$a" ] && ok=1; done
    if [ $ok = 0 ]; then echo "depcheck: $pkg must not import $rel"; bad=1; fi
  done
done
# x/sys/unix and pflag live in one package each.
for dep_pkg in $(go list ./...); do
  rel=${dep_pkg#"$mod"}; rel=${rel#/}
  imps=$(go list -f '{{join .Imports " "}}' "$dep_pkg")
  case " $imps " in *" golang.org/x/sys/unix "*) [ "$rel" = sockets ] || { echo "depcheck: $rel imports x/sys/unix (only sockets may)"; bad=1; } ;; esac
  case " $imps " in *" github.com/spf13/pflag "*) [ "$rel" = cmd/backbench ] || { echo "depcheck: $rel imports pflag (only cmd/backbench may)"; bad=1; } ;; esac
done
exit $bad
