//! Reserving several slots of a bounded channel at once:
//! [`Sender::reserve_many`], [`Sender::try_reserve_many`] and the
//! [`PermitIterator`] they return. The slots are taken from the slot
//! semaphore in one request (all or none, one place in the queue) and
//! handed out one [`Permit`] at a time; those not handed out go back when
//! the iterator is dropped (`mpsc` invariant 2).

use std::fmt;
use std::iter::FusedIterator;

use super::bounded::{Permit, Sender};
use super::chan::Chan;
use super::error::{SendError, TrySendError};

/// The permits of several reserved slots, from [`Sender::reserve_many`] and
/// [`Sender::try_reserve_many`]. Each item is a [`Permit`] for one slot;
/// dropping the iterator gives back the slots not yet taken out of it.
pub struct PermitIterator<'a, T> {
    chan: &'a Chan<T>,
    /// Reserved slots not yet handed out as a `Permit`.
    n: usize,
}

impl<T> Sender<T> {
    /// Waits for capacity and reserves `n` slots at once, for `n` later
    /// sends that neither wait nor fail.
    ///
    /// The slots are requested together: the call waits until all `n` are
    /// free (keeping its place in the queue meanwhile, so smaller requests
    /// behind it wait too).
    ///
    /// # Errors
    ///
    /// Fails if the receiver has been closed or dropped, and if `n` exceeds
    /// the channel's [`max_capacity`](Sender::max_capacity) (it could never
    /// succeed).
    ///
    /// # Cancel safety
    ///
    /// This channel uses a queue to ensure that calls to `send` and
    /// `reserve` complete in the order they were requested. Cancelling a
    /// call to `reserve_many` makes you lose your place in the queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(2);
    ///     let mut permits = tx.reserve_many(2).await.unwrap();
    ///     assert_eq!(tx.capacity(), 0);
    ///     permits.next().unwrap().send(1);
    ///     drop(permits); // the unused slot goes back
    ///     assert_eq!(tx.capacity(), 1);
    ///     assert_eq!(rx.recv().await, Some(1));
    /// });
    /// ```
    pub async fn reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, SendError<()>> {
        if n > self.max_capacity() {
            return Err(SendError(()));
        }
        match self.chan.reserve_many(n).await {
            Ok(()) => Ok(PermitIterator {
                chan: &self.chan,
                n,
            }),
            Err(_) => Err(SendError(())),
        }
    }

    /// Tries to reserve `n` slots at once without waiting.
    ///
    /// # Errors
    ///
    /// `TrySendError::Full(())` if fewer than `n` slots are free right now
    /// (or `n` exceeds the channel's
    /// [`max_capacity`](Sender::max_capacity)), `TrySendError::Closed(())`
    /// if the receiver was closed or dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::channel(2);
    /// let permits = tx.try_reserve_many(2).unwrap();
    /// assert!(tx.try_reserve_many(1).is_err());
    /// for (i, permit) in permits.enumerate() {
    ///     permit.send(i);
    /// }
    /// assert_eq!(rx.try_recv(), Ok(0));
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    pub fn try_reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, TrySendError<()>> {
        if n > self.max_capacity() {
            return Err(TrySendError::Full(()));
        }
        match self.chan.try_reserve_many(n) {
            Ok(()) => Ok(PermitIterator {
                chan: &self.chan,
                n,
            }),
            Err(true) => Err(TrySendError::Closed(())),
            Err(false) => Err(TrySendError::Full(())),
        }
    }
}

impl<'a, T> Iterator for PermitIterator<'a, T> {
    type Item = Permit<'a, T>;

    fn next(&mut self) -> Option<Permit<'a, T>> {
        if self.n == 0 {
            return None;
        }
        // The slot moves from this iterator to the permit (invariant 2).
        self.n -= 1;
        Some(Permit { chan: self.chan })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.n, Some(self.n))
    }
}

impl<T> ExactSizeIterator for PermitIterator<'_, T> {}

impl<T> FusedIterator for PermitIterator<'_, T> {}

impl<T> Drop for PermitIterator<'_, T> {
    fn drop(&mut self) {
        self.chan.release_reserved_many(self.n);
    }
}

impl<T> fmt::Debug for PermitIterator<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PermitIterator")
            .field("chan", &self.chan)
            .field("n", &self.n)
            .finish()
    }
}
