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
end
