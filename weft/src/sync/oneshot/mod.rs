//! A channel for sending exactly one value between asynchronous tasks.
//!
//! Create one with [`channel`]: the [`Sender`] half sends one value, the
//! [`Receiver`] half is a future that resolves to it. Either half may be
//! dropped at any time; the other side then observes the channel as closed.
//!
//! # What this file owns
//!
//! The whole oneshot channel: the shared `Inner` cell (one `Arc` allocation
//! per channel), the atomic state protocol that hands the value and the two
//! wakers between the halves, the public handles and their error types.
//!
//! # State protocol
//!
//! `Inner::state` is an `AtomicUsize` holding four flags:
//!
//! - `COMPLETE`: the sender is done, either because it stored a value or
//!   because it was dropped without one. Set only by the sender.
//! - `CLOSED`: the receiver closed the channel or was dropped. Set only by the
//!   receiver.
//! - `RX_TASK_SET`: `rx_task` holds the receiver's waker. Set and cleared only
//!   by the receiver.
//! - `TX_TASK_SET`: `tx_task` holds the waker of the sender's `closed()`
//!   waiter. Set and cleared only by the sender.
//!
//! Every `unsafe` block below relies on one of these invariants:
//!
//! 1. **Terminal flags.** `COMPLETE` and `CLOSED` are never cleared, and
//!    `COMPLETE` is never set once `CLOSED` is set (the sender sets it with a
//!    compare-and-swap that gives up on seeing `CLOSED`). So "closed but not
//!    complete" is final: no value will ever arrive.
//! 2. **Value ownership.** Until `COMPLETE` is set, only the sender touches
//!    `value`. The sender sets `COMPLETE` (release) after its last access; a
//!    receiver that observes `COMPLETE` (acquire) is from then on the only one
//!    to touch `value`. If the sender finds `CLOSED` instead, it never sets
//!    `COMPLETE`, so it keeps ownership and takes its value back out.
//! 3. **Receiver waker slot.** `rx_task` is written only by the receiver,
//!    only while `RX_TASK_SET` is clear, and never after the receiver has
//!    observed `COMPLETE`. The sender reads it only when the read-modify-write
//!    that set `COMPLETE` showed `RX_TASK_SET` set. Because the receiver can
//!    clear `RX_TASK_SET` only with a read-modify-write, which reports an
//!    earlier `COMPLETE`, a reading sender and a writing receiver never
//!    overlap; a receiver that finds `COMPLETE` while clearing leaves the slot
//!    alone (the sender may still be waking the old waker) and takes the value.
//! 4. **Sender waker slot.** The mirror image of 3: `tx_task` is written only
//!    by the sender, only while `TX_TASK_SET` is clear, and never after the
//!    sender has observed `CLOSED`. The receiver reads it only when the
//!    read-modify-write that first set `CLOSED` showed `TX_TASK_SET` set and
//!    `COMPLETE` clear.
//! 5. **Publication.** Each flag transition is a read-modify-write with
//!    `AcqRel` ordering, so whoever sees a flag also sees the slot contents
//!    written before it was set.
//! 6. **Cleanup.** Whatever is left in `value`, `rx_task` and `tx_task` when
//!    the last `Arc` goes is dropped by `Inner`'s own drop glue, with
//!    exclusive access. A value is therefore dropped exactly once: by the
//!    receiver that takes it, by the sender that takes it back, or here.
//! 7. **No lock.** The halves hand over wakers through the flags alone, so
//!    no waker is ever dropped or woken under a lock (`sync/mod.rs`,
//!    "Wakers and locks"): a waker replaced in its slot may, from its
//!    `Drop`, send or close on this very channel, since its slot's flag is
//!    clear by then and the other half does not touch it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll, Waker};

use crate::loom::{Arc, AtomicUsize, Ordering, UnsafeCell};

/// Error types returned by the receiving half.
pub mod error {
    use std::fmt;

    /// Error returned by awaiting a [`Receiver`](super::Receiver) when the
    /// [`Sender`](super::Sender) was dropped without sending a value.
    #[derive(Debug, Eq, PartialEq, Clone)]
    pub struct RecvError(pub(super) ());

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl std::error::Error for RecvError {}

