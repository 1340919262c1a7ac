#!/usr/bin/env bash
# BENCHMARKS.md round 8: is the long-poll monitor's cost on the message-passing
# rows its work or its wake-ups? Builds weft-bench with
# monitor-wake-rate.patch (runtime switches: WEFT_MONITOR_OFF=1 turns the
# monitor off; WEFT_MON_MODE=dummy replaces it by a thread that wakes every
# WEFT_MON_DUMMY_MS and does nothing; WEFT_MON_SLACK_NS sets its timer slack)
# in a worktree, then alternates the variants. ROUNDS (10), VARIANTS.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-10}
VARIANTS=${VARIANTS:-"on off dummy2 dummy5 dummy10"}
wt=$(mktemp -d)
git worktree add -f "$wt" HEAD >/dev/null
trap 'git worktree remove --force "$wt"' EXIT
(cd "$wt" && git apply "$OLDPWD/weft-bench/experiments/monitor-wake-rate.patch")
# A target directory of its own (gitignored), kept between runs.
target=${WAKE_RATE_TARGET:-$PWD/target-wake-rate}
(cd "$wt" && CARGO_TARGET_DIR="$target" cargo build --release -p weft-bench --bin weft-bench)
bin="$target/release/weft-bench"
rows=sync_mpsc_contended_unbounded,sync_notify_ping
out=$(mktemp)
for _ in $(seq 1 "$ROUNDS"); do
  for v in $VARIANTS; do
    case $v in
      on) env=() ;;
      off) env=(WEFT_MONITOR_OFF=1) ;;
      dummy*) env=(WEFT_MON_MODE=dummy "WEFT_MON_DUMMY_MS=${v#dummy}") ;;
      slack*) env=("WEFT_MON_SLACK_NS=$((${v#slack} * 1000))") ;;
    esac
    env "${env[@]}" "$bin" --filter "$rows" --no-write 2>&1 |
      awk -v v="$v" '/^sync_mpsc_contended_unbounded/ { u = $4 } /^sync_notify_ping/ { n = $4 } END { print v, u, n }' >>"$out"
  done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "variant  contended_unbounded(median us)  notify_ping(median us)"
for v in $VARIANTS; do
  u=$(awk -v v="$v" '$1 == v { print $2 }' "$out" | median)
  n=$(awk -v v="$v" '$1 == v { print $3 }' "$out" | median)
  printf '%-8s %8s %8s\n' "$v" "$u" "$n"
done
