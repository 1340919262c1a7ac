//! A multi-producer, multi-consumer channel that keeps only the latest value.
//!
//! Create one with [`channel`]. The [`Sender`] replaces the value; every
//! [`Receiver`] can look at the current value at any time
//! ([`Receiver::borrow`]) and wait until a value newer than the last one it
//! has seen is sent ([`Receiver::changed`]). Receivers do not queue values:
//! a receiver that is slow to look sees only the newest one. Typical uses are
//! configuration that changes at run time and shutdown signals.
//!
//! # What this file owns
//!
//! The whole watch channel: the shared allocation, the version protocol that
//! tells a receiver whether it has seen the current value, the waiting for
//! `changed` and `closed`, the public handles and their error types. The
//! `Receiver`'s methods are in `receiver.rs`; the waker storage itself is
//! `WakerSet` (`waker_set.rs`).
//!
//! # Protocol
//!
//! `Shared::state` is an `AtomicUsize`: bit 0 is `CLOSED` (the sender was
//! dropped), the bits above it are the *version*, which grows by `STEP`
//! each time a value is sent. Each receiver remembers the version it has
//! seen. The invariants below are what the code relies on; there is no
//! `unsafe` code in this file.
//!
//! 1. **Version matches value.** The version is incremented only while the
//!    sender holds `value`'s write lock. A reader that loads the version
//!    while holding the read lock therefore gets exactly the version of the
//!    value it is looking at, so `borrow_and_update` never marks as seen a
//!    value it did not return.
//! 2. **No lost wakeup.** A sender changes `state` first and then takes the
//!    `rx_waiters` lock to wake everyone; a waiting receiver takes the same
//!    lock, re-checks `state`, and only then registers its waker. Whichever
//!    of the two critical sections comes second sees the other's effect.
//!    `closed` works the same way with `rx_count` and `tx_waiters`.
//! 3. **Nothing is marked seen early.** A receiver's seen-version changes
//!    only when a method returns to its caller (`changed` resolving,
//!    `borrow_and_update`, `mark_*`), never while a future is pending, so
//!    dropping a pending `changed()` loses nothing.
//! 4. **Lock order.** No code holds two of `value`, `rx_waiters` and
//!    `tx_waiters` at once, and wakers are woken and dropped after
//!    unlocking (`sync/mod.rs`, "Wakers and locks"): one replaced by a new
//!    poll or given back by a cancelled wait is moved out and dropped after
//!    the guard, so its `Drop` may send, or drop a receiver.
//! 5. **Senders.** `tx_count` counts live senders. A sender is cloned only
//!    from a live one, so the count never rises again from zero, and
//!    exactly one drop takes it to zero: that one closes the channel. The
//!    decrement is `AcqRel`, so the closing drop comes after everything the
//!    other senders did.

use std::fmt;
use std::future::poll_fn;
use std::ops::Deref;
use std::task::{ready, Context, Poll};

use super::waker_set::{wake_all, WakerSet};
use crate::loom::{self, Arc, AtomicUsize, Mutex, Ordering, RwLock, RwLockReadGuard};

/// Error types for the watch channel.
pub mod error;
mod receiver;

use self::error::{RecvError, SendError};

/// `state` bit set once the sender is dropped.
const CLOSED: usize = 1;
/// How much one send adds to `state` (the version lives above `CLOSED`).
const STEP: usize = 2;

/// The allocation shared by the sender and all receivers.
struct Shared<T> {
    /// The latest value.
    value: RwLock<T>,
    /// Version and `CLOSED` (see the module doc).
    state: AtomicUsize,
    /// Number of live receivers.
    rx_count: AtomicUsize,
    /// Number of live senders (invariant 5).
    tx_count: AtomicUsize,
    /// Receivers waiting in `changed` (invariant 2).
    rx_waiters: Mutex<WakerSet>,
    /// Senders waiting in `closed` (invariant 2).
    tx_waiters: Mutex<WakerSet>,
}

impl<T> Shared<T> {
    fn version(&self) -> usize {
        self.state.load(Ordering::Acquire) & !CLOSED
    }

    /// Whether `changed` may complete for a receiver that has seen `seen`:
    /// `Ok` (and the newest version is marked seen) if there is a newer
    /// value, `Err` if the sender is gone and there is none.
    fn check_changed(&self, seen: &mut usize) -> Option<Result<(), RecvError>> {
        let state = self.state.load(Ordering::Acquire);
        let version = state & !CLOSED;
        if version != *seen {
            *seen = version;
            Some(Ok(()))
        } else if state & CLOSED != 0 {
            Some(Err(RecvError(())))
        } else {
            None
        }
    }

