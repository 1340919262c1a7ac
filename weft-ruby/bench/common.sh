# Shared by the bench scripts in this folder (sourced, from the repo root):
# starting one server of a kind pinned to a CPU, waiting for its port,
# wrk's arguments for a mode, and a process's CPU time.

# Start server KIND (weft, weft-uring, select, async, threads, or floor:
# weft-bench's hello_http_raw at $FLOOR_BIN, default target/release) on
# PORT in MODE (close or keepalive), pinned to CPU $SERVER_CPU (default 0),
# with the extension found in EXT_DIR (default weft-ruby/lib); sets
# server_pid and waits until the port takes connections.
start_server() {
  local kind=$1 port=$2 mode=$3 ext=${4:-weft-ruby/lib} server=$1 driver=epoll
  [ "$kind" = weft-uring ] && server=weft driver=uring
  if [ "$kind" = floor ]; then
    PORT=$port RAW_SEED=$mode taskset -c "${SERVER_CPU:-0}" \
      "${FLOOR_BIN:-target/release/hello_http_raw}" >/dev/null 2>&1 &
  else
    WEFT_IO_DRIVER=$driver taskset -c "${SERVER_CPU:-0}" ruby -W0 -I "$ext" -I weft-ruby/lib \
      weft-ruby/examples/http_server.rb "$server" "$port" "$mode" 2>/dev/null &
  fi
  server_pid=$!
  local _
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "$kind did not listen on $port" >&2
  return 1
}

# wrk -t1 on CPU $CLIENT_CPU (default 1) against PORT for SECONDS with
# CONNS connections, in MODE (close sends `Connection: close`).
run_wrk() {
  local port=$1 mode=$2 conns=$3 seconds=$4 hdr=()
  [ "$mode" = close ] && hdr=(-H "Connection: close")
  taskset -c "${CLIENT_CPU:-1}" wrk -t1 -c"$conns" -d"$seconds" "${hdr[@]}" "http://127.0.0.1:$port/"
}

# utime + stime of PID, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
