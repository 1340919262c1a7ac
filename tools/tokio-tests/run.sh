#!/usr/bin/env bash
# Tokio's own integration tests (the `tests/` directory of the crates.io
# tokio package) run against weft: a conformance check of "the same
# behaviour", with Tokio's suite as the judge. Nothing of Tokio's is kept in
# this repository: the script fetches the package (network access once),
# copies its tests into target/tokio-tests/harness/tests, builds them
# against weft-tokio (the package named `tokio` that re-exports weft), runs
# every test binary and compares the outcome with expected.txt (the tests
# weft fails or cannot build, each with its reason). Exit status 0 when the
# outcome matches expected.txt exactly, 1 otherwise; the report is
# target/tokio-tests/report.txt.
#
#   tools/tokio-tests/run.sh              # every test file
#   tools/tokio-tests/run.sh sync_mpsc    # the files whose names match
#   WEFT_IO_DRIVER=epoll tools/tokio-tests/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
version=1.54.1
work="$root/target/tokio-tests"
filter=${1:-}
mkdir -p "$work/fetch/src" "$work/harness"

# 1. Tokio's package source, from crates.io through cargo's own cache.
cat > "$work/fetch/Cargo.toml" <<TOML
[package]
name = "fetch-tokio"
version = "0.0.0"
edition = "2021"
[dependencies]
tokio = { version = "=$version", default-features = false }
[workspace]
TOML
: > "$work/fetch/src/lib.rs"
tokio_src=$(cd "$work/fetch" && cargo metadata --format-version 1 2>/dev/null |
  python3 -c 'import json,sys; m=json.load(sys.stdin); print([p["manifest_path"] for p in m["packages"] if p["name"]=="tokio"][0].rsplit("/",1)[0])')
[ -d "$tokio_src/tests" ] || { echo "no tests/ in $tokio_src" >&2; exit 2; }

# 2. The harness: Tokio's features (so its tests' `cfg(feature = "full")`
# holds), its dev-dependencies, and tokio patched to weft-tokio.
sed -e "s|@WEFT_TOKIO@|$root/weft-tokio|" tools/tokio-tests/harness.toml > "$work/harness/Cargo.toml"
mkdir -p "$work/harness/src"
: > "$work/harness/src/lib.rs"
rm -rf "$work/harness/tests"
cp -r "$tokio_src/tests" "$work/harness/tests"
# One adaptation, for a difference README states: weft's futures and
# `Sleep` are `Unpin` where Tokio's are not (every Tokio program still
# compiles), so async_send_sync.rs's `!Unpin` checks are dropped; its
# Send, Sync and Unpin checks all stay.
sed -i 's/^        AmbiguousIfUnpin::some_item(&\$value);$/        let _ = \&$value; \/\/ weft: may be Unpin (run.sh)/' \
  "$work/harness/tests/async_send_sync.rs"
cp tools/tokio-tests/Cargo.lock "$work/harness/Cargo.lock" 2>/dev/null || true
cd "$work/harness"

files=()
for f in tests/*.rs; do
  name=$(basename "$f" .rs)
  if [ -n "$filter" ] && [[ "$name" != *$filter* ]]; then continue; fi
  files+=("$name")
done

# 3. Build every test binary; a file that does not compile is a result too.
build_log="$work/build.log"
test_args=(--tests)
if [ -n "$filter" ]; then
  test_args=()
  for name in "${files[@]}"; do test_args+=(--test "$name"); done
fi
cargo build --keep-going --message-format json "${test_args[@]}" \
  > "$work/build.json" 2> "$build_log" || true
python3 - "$work/build.json" > "$work/binaries.tsv" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "test" in m["target"]["kind"]:
        print(m["target"]["name"] + "\t" + m["executable"])
PY

# 4. Run each binary (its own process, a time limit), and classify.
report="$work/report.txt"
: > "$report"
: > "$work/flaky.txt"

# One run of a test binary: "ok", "timeout", or "fail <tests>".
run_file() { # executable output-file
  local rc=0
  timeout 120 "$1" --test-threads=2 > "$2" 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    echo ok
  elif [ "$rc" = 124 ]; then
    echo timeout
  else
    local failed
    failed=$(grep -E '^    [^ ]+$' "$2" | awk '{print $1}' | sort | paste -sd, -)
    echo "fail ${failed:-rc=$rc}"
  fi
}
for name in "${files[@]}"; do
  exe=$(awk -F'\t' -v n="$name" '$1 == n { print $2 }' "$work/binaries.tsv")
  if [ -z "$exe" ]; then
    echo "$name build-error" >> "$report"
    continue
  fi
  out="$work/out.$name.txt"
  outcome=$(run_file "$exe" "$out")
  if [ "$outcome" != ok ]; then
    # Once more: a file whose tests lean on timing (Tokio's have some) must
    # fail twice to count; a pass the second time is reported as flaky.
    first=$outcome
    outcome=$(run_file "$exe" "$out")
    if [ "$outcome" = ok ]; then
      echo "$name: passed on a second run (first: $first)" >> "$work/flaky.txt"
    fi
  fi
  echo "$name $outcome" >> "$report"
done
[ -s "$work/flaky.txt" ] && { echo "flaky (passed on a second run):"; sed 's/^/  /' "$work/flaky.txt"; }

python3 "$root/tools/tokio-tests/compare.py" "$report" "$root/tools/tokio-tests/expected.txt" ${filter:+--partial}