    /// Wakes every receiver waiting in `changed`.
    fn notify_rx(&self) {
        let wakers = loom::lock(&self.rx_waiters).take_all();
        wake_all(wakers);
    }

    /// The body of `Receiver::changed`: one poll.
    fn poll_changed(
        &self,
        seen: &mut usize,
        waiter: &mut Waiter<'_>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), RecvError>> {
        let coop = ready!(crate::coop::poll_proceed(cx));
        let res = match self.check_changed(seen) {
            Some(res) => res,
            None => {
                let mut list = loom::lock(waiter.list);
                // Invariant 2: re-check under the lock the sender wakes under.
                match self.check_changed(seen) {
                    Some(res) => res,
                    None => {
                        let replaced = list.register(&mut waiter.key, cx.waker());
                        // Invariant 4: dropped after unlocking.
                        drop(list);
                        drop(replaced);
                        return Poll::Pending;
                    }
                }
            }
        };
        coop.made_progress();
        Poll::Ready(res)
    }

    /// The body of `Sender::closed`: one poll.
    fn poll_closed(&self, waiter: &mut Waiter<'_>, cx: &mut Context<'_>) -> Poll<()> {
        let coop = ready!(crate::coop::poll_proceed(cx));
        if self.rx_count.load(Ordering::Acquire) != 0 {
            let mut list = loom::lock(waiter.list);
            // Invariant 2: re-check under the lock the last receiver wakes
            // under.
            if self.rx_count.load(Ordering::Acquire) != 0 {
                let replaced = list.register(&mut waiter.key, cx.waker());
                // Invariant 4: dropped after unlocking.
                drop(list);
                drop(replaced);
                return Poll::Pending;
            }
        }
        coop.made_progress();
        Poll::Ready(())
    }
}

/// One pending wait: gives its [`WakerSet`] key back when dropped, whether
/// the wait completed or was cancelled.
struct Waiter<'a> {
    list: &'a Mutex<WakerSet>,
    key: Option<usize>,
}

impl<'a> Waiter<'a> {
    fn new(list: &'a Mutex<WakerSet>) -> Self {
        Waiter { list, key: None }
    }
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            // Invariant 4: the statement's temporary guard is gone before
            // the waker is dropped.
            let waker = loom::lock(self.list).remove(key);
            drop(waker);
        }
    }
}

/// Creates a watch channel holding `init`, returning the sender and the
/// first receiver.
///
/// The receiver starts out having seen `init`: [`Receiver::changed`] waits
/// for the first value sent after it.
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
///         // Use the equivalent of a "do-while" loop so the initial value is
///         // processed before awaiting the `changed()` future.
///         loop {
///             println!("{}! ", *rx.borrow_and_update());
///             if rx.changed().await.is_err() {
///                 break;
///             }
///         }
///     });
///
///     tx.send("world").unwrap();
/// });
/// ```
pub fn channel<T>(init: T) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        value: RwLock::new(init),
        state: AtomicUsize::new(0),
        rx_count: AtomicUsize::new(1),
        tx_count: AtomicUsize::new(1),
        rx_waiters: Mutex::new(WakerSet::new()),
        tx_waiters: Mutex::new(WakerSet::new()),
    });
    let tx = Sender {
        shared: shared.clone(),
    };
    let rx = Receiver { shared, version: 0 };
    (tx, rx)
}

/// Sends values to the associated [`Receiver`]s.
///
/// Created by [`channel`]; clone it for more senders. Dropping the last
/// sender closes the channel: receivers can still read the last value, and
/// [`Receiver::changed`] returns [`RecvError`] once they have seen it.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// Receives values from the associated [`Sender`].
///
/// Created by [`channel`] or [`Sender::subscribe`]. Each receiver remembers
/// the version of the value it has last seen; cloning a receiver copies that
/// version, so the clone has seen exactly what the original has.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// The version this receiver has seen (see the module doc).
    version: usize,
}

/// A borrowed reference to the value in a watch channel.
///
/// Returned by [`Sender::borrow`], [`Receiver::borrow`],
/// [`Receiver::borrow_and_update`] and [`Receiver::wait_for`].
///
/// It holds a read lock on the value for as long as it lives: the sender
/// cannot send while any `Ref` exists. Keep it short-lived, and in particular
/// **do not hold a `Ref` across an `.await`** or while calling a send method
/// on the same channel from the same thread: the sender would block,
/// possibly forever (a deadlock). Clone what you need out of it instead.
pub struct Ref<'a, T> {
    inner: RwLockReadGuard<'a, T>,
    has_changed: bool,
}

