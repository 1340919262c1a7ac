#!/usr/bin/env bash
# A/B of two weft builds on the TCP echo: server CPU per round trip of
# `echo_server` built from BASE (a git revision, built in a worktree) and
# from the working tree, both on DRIVER (uring), alternated. The setup is
# echo_cpu.sh's (bench-lib.sh, `echo_cpu_run`): server pinned to CPU 0,
# `echo_load` (100-byte messages) pinned to CPU 1, utime+stime from
# /proc/PID/stat over the run.
#
# PROTO=udp compares `udp_echo_server` (with `udp_echo_load`) instead.
# ECHO_SERVER_WORKERS=N gives the server N workers (both builds must read
# it: revisions from 2026-11-29 on); widen SERVER_CPU then (e.g. 0,1).
#
#   BASE=HEAD~1 ROUNDS=10 DURATION=3 CONNS_LIST="1 10" bash weft-bench/experiments/echo-ab.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${BASE:-HEAD}
ROUNDS=${ROUNDS:-10}
DURATION=${DURATION:-3}
CONNS_LIST=${CONNS_LIST:-"1 10 100"}
DRIVER=${DRIVER:-uring}
case ${PROTO:-tcp} in
  tcp) prefix= ;;
  udp) prefix=udp_ ;;
  *) echo "PROTO is tcp or udp" >&2; exit 2 ;;
esac
. weft-bench/bench-lib.sh  # median, echo_cpu_run
cargo build --release -p weft-bench --bin "${prefix}echo_server" --bin "${prefix}echo_load" >&2
target_dir=$(cargo metadata --format-version 1 --no-deps |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
build_base "$BASE" --bin "${prefix}echo_server"
load=$target_dir/release/${prefix}echo_load
out=$(mktemp)
run_one() { # name binary conns
  local us trips
  read -r us trips < <(echo_cpu_run "$2" weft "$DRIVER" "$load" "$3" "$DURATION")
  echo "$1 $3 $us" >>"$out"
}
for _ in $(seq 1 "$ROUNDS"); do
  for c in $CONNS_LIST; do
    run_one base "$base_target/release/${prefix}echo_server" "$c"
    run_one new "$target_dir/release/${prefix}echo_server" "$c"
  done
done
echo "server CPU per round trip (µs), medians of $ROUNDS; pairs where new < base"
for c in $CONNS_LIST; do
  b=$(awk -v c="$c" '$1 == "base" && $2 == c { print $3 }' "$out" | median)
  n=$(awk -v c="$c" '$1 == "new" && $2 == c { print $3 }' "$out" | median)
  wins=$(paste <(awk -v c="$c" '$1 == "base" && $2 == c { print $3 }' "$out") \
    <(awk -v c="$c" '$1 == "new" && $2 == c { print $3 }' "$out") | awk '$2 < $1 { w++ } END { print w + 0 }')
  printf 'conns %3s: base %7s  new %7s  new/base %.3f  new faster in %s/%s pairs\n' \
    "$c" "$b" "$n" "$(awk -v a="$n" -v b="$b" 'BEGIN { print a / b }')" "$wins" "$ROUNDS"
done
