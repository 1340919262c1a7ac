#!/usr/bin/env bash
# TCP echo, server CPU per round trip: the io suite's echo server
# (`echo_server`: one worker, pinned to $SERVER_CPU) on weft with the
# io_uring driver, on weft with the epoll driver, and on Tokio, each loaded
# by `echo_load` (100-byte messages, a Tokio current_thread client pinned to
# $CLIENT_CPU) for $DURATION s; the server's utime+stime (/proc/PID/stat)
# over the run divided by the round trips. Servers alternate within each
# round; $ROUNDS rounds; medians. PROTO=udp measures the UDP echo instead
# (`udp_echo_server` / `udp_echo_load`: one socket, recv_from → send_to;
# "connections" are client sockets).
#
# ECHO_SERVER_WORKERS=N gives the servers N workers instead of one (widen
# SERVER_CPU then, e.g. SERVER_CPU=0,1).
#
# SERVER=fd runs the TCP servers with each connection under `AsyncFd`
# (readiness waits and plain read/write, `echo_server_fd!`).
#
#   DURATION=5 ROUNDS=3 bash weft-bench/echo_cpu.sh
#   PROTO=udp CONNS_LIST="1 10" bash weft-bench/echo_cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
CONNS_LIST=${CONNS_LIST:-"1 10 100"}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PROTO=${PROTO:-tcp}
SERVER=${SERVER:-}
suffix=${SERVER:+-$SERVER}
case $PROTO in
  tcp) prefix= ;;
  udp) prefix=udp_ ;;
  *) echo "PROTO is tcp or udp" >&2; exit 2 ;;
esac

cargo build --release -p weft-bench --bin "${prefix}echo_server" --bin "${prefix}echo_load" >&2
target_dir=$(cargo metadata --format-version 1 --no-deps \
  | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
server=$target_dir/release/${prefix}echo_server
load=$target_dir/release/${prefix}echo_load
# hz, ticks, median, echo_cpu_run
. weft-bench/bench-lib.sh  # (the cd above put us at the repository root)
results=$(mktemp)
trap 'rm -f "$results"' EXIT

run_one() { # name runtime driver conns
  local us trips
  read -r us trips < <(echo_cpu_run "$server" "$2" "$3" "$load" "$4" "$DURATION")
  printf '  %-11s conns %3s: %9d round trips, server CPU %7.3f us per round trip\n' "$1" "$4" "$trips" "$us" >&2
  echo "$1 $4 $us $trips" >>"$results"
}

for round in $(seq 1 "$ROUNDS"); do
  echo "round $round" >&2
  for conns in $CONNS_LIST; do
    run_one weft-uring "weft$suffix" uring "$conns"
    run_one weft-epoll "weft$suffix" epoll "$conns"
    run_one tokio "tokio$suffix" "" "$conns"
  done
done

col() { awk -v n="$1" -v c="$2" -v k="$3" '$1 == n && $2 == c { print $k }' "$results" | median; }
echo
echo "${PROTO^^}${SERVER:+ ($SERVER)} echo, 100 B, ${DURATION}s per run, median of $ROUNDS; server CPU per round trip (Tokio ÷ weft in parentheses)"
echo
echo "| connections | Tokio | weft io_uring | weft epoll |"
echo "|---:|---:|---:|---:|"
for conns in $CONNS_LIST; do
  t=$(col tokio "$conns" 3); u=$(col weft-uring "$conns" 3); e=$(col weft-epoll "$conns" 3)
  printf '| %s | %.2f µs | %.2f µs (%.2f) | %.2f µs (%.2f) |\n' "$conns" "$t" "$u" \
    "$(awk -v a="$t" -v b="$u" 'BEGIN { print a / b }')" "$e" \
    "$(awk -v a="$t" -v b="$e" 'BEGIN { print a / b }')"
done
