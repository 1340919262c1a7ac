//! Time errors (Tokio's `time::error` path).

use std::fmt;

/// A [`timeout`](super::timeout) elapsed before its future completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed(());

impl Elapsed {
    pub(crate) fn new() -> Elapsed {
        Elapsed(())
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    fn from(_: Elapsed) -> std::io::Error {
        std::io::ErrorKind::TimedOut.into()
    }
}

/// A timer could not be used: the runtime shut down, the timer wheel is at
/// capacity, or the deadline was invalid (Tokio's `time::error::Error`).
/// weft's timers report only shutdown, by panicking or through I/O
/// errors, so this type exists for code that names or matches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error(Kind);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Shutdown,
    AtCapacity,
    Invalid,
}

impl Error {
    /// The timer's runtime shut down.
    pub fn shutdown() -> Error {
        Error(Kind::Shutdown)
    }

    /// Whether this is [`shutdown`](Error::shutdown).
    pub fn is_shutdown(&self) -> bool {
        self.0 == Kind::Shutdown
    }

    /// The timer wheel is full.
    pub fn at_capacity() -> Error {
        Error(Kind::AtCapacity)
    }

    /// Whether this is [`at_capacity`](Error::at_capacity).
    pub fn is_at_capacity(&self) -> bool {
        self.0 == Kind::AtCapacity
    }

    /// The deadline was invalid (too far away).
    pub fn invalid() -> Error {
        Error(Kind::Invalid)
    }

    /// Whether this is [`invalid`](Error::invalid).
    pub fn is_invalid(&self) -> bool {
        self.0 == Kind::Invalid
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Kind::Shutdown => {
                "the timer is shutdown, must be called from the context of Tokio runtime"
            }
            Kind::AtCapacity => "timer is at capacity and cannot create a new entry",
            Kind::Invalid => "timer duration exceeds maximum duration",
        })
    }
}

impl std::error::Error for Error {}
