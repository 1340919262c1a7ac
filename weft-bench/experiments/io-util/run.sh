#!/bin/bash
# User-space instructions (callgrind) per run of each in-memory I/O utility workload
# (src/main.rs), for weft at OLD_REV, the working tree's weft, and Tokio
# 1.54.1 (../count-modes.sh).
#   weft-bench/experiments/io-util/run.sh OLD_REV [MODE...]
exec "$(dirname "$0")/../count-modes.sh" "$(dirname "$0")" "$@"
