//! [`Notify`]: wake one task or all waiting tasks, without data.
//!
//! # What this file owns
//!
//! `Notify`, its `Notified` future, and the protocol between them.
//!
//! # State protocol
//!
//! `Notify::state` is an `AtomicUsize`. Its two low bits are one of
//! `EMPTY` (no permit, no waiter), `WAITING` (the waiter queue is non-empty)
//! or `NOTIFIED` (one stored permit, no waiter). The bits above count calls
//! to `notify_waiters` (the *generation*). Waiters sit in a [`WaitList`]
//! behind `Notify::waiters`, in arrival order.
//!
//! The code relies on these invariants:
//!
//! 1. **`WAITING` is owned by the lock.** The state enters or leaves
//!    `WAITING` only while `waiters` is locked, and it is `WAITING` exactly
//!    when the queue is non-empty (checked whenever the lock is released).
//! 2. **Lock-free moves.** Without the lock, only two moves happen, both by
//!    compare-and-swap: `EMPTY`/`NOTIFIED` -> `NOTIFIED` (`notify_one`
//!    storing a permit) and `NOTIFIED` -> `EMPTY` (a `Notified` consuming it).
//!    Neither succeeds while the state is `WAITING`, so under the lock a
//!    `WAITING` state is stable and may be overwritten with a plain store.
//! 3. **Generation.** It changes only under the lock, in `notify_waiters`.
//!    A `Notified` records it when created; one that finds it changed on its
//!    first poll completes, so a notification sent after `notified()` but
//!    before the first poll is not lost.
//! 4. **Handing over.** Whoever notifies a queued waiter unlinks it and
//!    records the kind of notification in it; the waiter's own future frees
//!    its slot (and waker). A waiter dropped after receiving `notify_one`'s
//!    notification passes it on, as if `notify_one` were called again, so
//!    the notification is never lost.
//!
//! There is no `unsafe` code in this file.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll, Waker};

use crate::loom::{AtomicUsize, Mutex, Ordering};
use crate::sync::wait_list::{WaitList, WakeList};

const EMPTY: usize = 0;
const WAITING: usize = 1;
const NOTIFIED: usize = 2;
const STATE_MASK: usize = 0b11;
/// One `notify_waiters` call, in the generation bits.
const GENERATION_ONE: usize = 0b100;

fn bits(state: usize) -> usize {
    state & STATE_MASK
}

fn generation(state: usize) -> usize {
    state & !STATE_MASK
}

fn with_bits(state: usize, bits: usize) -> usize {
    generation(state) | bits
}

/// Notifies a single task, or all waiting tasks, to wake up.
///
/// `Notify` carries no data: it is a building block for other
/// synchronisation. It behaves like a semaphore with at most one permit:
/// [`notify_one`](Notify::notify_one) wakes one task waiting in
/// [`notified`](Notify::notified), or, if none is waiting, stores the permit
/// so that the next `notified().await` completes at once. Waiters are woken
/// in the order they started waiting.
///
/// [`notify_waiters`](Notify::notify_waiters) wakes every task waiting at
/// the time of the call and stores no permit.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use weft::sync::Notify;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let notify = Arc::new(Notify::new());
///     let notify2 = notify.clone();
///
///     let handle = weft::spawn(async move {
///         notify2.notified().await;
///         "received notification"
///     });
///
///     notify.notify_one();
///     assert_eq!(handle.await.unwrap(), "received notification");
/// });
/// ```
pub struct Notify {
    /// State bits and generation (see the module doc).
    state: AtomicUsize,
    waiters: Mutex<WaitList<Waiter>>,
}

/// One queued `Notified`.
#[derive(Debug)]
struct Waiter {
    waker: Option<Waker>,
    /// Set (and the waiter unlinked) by whoever notifies it (invariant 4).
    notification: Option<Notification>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Notification {
    /// From `notify_one` / `notify_last`: passed on if dropped unconsumed.
    One,
    /// From `notify_waiters`.
    All,
}

/// Which end of the queue `notify_one` / `notify_last` serves.
#[derive(Clone, Copy)]
enum End {
    Front,
    Back,
}

impl Notify {
    /// Creates a `Notify` with no stored permit.
    pub fn new() -> Notify {
        Notify {
            state: AtomicUsize::new(EMPTY),
            waiters: Mutex::new(WaitList::new()),
        }
    }

