//! [`Barrier`]: lets a fixed number of tasks wait for each other.
//!
//! # What this file owns
//!
//! `Barrier` and `BarrierWaitResult`.
//!
//! # Invariants
//!
//! `state` (a mutex) counts the tasks that have arrived in the current
//! generation and numbers the generations. The task that brings the count to
//! `n` is the leader: under the lock it resets the count and starts a new
//! generation; after unlocking it calls `Notify::notify_waiters`, the only
//! notification ever sent. It must not notify under the lock: that wakes
//! wakers, which may call back into the barrier (`sync/mod.rs`, "Wakers and
//! locks").
//!
//! 1. **No lost release.** Every other task creates its `Notified` under the
//!    lock, after seeing there that its generation is still the current one.
//!    Its leader starts the next generation under the lock later, and
//!    notifies after that, so the `Notified` sees the notification.
//! 2. **No early release.** A `Notified` may also complete for an earlier
//!    generation's notification (a leader that notifies after unlocking can
//!    be overtaken by tasks of the next generation). So a woken task checks
//!    under the lock whether its generation is over, and otherwise waits
//!    again with a new `Notified` (created as in 1).

use std::fmt;

use crate::loom::Mutex;
use crate::sync::Notify;

/// A barrier: `n` tasks call [`wait`](Barrier::wait), and all of them are
/// released together once the `n`-th arrives. The barrier can be reused:
/// the next `n` calls form the next group.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use weft::sync::Barrier;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let barrier = Arc::new(Barrier::new(5));
///     let mut handles = Vec::new();
///     for _ in 0..5 {
///         let barrier = barrier.clone();
///         handles.push(weft::spawn(async move { barrier.wait().await }));
///     }
///     let mut leaders = 0;
///     for h in handles {
///         if h.await.unwrap().is_leader() {
///             leaders += 1;
///         }
///     }
///     assert_eq!(leaders, 1);
/// });
/// ```
pub struct Barrier {
    state: Mutex<BarrierState>,
    wait: Notify,
    n: usize,
}

struct BarrierState {
    /// Tasks that arrived in the current generation.
    arrived: usize,
    /// The current generation; its leader increments it.
    generation: u64,
}

/// What [`Barrier::wait`] returns: whether this task was the leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this task was the one leader of its group: exactly one task
    /// of each group of `n` gets `true`.
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// Creates a barrier that releases tasks in groups of `n`. A barrier of
    /// zero behaves like a barrier of one (`wait` returns at once).
    pub fn new(n: usize) -> Barrier {
        Barrier {
            state: Mutex::new(BarrierState {
                arrived: 0,
                generation: 0,
            }),
            wait: Notify::new(),
            n: n.max(1),
        }
    }

    /// Waits until `n` tasks (counting this one) have called `wait`, then
    /// returns in all of them. Exactly one of them, the last to arrive, gets
    /// a result whose [`is_leader`](BarrierWaitResult::is_leader) is `true`.
    ///
    /// # Cancel safety
    ///
    /// This method is not cancel safe: once the task has arrived (after its
    /// first poll that does not yield to the cooperative budget), cancelling
    /// the call does not take the arrival back, so the group may be released
    /// with one task fewer actually waiting.
    pub async fn wait(&self) -> BarrierWaitResult {
        crate::coop::consume_budget().await;
        let (generation, mut notified) = {
            let mut state = crate::loom::lock(&self.state);
            state.arrived += 1;
            if state.arrived == self.n {
                state.arrived = 0;
                state.generation = state.generation.wrapping_add(1);
                drop(state);
                self.wait.notify_waiters();
                return BarrierWaitResult(true);
            }
            // Invariant 1: created under the lock.
            (state.generation, self.wait.notified())
        };
        loop {
            notified.await;
            let state = crate::loom::lock(&self.state);
            // Invariant 2: woken, maybe by an earlier generation's leader.
            if state.generation != generation {
                return BarrierWaitResult(false);
            }
            notified = self.wait.notified();
        }
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier")
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Waker};

    #[test]
    fn releases_group_and_is_reusable() {
        let barrier = Barrier::new(2);
        let cx = &mut Context::from_waker(Waker::noop());
        for _ in 0..3 {
            let mut a = pin!(barrier.wait());
            assert!(a.as_mut().poll(cx).is_pending());
            let mut b = pin!(barrier.wait());
            assert_eq!(
                b.as_mut().poll(cx).map(|r| r.is_leader()),
                std::task::Poll::Ready(true)
            );
            assert_eq!(
                a.as_mut().poll(cx).map(|r| r.is_leader()),
                std::task::Poll::Ready(false)
            );
        }
    }

    /// Invariant 2: a notification meant for an earlier generation (here
    /// sent by hand) does not release a waiter whose group is incomplete.
    #[test]
    fn stale_notification_does_not_release_early() {
        let barrier = Barrier::new(2);
        let cx = &mut Context::from_waker(Waker::noop());
        let mut a = pin!(barrier.wait());
        assert!(a.as_mut().poll(cx).is_pending());
        barrier.wait.notify_waiters();
        assert!(a.as_mut().poll(cx).is_pending());
        let mut b = pin!(barrier.wait());
        assert_eq!(
            b.as_mut().poll(cx).map(|r| r.is_leader()),
            std::task::Poll::Ready(true)
        );
        assert_eq!(
            a.as_mut().poll(cx).map(|r| r.is_leader()),
            std::task::Poll::Ready(false)
        );
    }

    #[test]
    fn zero_is_one() {
        let barrier = Barrier::new(0);
        let cx = &mut Context::from_waker(Waker::noop());
        let mut a = pin!(barrier.wait());
        assert_eq!(
            a.as_mut().poll(cx).map(|r| r.is_leader()),
            std::task::Poll::Ready(true)
        );
    }

    #[test]
    fn send_sync() {
        fn assert_send_sync<T: Send + Sync>(_: &T) {}
        let b = Barrier::new(1);
        assert_send_sync(&b);
        assert_send_sync(&b.wait());
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use std::sync::Arc as StdArc;

    /// Two tasks go through the barrier twice. The leader notifies after
    /// unlocking, racing the other task's arrival, its `Notified` and its
    /// re-check (invariants 1 and 2): no release may be lost (loom reports
    /// a task that never wakes) and each round has exactly one leader. A
    /// stale notification reaching a later round is checked by the unit
    /// test `stale_notification_does_not_release_early`.
    #[test]
    fn two_rounds_one_leader_each() {
        loom::model(|| {
            let barrier = StdArc::new(Barrier::new(2));
            let b2 = barrier.clone();
            let t = loom::thread::spawn(move || {
                let first = loom::future::block_on(b2.wait()).is_leader();
                let second = loom::future::block_on(b2.wait()).is_leader();
                (first, second)
            });
            let first = loom::future::block_on(barrier.wait()).is_leader();
            let second = loom::future::block_on(barrier.wait()).is_leader();
            let (t_first, t_second) = t.join().unwrap();
            assert!(first != t_first, "round 1 needs exactly one leader");
            assert!(second != t_second, "round 2 needs exactly one leader");
        });
    }
}
