#!/usr/bin/env bash
# Server CPU per gRPC call of several builds of `tonic_unary` side by side:
# each named server binary in turn, $ROUNDS rounds, medians. The load is
# bench.sh's (`grpc_load`, built on crates.io Tokio: run bench.sh once
# first, which builds it and the Tokio baseline).
#
#   ecosystem/grpc-cpu.sh new=ecosystem/target/release/tonic_unary \
#       old=/path/to/other/build/tonic_unary \
#       tokio=ecosystem/target/tokio-baseline/target/release/tonic_unary
#
# Knobs: ROUNDS (5), DURATION (3 s), CONNS (50), WORKERS (the servers'
# worker count, 1), SERVER_CPUS (taskset list for the servers, 0),
# CLIENT_CPU (1), PORT (3299, the first of 100 used in turn). A server
# that fails to answer is skipped for that round.
set -euo pipefail
called_from=$PWD
cd "$(dirname "$0")"
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-3}
CONNS=${CONNS:-50}
SERVER_CPUS=${SERVER_CPUS:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PORT=${PORT:-3299}
export WORKERS=${WORKERS:-1}
load=$(pwd)/target/tokio-baseline/target/release/grpc_load
[ -x "$load" ] || { echo "no $load: run ecosystem/bench.sh once first" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: $0 name=server-binary ..." >&2; exit 2; }
# hz, ticks, median
. ../weft-bench/bench-lib.sh
results=$(mktemp)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -f "$results" "$results.err" "$results.srv"' EXIT

# Each server gets a port of its own: a killed io_uring server's port stays
# in use for a few milliseconds (README, differences).
start=0
for round in $(seq 1 "$ROUNDS"); do
  for spec in "$@"; do
    name=${spec%%=*} bin=${spec#*=}
    case $bin in /*) ;; *) bin=$called_from/$bin ;; esac
    PORT=$(( ${base_port:=$PORT} + start % 100 )); start=$((start + 1))
    PORT=$PORT taskset -c "$SERVER_CPUS" "$bin" >/dev/null 2>"$results.srv" &
    pid=$!
    for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.05; done
    if ! PORT=$PORT SECS=1 CONNS=$CONNS taskset -c "$CLIENT_CPU" "$load" >/dev/null 2>"$results.err"; then
      head -c 600 "$results.err" "$results.srv" >&2
      echo "  round $round $name: did not answer, skipped" >&2
      kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; continue
    fi
    t0=$(ticks "$pid")
    out=$(PORT=$PORT SECS=$DURATION CONNS=$CONNS taskset -c "$CLIENT_CPU" "$load")
    t1=$(ticks "$pid")
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    calls=$(awk '{ print $2 }' <<<"$out")
    us=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$calls" 'BEGIN { printf "%.2f", t / hz / n * 1e6 }')
    printf '  round %d %-8s %8d calls %7.2f us CPU/call\n' "$round" "$name" "$calls" "$us" >&2
    echo "$name $us" >>"$results"
  done
done
for spec in "$@"; do
  name=${spec%%=*}
  printf '%-8s median %7.2f us CPU/call\n' "$name" "$(awk -v n="$name" '$1 == n { print $2 }' "$results" | median)"
done
