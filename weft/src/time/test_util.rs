//! Freezing and moving the clock, for deterministic tests.
//!
//! Owns: the public `pause`/`resume`/`advance` entry points; the clock
//! itself is in `clock.rs`. Like Tokio, only the `current_thread` runtime
//! may pause: a frozen clock jumps to the next timer when the runtime is
//! idle, and only a single driving thread knows that for sure.
//!
//! As in Tokio, the jump waits for `spawn_blocking` work in flight: while a
//! blocking closure runs, the idle runtime parks (its completion wakes it)
//! instead of moving time, so `timeout(d, spawn_blocking(..))` does not
//! time out just because the clock is frozen. [`BlockingInFlight`] counts
//! them.

use super::sleep::time_driver;
use crate::runtime::driver;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Marks a `spawn_blocking` closure in flight, from spawn until its task
/// has completed and woken its `JoinHandle` (`finish`, called by the
/// blocking task's scheduler on release) or is dropped unrun: while any is
/// in flight, a frozen clock does not auto-advance.
pub(crate) struct BlockingInFlight {
    driver: driver::Handle,
    finished: AtomicBool,
}

impl BlockingInFlight {
    /// `None` on a runtime without the time driver.
    pub(crate) fn new(driver: &driver::Handle) -> Option<BlockingInFlight> {
        driver.time()?.clock().inhibit_auto_advance();
        Some(BlockingInFlight {
            driver: driver.clone(),
            finished: AtomicBool::new(false),
        })
    }

    /// The closure's task is done and whoever awaits it has been woken:
    /// time may move again (once, however often this is called).
    pub(crate) fn finish(&self) {
        if self.finished.swap(true, Ordering::AcqRel) {
            return;
        }
        let clock = self.driver.time().expect("checked in new").clock();
        if clock.allow_auto_advance() && clock.is_paused() {
            // A parked runtime may be waiting for us to let time move.
            self.driver.unpark();
        }
    }
}

impl Drop for BlockingInFlight {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Freeze the runtime's clock.
///
/// While frozen, [`Instant::now`](super::Instant::now) stands still, and a
/// runtime whose tasks all wait jumps straight to its next timer.
///
/// # Panics
/// If the runtime is not `current_thread`, has no time driver, or time is
/// already frozen.
///
/// ```
/// use std::time::Duration;
/// let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// rt.block_on(async {
///     weft::time::pause();
///     let start = weft::time::Instant::now();
///     weft::time::advance(Duration::from_secs(30)).await;
///     assert_eq!(start.elapsed(), Duration::from_secs(30));
/// });
/// ```
#[track_caller]
pub fn pause() {
    let driver = time_driver();
    let is_current_thread = crate::runtime::context::with_current(|h| h.is_current_thread());
    if is_current_thread != Some(true) {
        panic!(
            "weft::time::pause() requires the current_thread runtime (a frozen clock needs one \
             driving thread that knows when every task is idle); build the runtime with \
             Builder::new_current_thread(), or use #[weft::test] (its default flavor)"
        );
    }
    if !driver.time().expect("checked").clock().pause() {
        panic!("weft::time::pause(): time is already frozen");
    }
}

/// Let the clock run again, from where it was frozen.
///
/// # Panics
/// If time is not frozen, or outside a runtime with the time driver.
#[track_caller]
pub fn resume() {
    let driver = time_driver();
    if !driver.time().expect("checked").clock().resume() {
        panic!("weft::time::resume(): time is not frozen; call weft::time::pause() first");
    }
}

/// Move the frozen clock forward by `duration`, fire the timers that came
/// due, and yield so the tasks they woke run. The clock moves when the
/// future is first polled, as Tokio's `async fn advance` does: one made
/// and dropped unpolled moves nothing.
///
/// A timer due between two milliseconds is rounded up, so one set at
/// `Instant::now() + d` off the millisecond grid has not fired when
/// `advance(d)` returns; it fires when the runtime next idles (auto-advance
/// reaches its millisecond). Current Tokio (1.54) does the same. Old Tokio
/// (1.8) ended `advance` with `sleep_until(new now)`, which fired it, and
/// tests written then may rely on that: mini-redis 0.4.1's
/// `key_value_timeout` fails on Tokio 1.54 and on weft alike.
///
/// # Panics
/// When first polled, if time is not frozen or there is no runtime with
/// the time driver; the message names the line that called `advance`.
#[track_caller]
pub fn advance(duration: Duration) -> impl std::future::Future<Output = ()> {
    let called_at = std::panic::Location::caller();
    async move {
        let driver = crate::runtime::context::with_current(|h| h.driver().clone())
            .filter(|driver| driver.time().is_some());
        let Some(time) = driver.as_ref().and_then(|driver| driver.time()) else {
            panic!(
                "weft::time::advance() (called at {called_at}) needs a weft runtime with the \
                 time driver: await it inside Runtime::block_on or a task of a runtime built \
                 with .enable_time()"
            );
        };
        if !time.clock().advance(duration) {
            panic!(
                "weft::time::advance() (called at {called_at}): time is not frozen; call \
                 weft::time::pause() first"
            );
        }
        time.process();
        crate::task::yield_now().await
    }
}