    /// Error returned by [`Receiver::try_recv`](super::Receiver::try_recv).
    #[derive(Debug, Eq, PartialEq, Clone)]
    pub enum TryRecvError {
        /// No value has been sent yet, but the sender is still alive.
        Empty,
        /// No value will ever be received: the sender was dropped without
        /// sending, the receiver closed the channel before a value arrived,
        /// or the value was already taken.
        Closed,
    }

    impl fmt::Display for TryRecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TryRecvError::Empty => f.write_str("channel empty"),
                TryRecvError::Closed => f.write_str("channel closed"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}

use self::error::{RecvError, TryRecvError};

const RX_TASK_SET: usize = 0b0001;
const COMPLETE: usize = 0b0010;
const CLOSED: usize = 0b0100;
const TX_TASK_SET: usize = 0b1000;

/// A snapshot of `Inner::state`.
#[derive(Clone, Copy)]
struct State(usize);

impl State {
    fn is_complete(self) -> bool {
        self.0 & COMPLETE != 0
    }

    fn is_closed(self) -> bool {
        self.0 & CLOSED != 0
    }

    fn is_rx_task_set(self) -> bool {
        self.0 & RX_TASK_SET != 0
    }

    fn is_tx_task_set(self) -> bool {
        self.0 & TX_TASK_SET != 0
    }
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("is_complete", &self.is_complete())
            .field("is_closed", &self.is_closed())
            .field("is_rx_task_set", &self.is_rx_task_set())
            .field("is_tx_task_set", &self.is_tx_task_set())
            .finish()
    }
}

/// The allocation shared by both halves.
struct Inner<T> {
    state: AtomicUsize,
    /// The sent value; ownership moves per invariant 2.
    value: UnsafeCell<Option<T>>,
    /// The receiver's waker; access rules in invariant 3.
    rx_task: WakerSlot,
    /// The sender's `closed()` waker; access rules in invariant 4.
    tx_task: WakerSlot,
}

// SAFETY: the cells are only accessed under the state protocol (invariants
// 2-4), which never lets a write to a cell overlap another access to it. A
// `T` only ever moves from one thread to another and is never shared by
// reference, so `T: Send` suffices for both impls; `Waker` is `Send + Sync`.
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: see the `Send` impl above.
unsafe impl<T: Send> Sync for Inner<T> {}

/// One waker slot (`rx_task` or `tx_task`).
type WakerSlot = UnsafeCell<Option<Waker>>;

/// Wakes the waker stored in `slot`, if any.
///
/// # Safety
///
/// No one may write `slot` concurrently (invariant 3 or 4).
unsafe fn wake_slot(slot: &WakerSlot) {
    // The wake happens inside `with` so that loom tracks the whole read.
    slot.with(|p| {
        // SAFETY: the caller rules out a concurrent writer.
        if let Some(waker) = unsafe { &*p } {
            waker.wake_by_ref();
        }
    });
}

/// Whether the waker stored in `slot` would wake the same task as `waker`.
///
/// # Safety
///
/// No one may write `slot` concurrently (invariant 3 or 4).
unsafe fn slot_will_wake(slot: &WakerSlot, waker: &Waker) -> bool {
    // SAFETY: the caller rules out a concurrent writer.
    slot.with(|p| unsafe { &*p }.as_ref().is_some_and(|w| w.will_wake(waker)))
}

/// Stores a clone of `waker` in `slot`, dropping any previous one.
///
/// # Safety
///
/// The caller must have exclusive access to `slot` (invariant 3 or 4).
unsafe fn store_slot(slot: &WakerSlot, waker: &Waker) {
    let waker = waker.clone();
    // SAFETY: the caller guarantees exclusive access.
    slot.with_mut(|p| unsafe { *p = Some(waker) });
}

// ----- State transitions -------------------------------------------------
//
// Each returns the state *before* its change, which is what the caller must
// act on (see invariants 3 and 4).

impl<T> Inner<T> {
    fn load_state(&self) -> State {
        State(self.state.load(Ordering::Acquire))
    }

