//! The `Acquire` future: waits in the queue for permits. The invariants it
//! relies on are stated in the parent module's doc (`semaphore/mod.rs`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{ready, Context, Poll};

use super::{
    AcquireError, Semaphore, TryAcquireError, Waiter, ACQUIRED, CLOSED, CLOSED_OUT, PERMIT_SHIFT,
    WAITERS, WAITING,
};
use crate::loom::Ordering;
use crate::sync::intrusive::Node;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AcquireState {
    /// Not queued yet.
    Idle,
    /// Our node was pushed to the queue (and may have been served since).
    Queued,
    /// The permits are ours (`held_back` counts them), but the task's
    /// budget was spent when they came: handed out by the next poll, given
    /// back if the future is dropped first.
    Acquired,
    /// Completed: permits handed out, no longer queued.
    Done,
}

/// Future acquiring `num` permits without wrapping them in a guard; the
/// caller owns them once it resolves to `Ok`.
#[must_use = "futures do nothing unless polled"]
pub(crate) struct Acquire<'a> {
    sem: &'a Semaphore,
    num: usize,
    state: AcquireState,
    /// Permits this future still holds after it failed (`close` came
    /// before the poll that saw it served): given back when it is dropped
    /// (invariant 6).
    held_back: usize,
    /// Our place in the queue while `Queued` (intrusive invariant 1: the
    /// future is `!Unpin`, so the node stays put while linked).
    node: Node<Waiter>,
}

impl<'a> Acquire<'a> {
    pub(super) fn new(sem: &'a Semaphore, num: usize) -> Acquire<'a> {
        Acquire {
            sem,
            num,
            state: AcquireState::Idle,
            held_back: 0,
            node: Node::new(
                Waiter {
                    waker: None,
                    needs: 0,
                    assigned: 0,
                },
                WAITING,
            ),
        }
    }

    /// The body of `poll`, without the budget.
    fn poll_acquire(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), AcquireError>> {
        // SAFETY: nothing is moved out of `this`; the node stays where it is
        // (intrusive invariant 1).
        let this = unsafe { self.get_unchecked_mut() };
        let sem = this.sem;
        match this.state {
            AcquireState::Idle => {
                match sem.try_acquire_raw(this.num) {
                    Ok(()) => {
                        this.state = AcquireState::Done;
                        return Poll::Ready(Ok(()));
                    }
                    Err(TryAcquireError::Closed) => {
                        this.state = AcquireState::Done;
                        return Poll::Ready(Err(AcquireError(())));
                    }
                    Err(TryAcquireError::NoPermits) => {}
                }
                let mut waiters = crate::loom::lock(&sem.waiters);
                let mut cur = sem.state.load(Ordering::Acquire);
                let taken = loop {
                    if cur & CLOSED != 0 {
                        this.state = AcquireState::Done;
                        return Poll::Ready(Err(AcquireError(())));
                    }
                    let avail = cur >> PERMIT_SHIFT;
                    // Invariant 4: with waiters queued there is nothing here.
                    debug_assert!(waiters.is_empty() || avail == 0);
                    let take = avail.min(this.num);
                    // Invariant 2: if we will enqueue, set `WAITERS` in the
                    // same step that takes what is available.
                    let flag = if take == this.num { 0 } else { WAITERS };
                    match sem.state.compare_exchange_weak(
                        cur,
                        (cur - (take << PERMIT_SHIFT)) | flag,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => break take,
                        Err(actual) => cur = actual,
                    }
                };
                if taken == this.num {
                    // Permits were released between the fast path and here.
                    this.state = AcquireState::Done;
                    return Poll::Ready(Ok(()));
                }
                // SAFETY: the node has never been pushed, so we are its only
                // user (intrusive invariant 2).
                unsafe {
                    this.node.with_data(|w| {
                        w.waker = Some(cx.waker().clone());
                        w.needs = this.num - taken;
                        w.assigned = taken;
                    });
                }
                // SAFETY: the node is pinned inside this `!Unpin` future and
                // not linked; `Drop` unlinks it unless it is served first
                // (intrusive invariant 1). The lock is held.
                unsafe { waiters.push_back(NonNull::from(&this.node)) };
                this.state = AcquireState::Queued;
                Poll::Pending
            }
            AcquireState::Queued => {
                // Invariant 5: a served node is ours again, no lock needed.
                if let Some(res) = this.served(this.node.state().load(Ordering::Acquire)) {
                    return Poll::Ready(res);
                }
                let waiters = crate::loom::lock(&sem.waiters);
                if let Some(res) = this.served(this.node.state().load(Ordering::Acquire)) {
                    return Poll::Ready(res);
                }
                // SAFETY: the lock is held (intrusive invariant 2).
                let old = unsafe {
                    this.node.with_data(|w| match &w.waker {
                        Some(old) if old.will_wake(cx.waker()) => None,
                        _ => w.waker.replace(cx.waker().clone()),
                    })
                };
                drop(waiters);
                drop(old);
                Poll::Pending
            }
            AcquireState::Done | AcquireState::Acquired => {
                panic!("semaphore acquire future polled after completion")
            }
        }
    }

    /// The result for a node `state` loaded with `Acquire`, if it was served
    /// (and then marks this future done). A closed semaphore fails the
    /// acquire even if its permits were all assigned before the close, as
    /// Tokio's does (it looks at the closed flag first on every poll): the
    /// permits it holds go back when the future is dropped (invariant 6).
    fn served(&mut self, state: usize) -> Option<Result<(), AcquireError>> {
        let res = match state {
            WAITING => return None,
            ACQUIRED if !self.sem.is_closed() => Ok(()),
            ACQUIRED => {
                self.held_back = self.num;
                Err(AcquireError(()))
            }
            _ => {
                // SAFETY: served, so no one else reaches the node
                // (invariant 5).
                self.held_back = unsafe { self.node.with_data(|w| w.assigned) };
                Err(AcquireError(()))
            }
        };
        // SAFETY: served, so no one else reaches the node (invariant 5);
        // the server took the waker.
        debug_assert!(unsafe { self.node.with_data(|w| w.waker.is_none()) });
        self.state = AcquireState::Done;
        Some(res)
    }
}

impl Future for Acquire<'_> {
    type Output = Result<(), AcquireError>;

