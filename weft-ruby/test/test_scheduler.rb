# frozen_string_literal: true
# weft's own tests for Weft::Scheduler (minitest, bundled with Ruby).
# Run: weft-ruby/test/run.sh minitest (or `cargo test -p weft-ruby`).
require "minitest/autorun"
require "timeout"
require "socket"
require "weft"
require_relative "helper"

class TestWeftScheduler < Minitest::Test
  include WeftTestHelpers

  def elapsed
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    yield
    Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
  end

  # The backend is epoll unless WEFT_IO_DRIVER asks for io_uring (uring,
  # or auto: where the kernel allows it).
  def test_backend_is_epoll_unless_weft_io_driver_asks_for_io_uring
    assert_includes %w[io_uring epoll], Weft::Scheduler.backend
    backend = lambda do |driver|
      args = $LOAD_PATH.flat_map { |dir| ["-I", dir] }
      env = { "WEFT_IO_DRIVER" => driver }
      IO.popen(env, [RbConfig.ruby, *args, "-r", "weft", "-e", "print Weft::Scheduler.backend"],
               unsetenv_others: false, &:read)
    end
    assert_equal "epoll", backend.call(nil)
    assert_equal "epoll", backend.call("epoll")
    assert_includes %w[io_uring epoll], backend.call("auto")
    expected = ENV.key?("WEFT_IO_DRIVER") ? backend.call(ENV["WEFT_IO_DRIVER"]) : "epoll"
    assert_equal expected, Weft::Scheduler.backend
  end

  # A wait that timed out leaves nothing holding the socket: closing it
  # reaches the peer at once (on io_uring, a poll request left in the
  # kernel would keep the socket open until it ended).
  def test_closing_a_socket_after_its_wait_timed_out_reaches_the_peer
    a, b = UNIXSocket.pair
    timed_out, seen = with_scheduler do
      result = nil
      Fiber.schedule do
        waited = a.wait_readable(0.05)
        a.close
        # Still under the scheduler, which would still hold a's request.
        # At the end of the stream read_nonblock says nil.
        result = [waited, b.wait_readable(2) ? b.read_nonblock(1, exception: false) : :no_close]
      end
      Fiber.scheduler.run
      result
    end
    assert_nil timed_out
    assert_nil seen, "the peer never saw the close (got #{seen.inspect})"
  ensure
    a&.close unless a&.closed?
    b&.close
  end

  def test_several_fibers_wait_on_one_fd
    r, w = IO.pipe
    woken = []
    with_scheduler do
      3.times { |i| Fiber.schedule { woken << [i, r.wait_readable(1)] } }
      Fiber.schedule { w.write("x") }
    end
    assert_equal [0, 1, 2], woken.map(&:first).sort
    assert(woken.all? { |_, ready| ready.equal?(r) })
  ensure
    r&.close
    w&.close
  end

  def test_io_wait_returns_the_ready_events
    r, w = IO.pipe
    events = with_scheduler do |s|
      out = nil
      Fiber.schedule { out = s.io_wait(w, IO::READABLE | IO::WRITABLE, 1) }
      -> { out }
    end.call
    assert_equal IO::WRITABLE, events
  ensure
    r&.close
    w&.close
  end

  # A socket whose only event is an error (a connected UDP socket whose
  # send was refused: ICMP "port unreachable", nothing to read) wakes a
  # fiber waiting to read, and the read raises the error, as plain Ruby's
  # poll(2) does on POLLERR. (The wait once slept on: an error alone no
  # longer woke weft's read waits, as Tokio's do not.)
  def test_an_error_alone_wakes_a_reader
    freed = UDPSocket.new
    freed.bind("127.0.0.1", 0)
    port = freed.addr[1]
    freed.close
    s = UDPSocket.new
    s.connect("127.0.0.1", port)
    outcome = nil
    took = elapsed do
      with_scheduler do
        Fiber.schedule do
          s.recv(10)
          outcome = :received
        rescue Errno::ECONNREFUSED
          outcome = :refused
        end
        Fiber.schedule do
          sleep 0.02
          s.send("x", 0)
          # If the reader never wakes, end it rather than hang the suite.
          200.times { outcome ? break : sleep(0.01) }
          s.close unless outcome
        end
      end
    end
    assert_equal :refused, outcome
    assert_operator took, :<, 2
  ensure
    s&.close unless s&.closed?
  end

  def test_io_wait_times_out
    r, w = IO.pipe
    result = :unset
    took = elapsed do
      with_scheduler { Fiber.schedule { result = r.wait_readable(0.05) } }
    end
    assert_nil result
    assert_operator took, :>=, 0.05
    assert_operator took, :<, 1
  ensure
    r&.close
    w&.close
  end

  def test_reads_and_writes_through_a_pipe
    r, w = IO.pipe
    data = "x" * 200_000 # more than a pipe buffer: the writer must wait
    got = nil
    with_scheduler do
      Fiber.schedule { got = r.read(data.bytesize) }
      Fiber.schedule { w.write(data); w.close }
    end
    assert_equal data, got
  ensure
    r&.close
    w&.close unless w&.closed?
  end

  def test_close_during_a_wait_raises_in_the_waiter
    r, w = IO.pipe
    error = closer = nil
    took = elapsed do
      with_scheduler do
        Fiber.schedule do
          r.read(1)
        rescue IOError => e
          error = e
        end
        Fiber.schedule do
          sleep 0.01
          r.close
        rescue IOError => e
          # Without the io_read hook Ruby 3.1 also raises in the closer
          # ("stream closed in another thread"); with it, only the waiter.
          closer = e
        end
      end
    end
    assert_kind_of IOError, error
    assert_nil closer
    assert_operator took, :<, 1
  ensure
    w&.close
  end

  def test_waiting_on_a_closed_io_raises
    r, w = IO.pipe
    r.close
    error = nil
    with_scheduler do |s|
      Fiber.schedule do
        s.io_wait(r, IO::READABLE, 1)
      rescue IOError => e
        error = e
      end
    end
    assert_kind_of IOError, error
  ensure
    w&.close
  end

  def test_io_read_and_io_write_hooks
    r, w = IO.pipe
    data = "z" * 100_000
    got = nil
    file = nil
    with_scheduler do |s|
      Fiber.schedule { got = r.read(data.bytesize) }
      Fiber.schedule { w.write(data) }
      Fiber.schedule { file = File.read(__FILE__) }
      assert s.respond_to?(:io_read)
    end
    assert_equal data, got
    assert_equal File.read(__FILE__), file
  ensure
    r&.close
    w&.close
  end

  def test_io_read_with_a_partial_buffer
    r, w = IO.pipe
    result = with_scheduler do |s|
      out = nil
      Fiber.schedule do
        buffer = IO::Buffer.new(8)
        w.write("abc")
        n = s.io_read(r, buffer, 1)
        out = [n, buffer.get_string(0, n)]
      end
      -> { out }
    end.call
    assert_equal [3, "abc"], result
  ensure
    r&.close
    w&.close
  end

  def test_fd_reuse_after_close
    got = []
    with_scheduler do
      2.times do
        r, w = IO.pipe
        Fiber.schedule { got << r.read(2); r.close }
        Fiber.schedule { w.write("ok"); w.close }
      end
    end
    assert_equal %w[ok ok], got
  end

  # A socket's registration is kept for later waits on the same socket. A
  # new socket on the same fd number, the old one closed, is registered
  # afresh and woken, not left on the closed socket's registration (which
  # the kernel dropped with the file).
  def test_a_new_socket_on_a_reused_fd_number_is_woken_after_the_old_one_waited
    a, peer_a = UNIXSocket.pair
    got = with_scheduler do
      out = []
      fresh = nil
      Fiber.schedule do
        2.times { out << a.read(1) } # each read waits: the writer sleeps first
        number = a.fileno
        a.close
        fresh = UNIXSocket.pair
        fresh.reverse! if fresh[1].fileno == number
        out << (fresh[0].fileno == number ? :reused : :not_reused)
        out << (fresh[0].wait_readable(2) ? fresh[0].read(1) : :never_woken)
      end
      Fiber.schedule do
        %w[1 2].each { |byte| sleep 0.01; peer_a.write(byte) }
        sleep 0.01 until fresh
        sleep 0.01
        fresh[1].write("3")
      end
      Fiber.scheduler.run
      fresh&.each(&:close)
      out
    end
    skip "the kernel did not reuse the fd number" if got[2] == :not_reused
    assert_equal ["1", "2", :reused, "3"], got
  ensure
    peer_a&.close
  end

  # IO#reopen swaps the file behind the same IO object and fd number: a
  # fiber waiting on the IO afterwards is woken by the new file, not left
  # on the registration of the old one (closed by the reopen).
  def test_a_reopened_socket_is_waited_on_afresh
    a, peer_a = UNIXSocket.pair
    b, peer_b = UNIXSocket.pair
    got = with_scheduler do
      out = []
      Fiber.schedule do
        out << a.read(1) # waits: registers a's socket
        a.reopen(b)
        b.close
        out << (a.wait_readable(2) ? a.read(1) : :never_woken)
      end
      Fiber.schedule do
        sleep 0.01
        peer_a.write("1")
        sleep 0.05
        peer_b.write("2")
      end
      Fiber.scheduler.run
      out
    end
    assert_equal ["1", "2"], got
  ensure
    [a, peer_a, b, peer_b].each { |io| io&.close unless io&.closed? }
  end

  # A copy made by IO#dup (another fd) waits on its own fd.
  def test_a_dup_waits_on_its_own_fd
    r, w = IO.pipe
    got = with_scheduler do
      out = []
      Fiber.schedule do
        out << r.read(1)
        copy = r.dup
        r.close
        out << copy.read(1)
        copy.close
      end
      Fiber.schedule do
        sleep 0.01
        w.write("a")
        sleep 0.02
        w.write("b")
      end
      Fiber.scheduler.run
      out
    end
    assert_equal %w[a b], got
  ensure
    w&.close
  end

  def test_sleep_order
    order = []
    with_scheduler do
      [0.03, 0.01, 0.02, 0].each { |t| Fiber.schedule { sleep(t); order << t } }
    end
    assert_equal [0, 0.01, 0.02, 0.03], order
  end

  def test_waiting_lists_sleeping_fibers
    size = with_scheduler do |s|
      5.times { Fiber.schedule { sleep 0.01 } }
      s.waiting.size
    end
    assert_equal 5, size
  end

  def test_cross_thread_unblock_is_prompt
    queue = Thread::Queue.new
    popped = nil
    took = elapsed do
      with_scheduler do
        Fiber.schedule { popped = queue.pop }
        Thread.new { sleep 0.05; queue << :hi }
      end
    end
    assert_equal :hi, popped
    assert_operator took, :<, 0.5, "the loop was not woken by unblock"
  end

  def test_mutex_between_fibers_and_threads
    mutex = Thread::Mutex.new
    count = 0
    threads = 2.times.map do
      Thread.new do
        with_scheduler { 10.times { Fiber.schedule { mutex.synchronize { sleep 0.001; count += 1 } } } }
      end
    end
    threads.each(&:join)
    assert_equal 20, count
  end

  def test_exception_in_a_fiber_does_not_stop_the_others
    done = []
    error = assert_raises(RuntimeError) do
      Thread.new do
        Thread.current.report_on_exception = false
        Fiber.set_scheduler(Weft::Scheduler.new)
        Fiber.schedule { sleep 0.01; raise "boom" }
        Fiber.schedule { sleep 0.02; done << 1 }
        Fiber.schedule { sleep 0.03; done << 2 }
        Fiber.set_scheduler(nil)
      end.join
    end
    assert_equal "boom", error.message
    assert_equal [1, 2], done
  end

  # The loop catches a fiber's exception per fiber: the other fibers the
  # same poll woke still run (a select that stopped at the first would leave
  # them waiting for an edge that was already consumed).
  def test_an_exception_does_not_strand_fibers_woken_by_the_same_poll
    pipes = Array.new(3) { IO.pipe }
    done = []
    error = assert_raises(RuntimeError) do
      Thread.new do
        Thread.current.report_on_exception = false
        Fiber.set_scheduler(Weft::Scheduler.new)
        pipes.each_with_index do |(r, _), i|
          Fiber.schedule do
            r.wait_readable
            raise "boom #{i}" if i.zero?

            done << i
          end
        end
        # All three become readable before the loop polls once.
        Fiber.schedule { pipes.each { |_, w| w.write("x") } }
        Fiber.set_scheduler(nil)
      end.join
    end
    assert_equal "boom 0", error.message
    assert_equal [1, 2], done.sort
  ensure
    pipes&.flatten&.each(&:close)
  end

  # As with Ruby's reference scheduler, a scheduled fiber may Fiber.yield to
  # whoever resumed it (io-event's transfer model would raise FiberError).
  def test_fiber_yield_in_a_scheduled_fiber_returns_to_its_resumer
    log = []
    with_scheduler do
      fiber = Fiber.schedule do
        log << :a
        Fiber.yield
        sleep 0.001
        log << :c
      end
      log << :b
      fiber.resume
    end
    assert_equal %i[a b c], log
  end

  def test_timeout_raises_in_the_waiting_fiber
    r, w = IO.pipe
    result = nil
    with_scheduler do
      Fiber.schedule do
        Timeout.timeout(0.05) { r.read(1) }
      rescue Timeout::Error => e
        result = e
      end
    end
    assert_kind_of Timeout::Error, result
  ensure
    r&.close
    w&.close
  end

  def test_timeout_cancelled_when_the_block_finishes
    result = with_scheduler do
      out = nil
      Fiber.schedule { out = Timeout.timeout(0.05) { :fast }; sleep 0.1 }
      -> { out }
    end.call
    assert_equal :fast, result
  end

  def test_process_wait
    status = nil
    with_scheduler do
      Fiber.schedule do
        pid = Process.spawn("true")
        _, status = Process.wait2(pid)
      end
    end
    assert status.success?
  end

  def test_process_wait_waits_on_the_reactor_not_a_thread
    statuses = []
    threads = nil
    before = Thread.list.size
    with_scheduler do
      3.times do |i|
        Fiber.schedule do
          pid = Process.spawn("sh", "-c", "sleep 0.05; exit #{i}")
          statuses << Process.wait2(pid).last.exitstatus
        end
      end
      Fiber.schedule do
        sleep 0.02
        threads = Thread.list.size
      end
    end
    assert_equal [0, 1, 2], statuses.sort
    # Only the scheduler's own thread was added: no thread per wait.
    assert_equal before + 1, threads
  end

  def test_pread_and_pwrite_hooks_in_both_signatures
    require "tempfile"
    Tempfile.create("weft") do |f|
      f.write("0123456789")
      f.flush
      io = File.open(f.path, "r+")
      results = []
      with_scheduler do |s|
        Fiber.schedule do
          buf = IO::Buffer.new(4)
          # Ruby 3.1's (io, buffer, length, from)
          results << s.io_pread(io, buf, 4, 3) << buf.get_string
          # 3.2+'s (io, buffer, from, length, offset)
          buf = IO::Buffer.new(6)
          results << s.io_pread(io, buf, 6, 3, 2) << buf.get_string(2, 4)
          results << s.io_pwrite(io, IO::Buffer.for(+"ab"), 2, 0)
          results << s.io_pwrite(io, IO::Buffer.for(+"..cd"), 8, 2, 2)
          results << s.io_pread(io, buf, 3, 2) << buf.get_string
          results << io.pos
        end
      end
      # A read moves at least `length` bytes, up to what the buffer holds.
      assert_equal [4, "3456", 4, "6789", 2, 2, 6, "234567", 0], results
      assert_equal "ab234567cd", File.read(f.path)
    ensure
      io&.close
    end
  end

  def test_io_select_of_one_io_on_the_reactor
    r, w = IO.pipe
    result = nil
    with_scheduler do |s|
      Fiber.schedule { result = s.io_select([r], [], [], 1) }
      Fiber.schedule { w.write("x") }
    end
    assert_equal [[r], [], []], result
    with_scheduler { |s| Fiber.schedule { result = s.io_select([r], [w], [], 0.01) } }
    assert_equal [[r], [w], []], result
  ensure
    r&.close
    w&.close
  end

  def test_close_is_idempotent_and_frees_its_fds
    fds = -> { Dir.children("/proc/self/fd").size }
    before = fds.call
    s = Weft::Scheduler.new
    assert_operator fds.call, :>, before
    s.close
    s.close
    assert s.closed?
    assert_equal before, fds.call
  end

  def test_waiting_fibers_survive_gc_and_compaction
    r, w = IO.pipe
    got = []
    with_scheduler do
      20.times { |i| Fiber.schedule { r.wait_readable; got << i } }
      Fiber.schedule do
        sleep 0.01
        GC.start
        GC.compact if GC.respond_to?(:compact)
        w.write("x")
      end
    end
    assert_equal (0...20).to_a, got.sort
  ensure
    r&.close
    w&.close
  end

  def test_thread_kill_reaches_a_loop_parked_in_the_poller
    started = Thread::Queue.new
    thread = Thread.new do
      Fiber.set_scheduler(Weft::Scheduler.new)
      Fiber.schedule { started << true; sleep 10 }
      Fiber.set_scheduler(nil)
    end
    started.pop
    sleep 0.05
    took = elapsed { thread.kill.join }
    assert_operator took, :<, 1
  end

  def test_thread_raise_reaches_a_loop_parked_in_the_poller
    started = Thread::Queue.new
    thread = Thread.new do
      Thread.current.report_on_exception = false
      Fiber.set_scheduler(Weft::Scheduler.new)
      Fiber.schedule { started << true; sleep 10 }
      Fiber.set_scheduler(nil)
    end
    started.pop
    sleep 0.05
    thread.raise(ArgumentError, "stop")
    took = elapsed { assert_raises(ArgumentError) { thread.join } }
    assert_operator took, :<, 1
  end

  def test_sigint_interrupts_a_parked_loop
    code = <<~RUBY
      trap("INT", "DEFAULT") # a shell's background job inherits SIGINT ignored
      Fiber.set_scheduler(Weft::Scheduler.new)
      Fiber.schedule { $stdout.puts("ready"); $stdout.flush; sleep 10 }
      begin
        Fiber.set_scheduler(nil)
      rescue Interrupt
        puts "interrupted"
      end
    RUBY
    IO.popen([RbConfig.ruby, *$LOAD_PATH.flat_map { |d| ["-I", d] }, "-rweft", "-e", code], "r+") do |io|
      assert_equal "ready\n", io.gets
      sleep 0.05
      took = elapsed do
        Process.kill(:INT, io.pid)
        assert_equal "interrupted\n", Timeout.timeout(5) { io.gets }
      end
      assert_operator took, :<, 1
    ensure
      Process.kill(:KILL, io.pid) rescue nil
    end
  end

  # A loop on the main thread blocks in the poller with an unblock function
  # that is safe in a signal handler; otherwise Ruby starts (and kills) a
  # helper thread around every blocking wait, which cost a quarter of the
  # CPU of a connection-per-request server.
  def test_a_blocking_wait_on_the_main_thread_starts_no_thread
    code = <<~RUBY
      Fiber.set_scheduler(Weft::Scheduler.new)
      Fiber.schedule do
        3.times { sleep 0.01 }
        $stdout.puts Dir["/proc/self/task/*"].size
      end
    RUBY
    out = IO.popen([RbConfig.ruby, *$LOAD_PATH.flat_map { |d| ["-I", d] }, "-rweft", "-e", code], &:read)
    assert_equal "1\n", out
  end

  def test_fork_child_gets_a_clear_error
    r, w = IO.pipe
    with_scheduler do |s|
      Fiber.schedule do
        pid = fork do
          r.close
          w.write(s.closed?.inspect)
          begin
            s.run
            w.write(" ran")
          rescue RuntimeError => e
            w.write(" #{e.message[/fork/]}")
          end
          w.close
          exit!(0)
        end
        w.close
        Process.wait(pid)
      end
    end
    assert_equal "true fork", r.read
  ensure
    r&.close
    w&.close unless w&.closed?
  end

  def test_ten_thousand_fibers
    n = 10_000
    r, w = IO.pipe
    woken = 0
    slept = 0
    took = elapsed do
      with_scheduler do
        n.times { Fiber.schedule { r.wait_readable; woken += 1 } }
        n.times { Fiber.schedule { sleep 0.001; slept += 1 } }
        Fiber.schedule { w.write("go") }
      end
    end
    assert_equal n, woken
    assert_equal n, slept
    assert_operator took, :<, 30
  ensure
    r&.close
    w&.close
  end
end
