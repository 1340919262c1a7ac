//! The state shared by every handle of one channel, and the operations on it.
//!
//! The invariants this file maintains are stated once in the parent module's
//! doc (`mpsc/mod.rs`, "Invariants"); comments below refer to them by number.

use std::collections::VecDeque;
use std::fmt;
use std::future::poll_fn;
use std::pin::pin;
use std::task::{ready, Context, Poll, Waker};

use super::error::TrySendError;
use crate::loom::{lock, AtomicBool, AtomicUsize, Mutex, MutexGuard, Ordering};
use crate::sync::semaphore::Semaphore;
use crate::sync::wait_list::WaitList;
use crate::sync::{AcquireError, TryAcquireError};

/// The allocation shared by all handles (behind one `Arc`).
pub(super) struct Chan<T> {
    /// The message queue and everything else mutable (invariant 1).
    state: Mutex<State<T>>,
    /// The free slots of a bounded channel, as permits (invariant 2);
    /// `None` for an unbounded channel. On cache lines of its own: senders
    /// and the receiver update it once per message, and sharing a line with
    /// the queue's lock would make every lock operation disturb it too.
    slots: Option<Padded<Semaphore>>,
    /// Live `Sender`s / `UnboundedSender`s (strong handles, permits hold one).
    tx_count: AtomicUsize,
    /// Live `WeakSender`s / `WeakUnboundedSender`s. Only reported (by the
    /// `weak_count` methods): nothing is ever decided on it, so it needs no
    /// ordering with anything else (invariant 1).
    weak_count: AtomicUsize,
    /// Mirror of `State::rx_closed`, written under the lock, read without it.
    rx_closed: AtomicBool,
    /// `Some(cap)` for a bounded channel.
    bound: Option<usize>,
}

struct State<T> {
    /// Messages sent and not yet taken by the receiver, which moves them all
    /// at once into its own batch (invariant 3).
    queue: VecDeque<T>,
    /// The receiver's waker, taken by whoever wakes it.
    rx_waker: Option<Waker>,
    /// Tasks in `Sender::closed()`.
    closed_waiters: WaitList<Waiter>,
    /// The receiver closed or dropped (invariant 4).
    rx_closed: bool,
    /// The last sender dropped (invariant 4).
    tx_closed: bool,
}

/// A value alone on its cache line (128 bytes: adjacent-line prefetching
/// pairs 64-byte lines on common x86 parts).
#[repr(align(128))]
struct Padded<T>(T);

/// The outcome of [`Chan::refill`].
#[must_use]
pub(super) enum Refill {
    /// The batch now holds every message that was queued.
    Refilled,
    /// Nothing queued yet (the waker, if given, is registered).
    Empty,
    /// Nothing queued, and nothing ever will be.
    Ended,
}

/// A task's entry in `State::closed_waiters`, a crate-level [`WaitList`].
/// An entry is queued (linked) exactly while it is `Waiting`: the receiver's
/// close unlinks it and records the outcome here, and the future holding its
/// key reads the outcome and `remove`s it.
#[derive(Debug)]
enum Waiter {
    /// Parked, with the waker to wake when the receiver closes.
    Waiting(Waker),
    /// The receiver closed; the waiter has not yet observed this.
    Closed,
}

/// The transitions of [`Waiter`] entries.
impl WaitList<Waiter> {
    /// Parks a new waiter at the back of the queue and returns its key.
    fn push_waiting(&mut self, waker: Waker) -> usize {
        self.push_back(Waiter::Waiting(waker))
    }

    /// Replaces the waker of a `Waiting` waiter unless it would wake the same
    /// task; returns the old waker so the caller drops it after unlocking.
    fn update_waker(&mut self, key: usize, waker: &Waker) -> Option<Waker> {
        match self.get_mut(key) {
            Waiter::Waiting(w) if !w.will_wake(waker) => Some(std::mem::replace(w, waker.clone())),
            _ => None,
        }
    }

    /// Moves every waiter to `Closed`, pushing their wakers onto `wakers`.
    fn close_all(&mut self, wakers: &mut Vec<Waker>) {
        while let Some(key) = self.pop_front() {
            match std::mem::replace(self.get_mut(key), Waiter::Closed) {
                Waiter::Waiting(waker) => wakers.push(waker),
                Waiter::Closed => unreachable!("a queued waiter is always waiting"),
            }
        }
    }
}

