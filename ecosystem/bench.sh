#!/usr/bin/env bash
# Server CPU per request of the Tokio ecosystem on weft (through the
# weft-tokio patch) against the same programs on crates.io Tokio: axum's
# and actix-web's hello world under wrk, and a tonic unary service under a gRPC load
# generator (built on crates.io Tokio, the same binary for both servers).
#
#   ecosystem/bench.sh                    # 3 rounds of 5 s
#   ROUNDS=5 DURATION=10 ecosystem/bench.sh
#
# Each server has one worker thread, pinned to CPU $SERVER_CPU; the load
# generator runs on CPU $CLIENT_CPU; weft and Tokio alternate within each
# round; medians. CPU/req is the server's utime+stime (/proc/PID/stat) over
# the requests the load generator completed. Knobs: DURATION (5), ROUNDS
# (3), CONNS (50), SERVER_CPU (0), CLIENT_CPU (1).
set -euo pipefail
cd "$(dirname "$0")"
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-50}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
step() { printf '\n==> %s\n' "$*" >&2; }

command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
step "building the servers on weft (this workspace, patched)"
cargo build --release -p eco-bench >&2
weft_bin=$(pwd)/target/release

step "building the same servers on crates.io Tokio (a copy of bench/ without the patch)"
base=$(pwd)/target/tokio-baseline
mkdir -p "$base"
cp -r bench/src bench/build.rs "$base/"
mkdir -p "$base/../proto" && cp proto/counter.proto "$base/../proto/"
sed -e 's/^edition.workspace = true/edition = "2021"/' -e 's/^license.workspace = true/license = "MIT"/' \
  bench/Cargo.toml > "$base/Cargo.toml"
printf '\n[workspace]\n' >> "$base/Cargo.toml"
[ -f "$base/Cargo.lock" ] || cp Cargo.lock "$base/Cargo.lock"
(cd "$base" && cargo build --release >&2)
tokio_bin=$base/target/release
echo "Tokio in the baseline: $(cd "$base" && cargo tree -i tokio --depth 0 2>/dev/null | head -1)" >&2

# hz, ticks, median
. ../weft-bench/bench-lib.sh  # (the cd above put us in ecosystem/)
wait_port() { for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }
results=$(mktemp)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -f "$results"' EXIT

# run_one <variant> <bin dir> <workload> <port>: appends "workload variant reqs cpu_us"
run_one() {
  local variant=$1 dir=$2 workload=$3 port=$4 out t0 t1 reqs
  case $workload in
    axum) PORT=$port taskset -c "$SERVER_CPU" "$dir/axum_hello" >/dev/null 2>&1 & ;;
    actix) PORT=$port taskset -c "$SERVER_CPU" "$dir/actix_hello" >/dev/null 2>&1 & ;;
    tonic) PORT=$port taskset -c "$SERVER_CPU" "$dir/tonic_unary" >/dev/null 2>&1 & ;;
  esac
  pid=$!
  wait_port "$port" || { echo "$variant $workload did not listen" >&2; exit 1; }
  case $workload in
    axum | actix)
      taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d1 "http://127.0.0.1:$port/" >/dev/null
      t0=$(ticks "$pid")
      out=$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d"$DURATION" "http://127.0.0.1:$port/")
      t1=$(ticks "$pid")
      if grep -qE 'Socket errors|Non-2xx' <<<"$out"; then echo "  REJECTED $variant $workload: errors" >&2; kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; return; fi
      reqs=$(awk '/requests in/ { print $1 }' <<<"$out") ;;
    tonic)
      PORT=$port SECS=1 CONNS=$CONNS taskset -c "$CLIENT_CPU" "$tokio_bin/grpc_load" >/dev/null
      t0=$(ticks "$pid")
      out=$(PORT=$port SECS=$DURATION CONNS=$CONNS taskset -c "$CLIENT_CPU" "$tokio_bin/grpc_load")
      t1=$(ticks "$pid")
      reqs=$(awk '{ print $2 }' <<<"$out") ;;
  esac
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  local us
  us=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$reqs" 'BEGIN { printf "%.2f", t / hz / n * 1e6 }')
  printf '  %-6s %-5s %9d requests  %6.2f us CPU/req\n' "$workload" "$variant" "$reqs" "$us" >&2
  echo "$workload $variant $reqs $us" >>"$results"
}

step "measuring: $ROUNDS rounds, ${DURATION}s each, $CONNS connections, servers on CPU $SERVER_CPU, load on CPU $CLIENT_CPU"
for round in $(seq 1 "$ROUNDS"); do
  for workload in axum actix tonic; do
    run_one weft "$weft_bin" "$workload" 3211
    run_one tokio "$tokio_bin" "$workload" 3212
  done
done

col() { awk -v w="$1" -v v="$2" -v c="$3" '$1 == w && $2 == v { print $c }' "$results" | median; }
echo
echo "| workload | weft CPU/req | Tokio CPU/req | Tokio ÷ weft | weft req/s | Tokio req/s |"
echo "|---|---:|---:|---:|---:|---:|"
for workload in axum actix tonic; do
  w=$(col "$workload" weft 4); t=$(col "$workload" tokio 4)
  wr=$(col "$workload" weft 3); tr=$(col "$workload" tokio 3)
  awk -v n="$workload" -v w="$w" -v t="$t" -v wr="$wr" -v tr="$tr" -v d="$DURATION" 'BEGIN {
    printf "| %s | %.2f us | %.2f us | %.2f | %.0f | %.0f |\n", n, w, t, t / w, wr / d, tr / d }'
done
