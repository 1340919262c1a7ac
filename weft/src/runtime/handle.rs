//! `Handle`: a cloneable reference to a runtime, usable from any thread.

use super::context;
use super::metrics::RuntimeMetrics;
use crate::scheduler;
use crate::task::{Id, JoinHandle};
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;

/// A handle to a runtime: spawn onto it, enter it, read its metrics.
///
/// A handle may outlive its runtime. Once the runtime has shut down,
/// `spawn` returns a `JoinHandle` that resolves to a cancelled `JoinError`.
///
/// ```
/// let rt = weft::runtime::Runtime::new().unwrap();
/// let handle = rt.handle().clone();
/// let t = std::thread::spawn(move || handle.block_on(async {
///     weft::spawn(async { 7 }).await.unwrap()
/// }));
/// assert_eq!(t.join().unwrap(), 7);
/// ```
#[derive(Clone)]
pub struct Handle {
    pub(crate) inner: scheduler::Handle,
}

/// Returned by [`Handle::try_current`] outside a runtime.
#[derive(Debug)]
pub struct TryCurrentError {
    thread_local_destroyed: bool,
}

impl TryCurrentError {
    /// No runtime was entered on this thread.
    pub fn is_missing_context(&self) -> bool {
        !self.thread_local_destroyed
    }

    /// The thread is exiting and its runtime context is already gone.
    pub fn is_thread_local_destroyed(&self) -> bool {
        self.thread_local_destroyed
    }
}

impl fmt::Display for TryCurrentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.thread_local_destroyed {
            f.write_str(
                "the weft runtime context is being destroyed because this thread is exiting",
            )
        } else {
            f.write_str(
                "there is no weft runtime on this thread: call this from inside \
                 Runtime::block_on or a spawned task, or enter a runtime first with \
                 Runtime::enter / Handle::enter",
            )
        }
    }
}

impl std::error::Error for TryCurrentError {}

/// Keeps a runtime current on this thread; see [`Handle::enter`].
#[must_use = "the runtime is current only while the guard lives"]
pub struct EnterGuard<'a> {
    _guard: context::SetCurrentGuard,
    /// A `LocalRuntime`'s set, current for `spawn_local` while entered.
    _local: Option<crate::task::LocalEnterGuard>,
    // Not Send: the guard restores this thread's context.
    _marker: PhantomData<(&'a Handle, *const ())>,
}

// SAFETY: through `&EnterGuard` only `Debug` is reachable, which prints
// a constant and reads no field; so the guard may be shared (`Sync`, as
// Tokio's), while it stays `!Send` (it must drop on the thread it entered).
unsafe impl Sync for EnterGuard<'_> {}

impl EnterGuard<'_> {
    /// The same guard, with `set` current for `spawn_local` too.
    pub(crate) fn with_local(mut self, set: crate::task::LocalEnterGuard) -> Self {
        self._local = Some(set);
        self
    }
}

impl fmt::Debug for EnterGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EnterGuard")
    }
}

/// The scheduler a runtime runs (`Handle::runtime_flavor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuntimeFlavor {
    /// `Builder::new_current_thread`.
    CurrentThread,
    /// `Builder::new_multi_thread`.
    MultiThread,
}

impl Handle {
    /// The handle of the runtime this thread is in.
    ///
    /// # Panics
    /// Outside a runtime; see [`Handle::try_current`].
    #[track_caller]
    pub fn current() -> Handle {
        match Handle::try_current() {
            Ok(h) => h,
            Err(e) => panic!("Handle::current() failed: {e}"),
        }
    }

    /// The handle of the runtime this thread is in, if any.
    pub fn try_current() -> Result<Handle, TryCurrentError> {
        match context::try_current() {
            Some(inner) => Ok(Handle { inner }),
            None => Err(TryCurrentError {
                thread_local_destroyed: context::is_destroyed(),
            }),
        }
    }

    /// Spawn a task onto this runtime.
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.inner
            .spawn(future, Id::next(), std::panic::Location::caller())
    }

    /// Run a blocking closure on this runtime's blocking pool.
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.inner.spawn_blocking(f)
    }

    /// Block this thread on `future` with this runtime current.
    ///
    /// This does not drive a `current_thread` runtime's tasks: they only run
    /// inside that runtime's own `block_on`.
    ///
    /// # Panics
    /// When called from inside a runtime.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        // This thread is no worker, so `block_in_place` inside has no core to
        // hand over and just runs its closure (as in Tokio, whatever the
        // flavour).
        let _enter = context::enter_runtime(true);
        let _current = context::set_current(&self.inner);
        super::park_thread::block_on(future)
    }

    /// Make this runtime current on this thread until the guard drops.
    pub fn enter(&self) -> EnterGuard<'_> {
        EnterGuard {
            _guard: context::set_current(&self.inner),
            _local: None,
            _marker: PhantomData,
        }
    }

    /// Which scheduler this runtime runs.
    ///
    /// ```
    /// use weft::runtime::{Builder, RuntimeFlavor};
    ///
    /// let rt = Builder::new_current_thread().build().unwrap();
    /// assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
    /// ```
    pub fn runtime_flavor(&self) -> RuntimeFlavor {
        if self.inner.is_current_thread() {
            RuntimeFlavor::CurrentThread
        } else {
            RuntimeFlavor::MultiThread
        }
    }

    /// This runtime's id, unique among the runtimes this process built.
    pub fn id(&self) -> super::Id {
        self.inner.config().id
    }

    /// The name given with [`Builder::name`](super::Builder::name), if any.
    ///
    /// ```
    /// let rt = weft::runtime::Builder::new_current_thread().name("ingest").build().unwrap();
    /// assert_eq!(rt.handle().name(), Some("ingest"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.inner.config().name.as_deref()
    }

    /// This runtime's metrics.
    pub fn metrics(&self) -> RuntimeMetrics {
        RuntimeMetrics::new(self.inner.clone())
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

// As `Runtime`'s (Tokio has the same two impls).
impl std::panic::UnwindSafe for Handle {}
impl std::panic::RefUnwindSafe for Handle {}
