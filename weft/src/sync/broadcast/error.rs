use std::fmt;

/// Error returned by [`Sender::send`](super::Sender::send) when there
/// are no receivers. Holds the value that was not sent.
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<T>(pub T);

send_error_impls!(SendError);

/// Error returned by [`Receiver::recv`](super::Receiver::recv).
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum RecvError {
    /// Every sender has been dropped and this receiver has received
    /// every value still in the channel.
    Closed,
    /// The receiver fell behind and this many values were overwritten
    /// before it could receive them. The next receive returns the
    /// oldest value still in the channel.
    Lagged(u64),
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecvError::Closed => f.write_str("channel closed"),
            RecvError::Lagged(n) => write!(f, "channel lagged by {n}"),
        }
    }
}

impl std::error::Error for RecvError {}

/// Error returned by [`Receiver::try_recv`](super::Receiver::try_recv).
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum TryRecvError {
    /// No new value yet, and a sender is still alive.
    Empty,
    /// Every sender has been dropped and this receiver has received
    /// every value still in the channel.
    Closed,
    /// The receiver fell behind and this many values were overwritten
    /// before it could receive them. The next receive returns the
    /// oldest value still in the channel.
    Lagged(u64),
}

impl fmt::Display for TryRecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryRecvError::Empty => f.write_str("channel empty"),
            TryRecvError::Closed => f.write_str("channel closed"),
            TryRecvError::Lagged(n) => write!(f, "channel lagged by {n}"),
        }
    }
}

impl std::error::Error for TryRecvError {}
