//! `Receiver`'s methods: looking at the value, waiting for changes, and the
//! handle's clone and drop. The protocol they follow is stated once in the
//! parent module's doc (`watch/mod.rs`, "Protocol"); comments here refer to
//! its invariants by number.

use std::fmt;
use std::future::poll_fn;

use super::super::waker_set::wake_all;
use super::error::RecvError;
use super::{Receiver, Ref, Shared, Waiter, CLOSED, STEP};
use crate::loom::{self, Arc, Ordering};

impl<T> Receiver<T> {
    /// Borrows the current value without marking it as seen.
    ///
    /// The returned [`Ref`] holds a read lock: do not hold it across an
    /// `.await`, and keep it short so the sender is not blocked.
    /// [`Ref::has_changed`] tells whether the value is still unseen.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, rx) = watch::channel("hello");
    /// assert_eq!(*rx.borrow(), "hello");
    /// tx.send("world").unwrap();
    /// assert_eq!(*rx.borrow(), "world");
    /// assert!(rx.has_changed().unwrap());
    /// ```
    pub fn borrow(&self) -> Ref<'_, T> {
        let inner = loom::read(&self.shared.value);
        // Invariant 1: under the read lock the version matches the value.
        let version = self.shared.version();
        Ref {
            inner,
            has_changed: version != self.version,
        }
    }

    /// Borrows the current value and marks it as seen.
    ///
    /// The returned [`Ref`] holds a read lock: do not hold it across an
    /// `.await`. [`Ref::has_changed`] tells whether the value had been
    /// unseen.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, mut rx) = watch::channel(1);
    /// tx.send(2).unwrap();
    /// assert_eq!(*rx.borrow_and_update(), 2);
    /// assert!(!rx.has_changed().unwrap());
    /// ```
    pub fn borrow_and_update(&mut self) -> Ref<'_, T> {
        let inner = loom::read(&self.shared.value);
        // Invariant 1: under the read lock the version matches the value.
        let version = self.shared.version();
        let has_changed = version != self.version;
        self.version = version;
        Ref { inner, has_changed }
    }

    /// Returns whether a value this receiver has not seen is in the channel.
    ///
    /// Does not mark anything as seen.
    ///
    /// # Errors
    ///
    /// Returns [`RecvError`] if the sender has been dropped, even if an
    /// unseen value is still there (it can still be read with
    /// [`borrow`](Receiver::borrow)).
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, mut rx) = watch::channel("hello");
    /// assert!(!rx.has_changed().unwrap());
    /// tx.send("goodbye").unwrap();
    /// assert!(rx.has_changed().unwrap());
    /// assert_eq!(*rx.borrow_and_update(), "goodbye");
    /// assert!(!rx.has_changed().unwrap());
    /// drop(tx);
    /// assert!(rx.has_changed().is_err());
    /// ```
    pub fn has_changed(&self) -> Result<bool, RecvError> {
        let state = self.shared.state.load(Ordering::Acquire);
        if state & CLOSED != 0 {
            return Err(RecvError(()));
        }
        Ok(state & !CLOSED != self.version)
    }

    /// Marks the current value as unseen, so the next
    /// [`changed`](Receiver::changed) resolves at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (_tx, mut rx) = watch::channel(0);
    /// rx.mark_changed();
    /// assert!(rx.has_changed().unwrap());
    /// ```
    pub fn mark_changed(&mut self) {
        // Any version other than the current one reads as unseen; versions
        // only grow, so one step back is never current again.
        self.version = self.shared.version().wrapping_sub(STEP);
    }

    /// Marks the current value as seen, without borrowing it.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, mut rx) = watch::channel(0);
    /// tx.send(1).unwrap();
    /// rx.mark_unchanged();
    /// assert!(!rx.has_changed().unwrap());
    /// ```
    pub fn mark_unchanged(&mut self) {
        self.version = self.shared.version();
    }

    /// Waits for a value newer than the last one this receiver has seen,
    /// then marks the newest value as seen.
    ///
    /// Resolves at once if there is already an unseen value. Several sends
    /// in a row are reported as one change. Counts against the task's
    /// cooperative budget.
    ///
    /// # Errors
    ///
    /// Returns [`RecvError`] if the sender has been dropped and this
    /// receiver has seen the last value it sent. An unseen last value is
    /// still reported as `Ok` first.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe: if the future is dropped before it
    /// completes, nothing is marked as seen, and calling `changed` again
    /// reports the same change.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = watch::channel("hello");
    ///
    ///     weft::spawn(async move {
    ///         tx.send("goodbye").unwrap();
    ///     });
    ///
    ///     assert!(rx.changed().await.is_ok());
    ///     assert_eq!(*rx.borrow_and_update(), "goodbye");
    ///
    ///     // The sender is gone and its last value was seen.
    ///     assert!(rx.changed().await.is_err());
    /// });
    /// ```
    pub async fn changed(&mut self) -> Result<(), RecvError> {
        changed_impl(&self.shared, &mut self.version).await
    }

    /// Waits until the value satisfies `f`, then returns a [`Ref`] to it and
    /// marks it as seen.
    ///
    /// `f` is called with the current value first (seen or not), then with
    /// each newer value until it returns `true`. The returned [`Ref`] holds
    /// a read lock: do not hold it across an `.await`. Counts against the
    /// task's cooperative budget, one unit per poll (a value that already
    /// matches too).
    ///
    /// # Errors
    ///
    /// Returns [`RecvError`] if the sender is dropped before a value
    /// satisfying `f` was sent (the last value is still checked first).
    ///
    /// # Panics
    ///
    /// A panic in `f` propagates to the caller; the channel stays usable.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe in the sense that dropping the future
    /// loses no value, but values that `f` rejected are marked as seen.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = watch::channel(0);
    ///
    ///     weft::spawn(async move {
    ///         for i in 1..=5 {
    ///             tx.send(i).unwrap();
    ///         }
    ///     });
    ///
    ///     let v = *rx.wait_for(|v| *v == 5).await.unwrap();
    ///     assert_eq!(v, 5);
    /// });
    /// ```
    pub async fn wait_for(&mut self, f: impl FnMut(&T) -> bool) -> Result<Ref<'_, T>, RecvError> {
        // One unit of the task's budget per poll, as Tokio's: a value that
        // already matches would otherwise make a loop of `send` and
        // `wait_for` never yield.
        crate::coop::cooperative(self.wait_for_inner(f)).await
    }

    async fn wait_for_inner(
        &mut self,
        mut f: impl FnMut(&T) -> bool,
    ) -> Result<Ref<'_, T>, RecvError> {
        // Split the borrow: the returned guard borrows `shared`, the loop
        // keeps updating `version`.
        let shared = &self.shared;
        let seen = &mut self.version;
        let mut closed = false;
        loop {
            {
                let inner = loom::read(&shared.value);
                // Invariant 1: under the read lock the version matches.
                let version = shared.version();
                let has_changed = version != *seen;
                *seen = version;
                if (!closed || has_changed) && f(&inner) {
                    return Ok(Ref { inner, has_changed });
                }
            }
            if closed {
                return Err(RecvError(()));
            }
            closed = changed_impl(shared, seen).await.is_err();
        }
    }

    /// Returns `true` if both receivers belong to the same channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, rx) = watch::channel(());
    /// let rx2 = rx.clone();
    /// assert!(rx.same_channel(&rx2));
    /// let (_tx3, rx3) = watch::channel(());
    /// assert!(!rx3.same_channel(&rx2));
    /// # drop(tx);
    /// ```
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Returns `true` once every sender has been dropped. The value can
    /// still be borrowed, and an unseen last value is still reported by
    /// [`changed`](Receiver::changed) before it fails.
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, rx) = watch::channel(());
    /// let tx2 = tx.clone();
    /// drop(tx);
    /// assert!(!rx.is_closed());
    /// drop(tx2);
    /// assert!(rx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.shared.state.load(Ordering::Acquire) & CLOSED != 0
    }
}

async fn changed_impl<T>(shared: &Shared<T>, seen: &mut usize) -> Result<(), RecvError> {
    let mut waiter = Waiter::new(&shared.rx_waiters);
    poll_fn(|cx| shared.poll_changed(seen, &mut waiter, cx)).await
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.shared.rx_count.fetch_add(1, Ordering::Relaxed);
        Receiver {
            shared: self.shared.clone(),
            version: self.version,
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if self.shared.rx_count.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Invariant 2: the count is published before we wake.
            let wakers = loom::lock(&self.shared.tx_waiters).take_all();
            wake_all(wakers);
        }
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("version", &self.version)
            .field("shared", &self.shared)
            .finish()
    }
}