impl<T> Ref<'_, T> {
    /// Returns `true` if the borrowed value had not been seen by the
    /// receiver when it was borrowed.
    ///
    /// For [`Receiver::borrow_and_update`] this tells whether the call
    /// marked a new value as seen; for [`Receiver::borrow`] whether the
    /// value is still unseen. Always `false` for [`Sender::borrow`].
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, mut rx) = watch::channel(0);
    /// tx.send(1).unwrap();
    /// assert!(rx.borrow().has_changed());
    /// assert!(rx.borrow_and_update().has_changed());
    /// assert!(!rx.borrow_and_update().has_changed());
    /// ```
    pub fn has_changed(&self) -> bool {
        self.has_changed
    }
}

impl<T> Deref for Ref<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: fmt::Debug> fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// A sender holding `T::default()`, with no receivers yet (as
/// [`Sender::new`]).
impl<T: Default> Default for Sender<T> {
    fn default() -> Sender<T> {
        Sender::new(T::default())
    }
}

impl<T> Sender<T> {
    /// A sender with no receiver yet; make receivers with
    /// [`Sender::subscribe`]. (Tokio's `watch::Sender::new`.)
    ///
    /// ```
    /// let tx = weft::sync::watch::Sender::new(1);
    /// let rx = tx.subscribe();
    /// tx.send(2).unwrap();
    /// assert_eq!(*rx.borrow(), 2);
    /// ```
    pub fn new(init: T) -> Sender<T> {
        channel(init).0
    }

