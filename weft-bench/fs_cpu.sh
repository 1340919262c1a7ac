#!/usr/bin/env bash
# fs: 4 KiB random reads of a 1 GiB file by $TASKS tasks (each its own
# `fs::File`: seek, read_exact), and whole-file `fs::read`s of 4 KiB files
# (1,000 of them, $SMALL), on weft with the io_uring driver, weft with
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
# 1,000 files of 4 KiB for the whole-file runs (`fs::read`).
SMALL=${SMALL:-${TMPDIR:-/tmp}/weft-fs-bench-small}
if [ "$(ls "$SMALL" 2>/dev/null | wc -l)" != 1000 ]; then
  rm -rf "$SMALL"; mkdir -p "$SMALL"
  for i in $(seq 1 1000); do head -c 4096 /dev/urandom >"$SMALL/$i"; done
fi
results=$(mktemp)
trap 'rm -f "$results"' EXIT

run_one() { # name runtime driver workload path
  local out
  out=$(WEFT_IO_DRIVER=$3 "$bin" "$2" "$5" "$DURATION" "$TASKS")
  # reads cpu_s wall_s reads_per_cpu_s reads_per_s
  set -- "$1" "$4" $out
  printf '  %-11s %-6s %9d reads, %6.2f CPU-s: %8.0f reads per CPU-second, %8.0f per second\n' \
    "$1" "$2" "$3" "$4" "$6" "$7" >&2
  echo "$1 $2 $6 $7" >>"$results"
}

for round in $(seq 1 "$ROUNDS"); do
  echo "round $round" >&2
  for workload in seek whole; do
    path=$FILE; [ "$workload" = whole ] && path=$SMALL
    run_one weft-uring weft uring "$workload" "$path"
    run_one weft-epoll weft epoll "$workload" "$path"
    run_one tokio tokio "" "$workload" "$path"
  done
done

col() { awk -v n="$1" -v w="$2" -v k="$3" '$1 == n && $2 == w { print $k }' "$results" | median; }
echo
echo "$TASKS tasks, ${DURATION}s per run, median of $ROUNDS (page cache); seek: seek + read_exact 4 KiB of a 1 GiB file; whole: fs::read of a 4 KiB file out of 1,000"
echo
echo "| workload | runtime | reads per CPU-second | ÷ Tokio | reads per second |"
echo "|---|---|---:|---:|---:|"
for workload in seek whole; do
  t=$(col tokio "$workload" 3)
  for name in weft-uring weft-epoll tokio; do
    c=$(col "$name" "$workload" 3); w=$(col "$name" "$workload" 4)
    printf '| %s | %s | %.0f | %.2f | %.0f |\n' "$workload" "$name" "$c" \
      "$(awk -v a="$c" -v b="$t" 'BEGIN { print a / b }')" "$w"
  done
done
