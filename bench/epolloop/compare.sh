#!/usr/bin/env bash
# Compares epolloop with its peers on one HTTP URL, in alternating rounds:
#   close mode: epolloop (-t 2, -t 1, -measure=false), ab -n N, backbench bench
#   keep mode:  epolloop -k (-t 2, -t 1, -measure=false), wrk -t2, backbench bench -k
# Each run is timed by /usr/bin/time (the client's user+sys CPU). It prints
# one line per run, then per tool the medians of req/s and of client CPU
# microseconds per request, and their ratios to the peer (ab or wrk) and to
# backbench. Take the shared lock around it: flock /work/bench.lock ...
#
# Usage: compare.sh close|keep URL ROUNDS EPOLLOOP BACKBENCH [AB_N]
set -euo pipefail
mode=$1 url=$2 rounds=$3 ep=$4 bb=$5 abn=${6:-90000}
secs=4 c=10
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ "$mode" = close ]; then
  names=(epolloop epolloop-t1 epolloop-nomeasure ab backbench)
  cmds=("$ep -t 2 -c $c -d ${secs}s $url" "$ep -t 1 -c $c -d ${secs}s $url"
        "$ep -t 2 -measure=false -c $c -d ${secs}s $url"
        "ab -q -c $c -n $abn $url" "$bb bench -q -c $c -t $secs $url")
else
  names=(epolloop-k epolloop-k-t1 epolloop-k-nomeasure wrk backbench-k)
  cmds=("$ep -k -t 2 -c $c -d ${secs}s $url" "$ep -k -t 1 -c $c -d ${secs}s $url"
        "$ep -k -t 2 -measure=false -c $c -d ${secs}s $url"
        "wrk -t2 -c$c -d${secs}s $url" "$bb bench -q -k -c $c -t $secs $url")
fi

# requests and req/s from each tool's own output.
parse() {
  awk '/^requests [0-9]/ {n=$2} /^Requests\/sec [0-9]/ {r=$2}
       /^Complete requests:/ {n=$3} /^Requests per second:/ {r=$4}
       / requests in / {n=$1} /^Requests\/sec: / {r=$2}
       END {print n, r}' "$1"
}

for ((round = 1; round <= rounds; round++)); do
  order=(0 1 2 3 4)
  [ $((round % 2)) = 0 ] && order=(4 3 2 1 0)
  for i in "${order[@]}"; do
    # shellcheck disable=SC2086 # the command line is split on purpose
    /usr/bin/time -f "%e %U %S" -o "$out/time" ${cmds[$i]} >"$out/run" 2>&1 || true
    read -r n rps < <(parse "$out/run")
    read -r el us sy < "$out/time"
    cpu=$(awk -v u="$us" -v s="$sy" -v n="$n" 'BEGIN {printf "%.2f", (u+s)/n*1e6}')
    echo "round $round ${names[$i]}: requests $n req/s $rps wall $el user $us sys $sy cpu/req ${cpu}us"
    echo "$rps $cpu" >> "$out/${names[$i]}"
  done
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
peer=${names[3]} base=${names[4]}
prps=$(cut -d' ' -f1 "$out/$peer" | median); pcpu=$(cut -d' ' -f2 "$out/$peer" | median)
brps=$(cut -d' ' -f1 "$out/$base" | median); bcpu=$(cut -d' ' -f2 "$out/$base" | median)
echo
echo "medians over $rounds rounds (ratios: this tool / $peer, this tool / $base)"
for nm in "${names[@]}"; do
  rps=$(cut -d' ' -f1 "$out/$nm" | median); cpu=$(cut -d' ' -f2 "$out/$nm" | median)
  awk -v nm="$nm" -v r="$rps" -v c="$cpu" -v pr="$prps" -v pc="$pcpu" -v br="$brps" -v bc="$bcpu" 'BEGIN {
    printf "%-22s req/s %9.0f (x%.2f, x%.2f)  cpu/req %6.2f us (x%.2f, x%.2f)\n", nm, r, r/pr, r/br, c, c/pc, c/bc }'
done
