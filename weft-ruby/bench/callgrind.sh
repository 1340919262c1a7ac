#!/usr/bin/env bash
# User-space instructions and cache misses per request of one server kind,
# by object (libruby, libc, weft.so...), counted by callgrind: repeatable
# where CPU time is not (the count does not move with the machine's load).
#
#   weft-ruby/bench/callgrind.sh KIND MODE CONNS [SECONDS]
#
# KIND and MODE as for http_bench.sh (weft, weft-uring, select, async,
# threads; close or keepalive). The server runs under valgrind, about 50
# times slower, so one wrk run warms it up and the counts are taken over
# the next (SECONDS, default 8); wrk's timeout is raised to match.
#
# Only the split by object is printed. libruby is stripped here, so
# callgrind cannot name its functions; and a fiber switch confuses its
# call tree (`callgrind_annotate` puts everything under one function).
# The kernel's share is not counted at all: see syscalls.sh.
#
# CG_KEEP=DIR keeps callgrind's file there (for `callgrind_annotate`, e.g.
# weft.so's functions: `callgrind_annotate FILE | grep weft_ruby`).
set -euo pipefail
cd "$(dirname "$0")/../.."
kind=$1 mode=$2 conns=$3 seconds=${4:-8}
server=$kind driver=epoll
[ "$kind" = weft-uring ] && server=weft driver=uring
out=$(mktemp -d)
port=$((20000 + RANDOM % 10000))
WEFT_IO_DRIVER=$driver valgrind --tool=callgrind --cache-sim=yes \
  --callgrind-out-file="$out/cg.%p" \
  ruby -W0 -I "${WEFT_EXT_DIR:-weft-ruby/lib}" -I weft-ruby/lib \
  weft-ruby/examples/http_server.rb "$server" "$port" "$mode" >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 1 600); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
hdr=(); [ "$mode" = close ] && hdr=(-H "Connection: close")
wrk -t1 -c"$conns" -d5 --timeout 30s "${hdr[@]}" "http://127.0.0.1:$port/" >/dev/null
callgrind_control -z "$pid" >/dev/null
requests=$(wrk -t1 -c"$conns" -d"$seconds" --timeout 30s "${hdr[@]}" \
  "http://127.0.0.1:$port/" | awk '/requests in/ { print $1 }')
callgrind_control -d "$pid" >/dev/null
sleep 1
echo "$kind $mode c$conns: $requests requests counted"
# Self cost by object: a cost line after `calls=` is a call's inclusive
# cost, counted in the callee already; names may be compressed to "(id)".
ruby -e '
  requests = Float(ARGV.shift)
  names = {}; ob = nil; skip = false; events = nil
  sums = Hash.new { |h, k| h[k] = Array.new(events.size, 0) }
  File.foreach(ARGV.shift) do |line|
    case line
    when /\Aevents: (.*)/ then events = $1.split
    when /\A(c?ob)=\((\d+)\)(?: (.*))?/
      names[$2] = $3 if $3
      ob = names[$2] if $1 == "ob"
    when /\Acalls=/ then skip = true
    when /\A[0-9+\-*]/
      next skip = false if skip
      vals = line.split.drop(1).map(&:to_i)
      vals.each_with_index { |v, i| sums[ob][i] += v }
    end
  end
  total = Array.new(events.size, 0)
  sums.each_value { |v| v.each_with_index { |x, i| total[i] += x } }
  puts format("%-28s", "per request") + events.map { |e| format("%9s", e) }.join
  rows = sums.sort_by { |_, v| -v[0] }.select { |_, v| v[0] > total[0] / 500 }
  (rows + [["TOTAL", total]]).each do |name, v|
    puts format("%-28s", File.basename(name.to_s)[0, 28]) +
         v.map { |x| format("%9.1f", x / requests) }.join
  end
' "$requests" "$(ls "$out"/cg.*.1)"
if [ -n "${CG_KEEP:-}" ]; then
  mkdir -p "$CG_KEEP"
  cp "$(ls "$out"/cg.*.1)" "$CG_KEEP/callgrind.$kind.$mode.c$conns"
  echo "kept: $CG_KEEP/callgrind.$kind.$mode.c$conns ($requests requests)"
fi
