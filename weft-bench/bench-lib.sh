# Shell helpers the CPU-per-request benchmarks share (http_bench.sh,
# echo_cpu.sh, fs_cpu.sh, ecosystem/bench.sh, experiments/): source it,
# don't run it.

# Clock ticks per second, for `ticks`.
hz=$(getconf CLK_TCK)

# A process's CPU so far (utime + stime from /proc/PID/stat), in ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# The median of the numbers on standard input, one per line.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One TCP echo measurement: start the echo server BIN on RUNTIME ("weft" or
# "tokio"; WEFT_IO_DRIVER=DRIVER) pinned to $SERVER_CPU (0), warm it up,
# then load it with the client LOAD (CONNS connections, DURATION s) pinned
# to $CLIENT_CPU (1). Prints the server's CPU per round trip (µs, its
# utime+stime over the measured run) and the round trips.
echo_cpu_run() { # bin runtime driver load conns duration
  local fifo pid addr t0 t1 trips
  fifo=$(mktemp -u); mkfifo "$fifo"
  WEFT_IO_DRIVER=$3 taskset -c "${SERVER_CPU:-0}" "$1" "$2" >"$fifo" &
  pid=$!
  read -r addr <"$fifo"; rm -f "$fifo"
  taskset -c "${CLIENT_CPU:-1}" "$4" "$addr" "$5" 0.5 >/dev/null   # warm-up
  t0=$(ticks "$pid")
  trips=$(taskset -c "${CLIENT_CPU:-1}" "$4" "$addr" "$5" "$6")
  t1=$(ticks "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$trips" 'BEGIN { printf "%.3f %d\n", d / hz * 1e6 / n, n }'
}

# Build `bins` (cargo --bin arguments) from git revision $1 in a temporary
# worktree (removed when the script exits) into $AB_TARGET (default
# ./target-ab, gitignored and kept between runs, so a rebuild is quick).
# Sets base_target. For the experiments/*-ab.sh A/B scripts.
build_base() {
  local rev=$1 wt
  shift
  wt=$(mktemp -d)
  git worktree add -f "$wt" "$rev" >/dev/null
  trap "git worktree remove --force '$wt'" EXIT
  base_target=${AB_TARGET:-$PWD/target-ab}
  (cd "$wt" && CARGO_TARGET_DIR="$base_target" cargo build --release -p weft-bench "$@" >&2)
}

# A temporary directory $work holding $work/old, a worktree of git
# revision $1 of the repository $repo (set by the caller); both are removed
# when the script exits. For the experiments/*/run.sh scripts that build
# weft at OLD_REV beside the working tree's.
old_worktree() { # rev
  work=$(mktemp -d)
  git -C "$repo" worktree add -f "$work/old" "$1" -q
  trap 'git -C "$repo" worktree remove --force "$work/old"; rm -rf "$work"' EXIT
}

# Build the experiment in directory $1 (its Cargo.toml.in, with RT_DEP
# for the runtime, and src/main.rs) three times, in $work/crate-old,
# $work/crate-new and $work/crate-tokio: against weft in $work/old (see
# old_worktree), the working tree's weft, and Tokio 1.54.1 with features
# $2 (a TOML list's items, e.g. '"rt", "time"').
build_sides() { # experiment-dir tokio-features
  local side dep
  for side in old new tokio; do
    case $side in
      old) dep="rt = { package = \"weft\", path = \"$work/old/weft\" }" ;;
      new) dep="rt = { package = \"weft\", path = \"$repo/weft\" }" ;;
      tokio) dep="rt = { package = \"tokio\", version = \"=1.54.1\", features = [$2] }" ;;
    esac
    mkdir -p "$work/crate-$side/src"
    awk -v dep="$dep" '{ sub(/RT_DEP/, dep); print }' "$1/Cargo.toml.in" > "$work/crate-$side/Cargo.toml"
    cp "$1/src/main.rs" "$work/crate-$side/src/"
    (cd "$work/crate-$side" && cargo build --release -q)
  done
}

# The user-space instructions callgrind counts in a whole run of the
# command given as arguments.
callgrind_count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | awk '/Collected/ { print $4 }'
}

# Dump the counts of the callgrind run $1 (started with
# --callgrind-out-file=$2), stop it, and print the instructions counted
# since the last `callgrind_control -z`. For the experiments/*-callgrind.sh
# scripts. (valgrind can take seconds to end on SIGTERM: then SIGKILL.)
callgrind_stop() { # pid out-file
  callgrind_control -d "$1" >/dev/null
  sleep 1
  kill "$1"
  sleep 2
  kill -9 "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  awk '/^summary:/ { print $2 }' "$2.1"
}
