#!/usr/bin/env bash
# CPU per request of the seed article's server on Weft::Scheduler with two
# builds of the extension, alternated round by round (the machine's noise
# drifts: a ratio within a round is steadier than two medians).
#
#   weft-ruby/bench/ab.sh OLD_DIR NEW_DIR MODE CONNS [ROUNDS] [DURATION]
#
# OLD_DIR and NEW_DIR each hold weft/weft.so (copy weft-ruby/lib/weft/weft.so
# after weft-ruby/build.sh; build an older commit in a `git worktree` with
# its own CARGO_TARGET_DIR). MODE is close or keepalive. Prints a line per
# run and the median of the rounds' new ÷ old ratios. KIND=weft-uring
# runs them on io_uring (default weft, on epoll). Server on CPU 0, wrk on
# CPU 1.
set -euo pipefail
old=$1 new=$2 mode=$3 conns=$4 rounds=${5:-8} dur=${6:-3}
cd "$(dirname "$0")/../.."
. weft-ruby/bench/common.sh
hz=$(getconf CLK_TCK)
port=${PORT:-3301}
ratios=()
for r in $(seq 1 "$rounds"); do
  declare -A us=()
  for v in old new; do
    dir=$old; [ "$v" = new ] && dir=$new
    port=$((port + 1))
    start_server "${KIND:-weft}" "$port" "$mode" "$dir"
    run_wrk "$port" "$mode" "$conns" 1 >/dev/null
    t0=$(cpu_ticks "$server_pid")
    out=$(run_wrk "$port" "$mode" "$conns" "$dur")
    t1=$(cpu_ticks "$server_pid")
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
    reqs=$(awk '/requests in/ { print $1 }' <<<"$out")
    if grep -qE 'Socket errors|Non-2xx' <<<"$out"; then echo "round $r $v: errors, rejected" >&2; continue; fi
    us[$v]=$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$reqs" 'BEGIN { printf "%.3f", t / hz / n * 1e6 }')
    echo "round $r $v $mode c$conns ${us[$v]} us CPU/req"
  done
  [ -n "${us[old]:-}" ] && [ -n "${us[new]:-}" ] &&
    ratios+=("$(awk -v a="${us[old]}" -v b="${us[new]}" 'BEGIN { printf "%.3f", b / a }')")
  unset us
done
printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END {
  m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
  printf "new / old CPU per request: median %.3f of %d rounds (%.3f-%.3f)\n", m, NR, v[1], v[NR] }'
