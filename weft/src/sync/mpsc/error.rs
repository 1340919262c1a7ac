//! Errors returned by the channel handles.

use std::fmt;

/// Error returned by [`Sender::send`](super::Sender::send) and
/// [`UnboundedSender::send`](super::UnboundedSender::send): the receiver
/// was closed or dropped. Holds the value that could not be sent.
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<T>(pub T);

send_error_impls!(SendError);

/// Error returned by [`Sender::try_send`](super::Sender::try_send) (and,
/// with `T = ()`, by [`Sender::try_reserve`](super::Sender::try_reserve)).
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TrySendError<T> {
    /// The channel is full: no slot is free right now. Holds the value.
    Full(T),
    /// The receiver was closed or dropped. Holds the value.
    Closed(T),
}

impl<T> TrySendError<T> {
    /// Returns the value that could not be sent.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel(1);
    /// tx.try_send(1).unwrap();
    /// assert_eq!(tx.try_send(2).unwrap_err().into_inner(), 2);
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            TrySendError::Full(v) | TrySendError::Closed(v) => v,
        }
    }
}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(..) => f.write_str("Full(..)"),
            TrySendError::Closed(..) => f.write_str("Closed(..)"),
        }
    }
}

impl<T> fmt::Display for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TrySendError::Full(..) => "no available capacity",
            TrySendError::Closed(..) => "channel closed",
        })
    }
}

impl<T> std::error::Error for TrySendError<T> {}

impl<T> From<SendError<T>> for TrySendError<T> {
    fn from(err: SendError<T>) -> TrySendError<T> {
        TrySendError::Closed(err.0)
    }
}

/// Error returned by [`Receiver::try_recv`](super::Receiver::try_recv) and
/// [`UnboundedReceiver::try_recv`](super::UnboundedReceiver::try_recv).
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub enum TryRecvError {
    /// No message is buffered, but the channel is still open.
    Empty,
    /// No message is buffered and none will arrive: every sender was
    /// dropped, or the receiver was closed (and no permit is outstanding).
    Disconnected,
}

impl fmt::Display for TryRecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TryRecvError::Empty => "receiving on an empty channel",
            TryRecvError::Disconnected => "receiving on a closed channel",
        })
    }
}

impl std::error::Error for TryRecvError {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn display_and_debug_match_tokio() {
        assert_eq!(SendError(1).to_string(), "channel closed");
        assert_eq!(format!("{:?}", SendError(1)), "SendError { .. }");
        assert_eq!(TrySendError::Full(1).to_string(), "no available capacity");
        assert_eq!(TrySendError::Closed(1).to_string(), "channel closed");
        assert_eq!(format!("{:?}", TrySendError::Full(1)), "Full(..)");
        assert_eq!(format!("{:?}", TrySendError::Closed(1)), "Closed(..)");
        assert_eq!(TrySendError::Full(7).into_inner(), 7);
        assert_eq!(TrySendError::from(SendError(3)), TrySendError::Closed(3));
        assert_eq!(
            TryRecvError::Empty.to_string(),
            "receiving on an empty channel"
        );
        assert_eq!(
            TryRecvError::Disconnected.to_string(),
            "receiving on a closed channel"
        );
        fn is_error<E: std::error::Error + Send + Sync + 'static>() {}
        is_error::<SendError<u8>>();
        is_error::<TrySendError<u8>>();
        is_error::<TryRecvError>();
    }
}

/// Error returned by [`Sender::send_timeout`](super::Sender::send_timeout).
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum SendTimeoutError<T> {
    /// No capacity became free before the timeout. Holds the value.
    Timeout(T),
    /// The receiver was closed or dropped. Holds the value.
    Closed(T),
}

impl<T> SendTimeoutError<T> {
    /// Returns the value that could not be sent.
    pub fn into_inner(self) -> T {
        match self {
            SendTimeoutError::Timeout(v) | SendTimeoutError::Closed(v) => v,
        }
    }
}

impl<T> fmt::Debug for SendTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendTimeoutError::Timeout(..) => f.write_str("Timeout(..)"),
            SendTimeoutError::Closed(..) => f.write_str("Closed(..)"),
        }
    }
}

impl<T> fmt::Display for SendTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SendTimeoutError::Timeout(..) => "timed out waiting on send operation",
            SendTimeoutError::Closed(..) => "channel closed",
        })
    }
}

impl<T> std::error::Error for SendTimeoutError<T> {}
