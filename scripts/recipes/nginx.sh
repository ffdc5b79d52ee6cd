#!/usr/bin/env bash
# Recipe 3: the frontend's cost. One php-fpm pool (4 children, Unix socket),
# measured direct over FastCGI and through nginx over HTTP (TCP), each with
# and without keep-alive: one sweep, four series. OUT (default
# recipes-out/nginx). N requests per level (default 2000).
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-recipes-out/nginx}
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac
start_backend nginx
# sweep's --document-root applies to every series and http:// series refuse
# it: run from the pool's document root, the default of fcgi:// targets.
cd "$DOCROOT"
show "$BB" sweep -q -n "${N:-2000}" -c "${LEVELS:-1,2,4,8,16,32,64}" --keepalive-modes off,on --out "$OUT" \
  "direct=$URL_FCGI_UNIX$P_SMALL" "nginx=$URL_TCP$P_SMALL"
