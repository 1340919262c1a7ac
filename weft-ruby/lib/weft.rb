# frozen_string_literal: true

# weft for Ruby: Weft::Scheduler, a Fiber::Scheduler on weft's poller.
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
  # A Fiber::Scheduler. The hot hooks (io_wait, block, kernel_sleep,
  # unblock) and the event loop (run) are in Rust; these are the rest.
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

    # Known gap: a thread per wait (no pidfd yet).
    def process_wait(pid, flags)
      Thread.new { Process::Status.wait(pid, flags) }.value
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
end
