#!/usr/bin/env bash
# User-space instructions per request of hyper's hello world on weft
# (`hello_http_weft`, one worker) under callgrind: a repeatable count
# where CPU time on this host is not. wrk (-c10, pinned to CPU 1) warms
# up for 2 s, the counters are zeroed, then $DURATION s of wrk are
# counted; total Ir over the requests wrk completed. CLOSE=1 (default)
# sends `Connection: close` (a connection per request).
#
#   DRIVER=uring bash weft-bench/experiments/http-callgrind.sh [binary]
#   DRIVER=epoll bash weft-bench/experiments/http-callgrind.sh target-ab/release/hello_http_weft
set -euo pipefail
cd "$(dirname "$0")/../.."
. weft-bench/bench-lib.sh  # callgrind_stop
bin=${1:-target/release/hello_http_weft}
DRIVER=${DRIVER:-uring}
DURATION=${DURATION:-8}
PORT=${PORT:-4700}
wrk_args=()
if [ "${CLOSE:-1}" = 1 ]; then wrk_args=(-H "Connection: close"); fi
if [ "$#" = 0 ]; then cargo build --release -p weft-bench --bin hello_http_weft >&2; fi
out=$(mktemp -d)
PORT=$PORT WORKERS=1 WEFT_IO_DRIVER=$DRIVER taskset -c 0 \
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$bin" >/dev/null 2>"$out/err" &
pid=$!
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
  sleep 0.2
done
taskset -c 1 wrk -t1 -c10 -d2 "${wrk_args[@]}" "http://127.0.0.1:$PORT/" >/dev/null
callgrind_control -z "$pid" >/dev/null
requests=$(taskset -c 1 wrk -t1 -c10 -d"$DURATION" "${wrk_args[@]}" "http://127.0.0.1:$PORT/" |
  awk '/requests in/ { print $1 }')
total=$(callgrind_stop "$pid" "$out/cg.out")
echo "$DRIVER: $requests requests, $((total / requests)) user-space instructions per request"
rm -rf "$out"