impl<T> Chan<T> {
    #[track_caller]
    pub(super) fn new(bound: Option<usize>) -> Chan<T> {
        let queue = match bound {
            Some(cap) => VecDeque::with_capacity(cap.min(256)),
            None => VecDeque::with_capacity(32),
        };
        let slots = bound.map(|cap| {
            assert!(
                cap <= Semaphore::MAX_PERMITS,
                "mpsc bounded channel requires buffer <= Semaphore::MAX_PERMITS ({}), got {cap}",
                Semaphore::MAX_PERMITS
            );
            Padded(Semaphore::new(cap))
        });
        Chan {
            state: Mutex::new(State {
                queue,
                rx_waker: None,
                closed_waiters: WaitList::new(),
                rx_closed: false,
                tx_closed: false,
            }),
            slots,
            tx_count: AtomicUsize::new(1),
            weak_count: AtomicUsize::new(0),
            rx_closed: AtomicBool::new(false),
            bound,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        lock(&self.state)
    }

    /// The slot semaphore of a bounded channel.
    fn slots(&self) -> &Semaphore {
        &self.slots.as_ref().expect("bounded channel").0
    }

    // ----- Sender handles --------------------------------------------------

    /// A new strong sender handle from an existing one.
    pub(super) fn tx_clone(&self) {
        // Relaxed: the caller's own handle keeps the count above zero.
        self.tx_count.fetch_add(1, Ordering::Relaxed);
    }

    /// A new strong sender from a weak one; fails once the count hit zero.
    pub(super) fn tx_upgrade(&self) -> bool {
        let mut n = self.tx_count.load(Ordering::Relaxed);
        loop {
            if n == 0 {
                // Invariant 4: zero is final.
                return false;
            }
            match self
                .tx_count
                .compare_exchange_weak(n, n + 1, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(actual) => n = actual,
            }
        }
    }

    /// A strong sender handle went away; the last one closes the channel.
    pub(super) fn tx_drop(&self) {
        if self.tx_count.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let waker = {
            let mut st = self.lock();
            st.tx_closed = true;
            st.rx_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    pub(super) fn tx_count(&self) -> usize {
        self.tx_count.load(Ordering::Acquire)
    }

    /// A weak sender handle was made (by `downgrade` or a clone).
    pub(super) fn weak_clone(&self) {
        self.weak_count.fetch_add(1, Ordering::Relaxed);
    }

    /// A weak sender handle went away.
    pub(super) fn weak_drop(&self) {
        self.weak_count.fetch_sub(1, Ordering::Relaxed);
    }

    pub(super) fn weak_count(&self) -> usize {
        self.weak_count.load(Ordering::Relaxed)
    }

    /// Whether sends fail: the receiver closed or dropped.
    pub(super) fn is_rx_closed(&self) -> bool {
        self.rx_closed.load(Ordering::Acquire)
    }

    /// The receiver's view: closed by `close`, or every sender gone.
    pub(super) fn is_closed_for_rx(&self) -> bool {
        self.is_rx_closed() || self.tx_count() == 0
    }

    pub(super) fn max_capacity(&self) -> usize {
        self.bound.expect("bounded channel")
    }

    /// Free slots of a bounded channel.
    pub(super) fn capacity(&self) -> usize {
        self.slots().available_permits()
    }

    /// Messages in the shared queue (the receiver adds its own batch).
    pub(super) fn queued(&self) -> usize {
        self.lock().queue.len()
    }

    // ----- Sending ---------------------------------------------------------

    /// Unbounded send: push unless the receiver is closed.
    pub(super) fn send_unbounded(&self, value: T) -> Result<(), T> {
        let waker = {
            let mut st = self.lock();
            if st.rx_closed {
                drop(st);
                return Err(value);
            }
            st.queue.push_back(value);
            st.rx_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Bounded: send if a slot is free right now.
    pub(super) fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        match self.try_reserve() {
            Ok(()) => {
                self.send_reserved(value);
                Ok(())
            }
            Err(true) => Err(TrySendError::Closed(value)),
            Err(false) => Err(TrySendError::Full(value)),
        }
    }

    /// Bounded: take a free slot for a permit if one is free right now.
    /// `Err(true)` means closed, `Err(false)` full. A waiting sender is never
    /// overtaken: the semaphore keeps no free permit while anyone waits.
    pub(super) fn try_reserve(&self) -> Result<(), bool> {
        self.try_reserve_many(1)
    }

    /// Bounded: `try_reserve` for `n` slots at once (all or none).
    pub(super) fn try_reserve_many(&self, n: usize) -> Result<(), bool> {
        match self.slots().try_acquire_raw(n) {
            Ok(()) => Ok(()),
            Err(TryAcquireError::Closed) => Err(true),
            Err(TryAcquireError::NoPermits) => Err(false),
        }
    }

    /// Bounded: one slot, served in FIFO order, failing once the receiver
    /// closes. Spends the budget when it completes. Cancel-safe: a slot
    /// granted to a dropped future goes back, to the next waiter or (after
    /// `close`) towards the end of the channel, whose receiver is then woken
    /// like for an unused permit (invariant 7).
    pub(super) async fn reserve(&self) -> Result<(), AcquireError> {
        self.reserve_many(1).await
    }

    /// Bounded: `reserve` for `n` slots at once (all or none, in one place
    /// in the queue). The caller checks `n <= cap`, else it would wait
    /// forever.
    pub(super) async fn reserve_many(&self, n: usize) -> Result<(), AcquireError> {
        /// Wakes a closed receiver if the reservation is dropped unfinished.
        struct OnCancel<'a, T> {
            chan: &'a Chan<T>,
            armed: bool,
        }
        impl<T> Drop for OnCancel<'_, T> {
            fn drop(&mut self) {
                if self.armed {
                    self.chan.wake_closed_rx();
                }
            }
        }
        let mut on_cancel = OnCancel {
            chan: self,
            armed: true,
        };
        // Dropped before `on_cancel` (declared after it), and at the end
        // of this block when it completes: either way the slots it held
        // are back in the semaphore before the receiver is woken.
        let res = {
            let mut acquire = pin!(self.slots().acquire_raw(n));
            acquire.as_mut().await
        };
        on_cancel.armed = false;
        if res.is_err() {
            // A failed acquire gave back what was assigned to it (semaphore
            // invariant 6): the channel may be idle now.
            self.wake_closed_rx();
        }
        res
    }

    /// Bounded: a permit's slot receives `value`, even with the receiver
    /// gone (invariant 6).
    pub(super) fn send_reserved(&self, value: T) {
        let waker = {
            let mut st = self.lock();
            st.queue.push_back(value);
            st.rx_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Bounded: a permit was dropped unused; return its slot.
    pub(super) fn release_reserved(&self) {
        self.release_reserved_many(1);
    }

    /// Bounded: `n` unused permits were dropped at once.
    pub(super) fn release_reserved_many(&self, n: usize) {
        if n == 0 {
            return;
        }
        self.slots().release(n);
        self.wake_closed_rx();
    }

    /// A slot came back without a message. A closed receiver waits for
    /// every outstanding slot before it reports the end of the channel:
    /// wake it once the last one is back (as Tokio's; earlier wake-ups
    /// would only find slots still out). The release comes before this
    /// check, so whoever returns the last slot sees every slot back.
    /// Taking its waker under the lock orders this after the release and
    /// after the receiver's check (invariant 7).
    fn wake_closed_rx(&self) {
        if self
            .bound
            .is_some_and(|cap| self.slots().available_permits() < cap)
        {
            return;
        }
        let waker = {
            let mut st = self.lock();
            if st.rx_closed {
                st.rx_waker.take()
            } else {
                None
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    // ----- Sender::closed --------------------------------------------------

    /// Waits for the receiver to close; `key` is this waiter's slot.
    fn poll_closed(&self, cx: &mut Context<'_>, key: &mut Option<usize>) -> Poll<()> {
        let mut old = None;
        let res = {
            let mut st = self.lock();
            if st.rx_closed {
                if let Some(k) = key.take() {
                    old = Some(st.closed_waiters.remove(k));
                }
                Poll::Ready(())
            } else {
                match *key {
                    Some(k) => {
                        if let Some(w) = st.closed_waiters.update_waker(k, cx.waker()) {
                            old = Some(Waiter::Waiting(w));
                        }
                    }
                    None => *key = Some(st.closed_waiters.push_waiting(cx.waker().clone())),
                }
                Poll::Pending
            }
        };
        drop(old);
        res
    }

    /// A `closed()` future was dropped while registered.
    fn cancel_closed(&self, key: usize) {
        let removed = self.lock().closed_waiters.remove(key);
        drop(removed);
    }

    /// The body of `Sender::closed` / `UnboundedSender::closed`. Budgeted.
    pub(super) async fn closed(&self) {
        /// Deregisters the waiter if the future is dropped while waiting.
        struct Guard<'a, T> {
            chan: &'a Chan<T>,
            key: Option<usize>,
        }
        impl<T> Drop for Guard<'_, T> {
            fn drop(&mut self) {
                if let Some(key) = self.key.take() {
                    self.chan.cancel_closed(key);
                }
            }
        }
        let mut guard = Guard {
            chan: self,
            key: None,
        };
        poll_fn(|cx| {
            let coop = ready!(crate::coop::poll_proceed(cx));
            let res = guard.chan.poll_closed(cx, &mut guard.key);
            if res.is_ready() {
                coop.made_progress();
            }
            res
        })
        .await
    }

    // ----- Receiving -------------------------------------------------------

    /// Lock held: whether the channel has ended for the receiver, given that
    /// the queue and the receiver's batch are empty.
    fn is_finished_locked(&self, st: &State<T>) -> bool {
        // With outstanding permits a closed channel may still get messages.
        st.tx_closed
            || (st.rx_closed
                && self
                    .slots
                    .as_ref()
                    .is_none_or(|s| s.0.available_permits() == self.max_capacity()))
    }

    /// The receiver's batch is empty: move the whole shared queue into it
    /// (one lock for many messages, invariant 3). With nothing there and the
    /// channel not ended, `waker` (if any) is registered to be woken by the
    /// next change (invariant 7).
    pub(super) fn refill(&self, batch: &mut VecDeque<T>, waker: Option<&Waker>) -> Refill {
        debug_assert!(batch.is_empty());
        let mut old = None;
        let res = {
            let mut st = self.lock();
            if !st.queue.is_empty() {
                std::mem::swap(&mut st.queue, batch);
                Refill::Refilled
            } else if self.is_finished_locked(&st) {
                Refill::Ended
            } else {
                if let Some(waker) = waker {
                    match &st.rx_waker {
                        Some(w) if w.will_wake(waker) => {}
                        _ => old = st.rx_waker.replace(waker.clone()),
                    }
                }
                Refill::Empty
            }
        };
        drop(old);
        res
    }

    /// `n` messages left the receiver's batch: their slots are free again
    /// (invariant 2), for the oldest waiting sender first.
    pub(super) fn release_received(&self, n: usize) {
        if let Some(Padded(slots)) = &self.slots {
            slots.release(n);
        }
    }

    /// `Receiver::close`: no new sends; waiting senders fail (invariant 4).
    pub(super) fn close_rx(&self) {
        // First the semaphore, so that no send succeeds once `is_closed`
        // says true. Senders already granted a slot keep it, like permits
        // (Tokio's rule): closing it fails only those still waiting.
        if let Some(Padded(slots)) = &self.slots {
            slots.close();
        }
        let mut wakers = Vec::new();
        {
            let mut st = self.lock();
            if st.rx_closed {
                return;
            }
            st.rx_closed = true;
            self.rx_closed.store(true, Ordering::Release);
            st.closed_waiters.close_all(&mut wakers);
        }
        for w in wakers {
            w.wake();
        }
    }

    /// The receiver is dropped with `batch` unreceived: close, fail every
    /// waiter, and drop the buffered messages (invariant 6).
    pub(super) fn drop_rx(&self, batch: VecDeque<T>) {
        if let Some(Padded(slots)) = &self.slots {
            slots.close();
        }
        let mut wakers = Vec::new();
        let (queue, rx_waker) = {
            let mut st = self.lock();
            st.rx_closed = true;
            self.rx_closed.store(true, Ordering::Release);
            st.closed_waiters.close_all(&mut wakers);
            (std::mem::take(&mut st.queue), st.rx_waker.take())
        };
        self.release_received(queue.len() + batch.len());
        for w in wakers {
            w.wake();
        }
        drop(rx_waker);
        drop(queue);
        drop(batch);
    }
}

impl<T> fmt::Debug for Chan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chan")
            .field("tx_count", &self.tx_count())
            .field("rx_closed", &self.is_rx_closed())
            .field("bound", &self.bound)
            .finish_non_exhaustive()
    }
}

// A channel's queue and waiters stay consistent across a panic caught
// around a send or receive (its locks shrug off poisoning), whatever `T`
// is: so every channel handle is unwind safe, as Tokio's.
impl<T> std::panic::UnwindSafe for Chan<T> {}
impl<T> std::panic::RefUnwindSafe for Chan<T> {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn waiter_close_all_in_order_and_key_reuse() {
        let (a_count, wa) = super::super::test_support::CountWaker::new();
        let mut list = WaitList::new();
        let a = list.push_waiting(wa);
        let b = list.push_waiting(Waker::noop().clone());
        assert!(matches!(list.remove(b), Waiter::Waiting(_)));
        // The freed slot is reused.
        let c = list.push_waiting(Waker::noop().clone());
        assert_eq!(c, b);
        let mut wakers = Vec::new();
        list.close_all(&mut wakers);
        assert_eq!(wakers.len(), 2);
        wakers.remove(0).wake();
        assert_eq!(a_count.count(), 1);
        assert!(list.is_empty());
        assert!(matches!(list.remove(a), Waiter::Closed));
        assert!(matches!(list.remove(c), Waiter::Closed));
    }

    #[test]
    fn waiter_update_waker_replaces_only_different() {
        let (_, wa) = super::super::test_support::CountWaker::new();
        let (_, wb) = super::super::test_support::CountWaker::new();
        let mut list = WaitList::new();
        let a = list.push_waiting(wa.clone());
        assert!(list.update_waker(a, &wa).is_none());
        assert!(list.update_waker(a, &wb).is_some());
        assert!(list.update_waker(a, &wb).is_none());
    }
}
