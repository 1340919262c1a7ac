//! `JoinError`: why a task produced no value.
//!
//! Invariant: `JoinError` is `Sync` (as Tokio's is: `io::Error::new(kind,
//! join_error)` needs it) although a panic payload need not be. That is
//! sound because a shared `JoinError` reads its payload only through
//! [`Payload::message`], which asks the payload's type (a vtable call that
//! touches no data) and reads a `&'static str` or a `String`, both `Sync`;
//! the payload itself leaves only by value (`into_panic`).

use super::id::Id;
use std::any::Any;
use std::fmt;

/// A task failed to complete: it was cancelled (aborted or its runtime shut
/// down) or it panicked.
pub struct JoinError {
    repr: Repr,
    id: Id,
}

enum Repr {
    Cancelled,
    Panic(Payload),
}

/// A panic payload, shareable between threads (module invariant).
struct Payload(Box<dyn Any + Send + 'static>);

// SAFETY: through `&Payload` only `message` reads the payload, and it reads
// nothing but its type and a `&str`/`String` (module invariant).
unsafe impl Sync for Payload {}

impl Payload {
    /// The panic message, if the payload is a string (as `panic!` makes).
    fn message(&self) -> Option<&str> {
        let p = &*self.0;
        p.downcast_ref::<&'static str>()
            .copied()
            .or_else(|| p.downcast_ref::<String>().map(String::as_str))
    }
}

impl JoinError {
    pub(crate) fn cancelled(id: Id) -> JoinError {
        JoinError {
            repr: Repr::Cancelled,
            id,
        }
    }

    pub(crate) fn panic(id: Id, payload: Box<dyn Any + Send + 'static>) -> JoinError {
        JoinError {
            repr: Repr::Panic(Payload(payload)),
            id,
        }
    }

    /// The task was cancelled.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// The task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic payload.
    ///
    /// # Panics
    /// If the error is a cancellation; see [`JoinError::try_into_panic`].
    ///
    /// ```
    /// # weft::runtime::Runtime::new().unwrap().block_on(async {
    /// let err = weft::spawn(async { panic!("boom") }).await.unwrap_err();
    /// let payload = err.into_panic();
    /// assert_eq!(*payload.downcast_ref::<&str>().unwrap(), "boom");
    /// # });
    /// ```
    #[track_caller]
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic().expect(
            "JoinError::into_panic called on a cancellation: check is_panic() first or use \
             try_into_panic()",
        )
    }

    /// The panic payload, or the error itself if it is a cancellation.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(p) => Ok(p.0),
            Repr::Cancelled => Err(self),
        }
    }

    /// The id of the task that failed.
    pub fn id(&self) -> Id {
        self.id
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "task {} was cancelled", self.id),
            Repr::Panic(p) => match p.message() {
                Some(msg) => write!(f, "task {} panicked with message {:?}", self.id, msg),
                None => write!(f, "task {} panicked", self.id),
            },
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "JoinError::Cancelled({:?})", self.id),
            Repr::Panic(p) => match p.message() {
                Some(msg) => write!(f, "JoinError::Panic({:?}, {:?}, ...)", self.id, msg),
                None => write!(f, "JoinError::Panic({:?}, ...)", self.id),
            },
        }
    }
}

impl std::error::Error for JoinError {}

/// An `io::Error` of kind `Other` saying only "task panicked" or "task was
/// cancelled", as Tokio's (the payload stays behind; the task's id and
/// message are on the `JoinError` for whoever wants them before
/// converting).
impl From<JoinError> for std::io::Error {
    fn from(e: JoinError) -> std::io::Error {
        std::io::Error::other(if e.is_cancelled() {
            "task was cancelled"
        } else {
            "task panicked"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_error_is_send_and_sync_and_fits_in_an_io_error() {
        fn send_sync<T: Send + Sync + 'static>(_: &T) {}
        // A payload that is Send but not Sync.
        let err = JoinError::panic(Id::next(), Box::new(std::cell::Cell::new(1)));
        send_sync(&err);
        let io = std::io::Error::new(std::io::ErrorKind::Interrupted, err);
        assert!(io.to_string().contains("panicked"));
        let err = JoinError::panic(Id::next(), Box::new("boom"));
        assert_eq!(
            err.to_string(),
            format!("task {} panicked with message \"boom\"", err.id())
        );
    }
}
