# frozen_string_literal: true
# Replaces Ruby's test/fiber/scheduler.rb (the IO.select toy scheduler) so
# that Ruby's own test/fiber runs against Weft::Scheduler. The subclasses
# the tests use are taken from the original file unchanged (test/run.sh
# appends them below this line).
require "fiber"
require "socket"
begin
  require "io/nonblock"
rescue LoadError
end
require "weft"

class Scheduler < Weft::Scheduler
  def blocking(&block)
    Fiber.new(blocking: true, &block).resume
  end
end
