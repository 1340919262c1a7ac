# frozen_string_literal: true
# What weft-ruby's minitest files share.

module WeftTestHelpers
  # Run the block on a fresh thread with a Weft::Scheduler; the scheduler's
  # loop runs when the block returns (at Fiber.set_scheduler(nil)).
  def with_scheduler
    result = nil
    Thread.new do
      scheduler = Weft::Scheduler.new
      Fiber.set_scheduler(scheduler)
      begin
        result = yield scheduler
      ensure
        Fiber.set_scheduler(nil)
      end
    end.join
    result
  end

  # Counts the io_read and io_wait calls a scheduler gets (prepend it).
  module CountsHookCalls
    def calls
      @calls ||= Hash.new(0)
    end

    def io_read(...)
      calls[:io_read] += 1
      super
    end

    def io_wait(...)
      calls[:io_wait] += 1
      super
    end
  end

  # `reader.gets` in one fiber while another writes `line` 10 ms later,
  # on a new `scheduler_class` (a CountsHookCalls one, made on the thread
  # that runs it): the line read and the scheduler's hook calls.
  def gets_a_line_written_later(scheduler_class, reader, writer, line)
    got = scheduler = nil
    Thread.new do
      scheduler = scheduler_class.new
      Fiber.set_scheduler(scheduler)
      Fiber.schedule { got = reader.gets }
      Fiber.schedule do
        sleep 0.01
        writer.write(line)
      end
      Fiber.set_scheduler(nil)
    end.join
    [got, scheduler.calls]
  end
end
