#!/bin/bash
# User-space instructions (callgrind) per `Sleep::reset` of a polled sleep,
# per sleep made, armed and cancelled, and per poll of a pending sleep
# (src/main.rs), for weft at
# OLD_REV, the working tree's weft, and Tokio 1.54.1: the difference
# between 200,000 and 100,000 operations, divided by 100,000.
# Instruction counts do not depend on the machine's load.
#   weft-bench/experiments/sleep-reset/run.sh OLD_REV
set -euo pipefail
old=${1:?usage: run.sh OLD_REV}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
. "$repo/weft-bench/bench-lib.sh"  # old_worktree, build_sides, callgrind_count
old_worktree "$old"
build_sides "$here" '"rt", "time"'
for mode in reset arm poll; do
  for side in old new tokio; do
    bin="$work/crate-$side/target/release/sleep-reset"
    a=$(callgrind_count "$bin" "$mode" 100000); b=$(callgrind_count "$bin" "$mode" 200000)
    echo "$mode, $side: $(( (b - a) / 100000 )) instructions each"
  done
done
