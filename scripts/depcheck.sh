#!/usr/bin/env bash
# Checks the dependency direction that docs/architecture.md draws: the
# table under "## Dependency rules" is read as the rule (one row a package
# or a few, then the module packages they may import, or "nothing of the
# module"), so that the page and the check cannot disagree. Every package
# of the module must have a row, except cmd/backbench (the wiring, which
# may import anything) and the programs under bench/ (make bench's
# reference loops). Prints the offending imports and fails if any.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m)
doc=${DEPCHECK_DOC:-docs/architecture.md}
declare -A allowed=()
# The rows between the heading and the next heading that start with "| `".
while IFS= read -r row; do
  pkgs=$(printf '%s' "$row" | awk -F'|' '{print $2}' | grep -o '`[^`]*`' | tr -d '`' || true)
  deps=$(printf '%s' "$row" | awk -F'|' '{print $3}' | grep -o '`[^`]*`' | tr -d '`' | tr '\n' ' ' || true)
  for p in $pkgs; do allowed[$p]="$deps"; done
done < <(awk '/^## Dependency rules/{on=1; next} /^## /{on=0} on && /^\| `/' "$doc")
if [ ${#allowed[@]} -eq 0 ]; then
  echo "depcheck: no dependency table found under '## Dependency rules' in $doc"; exit 1
fi
bad=0
# One go list over the module: each package and its imports, a line each.
declare -A imports=()
while read -r full imps; do
  imports[$full]="$imps"
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)
for full in "${!imports[@]}"; do
  rel=${full#"$mod"}; rel=${rel#/}
  imps=" ${imports[$full]} "
  # x/sys/unix and pflag live in one package each.
  case "$imps" in *" golang.org/x/sys/unix "*) [ "$rel" = sockets ] || { echo "depcheck: $rel imports x/sys/unix (only sockets may)"; bad=1; } ;; esac
  case "$imps" in *" github.com/spf13/pflag "*) [ "$rel" = cmd/backbench ] || { echo "depcheck: $rel imports pflag (only cmd/backbench may)"; bad=1; } ;; esac
  case "$rel" in cmd/backbench|bench/*) continue ;; esac
  if [ -z "${allowed[$rel]+set}" ]; then
    echo "depcheck: $rel has no row in $doc's Dependency rules"; bad=1; continue
  fi
  for dep in ${imports[$full]}; do
    case "$dep" in "$mod"/*) ;; *) continue ;; esac
    d=${dep#"$mod"/}
    ok=0
    for a in ${allowed[$rel]}; do [ "$d" = "$a" ] && ok=1; done
    if [ $ok = 0 ]; then echo "depcheck: $rel must not import $d ($doc, Dependency rules)"; bad=1; fi
  done
done
for p in "${!allowed[@]}"; do
  [ -n "${imports[$mod/$p]+set}" ] || { echo "depcheck: $doc names $p, which is not a package"; bad=1; }
done
exit $bad
