#!/bin/bash
# Shared by the experiments whose binary takes a MODE and a run count
# (io-util, rt-util): user-space instructions (callgrind) per run of each
# mode, for weft at OLD_REV, the working tree's weft, and Tokio 1.54.1:
# the difference between 3 runs and 1, divided by 2 (setup cancels out).
# Instruction counts do not depend on the machine's load.
#   weft-bench/experiments/count-modes.sh EXPERIMENT_DIR OLD_REV [MODE...]
set -euo pipefail
here=$(cd "${1:?usage: count-modes.sh EXPERIMENT_DIR OLD_REV [MODE...]}" && pwd)
name=$(basename "$here")
old=${2:?usage: count-modes.sh EXPERIMENT_DIR OLD_REV [MODE...]}
shift 2
repo=$(cd "$here/../../.." && pwd)
. "$repo/weft-bench/bench-lib.sh"  # old_worktree, build_sides, callgrind_count
old_worktree "$old"
build_sides "$here" '"full"'
modes=("$@")
[ ${#modes[@]} -gt 0 ] || read -r -a modes <<< "$("$work/crate-new/target/release/$name" --list)"
printf '%-16s %12s %12s %12s %14s\n' workload "weft $old" "weft now" "Tokio" "Tokio / now"
for mode in "${modes[@]}"; do
  per=()
  for side in old new tokio; do
    bin="$work/crate-$side/target/release/$name"
    a=$(callgrind_count "$bin" "$mode" 1); b=$(callgrind_count "$bin" "$mode" 3)
    per+=($(( (b - a) / 2 )))
  done
  printf '%-16s %12d %12d %12d %14s\n' "$mode" "${per[@]}" "$(echo "scale=2; ${per[2]} / ${per[1]}" | bc)"
done
