#!/usr/bin/env bash
# Run Ruby's own test/fiber (Debian's ruby3.1 source package) and weft's
# minitest suite against Weft::Scheduler.
#   WEFT_EXT_DIR: a directory holding weft/weft.so (default: weft-ruby/lib)
#   RUBY_TEST_FIBER: where Ruby's tests are (default: fetched into target/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
ext="${WEFT_EXT_DIR:-$here/../lib}"
src="${RUBY_TEST_FIBER:-$root/target/ruby-test-fiber}"
what="${1:-all}"

if [ "$what" = all ] || [ "$what" = minitest ]; then
  echo "==> weft's minitest suite"
  ruby -I "$ext" -I "$here/../lib" -e 'ARGV.each { |f| require f }' "$here"/test_*.rb
fi

if [ "$what" = all ] || [ "$what" = fiber ]; then
  "$here/fetch-ruby-tests.sh" "$src" >/dev/null
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  cp -r "$src/test" "$src/tool" "$work/"
  # The shim, then the original's subclasses (from IOBufferScheduler on).
  { cat "$here/fiber_shim.rb"; sed -n '/^class IOBufferScheduler/,$p' "$src/test/fiber/scheduler.rb"; } \
    > "$work/test/fiber/scheduler.rb"
  echo "==> Ruby's test/fiber (ruby3.1 $(ruby -e 'print RUBY_VERSION')) on Weft::Scheduler"
  cd "$work"
  RUBYOPT="-I$ext -I$here/../lib" timeout 120 ruby tool/test/runner.rb --ruby=ruby -v test/fiber
fi
