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
ext=${WEFT_EXT_DIR:-weft-ruby/lib}
if [ "$kind" = floor ]; then
  PORT=$port RAW_SEED=$mode taskset -c 0 target/release/hello_http_raw >/dev/null 2>&1 &
else
  driver=epoll server=$kind
  [ "$kind" = weft-uring ] && driver=uring server=weft
  WEFT_IO_DRIVER=$driver taskset -c 0 ruby -W0 -I "$ext" -I weft-ruby/lib \
    weft-ruby/examples/http_server.rb "$server" "$port" "$mode" 2>/dev/null &
fi
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
hdr=(); [ "$mode" = close ] && hdr=(-H "Connection: close")
taskset -c 1 wrk -t1 -c"$conns" -d1 "${hdr[@]}" "http://127.0.0.1:$port/" >/dev/null
events=
for s in epoll_wait epoll_pwait epoll_ctl newfstat fstat poll recvfrom sendto read write accept4 close fcntl ioctl io_uring_enter; do
  [ -d "/sys/kernel/tracing/events/syscalls/sys_enter_$s" ] && events+="syscalls:sys_enter_$s,"
done
counts=$(mktemp)
perf stat -x, -e "${events%,}" -p "$pid" -o "$counts" &
perf_pid=$!
out=$(taskset -c 1 wrk -t1 -c"$conns" -d3 "${hdr[@]}" "http://127.0.0.1:$port/")
kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
reqs=$(awk '/requests in/ { print $1 }' <<<"$out")
echo "$kind $mode c$conns: $reqs requests; syscalls per request:"
awk -F, -v n="$reqs" '$1 ~ /^[0-9]+$/ && $1 > 0 { sub("syscalls:sys_enter_", "", $3); t += $1; printf "  %-14s %.3f\n", $3, $1 / n }
  END { printf "  %-14s %.3f\n", "total", t / n }' "$counts"
rm -f "$counts"
