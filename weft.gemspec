# frozen_string_literal: true
# The `weft` gem: Weft::Scheduler (a Fiber::Scheduler) and Weft::Selector
# (io-event's selector interface) on weft's reactor. Built from this
# repository on a machine with Rust:
#
#   gem build weft.gemspec && gem install ./weft-0.1.0.gem
#
# Installing compiles the Rust extension with cargo (crates come from
# crates.io; no other gem is needed). The gem carries the whole Cargo
# workspace because weft-ruby builds against the weft crate beside it.

Gem::Specification.new do |spec|
  spec.name = "weft"
  spec.version = "0.1.0"
  spec.summary = "A Fiber::Scheduler and an io-event selector on weft's Rust reactor"
  spec.description = <<~TEXT
    Weft::Scheduler is a Fiber::Scheduler for Ruby >= 3.1 and Weft::Selector
    has io-event's selector interface (IO_EVENT_SELECTOR=Weft for async);
    both run on the reactor of weft, an async runtime written in Rust.
  TEXT
  spec.authors = ["weft's developers"]
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.1"

  here = __dir__
  workspace = %w[Cargo.toml Cargo.lock] +
              Dir.glob("{weft,weft-macros,weft-ruby,weft-bench,examples,port-by-rename}/**/*", base: here)
  spec.files = workspace.select { |f| File.file?(File.join(here, f)) }
                        .reject { |f| f.start_with?("target/") || f.include?("/target/") || f.end_with?(".so") }
  spec.require_paths = ["weft-ruby/lib"]
  spec.extensions = ["weft-ruby/ext/weft/extconf.rb"]
end
