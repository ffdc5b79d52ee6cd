#!/usr/bin/env bash
# The demo: starts built-in FastCGI and HTTP backends on TCP and on Unix
# sockets (backbench serve), runs backbench bench against each with and
# without keep-alive, prints the reports, and stops the backends by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
BB=${BB:-bin/backbench}
N=${N:-2000}
C=${C:-8}
dir=$(mktemp -d /tmp/bbdemo.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

# start PROTO: one backend process listening on a free TCP port and on a
# Unix socket; prints its two URLs' bases once it is listening.
start() {
  local proto=$1 out=$dir/$1.out
  "$BB" serve --protocol "$proto" --model threaded --delay 1ms --body 1024 \
    --listen tcp:127.0.0.1:0 --listen "unix:$dir/$proto.sock" >"$out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    [ "$(grep -c '^listening' "$out" || true)" -ge 2 ] && return 0
    sleep 0.05
  done
  echo "demo: backend $proto did not start:"; cat "$out"; exit 1
}
start fcgi
start http
fcgi_tcp=$(awk '$3=="tcp"{print $4}' "$dir/fcgi.out")
http_tcp=$(awk '$3=="tcp"{print $4}' "$dir/http.out")

targets=(
  "fcgi://$fcgi_tcp/demo.php"
  "fcgi://unix:$dir/fcgi.sock:/demo.php"
  "http://$http_tcp/"
  "http://unix:$dir/http.sock:/"
)
for url in "${targets[@]}"; do
  for ka in "" "-k"; do
    echo "=================================================================="
    echo "\$ backbench bench -q -n $N -c $C $ka $url"
    echo
    "$BB" bench -q -n "$N" -c "$C" $ka "$url"
    echo
  done
done
