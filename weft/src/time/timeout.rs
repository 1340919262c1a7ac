//! `Timeout`: a future with a deadline.
//!
//! Owns: the wrapped future (structurally pinned) and a [`Sleep`]. The
//! future is polled first, so one that is ready wins even at the deadline.
//! If the future used up the task's budget, the sleep is still checked
//! (unconstrained), so a budget-hungry future cannot outlive its timeout.

use super::error::Elapsed;
use super::sleep::{sleep_until, Sleep};
use super::Instant;
use crate::coop;
use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// Run `future` with a time limit: `Err(Elapsed)` if it has not finished
/// after `duration` (the future is then dropped, i.e. cancelled).
///
/// # Panics
/// Outside a runtime, or on a runtime built without the time driver.
///
/// ```
/// use std::time::Duration;
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let fast = weft::time::timeout(Duration::from_secs(5), async { 7 }).await;
/// assert_eq!(fast, Ok(7));
/// let never = std::future::pending::<()>();
/// assert!(weft::time::timeout(Duration::from_millis(1), never).await.is_err());
/// # });
/// ```
#[track_caller]
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    let deadline = Instant::now().saturating_add_or_never(duration);
    timeout_at(deadline, future)
}

/// Like [`timeout`], with an absolute deadline.
#[track_caller]
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    Timeout {
        value: future.into_future(),
        delay: sleep_until(deadline),
    }
}

/// The future returned by [`timeout`] and [`timeout_at`].
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct Timeout<T> {
    value: T,
    delay: Sleep,
}

impl<T> Timeout<T> {
    /// The wrapped future.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The wrapped future, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// Unwrap the future, dropping the timer.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T: Future> Future for Timeout<T> {
    type Output = Result<T::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `value` is structurally pinned: it is never moved out of a
        // pinned `Timeout` (no method takes it by value through a pin,
        // `Timeout` has no `Drop` impl, and it is `Unpin` only if `T` is).
        // `delay` is not pinned (`Sleep: Unpin`).
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: see above.
        let value = unsafe { Pin::new_unchecked(&mut this.value) };
        let had_budget = coop::has_remaining();
        if let Poll::Ready(v) = value.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        let delay = Pin::new(&mut this.delay);
        let fired = if had_budget && !coop::has_remaining() {
            coop::with_unconstrained(|| delay.poll(cx))
        } else {
            delay.poll(cx)
        };
        fired.map(|()| Err(Elapsed::new()))
    }
}

impl<T: fmt::Debug> fmt::Debug for Timeout<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timeout")
            .field("value", &self.value)
            .field("deadline", &self.delay.deadline())
            .finish()
    }
}
