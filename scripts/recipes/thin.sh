#!/usr/bin/env bash
# Recipe 2: Thin, keep-alive over HTTP/1.1 (a sweep, TCP and Unix, with and
# without keep-alive), then HTTP/1.0 with and without keep-alive, the way ab
# asks (a sweep over TCP, and one bench line per mode at -c 8, with ab's own
# figures when ab is installed). OUT (default recipes-out/thin) gets http11/
# and http10/ sweep files. N requests per level (default 2000).
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-recipes-out/thin}
N=${N:-2000}
LEVELS=${LEVELS:-1,2,4,8,16,32,64}
start_backend thin
show "$BB" sweep -q -n "$N" -c "$LEVELS" --keepalive-modes off,on --out "$OUT/http11" \
  "tcp=$URL_TCP$P_SMALL" "unix=$URL_UNIX$P_SMALL"
echo
show "$BB" sweep -q -n "$N" -c "$LEVELS" --keepalive-modes off,on --http1.0 --out "$OUT/http10" \
  "HTTP/1.0 tcp=$URL_TCP$P_SMALL"
echo
printf '%-34s %10s %12s\n' "-c 8, -n $N, TCP" "req/s" "kept"
for mode in "HTTP/1.1" "HTTP/1.1 -k" "HTTP/1.0" "HTTP/1.0 -k"; do
  args=(-q --format json -n "$N" -c 8)
  case "$mode" in *1.0*) args+=(--http1.0) ;; esac
  case "$mode" in *-k) args+=(-k) ;; esac
  "$BB" bench "${args[@]}" "$URL_TCP$P_SMALL" >"$OUT/bench.json"
  # The two numbers of the JSON report, without jq.
  rps=$(grep -o '"requests_per_second": *[0-9.]*' "$OUT/bench.json" | head -1 | grep -o '[0-9.]*$')
  kept=$(grep -o '"keep_alive_requests": *[0-9]*' "$OUT/bench.json" | grep -o '[0-9]*$')
  printf '%-34s %10.0f %12s\n' "backbench $mode" "$rps" "$kept"
done
if command -v ab >/dev/null 2>&1; then
  for k in "" -k; do
    out=$(ab -q -n "$N" -c 8 $k "$URL_TCP$P_SMALL" 2>&1)
    rps=$(awk '/^Requests per second/{print $4}' <<<"$out")
    kept=$(awk '/^Keep-Alive requests/{print $3}' <<<"$out")
    printf '%-34s %10.0f %12s\n' "ab ${k:-(no -k)}" "${rps:-0}" "${kept:-0}"
  done
fi
