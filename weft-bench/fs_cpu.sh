#!/usr/bin/env bash
# fs: 4 KiB random reads of a 1 GiB file by $TASKS tasks (each its own
# `fs::File`: seek, read_exact), on weft with the io_uring driver, weft with
# the epoll driver (file I/O on the blocking pool, as Tokio) and Tokio, for
# $DURATION s each, alternated, $ROUNDS rounds; reads per CPU-second of the
# whole process (every thread, from getrusage), medians. The file is made
# once ($FILE) and read through once first, so the runs measure the page
# cache path, not the disk.
#
#   DURATION=5 ROUNDS=3 bash weft-bench/fs_cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
TASKS=${TASKS:-64}
FILE=${FILE:-${TMPDIR:-/tmp}/weft-fs-bench-1g.dat}

cargo build --release -p weft-bench --bin fs_random_read >&2
target_dir=$(cargo metadata --format-version 1 --no-deps \
  | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
bin=$target_dir/release/fs_random_read
# median
. weft-bench/bench-lib.sh
if [ "$(stat -c %s "$FILE" 2>/dev/null || echo 0)" != 1073741824 ]; then
  echo "writing $FILE (1 GiB)" >&2
  head -c 1073741824 /dev/urandom >"$FILE"
fi
cat "$FILE" >/dev/null
results=$(mktemp)
trap 'rm -f "$results"' EXIT

run_one() { # name runtime driver
  local out
  out=$(WEFT_IO_DRIVER=$3 "$bin" "$2" "$FILE" "$DURATION" "$TASKS")
  # reads cpu_s wall_s reads_per_cpu_s reads_per_s
  set -- "$1" $out
  printf '  %-11s %9d reads, %6.2f CPU-s: %8.0f reads per CPU-second, %8.0f per second\n' \
    "$1" "$2" "$3" "$5" "$6" >&2
  echo "$1 $5 $6" >>"$results"
}

for round in $(seq 1 "$ROUNDS"); do
  echo "round $round" >&2
  run_one weft-uring weft uring
  run_one weft-epoll weft epoll
  run_one tokio tokio ""
done

col() { awk -v n="$1" -v k="$2" '$1 == n { print $k }' "$results" | median; }
echo
echo "4 KiB random reads of a 1 GiB file (page cache), $TASKS tasks, ${DURATION}s per run, median of $ROUNDS"
echo
echo "| runtime | reads per CPU-second | ÷ Tokio | reads per second |"
echo "|---|---:|---:|---:|"
t=$(col tokio 2)
for name in weft-uring weft-epoll tokio; do
  c=$(col "$name" 2); w=$(col "$name" 3)
  printf '| %s | %.0f | %.2f | %.0f |\n' "$name" "$c" "$(awk -v a="$c" -v b="$t" 'BEGIN { print a / b }')" "$w"
done
