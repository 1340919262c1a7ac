#!/usr/bin/env bash
# Tokio's documentation examples (the Rust code blocks in the docs of its
# public items) built and run twice: against weft (through weft-tokio, the
# package named `tokio`) and against Tokio 1.54.1 itself, so that an
# example that cannot work here (it connects to a server, binds a fixed
# port, reads a file that is not there) is told apart from one weft gets
# wrong. Needs network access once (crates.io) and RUSTC_BOOTSTRAP for
# Tokio's rustdoc JSON; a few minutes; not part of .ci/run.
#
#   tools/tokio-doctests/run.sh        # report in target/tokio-doctests/report.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
work="$root/target/tokio-doctests"
mkdir -p "$work"

# 1. Tokio's rustdoc JSON (as tools/api-coverage/run.sh makes it).
json=$(tools/api-coverage/tokio-json.sh)

# 2. One crate of examples per side: the same sources, with tokio patched
# to weft-tokio on the weft side only.
for side in weft tokio; do
  dir="$work/$side"
  mkdir -p "$dir"
  python3 tools/tokio-doctests/extract.py "$json" "$dir" > /dev/null
  sed -e "s|@WEFT_TOKIO@|$root/weft-tokio|" -e 's/^name = "tokio-tests-on-weft"/name = "tokio-doctests"/' \
    tools/tokio-tests/harness.toml > "$dir/Cargo.toml"
  if [ "$side" = tokio ]; then
    sed -i -e '/^\[patch.crates-io\]/,/^tokio = /d' \
      -e 's/^tokio = { version = "1"/tokio = { version = "=1.54.1"/' "$dir/Cargo.toml"
  else
    cp tools/tokio-tests/Cargo.lock "$dir/Cargo.lock"
  fi
done

# 3. Build; a module that does not compile is left out (its errors kept)
# and the rest built again, until everything left builds.
python3 tools/tokio-doctests/build_and_run.py "$work"
