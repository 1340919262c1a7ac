# Shell helpers the CPU-per-request benchmarks share (http_bench.sh,
# echo_cpu.sh, ecosystem/bench.sh): source it, don't run it.

# Clock ticks per second, for `ticks`.
hz=$(getconf CLK_TCK)

# A process's CPU so far (utime + stime from /proc/PID/stat), in ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# The median of the numbers on standard input, one per line.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