    /// Creates a `Notify` in a `const` context (for a `static`).
    ///
    /// ```
    /// use weft::sync::Notify;
    ///
    /// static NOTIFY: Notify = Notify::const_new();
    /// NOTIFY.notify_one();
    /// ```
    #[cfg(not(loom))]
    pub const fn const_new() -> Notify {
        Notify {
            state: AtomicUsize::new(EMPTY),
            waiters: Mutex::new(WaitList::new()),
        }
    }

    /// Waits for a notification.
    ///
    /// The returned [`Notified`] future completes when it receives a
    /// notification from [`notify_one`](Notify::notify_one) or
    /// [`notify_last`](Notify::notify_last) (or a stored permit), or when
    /// [`notify_waiters`](Notify::notify_waiters) is called after this
    /// method returned, even if the future had not been polled yet.
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute notifications in the
    /// order they were requested. Cancelling a call to `notified` makes you
    /// lose your place in the queue. A `notify_one` notification that
    /// reached the cancelled future is passed on to the next waiter (or
    /// stored as the permit), never lost.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::Notify;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let notify = Notify::new();
    ///     notify.notify_one(); // stored as a permit
    ///     notify.notified().await; // consumes it at once
    /// });
    /// ```
    pub fn notified(&self) -> Notified<'_> {
        Notified {
            notify: self,
            generation: generation(self.state.load(Ordering::SeqCst)),
            state: NotifiedState::Init,
        }
    }

    /// Wakes the task that has waited longest in [`notified`](Notify::notified),
    /// or, if no task is waiting, stores a permit for the next call. At most
    /// one permit is stored: several calls with no waiter leave one.
    ///
    /// ```
    /// use weft::sync::Notify;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let notify = Notify::new();
    ///     notify.notify_one();
    ///     notify.notify_one();
    ///     notify.notified().await;
    ///     // Only one permit was stored: a second `notified` would wait.
    /// });
    /// ```
    pub fn notify_one(&self) {
        self.notify(End::Front);
    }

    /// Like [`notify_one`](Notify::notify_one), but wakes the task that
    /// started waiting most recently.
    pub fn notify_last(&self) {
        self.notify(End::Back);
    }

