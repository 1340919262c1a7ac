//! The runtime: building it, entering it, and shutting it down.
//!
//! Owns: [`Builder`], [`Runtime`], [`Handle`], the thread-local context,
//! and the metrics view. The schedulers themselves live in `scheduler/`.
//!
//! ```
//! use weft::runtime::Runtime;
//!
//! let rt = Runtime::new().unwrap();
//! let answer = rt.block_on(async {
//!     let a = weft::spawn(async { 40 });
//!     let b = weft::spawn(async { 2 });
//!     a.await.unwrap() + b.await.unwrap()
//! });
//! assert_eq!(answer, 42);
//! ```

mod builder;
pub(crate) mod context;
pub(crate) mod driver;
mod handle;
mod id;
pub(crate) mod io;
mod local_runtime;
mod long_poll;
pub(crate) mod metrics;
pub(crate) mod park_thread;
#[allow(clippy::module_inception)]
mod runtime;

pub use self::builder::{Builder, WORKER_THREADS_ENV};
pub use self::handle::{EnterGuard, Handle, RuntimeFlavor, TryCurrentError};
pub use self::id::Id;
pub use self::io::is_rt_shutdown_err;
pub use self::io::uring::{IoDriver, IO_DRIVER_ENV};
pub use self::local_runtime::{LocalOptions, LocalRuntime};
pub(crate) use self::long_poll::LongPollHook;
pub use self::long_poll::LongPollInfo;
pub use self::metrics::RuntimeMetrics;
pub use self::runtime::Runtime;
pub(crate) use self::runtime::Scheduler;

/// The index of the worker thread this is called on, from 0 to
/// `RuntimeMetrics::num_workers() - 1` (the index the per-worker metrics
/// use), or `None` off the runtime's workers: outside any runtime, on a
/// blocking-pool thread, on the thread in a multi_thread runtime's
/// `block_on` (it is no worker), or after `block_in_place` handed this
/// thread's worker to another thread. On a current_thread runtime it is
/// `Some(0)` on the thread driving it and `None` on a thread whose
/// `block_on` waits for another thread to give the driver back.
///
/// A task may move between workers at an `.await`, so the answer holds
/// only until the next one.
///
/// ```
/// let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
/// let index = rt.block_on(async { weft::spawn(async { weft::runtime::worker_index() }).await });
/// assert!(index.unwrap().is_some_and(|i| i < 2));
/// assert_eq!(weft::runtime::worker_index(), None);
/// ```
pub fn worker_index() -> Option<usize> {
    context::with_scheduler(|cx| cx.and_then(crate::scheduler::Context::worker_index))
}
