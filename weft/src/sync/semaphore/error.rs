//! The errors of [`Semaphore`](super::Semaphore)'s acquire methods.

use std::fmt;

#[cfg(doc)]
use super::Semaphore;

/// Error returned by [`Semaphore::acquire`] and friends when the semaphore
/// has been closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquireError(pub(super) ());

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("semaphore closed")
    }
}

impl std::error::Error for AcquireError {}

/// Error returned by [`Semaphore::try_acquire`] and friends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TryAcquireError {
    /// The semaphore has been [closed](Semaphore::close).
    Closed,
    /// Not enough permits are available right now (or other tasks are
    /// queued ahead).
    NoPermits,
}

impl TryAcquireError {
    /// Whether the semaphore was closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, TryAcquireError::Closed)
    }

    /// Whether there were not enough permits.
    pub fn is_no_permits(&self) -> bool {
        matches!(self, TryAcquireError::NoPermits)
    }
}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryAcquireError::Closed => f.write_str("semaphore closed"),
            TryAcquireError::NoPermits => f.write_str("no permits available"),
        }
    }
}

impl std::error::Error for TryAcquireError {}