    fn notify(&self, end: End) {
        let mut cur = self.state.load(Ordering::SeqCst);
        // Invariant 2: with no waiter, storing the permit needs no lock.
        while bits(cur) != WAITING {
            match self.state.compare_exchange(
                cur,
                with_bits(cur, NOTIFIED),
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
        let mut waiters = crate::loom::lock(&self.waiters);
        let cur = self.state.load(Ordering::SeqCst);
        if let Some(waker) = self.notify_locked(&mut waiters, cur, end) {
            drop(waiters);
            waker.wake();
        }
    }

    /// Notifies one queued waiter, or stores the permit if there is none.
    /// Returns the waker to wake once the lock is released.
    fn notify_locked(
        &self,
        waiters: &mut WaitList<Waiter>,
        mut cur: usize,
        end: End,
    ) -> Option<Waker> {
        loop {
            if bits(cur) == WAITING {
                let key = match end {
                    End::Front => waiters.pop_front(),
                    End::Back => waiters.pop_back(),
                }
                .expect("Notify: WAITING with an empty queue");
                let w = waiters.get_mut(key);
                w.notification = Some(Notification::One);
                let waker = w.waker.take();
                if waiters.is_empty() {
                    // Invariant 2: `WAITING` is stable under the lock.
                    self.state.store(with_bits(cur, EMPTY), Ordering::SeqCst);
                }
                return waker;
            }
            match self.state.compare_exchange(
                cur,
                with_bits(cur, NOTIFIED),
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return None,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Wakes every task currently waiting, including [`Notified`] futures
    /// created by [`notified`](Notify::notified) before this call but not
    /// yet polled. Stores no permit: a later `notified()` waits.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::Notify;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let notify = Arc::new(Notify::new());
    ///     let notify2 = notify.clone();
    ///
    ///     // Both futures exist before the call, so both see it, even
    ///     // though neither has been polled yet.
    ///     let first = notify.notified();
    ///     let second = notify.notified();
    ///     let handle = weft::spawn(async move { notify2.notify_waiters() });
    ///
    ///     first.await;
    ///     second.await;
    ///     handle.await.unwrap();
    /// });
    /// ```
    pub fn notify_waiters(&self) {
        let mut waiters = crate::loom::lock(&self.waiters);
        let cur = self.state.load(Ordering::SeqCst);
        if bits(cur) != WAITING {
            // Invariant 3: bump the generation for not-yet-polled futures.
            self.state.fetch_add(GENERATION_ONE, Ordering::SeqCst);
            return;
        }
        // Invariant 2: `WAITING` is stable under the lock; every waiter is
        // served below, so the queue ends up empty.
        self.state.store(
            with_bits(cur.wrapping_add(GENERATION_ONE), EMPTY),
            Ordering::SeqCst,
        );
        let mut wakers = WakeList::new();
        let mut overflow = Vec::new();
        while let Some(key) = waiters.pop_front() {
            let w = waiters.get_mut(key);
            w.notification = Some(Notification::All);
            let waker = w.waker.take();
            if wakers.can_push() {
                wakers.push(waker);
            } else {
                overflow.extend(waker);
            }
        }
        drop(waiters);
        wakers.wake_all();
        for w in overflow {
            w.wake();
        }
    }
}

impl Default for Notify {
    fn default() -> Notify {
        Notify::new()
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.load(Ordering::Relaxed);
        let s = match bits(state) {
            EMPTY => "empty",
            WAITING => "waiting",
            _ => "notified",
        };
        f.debug_struct("Notify")
            .field("state", &s)
            .finish_non_exhaustive()
    }
}

// ----- The Notified future -------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum NotifiedState {
    /// Not queued yet.
    Init,
    /// Queued under this key; the future owns the slot (invariant 4).
    Waiting(usize),
    /// Notified; the slot (if any) is freed.
    Done,
}

/// Future returned by [`Notify::notified`]; completes once notified.
///
/// See [`Notify::notified`] for when it completes and its cancel safety.
#[must_use = "futures do nothing unless polled"]
pub struct Notified<'a> {
    notify: &'a Notify,
    /// The `notify_waiters` generation when created (invariant 3).
    generation: usize,
    state: NotifiedState,
}

impl Notified<'_> {
    /// Registers this future in the wait queue without waiting, so it
    /// takes part in the next [`notify_one`](Notify::notify_one) from now
    /// on, as if it had been polled. Returns `true` if it has already been
    /// notified (the next poll will complete).
    ///
    /// ```
    /// use std::pin::pin;
    /// use weft::sync::Notify;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let notify = Notify::new();
    ///     let mut notified = pin!(notify.notified());
    ///     assert!(!notified.as_mut().enable());
    ///     notify.notify_one(); // goes to the enabled future, not a permit
    ///     notified.await;
    /// });
    /// ```
    pub fn enable(mut self: Pin<&mut Self>) -> bool {
        self.poll_notified(None).is_ready()
    }

    /// The body of `poll` without the budget; `waker` is `None` for `enable`.
    fn poll_notified(&mut self, waker: Option<&Waker>) -> Poll<()> {
        let notify = self.notify;
        match self.state {
            NotifiedState::Init => {
                let mut cur = notify.state.load(Ordering::SeqCst);
                // Lock-free: a `notify_waiters` since creation, or a permit.
                loop {
                    if generation(cur) != self.generation {
                        self.state = NotifiedState::Done;
                        return Poll::Ready(());
                    }
                    if bits(cur) != NOTIFIED {
                        break;
                    }
                    match notify.state.compare_exchange(
                        cur,
                        with_bits(cur, EMPTY),
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    ) {
                        Ok(_) => {
                            self.state = NotifiedState::Done;
                            return Poll::Ready(());
                        }
                        Err(actual) => cur = actual,
                    }
                }
                let mut waiters = crate::loom::lock(&notify.waiters);
                cur = notify.state.load(Ordering::SeqCst);
                loop {
                    if generation(cur) != self.generation {
                        self.state = NotifiedState::Done;
                        return Poll::Ready(());
                    }
                    let next = match bits(cur) {
                        WAITING => break,
                        NOTIFIED => with_bits(cur, EMPTY),
                        _ => with_bits(cur, WAITING),
                    };
                    match notify.state.compare_exchange(
                        cur,
                        next,
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    ) {
                        Ok(_) if bits(next) == EMPTY => {
                            self.state = NotifiedState::Done;
                            return Poll::Ready(());
                        }
                        Ok(_) => break,
                        Err(actual) => cur = actual,
                    }
                }
                // Invariant 1: the state is `WAITING` and we join the queue
                // before the lock is released.
                let key = waiters.push_back(Waiter {
                    waker: waker.cloned(),
                    notification: None,
                });
                self.state = NotifiedState::Waiting(key);
                Poll::Pending
            }
            NotifiedState::Waiting(key) => {
                let mut waiters = crate::loom::lock(&notify.waiters);
                let w = waiters.get_mut(key);
                if w.notification.is_some() {
                    // Invariant 4: already unlinked by the notifier.
                    waiters.remove(key);
                    self.state = NotifiedState::Done;
                    return Poll::Ready(());
                }
                if let Some(waker) = waker {
                    match &w.waker {
                        Some(old) if old.will_wake(waker) => {}
                        _ => w.waker = Some(waker.clone()),
                    }
                }
                Poll::Pending
            }
            NotifiedState::Done => Poll::Ready(()),
        }
    }
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let coop = ready!(crate::coop::poll_proceed(cx));
        ready!(self.poll_notified(Some(cx.waker())));
        coop.made_progress();
        Poll::Ready(())
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        let NotifiedState::Waiting(key) = self.state else {
            return;
        };
        let notify = self.notify;
        let mut waiters = crate::loom::lock(&notify.waiters);
        // Invariant 4: we own the slot; freeing it drops our waker.
        let w = waiters.remove(key);
        let cur = notify.state.load(Ordering::SeqCst);
        if waiters.is_empty() && bits(cur) == WAITING {
            // Invariant 1: the last waiter left.
            notify.state.store(with_bits(cur, EMPTY), Ordering::SeqCst);
        }
        if w.notification == Some(Notification::One) {
            // Invariant 4: pass the unconsumed notification on.
            let cur = notify.state.load(Ordering::SeqCst);
            if let Some(waker) = notify.notify_locked(&mut waiters, cur, End::Front) {
                drop(waiters);
                waker.wake();
            }
        }
    }
}

impl fmt::Debug for Notified<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notified")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::mpsc::test_support::CountWaker;
    use std::sync::Arc as StdArc;

