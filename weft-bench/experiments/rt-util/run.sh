#!/bin/bash
# User-space instructions (callgrind) per run of each task and sync primitive workload, one task on a current_thread runtime
# (src/main.rs), for weft at OLD_REV, the working tree's weft, and Tokio
# 1.54.1 (../count-modes.sh).
#   weft-bench/experiments/rt-util/run.sh OLD_REV [MODE...]
exec "$(dirname "$0")/../count-modes.sh" "$(dirname "$0")" "$@"
