# serve-lib.sh: sourced by the demo scripts (demo.sh, sweepdemo.sh,
# reportdemo.sh). Makes $dir (a temporary folder, removed on exit), keeps
# the PIDs of the backends it starts in pids and stops them, by PID, on exit.
#
#   serve_start NAME LINES ARGS...   starts "$BB serve ARGS" with its output
#                                    in $dir/NAME.out, waits until it printed
#                                    LINES "listening" lines, and sets addr
#                                    to the first one's address
# (Not to be called in a $(...) subshell: the PID must reach this shell's
# pids for the cleanup.)
dir=$(mktemp -d "/tmp/${SERVE_LIB_PREFIX:-bbdemo}.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

serve_start() {
  local name=$1 lines=$2 out=$dir/$1.out n
  shift 2
  # The log exists before the backend starts (the background job's
  # redirection may come after the first poll), so grep always has a
  # file to read and a count to print.
  : >"$out"
  "$BB" serve "$@" >"$out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    n=$(grep -c '^listening' "$out" 2>/dev/null) || true
    if [ "${n:-0}" -ge "$lines" ]; then
      addr=$(awk '/^listening/{print $4; exit}' "$out")
      return 0
    fi
    sleep 0.05
  done
  echo "$(basename "$0"): backend $name did not start:" >&2; cat "$out" >&2; exit 1
}
