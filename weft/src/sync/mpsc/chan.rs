//! The state shared by every handle of one channel, and the operations on it.
//!
//! The invariants this file maintains are stated once in the parent module's
//! doc (`mpsc/mod.rs`, "Invariants"); comments below refer to them by number.

use std::collections::VecDeque;
use std::fmt;
use std::future::poll_fn;
use std::task::{ready, Context, Poll, Waker};

use super::error::TrySendError;
use crate::loom::{lock, AtomicBool, AtomicUsize, Mutex, MutexGuard, Ordering};
use crate::sync::wait_list::WaitList;

/// The allocation shared by all handles (behind one `Arc`).
pub(super) struct Chan<T> {
    /// Everything mutable (invariant 1).
    state: Mutex<State<T>>,
    /// Live `Sender`s / `UnboundedSender`s (strong handles, permits hold one).
    tx_count: AtomicUsize,
    /// Mirror of `State::rx_closed`, written under the lock, read without it.
    rx_closed: AtomicBool,
    /// `Some(cap)` for a bounded channel.
    bound: Option<usize>,
}

struct State<T> {
    queue: VecDeque<T>,
    /// The receiver's waker, taken by whoever wakes it.
    rx_waker: Option<Waker>,
    /// Free slots not assigned to anyone (bounded only; invariant 2).
    permits: usize,
    /// Slots held by permits or granted to waiting senders (invariant 2).
    reserved: usize,
    /// Senders waiting for capacity (invariant 3).
    senders: WaitList<Waiter>,
    /// Tasks in `Sender::closed()`.
    closed_waiters: WaitList<Waiter>,
    /// The receiver closed or dropped (invariant 4).
    rx_closed: bool,
    /// The receiver dropped (invariant 6).
    rx_dropped: bool,
    /// The last sender dropped (invariant 4).
    tx_closed: bool,
}

/// A parked task's entry in `State::senders` or `State::closed_waiters`, two
/// crate-level [`WaitList`]s. An entry is queued (linked) exactly while it is
/// `Waiting`: whoever serves it unlinks it and records the outcome here, and
/// the future holding its key reads the outcome and `remove`s it.
#[derive(Debug)]
enum Waiter {
    /// Parked, with the waker to wake when its turn comes.
    Waiting(Waker),
    /// Its turn came (a sender was handed a slot of capacity); it has not yet
    /// observed this.
    Granted,
    /// The channel closed while it waited; it has not yet observed this.
    Closed,
}

/// The transitions of [`Waiter`] entries, for the lists in `State`.
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

    /// Moves the oldest waiting waiter to `Granted` and returns its waker.
    fn grant_front(&mut self) -> Option<Waker> {
        let key = self.pop_front()?;
        match std::mem::replace(self.get_mut(key), Waiter::Granted) {
            Waiter::Waiting(waker) => Some(waker),
            _ => unreachable!("a queued waiter is always waiting"),
        }
    }

    /// Moves every `Waiting` waiter, and also every `Granted` one if
    /// `granted_too`, to `Closed`. Pushes the wakers of the waiting ones onto
    /// `wakers` and returns how many granted ones were closed.
    fn close_all(&mut self, granted_too: bool, wakers: &mut Vec<Waker>) -> usize {
        while let Some(key) = self.pop_front() {
            match std::mem::replace(self.get_mut(key), Waiter::Closed) {
                Waiter::Waiting(waker) => wakers.push(waker),
                _ => unreachable!("a queued waiter is always waiting"),
            }
        }
        let mut granted = 0;
        if granted_too {
            self.for_each_allocated(|w| {
                if let Waiter::Granted = w {
                    *w = Waiter::Closed;
                    granted += 1;
                }
            });
        }
        granted
    }
}

/// Wakers collected under the lock, woken after it is released (invariant 5).
#[derive(Default)]
struct Wake {
    one: Option<Waker>,
    many: Vec<Waker>,
}

impl Wake {
    fn push(&mut self, waker: Option<Waker>) {
        if let Some(w) = waker {
            if self.one.is_none() {
                self.one = Some(w);
            } else {
                self.many.push(w);
            }
        }
    }

