//! The [`Notified`] and [`OwnedNotified`] futures: one task waiting on a
//! [`Notify`], reached through a borrow or an `Arc`. Both wrap the same
//! `NotifiedCore`; the invariants it relies on are stated in the parent
//! module's doc (`notify/mod.rs`).

use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{ready, Context, Poll, Waker};

use super::{
    bits, generation, with_bits, End, Notify, Waiter, ALL, EMPTY, LAST, NONE, NOTIFIED, ONE,
    WAITING,
};
use crate::loom::Ordering;
use crate::sync::intrusive::Node;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NotifiedState {
    /// Not queued yet.
    Init,
    /// Our node was pushed to the queue (and may have been served since).
    Waiting,
    /// Notified and done with the queue.
    Done,
}

/// The waiting machinery shared by [`Notified`] and [`OwnedNotified`]:
/// `R` is how the future reaches its [`Notify`] (a borrow or an `Arc`).
/// Both public futures are this and nothing more, so they follow the same
/// protocol (the parent module's invariants) by construction.
pub(super) struct NotifiedCore<R: Deref<Target = Notify>> {
    notify: R,
    /// The `notify_waiters` generation when created (invariant 3).
    generation: usize,
    state: NotifiedState,
    /// Our place in the queue while `Waiting` (intrusive invariant 1: the
    /// future is `!Unpin`, so the node stays put while linked).
    node: Node<Waiter>,
}

/// Future returned by [`Notify::notified`]; completes once notified.
///
/// See [`Notify::notified`] for when it completes and its cancel safety.
#[must_use = "futures do nothing unless polled"]
pub struct Notified<'a> {
    core: NotifiedCore<&'a Notify>,
}

/// Future returned by [`Notify::notified_owned`]: a [`Notified`] that owns
/// an `Arc<Notify>` instead of borrowing it, so it can be stored or moved
/// into a task without a lifetime.
#[must_use = "futures do nothing unless polled"]
pub struct OwnedNotified {
    core: NotifiedCore<Arc<Notify>>,
}

impl<'a> Notified<'a> {
    /// A future not yet queued, created in `generation` (invariant 3).
    pub(super) fn new(notify: &'a Notify, generation: usize) -> Notified<'a> {
        Notified {
            core: NotifiedCore::new(notify, generation),
        }
    }

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
    pub fn enable(self: Pin<&mut Self>) -> bool {
        self.core().poll_notified(None).is_ready()
    }

    fn core(self: Pin<&mut Self>) -> Pin<&mut NotifiedCore<&'a Notify>> {
        // SAFETY: `core` is structurally pinned: it is never moved out of a
        // pinned `Notified`, whose node must stay put (intrusive invariant 1).
        unsafe { self.map_unchecked_mut(|n| &mut n.core) }
    }
}

impl OwnedNotified {
    /// A future not yet queued, created in `generation` (invariant 3).
    pub(super) fn new(notify: Arc<Notify>, generation: usize) -> OwnedNotified {
        OwnedNotified {
            core: NotifiedCore::new(notify, generation),
        }
    }

    /// Registers this future in the wait queue without waiting; see
    /// [`Notified::enable`]. Returns `true` if it has already been notified.
    ///
    /// ```
    /// use std::pin::pin;
    /// use std::sync::Arc;
    /// use weft::sync::Notify;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let notify = Arc::new(Notify::new());
    ///     let mut notified = pin!(notify.clone().notified_owned());
    ///     assert!(!notified.as_mut().enable());
    ///     notify.notify_one(); // goes to the enabled future, not a permit
    ///     notified.await;
    /// });
    /// ```
    pub fn enable(self: Pin<&mut Self>) -> bool {
        self.core().poll_notified(None).is_ready()
    }

    fn core(self: Pin<&mut Self>) -> Pin<&mut NotifiedCore<Arc<Notify>>> {
        // SAFETY: `core` is structurally pinned: it is never moved out of a
        // pinned `OwnedNotified`, whose node must stay put (intrusive
        // invariant 1).
        unsafe { self.map_unchecked_mut(|n| &mut n.core) }
    }
}

impl<R: Deref<Target = Notify>> NotifiedCore<R> {
    fn new(notify: R, generation: usize) -> NotifiedCore<R> {
        NotifiedCore {
            notify,
            generation,
            state: NotifiedState::Init,
            node: Node::new(Waiter { waker: None }, NONE),
        }
    }

