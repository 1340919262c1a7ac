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
work="$root/target/api-coverage"
json=$(tools/api-coverage/tokio-json.sh)
python3 tools/api-coverage/coverage.py "$root" "$json" "$work"
python3 tools/api-coverage/traits.py "$root" "$json" "$work"
python3 tools/api-coverage/sigs.py "$root" "$json" "$work"
