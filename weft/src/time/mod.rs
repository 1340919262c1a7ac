//! Time: sleeping, timeouts and intervals on the runtime's timer wheel.
//!
//! Every runtime built with the time driver (`Builder::enable_time` or
//! `enable_all`; `Runtime::new` and the macros enable it) has one
//! hierarchical timing wheel with 1 ms resolution. Timers fire no earlier
//! than their deadline, and a cancelled timer frees its entry at once.
//! Polling a timer that completes spends the task's coop budget.
//!
//! For tests, the clock can be frozen ([`pause`], or
//! `Builder::start_paused(true)`) and moved by hand ([`advance`]); while
//! frozen, a runtime with nothing to do jumps straight to its next timer.
//!
//! ```
//! use std::time::Duration;
//! use weft::time::{sleep, timeout};
//!
//! # weft::runtime::Runtime::new().unwrap().block_on(async {
//! sleep(Duration::from_millis(5)).await;
//! let slow = sleep(Duration::from_secs(10));
//! assert!(timeout(Duration::from_millis(5), slow).await.is_err());
//! # });
//! ```

mod clock;
pub(crate) mod driver;
pub mod error;
mod instant;
mod interval;
#[cfg(all(test, loom))]
mod loom_auto_advance;
#[cfg(all(test, loom))]
mod loom_lazy_extend;
#[cfg(all(test, loom))]
mod loom_poll_pending;
mod sleep;
mod test_util;
mod timeout;
pub(crate) mod wheel;

pub use error::Elapsed;
pub use instant::Instant;
pub use interval::{interval, interval_at, Interval, MissedTickBehavior};
pub use sleep::{sleep, sleep_until, Sleep};
pub use std::time::Duration;
pub(crate) use test_util::BlockingInFlight;
pub use test_util::{advance, pause, resume};
pub use timeout::{timeout, timeout_at, Timeout};
