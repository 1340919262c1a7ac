//! [`WeakSender`], a sender handle that does not keep the channel open, and
//! the sender counts. The rules they follow are the parent module's
//! invariant 7 (`broadcast/mod.rs`): the strong count never rises again
//! from zero, and the weak count is only reported.

use std::fmt;

use super::{Sender, Shared};
use crate::loom::{Arc, Ordering};

/// A sender that does not keep the channel open.
///
/// Created by [`Sender::downgrade`]. Turn it back into a [`Sender`] with
/// [`upgrade`](WeakSender::upgrade), which fails once every `Sender` has
/// been dropped (the channel is then closed for good).
pub struct WeakSender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Sender<T> {
    /// Creates a [`WeakSender`], which does not keep the channel open.
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, _rx) = broadcast::channel::<()>(4);
    /// let weak = tx.downgrade();
    /// assert!(weak.upgrade().is_some());
    /// drop(tx);
    /// assert!(weak.upgrade().is_none());
    /// ```
    pub fn downgrade(&self) -> WeakSender<T> {
        self.shared.num_weak_tx.fetch_add(1, Ordering::Relaxed);
        WeakSender {
            shared: self.shared.clone(),
        }
    }

    /// Returns the number of live [`Sender`]s of the channel, this one
    /// included.
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, _rx) = broadcast::channel::<()>(4);
    /// let tx2 = tx.clone();
    /// assert_eq!(tx.strong_count(), 2);
    /// drop(tx2);
    /// assert_eq!(tx.strong_count(), 1);
    /// ```
    pub fn strong_count(&self) -> usize {
        self.shared.num_tx.load(Ordering::Acquire)
    }

    /// Returns the number of live [`WeakSender`]s of the channel.
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, _rx) = broadcast::channel::<()>(4);
    /// let weak = tx.downgrade();
    /// assert_eq!(tx.weak_count(), 1);
    /// drop(weak);
    /// assert_eq!(tx.weak_count(), 0);
    /// ```
    pub fn weak_count(&self) -> usize {
        self.shared.num_weak_tx.load(Ordering::Relaxed)
    }
}

impl<T> WeakSender<T> {
    /// Tries to turn this into a [`Sender`]; returns `None` once every
    /// `Sender` has been dropped.
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, mut rx) = broadcast::channel(4);
    /// let weak = tx.downgrade();
    /// weak.upgrade().unwrap().send(1).unwrap();
    /// drop(tx);
    /// assert!(weak.upgrade().is_none());
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    pub fn upgrade(&self) -> Option<Sender<T>> {
        let mut n = self.shared.num_tx.load(Ordering::Relaxed);
        loop {
            if n == 0 {
                // Invariant 7: zero is final; the channel is closed.
                return None;
            }
            match self.shared.num_tx.compare_exchange_weak(
                n,
                n + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Some(Sender {
                        shared: self.shared.clone(),
                    })
                }
                Err(actual) => n = actual,
            }
        }
    }

    /// Returns the number of live [`Sender`]s of the channel.
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, _rx) = broadcast::channel::<()>(4);
    /// let weak = tx.downgrade();
    /// assert_eq!(weak.strong_count(), 1);
    /// drop(tx);
    /// assert_eq!(weak.strong_count(), 0);
    /// ```
    pub fn strong_count(&self) -> usize {
        self.shared.num_tx.load(Ordering::Acquire)
    }

    /// Returns the number of live [`WeakSender`]s of the channel, this one
    /// included.
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, _rx) = broadcast::channel::<()>(4);
    /// let weak = tx.downgrade();
    /// let weak2 = weak.clone();
    /// assert_eq!(weak.weak_count(), 2);
    /// drop(weak2);
    /// assert_eq!(weak.weak_count(), 1);
    /// ```
    pub fn weak_count(&self) -> usize {
        self.shared.num_weak_tx.load(Ordering::Relaxed)
    }
}

impl<T> Clone for WeakSender<T> {
    fn clone(&self) -> Self {
        self.shared.num_weak_tx.fetch_add(1, Ordering::Relaxed);
        WeakSender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for WeakSender<T> {
    fn drop(&mut self) {
        self.shared.num_weak_tx.fetch_sub(1, Ordering::Relaxed);
    }
}

impl<T> fmt::Debug for WeakSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakSender")
            .field("shared", &self.shared)
            .finish()
    }
}
