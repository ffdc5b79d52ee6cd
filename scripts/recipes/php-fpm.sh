#!/usr/bin/env bash
# Recipe 1: one php-fpm pool (pm = static, 4 children), TCP vs Unix socket,
# FCGI_KEEP_CONN on vs off, concurrency 1 to 64: one sweep, four series.
# OUT (default recipes-out/php-fpm) gets sweep.csv, .json, .svg and .png.
# N requests per level (default 2000), LEVELS (default 1,2,4,8,16,32,64).
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-recipes-out/php-fpm}
start_backend php-fpm
show "$BB" sweep -q -n "${N:-2000}" -c "${LEVELS:-1,2,4,8,16,32,64}" --keepalive-modes off,on --out "$OUT" \
  --document-root "$DOCROOT" "tcp=$URL_TCP$P_SMALL" "unix=$URL_UNIX$P_SMALL"
