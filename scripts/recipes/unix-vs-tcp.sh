#!/usr/bin/env bash
# Recipe 6: is a Unix socket really faster than TCP? One php-fpm pool (pm =
# static, 4 children) on both, with and without FCGI_KEEP_CONN, in REPEAT
# (default 5) interleaved trials per level: medians with 95% intervals,
# ratios Unix / TCP with their intervals, p-values and verdicts.
# OUT (default recipes-out/unix-vs-tcp) gets a sweep directory per mode.
# N requests per trial (default 10000), LEVELS (default 1,4,16).
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-recipes-out/unix-vs-tcp}
start_backend php-fpm
for mode in ka no-ka; do
  k=()
  [ "$mode" = no-ka ] || k=(-k)
  show "$BB" sweep -q "${k[@]}" -n "${N:-10000}" -c "${LEVELS:-1,4,16}" --repeat "${REPEAT:-5}" --seed "${SEED:-1}" \
    --out "$OUT/$mode" --document-root "$DOCROOT" "tcp=$URL_TCP$P_SMALL" "unix=$URL_UNIX$P_SMALL"
  echo
done
