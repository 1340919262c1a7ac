//! `Sleep`: a future that completes at a deadline.
//!
//! Owns: one timer entry in the runtime's wheel, armed on first poll (a
//! `Sleep` that is never polled costs no wheel entry), moved with its
//! waker when the sleep is reset, and freed when the sleep completes or is
//! dropped.

use super::driver::{Armed, Rearmed};
use super::wheel::{TimerKey, WakerId};
use super::Instant;
use crate::coop;
use crate::runtime::{context, driver};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

/// Wait until `duration` has elapsed.
///
/// Timers have 1 ms resolution and never complete early. Cancel-safe.
///
/// # Panics
/// Outside a runtime, or on a runtime built without the time driver.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let start = weft::time::Instant::now();
/// weft::time::sleep(std::time::Duration::from_millis(10)).await;
/// assert!(start.elapsed() >= std::time::Duration::from_millis(10));
/// # });
/// ```
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    let driver = time_driver();
    let now = Instant::now();
    let deadline = now.saturating_add_or_never(duration);
    Sleep::new(driver, deadline)
}

/// Wait until `deadline`.
///
/// # Panics
/// Outside a runtime, or on a runtime built without the time driver.
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(time_driver(), deadline)
}

#[track_caller]
pub(crate) fn time_driver() -> driver::Handle {
    // A `match`, not `unwrap_or_else`: a panic inside a closure would name
    // the closure's line, not the caller's.
    let Some(handle) = context::with_current(|h| h.driver().clone()) else {
        panic!(
            "there is no reactor running, must be called from the context of a Tokio 1.x \
             runtime: there is no weft runtime on this thread, and weft timers need one: call this inside \
             Runtime::block_on or a spawned task, or enter a runtime with Runtime::enter"
        )
    };
    if handle.time().is_none() {
        panic!(
            "A Tokio 1.x context was found, but timers are disabled. Call `enable_time` on the \
             runtime builder to enable timers. This weft runtime was built without the time driver: add .enable_time() (or \
             .enable_all()) to its Builder to use sleep, timeout and interval"
        );
    }
    handle
}

/// The future returned by [`sleep`] and [`sleep_until`].
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct Sleep {
    deadline: Instant,
    driver: driver::Handle,
    entry: Option<TimerKey>,
    /// The waker `entry`'s timer holds (meaningless without an entry).
    stored_waker: WakerId,
    elapsed: bool,
}

impl Sleep {
    pub(crate) fn new(driver: driver::Handle, deadline: Instant) -> Sleep {
        Sleep {
            deadline,
            driver,
            entry: None,
            stored_waker: WakerId::NONE,
            elapsed: false,
        }
    }

    /// When this sleep completes.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// True once the sleep has completed, or once its timer fired even if
    /// the sleep was not polled since (as Tokio's: a sleep polled once,
    /// and then left while its deadline passed, is elapsed). A sleep never
    /// polled has no timer and is not elapsed.
    pub fn is_elapsed(&self) -> bool {
        self.elapsed || self.entry.is_some_and(|key| self.time().has_fired(key))
    }

    /// Move the deadline (earlier or later), even after completion; the
    /// sleep is pending again until the new deadline. A sleep that a task
    /// has polled keeps that task's waker: the task is woken at the new
    /// deadline without polling the sleep again (at once if it has passed),
    /// as with Tokio's `reset`, which tokio-util's `DelayQueue` relies on.
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        let this = self.get_mut();
        this.deadline = deadline;
        this.elapsed = false;
        let Some(key) = this.entry.take() else {
            return;
        };
        match this.time().rearm(key, deadline.into_std()) {
            Rearmed::Pending { key, unpark } => {
                this.entry = Some(key);
                if unpark {
                    this.driver.unpark();
                }
            }
            Rearmed::Unarmed => {}
        }
    }

    fn time(&self) -> &super::driver::Handle {
        self.driver
            .time()
            .expect("checked when the sleep was created")
    }

    fn cancel(&mut self) {
        if let Some(key) = self.entry.take() {
            self.time().cancel(key);
        }
    }

    /// Poll without spending budget.
    pub(crate) fn poll_elapsed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.elapsed {
            return Poll::Ready(());
        }
        let done = match self.entry {
            None => match self.time().arm(self.deadline.into_std(), cx.waker()) {
                Armed::Elapsed => true,
                Armed::Pending { key, unpark, waker } => {
                    self.entry = Some(key);
                    self.stored_waker = waker;
                    if unpark {
                        self.driver.unpark();
                    }
                    false
                }
            },
            Some(key) => {
                let mut stored = self.stored_waker;
                let fired = self.time().poll_fired(key, &mut stored, cx.waker());
                self.stored_waker = stored;
                fired
            }
        };
        if done {
            self.cancel();
            self.elapsed = true;
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let restore = ready!(coop::poll_proceed(cx));
        ready!(this.poll_elapsed(cx));
        restore.made_progress();
        Poll::Ready(())
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.cancel();
    }
}

impl fmt::Debug for Sleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleep")
            .field("deadline", &self.deadline)
            .field("elapsed", &self.elapsed)
            .finish()
    }
}
