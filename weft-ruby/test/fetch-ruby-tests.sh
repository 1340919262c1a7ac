#!/usr/bin/env bash
# Fetch Ruby's own test/fiber (and the tool/ runner it needs) from Debian's
# ruby3.1 source package into $1 (default: target/ruby-test-fiber at the
# workspace root). Nothing fetched is committed. Needs root for the
# temporary deb-src entry; does nothing if the tests are already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="${1:-$root/target/ruby-test-fiber}"
if [ -f "$dest/test/fiber/test_scheduler.rb" ] && [ -f "$dest/tool/test/runner.rb" ]; then
  exit 0
fi
mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get source --download-only ruby3.1 >/dev/null 2>&1; then
  # bookworm ships only `deb` entries: derive a deb-src entry for the main
  # suite from the machine's own entry (so the archive address is not
  # hard-coded), fetch, and remove the entry again.
  src=/etc/apt/sources.list.d/weft-ruby-deb-src.sources
  awk 'BEGIN{RS="";ORS="\n\n"} /Suites:[^\n]*bookworm( |$|\n)/ && /Types: deb/ && !/security/ {
         sub(/Types: deb/,"Types: deb-src"); sub(/Suites:[^\n]*/,"Suites: bookworm"); print; exit }' \
    /etc/apt/sources.list.d/debian.sources > "$src"
  if [ ! -s "$src" ]; then
    echo "could not derive a deb-src entry from /etc/apt/sources.list.d/debian.sources" >&2
    rm -f "$src"; exit 1
  fi
  apt-get update -qq
  apt-get source --download-only ruby3.1
  rm -f "$src"
fi
origs=(ruby3.1_*.orig.tar.*)
orig="${origs[0]}"
top=$(tar tf "$orig" | awk -F/ 'NR==1{print $1}')
tar xf "$orig" "$top/test/fiber" "$top/tool"
cp -r "$top/test" "$top/tool" "$dest/"
echo "Ruby's test/fiber is in $dest"
