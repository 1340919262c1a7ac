#!/usr/bin/env bash
# BENCHMARKS.md round 11: does the long-poll monitor cost
# sync_mpsc_contended_unbounded more than a thread that only wakes up as
# often? Alternates short processes of the mpsc_phases binary (one runtime,
# ITERS iterations each) over the VARIANTS, ROUNDS times, then prints for
# each variant against the first one the geometric mean of the paired
# ratios of the processes' mean iteration times, its 95% interval, and in
# how many pairs the variant was faster.
# Variants: off, on, quiet (a 10 s threshold: the monitor exists and
# almost never wakes), thrN (an N ms threshold), wakerN (monitor off plus a
# thread that sleeps N ms in a loop and does nothing else).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-100}
VARIANTS=${VARIANTS:-"off on waker9 quiet"}
export ITERS=${ITERS:-3000}
cargo build --release -p weft-bench --bin mpsc_phases
bin=target/release/mpsc_phases
out=$(mktemp)
for _ in $(seq 1 "$ROUNDS"); do
  for v in $VARIANTS; do
    case $v in
      off | on) env=("MONITOR=$v") ;;
      quiet) env=(MONITOR=10000) ;;
      thr*) env=("MONITOR=${v#thr}") ;;
      waker*) env=(MONITOR=off "IDLE_WAKER_MS=${v#waker}") ;;
    esac
    # Output: monitor, waker, mean µs, median µs.
    echo "$v $(env "${env[@]}" "$bin")" >>"$out"
  done
done
base=${VARIANTS%% *}
awk -v base="$base" '
  { n[$1]++; mean[$1, n[$1]] = $4 }
  END {
    for (v in n) {
      if (v == base) continue
      s = 0; ss = 0; k = 0; faster = 0
      for (i = 1; i <= n[v] && i <= n[base]; i++) {
        r = log(mean[v, i] / mean[base, i]); s += r; ss += r * r; k++
        if (r < 0) faster++
      }
      m = s / k; se = sqrt((ss - k * m * m) / (k - 1) / k)
      printf "%-8s / %-6s %.3f (95%%: %.3f-%.3f), faster in %d of %d\n", v, base, exp(m), exp(m - 1.96 * se), exp(m + 1.96 * se), faster, k
    }
  }' "$out"
rm -f "$out"