    fn poll(n: &mut Notified<'_>, w: &Waker) -> Poll<()> {
        Pin::new(n).poll(&mut Context::from_waker(w))
    }

    #[test]
    fn permit_is_stored_once() {
        let notify = Notify::new();
        notify.notify_one();
        notify.notify_one();
        assert!(poll(&mut notify.notified(), Waker::noop()).is_ready());
        assert!(poll(&mut notify.notified(), Waker::noop()).is_pending());
    }

    #[test]
    fn notify_one_is_fifo_and_notify_last_is_lifo() {
        let notify = Notify::new();
        let (c1, w1) = CountWaker::new();
        let (c2, w2) = CountWaker::new();
        let (c3, w3) = CountWaker::new();
        let mut a = notify.notified();
        let mut b = notify.notified();
        let mut c = notify.notified();
        assert!(poll(&mut a, &w1).is_pending());
        assert!(poll(&mut b, &w2).is_pending());
        assert!(poll(&mut c, &w3).is_pending());
        notify.notify_one();
        assert_eq!((c1.count(), c2.count(), c3.count()), (1, 0, 0));
        notify.notify_last();
        assert_eq!((c1.count(), c2.count(), c3.count()), (1, 0, 1));
        assert!(poll(&mut a, &w1).is_ready());
        assert!(poll(&mut b, &w2).is_pending());
        assert!(poll(&mut c, &w3).is_ready());
        notify.notify_one();
        assert!(poll(&mut b, &w2).is_ready());
        assert_eq!(bits(notify.state.load(Ordering::SeqCst)), EMPTY);
    }

    #[test]
    fn notify_waiters_wakes_all_and_stores_no_permit() {
        let notify = Notify::new();
        let (c, w) = CountWaker::new();
        let mut a = notify.notified();
        let mut b = notify.notified();
        assert!(poll(&mut a, &w).is_pending());
        assert!(poll(&mut b, &w).is_pending());
        // Created before the call, never polled: also woken.
        let mut unpolled = notify.notified();
        notify.notify_waiters();
        assert_eq!(c.count(), 2);
        assert!(poll(&mut a, &w).is_ready());
        assert!(poll(&mut b, &w).is_ready());
        assert!(poll(&mut unpolled, &w).is_ready());
        assert!(poll(&mut notify.notified(), &w).is_pending());
    }