    /// Sender: mark the sender done, unless the receiver already closed.
    fn set_complete(&self) -> State {
        // Relaxed reads suffice here: on the early exit the sender only takes
        // back its own value and reads nothing the receiver wrote.
        let mut cur = self.state.load(Ordering::Relaxed);
        loop {
            // Invariant 1: after `CLOSED` the receiver may be inspecting the
            // state to decide whether to read `value`; setting `COMPLETE` now
            // would let it read a value the sender is about to take back.
            if State(cur).is_closed() {
                return State(cur);
            }
            match self.state.compare_exchange_weak(
                cur,
                cur | COMPLETE,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(prev) => return State(prev),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Receiver: forbid any future send.
    fn set_closed(&self) -> State {
        State(self.state.fetch_or(CLOSED, Ordering::AcqRel))
    }

    /// Receiver: publish the waker just written to `rx_task`.
    fn set_rx_task(&self) -> State {
        State(self.state.fetch_or(RX_TASK_SET, Ordering::AcqRel))
    }

    /// Receiver: take back write access to `rx_task`, if the sender has not
    /// completed in the meantime.
    fn unset_rx_task(&self) -> State {
        State(self.state.fetch_and(!RX_TASK_SET, Ordering::AcqRel))
    }

    /// Sender: publish the waker just written to `tx_task`.
    fn set_tx_task(&self) -> State {
        State(self.state.fetch_or(TX_TASK_SET, Ordering::AcqRel))
    }

    /// Sender: take back write access to `tx_task`, if the receiver has not
    /// closed in the meantime.
    fn unset_tx_task(&self) -> State {
        State(self.state.fetch_and(!TX_TASK_SET, Ordering::AcqRel))
    }
}

// ----- Protocol steps built on the transitions ---------------------------

impl<T> Inner<T> {
    /// Sender: finish (after storing a value, or on drop) and wake the
    /// receiver. Returns `false` if the receiver had already closed, in which
    /// case `COMPLETE` was not set and the sender still owns `value`.
    fn complete(&self) -> bool {
        let prev = self.set_complete();
        if prev.is_closed() {
            return false;
        }
        if prev.is_rx_task_set() {
            // SAFETY: invariant 3: our RMW set `COMPLETE` and saw
            // `RX_TASK_SET`, so the receiver will no longer write the slot.
            unsafe { wake_slot(&self.rx_task) };
        }
        true
    }

    /// Receiver: close the channel and wake a `closed()` waiter. Returns the
    /// state before closing.
    fn close(&self) -> State {
        let prev = self.set_closed();
        // Only the call that actually set `CLOSED` wakes: a repeated close has
        // nothing new to report, and the sender, seeing `CLOSED` on its next
        // registration attempt, completes by itself.
        if !prev.is_closed() && prev.is_tx_task_set() && !prev.is_complete() {
            // SAFETY: invariant 4: our RMW first set `CLOSED` and saw
            // `TX_TASK_SET` with `COMPLETE` clear, so the sender will no
            // longer write the slot.
            unsafe { wake_slot(&self.tx_task) };
        }
        prev
    }

    /// Receiver: take the value out of the channel.
    ///
    /// # Safety
    ///
    /// The caller must have observed `COMPLETE` (invariant 2).
    unsafe fn take_value(&self) -> Option<T> {
        // SAFETY: the caller guarantees the receiver owns `value`.
        self.value.with_mut(|slot| unsafe { (*slot).take() })
    }

    /// Receiver: whether a value is waiting.
    ///
    /// # Safety
    ///
    /// The caller must have observed `COMPLETE` (invariant 2).
    unsafe fn has_value(&self) -> bool {
        // SAFETY: the caller guarantees the receiver owns `value`.
        self.value.with(|slot| unsafe { (*slot).is_some() })
    }

    /// The receiver's result once the channel is finished, or `None` while a
    /// value may still arrive. Consumes the value if there is one.
    fn try_finish(&self, state: State) -> Option<Result<T, RecvError>> {
        if state.is_complete() {
            // SAFETY: invariant 2: `state` was observed with acquire ordering
            // and shows `COMPLETE`.
            Some(unsafe { self.take_value() }.ok_or(RecvError(())))
        } else if state.is_closed() {
            // Invariant 1: closed without complete is final.
            Some(Err(RecvError(())))
        } else {
            None
        }
    }

    /// Receiver: the body of `Receiver::poll`, without the budget.
    fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Result<T, RecvError>> {
        let mut state = self.load_state();
        if let Some(res) = self.try_finish(state) {
            return Poll::Ready(res);
        }

        if state.is_rx_task_set() {
            // SAFETY: invariant 3: only the receiver (us) ever writes the
            // slot, so nothing writes it while we read.
            if unsafe { slot_will_wake(&self.rx_task, cx.waker()) } {
                return Poll::Pending;
            }
            // A different task (or waker) is polling now: swap the waker.
            state = self.unset_rx_task();
            if state.is_complete() {
                // The sender may be waking the old waker right now, so leave
                // the slot alone; `Inner`'s drop frees it (invariant 6).
                // SAFETY: invariant 2: our acquire RMW showed `COMPLETE`.
                let value = unsafe { self.take_value() };
                return Poll::Ready(value.ok_or(RecvError(())));
            }
        }

        // SAFETY: invariant 3: `RX_TASK_SET` is clear (we just cleared it or
        // never set it) and we have not observed `COMPLETE`, so the sender
        // does not read the slot.
        unsafe { store_slot(&self.rx_task, cx.waker()) };
        state = self.set_rx_task();
        // The sender may have completed between our load and publishing the
        // waker, seeing no waker to wake; re-check so the wakeup is not lost.
        match self.try_finish(state) {
            Some(res) => Poll::Ready(res),
            None => Poll::Pending,
        }
    }

    /// Sender: the body of `Sender::poll_closed`, without the budget.
    fn poll_closed(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.load_state();
        if state.is_closed() {
            return Poll::Ready(());
        }

        if state.is_tx_task_set() {
            // SAFETY: invariant 4: only the sender (us) ever writes the
            // slot, so nothing writes it while we read.
            if unsafe { slot_will_wake(&self.tx_task, cx.waker()) } {
                return Poll::Pending;
            }
            state = self.unset_tx_task();
            if state.is_closed() {
                // The receiver may be waking the old waker right now; leave
                // the slot alone (invariant 6 frees it).
                return Poll::Ready(());
            }
        }

        // SAFETY: invariant 4: `TX_TASK_SET` is clear (we just cleared it or
        // never set it) and we have not observed `CLOSED`, so the receiver
        // does not read the slot.
        unsafe { store_slot(&self.tx_task, cx.waker()) };
        state = self.set_tx_task();
        // Re-check: the receiver may have closed before seeing our waker.
        if state.is_closed() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl<T> fmt::Debug for Inner<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inner")
            .field("state", &self.load_state())
            .finish_non_exhaustive()
    }
}

// ----- Public API ---------------------------------------------------------

/// Creates a new oneshot channel, returning the sender and receiver halves.
///
/// The [`Sender`] sends at most one value; the [`Receiver`] is a future that
/// resolves to it, or to [`RecvError`] if the sender is dropped first.
///
/// # Examples
///
/// ```
/// use weft::sync::oneshot;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let (tx, rx) = oneshot::channel();
///
///     weft::spawn(async move {
///         if tx.send(3).is_err() {
///             println!("the receiver dropped");
///         }
///     });
///
///     match rx.await {
///         Ok(v) => assert_eq!(v, 3),
///         Err(_) => panic!("the sender dropped"),
///     }
///
///     // A sender dropped without sending closes the channel.
///     let (tx, rx) = oneshot::channel::<u32>();
///     weft::spawn(async move { drop(tx) });
///     assert!(rx.await.is_err());
/// });
/// ```
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let inner = Arc::new(Inner {
        state: AtomicUsize::new(0),
        value: UnsafeCell::new(None),
        rx_task: UnsafeCell::new(None),
        tx_task: UnsafeCell::new(None),
    });
    let tx = Sender {
        inner: Some(inner.clone()),
    };
    let rx = Receiver { inner: Some(inner) };
    (tx, rx)
}

/// Sends a value to the associated [`Receiver`].
///
/// Created by [`channel`]. Dropping the sender without sending wakes the
/// receiver, which then resolves to [`RecvError`].
pub struct Sender<T> {
    /// `None` only inside `send`, after which the sender no longer exists;
    /// the `Option` lets `send` stop `Drop` from completing a second time.
    inner: Option<Arc<Inner<T>>>,
}

/// Receives a value from the associated [`Sender`].
///
/// Created by [`channel`]. There is no `recv` method: the receiver is itself
/// a future, so `.await` it to get a `Result<T, RecvError>`. It resolves to
/// [`RecvError`] if the sender is dropped without sending, or if
/// [`close`](Receiver::close) was called before a value arrived.
///
/// Polling may return `Pending` spuriously even when a value is available,
/// when the task has used up its cooperative budget; the task is woken to
/// try again, and the value is not lost.
///
/// # Cancel safety
///
/// Awaiting the receiver (for example `&mut rx` in a `select!` branch) is
/// cancel safe: if the await is abandoned before it completes, no value has
/// been taken from the channel, and awaiting again still receives it.
pub struct Receiver<T> {
    /// `None` once the receiver has produced its final result
    /// (see [`Receiver::is_terminated`]).
    inner: Option<Arc<Inner<T>>>,
}

impl<T> Sender<T> {
    fn inner(&self) -> &Inner<T> {
        self.inner
            .as_deref()
            .expect("oneshot::Sender used after send")
    }

    /// Sends `value` to the receiver, consuming the sender.
    ///
    /// Returns `Err(value)` if the receiver was dropped or closed, giving the
    /// value back. An `Ok` means the value is in the channel, not that the
    /// receiver will take it: the receiver may still be dropped first, in
    /// which case the value is dropped with it.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::oneshot;
    ///
    /// let (tx, rx) = oneshot::channel();
    /// drop(rx);
    /// assert_eq!(tx.send("hello"), Err("hello"));
    /// ```
    pub fn send(mut self, value: T) -> Result<(), T> {
        let inner = self.inner.take().expect("oneshot::Sender used after send");

        // SAFETY: invariant 2: `COMPLETE` is not set (only we set it, and we
        // have not yet), so the sender owns `value`.
        inner.value.with_mut(|slot| unsafe { *slot = Some(value) });

        if inner.complete() {
            Ok(())
        } else {
            // SAFETY: invariant 2: `complete` found `CLOSED` and did not set
            // `COMPLETE`, so the sender still owns `value`.
            let value = inner.value.with_mut(|slot| unsafe { (*slot).take() });
            Err(value.expect("value was just stored"))
        }
    }

    /// Returns `true` if the receiver has been dropped or closed, so a
    /// [`send`](Sender::send) would fail.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::oneshot;
    ///
    /// let (tx, rx) = oneshot::channel::<()>();
    /// assert!(!tx.is_closed());
    /// drop(rx);
    /// assert!(tx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.inner().load_state().is_closed()
    }

    /// Waits until the receiver is dropped or closed.
    ///
    /// Useful to abandon computing a value nobody will receive.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::oneshot;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (mut tx, rx) = oneshot::channel::<()>();
    ///     weft::spawn(async move { drop(rx) });
    ///     tx.closed().await;
    ///     assert!(tx.is_closed());
    /// });
    /// ```
    pub async fn closed(&mut self) {
        std::future::poll_fn(|cx| self.poll_closed(cx)).await
    }

    /// Polls whether the receiver has been dropped or closed.
    ///
    /// Returns `Ready(())` once it has; otherwise registers `cx`'s waker to be
    /// woken when it happens. Only the waker from the most recent call is
    /// woken. Counts against the task's cooperative budget, so it may return
    /// `Pending` (and wake the task) to let other tasks run.
    pub fn poll_closed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let coop = ready!(crate::coop::poll_proceed(cx));
        let res = self.inner().poll_closed(cx);
        if res.is_ready() {
            coop.made_progress();
        }
        res
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        // After `send`, `inner` is `None` and there is nothing left to do.
        if let Some(inner) = self.inner.as_ref() {
            inner.complete();
        }
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("inner", &self.inner)
            .finish()
    }
}

