#!/usr/bin/env bash
# The sweep demo: starts four built-in backends with the server models of the
# 2008 study, 10 ms of service time each (backbench serve):
#   serial     FastCGI on TCP          (a Ruby fcgi / libfcgi worker)
#   prefork:4  FastCGI on a Unix socket (php-fpm with 4 children, Unicorn)
#   threaded   HTTP on TCP             (Mongrel)
#   evented    HTTP on a Unix socket   (Thin)
# runs one backbench sweep over them, prints the table, leaves sweep.csv,
# sweep.json, sweep.svg, sweep.png and sweep.html in $OUT (default
# ./demo-out), and stops the backends by PID. About 20 seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
BB=${BB:-bin/backbench}
OUT=${OUT:-demo-out}
N=${SWEEP_N:-100}
LEVELS=${SWEEP_LEVELS:-1:41:10}
SERVE_LIB_PREFIX=bbsweep
. scripts/serve-lib.sh

# start NAME PROTO MODEL LISTEN: one backend process; sets addr to the
# address it got.
start() {
  serve_start "$1" 1 --protocol "$2" --model "$3" --delay 10ms --body 512 --listen "$4"
}
start serial fcgi serial tcp:127.0.0.1:0; serial=$addr
start prefork fcgi prefork:4 "unix:$dir/prefork.sock"; prefork=$addr
start threaded http threaded tcp:127.0.0.1:0; threaded=$addr
start evented http evented "unix:$dir/evented.sock"; evented=$addr

cmd=("$BB" sweep -q -n "$N" -c "$LEVELS" --out "$OUT"
  "serial fcgi tcp=fcgi://$serial/app.php"
  "prefork:4 fcgi unix=fcgi://unix:$prefork:/app.php"
  "threaded http tcp=http://$threaded/"
  "evented http unix=http://unix:$evented:/")
echo
echo "\$ backbench sweep -q -n $N -c $LEVELS --out $OUT \\"
echo "    'serial fcgi tcp=fcgi://127.0.0.1:PORT/app.php' 'prefork:4 fcgi unix=fcgi://unix:/tmp/.../prefork.sock:/app.php' \\"
echo "    'threaded http tcp=http://127.0.0.1:PORT/' 'evented http unix=http://unix:/tmp/.../evented.sock:/'"
echo
"${cmd[@]}"

