# frozen_string_literal: true

# weft for Ruby: Weft::Scheduler, a Fiber::Scheduler, and Weft::Selector,
# io-event's selector interface, both on weft's reactor.
#
# The native part is weft/weft.so, found on $LOAD_PATH: weft-ruby/build.sh
# builds it with cargo and copies it to lib/weft/weft.so; the test harness
# puts a directory holding weft/weft.so in front of $LOAD_PATH instead.
begin
  require "weft/weft"
rescue LoadError => e
  raise LoadError, "weft's native extension is not built (#{e.message}); run weft-ruby/build.sh"
end

require "socket"

module Weft
  # A Fiber::Scheduler built on Weft::Selector. The hot hooks (io_wait,
  # block, kernel_sleep, unblock) and the event loop (run) are in Rust;
  # these are the rest.
  class Scheduler
    def block(_blocker, timeout = nil)
      _block(timeout)
    end

    def kernel_sleep(duration = nil)
      _sleep(duration)
    end

    # Fiber.schedule: start the fiber now; it runs until it first waits.
    def fiber(*args, **options, &block)
      fiber = Fiber.new(blocking: false, **options, &block)
      fiber.resume(*args)
      fiber
    end

    def timeout_after(duration, klass, message)
      id = _raise_after(Fiber.current, duration, klass, message)
      begin
        yield(duration)
      ensure
        _cancel_raise(id)
      end
    end

    def process_wait(pid, flags)
      Weft.process_wait(pid, flags) { |pidfd| io_wait(pidfd, IO::READABLE, nil) }
    end

    # Ruby 3.2+: IO.select under a scheduler. One IO is waited on the
    # reactor; several go to a thread (IO.select there, outside the
    # scheduler), as io-event does.
    def io_select(readable, writable, priority, timeout)
      ios = [readable, writable, priority].map { |a| Array(a) }
      all = ios.flatten.uniq
      return Thread.new { IO.select(*ios, timeout) }.value if all.size != 1

      io = all.first
      events = 0
      events |= IO::READABLE if ios[0].include?(io)
      events |= IO::WRITABLE if ios[1].include?(io)
      events |= IO::PRIORITY if ios[2].include?(io)
      ready = io_wait(io, events, timeout)
      return nil unless ready

      [ready.anybits?(IO::READABLE) ? [io] : [],
       ready.anybits?(IO::WRITABLE) ? [io] : [],
       ready.anybits?(IO::PRIORITY) ? [io] : []]
    end

    # Ruby 3.4+: run a blocking operation (a C extension's work without the
    # GVL) on a thread while this fiber waits for it.
    def blocking_operation_wait(work)
      Thread.new(&work).join
    end

    # Known gap: a thread per lookup.
    def address_resolve(hostname)
      Thread.new { Addrinfo.getaddrinfo(hostname, nil).map(&:ip_address).uniq }.value
    end

    # Called by Fiber.set_scheduler(nil) and at thread exit: run every
    # fiber to completion, then free the poller.
    def scheduler_close
      close(true)
    end

    # Run the remaining fibers and free the poller. Idempotent. In a
    # forked child (which inherited the parent's waiting fibers and poller)
    # it only frees the child's copy of the poller.
    def close(internal = false)
      return Fiber.set_scheduler(nil) if !internal && Fiber.scheduler.equal?(self)
      return _close_poller if _forked?
      return if closed?

      begin
        run
      ensure
        _close_poller
      end
    end
  end

  # io-event's selector interface (for `async`), on the same reactor.
  # Rust defines the rest; see weft-ruby/src/selector.rs.
  class Selector
    def process_wait(fiber, pid, flags)
      Weft.process_wait(pid, flags) { |pidfd| io_wait(fiber, pidfd, IO::READABLE) }
    end
  end

  # Wait for child `pid` (Process.wait's `pid` and `flags`) without a
  # thread: a pidfd (Linux >= 5.3) is waited on through the block, and the
  # child reaped with WNOHANG. Falls back to a thread where no pidfd can be
  # had (pid <= 0, an old kernel, a child already reaped).
  def self.process_wait(pid, flags)
    fd = _pidfd_open(pid) if pid > 0
    return Thread.new { Process::Status.wait(pid, flags) }.value unless fd

    pidfd = IO.for_fd(fd, autoclose: true)
    begin
      loop do
        status = _waitpid_nohang(pid, flags)
        return status if status
        return nil if flags.anybits?(Process::WNOHANG)

        yield pidfd
      end
    ensure
      pidfd.close
    end
  end

  # Make Weft::Selector available to io-event as IO::Event::Selector::Weft
  # (so IO_EVENT_SELECTOR=Weft picks it). Called when this file loads after
  # io-event; `require "weft/io_event"` loads io-event first.
  def self.register_io_event_selector
    return false unless defined?(::IO::Event::Selector)

    ::IO::Event::Selector.const_set(:Weft, Selector) unless ::IO::Event::Selector.const_defined?(:Weft, false)
    true
  end
end

Weft.register_io_event_selector
