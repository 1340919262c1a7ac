#!/usr/bin/env bash
# Tokio's rustdoc JSON (feature `full`), built in target/api-coverage/tokio-doc;
# prints its path. Rustdoc's JSON output is unstable: RUSTC_BOOTSTRAP allows
# it on stable for this one command. Used by tools/api-coverage/run.sh and
# tools/tokio-doctests/run.sh.
#
#   tools/api-coverage/tokio-json.sh                        # Tokio 1.54.1
#   TOKIO_VERSION=1.55.0 tools/api-coverage/tokio-json.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
version=${TOKIO_VERSION:-1.54.1}
doc="$(pwd)/target/api-coverage/tokio-doc"
mkdir -p "$doc/src"
cat > "$doc/Cargo.toml" <<TOML
[package]
name = "tokio-doc"
version = "0.0.0"
edition = "2021"
[dependencies]
tokio = { version = "=$version", features = ["full"] }
[workspace]
TOML
: > "$doc/src/lib.rs"
(cd "$doc" && RUSTC_BOOTSTRAP=1 cargo rustdoc -q -p tokio -- \
  -Z unstable-options --output-format json) >&2
echo "$doc/target/doc/tokio.json"
