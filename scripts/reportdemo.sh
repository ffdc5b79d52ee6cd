#!/usr/bin/env bash
# The report demo: starts three built-in backends (backbench serve), 5 ms of
# service time each:
#   prefork:4  FastCGI on a Unix socket (php-fpm with 4 children)
#   threaded   HTTP on TCP
#   faulty     HTTP on a Unix socket, resetting every 4th connection
# runs a sweep over them (the prefork pool's CPU and memory sampled), a bench
# of the faulty one and a probe of the pool, renders the three results with
# `backbench report` into $OUT/report.html (default ./demo-out), and stops the
# backends by PID. With SHOT=FILE.png and Debian's chromium installed, it
# also takes a screenshot of the page's top (docs/report.png is one).
set -euo pipefail
cd "$(dirname "$0")/.."
BB=${BB:-bin/backbench}
OUT=${OUT:-demo-out}
SERVE_LIB_PREFIX=bbreport
. scripts/serve-lib.sh

# start NAME ARGS...: one backend process; sets addr to the address it got.
start() {
  local name=$1
  shift
  serve_start "$name" 1 --delay 5ms --body 512 "$@"
}
start prefork --protocol fcgi --model prefork:4 --listen "unix:$dir/prefork.sock"; prefork=$addr; pool=${pids[-1]}
start threaded --protocol http --model threaded --listen tcp:127.0.0.1:0; threaded=$addr
start faulty --protocol http --model threaded --fault reset --fault-every 4 --listen "unix:$dir/faulty.sock"; faulty=$addr

mkdir -p "$OUT"
"$BB" sweep -q -n 400 -c 1:41:5 --backend-pid "$pool" --out "$OUT" \
  "prefork:4 fcgi unix=fcgi://unix:$prefork:/app.php" \
  "threaded http tcp=http://$threaded/" \
  "faulty http unix=http://unix:$faulty:/"
"$BB" bench -q -n 2000 -c 8 --format json "http://unix:$faulty:/" >"$OUT/bench.json"
"$BB" probe --format json "fcgi://unix:$prefork:/app.php" >"$OUT/probe.json"
"$BB" report -o "$OUT/report.html" "$OUT/sweep.json" "$OUT/bench.json" "$OUT/probe.json"
if [ -n "${SHOT:-}" ]; then
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --host-resolver-rules='MAP * ~NOTFOUND' --user-data-dir="$dir/chromium" \
    --hide-scrollbars --window-size=1200,2000 --screenshot="$SHOT" "file://$(realpath "$OUT/report.html")" 2>/dev/null
  echo "Screenshot: $SHOT"
fi
