# frozen_string_literal: true
# weft's own tests for Weft::Selector, io-event's selector interface.
# The main fiber plays the event loop, as in io-event's own use: workers
# are fibers that `transfer` to it when they wait, and `select` transfers
# back to them.
require "minitest/autorun"
require "socket"
require "weft"
require_relative "helper"

class TestWeftSelector < Minitest::Test
  include WeftTestHelpers

  def setup
    @selector = Weft::Selector.new(Fiber.current)
  end

  def teardown
    @selector.close
  end

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # Run `select` until the block says stop (at most `limit` turns).
  def select_until(limit = 100, duration = 1)
    limit.times do
      break if yield

      @selector.select(duration)
    end
    assert yield, "the condition never held within #{limit} turns of select"
  end

  def test_loop_and_closed
    assert_same Fiber.current, @selector.loop
    refute @selector.closed?
    @selector.close
    @selector.close
    assert @selector.closed?
    assert_raises(RuntimeError) { @selector.transfer }
  end

  def test_io_wait_returns_the_ready_events
    r, w = IO.pipe
    got = nil
    fiber = Fiber.new { got = @selector.io_wait(Fiber.current, r, IO::READABLE) }
    fiber.transfer
    assert_nil got, "the fiber waits"
    assert_equal 0, @selector.select(0)
    w.write("x")
    assert_equal 1, @selector.select(1)
    assert_equal IO::READABLE, got
    refute fiber.alive?
  ensure
    r&.close
    w&.close
  end

  # io-event's selectors always go through the loop, even for an fd that is
  # ready already; `async` code (and io-event's own tests) rely on the order.
  def test_a_ready_fd_still_waits_for_the_next_select
    r, w = IO.pipe
    log = []
    Fiber.new { log << :waiting; log << @selector.io_wait(Fiber.current, w, IO::WRITABLE) }.transfer
    log << :select
    assert_equal 1, @selector.select(0)
    assert_equal [:waiting, :select, IO::WRITABLE], log
    assert_equal 0, @selector.select(0), "resumed once"
  ensure
    r&.close
    w&.close
  end

  # Two fibers wait for the same ready fd; whichever the selector resumes
  # first raises into the other, whose wait must then be cancelled (never
  # resumed by the selector afterwards), in both orders of waiting.
  def test_a_waiter_raised_by_another_waiter_on_the_same_fd_is_not_resumed
    boom = Class.new(RuntimeError)
    [false, true].each do |second_first|
      r, w = IO.pipe
      log = []
      first = second = nil
      first = Fiber.new do
        @selector.io_wait(Fiber.current, w, IO::WRITABLE)
        log << :first_resumed
      rescue boom
        log << :first_raised
        second.transfer
      end
      second = Fiber.new do
        @selector.io_wait(Fiber.current, w, IO::WRITABLE)
        unless log.include?(:first_resumed)
          log << :second_raises
          first.raise(boom)
        end
        log << :second_done
      end
      if second_first
        second.transfer
        first.transfer
      else
        first.transfer
        second.transfer
      end
      @selector.select(0)
      assert_includes log, :second_done
      if log.include?(:second_raises)
        assert_equal %i[second_raises first_raised second_done], log
      else
        assert_equal %i[first_resumed second_done], log
      end
      assert_equal second_first, log.include?(:second_raises), "the fiber that waited first is resumed first"
      assert_equal 0, @selector.select(0), "no waiter left"
    ensure
      r&.close
      w&.close
    end
  end

  # An fd closed and its number reused by the fiber the old fd's event
  # resumed: the new wait is served by a later select, not by the old event.
  def test_an_old_fds_event_does_not_resume_a_wait_on_its_reused_number
    a, b = UNIXSocket.pair
    log = []
    fiber = Fiber.new do
      b.write("1")
      @selector.io_wait(Fiber.current, a, IO::READABLE)
      log << :first
      number = a.fileno
      a.close
      c, d = UNIXSocket.pair
      c, d = d, c if d.fileno == number
      log << (c.fileno == number ? :same_number : :other_number)
      d.write("2")
      @selector.io_wait(Fiber.current, c, IO::READABLE)
      log << :second
      [c, d].each(&:close)
    end
    fiber.transfer
    log << :select1
    @selector.select(1)
    log << :select2
    @selector.select(1)
    assert_equal :same_number, log[2], "the test needs the number reused"
    assert_equal %i[select1 first same_number select2 second], log
  ensure
    b&.close
  end

  # A select resumes the waiters of at most 64 woken fds (io-event takes at
  # most 64 events per select), so a fiber that waits on a ready fd (Ruby
  # waits on a listening socket before each accept) runs again within a
  # few dozen fds, not after every ready connection; the fds left are
  # reported by the next selects, none lost.
  def test_a_select_takes_at_most_64_events_and_the_rest_come_next
    pipes = Array.new(200) { IO.pipe }
    resumed = []
    pipes.each_with_index do |(r, _), i|
      Fiber.new { @selector.io_wait(Fiber.current, r, IO::READABLE); resumed << i }.transfer
    end
    pipes.each { |_, w| w.write("x") }
    per_select = []
    20.times do
      break if resumed.size == pipes.size

      before = resumed.size
      @selector.select(0)
      per_select << resumed.size - before
    end
    assert_equal (0...200).to_a, resumed.sort
    assert_operator per_select.max, :<=, 64, "fibers resumed per select: #{per_select}"
  ensure
    pipes&.each { |p| p.each(&:close) }
  end

  def test_wakeup_is_false_unless_a_select_is_blocked
    refute @selector.wakeup
    2.times do
      t = Thread.new { sleep 0.01; @selector.wakeup }
      started = now
      @selector.select(5)
      assert_operator now - started, :<, 4
      assert t.value, "the blocked select was woken"
    end
  end

  def test_select_rejects_a_duration_that_is_not_a_number
    assert_raises(TypeError) { @selector.select("soon") }
  end

  def test_io_read_waits_for_the_whole_length_across_selects
    a, b = UNIXSocket.pair
    buffer = IO::Buffer.new(64)
    got = nil
    Fiber.new { got = buffer.get_string(0, @selector.io_read(Fiber.current, a, buffer, 11)) }.transfer
    b.write("Hello")
    @selector.select(1)
    assert_nil got, "5 of 11 bytes"
    b.write(" World")
    select_until { got }
    assert_equal "Hello World", got
  ensure
    a&.close
    b&.close
  end

  # A short read drained the stream socket: the read still owed is not
  # made at once (it would get EAGAIN) but waits for the loop, which
  # reports the bytes that came in between.
  def test_a_read_after_a_short_read_waits_for_the_loop
    a, b = UNIXSocket.pair
    buffer = IO::Buffer.new(64)
    got = []
    read = -> { buffer.get_string(0, @selector.io_read(Fiber.current, a, buffer, 1)) }
    Fiber.new do
      got << read.call
      b.write("second")
      got << read.call
    end.transfer
    b.write("first")
    @selector.select(1)
    assert_equal ["first"], got, "the second read waits though its bytes are in"
    select_until { got.size == 2 }
    assert_equal %w[first second], got
  ensure
    a&.close
    b&.close
  end

  # A short read whose bytes came with the peer's close: the read still
  # owed finds the end of the stream (io_read returns what it has).
  def test_a_read_for_more_after_a_short_read_finds_the_peers_close
    a, b = UNIXSocket.pair
    buffer = IO::Buffer.new(64)
    got = nil
    Fiber.new { got = @selector.io_read(Fiber.current, a, buffer, 20) }.transfer
    b.write("Hello World")
    b.close
    select_until(5, 0.2) { got }
    assert_equal 11, got
    assert_equal "Hello World", buffer.get_string(0, got)
  ensure
    a&.close
    b&.close unless b&.closed?
  end

  def test_process_wait_for_a_child_that_has_exited_already
    pid = Process.spawn("true")
    sleep 0.05
    status = nil
    Fiber.new { status = @selector.process_wait(Fiber.current, pid, 0) }.transfer
    select_until { status }
    assert status.success?
    assert_equal pid, status.pid
  end

  def test_several_fibers_on_one_fd_and_only_matching_events
    r, w = IO.pipe
    got = []
    3.times { |i| Fiber.new { got << [i, @selector.io_wait(Fiber.current, r, IO::READABLE)] }.transfer }
    w.write("x")
    @selector.select(1)
    assert_equal [[0, IO::READABLE], [1, IO::READABLE], [2, IO::READABLE]], got.sort
    # A reader and a waiter for PRIORITY: only the reader is ready.
    r.read(1)
    got.clear
    Fiber.new { got << [:reader, @selector.io_wait(Fiber.current, r, IO::READABLE)] }.transfer
    prio = Fiber.new { got << [:prio, @selector.io_wait(Fiber.current, r, IO::PRIORITY)] }
    prio.transfer
    w.write("y")
    @selector.select(1)
    assert_equal [[:reader, IO::READABLE]], got
    assert prio.alive?, "a PRIORITY waiter is not woken by plain data"
    # Unhandled in a transferred-to fiber, the exception comes back here.
    assert_raises(IOError) { @selector.raise(prio, IOError, "stop") }
    refute prio.alive?
  ensure
    r&.close
    w&.close
  end

  def test_a_reused_fd_number_is_waited_on_afresh
    3.times do
      r, w = IO.pipe
      got = nil
      Fiber.new { got = @selector.io_wait(Fiber.current, r, IO::READABLE) }.transfer
      w.write("x")
      select_until { got }
      assert_equal IO::READABLE, got
      r.close
      w.close
    end
  end

  def test_a_fiber_transferred_to_without_events_gets_false_and_is_forgotten
    r, w = IO.pipe
    got = :unset
    fiber = Fiber.new { got = @selector.io_wait(Fiber.current, r, IO::READABLE); :done }
    fiber.transfer
    fiber.transfer # what a timeout does in async
    assert_equal false, got
    w.write("x")
    assert_equal 0, @selector.select(0), "no waiter is left on the fd"
  ensure
    r&.close
    w&.close
  end

  def test_raise_into_a_waiting_fiber
    r, w = IO.pipe
    seen = nil
    fiber = Fiber.new do
      @selector.io_wait(Fiber.current, r, IO::READABLE)
    rescue IOError => e
      seen = e.message
    end
    fiber.transfer
    @selector.raise(fiber, IOError, "closed under the fiber")
    assert_equal "closed under the fiber", seen
    w.write("x")
    assert_equal 0, @selector.select(0), "the raised fiber's waiter is gone"
  ensure
    r&.close
    w&.close
  end

  def test_push_resume_and_yield_use_the_ready_queue
    order = []
    a = Fiber.new { order << :a1; @selector.yield; order << :a2 }
    b = Fiber.new { order << :b }
    refute @selector.ready?
    @selector.push(b)
    assert @selector.ready?
    @selector.resume(a) # a runs, yields: queued behind b; the loop (we) is queued
    assert_equal [:a1], order
    @selector.select(0)
    assert_equal [:a1, :b, :a2], order
    refute @selector.ready?, "the main fiber's own entry was nulled when it came back"
  end

  def test_a_fiber_that_requeues_itself_runs_once_per_select
    count = 0
    fiber = Fiber.new { loop { count += 1; @selector.yield } }
    @selector.push(fiber)
    @selector.select(0)
    assert_equal 1, count
    @selector.select(0)
    assert_equal 2, count
  end

  def test_select_waits_for_its_duration_and_reports_idle_time
    t0 = now
    assert_equal 0, @selector.select(0.05)
    assert_operator now - t0, :>=, 0.045
    assert_operator @selector.idle_duration, :>=, 0.045
    @selector.select(0)
    assert_equal 0.0, @selector.idle_duration
  end

  def test_wakeup_from_another_thread_ends_a_blocking_select
    refute @selector.wakeup, "not blocked: nothing to wake"
    woke = nil
    thread = Thread.new do
      sleep 0.01 until (woke = @selector.wakeup)
    end
    t0 = now
    @selector.select(nil)
    assert_operator now - t0, :<, 5
    thread.join
    assert woke
  end

  def test_io_read_and_io_write_with_an_offset
    r, w = IO.pipe
    out = IO::Buffer.for(+"..hello")
    into = IO::Buffer.new(8)
    wrote = read = nil
    reader = Fiber.new { read = @selector.io_read(Fiber.current, r, into, 5, 3) }
    reader.transfer
    assert_nil read, "the reader waits for its 5 bytes"
    Fiber.new { wrote = @selector.io_write(Fiber.current, w, out, 5, 2) }.transfer
    assert_equal 5, wrote
    select_until { read }
    assert_equal 5, read
    assert_equal "hello", into.get_string(3, 5)
  ensure
    r&.close
    w&.close
  end

  def test_io_read_of_zero_length_does_not_wait
    r, w = IO.pipe
    into = IO::Buffer.new(4)
    result = nil
    Fiber.new { result = @selector.io_read(Fiber.current, r, into, 0) }.transfer
    assert_equal(-Errno::EAGAIN::Errno, result)
  ensure
    r&.close
    w&.close
  end

  def test_io_wait_on_a_closed_io_raises
    r, w = IO.pipe
    r.close
    error = nil
    Fiber.new do
      @selector.io_wait(Fiber.current, r, IO::READABLE)
    rescue IOError => e
      error = e
    end.transfer
    assert_kind_of IOError, error
  ensure
    w&.close
  end

  def test_process_wait_on_a_pidfd
    pid = Process.spawn("sleep", "0.05")
    status = nil
    fiber = Fiber.new { status = @selector.process_wait(Fiber.current, pid, 0) }
    fiber.transfer
    assert_nil status, "the fiber waits for the child on the reactor"
    select_until { status }
    assert_equal pid, status.pid
    assert status.success?
  end

  def test_ten_thousand_fibers_on_a_hundred_pipes
    pipes = Array.new(100) { IO.pipe }
    done = 0
    10_000.times do |i|
      r, = pipes[i % 100]
      Fiber.new do
        @selector.io_wait(Fiber.current, r, IO::READABLE)
        done += 1
      end.transfer
    end
    assert_equal 0, done
    pipes.each { |_, w| w.write("x") }
    select_until { done == 10_000 }
  ensure
    pipes&.each { |r, w| r.close; w.close }
  end

  def test_registered_with_io_event_when_it_is_loaded
    # A stand-in for io-event's namespace (the gem is not installed here).
    had = defined?(::IO::Event::Selector)
    unless had
      ::IO.const_set(:Event, Module.new)
      ::IO::Event.const_set(:Selector, Module.new)
    end
    assert Weft.register_io_event_selector
    assert_same Weft::Selector, ::IO::Event::Selector::Weft
  ensure
    ::IO.send(:remove_const, :Event) if !had && ::IO.const_defined?(:Event, false)
  end

  # A minimal Fiber::Scheduler built the way async builds its own on
  # io-event: the loop is a fiber of its own, hooks go through the
  # selector, timers are a sorted list the loop turns into select's
  # duration. Ruby's ordinary IO methods then run on Weft::Selector.
  class SelectorScheduler
    def initialize
      @loop = Fiber.new(blocking: true) { run_loop }
      @selector = Weft::Selector.new(@loop)
      @timers = []
      @fibers = 0
    end

    def run_loop
      while @fibers.positive?
        now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        due, @timers = @timers.partition { |at, _| at <= now }
        due.each { |_, fiber| fiber.transfer if fiber.alive? }
        duration = @timers.map(&:first).min&.-(now)
        @selector.select(@selector.ready? ? 0 : duration&.clamp(0, nil))
      end
    end

    def fiber(&block)
      @fibers += 1
      fiber = Fiber.new(blocking: false) do
        block.call
      ensure
        @fibers -= 1
        @selector.transfer
      end
      @selector.resume(fiber)
      fiber
    end

    def io_wait(io, events, _timeout = nil)
      @selector.io_wait(Fiber.current, io, events)
    end

    def kernel_sleep(duration = nil)
      @timers << [Process.clock_gettime(Process::CLOCK_MONOTONIC) + duration, Fiber.current] if duration
      @selector.transfer
    end

    def block(_blocker, timeout = nil)
      kernel_sleep(timeout)
    end

    def unblock(_blocker, fiber)
      @selector.push(fiber)
      @selector.wakeup
    end

    def close
      @loop.transfer while @fibers.positive? && @loop.alive?
      @selector.close
    end
  end

  # Ruby fills an IO's read buffer (gets) with a zero-length io_read; the
  # selector waits inside that one call (on a pipe here) instead of
  # answering EAGAIN and being called through io_wait and io_read again.
  def test_a_fill_through_the_selector_waits_inside_one_io_read_call
    counting = Class.new(SelectorScheduler) do
      prepend CountsHookCalls

      def io_read(io, buffer, length, offset = 0)
        @selector.io_read(Fiber.current, io, buffer, length, offset)
      end
    end
    r, w = IO.pipe
    line, calls = gets_a_line_written_later(counting, r, w, "hi\n")
    assert_equal "hi\n", line
    assert_equal({ io_read: 1 }, calls)
  ensure
    r&.close
    w&.close
  end

  def test_a_fiber_scheduler_built_on_the_selector_runs_sockets_and_sleeps
    lines = []
    Thread.new do
      Fiber.set_scheduler(SelectorScheduler.new)
      server = TCPServer.new("127.0.0.1", 0)
      port = server.addr[1]
      Fiber.schedule do
        client = server.accept
        while (line = client.gets)
          client.write("echo #{line}")
        end
        client.close
      end
      Fiber.schedule do
        sleep 0.01
        sock = TCPSocket.new("127.0.0.1", port)
        3.times do |i|
          sock.write("line #{i}\n")
          lines << sock.gets.chomp
        end
        sock.close
      end
    ensure
      Fiber.set_scheduler(nil)
      server&.close
    end.join
    assert_equal ["echo line 0", "echo line 1", "echo line 2"], lines
  end
end
