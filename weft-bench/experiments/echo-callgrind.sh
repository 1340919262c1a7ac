#!/usr/bin/env bash
# User-space instructions per round trip of the echo server (one worker)
# under callgrind: a repeatable count where CPU time on this host is not.
# The load (100-byte messages, pinned to CPU 1) runs 1 s, the counters are
# zeroed, then 5 s are counted: total Ir over the round trips.
#
#   bash weft-bench/experiments/echo-callgrind.sh weft uring 1     # RUNTIME DRIVER CONNS
#   PROTO=udp bash weft-bench/experiments/echo-callgrind.sh weft epoll 1
#   BIN_DIR=target-ab/release bash weft-bench/experiments/echo-callgrind.sh weft uring 1   # a base built by echo-ab.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. weft-bench/bench-lib.sh  # callgrind_stop
runtime=${1:-weft} driver=${2:-uring} conns=${3:-1}
case ${PROTO:-tcp} in
  tcp) prefix= ;;
  udp) prefix=udp_ ;;
  *) echo "PROTO is tcp or udp" >&2; exit 2 ;;
esac
cargo build --release -p weft-bench --bin "${prefix}echo_server" --bin "${prefix}echo_load" >&2
out=$(mktemp -d)
mkfifo "$out/fifo"
WEFT_IO_DRIVER=$driver taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
  "${BIN_DIR:-target/release}/${prefix}echo_server" "$runtime" >"$out/fifo" 2>"$out/err" &
pid=$!
read -r addr <"$out/fifo"
load=target/release/${prefix}echo_load
taskset -c 1 "$load" "$addr" "$conns" 1 >/dev/null
callgrind_control -z "$pid" >/dev/null
trips=$(taskset -c 1 "$load" "$addr" "$conns" 5)
total=$(callgrind_stop "$pid" "$out/cg.out")
echo "${PROTO:-tcp} $runtime $driver, $conns connections: $trips round trips, $((total / trips)) user-space instructions per round trip"
rm -rf "$out"