impl<T> Receiver<T> {
    /// Closes the channel without dropping the receiver.
    ///
    /// Any later [`send`](Sender::send) fails, and the sender's
    /// [`closed`](Sender::closed) completes. A value sent before the close
    /// can still be taken with [`try_recv`](Receiver::try_recv) (or by
    /// awaiting the receiver). Closing an already closed or finished receiver
    /// does nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::oneshot::{self, error::TryRecvError};
    ///
    /// let (tx, mut rx) = oneshot::channel();
    /// rx.close();
    /// assert!(tx.send("never received").is_err());
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    ///
    /// let (tx, mut rx) = oneshot::channel();
    /// tx.send("received").unwrap();
    /// rx.close();
    /// assert_eq!(rx.try_recv(), Ok("received"));
    /// ```
    pub fn close(&mut self) {
        if let Some(inner) = self.inner.as_ref() {
            inner.close();
        }
    }

    /// Attempts to receive the value without waiting.
    ///
    /// Returns [`TryRecvError::Empty`] if no value has been sent yet and the
    /// sender is alive, and [`TryRecvError::Closed`] if no value will ever
    /// arrive (sender dropped, channel closed, or value already taken). Does
    /// not register the task for a wakeup, so it works outside async code.
    /// After `Ok` or `Closed` the receiver is terminated.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::oneshot::{self, error::TryRecvError};
    ///
    /// let (tx, mut rx) = oneshot::channel();
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    /// tx.send(7).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(7));
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    /// ```
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let Some(inner) = self.inner.as_ref() else {
            return Err(TryRecvError::Closed);
        };
        let res = match inner.try_finish(inner.load_state()) {
            Some(res) => res.map_err(|RecvError(())| TryRecvError::Closed),
            None => return Err(TryRecvError::Empty),
        };
        self.inner = None;
        res
    }

    /// Returns `true` if this receiver has produced its final result, either
    /// by resolving as a future or through [`try_recv`](Receiver::try_recv)
    /// returning `Ok` or `Closed`. A terminated receiver must not be polled
    /// again.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::oneshot;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = oneshot::channel();
    ///     assert!(!rx.is_terminated());
    ///     tx.send(1).unwrap();
    ///     assert_eq!((&mut rx).await, Ok(1));
    ///     assert!(rx.is_terminated());
    /// });
    /// ```
    pub fn is_terminated(&self) -> bool {
        self.inner.is_none()
    }

    /// Returns `true` if there is no value waiting to be received: nothing
    /// has been sent yet, the sender was dropped without sending, or the
    /// value was already taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::oneshot;
    ///
    /// let (tx, mut rx) = oneshot::channel();
    /// assert!(rx.is_empty());
    /// tx.send(1).unwrap();
    /// assert!(!rx.is_empty());
    /// rx.try_recv().unwrap();
    /// assert!(rx.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        let Some(inner) = self.inner.as_ref() else {
            return true;
        };
        let state = inner.load_state();
        // SAFETY: invariant 2: `state` was loaded with acquire ordering and
        // shows `COMPLETE`, so the receiver owns `value`.
        !(state.is_complete() && unsafe { inner.has_value() })
    }

    /// Blocks the current thread until the value arrives.
    ///
    /// For use from synchronous code, for example to hand a result from an
    /// async task to a plain thread. Returns [`RecvError`] if the sender is
    /// dropped without sending.
    ///
    /// # Panics
    ///
    /// Will panic if called from inside an asynchronous execution context,
    /// where blocking the thread would stall the runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::oneshot;
    ///
    /// let (tx, rx) = oneshot::channel();
    /// let t = std::thread::spawn(move || rx.blocking_recv());
    /// tx.send(10).unwrap();
    /// assert_eq!(t.join().unwrap(), Ok(10));
    /// ```
    #[track_caller]
    pub fn blocking_recv(self) -> Result<T, RecvError> {
        super::blocking_wait::block_on("oneshot::Receiver::blocking_recv", "rx.await", self)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.as_ref() {
            let prev = inner.close();
            if prev.is_complete() {
                // Drop an unreceived value now rather than when the sender's
                // `Arc` goes, so its resources are released promptly.
                // SAFETY: invariant 2: `prev` came from an acquire RMW and
                // shows `COMPLETE`.
                drop(unsafe { inner.take_value() });
            }
        }
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, RecvError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self
            .inner
            .as_ref()
            .expect("oneshot::Receiver polled after completion");
        let coop = ready!(crate::coop::poll_proceed(cx));
        let res = ready!(inner.poll_recv(cx));
        coop.made_progress();
        self.inner = None;
        Poll::Ready(res)
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("inner", &self.inner)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
