#!/usr/bin/env bash
# The demo: starts built-in FastCGI and HTTP backends on TCP and on Unix
# sockets (backbench serve), runs backbench bench against each with and
# without keep-alive, writes each report to $OUT/bench-NAME.txt (default
# ./demo-out) with one line on the terminal, and stops the backends by PID.
# $OUT/bench.tsv keeps the req/s of each run for scripts/demo-summary.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
BB=${BB:-bin/backbench}
N=${N:-2000}
C=${C:-8}
OUT=${OUT:-demo-out}
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
  "fcgi tcp|fcgi://$fcgi_tcp/demo.php"
  "fcgi unix|fcgi://unix:$dir/fcgi.sock:/demo.php"
  "http tcp|http://$http_tcp/"
  "http unix|http://unix:$dir/http.sock:/"
)
mkdir -p "$OUT"
: >"$OUT/bench.tsv"
echo "\$ backbench bench -q -n $N -c $C [-k] URL    (each report in $OUT/)"
for t in "${targets[@]}"; do
  name=${t%%|*} url=${t#*|}
  for ka in "" "-k"; do
    file=$OUT/bench-${name// /-}${ka:+-keepalive}.txt
    "$BB" bench -q -n "$N" -c "$C" $ka -o "$file" "$url"
    rps=$(awk '/^Requests per second:/{print $4}' "$file")
    printf '  %-9s keep-alive %-3s %10s req/s   %s\n' "$name" "$([ -n "$ka" ] && echo on || echo off)" "$rps" "$file"
    printf '%s\t%s\t%s\n' "$name" "$([ -n "$ka" ] && echo on || echo off)" "$rps" >>"$OUT/bench.tsv"
  done
done
