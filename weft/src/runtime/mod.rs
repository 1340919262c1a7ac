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
pub(crate) mod io;
mod local_runtime;
mod long_poll;
pub(crate) mod metrics;
pub(crate) mod park_thread;
#[allow(clippy::module_inception)]
mod runtime;

pub use self::builder::{Builder, WORKER_THREADS_ENV};
pub use self::handle::{EnterGuard, Handle, RuntimeFlavor, TryCurrentError};
pub use self::local_runtime::{LocalOptions, LocalRuntime};
pub(crate) use self::long_poll::LongPollHook;
pub use self::long_poll::LongPollInfo;
pub use self::metrics::RuntimeMetrics;
pub use self::runtime::Runtime;
pub(crate) use self::runtime::Scheduler;
