# Shared by the recipes (sourced): the backbench binary, the output
# directory, and a backend started with scripts/backends.sh in a temporary
# directory, stopped by PID when the recipe ends.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BB=${BB:-$ROOT/bin/backbench}
[ -x "$BB" ] || (cd "$ROOT" && make -s build)
BB=$(cd "$(dirname "$BB")" && pwd)/$(basename "$BB")
RECIPE_DIRS=()
recipe_cleanup() {
  local d
  for d in "${RECIPE_DIRS[@]}"; do
    bash "$ROOT/scripts/backends.sh" stop "$d" >/dev/null 2>&1 || true
    rm -rf "$d"
  done
}
trap recipe_cleanup EXIT

# start_backend NAME: starts NAME and sets URL_TCP, URL_UNIX, URL_FCGI_UNIX
# (nginx: the pool behind it), DOCROOT and the paths P_SMALL, P_BIG, P_SLOW.
start_backend() {
  local d out k v w
  d=$(mktemp -d /tmp/bbrecipe.XXXXXX)
  RECIPE_DIRS+=("$d")
  out=$(bash "$ROOT/scripts/backends.sh" start "$1" "$d")
  URL_TCP="" URL_UNIX="" URL_FCGI_UNIX="" DOCROOT=""
  while read -r k v w; do
    case "$k $v" in
      "url tcp") URL_TCP=${w%/} ;;
      "url unix") URL_UNIX=${w%/} ;;
      "url fcgi-unix") URL_FCGI_UNIX=${w%/} ;;
      "path small") P_SMALL=$w ;;
      "path big") P_BIG=$w ;;
      "path slow") P_SLOW=$w ;;
    esac
    [ "$k" != docroot ] || DOCROOT=$v
  done <<<"$out"
}

# show: prints a command, then runs it.
show() { printf '$ backbench'; printf " %q" "${@:2}"; echo; "$@"; }
