#!/usr/bin/env bash
# HTTP hello-world throughput and server CPU per request: hyper on weft
# (io_uring driver, then epoll driver, the same binary with WEFT_IO_DRIVER)
# vs hyper on Tokio (same handler,
# same hyper settings: weft-bench/src/http_hello.rs), with two references:
# Go's net/http when `go` is on PATH, and `hello_http_raw`, a runtime-free
# mio loop writing a canned response (the most wrk can measure here: no real
# server reaches it). Measured with wrk.
#
# Each server is pinned to one core (taskset -c $SERVER_CPU) and runs
# $WORKERS worker thread(s); wrk runs on another core (taskset -c
# $CLIENT_CPU). The servers are run interleaved, $ROUNDS rounds each, and the
# table reports the medians. CPU/req is the server's utime+stime
# (/proc/PID/stat) over the measured run divided by the requests wrk
# counted: with wrk saturating its own core first (BENCHMARKS.md), this is
# the number that compares servers.
#
#   weft-bench/http_bench.sh                 # 3 rounds of 10 s
#   DURATION=5 weft-bench/http_bench.sh      # a faster trial
#
# Knobs (environment): DURATION (s, 10), ROUNDS (3), CONNS (50), WORKERS (1),
# WARMUP (s before each measured run, 1), SERVER_CPU (0), CLIENT_CPU (1),
# PORT (first port, 3001; the servers use PORT, PORT+1, ...), CLOSE (1: every
# request carries `Connection: close`, so each is a new connection; 0).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-50}
WORKERS=${WORKERS:-1}
WARMUP=${WARMUP:-1}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PORT=${PORT:-3001}
CLOSE=${CLOSE:-0}
wrk_args=()
if [ "$CLOSE" = 1 ]; then wrk_args=(-H "Connection: close"); fi

step() { printf '\n==> %s\n' "$*" >&2; }

# ---- tools -----------------------------------------------------------------
if ! command -v wrk >/dev/null 2>&1; then
  step "installing wrk"
  if [ "$(id -u)" -eq 0 ]; then
    apt-get install -y wrk || { apt-get update && apt-get install -y wrk; }
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get install -y wrk || { sudo apt-get update && sudo apt-get install -y wrk; }
  else
    echo "wrk is not installed and there is no sudo: install wrk first" >&2
    exit 1
  fi
fi
for tool in taskset cargo; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$tool not found" >&2; exit 1; }
done

# ---- build -----------------------------------------------------------------
step "building the servers (release)"
cargo build --release -p weft-bench --bin hello_http_weft --bin hello_http_tokio \
  --bin hello_http_raw >&2
target_dir=$(cargo metadata --format-version 1 --no-deps \
  | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
names=(weft-uring weft-epoll tokio raw)
bins=("$target_dir/release/hello_http_weft" "$target_dir/release/hello_http_weft"
  "$target_dir/release/hello_http_tokio" "$target_dir/release/hello_http_raw")
drivers=(uring epoll "" "")
if command -v go >/dev/null 2>&1; then
  step "building the Go reference ($(go version))"
  go build -o "$target_dir/release/hello_http_go" weft-bench/go/hello.go
  names+=(go)
  bins+=("$target_dir/release/hello_http_go")
  drivers+=("")
else
  step "go not on PATH: no Go reference line"
fi

# ---- measure ---------------------------------------------------------------
# wrk prints latencies as 123.45us / 1.23ms / 1.02s: convert to microseconds.
to_us() {
  awk -v v="$1" 'BEGIN {
    n = v + 0
    if (v ~ /us$/) m = 1; else if (v ~ /ms$/) m = 1000;
    else if (v ~ /m$/) m = 60000000; else if (v ~ /s$/) m = 1000000; else m = 1
    printf "%.2f", n * m }'
}

wait_for_port() {
  local port=$1
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  return 1
}

results=$(mktemp)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -f "$results"
}
trap cleanup EXIT