    /// The queue comes first and the budget second, as in Tokio: a task
    /// out of budget still takes its place in line (so the lock or permits
    /// stay first come, first served), and only the hand-over waits for
    /// the budget.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: nothing is moved out; the node stays where it is
        // (intrusive invariant 1).
        let state = unsafe { self.as_mut().get_unchecked_mut() }.state;
        if state != AcquireState::Acquired {
            ready!(self.as_mut().poll_acquire(cx))?;
            // SAFETY: as above.
            let this = unsafe { self.as_mut().get_unchecked_mut() };
            this.state = AcquireState::Acquired;
            this.held_back = this.num;
        }
        let coop = ready!(crate::coop::poll_proceed(cx));
        coop.made_progress();
        // SAFETY: as above.
        let this = unsafe { self.get_unchecked_mut() };
        this.state = AcquireState::Done;
        this.held_back = 0;
        Poll::Ready(Ok(()))
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        let sem = self.sem;
        if self.state != AcquireState::Queued {
            // Invariant 6: what a failed acquire still held.
            return sem.release(self.held_back);
        }
        // Invariant 5: served nodes are ours again, no lock needed.
        match self.node.state().load(Ordering::Acquire) {
            // Invariant 1: we own all `num` permits; give them back.
            ACQUIRED => return sem.release(self.num),
            // SAFETY: served (invariant 5). Invariant 6: `close` left the
            // assigned permits with us.
            CLOSED_OUT => return sem.release(unsafe { self.node.with_data(|w| w.assigned) }),
            _ => {}
        }
        let mut waiters = crate::loom::lock(&sem.waiters);
        let assigned = match self.node.state().load(Ordering::Acquire) {
            WAITING => {
                // SAFETY: `WAITING` under the lock means still linked, in
                // this list (invariant 5).
                unsafe { waiters.remove(NonNull::from(&self.node)) };
                // SAFETY: unlinked under the lock: ours alone now.
                unsafe { self.node.with_data(|w| w.assigned) }
            }
            ACQUIRED => self.num,
            // SAFETY: served (invariant 5); invariant 6 as above.
            _ => unsafe { self.node.with_data(|w| w.assigned) },
        };
        // Invariant 1: give back what was handed to us; with nothing to
        // give, this still clears `WAITERS` if we were the last (invariant 2).
        sem.release_locked(assigned, waiters);
    }
}

impl fmt::Debug for Acquire<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acquire")
            .field("num", &self.num)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}