    /// Sends a new value, notifying every receiver.
    ///
    /// Fails, giving the value back, if there are no receivers; the stored
    /// value is then left unchanged. Use [`send_replace`](Sender::send_replace)
    /// to store a value even when nobody is listening.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, rx) = watch::channel(1);
    /// assert!(tx.send(2).is_ok());
    /// drop(rx);
    /// assert_eq!(tx.send(3).unwrap_err().0, 3);
    /// assert_eq!(*tx.borrow(), 2);
    /// ```
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        if self.receiver_count() == 0 {
            return Err(SendError(value));
        }
        self.send_replace(value);
        Ok(())
    }

    /// Stores a new value whether or not there are receivers, notifies the
    /// receivers, and returns the previous value.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, _rx) = watch::channel(1);
    /// assert_eq!(tx.send_replace(2), 1);
    /// assert_eq!(tx.send_replace(3), 2);
    /// ```
    pub fn send_replace(&self, mut value: T) -> T {
        self.send_modify(|old| std::mem::swap(old, &mut value));
        value
    }

    /// Modifies the value in place and notifies every receiver, whether or
    /// not there are any.
    ///
    /// Useful to change a large value without building a new one. The
    /// closure runs with the value write-locked: keep it short, and do not
    /// borrow the channel's value from inside it (that deadlocks).
    ///
    /// # Panics
    ///
    /// A panic in `modify` propagates to the caller; no notification is
    /// sent, but changes the closure made before panicking stay.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, mut rx) = watch::channel(vec![1]);
    /// tx.send_modify(|v| v.push(2));
    /// assert_eq!(*rx.borrow_and_update(), [1, 2]);
    /// ```
    pub fn send_modify<F>(&self, modify: F)
    where
        F: FnOnce(&mut T),
    {
        self.send_if_modified(|value| {
            modify(value);
            true
        });
    }

    /// Modifies the value in place and notifies the receivers only if the
    /// closure returns `true`.
    ///
    /// Returns what the closure returned. The closure must return `true` if
    /// it changed the value: when it returns `false`, receivers are not told
    /// about any change it made. Works whether or not there are receivers.
    ///
    /// # Panics
    ///
    /// A panic in `modify` propagates to the caller; no notification is
    /// sent, but changes the closure made before panicking stay.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, rx) = watch::channel(1);
    /// assert!(!tx.send_if_modified(|v| *v == 2));
    /// assert!(!rx.has_changed().unwrap());
    /// assert!(tx.send_if_modified(|v| {
    ///     *v = 2;
    ///     true
    /// }));
    /// assert!(rx.has_changed().unwrap());
    /// ```
    pub fn send_if_modified<F>(&self, modify: F) -> bool
    where
        F: FnOnce(&mut T) -> bool,
    {
        {
            let mut value = loom::write(&self.shared.value);
            if !modify(&mut value) {
                return false;
            }
            // Invariant 1: bump the version while still holding the lock.
            self.shared.state.fetch_add(STEP, Ordering::Release);
        }
        // Invariant 2: the new version is published before we wake.
        self.shared.notify_rx();
        true
    }

    /// Borrows the current value. The returned [`Ref`] holds a read lock:
    /// do not hold it across an `.await`, and drop it before sending.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, _rx) = watch::channel("hello");
    /// assert_eq!(*tx.borrow(), "hello");
    /// ```
    pub fn borrow(&self) -> Ref<'_, T> {
        Ref {
            inner: loom::read(&self.shared.value),
            has_changed: false,
        }
    }

    /// Returns `true` if every receiver has been dropped, so
    /// [`send`](Sender::send) would fail.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, rx) = watch::channel(());
    /// assert!(!tx.is_closed());
    /// drop(rx);
    /// assert!(tx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.receiver_count() == 0
    }

    /// Waits until every receiver has been dropped.
    ///
    /// Resolves at once if there are no receivers now. Useful to stop
    /// producing values nobody will read. Counts against the task's
    /// cooperative budget.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, rx) = watch::channel(());
    ///     weft::spawn(async move { drop(rx) });
    ///     tx.closed().await;
    ///     assert!(tx.is_closed());
    /// });
    /// ```
    pub async fn closed(&self) {
        let mut waiter = Waiter::new(&self.shared.tx_waiters);
        poll_fn(|cx| self.shared.poll_closed(&mut waiter, cx)).await
    }

    /// Creates a new receiver, which starts out having seen the current
    /// value.
    ///
    /// This also works after every receiver has been dropped, reopening the
    /// channel for [`send`](Sender::send).
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, rx) = watch::channel(0);
    /// drop(rx);
    /// tx.send_replace(1);
    /// let rx = tx.subscribe();
    /// assert_eq!(*rx.borrow(), 1);
    /// assert!(!rx.has_changed().unwrap());
    /// assert!(tx.send(2).is_ok());
    /// ```
    pub fn subscribe(&self) -> Receiver<T> {
        self.shared.rx_count.fetch_add(1, Ordering::Relaxed);
        let version = self.shared.version();
        Receiver {
            shared: self.shared.clone(),
            version,
        }
    }

    /// Returns the number of receivers that currently exist.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, rx1) = watch::channel(0);
    /// assert_eq!(tx.receiver_count(), 1);
    /// let rx2 = rx1.clone();
    /// assert_eq!(tx.receiver_count(), 2);
    /// drop((rx1, rx2));
    /// assert_eq!(tx.receiver_count(), 0);
    /// ```
    pub fn receiver_count(&self) -> usize {
        self.shared.rx_count.load(Ordering::Acquire)
    }

    /// Returns the number of senders that currently exist (this one and its
    /// clones).
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, _rx) = watch::channel(0);
    /// assert_eq!(tx.sender_count(), 1);
    /// let tx2 = tx.clone();
    /// assert_eq!(tx.sender_count(), 2);
    /// drop(tx2);
    /// assert_eq!(tx.sender_count(), 1);
    /// ```
    pub fn sender_count(&self) -> usize {
        self.shared.tx_count.load(Ordering::Acquire)
    }

    /// Returns `true` if both senders belong to the same channel.
    ///
    /// ```
    /// use weft::sync::watch;
    ///
    /// let (tx, _rx) = watch::channel(0);
    /// let tx2 = tx.clone();
    /// assert!(tx.same_channel(&tx2));
    /// let (tx3, _rx3) = watch::channel(0);
    /// assert!(!tx3.same_channel(&tx));
    /// ```
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        // Invariant 5: we are live, so the count is not zero.
        self.shared.tx_count.fetch_add(1, Ordering::Relaxed);
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        // Invariant 5: only the last sender closes the channel.
        if self.shared.tx_count.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        self.shared.state.fetch_or(CLOSED, Ordering::AcqRel);
        // Invariant 2: `CLOSED` is published before we wake.
        self.shared.notify_rx();
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("shared", &self.shared)
            .finish()
    }
}

impl<T> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The value is not shown: locking it here could deadlock a caller
        // that holds a `Ref`.
        let state = self.state.load(Ordering::Acquire);
        f.debug_struct("Shared")
            .field("version", &(state & !CLOSED))
            .field("closed", &(state & CLOSED != 0))
            .field("rx_count", &self.rx_count.load(Ordering::Acquire))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
