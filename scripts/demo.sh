#!/usr/bin/env bash
# The demo: starts built-in FastCGI and HTTP backends on TCP and on Unix
# sockets (backbench serve), runs backbench bench against each with and
# without keep-alive, prints the reports, and stops the backends by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
BB=${BB:-bin/backbench}
N=${N:-2000}
C=${C:-8}
SERVE_LIB_PREFIX=bbdemo
. scripts/serve-lib.sh

# start PROTO: one backend process listening on a free TCP port and on a
# Unix socket.
start() {
  serve_start "$1" 2 --protocol "$1" --model threaded --delay 1ms --body 1024 \
    --listen tcp:127.0.0.1:0 --listen "unix:$dir/$1.sock"
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
