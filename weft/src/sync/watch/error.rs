use std::fmt;

/// Error returned by [`Sender::send`](super::Sender::send) when there
/// are no receivers. Holds the value that was not sent.
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<T>(pub T);

send_error_impls!(SendError);

/// Error returned by [`Receiver::changed`](super::Receiver::changed) and
/// related methods when the sender has been dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecvError(pub(super) ());

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("channel closed")
    }
}

impl std::error::Error for RecvError {}
