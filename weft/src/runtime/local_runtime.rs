//! `LocalRuntime`: a current_thread runtime whose tasks may be `!Send`.
//!
//! Owns: a current_thread [`Runtime`] and a [`LocalSet`] that every
//! `block_on` runs, so [`spawn_local`](crate::task::spawn_local) works
//! anywhere inside it, with no `LocalSet` in sight. Like the set it holds,
//! it is `!Send`: its local tasks belong to the thread that built it.
//!
//! Invariant: the set is dropped before the runtime, with the runtime
//! entered, so local tasks cancelled at drop can still reach the runtime
//! (as its own tasks can when the runtime shuts down).

use super::{EnterGuard, Handle, Runtime, RuntimeMetrics};
use crate::task::{JoinHandle, LocalSet};
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::time::Duration;

/// Options that only a [`LocalRuntime`] takes (none yet); pass
/// `LocalOptions::default()` to [`Builder::build_local`](super::Builder::build_local).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct LocalOptions {
    _not_send: PhantomData<*mut u8>,
}

/// A single-thread runtime on which `!Send` tasks can be spawned with
/// [`LocalRuntime::spawn_local`] or [`spawn_local`](crate::task::spawn_local).
/// They run while [`LocalRuntime::block_on`] runs, as a current_thread
/// runtime's tasks do.
///
/// ```
/// use std::rc::Rc;
///
/// let rt = weft::runtime::Builder::new_current_thread()
///     .enable_all()
///     .build_local(Default::default())
///     .unwrap();
/// let state = Rc::new(std::cell::RefCell::new(Vec::new()));
/// let s = state.clone();
/// rt.spawn_local(async move { s.borrow_mut().push(1) });
/// rt.block_on(async {
///     let s = state.clone();
///     weft::task::spawn_local(async move { s.borrow_mut().push(2) }).await.unwrap();
/// });
/// assert_eq!(*state.borrow(), vec![1, 2]);
/// ```
pub struct LocalRuntime {
    /// Both `Some` until shutdown (see the module invariant).
    local: Option<LocalSet>,
    rt: Option<Runtime>,
}

impl LocalRuntime {
    /// A local runtime with every driver enabled: what
    /// `Builder::new_current_thread().enable_all().build_local(Default::default())`
    /// builds.
    ///
    /// ```
    /// let rt = weft::runtime::LocalRuntime::new().unwrap();
    /// let n = std::rc::Rc::new(41);
    /// assert_eq!(rt.block_on(rt.spawn_local(async move { *n + 1 })).unwrap(), 42);
    /// ```
    pub fn new() -> std::io::Result<LocalRuntime> {
        super::Builder::new_current_thread()
            .enable_all()
            .build_local(Default::default())
    }

    pub(crate) fn from_runtime(rt: Runtime) -> LocalRuntime {
        LocalRuntime {
            local: Some(LocalSet::new()),
            rt: Some(rt),
        }
    }

    fn local(&self) -> &LocalSet {
        self.local
            .as_ref()
            .expect("the LocalSet lives until shutdown")
    }

    fn rt(&self) -> &Runtime {
        self.rt.as_ref().expect("the runtime lives until shutdown")
    }

    /// Run `future` to completion on this thread, with the local tasks (and
    /// the runtime's other tasks) running beside it.
    ///
    /// # Panics
    /// When called from inside a runtime.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.local().block_on(self.rt(), future)
    }

    /// Spawn a `!Send` future; it runs during `block_on`.
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.local().spawn_local(future)
    }

    /// Spawn a `Send` future on the runtime.
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.rt().spawn(future)
    }

    /// Run a blocking closure on the blocking pool.
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.rt().spawn_blocking(f)
    }

    /// A handle to the runtime (it spawns `Send` tasks only).
    pub fn handle(&self) -> &Handle {
        self.rt().handle()
    }

    /// Make the runtime current on this thread until the guard drops;
    /// [`spawn_local`](crate::task::spawn_local) then spawns onto it (the
    /// task runs in the next `block_on`), as on Tokio.
    pub fn enter(&self) -> EnterGuard<'_> {
        self.rt().enter().with_local(self.local().enter())
    }

    /// The runtime's metrics.
    pub fn metrics(&self) -> RuntimeMetrics {
        self.rt().metrics()
    }

    /// Shut down, waiting at most `timeout` for blocking threads.
    pub fn shutdown_timeout(mut self, timeout: Duration) {
        self.drop_local();
        if let Some(rt) = self.rt.take() {
            rt.shutdown_timeout(timeout);
        }
    }

    /// Shut down without waiting for blocking threads.
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    fn drop_local(&mut self) {
        if let Some(local) = self.local.take() {
            let _enter = self.rt.as_ref().map(Runtime::enter);
            drop(local);
        }
    }
}

impl Drop for LocalRuntime {
    fn drop(&mut self) {
        self.drop_local();
    }
}

impl fmt::Debug for LocalRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalRuntime")
            .field("rt", &self.rt)
            .finish_non_exhaustive()
    }
}

// As `Runtime`'s: a panic caught around it leaves it usable (Tokio has the
// same two impls).
impl std::panic::UnwindSafe for LocalRuntime {}
impl std::panic::RefUnwindSafe for LocalRuntime {}
