#!/usr/bin/env bash
# Recipe 4: a serial worker (one request at a time: a libfcgi or Ruby fcgi
# process) vs a prefork pool of 4 (php-fpm, Unicorn), both built-in FastCGI
# backends with 10 ms of service time, without keep-alive, concurrency 1 to
# 32. OUT (default recipes-out/serial-prefork). N requests per level
# (default 400).
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-recipes-out/serial-prefork}
d=$(mktemp -d /tmp/bbrecipe.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done; rm -rf "$d"' EXIT
for m in serial prefork:4; do
  "$BB" serve --protocol fcgi --model "$m" --delay 10ms --body 512 --listen "unix:$d/${m%:*}.sock" >"$d/${m%:*}.out" 2>&1 &
  pids+=($!)
done
for m in serial prefork; do
  for _ in $(seq 200); do grep -q '^listening' "$d/$m.out" && break; sleep 0.05; done
  grep -q '^listening' "$d/$m.out" || { cat "$d/$m.out" >&2; exit 1; }
done
show "$BB" sweep -q -n "${N:-400}" -c "${LEVELS:-1,2,4,8,16,32}" --out "$OUT" \
  "serial=fcgi://unix:$d/serial.sock:/app.php" "prefork:4=fcgi://unix:$d/prefork.sock:/app.php"
