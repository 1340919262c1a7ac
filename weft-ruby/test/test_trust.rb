# frozen_string_literal: true
# A keep-alive connection's waits trust the fd's registration without an
# fstat, and an audit catches the fd that came to name another socket
# under the same IO object (weft-ruby/src/poller/trust.rs). Run:
# weft-ruby/test/run.sh minitest.
require "minitest/autorun"
require "socket"
require "io/wait"
require "timeout"
require "weft"
require_relative "helper"

class TestWeftTrust < Minitest::Test
  include WeftTestHelpers

  # Two fibers of the current scheduler play ping-pong over the socket
  # pair `rounds` times: each end waits for the other's byte and answers.
  def ping_pong(a, b, rounds)
    Fiber.schedule do
      rounds.times do
        a.wait_readable
        a.read_nonblock(1)
        a.write("x")
      end
    end
    Fiber.schedule do
      rounds.times do
        b.write("x")
        b.wait_readable
        b.read_nonblock(1)
      end
    end
  end

  # Three waits on `io` for a byte from `peer`: the first registers its
  # fd, the second checks the registration (recording io's object id),
  # the third trusts it; so do the waits after.
  def earn_trust(io, peer)
    3.times do
      peer.write("x")
      io.wait_readable
      io.read_nonblock(1)
    end
  end

  # The identity checks (fstat) of the block's waits, run to the end.
  def identity_checks
    before = Weft._identity_checks
    yield
    Fiber.scheduler.run
    Weft._identity_checks - before
  end

  # Each IO's first wait registers its fd (the poller took it as new: no
  # question) and its second checks the registration and records the IO's
  # object id; later waits trust it. An audit (every 50 ms at most) checks
  # again what a waiter trusts: 200 waits make 2 checks and a few, not 200.
  def test_the_waits_of_one_io_check_its_registration_only_at_first
    a, b = UNIXSocket.pair
    checks = with_scheduler { identity_checks { ping_pong(a, b, 100) } }
    assert_operator checks, :>=, 2
    assert_operator checks, :<=, 8
  ensure
    a&.close
    b&.close
  end

  # Connections made one after another on one scheduler reuse the fd
  # numbers (and the registrations of the closed sockets): every new IO
  # is checked on its own account, and each conversation completes.
  def test_new_ios_on_reused_fd_numbers_are_checked
    numbers = []
    checks = with_scheduler do
      3.times.map do
        a, b = UNIXSocket.pair
        numbers << [a.fileno, b.fileno]
        identity_checks { ping_pong(a, b, 3) }
      ensure
        a&.close
        b&.close
      end
    end
    assert_equal 1, numbers.uniq.size, "the same fd numbers: #{numbers}"
    assert checks.all? { |c| c >= 2 }, "a check per new IO: #{checks}"
  end

  # IO#reopen swaps the socket behind the same IO object and fd number:
  # a wait that trusts the old registration is found by an audit (within
  # about 100 ms) and ends with the new socket's bytes, never hangs.
  def test_a_wait_on_an_io_reopened_onto_another_socket_ends
    a, b = UNIXSocket.pair
    c, d = UNIXSocket.pair
    got = waited = nil
    with_scheduler do
      Fiber.schedule do
        earn_trust(a, b)
        a.reopen(c)
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        Timeout.timeout(5) { a.wait_readable }
        waited = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
        got = a.read_nonblock(1)
      end
      Fiber.schedule do
        sleep 0.01
        d.write("y")
      end
    end
    assert_equal "y", got
    assert_operator waited, :<, 2, "the audit found the swapped fd late"
  ensure
    [a, b, c, d].each { |io| io&.close }
  end

  # Weft::Selector's select(nil) (async's loop with nothing scheduled)
  # blocks with no timer of its own: the poller still wakes for the audit,
  # or a trusting wait after a reopen would never end.
  def test_a_select_without_a_timeout_still_audits_a_trusting_wait
    a, b = UNIXSocket.pair
    c, d = UNIXSocket.pair
    got = nil
    looping = Thread.new do
      selector = Weft::Selector.new(Fiber.current)
      waiter = Fiber.new do
        3.times do
          b.write("x")
          selector.io_wait(Fiber.current, a, IO::READABLE)
          a.read_nonblock(1)
        end
        a.reopen(c)
        Thread.new do
          sleep 0.02
          d.write("y")
        end
        selector.io_wait(Fiber.current, a, IO::READABLE)
        got = a.read_nonblock(1)
      end
      waiter.transfer
      selector.select(nil) while waiter.alive?
      selector.close
    end
    assert looping.join(5), "select(nil) was never woken"
    assert_equal "y", got
  ensure
    looping&.kill
    [a, b, c, d].each { |io| io&.close }
  end

  # If the old socket is still open elsewhere (here a dup), its
  # registration stays in epoll after IO#reopen and its bytes wake the
  # trusting waiter, who finds nothing to read. Those wakes are no
  # progress, so the audit still comes (within about 100 ms) and ends
  # them; the new socket's byte is then read.
  def test_wakes_from_a_reopened_ios_old_socket_stop_at_the_audit
    a, peer_a = UNIXSocket.pair
    old = a.dup
    c, peer_c = UNIXSocket.pair
    wrong = 0
    got = nil
    with_scheduler do
      Fiber.schedule do
        earn_trust(a, peer_a)
        a.reopen(c)
        loop do
          break unless a.wait_readable(5)

          got = a.read_nonblock(1, exception: false)
          break unless got == :wait_readable

          wrong += 1
        end
      end
      Fiber.schedule do
        30.times do
          sleep 0.01
          peer_a.write("o") # to the old socket only
        end
        peer_c.write("y")
      end
    end
    assert_equal "y", got
    assert_operator wrong, :<=, 20, "the old socket's 30 bytes kept waking the waiter"
  ensure
    [a, peer_a, old, c, peer_c].each { |io| io&.close }
  end

  # A reader waits on an IO reopened onto another socket while a writer
  # fiber writes through the same IO: the writer's bytes (through the
  # io_write hook) say nothing about the reader's stale registration, so
  # the audit still comes and the reader gets the new socket's byte.
  def test_a_writers_bytes_do_not_spare_a_stranded_reader_the_audit
    a, b = UNIXSocket.pair
    c, d = UNIXSocket.pair
    got = nil
    with_scheduler do
      reopened = false
      Fiber.schedule do
        earn_trust(a, b)
        a.reopen(c)
        reopened = true
        got = a.wait_readable(5) ? a.read_nonblock(1) : :timed_out
      end
      Fiber.schedule do
        sleep 0.001 until reopened
        30.times do
          sleep 0.01
          a.write("w")
        end
      end
      Fiber.schedule do
        sleep 0.001 until reopened
        sleep 0.05
        d.write("y")
      end
    end
    assert_equal "y", got
  ensure
    [a, b, c, d].each { |io| io&.close }
  end

  # A conversation through the hooks (readpartial's io_read, write's
  # io_write) for about a second: each read moves bytes after its wait,
  # which keeps the audit (every 50 ms) from checking the registrations.
  def test_bytes_moved_through_the_hooks_keep_the_audit_away
    a, b = UNIXSocket.pair
    checks = with_scheduler do
      identity_checks do
        Fiber.schedule do
          100.times { a.readpartial(1) }
        end
        Fiber.schedule do
          100.times do
            b.write("x")
            sleep 0.01
          end
        end
      end
    end
    # One registration made (no question) and checked once (b's writes
    # never wait): 1, and a little room for a stalled machine. Without the hooks' progress
    # the audit checks the reader's wait about ten times a second.
    assert_operator checks, :<=, 5, "audited although bytes moved"
  ensure
    a&.close
    b&.close
  end
end