# One measured run: start the server pinned, warm up, run wrk, stop it.
# Appends "name rps p50_us p90_us p99_us" to $results.
# hz, ticks, median
. weft-bench/bench-lib.sh  # (the cd above put us at the repository root)
run_one() {
  local name=$1 bin=$2 port=$3 driver=$4 out
  PORT=$port WORKERS=$WORKERS GOMAXPROCS=$WORKERS WEFT_IO_DRIVER=$driver \
    taskset -c "$SERVER_CPU" "$bin" >/dev/null 2>&1 &
  server_pid=$!
  if ! wait_for_port "$port"; then
    echo "$name did not start listening on $port" >&2
    exit 1
  fi
  local url="http://127.0.0.1:$port/"
  if [ "$WARMUP" != 0 ]; then
    taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d"$WARMUP" "${wrk_args[@]}" "$url" >/dev/null
  fi
  local t0 t1
  t0=$(ticks "$server_pid")
  out=$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d"$DURATION" --latency "${wrk_args[@]}" "$url")
  t1=$(ticks "$server_pid")
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=

  local rps p50 p90 p99 errors requests cpu
  rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
  requests=$(awk '/requests in/ { print $1 }' <<<"$out")
  cpu=$(awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$requests" 'BEGIN { printf "%.3f", d / hz * 1e6 / n }')
  p50=$(to_us "$(awk '$1 == "50%" { print $2 }' <<<"$out")")
  p90=$(to_us "$(awk '$1 == "90%" { print $2 }' <<<"$out")")
  p99=$(to_us "$(awk '$1 == "99%" { print $2 }' <<<"$out")")
  errors=$(grep -E 'Socket errors|Non-2xx' <<<"$out" || true)
  if [ -n "$errors" ]; then echo "  $name: $errors" >&2; fi
  printf '  %-10s round %s: %10.0f req/s  p50 %8.1fus  p90 %8.1fus  p99 %8.1fus  CPU/req %7.3fus\n' \
    "$name" "$round" "$rps" "$p50" "$p90" "$p99" "$cpu" >&2
  echo "$name $rps $p50 $p90 $p99 $cpu" >>"$results"
}

step "wrk -t1 -c$CONNS -d${DURATION}s, $ROUNDS rounds, servers on CPU $SERVER_CPU with $WORKERS worker(s), wrk on CPU $CLIENT_CPU"
for round in $(seq 1 "$ROUNDS"); do
  for i in "${!names[@]}"; do
    run_one "${names[$i]}" "${bins[$i]}" $((PORT + i)) "${drivers[$i]}"
  done
done

# ---- report ----------------------------------------------------------------
col() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$results" | median; }
fmt_us() { awk -v v="$1" 'BEGIN { if (v >= 1000) printf "%.2f ms", v / 1000; else printf "%.0f us", v }'; }

tokio_rps=$(col tokio 2)
tokio_cpu=$(col tokio 6)
echo
mode=""
if [ "$CLOSE" = 1 ]; then mode=", a connection per request"; fi
echo "HTTP/1 hello world$mode, wrk -t1 -c$CONNS -d${DURATION}s, median of $ROUNDS, $WORKERS worker(s) pinned to 1 core"
echo
echo "| server | req/s (median) | p50 | p90 | p99 | vs Tokio | server CPU/req | Tokio CPU/req ÷ this |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for name in "${names[@]}"; do
  rps=$(col "$name" 2)
  label=$name
  case $name in
    weft-uring) label="weft + hyper (io_uring driver)" ;;
    weft-epoll) label="weft + hyper (epoll driver)" ;;
    tokio) label="Tokio + hyper" ;;
    go) label="Go net/http (reference)" ;;
    raw) label="raw mio loop, canned response (ceiling)" ;;
  esac
  cpu=$(col "$name" 6)
  printf '| %s | %.0f | %s | %s | %s | %.2f | %.2f µs | %.2f |\n' "$label" "$rps" \
    "$(fmt_us "$(col "$name" 3)")" "$(fmt_us "$(col "$name" 4)")" \
    "$(fmt_us "$(col "$name" 5)")" "$(awk -v a="$rps" -v b="$tokio_rps" 'BEGIN { print a / b }')" \
    "$cpu" "$(awk -v a="$tokio_cpu" -v b="$cpu" 'BEGIN { print a / b }')"
done
