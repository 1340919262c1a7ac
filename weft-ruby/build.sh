#!/usr/bin/env bash
# Build the extension (debug unless PROFILE=release) and copy it to
# lib/weft/weft.so, where `ruby -I weft-ruby/lib -r weft` loads it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
profile="${PROFILE:-debug}"
flag=(); [ "$profile" = release ] && flag=(--release)
cargo build -p weft-ruby "${flag[@]}" --manifest-path "$here/../Cargo.toml"
target="$(cd "$here/.." && cargo metadata --format-version 1 --no-deps | ruby -rjson -e 'print JSON.parse(STDIN.read)["target_directory"]')"
mkdir -p "$here/lib/weft"
# Copy, then rename over the old one: a running ruby that has the old
# file mapped keeps it (writing into it in place would crash that ruby).
cp "$target/$profile/libweft_ruby.so" "$here/lib/weft/weft.so.new"
mv -f "$here/lib/weft/weft.so.new" "$here/lib/weft/weft.so"
echo "built $here/lib/weft/weft.so"