    /// The body of `poll` without the budget; `waker` is `None` for `enable`.
    fn poll_notified(self: Pin<&mut Self>, waker: Option<&Waker>) -> Poll<()> {
        // SAFETY: nothing is moved out of `this`; the node stays where it is
        // (intrusive invariant 1).
        let this = unsafe { self.get_unchecked_mut() };
        let notify: &Notify = &this.notify;
        match this.state {
            NotifiedState::Init => {
                let mut cur = notify.state.load(Ordering::SeqCst);
                // Lock-free: a `notify_waiters` since creation, or a permit.
                loop {
                    if generation(cur) != this.generation {
                        this.state = NotifiedState::Done;
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
                            this.state = NotifiedState::Done;
                            return Poll::Ready(());
                        }
                        Err(actual) => cur = actual,
                    }
                }
                let mut waiters = crate::loom::lock(&notify.waiters);
                cur = notify.state.load(Ordering::SeqCst);
                loop {
                    if generation(cur) != this.generation {
                        this.state = NotifiedState::Done;
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
                            this.state = NotifiedState::Done;
                            return Poll::Ready(());
                        }
                        Ok(_) => break,
                        Err(actual) => cur = actual,
                    }
                }
                // SAFETY: the node has never been pushed, so we are its only
                // user (intrusive invariant 2).
                unsafe { this.node.with_data(|w| w.waker = waker.cloned()) };
                // Invariant 1: the state is `WAITING` and we join the queue
                // before the lock is released.
                // SAFETY: the node is pinned inside this `!Unpin` future and
                // not linked; `Drop` unlinks it unless it is served first
                // (intrusive invariant 1). The lock is held.
                unsafe { waiters.push_back(NonNull::from(&this.node)) };
                this.state = NotifiedState::Waiting;
                Poll::Pending
            }
            NotifiedState::Waiting => {
                // Invariant 4: a served node is ours again, no lock needed.
                if this.node.state().load(Ordering::Acquire) != NONE {
                    // SAFETY: served, so no one else reaches the node
                    // (intrusive invariant 3); the server took the waker.
                    debug_assert!(unsafe { this.node.with_data(|w| w.waker.is_none()) });
                    this.state = NotifiedState::Done;
                    return Poll::Ready(());
                }
                let Some(waker) = waker else {
                    return Poll::Pending;
                };
                let waiters = crate::loom::lock(&notify.waiters);
                if this.node.state().load(Ordering::Acquire) != NONE {
                    this.state = NotifiedState::Done;
                    return Poll::Ready(());
                }
                // SAFETY: the lock is held (intrusive invariant 2).
                let old = unsafe {
                    this.node.with_data(|w| match &w.waker {
                        Some(old) if old.will_wake(waker) => None,
                        _ => w.waker.replace(waker.clone()),
                    })
                };
                drop(waiters);
                drop(old);
                Poll::Pending
            }
            NotifiedState::Done => Poll::Ready(()),
        }
    }
}

impl<R: Deref<Target = Notify>> NotifiedCore<R> {
    /// `poll` of both public futures: the budget, then the protocol.
    fn poll_future(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let coop = ready!(crate::coop::poll_proceed(cx));
        ready!(self.poll_notified(Some(cx.waker())));
        coop.made_progress();
        Poll::Ready(())
    }
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.core().poll_future(cx)
    }
}

impl Future for OwnedNotified {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.core().poll_future(cx)
    }
}

impl<R: Deref<Target = Notify>> Drop for NotifiedCore<R> {
    fn drop(&mut self) {
        if self.state != NotifiedState::Waiting {
            return;
        }
        // Invariant 4: served by `notify_waiters`: nothing to hand back and
        // nobody touches the node any more.
        if self.node.state().load(Ordering::Acquire) == ALL {
            return;
        }
        let notify: &Notify = &self.notify;
        let mut waiters = crate::loom::lock(&notify.waiters);
        match self.node.state().load(Ordering::Acquire) {
            NONE => {
                // SAFETY: `NONE` under the lock means still linked
                // (invariant 4), in this list.
                unsafe { waiters.remove(NonNull::from(&self.node)) };
                let cur = notify.state.load(Ordering::SeqCst);
                if waiters.is_empty() && bits(cur) == WAITING {
                    // Invariant 1: the last waiter left.
                    notify.state.store(with_bits(cur, EMPTY), Ordering::SeqCst);
                }
            }
            notification @ (ONE | LAST) => {
                // Invariant 4: pass the unconsumed notification on, from the
                // end of the queue it was served from.
                let end = if notification == ONE {
                    End::Front
                } else {
                    End::Back
                };
                let cur = notify.state.load(Ordering::SeqCst);
                if let Some(waker) = notify.notify_locked(&mut waiters, cur, end) {
                    drop(waiters);
                    waker.wake();
                }
            }
            _ => {}
        }
        // Our node (and any waker left in it) is dropped after this, when
        // it is unlinked and no longer reachable.
    }
}

impl fmt::Debug for Notified<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notified")
            .field("state", &self.core.state)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for OwnedNotified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedNotified")
            .field("state", &self.core.state)
            .finish_non_exhaustive()
    }
}
