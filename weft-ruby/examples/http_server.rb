# frozen_string_literal: true
# The seed article's HTTP server (one Ruby thread: read the request with
# `gets` until the blank line, answer a fixed response), on a scheduler
# chosen by the first argument:
#
#   ruby -I weft-ruby/lib weft-ruby/examples/http_server.rb [weft|select|async|threads] [PORT] [close|keepalive]
#
# `weft` runs every connection as a fiber on Weft::Scheduler; `select` on
# Ruby's reference IO.select scheduler (test/fiber/scheduler.rb from Ruby's
# source, path in $RUBY_SELECT_SCHEDULER, default where
# weft-ruby/test/fetch-ruby-tests.sh puts it); `async` in an Async task per
# connection (Debian's ruby-async, 1.x on nio4r); `threads` runs a thread
# per connection (the no-scheduler baseline). Stop with ^C.
require "socket"

kind = ARGV[0] || "weft"
port = Integer(ARGV[1] || 3002)
keepalive = ARGV[2] == "keepalive"
# The seed's response, plus `Connection: close` when the server closes, so a
# client (wrk) expects the close instead of counting it as an error.
RESPONSE = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n#{keepalive ? "" : "Connection: close\r\n"}\r\nHello World\n"

def handle(socket, keepalive)
  loop do
    line = socket.gets
    break if line.nil?

    line = socket.gets until line == "\r\n" || line.nil?
    break if line.nil?

    socket.write(RESPONSE)
    break unless keepalive
  end
rescue Errno::ECONNRESET, Errno::EPIPE
  nil
ensure
  socket.close
end

# A fiber per connection on `scheduler` (the loop runs at thread exit).
def serve_fibers(server, keepalive, scheduler)
  Fiber.set_scheduler(scheduler)
  Fiber.schedule do
    loop do
      socket = server.accept
      Fiber.schedule { handle(socket, keepalive) }
    end
  end
end

server = TCPServer.new("127.0.0.1", port)
server.listen(Socket::SOMAXCONN)
$stderr.puts "listening on 127.0.0.1:#{port} (#{kind}#{keepalive ? ", keep-alive" : ""})"

case kind
when "weft"
  require "weft"
  serve_fibers(server, keepalive, Weft::Scheduler.new)
when "select"
  path = ENV.fetch("RUBY_SELECT_SCHEDULER") do
    File.expand_path("../../target/ruby-test-fiber/test/fiber/scheduler.rb", __dir__)
  end
  require path
  serve_fibers(server, keepalive, Scheduler.new)
when "async"
  require "async"
  Async do |task|
    loop do
      socket = server.accept
      task.async { handle(socket, keepalive) }
    end
  end
when "threads"
  loop do
    socket = server.accept
    Thread.new { handle(socket, keepalive) }
  end
else
  abort "unknown scheduler #{kind.inspect}: weft, select, async or threads"
end