    #[test]
    fn dropped_notified_passes_notification_on() {
        let notify = Notify::new();
        let (ca, wa) = CountWaker::new();
        let (cb, wb) = CountWaker::new();
        let mut a = notify.notified();
        let mut b = notify.notified();
        assert!(poll(&mut a, &wa).is_pending());
        assert!(poll(&mut b, &wb).is_pending());
        notify.notify_one();
        assert_eq!((ca.count(), cb.count()), (1, 0));
        drop(a);
        assert_eq!(cb.count(), 1);
        assert!(poll(&mut b, &wb).is_ready());
    }

    #[test]
    fn dropped_notified_with_no_successor_stores_permit() {
        let notify = Notify::new();
        let mut a = notify.notified();
        assert!(poll(&mut a, Waker::noop()).is_pending());
        notify.notify_one();
        drop(a);
        assert!(poll(&mut notify.notified(), Waker::noop()).is_ready());
    }

    #[test]
    fn dropped_waiter_frees_waker_and_resets_state() {
        let notify = Notify::new();
        let (c, w) = CountWaker::new();
        let mut a = notify.notified();
        assert!(poll(&mut a, &w).is_pending());
        assert_eq!(StdArc::strong_count(&c), 3);
        drop(a);
        assert_eq!(StdArc::strong_count(&c), 2);
        assert_eq!(bits(notify.state.load(Ordering::SeqCst)), EMPTY);
        // No waiter: the notification becomes a permit.
        notify.notify_one();
        assert!(poll(&mut notify.notified(), &w).is_ready());
    }

    #[test]
    fn enable_registers_without_waker() {
        let notify = Notify::new();
        let mut a = notify.notified();
        assert!(!Pin::new(&mut a).enable());
        notify.notify_one();
        assert!(Pin::new(&mut a).enable());
        assert!(poll(&mut a, Waker::noop()).is_ready());
        // The notification went to `a`, not into a permit.
        assert!(poll(&mut notify.notified(), Waker::noop()).is_pending());
    }

    #[test]
    fn budget_is_spent_and_refunded() {
        crate::coop::budget(|| {
            let notify = Notify::new();
            let before = crate::coop::remaining();
            let mut a = notify.notified();
            assert!(poll(&mut a, Waker::noop()).is_pending());
            assert_eq!(crate::coop::remaining(), before);
            notify.notify_one();
            assert!(poll(&mut a, Waker::noop()).is_ready());
            assert_eq!(crate::coop::remaining(), before.map(|n| n - 1));
        });
    }

    #[test]
    fn send_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Notify>();
        assert_send_sync::<Notified<'static>>();
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::thread;
    use std::sync::Arc as StdArc;

    #[test]
    fn notify_one_racing_registration() {
        loom::model(|| {
            let notify = StdArc::new(Notify::new());
            let n2 = notify.clone();
            let t = thread::spawn(move || n2.notify_one());
            loom::future::block_on(notify.notified());
            t.join().unwrap();
            // The notification was consumed, not also stored.
            assert_eq!(bits(notify.state.load(Ordering::SeqCst)), EMPTY);
        });
    }

    #[test]
    fn dropped_notified_passes_permit_on() {
        loom::model(|| {
            let notify = StdArc::new(Notify::new());
            let n2 = notify.clone();
            let mut a = notify.notified();
            let mut b = notify.notified();
            let cx = &mut Context::from_waker(Waker::noop());
            assert!(Pin::new(&mut a).poll(cx).is_pending());
            assert!(Pin::new(&mut b).poll(cx).is_pending());
            let t = thread::spawn(move || n2.notify_one());
            drop(a);
            loom::future::block_on(b);
            t.join().unwrap();
        });
    }

    #[test]
    fn notify_waiters_racing_registration() {
        loom::model(|| {
            let notify = StdArc::new(Notify::new());
            let n2 = notify.clone();
            let notified = notify.notified();
            let t = thread::spawn(move || n2.notify_waiters());
            loom::future::block_on(notified);
            t.join().unwrap();
        });
    }
}
