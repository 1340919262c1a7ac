# frozen_string_literal: true

# Load io-event, then weft, and register Weft::Selector as
# IO::Event::Selector::Weft: with IO_EVENT_SELECTOR=Weft in the
# environment, io-event (and so `async`) creates a Weft::Selector.
require "io/event"
require "weft"

Weft.register_io_event_selector
