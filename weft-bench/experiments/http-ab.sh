#!/usr/bin/env bash
# A/B of two weft builds on hyper's hello world: server CPU per request of
# `hello_http_weft` built from BASE (a git revision, built in a worktree)
# and from the working tree, both on DRIVER (uring), alternated (the order
# flips every round). As http_bench.sh: the server pinned to CPU 0 with
# one worker, wrk pinned to CPU 1, utime+stime from /proc/PID/stat over
# the measured run divided by the requests wrk counted. CLOSE=1 (the
# default) sends `Connection: close`: a connection per request.
#
#   BASE=HEAD~1 ROUNDS=10 DURATION=4 bash weft-bench/experiments/http-ab.sh
#   CLOSE=0 BASE=HEAD~1 bash weft-bench/experiments/http-ab.sh   # keep-alive
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${BASE:-HEAD}
ROUNDS=${ROUNDS:-10}
DURATION=${DURATION:-4}
CONNS=${CONNS:-50}
CLOSE=${CLOSE:-1}
DRIVER=${DRIVER:-uring}
PORT=${PORT:-4100}
wrk_args=()
if [ "$CLOSE" = 1 ]; then wrk_args=(-H "Connection: close"); fi
. weft-bench/bench-lib.sh  # hz, ticks, median
cargo build --release -p weft-bench --bin hello_http_weft >&2
target_dir=$(cargo metadata --format-version 1 --no-deps |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
build_base "$BASE" --bin hello_http_weft
out=$(mktemp)
run_one() { # name binary port
  local pid t0 t1 result requests
  PORT=$3 WORKERS=1 WEFT_IO_DRIVER=$DRIVER taskset -c 0 "$2" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$3") 2>/dev/null; then break; fi
    sleep 0.05
  done
  taskset -c 1 wrk -t1 -c"$CONNS" -d1 "${wrk_args[@]}" "http://127.0.0.1:$3/" >/dev/null
  t0=$(ticks "$pid")
  result=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" "${wrk_args[@]}" "http://127.0.0.1:$3/")
  t1=$(ticks "$pid")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  if grep -qE 'Socket errors|Non-2xx' <<<"$result"; then
    echo "$1: $(grep -E 'Socket errors|Non-2xx' <<<"$result")" >&2
  fi
  requests=$(awk '/requests in/ { print $1 }' <<<"$result")
  awk -v n="$1" -v d=$((t1 - t0)) -v hz="$hz" -v r="$requests" \
    'BEGIN { printf "%s %.3f\n", n, d / hz * 1e6 / r }' >>"$out"
}
port=$PORT
for round in $(seq 1 "$ROUNDS"); do
  pair=(base new)
  if [ $((round % 2)) = 0 ]; then pair=(new base); fi
  for name in "${pair[@]}"; do
    bin=$target_dir/release/hello_http_weft
    if [ "$name" = base ]; then bin=$base_target/release/hello_http_weft; fi
    run_one "$name" "$bin" "$port"
    port=$((port + 1))
  done
done
b=$(awk '$1 == "base" { print $2 }' "$out" | median)
n=$(awk '$1 == "new" { print $2 }' "$out" | median)
ratios=$(paste <(awk '$1 == "base" { print $2 }' "$out") <(awk '$1 == "new" { print $2 }' "$out"))
wins=$(awk '$2 < $1 { w++ } END { print w + 0 }' <<<"$ratios")
ratio=$(awk '{ print $2 / $1 }' <<<"$ratios" | median)
echo "server CPU per request (µs), medians of $ROUNDS (CLOSE=$CLOSE, $DRIVER)"
printf 'base %s  new %s  median of the rounds'"'"' new/base %.3f  new lower in %s/%s rounds\n' \
  "$b" "$n" "$ratio" "$wins" "$ROUNDS"
