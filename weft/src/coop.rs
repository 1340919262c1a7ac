//! The per-task cooperative budget.
//!
//! Owns: the thread-local operation budget and the public `weft::task::coop`
//! API. Each time a scheduler polls a task it calls [`budget`], which gives the
//! poll [`INITIAL_BUDGET`] units. Every weft resource that could return `Ready`
//! calls [`poll_proceed`] first: it spends one unit, or, when none are left,
//! defers the task's wake-up like a `yield_now` (scheduler/defer.rs) and
//! returns `Pending`, so a task that always finds work ready
//! (a hot channel, a socket that always has data) still gives its worker back.
//!
//! Invariants:
//! - Outside a scheduler poll the budget is *unconstrained*: resources behave
//!   as if it were infinite, so weft types work under any executor.
//! - A unit spent by an operation that then made no progress is refunded when
//!   the [`RestoreOnPending`] guard drops, unless `made_progress` was called.
//! - The budget lives in its own const-initialised thread-local with no
//!   destructor, so reading it is a plain TLS access and is safe from any
//!   thread-local destructor.
//!
//! The idea and the number 128 come from Tokio's 2020 "automatic cooperative
//! task yielding" (see `shared/seeds/coop-budget-en.txt`).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Units of work one task poll may perform before it is forced to yield.
pub(crate) const INITIAL_BUDGET: u8 = 128;

/// `None` means unconstrained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget(Option<u8>);

impl Budget {
    pub(crate) const fn initial() -> Budget {
        Budget(Some(INITIAL_BUDGET))
    }

    pub(crate) const fn unconstrained() -> Budget {
        Budget(None)
    }

    fn has_remaining(self) -> bool {
        self.0.is_none_or(|n| n > 0)
    }
}

thread_local! {
    static BUDGET: Cell<Budget> = const { Cell::new(Budget::unconstrained()) };
}

/// Run `f` with a fresh budget, restoring the previous budget afterwards
/// (also on unwind). Schedulers wrap each task poll in this.
#[inline]
pub(crate) fn budget<R>(f: impl FnOnce() -> R) -> R {
    with_budget(Budget::initial(), f)
}

/// Run `f` without any budget limit.
#[inline]
pub(crate) fn with_unconstrained<R>(f: impl FnOnce() -> R) -> R {
    with_budget(Budget::unconstrained(), f)
}

#[inline]
fn with_budget<R>(b: Budget, f: impl FnOnce() -> R) -> R {
    struct ResetGuard(Budget);
    impl Drop for ResetGuard {
        fn drop(&mut self) {
            let prev = self.0;
            let _ = BUDGET.try_with(|cell| cell.set(prev));
        }
    }
    let prev = BUDGET.with(|cell| cell.replace(b));
    let _guard = ResetGuard(prev);
    f()
}

/// Whether the current budget has units left (always true when unconstrained).
pub(crate) fn has_remaining() -> bool {
    BUDGET.try_with(|c| c.get().has_remaining()).unwrap_or(true)
}

/// Remaining units, `None` when unconstrained.
#[cfg(all(test, not(loom)))]
pub(crate) fn remaining() -> Option<u8> {
    BUDGET.try_with(|c| c.get().0).unwrap_or(None)
}

/// Stop budgeting for the rest of the current poll and return what was left,
/// so it can be put back with [`restore`] (used by `block_in_place`).
pub(crate) fn stop() -> Budget {
    BUDGET
        .try_with(|c| c.replace(Budget::unconstrained()))
        .unwrap_or(Budget::unconstrained())
}

/// Put back a budget returned by [`stop`].
pub(crate) fn restore(b: Budget) {
    let _ = BUDGET.try_with(|c| c.set(b));
}

