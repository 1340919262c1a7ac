//! [`Notify`]: wake one task or all waiting tasks, without data.
//!
//! # What this folder owns
//!
//! - `mod.rs`: [`Notify`], its state word, and the notifying side;
//! - `notified.rs`: the [`Notified`] and [`OwnedNotified`] futures (the
//!   waiting side);
//! - `tests.rs`, `loom_tests.rs`: unit tests and loom models.
//!
//! # State protocol
//!
//! `Notify::state` is an `AtomicUsize`. Its two low bits are one of
//! `EMPTY` (no permit, no waiter), `WAITING` (the waiter queue is non-empty)
//! or `NOTIFIED` (one stored permit, no waiter). The bits above count calls
//! to `notify_waiters` (the *generation*). Waiters sit in an intrusive
//! [`List`] behind `Notify::waiters`, in arrival order; each `Notified` embeds
//! its own node, whose atomic `state` holds the notification it received
//! (`NONE`, `ONE` or `ALL`). The list's own rules (`sync/intrusive.rs`:
//! pinned while linked, lock-protected links and data, "served means
//! untouched") apply throughout.
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
//! 4. **Handing over.** Whoever notifies a queued waiter does so under the
//!    lock: it unlinks the node, takes its waker, and last stores the kind of
//!    notification in the node's `state` (`Release`). A waiter whose node
//!    `state` is not `NONE` is therefore unlinked and no longer touched by
//!    anyone else, so its future completes (or drops) without the lock; under
//!    the lock, `NONE` means still linked. A waiter dropped after receiving
//!    `notify_one`'s notification (`ONE`) passes it on, as if `notify_one`
//!    were called again, so the notification is never lost; one that
//!    received `notify_last`'s (`LAST`) passes it on as `notify_last` would,
//!    to the newest waiter left (as Tokio does).
//!
//! 5. **Wakers and the lock.** No waker is woken or dropped under the lock
//!    (`sync/mod.rs`, "Wakers and locks"): the notifier wakes what it took
//!    after unlocking, a waker replaced by a later poll is dropped after the
//!    guard, and a cancelled waiter's waker dies with its node after `Drop`
//!    released the lock. So a waker may notify from its `wake` or `Drop`.
//!
//! `unsafe` is used only to reach nodes through the intrusive list; each
//! block names the invariant it relies on.

use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::Waker;

use crate::loom::{AtomicUsize, Mutex, Ordering};
use crate::sync::intrusive::{List, Node};
use crate::sync::wait_list::WakeList;

mod notified;

// Its waiter list is behind a lock that shrugs off poisoning, so a panic
// caught around a `Notify` leaves it usable (Tokio has the same two impls).
impl std::panic::UnwindSafe for Notify {}
impl std::panic::RefUnwindSafe for Notify {}

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;

pub use notified::{Notified, OwnedNotified};

const EMPTY: usize = 0;
const WAITING: usize = 1;
const NOTIFIED: usize = 2;
const STATE_MASK: usize = 0b11;
/// One `notify_waiters` call, in the generation bits.
const GENERATION_ONE: usize = 0b100;

/// A waiter node's `state`: not notified yet (so, under the lock, linked).
const NONE: usize = 0;
/// A waiter node's `state`: notified by `notify_one`, so passed on to the
/// oldest waiter left if dropped unconsumed.
const ONE: usize = 1;
/// A waiter node's `state`: notified by `notify_waiters`.
const ALL: usize = 2;
/// A waiter node's `state`: notified by `notify_last`, so passed on to the
/// newest waiter left if dropped unconsumed.
const LAST: usize = 3;

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
    waiters: Mutex<List<Waiter>>,
}

/// The lock-protected part of a queued `Notified`'s node.
#[derive(Debug)]
struct Waiter {
    /// Taken by whoever notifies it (invariant 4).
    waker: Option<Waker>,
}

/// Which end of the queue `notify_one` / `notify_last` serves (and so where
/// a dropped waiter passes their notification on to).
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
            waiters: Mutex::new(List::new()),
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
            waiters: Mutex::new(List::new()),
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
        Notified::new(self, generation(self.state.load(Ordering::SeqCst)))
    }

    /// Like [`notified`](Notify::notified), but the future owns an
    /// `Arc<Notify>` rather than borrowing it, so it has no lifetime and can
    /// be stored in a struct or moved into a spawned task. It completes,
    /// and is cancelled, exactly as the future of `notified` does; it too
    /// counts a [`notify_waiters`](Notify::notify_waiters) call made after
    /// this method returned, even before its first poll.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::Notify;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let notify = Arc::new(Notify::new());
    ///     let notified = notify.clone().notified_owned();
    ///     let waiter = weft::spawn(notified);
    ///     notify.notify_waiters();
    ///     waiter.await.unwrap();
    /// });
    /// ```
    pub fn notified_owned(self: Arc<Self>) -> OwnedNotified {
        let generation = generation(self.state.load(Ordering::SeqCst));
        OwnedNotified::new(self, generation)
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
    /// started waiting most recently. If that task's [`Notified`] is dropped
    /// before it completes, the notification goes to the most recent
    /// waiter left (or is stored as the permit).
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
    fn notify_locked(&self, waiters: &mut List<Waiter>, mut cur: usize, end: End) -> Option<Waker> {
        loop {
            if bits(cur) == WAITING {
                let (node, notification) = match end {
                    End::Front => (waiters.pop_front(), ONE),
                    End::Back => (waiters.pop_back(), LAST),
                };
                let node = node.expect("Notify: WAITING with an empty queue");
                // SAFETY: `serve` is called under the lock on a node just
                // unlinked, which was valid while linked (invariant 4).
                let waker = unsafe { serve(node, notification) };
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
        // Declared before the guard, so dropped (waking) after it even on
        // unwind (invariant 5).
        let mut wakers = WakeList::new();
        let mut overflow = Vec::new();
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
        while let Some(node) = waiters.pop_front() {
            // SAFETY: as in `notify_locked`: under the lock, just unlinked.
            let waker = unsafe { serve(node, ALL) };
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

/// Serves a waiter just unlinked under the lock: takes its waker and, last,
/// stores `notification` into its node (invariant 4). The node must not be
/// touched after this returns.
///
/// # Safety
///
/// The caller holds `waiters`' lock and `node` was linked in that list until
/// just now (so it is valid and not yet served).
unsafe fn serve(node: NonNull<Node<Waiter>>, notification: usize) -> Option<Waker> {
    // SAFETY: the caller's guarantee: a valid node, under the lock.
    let node = unsafe { node.as_ref() };
    // SAFETY: the lock is held (intrusive invariant 2).
    let waker = unsafe { node.with_data(|w| w.waker.take()) };
    node.state().store(notification, Ordering::Release);
    waker
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