    fn wake(self) {
        if let Some(w) = self.one {
            w.wake();
        }
        for w in self.many {
            w.wake();
        }
    }
}

impl<T> Chan<T> {
    pub(super) fn new(bound: Option<usize>) -> Chan<T> {
        let queue = match bound {
            Some(cap) => VecDeque::with_capacity(cap.min(256)),
            None => VecDeque::with_capacity(32),
        };
        Chan {
            state: Mutex::new(State {
                queue,
                rx_waker: None,
                permits: bound.unwrap_or(0),
                reserved: 0,
                senders: WaitList::new(),
                closed_waiters: WaitList::new(),
                rx_closed: false,
                rx_dropped: false,
                tx_closed: false,
            }),
            tx_count: AtomicUsize::new(1),
            rx_closed: AtomicBool::new(false),
            bound,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        lock(&self.state)
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
        self.lock().permits
    }

    /// Messages waiting in the queue.
    pub(super) fn len(&self) -> usize {
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
        let waker = {
            let mut st = self.lock();
            if st.rx_closed {
                drop(st);
                return Err(TrySendError::Closed(value));
            }
            if st.permits == 0 {
                drop(st);
                return Err(TrySendError::Full(value));
            }
            // Invariant 3: free permits mean nobody is queued ahead of us.
            debug_assert!(st.senders.is_empty());
            st.permits -= 1;
            st.queue.push_back(value);
            st.rx_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Bounded: take a free slot for a permit if one is free right now.
    /// `Err(true)` means closed, `Err(false)` full.
    pub(super) fn try_reserve(&self) -> Result<(), bool> {
        let mut st = self.lock();
        if st.rx_closed {
            return Err(true);
        }
        if st.permits == 0 {
            return Err(false);
        }
        st.permits -= 1;
        st.reserved += 1;
        Ok(())
    }

    /// Bounded, lock held: make progress on acquiring one slot for the waiter
    /// whose key is in `key` (`None` before its first attempt). On `Ready(Ok)`
    /// the slot is counted in `reserved` and belongs to the caller. A waker
    /// displaced by a newer one is put in `old` to be dropped after unlocking.
    fn poll_acquire_locked(
        st: &mut State<T>,
        key: &mut Option<usize>,
        waker: &Waker,
        old: &mut Option<Waker>,
    ) -> Poll<Result<(), ()>> {
        if let Some(k) = *key {
            return match st.senders.get(k) {
                Waiter::Waiting(_) => {
                    *old = st.senders.update_waker(k, waker);
                    Poll::Pending
                }
                Waiter::Granted => {
                    // The slot was counted in `reserved` when granted.
                    st.senders.remove(k);
                    *key = None;
                    Poll::Ready(Ok(()))
                }
                Waiter::Closed => {
                    st.senders.remove(k);
                    *key = None;
                    Poll::Ready(Err(()))
                }
            };
        }
        if st.rx_closed {
            return Poll::Ready(Err(()));
        }
        if st.permits > 0 {
            // Invariant 3: free permits mean nobody is queued ahead of us.
            debug_assert!(st.senders.is_empty());
            st.permits -= 1;
            st.reserved += 1;
            return Poll::Ready(Ok(()));
        }
        *key = Some(st.senders.push_waiting(waker.clone()));
        Poll::Pending
    }

    /// Bounded: acquire one slot for a permit.
    pub(super) fn poll_reserve(
        &self,
        cx: &mut Context<'_>,
        key: &mut Option<usize>,
    ) -> Poll<Result<(), ()>> {
        let mut old = None;
        let res = {
            let mut st = self.lock();
            Self::poll_acquire_locked(&mut st, key, cx.waker(), &mut old)
        };
        drop(old);
        res
    }

    /// Bounded: acquire one slot and push `value` into it, in one lock.
    /// `value` is taken on success; on `Err` it is left for the caller.
    pub(super) fn poll_send(
        &self,
        cx: &mut Context<'_>,
        key: &mut Option<usize>,
        value: &mut Option<T>,
    ) -> Poll<Result<(), ()>> {
        let mut old = None;
        let mut rejected = None;
        let (res, waker) = {
            let mut st = self.lock();
            match Self::poll_acquire_locked(&mut st, key, cx.waker(), &mut old) {
                Poll::Ready(Ok(())) => {
                    let v = value.take().expect("send polled after completion");
                    rejected = Self::push_reserved_locked(&mut st, v);
                    (Poll::Ready(Ok(())), st.rx_waker.take())
                }
                other => (other, None),
            }
        };
        drop(old);
        if let Some(w) = waker {
            w.wake();
        }
        // A granted slot used after the receiver dropped: the message is
        // dropped, as it would have been with the receiver (invariant 6).
        drop(rejected);
        res
    }

    /// Lock held: move a reserved slot into the queue holding `value`. Returns
    /// the value back, to be dropped after unlocking, if the receiver is gone.
    fn push_reserved_locked(st: &mut State<T>, value: T) -> Option<T> {
        st.reserved -= 1;
        if st.rx_dropped {
            st.permits += 1;
            return Some(value);
        }
        st.queue.push_back(value);
        None
    }

    /// Bounded: a permit sends `value` into its reserved slot.
    pub(super) fn send_reserved(&self, value: T) {
        let (rejected, waker) = {
            let mut st = self.lock();
            let rejected = Self::push_reserved_locked(&mut st, value);
            (rejected, st.rx_waker.take())
        };
        if let Some(w) = waker {
            w.wake();
        }
        drop(rejected);
    }

    /// Lock held: a slot became free; hand it to the oldest waiting sender
    /// (invariant 3) or make it a free permit.
    fn release_locked(st: &mut State<T>) -> Option<Waker> {
        match st.senders.grant_front() {
            Some(waker) => {
                st.reserved += 1;
                Some(waker)
            }
            None => {
                st.permits += 1;
                None
            }
        }
    }

    /// Bounded: a permit was dropped unused; return its slot.
    pub(super) fn release_reserved(&self) {
        let mut wake = Wake::default();
        {
            let mut st = self.lock();
            st.reserved -= 1;
            wake.push(Self::release_locked(&mut st));
            if st.rx_closed && st.reserved == 0 {
                // A closed receiver waits for outstanding permits before it
                // reports the end of the channel.
                wake.push(st.rx_waker.take());
            }
        }
        wake.wake();
    }

    /// Bounded: an acquire (send or reserve future) was dropped before it
    /// completed. A slot already granted to it goes to the next waiter.
    pub(super) fn cancel_acquire(&self, key: usize) {
        let mut wake = Wake::default();
        let removed = {
            let mut st = self.lock();
            let removed = st.senders.remove(key);
            if let Waiter::Granted = removed {
                st.reserved -= 1;
                wake.push(Self::release_locked(&mut st));
                if st.rx_closed && st.reserved == 0 {
                    wake.push(st.rx_waker.take());
                }
            }
            removed
        };
        drop(removed);
        wake.wake();
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
    /// the queue is empty.
    fn is_finished_locked(st: &State<T>) -> bool {
        // With outstanding permits a closed channel may still get messages.
        st.tx_closed || (st.rx_closed && st.reserved == 0)
    }

    /// Pops up to `limit` (at least 1) messages with `take`, or registers the
    /// receiver's waker. `Ready(0)` means the channel has ended.
    fn poll_take(
        &self,
        cx: &mut Context<'_>,
        limit: usize,
        mut take: impl FnMut(T),
    ) -> Poll<usize> {
        let mut wake = Wake::default();
        let mut old = None;
        let res = {
            let mut st = self.lock();
            let n = st.queue.len().min(limit);
            if n > 0 {
                for _ in 0..n {
                    take(st.queue.pop_front().expect("n <= len"));
                    if self.bound.is_some() {
                        wake.push(Self::release_locked(&mut st));
                    }
                }
                Poll::Ready(n)
            } else if Self::is_finished_locked(&st) {
                Poll::Ready(0)
            } else {
                match &st.rx_waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => old = st.rx_waker.replace(cx.waker().clone()),
                }
                Poll::Pending
            }
        };
        drop(old);
        wake.wake();
        res
    }

    pub(super) fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut out = None;
        match self.poll_take(cx, 1, |v| out = Some(v)) {
            Poll::Ready(_) => Poll::Ready(out),
            Poll::Pending => Poll::Pending,
        }
    }

    pub(super) fn poll_recv_many(
        &self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        self.poll_take(cx, limit, |v| buffer.push(v))
    }

    /// `Ok(Some)`: a message; `Ok(None)`: empty; `Err(())`: ended.
    pub(super) fn try_recv(&self) -> Result<Option<T>, ()> {
        let mut wake = Wake::default();
        let res = {
            let mut st = self.lock();
            match st.queue.pop_front() {
                Some(v) => {
                    if self.bound.is_some() {
                        wake.push(Self::release_locked(&mut st));
                    }
                    Ok(Some(v))
                }
                None if Self::is_finished_locked(&st) => Err(()),
                None => Ok(None),
            }
        };
        wake.wake();
        res
    }

    /// `Receiver::close`: no new sends; waiting senders fail (invariant 4).
    pub(super) fn close_rx(&self) {
        let mut wakers = Vec::new();
        {
            let mut st = self.lock();
            if st.rx_closed {
                return;
            }
            st.rx_closed = true;
            self.rx_closed.store(true, Ordering::Release);
            // Granted senders keep their slot, like permits (Tokio's rule).
            st.senders.close_all(false, &mut wakers);
            st.closed_waiters.close_all(false, &mut wakers);
        }
        for w in wakers {
            w.wake();
        }
    }

    /// The receiver is dropped: close, fail every waiter, and drop the
    /// buffered messages (invariant 6).
    pub(super) fn drop_rx(&self) {
        let mut wakers = Vec::new();
        let (queue, rx_waker) = {
            let mut st = self.lock();
            st.rx_closed = true;
            st.rx_dropped = true;
            self.rx_closed.store(true, Ordering::Release);
            let granted = st.senders.close_all(true, &mut wakers);
            st.closed_waiters.close_all(false, &mut wakers);
            st.reserved -= granted;
            let queue = std::mem::take(&mut st.queue);
            if self.bound.is_some() {
                st.permits += granted + queue.len();
            }
            (queue, st.rx_waker.take())
        };
        for w in wakers {
            w.wake();
        }
        drop(rx_waker);
        drop(queue);
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn waiter_fifo_order_and_key_reuse() {
        let mut list = WaitList::new();
        let a = list.push_waiting(Waker::noop().clone());
        let b = list.push_waiting(Waker::noop().clone());
        let c = list.push_waiting(Waker::noop().clone());
        assert!(matches!(list.remove(b), Waiter::Waiting(_)));
        assert!(list.grant_front().is_some());
        assert!(matches!(list.get(a), Waiter::Granted));
        assert!(list.grant_front().is_some());
        assert!(matches!(list.get(c), Waiter::Granted));
        assert!(list.grant_front().is_none());
        assert!(list.is_empty());
        // The freed slot is reused.
        let d = list.push_waiting(Waker::noop().clone());
        assert_eq!(d, b);
        let mut wakers = Vec::new();
        assert_eq!(list.close_all(true, &mut wakers), 2);
        assert_eq!(wakers.len(), 1);
        assert!(matches!(list.remove(a), Waiter::Closed));
        assert!(matches!(list.remove(c), Waiter::Closed));
        assert!(matches!(list.remove(d), Waiter::Closed));
    }

    #[test]
    fn waiter_close_keeps_granted_when_asked() {
        let mut list = WaitList::new();
        let a = list.push_waiting(Waker::noop().clone());
        let b = list.push_waiting(Waker::noop().clone());
        list.grant_front();
        let mut wakers = Vec::new();
        assert_eq!(list.close_all(false, &mut wakers), 0);
        assert!(matches!(list.get(a), Waiter::Granted));
        assert!(matches!(list.get(b), Waiter::Closed));
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