/// Spend one unit of budget, or register the task to be polled again and
/// return `Pending` when the budget is exhausted (for leaf futures of your
/// own that should take part in cooperative scheduling, as Tokio's
/// `task::coop::poll_proceed`).
///
/// The returned guard refunds the unit on drop unless
/// [`RestoreOnPending::made_progress`] is called: call it once the operation
/// has actually completed.
///
/// ```
/// use std::task::Poll;
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let ready = std::future::poll_fn(|cx| {
///     let restore = std::task::ready!(weft::task::coop::poll_proceed(cx));
///     restore.made_progress();
///     Poll::Ready(7)
/// });
/// assert_eq!(ready.await, 7);
/// # });
/// ```
#[inline]
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    let outcome = BUDGET.try_with(|cell| {
        let before = cell.get();
        match before.0 {
            None => Poll::Ready(RestoreOnPending(
                Cell::new(Budget::unconstrained()),
                std::marker::PhantomData,
            )),
            Some(0) => Poll::Pending,
            Some(n) => {
                cell.set(Budget(Some(n - 1)));
                if n == 1 {
                    crate::runtime::context::budget_forced_yield();
                }
                Poll::Ready(RestoreOnPending(
                    Cell::new(before),
                    std::marker::PhantomData,
                ))
            }
        }
    });
    match outcome {
        Ok(Poll::Ready(guard)) => Poll::Ready(guard),
        Ok(Poll::Pending) => {
            // Yield as `yield_now` does: the task runs again after the work
            // it has been starving *and* after the drivers have delivered
            // what is ready (scheduler/defer.rs), as Tokio's budget does.
            crate::runtime::context::defer(cx.waker());
            Poll::Pending
        }
        // Thread-local already destroyed: behave as unconstrained.
        Err(_) => Poll::Ready(RestoreOnPending(
            Cell::new(Budget::unconstrained()),
            std::marker::PhantomData,
        )),
    }
}

/// Spend one unit for an operation that always completes at once (the
/// in-memory streams: `empty`, `repeat`, `sink`), or yield when the budget
/// is spent, so a loop over such a resource still lets others run.
#[inline]
pub(crate) fn poll_proceed_and_make_progress(cx: &mut Context<'_>) -> Poll<()> {
    poll_proceed(cx).map(|restore| restore.made_progress())
}

/// Refunds one budget unit on drop unless the operation made progress.
#[must_use = "dropping the guard at once refunds the unit: hold it until the operation completes"]
#[derive(Debug)]
pub struct RestoreOnPending(
    Cell<Budget>,
    // Neither `Send` nor `Sync`, as Tokio's: the unit belongs to this
    // thread's budget.
    std::marker::PhantomData<*const ()>,
);

impl RestoreOnPending {
    /// The operation completed: keep the unit spent.
    pub fn made_progress(&self) {
        self.0.set(Budget::unconstrained());
    }
}

impl Drop for RestoreOnPending {
    fn drop(&mut self) {
        let restore = self.0.get();
        if restore.0.is_some() {
            let _ = BUDGET.try_with(|c| c.set(restore));
        }
    }
}

/// Consume one unit of the current task's budget, yielding first if the
/// budget is exhausted.
///
/// Call this in a loop that does work without touching a weft resource, so
/// the loop still lets other tasks run.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let mut sum = 0u64;
/// for i in 0..1_000u64 {
///     weft::task::coop::consume_budget().await;
///     sum += i;
/// }
/// assert_eq!(sum, 499_500);
/// # });
/// ```
pub async fn consume_budget() {
    let mut status = Poll::Pending;
    std::future::poll_fn(move |cx| {
        if status.is_ready() {
            return status;
        }
        status = poll_proceed(cx).map(|restore| restore.made_progress());
        status
    })
    .await
}

/// Whether the current task has budget left. Always `true` outside a runtime
/// and inside [`unconstrained`].
///
/// ```
/// assert!(weft::task::coop::has_budget_remaining());
/// ```
pub fn has_budget_remaining() -> bool {
    has_remaining()
}

/// Run `inner` with no budget: weft resources polled inside never force it
/// to yield. Use sparingly: such a future can starve its worker.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let v = weft::task::coop::unconstrained(async { 5 }).await;
/// assert_eq!(v, 5);
/// # });
/// ```
pub fn unconstrained<F>(inner: F) -> Unconstrained<F> {
    Unconstrained { inner }
}

/// Future returned by [`unconstrained`].
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Unconstrained<F> {
    inner: F,
}

impl<F: Future> Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: structural pinning: `inner` is never moved out of `self`.
        let inner = unsafe { self.map_unchecked_mut(|u| &mut u.inner) };
        with_unconstrained(|| inner.poll(cx))
    }
}

/// Make `future` take part in cooperative scheduling: each poll first
/// spends a unit of the task's budget (yielding when it is spent), and the
/// unit is refunded if the inner future is still pending (Tokio's
/// `task::coop::cooperative`).
pub fn cooperative<F: Future>(future: F) -> Coop<F> {
    Coop { inner: future }
}

/// The future of [`cooperative`].
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Coop<F> {
    inner: F,
}

impl<F: Future> Future for Coop<F> {
    type Output = F::Output;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let restore = std::task::ready!(poll_proceed(cx));
        // SAFETY: `inner` is structurally pinned: it is never moved out of
        // `self`, and `Coop` has no `Drop` impl nor `Unpin` bound on it.
        let inner = unsafe { self.map_unchecked_mut(|c| &mut c.inner) };
        let out = std::task::ready!(inner.poll(cx));
        restore.made_progress();
        Poll::Ready(out)
    }
}
