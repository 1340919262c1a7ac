#!/usr/bin/env bash
# The seed article's Ruby HTTP server (weft-ruby/examples/http_server.rb) on
# each Ruby scheduler, loaded by wrk: req/s and server CPU per request.
#
#   weft-ruby/bench/http_bench.sh                 # 3 rounds, 5 s runs
#   ROUNDS=5 DURATION=10 weft-ruby/bench/http_bench.sh
#
# Servers: weft (Weft::Scheduler, on epoll, its default), weft-uring (the
# same with WEFT_IO_DRIVER=uring), select (Ruby's reference IO.select
# scheduler from Ruby's test/fiber), async (Debian's ruby-async, 1.x on
# nio4r), threads (a thread per connection), and floor: no Ruby at all, a
# one-thread epoll loop in Rust making only the syscalls a request needs
# (weft-bench's hello_http_raw with RAW_SEED, same response and socket
# options), the least any Ruby server can cost. Modes: close (a connection per
# request; the response says `Connection: close` so wrk reconnects without
# counting errors) and keepalive. Each server runs on CPU $SERVER_CPU, wrk
# -t1 on CPU $CLIENT_CPU; servers alternate within each round; a run with
# socket errors or non-2xx answers is rejected (reported, not counted).
# Server CPU is utime+stime from /proc/PID/stat over the measured run.
#
# Knobs: DURATION (5), ROUNDS (3), WARMUP (1), CONNS ("10 100 1000"),
# MODES ("close keepalive"), KINDS ("weft weft-uring select async threads floor"),
# SERVER_CPU (0), CLIENT_CPU (1), PORT (3101).
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-1}
CONNS=${CONNS:-"10 100 1000"}
MODES=${MODES:-"close keepalive"}
KINDS=${KINDS:-"weft weft-uring select async threads floor"}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PORT=${PORT:-3101}

step() { printf '\n==> %s\n' "$*" >&2; }

need=()
command -v wrk >/dev/null || need+=(wrk)
ruby -e 'require "async"' 2>/dev/null || need+=(ruby-async)
if [ "${#need[@]}" -gt 0 ]; then
  step "installing ${need[*]}"
  sudo_=(); [ "$(id -u)" -ne 0 ] && sudo_=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo_[@]}" apt-get install -y "${need[@]}" >&2
fi
step "building weft-ruby (release) and fetching Ruby's test/fiber (for the select scheduler)"
PROFILE=release weft-ruby/build.sh >&2
weft-ruby/test/fetch-ruby-tests.sh >&2
for mode in $MODES; do
  case "$mode" in
    close | keepalive) ;;
    *) echo "MODES: unknown mode '$mode' (close or keepalive)" >&2; exit 2 ;;
  esac
done
want_floor=false
for kind in $KINDS; do [ "$kind" = floor ] && want_floor=true; done
if $want_floor; then
  step "building the floor server (weft-bench's hello_http_raw)"
  cargo build --release -q -p weft-bench --bin hello_http_raw >&2
  floor_bin="$(cargo metadata --format-version 1 --no-deps | ruby -rjson -e 'print JSON.parse(STDIN.read)["target_directory"]')/release/hello_http_raw"
fi

hz=$(getconf CLK_TCK)
. weft-ruby/bench/common.sh
export SERVER_CPU CLIENT_CPU

results=$(mktemp)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -f "$results"; }
trap cleanup EXIT

# One measured run; appends "kind mode conns rps cpu_us_per_req".
run_one() {
  local kind=$1 mode=$2 conns=$3 port=$4 out t0 t1 reqs rps
  FLOOR_BIN=${floor_bin:-} start_server "$kind" "$port" "$mode" || exit 1
  run_wrk "$port" "$mode" "$conns" "$WARMUP" >/dev/null
  t0=$(cpu_ticks "$server_pid")
  out=$(run_wrk "$port" "$mode" "$conns" "$DURATION")
  t1=$(cpu_ticks "$server_pid")
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
  reqs=$(awk '/requests in/ { print $1 }' <<<"$out")
  rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
  local errors
  errors=$(grep -E 'Socket errors|Non-2xx' <<<"$out" || true)
  if [ -n "$errors" ] || [ -z "$reqs" ] || [ "$reqs" = 0 ]; then
    echo "  REJECTED $kind $mode c$conns: ${errors:-no requests}" >&2
    return
  fi
  local us
  us=$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$reqs" 'BEGIN { printf "%.2f", t / hz / n * 1e6 }')
  printf '  %-8s %-9s c%-5s %9.0f req/s  %7.2f us CPU/req\n' "$kind" "$mode" "$conns" "$rps" "$us" >&2
  echo "$kind $mode $conns $rps $us" >>"$results"
}

step "wrk -t1 -d${DURATION}s, $ROUNDS rounds; server on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU"
for round in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    for conns in $CONNS; do
      i=0
      for kind in $KINDS; do
        run_one "$kind" "$mode" "$conns" $((PORT + i))
        i=$((i + 1))
      done
    done
  done
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v k="$1" -v m="$2" -v c="$3" -v f="$4" '$1 == k && $2 == m && $3 == c { print $f }' "$results" | median; }

echo
echo "Ruby HTTP server (seed article's), wrk -t1 -d${DURATION}s, medians of $ROUNDS; ratios are weft over the other (req/s) and the other over weft (CPU/req)"
for mode in $MODES; do
  echo
  echo "| $mode | conns | req/s | CPU/req | weft req/s ÷ this | this CPU ÷ weft CPU |"
  echo "|---|---:|---:|---:|---:|---:|"
  for conns in $CONNS; do
    wr=$(col weft "$mode" "$conns" 4); wc=$(col weft "$mode" "$conns" 5)
    for kind in $KINDS; do
      r=$(col "$kind" "$mode" "$conns" 4); c=$(col "$kind" "$mode" "$conns" 5)
      awk -v k="$kind" -v n="$conns" -v r="$r" -v c="$c" -v wr="$wr" -v wc="$wc" 'BEGIN {
        printf "| %s | %s | %.0f | %.1f us | %.2f | %.2f |\n", k, n, r, c, (r > 0 ? wr / r : 0), (wc > 0 ? c / wc : 0) }'
    done
  done
done
