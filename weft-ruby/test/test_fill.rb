# frozen_string_literal: true
# A fill of an IO's read buffer waits inside the one io_read call (see
# weft-ruby/src/io_hooks.rs): the hook calls it makes, what still says
# "would block", and that the wait never reads into a buffer the IO no
# longer has. Run: weft-ruby/test/run.sh minitest.
require "minitest/autorun"
require "timeout"
require "socket"
require "rbconfig"
require "weft"
require_relative "helper"

class TestWeftFill < Minitest::Test
  include WeftTestHelpers

  # Ruby fills an IO's read buffer (gets) with a zero-length io_read and,
  # on EAGAIN, calls io_wait and io_read again; the hook waits itself
  # instead: one io_read call per fill, no io_wait.
  def test_a_line_read_waits_inside_one_io_read_call
    counting = Class.new(Weft::Scheduler) { prepend CountsHookCalls }
    a, b = UNIXSocket.pair
    line, calls = gets_a_line_written_later(counting, a, b, "hello\n")
    assert_equal "hello\n", line
    assert_equal({ io_read: 1 }, calls)
  ensure
    a&.close
    b&.close
  end

  # A timeout raised into a fill waiting inside io_read leaves the IO and
  # its registration usable: the next gets waits and reads.
  def test_a_timeout_during_a_fill_leaves_the_io_usable
    a, b = UNIXSocket.pair
    timed_out = line = nil
    with_scheduler do
      Fiber.schedule do
        begin
          Timeout.timeout(0.01) { a.gets }
        rescue Timeout::Error
          timed_out = true
        end
        line = a.gets
      end
      Fiber.schedule do
        sleep 0.05
        b.write("later\n")
      end
    end
    assert timed_out
    assert_equal "later\n", line
  ensure
    a&.close
    b&.close
  end

  # A fill that waits inside io_read must not read into a read buffer the
  # IO no longer has. Fiber A fills a FIFO File's read buffer (made
  # `size` bytes by an ungetc); fiber B, woken before A in the same turn,
  # closes the File, reopens it by path on a regular file and ungetc's, so
  # the IO gets a new 8,192-byte buffer. With `prime`, glibc is first
  # made to hand that buffer the address A's had (glibc's allocator: under
  # another one the twin may pass without testing the same-address case).
  # Run in a child: a read into the wrong memory corrupts the heap.
  FILL_ACROSS_REOPEN = <<~'RUBY'
    require "weft"; require "tmpdir"; require "fiddle"
    size, prime = Integer(ARGV[0]), ARGV[1] == "1"
    Dir.mktmpdir do |dir|
      fifo = File.join(dir, "fifo")
      File.mkfifo(fifo)
      file = File.join(dir, "file")
      File.write(file, "a" * 100_000 + "\n")
      f = File.open(fifo, File::RDONLY | File::NONBLOCK)
      w = File.open(fifo, "w")
      go_r, go_w = IO.pipe
      line = nil
      Thread.new do
        f.ungetc("y" * size)
        f.read(size)
        Fiber.set_scheduler(Weft::Scheduler.new)
        Fiber.schedule { line = f.gets }
        Fiber.schedule do
          go_r.wait_readable
          if prime
            blocks = (24..1032).step(16).flat_map { |n| Array.new(10) { Fiddle.malloc(n) } }
            blocks.each { |b| Fiddle.free(b) }
          end
          f.close
          f.reopen(file, "r")
          f.ungetc("z")
        end
        Fiber.schedule do
          sleep 0.01
          go_w.write("x")
          w.write("hello\n")
          w.flush
        end
        Fiber.set_scheduler(nil)
      end.join
      GC.start
      print line.bytesize, " ", line.count("a")
    end
  RUBY

  # The child's output (stdout and stderr) and status; killed after 30 s.
  def fill_across_reopen(size, prime)
    args = $LOAD_PATH.flat_map { |dir| ["-I", dir] }
    cmd = [RbConfig.ruby, "-W0", *args, "-e", FILL_ACROSS_REOPEN, size.to_s, prime ? "1" : "0"]
    IO.popen(cmd, err: %i[child out]) do |child|
      unless child.wait_readable(30)
        Process.kill(:KILL, child.pid)
        flunk "the child hung"
      end
      out = child.read
      child.close
      [out, $?]
    end
  end

  def test_a_fill_is_not_read_into_a_buffer_freed_by_a_close_and_reopen
    out, status = fill_across_reopen(20_000, false)
    assert status.success?, "the child died: #{status.inspect}: #{out}"
    # A's gets reads the reopened file's line (the "z" ungetc'd is lost
    # to Ruby 3.1's own fill, with or without the hook).
    assert_equal "100001 100000", out
  end

  def test_a_fill_is_not_read_into_a_smaller_buffer_at_the_same_address
    out, status = fill_across_reopen(20_000, true)
    assert status.success?, "the child died: #{status.inspect}: #{out}"
    assert_equal "100001 100000", out
  end

  # A read into the caller's own string (read_nonblock) is not a buffer
  # fill: it still says "would block" instead of waiting.
  # (A pipe: a socket's read_nonblock is BasicSocket's, which never calls
  # the hook.)
  def test_read_nonblock_still_says_it_would_block
    a, b = IO.pipe
    first = nil
    order = []
    with_scheduler do
      Fiber.schedule do
        first = a.read_nonblock(5, exception: false)
        order << :read_returned
      end
      Fiber.schedule do
        sleep 0.01
        b.write("late")
        order << :wrote
      end
    end
    assert_equal :wait_readable, first
    assert_equal %i[read_returned wrote], order
    assert_equal "late", a.read_nonblock(5)
  ensure
    a&.close
    b&.close
  end
end
