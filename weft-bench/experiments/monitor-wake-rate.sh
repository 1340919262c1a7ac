#!/usr/bin/env bash
# BENCHMARKS.md rounds 8-10: is the long-poll monitor's cost on the
# message-passing rows its work or its wake-ups? Builds weft-bench with
# monitor-wake-rate.patch (runtime switches: WEFT_MONITOR_OFF=1 turns the
# monitor off; WEFT_MON_MODE=dummy replaces it by a thread that wakes every
# WEFT_MON_DUMMY_MS and does nothing; WEFT_MON_SLACK_NS sets its timer slack;
# WEFT_MON_SLOW_US its slow period; WEFT_MON_BATCH=1 makes it SCHED_BATCH)
# in a worktree, then alternates the variants and prints each row's median
# of weft's own time (µs). ROUNDS (10), VARIANTS ("on off dummy2 dummy5
# dummy10"; also slackN (µs), slowN (µs), batch), ROWS (weft-bench filter).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-10}
VARIANTS=${VARIANTS:-"on off dummy2 dummy5 dummy10"}
ROWS=${ROWS:-sync_mpsc_contended_unbounded,sync_notify_ping}
# REV: the commit to measure (HEAD). The monitor's own switches (dummy,
# slack, slow, batch) apply up to 9cb6f66, before workers took samples
# (round 11); at later commits only the on/off switch in the builder does.
REV=${REV:-HEAD}
patch=$PWD/weft-bench/experiments/monitor-wake-rate.patch
wt=$(mktemp -d)
git worktree add -f "$wt" "$REV" >/dev/null
trap 'git worktree remove --force "$wt"' EXIT
(cd "$wt" && git apply --include=weft/src/runtime/builder.rs "$patch" &&
  { git apply --exclude=weft/src/runtime/builder.rs "$patch" 2>/dev/null ||
    echo "monitor switches do not apply at $REV: variants on and off only (REV=9cb6f66 has them all)" >&2; })
# A target directory of its own (gitignored), kept between runs.
target=${WAKE_RATE_TARGET:-$PWD/target-wake-rate}
(cd "$wt" && CARGO_TARGET_DIR="$target" cargo build --release -p weft-bench --bin weft-bench)
bin="$target/release/weft-bench"
out=$(mktemp)
for _ in $(seq 1 "$ROUNDS"); do
  for v in $VARIANTS; do
    case $v in
      on) env=() ;;
      off) env=(WEFT_MONITOR_OFF=1) ;;
      dummy*) env=(WEFT_MON_MODE=dummy "WEFT_MON_DUMMY_MS=${v#dummy}") ;;
      slack*) env=("WEFT_MON_SLACK_NS=$((${v#slack} * 1000))") ;;
      slow*) env=("WEFT_MON_SLOW_US=${v#slow}") ;;
      batch) env=(WEFT_MON_BATCH=1) ;;
    esac
    # Result rows: name, Tokio's time and unit, weft's time and unit.
    env "${env[@]}" "$bin" --filter "$ROWS" --no-write 2>&1 |
      awk -v v="$v" 'BEGIN { u["ns"] = 0.001; u["µs"] = 1; u["ms"] = 1000 }
        ($3 in u) && ($5 in u) { gsub(",", "", $4); print v, $1, $4 * u[$5] }' >>"$out"
  done
done
. weft-bench/bench-lib.sh  # median
printf '%-36s' "row \\ variant (median µs)"
for v in $VARIANTS; do printf ' %9s' "$v"; done
echo
for row in $(awk '{ print $2 }' "$out" | sort -u); do
  printf '%-36s' "$row"
  for v in $VARIANTS; do
    printf ' %9s' "$(awk -v v="$v" -v r="$row" '$1 == v && $2 == r { print $3 }' "$out" | median)"
  done
  echo
done
