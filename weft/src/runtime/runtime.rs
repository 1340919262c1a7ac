//! `Runtime`: owns the scheduler, the blocking pool, and their shutdown.

use super::handle::{EnterGuard, Handle};
use super::metrics::RuntimeMetrics;
use super::{context, Builder};
use crate::blocking::{BlockingPool, BlockingTask};
use crate::scheduler::current_thread::CurrentThread;
use crate::scheduler::multi_thread::MultiThread;
use crate::scheduler::{self};
use crate::task::JoinHandle;
use std::fmt;
use std::future::Future;
use std::io;
use std::time::{Duration, Instant};

/// An async runtime: a scheduler, its worker threads, and a blocking pool.
///
/// Dropping it shuts it down: every task's future is dropped (on the
/// dropping thread for `current_thread`, on a worker for `multi_thread`)
/// and the drop waits for blocking work to finish. Use
/// [`Runtime::shutdown_timeout`] or [`Runtime::shutdown_background`] to
/// bound that wait.
pub struct Runtime {
    scheduler: Scheduler,
    handle: Handle,
    blocking_pool: BlockingPool<BlockingTask>,
    /// `shutdown_timeout` has run: the drop that follows has nothing left
    /// to wait for, wherever it happens.
    shut_down: bool,
}

pub(crate) enum Scheduler {
    CurrentThread(CurrentThread),
    MultiThread(MultiThread),
}

impl Runtime {
    /// A multi-thread runtime with every driver enabled and default
    /// settings (one worker per CPU, or `WEFT_WORKER_THREADS`).
    pub fn new() -> io::Result<Runtime> {
        Builder::new_multi_thread().enable_all().build()
    }

    pub(crate) fn from_parts(
        scheduler: Scheduler,
        handle: scheduler::Handle,
        blocking_pool: BlockingPool<BlockingTask>,
    ) -> Runtime {
        if let (Scheduler::MultiThread(mt), scheduler::Handle::MultiThread(h)) =
            (&scheduler, &handle)
        {
            mt.launch(h);
        }
        Runtime {
            scheduler,
            handle: Handle { inner: handle },
            blocking_pool,
            shut_down: false,
        }
    }

    /// Run `future` to completion on this thread, returning its output.
    ///
    /// On `current_thread` this thread also runs the spawned tasks while it
    /// waits; on `multi_thread` the workers run them.
    ///
    /// # Panics
    /// When called from inside a runtime (a task, or another `block_on`):
    /// blocking a thread that drives tasks would deadlock. Use `.await`.
    /// A panic of `future` itself propagates to the caller.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        match (&self.scheduler, &self.handle.inner) {
            (Scheduler::CurrentThread(ct), scheduler::Handle::CurrentThread(h)) => {
                ct.block_on(h, &self.handle.inner, future)
            }
            // Non-driving: the workers run the tasks while this thread waits.
            (Scheduler::MultiThread(_), _) => self.handle.block_on(future),
            _ => unreachable!("scheduler and handle flavours always match"),
        }
    }

    /// Spawn a task on this runtime.
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Run a blocking closure on the blocking pool.
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle.spawn_blocking(f)
    }

    /// A handle to this runtime.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Make this runtime current on this thread until the guard drops, so
    /// `weft::spawn` and `Handle::current` work outside `block_on`.
    pub fn enter(&self) -> EnterGuard<'_> {
        self.handle.enter()
    }

    /// This runtime's metrics.
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }

    /// Shut down, waiting at most `timeout` for worker and blocking threads.
    /// Threads still busy after that are left running, detached.
    ///
    /// # Panics
    /// With a `timeout` above zero, inside an async context (a task, or a
    /// `block_on`), as a drop there does: see [`Runtime`'s drop](#impl-Drop-for-Runtime).
    /// [`shutdown_background`](Runtime::shutdown_background) never waits,
    /// so it may be called anywhere.
    pub fn shutdown_timeout(mut self, timeout: Duration) {
        let waits_in_async = !timeout.is_zero() && in_async_context();
        self.shut_down = true;
        self.shutdown_scheduler();
        let deadline = Instant::now().checked_add(timeout);
        if waits_in_async {
            // As the drop below: shut down in the background, then say so.
            self.blocking_pool.shutdown(Some(Duration::ZERO));
            let _ = self.take_monitor_thread();
            cannot_wait_in_async(false);
        }
        self.blocking_pool.shutdown(Some(timeout));
        // The monitor ends its loop at once (it was kicked): joined if it
        // is gone by the deadline, as drop joins it, else left to end.
        if let Some(monitor) = self.take_monitor_thread() {
            let left = deadline.map_or(Duration::ZERO, |d| {
                d.saturating_duration_since(Instant::now())
            });
            monitor.join_within(left);
        }
    }

    /// Shut down without waiting for any thread.
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    fn take_monitor_thread(&self) -> Option<crate::scheduler::multi_thread::MonitorThread> {
        match &self.handle.inner {
            scheduler::Handle::MultiThread(h) => h.take_monitor_thread(),
            scheduler::Handle::CurrentThread(_) => None,
        }
    }

    fn shutdown_scheduler(&mut self) {
        match (&self.scheduler, &self.handle.inner) {
            (Scheduler::CurrentThread(ct), scheduler::Handle::CurrentThread(h)) => {
                ct.shutdown(h, &self.handle.inner)
            }
            (Scheduler::MultiThread(mt), scheduler::Handle::MultiThread(h)) => mt.shutdown(h),
            _ => unreachable!("scheduler and handle flavours always match"),
        }
    }
}

