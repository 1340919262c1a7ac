#!/usr/bin/env bash
# Regenerate API.md: which public items of Tokio (feature `full`) exist in
# weft at the same path (coverage.py), which of their trait impls weft's
# types have (traits.py), and whether weft's functions and methods accept
# the calls Tokio's signatures allow (sigs.py). Needs network access once
# (crates.io) and a few minutes; not part of .ci/run.
#
#   tools/api-coverage/run.sh            # Tokio 1.54.1
#   TOKIO_VERSION=1.55.0 tools/api-coverage/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
version=${TOKIO_VERSION:-1.54.1}
work="$root/target/api-coverage"
mkdir -p "$work/tokio-doc/src"
cat > "$work/tokio-doc/Cargo.toml" <<TOML
[package]
name = "tokio-doc"
version = "0.0.0"
edition = "2021"
[dependencies]
tokio = { version = "=$version", features = ["full"] }
[workspace]
TOML
: > "$work/tokio-doc/src/lib.rs"
# Tokio's rustdoc JSON (an unstable rustdoc output, allowed on stable by
# RUSTC_BOOTSTRAP for this one command).
(cd "$work/tokio-doc" && RUSTC_BOOTSTRAP=1 cargo rustdoc -q -p tokio -- \
  -Z unstable-options --output-format json)
python3 tools/api-coverage/coverage.py "$root" "$work/tokio-doc/target/doc/tokio.json" "$work"
python3 tools/api-coverage/traits.py "$root" "$work/tokio-doc/target/doc/tokio.json" "$work"
python3 tools/api-coverage/sigs.py "$root" "$work/tokio-doc/target/doc/tokio.json" "$work"
