#!/usr/bin/env bash
# Syscalls per request of one server under wrk, from the kernel's syscall
# tracepoints (`perf stat`; needs root or perf_event_paranoid <= 1):
#
#   weft-ruby/bench/syscalls.sh KIND MODE CONNS
#
# KIND is weft, weft-uring, select, async, threads (examples/http_server.rb,
# with the extension in weft-ruby/lib or $WEFT_EXT_DIR) or floor
# (weft-bench's hello_http_raw, built with `cargo build --release -p
# weft-bench --bin hello_http_raw`). MODE is close or keepalive.
set -euo pipefail
kind=$1 mode=$2 conns=$3 port=${PORT:-3901}
cd "$(dirname "$0")/../.."
. weft-ruby/bench/common.sh
start_server "$kind" "$port" "$mode" "${WEFT_EXT_DIR:-weft-ruby/lib}"
trap 'kill $server_pid 2>/dev/null || true' EXIT
run_wrk "$port" "$mode" "$conns" 1 >/dev/null
events=
for s in epoll_wait epoll_pwait epoll_ctl newfstat fstat poll recvfrom sendto read write accept4 close fcntl ioctl io_uring_enter; do
  [ -d "/sys/kernel/tracing/events/syscalls/sys_enter_$s" ] && events+="syscalls:sys_enter_$s,"
done
counts=$(mktemp)
perf stat -x, -e "${events%,}" -p "$server_pid" -o "$counts" &
perf_pid=$!
out=$(run_wrk "$port" "$mode" "$conns" 3)
kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
reqs=$(awk '/requests in/ { print $1 }' <<<"$out")
echo "$kind $mode c$conns: $reqs requests; syscalls per request:"
awk -F, -v n="$reqs" '$1 ~ /^[0-9]+$/ && $1 > 0 { sub("syscalls:sys_enter_", "", $3); t += $1; printf "  %-14s %.3f\n", $3, $1 / n }
  END { printf "  %-14s %.3f\n", "total", t / n }' "$counts"
rm -f "$counts"