/// How long a runtime's drop waits for its monitor thread to end (it ends
/// at once, kicked by the shutdown; the bound only keeps a drop from
/// hanging on a monitor that does not).
const MONITOR_JOIN_LIMIT: Duration = Duration::from_secs(2);

/// This thread drives a runtime (a worker, or inside a `block_on`), where
/// waiting for threads could wait for this very one.
fn in_async_context() -> bool {
    matches!(context::entered(), context::Entered::Yes { .. })
}

/// The panic of a runtime dropped (or shut down with a timeout) in an
/// async context, after it was shut down in the background: Tokio panics
/// there too, and a program that does it blocks a thread that drives
/// tasks. Not while unwinding, where a second panic would abort.
/// The messages are literals, so the payload is a `&'static str`, as
/// Tokio's (a program's `catch_unwind` may downcast it to one).
fn cannot_wait_in_async(dropped: bool) {
    if std::thread::panicking() {
        return;
    }
    if dropped {
        panic!(
            "Cannot drop a runtime in a context where blocking is not allowed: a weft runtime was \
             dropped inside an async context (a task or a block_on), where waiting for its \
             threads would block a thread that drives tasks. It has been shut down in the \
             background. Drop it outside async code (or inside spawn_blocking / block_in_place), \
             or call Runtime::shutdown_background(), which never waits."
        );
    }
    panic!(
        "Cannot drop a runtime in a context where blocking is not allowed: a weft runtime was \
         shut down with a timeout inside an async context (a task or a block_on), where waiting \
         for its threads would block a thread that drives tasks. It has been shut down in the \
         background. Shut it down outside async code (or inside spawn_blocking / \
         block_in_place), or call Runtime::shutdown_background(), which never waits."
    );
}

/// Dropping a runtime shuts it down: its tasks are dropped, and the drop
/// waits for its worker and blocking threads.
///
/// # Panics
/// Inside an async context (a task, or a `block_on`), after shutting the
/// runtime down in the background, as Tokio's does: waiting there could
/// wait for the very thread that waits. Use
/// [`shutdown_background`](Runtime::shutdown_background) there.
impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown_scheduler();
        let in_async = in_async_context();
        let timeout = in_async.then_some(Duration::ZERO);
        self.blocking_pool.shutdown(timeout);
        // The monitor thread too, as the workers: a runtime dropped is
        // gone, threads and descriptors (its alarm's timerfd) included.
        if let Some(monitor) = self.take_monitor_thread() {
            if timeout.is_none() {
                monitor.join_within(MONITOR_JOIN_LIMIT);
            }
        }
        if in_async && !self.shut_down {
            cannot_wait_in_async(true);
        }
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("handle", &self.handle)
            .finish_non_exhaustive()
    }
}

// A panic caught around a runtime (or a `block_on`) leaves it usable: its
// state is behind locks that shrug off poisoning, as Tokio's (which has
// the same two impls).
impl std::panic::UnwindSafe for Runtime {}
impl std::panic::RefUnwindSafe for Runtime {}
