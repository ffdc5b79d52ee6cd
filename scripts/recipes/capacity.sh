#!/usr/bin/env bash
# Recipe 5: how many requests per second can one php-fpm pool of 4 children
# (pm = static) take within p99 50 ms, over TCP and over a Unix socket? One
# capacity search each, on the pool's slow page (20 ms per request) unless
# PAGE=small or PAGE=big. OUT (default recipes-out/capacity) gets tcp/ and
# unix/, each with capacity.json, .svg and .png. T seconds per step (default
# 5).
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-recipes-out/capacity}
start_backend php-fpm
case "${PAGE:-slow}" in
  small) P=$P_SMALL ;; big) P=$P_BIG ;; *) P=$P_SLOW ;;
esac
for net in tcp unix; do
  url=$URL_TCP$P
  [ $net = tcp ] || url=$URL_UNIX$P
  show "$BB" capacity -q --slo 'p99<=50ms' -t "${T:-5}" --out "$OUT/$net" --document-root "$DOCROOT" "$url"
  echo
done
