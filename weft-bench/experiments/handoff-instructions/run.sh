#!/bin/bash
# User-space instructions (callgrind) of a JoinSet spawning and joining
# 100,000 trivial tasks, of 200,000 contended Mutex hand-offs, and of
# 20,000 File writes and 20,000 fs::metadata calls, on a
# current_thread runtime, for the working tree's weft and for weft at
# OLD_REV. Instruction counts do not depend on the machine's load.
#   weft-bench/experiments/handoff-instructions/run.sh OLD_REV
set -euo pipefail
old=${1:?usage: run.sh OLD_REV}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
. "$repo/weft-bench/bench-lib.sh"  # old_worktree, callgrind_count
old_worktree "$old"
for side in old new; do
  weft="$repo/weft"; [ "$side" = old ] && weft="$work/old/weft"
  mkdir -p "$work/$side-crate/src"
  sed "s#WEFT_PATH#$weft#" "$here/Cargo.toml.in" > "$work/$side-crate/Cargo.toml"
  cp "$here/src/main.rs" "$work/$side-crate/src/"
  (cd "$work/$side-crate" && cargo build --release -q)
done
for w in ${WORKLOADS:-joinset mutex filewrite}; do
  for side in old new; do
    n=$(callgrind_count "$work/$side-crate/target/release/handoff-instructions" "$w")
    echo "$w $side: $n instructions"
  done
done
