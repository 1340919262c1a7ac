# frozen_string_literal: true
# The short-read rule and fd identity under Weft::Scheduler: a read that
# came up short on a stream socket lets the next read in the same loop
# turn be skipped (weft-ruby/src/poller.rs, `read_would_fail`), and a wait
# checks that its fd still names the registered file. Run:
# weft-ruby/test/run.sh minitest.
require "minitest/autorun"
require "timeout"
require "socket"
require "weft"
require_relative "helper"

class TestWeftShortRead < Minitest::Test
  include WeftTestHelpers

  # A read that came up short drained a stream socket: the next read in
  # the same turn of the loop is not made but reported as EAGAIN (saving a
  # recv that would fail), and the wait Ruby makes next still sees the
  # bytes that came in between.
  def test_a_read_after_a_short_read_waits_and_gets_what_came_since
    a, b = UNIXSocket.pair
    got = with_scheduler do |s|
      out = []
      Fiber.schedule do
        a.wait_readable # registers a
        buffer = IO::Buffer.new(100)
        out << buffer.get_string(0, s.io_read(a, buffer, 0))
        b.write("two") # in before the next read, with no turn between
        out << s.io_read(a, buffer, 0)
        out << (a.wait_readable(2) ? buffer.get_string(0, s.io_read(a, buffer, 0)) : :never_woken)
      end
      Fiber.schedule { b.write("one") }
      Fiber.scheduler.run
      out
    end
    assert_equal ["one", -Errno::EAGAIN::Errno, "two"], got
  ensure
    a&.close
    b&.close
  end

  # The block's value, or :never_woken if it takes over `seconds`.
  def within(seconds = 2, &block)
    Timeout.timeout(seconds, &block)
  rescue Timeout::Error
    :never_woken
  end

  # A short read of a socket, then IO#reopen onto another socket whose
  # bytes are in, in the same turn of the loop; `other_waiter`: another
  # fiber waits on the IO meanwhile. What the two reads got.
  def reopen_after_a_short_read(other_waiter:)
    a, peer_a = UNIXSocket.pair
    b, peer_b = UNIXSocket.pair
    with_scheduler do
      out = []
      Fiber.schedule { a.wait_priority(0.5) } if other_waiter
      Fiber.schedule do
        out << a.readpartial(10) # waits: registers a's socket
        peer_b.write("2")
        a.reopen(b)
        b.close
        out << within { a.readpartial(10) }
      end
      Fiber.schedule { peer_a.write("1") }
      Fiber.scheduler.run
      out
    end
  ensure
    [a, peer_a, b, peer_b].each { |io| io&.close unless io&.closed? }
  end

  # The read after the short read may be skipped (EAGAIN), but the wait
  # then checks the fd's identity and finds the new socket's bytes.
  def test_a_reopen_after_a_short_read_still_reads_the_new_socket
    assert_equal %w[1 2], reopen_after_a_short_read(other_waiter: false)
  end

  # While another fiber waits on the IO, a wait trusts the fd's
  # registration without checking its identity, so the read after the
  # short read is made, not skipped.
  def test_a_reopen_after_a_short_read_with_another_waiter_reads_the_new_socket
    assert_equal %w[1 2], reopen_after_a_short_read(other_waiter: true)
  end

  # The fd of an IO whose registration an earlier wait verified is closed
  # behind it (through another IO object, or by a raw close(2) followed by
  # a GC, as a leaked IO's finalizer would) and a new socket takes the
  # number: the next wait of the first IO checks the fd and is woken by
  # the new socket. (A trust that skipped the check on what Ruby saw
  # would fail these; BENCHMARKS.md, "Ruby: one recv".)
  def swap_behind(how)
    a, peer_a = UNIXSocket.pair
    with_scheduler do
      out = []
      fresh = nil
      Fiber.schedule do
        out << a.read(1) # waits: registers and verifies a's socket
        number = a.fileno
        case how
        when :close then IO.for_fd(number, autoclose: true).close
        when :gc
          syscall(RAW_CLOSE, number) # behind Ruby: no IO#close
          GC.start
        end
        fresh = UNIXSocket.pair
        fresh.reverse! if fresh[1].fileno == number
        out << (fresh[0].fileno == number ? :reused : :not_reused)
        out << within { a.read(1) }
      end
      Fiber.schedule do
        peer_a.write("1")
        200.times { fresh ? break : sleep(0.01) }
        sleep 0.02
        fresh&.last&.write("2")
      end
      Fiber.scheduler.run
      fresh&.each(&:close)
      out
    end
  ensure
    # a's number was closed behind it: it must not close it again later.
    a&.autoclose = false
    peer_a&.close
  end

  # close(2)'s syscall number, where known.
  RAW_CLOSE = { "x86_64" => 3, "aarch64" => 57 }[RbConfig::CONFIG["host_cpu"]]

  def test_a_close_through_another_io_object_is_seen_by_the_next_wait
    got = swap_behind(:close)
    skip "the kernel did not reuse the fd number" if got.include?(:not_reused)
    assert_equal ["1", :reused, "2"], got
  end

  def test_a_close_behind_ruby_is_seen_by_the_next_wait
    skip "close(2)'s syscall number is not known here" unless RAW_CLOSE
    got = swap_behind(:gc)
    skip "the kernel did not reuse the fd number" if got.include?(:not_reused)
    assert_equal ["1", :reused, "2"], got
  end

  # The short read of a socket closed since says nothing about the next
  # socket on its fd number (a connection closed and the next accepted in
  # the same turn of the loop): that socket's first read is made.
  def test_a_short_read_does_not_carry_over_to_a_new_socket_on_the_same_number
    a, b = UNIXSocket.pair
    got = with_scheduler do |s|
      out = []
      fresh = nil
      Fiber.schedule do
        a.wait_readable # registers a
        buffer = IO::Buffer.new(100)
        out << buffer.get_string(0, s.io_read(a, buffer, 0))
        number = a.fileno
        a.close
        fresh = UNIXSocket.pair
        fresh.reverse! if fresh[1].fileno == number
        out << (fresh[0].fileno == number ? :reused : :not_reused)
        fresh[1].write("two")
        out << s.io_read(fresh[0], buffer, 0)
      end
      Fiber.schedule { b.write("one") }
      Fiber.scheduler.run
      fresh&.each(&:close)
      out
    end
    skip "the kernel did not reuse the fd number" if got[1] == :not_reused
    assert_equal ["one", :reused, 3], got
  ensure
    a&.close unless a&.closed?
    b&.close
  end

  # A short read does not mean EAGAIN next when the peer has closed: the
  # read after it finds the end of the stream (the read is skipped, but
  # the wait sees the close the loop already took from the kernel).
  def test_a_short_read_before_the_peers_close_then_finds_the_end
    a, b = UNIXSocket.pair
    got = with_scheduler do
      out = nil
      Fiber.schedule { out = within { a.read(20) } } # waits, then reads 11 of 20
      Fiber.schedule { b.write("Hello World"); b.close }
      Fiber.scheduler.run
      out
    end
    assert_equal "Hello World", got
  ensure
    a&.close
    b&.close unless b&.closed?
  end

  # A wait or a readiness check after a short read ends the rule that
  # skips the next read: a read after "readable" gets the bytes.
  def test_a_read_after_readable_is_made_even_right_after_a_short_read
    a, b = UNIXSocket.pair
    got = with_scheduler do |s|
      out = []
      Fiber.schedule do
        a.wait_readable # registers a
        buffer = IO::Buffer.new(100)
        read = -> { buffer.get_string(0, s.io_read(a, buffer, 0)) }
        out << read.call # "one", short
        b.write("two")
        out << a.wait_readable(1).class
        out << read.call # short again
        b.write("three")
        out << a.wait_readable(0).class # a check, not a wait
        out << read.call
      end
      Fiber.schedule { b.write("one") }
      Fiber.scheduler.run
      out
    end
    assert_equal ["one", UNIXSocket, "two", UNIXSocket, "three"], got
  ensure
    a&.close
    b&.close
  end

  # A reset that came after the bytes is raised by the read after the short
  # read, not waited past.
  def test_a_reset_after_a_short_read_is_raised
    server = TCPServer.new("127.0.0.1", 0)
    client = TCPSocket.new("127.0.0.1", server.addr[1])
    conn = server.accept
    got = with_scheduler do
      out = []
      Fiber.schedule do
        out << conn.readpartial(10) # waits, then "x", short
        out << within do
          conn.readpartial(10)
        rescue SystemCallError, EOFError => e
          e.class
        end
      end
      Fiber.schedule do
        client.write("x")
        client.setsockopt(Socket::SOL_SOCKET, Socket::SO_LINGER, [1, 0].pack("ii"))
        client.close # with a zero linger: a reset
      end
      Fiber.scheduler.run
      out
    end
    assert_equal "x", got[0]
    assert_includes [Errno::ECONNRESET, EOFError], got[1]
  ensure
    [server, client, conn].each { |io| io&.close unless io&.closed? }
  end

  # A datagram socket returns one datagram per read however many are
  # queued, so a short read says nothing there: the next is made.
  def test_a_short_read_of_a_datagram_does_not_hold_back_the_next
    a, b = UNIXSocket.pair(:DGRAM)
    got = with_scheduler do |s|
      out = []
      Fiber.schedule do
        a.wait_readable # registers a
        buffer = IO::Buffer.new(100)
        2.times { out << buffer.get_string(0, s.io_read(a, buffer, 0)) }
      end
      Fiber.schedule { b.send("one", 0); b.send("two", 0) }
      Fiber.scheduler.run
      out
    end
    assert_equal %w[one two], got
  ensure
    a&.close
    b&.close
  end
end
