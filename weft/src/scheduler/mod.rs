//! The schedulers: `current_thread` and the work-stealing `multi_thread`.
//!
//! Owns: the enums that let runtime-level code talk to either flavour
//! without knowing which one it has, and the pieces both share (the inject
//! queue, the parker).

pub(crate) mod current_thread;
pub(crate) mod defer;
pub(crate) mod inject;
#[cfg(all(test, loom))]
mod loom_park;
pub(crate) mod multi_thread;
pub(crate) mod park;

use crate::blocking;
use crate::runtime::metrics::{SchedulerMetrics, WorkerMetrics};
use crate::task::{Id, JoinHandle};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Weak};

/// A cheap, cloneable reference to one runtime's scheduler.
#[derive(Clone)]
pub(crate) enum Handle {
    CurrentThread(Arc<current_thread::Handle>),
    MultiThread(Arc<multi_thread::Handle>),
}

/// A handle that does not keep the runtime alive.
#[derive(Clone)]
pub(crate) enum WeakHandle {
    CurrentThread(Weak<current_thread::Handle>),
    MultiThread(Weak<multi_thread::Handle>),
}

impl WeakHandle {
    pub(crate) fn upgrade(&self) -> Option<Handle> {
        match self {
            WeakHandle::CurrentThread(w) => w.upgrade().map(Handle::CurrentThread),
            WeakHandle::MultiThread(w) => w.upgrade().map(Handle::MultiThread),
        }
    }
}

/// The scheduler state active on the current thread (see runtime/context.rs).
pub(crate) enum Context {
    CurrentThread(current_thread::Context),
    MultiThread(multi_thread::Context),
}

impl Context {
    /// Park `waker` until this scheduler has polled its drivers (see
    /// defer.rs). Returns false if it could not (no core on this thread):
    /// the caller then wakes it at once.
    pub(crate) fn defer(&self, waker: &std::task::Waker) -> bool {
        match self {
            Context::CurrentThread(cx) => cx.defer(waker),
            Context::MultiThread(cx) => cx.defer(waker),
        }
    }

    /// The drivers of the runtime this context schedules for.
    pub(crate) fn driver(&self) -> &crate::runtime::driver::Handle {
        match self {
            Context::CurrentThread(cx) => cx.driver(),
            Context::MultiThread(cx) => cx.driver(),
        }
    }

    /// The worker this thread runs as (`runtime::worker_index`): `None`
    /// once its core was handed away.
    pub(crate) fn worker_index(&self) -> Option<usize> {
        match self {
            Context::CurrentThread(cx) => cx.has_core().then_some(0),
            Context::MultiThread(cx) => cx.worker_index(),
        }
    }
}

impl Handle {
    /// `spawned_at` is the user's call site, captured by the public
    /// `#[track_caller]` spawn functions.
    pub(crate) fn spawn<F>(
        &self,
        future: F,
        id: Id,
        spawned_at: &'static std::panic::Location<'static>,
    ) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self {
            Handle::CurrentThread(h) => current_thread::Handle::spawn(h, future, id, spawned_at),
            Handle::MultiThread(h) => multi_thread::Handle::spawn(h, future, id, spawned_at),
        }
    }

    /// The users' `spawn_blocking` (the runtime's own threads use the pool
    /// directly): while the closure is in flight, a frozen clock does not
    /// jump ahead (`time/test_util.rs`).
    #[track_caller]
    pub(crate) fn spawn_blocking<F, R>(&self, f: F) -> crate::task::JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        match self.queue_blocking(f) {
            (_, blocking::Queued::NoThreads) => blocking::no_threads(),
            (join, blocking::Queued::Yes | blocking::Queued::ShutDown) => join,
        }
    }

    /// [`Handle::spawn_blocking`], or `None` (`f` dropped unrun) once the
    /// runtime has shut down: for the standard streams, whose operations
    /// then fail as Tokio's do instead of reporting a write that never ran.
    #[track_caller]
    pub(crate) fn spawn_blocking_unless_shut_down<F, R>(
        &self,
        f: F,
    ) -> Option<crate::task::JoinHandle<R>>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        match self.queue_blocking(f) {
            (join, blocking::Queued::Yes) => Some(join),
            (_, blocking::Queued::ShutDown) => None,
            (_, blocking::Queued::NoThreads) => blocking::no_threads(),
        }
    }

    /// A user closure queued on the pool, with the mark that keeps a
    /// frozen clock still while it is in flight.
    fn queue_blocking<F, R>(&self, f: F) -> (crate::task::JoinHandle<R>, blocking::Queued)
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let in_flight = crate::time::BlockingInFlight::new(self.driver());
        blocking::queue_on(self.blocking_spawner(), f, in_flight)
    }

    pub(crate) fn blocking_spawner(&self) -> &blocking::Spawner {
        match self {
            Handle::CurrentThread(h) => &h.blocking,
            Handle::MultiThread(h) => &h.blocking,
        }
    }

    pub(crate) fn num_workers(&self) -> usize {
        match self {
            Handle::CurrentThread(_) => 1,
            Handle::MultiThread(h) => h.num_workers(),
        }
    }

    pub(crate) fn owned_len(&self) -> usize {
        match self {
            Handle::CurrentThread(h) => h.owned().len(),
            Handle::MultiThread(h) => h.owned().len(),
        }
    }

    pub(crate) fn spawned_count(&self) -> u64 {
        match self {
            Handle::CurrentThread(h) => h.owned().spawned_count(),
            Handle::MultiThread(h) => h.owned().spawned_count(),
        }
    }

    pub(crate) fn inject_len(&self) -> usize {
        match self {
            Handle::CurrentThread(h) => h.inject().len(),
            Handle::MultiThread(h) => h.inject().len(),
        }
    }

    pub(crate) fn scheduler_metrics(&self) -> &SchedulerMetrics {
        match self {
            Handle::CurrentThread(h) => h.scheduler_metrics(),
            Handle::MultiThread(h) => h.scheduler_metrics(),
        }
    }

    pub(crate) fn worker_metrics(&self, worker: usize) -> &WorkerMetrics {
        match self {
            Handle::CurrentThread(h) => h.worker_metrics(),
            Handle::MultiThread(h) => h.worker_metrics(worker),
        }
    }

    pub(crate) fn worker_local_queue_depth(&self, worker: usize) -> usize {
        match self {
            Handle::CurrentThread(h) => h.local_queue_depth(),
            Handle::MultiThread(h) => h.local_queue_depth(worker),
        }
    }

    pub(crate) fn driver(&self) -> &crate::runtime::driver::Handle {
        match self {
            Handle::CurrentThread(h) => &h.drivers.handle,
            Handle::MultiThread(h) => &h.drivers.handle,
        }
    }

    /// The settings the runtime was built with.
    pub(crate) fn config(&self) -> &Config {
        match self {
            Handle::CurrentThread(h) => &h.config,
            Handle::MultiThread(h) => &h.config,
        }
    }

    pub(crate) fn is_current_thread(&self) -> bool {
        matches!(self, Handle::CurrentThread(_))
    }

    pub(crate) fn downgrade(&self) -> WeakHandle {
        match self {
            Handle::CurrentThread(h) => WeakHandle::CurrentThread(Arc::downgrade(h)),
            Handle::MultiThread(h) => WeakHandle::MultiThread(Arc::downgrade(h)),
        }
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Handle::CurrentThread(_) => f.write_str("Handle(current_thread)"),
            Handle::MultiThread(h) => {
                write!(f, "Handle(multi_thread, {} workers)", h.num_workers())
            }
        }
    }
}

/// The runtime's drivers as a scheduler sees them: the shared driver its
/// parkers block in (`None` when no driver is enabled, so parking is a
/// plain condvar wait), and the handle resources and timers use.
pub(crate) struct Drivers {
    pub(crate) shared: Option<Arc<park::SharedDriver>>,
    pub(crate) handle: crate::runtime::driver::Handle,
}

impl Drivers {
    /// Worker `index`'s io_uring batch point: submit what its tasks queued
    /// on its ring and collect what completed, waking those tasks (on this
    /// thread: into the caller's queues). Returns whether it woke any.
    pub(crate) fn flush_ring(&self, index: usize) -> bool {
        let Some(rings) = self.handle.io().and_then(|io| io.rings()) else {
            return false;
        };
        rings.owner_back(index);
        let mut wakers = Vec::new();
        rings.flush(index, &mut wakers);
        let woke = !wakers.is_empty();
        for waker in wakers {
            waker.wake();
        }
        woke
    }

    /// Worker `index`'s core is about to leave its thread
    /// (`block_in_place`): submit what its tasks pushed on its ring, and
    /// have the driver's holder take the ring's completions until the
    /// core's new thread reaches a batch point (runtime/io/uring/watch.rs).
    /// Called on the thread that still holds the core.
    pub(crate) fn ring_owner_leaves(&self, index: usize) {
        if let Some(rings) = self.handle.io().and_then(|io| io.rings()) {
            rings.get(index).submit_now();
            rings.owner_leaves(index);
        }
    }

    /// No long-poll monitor will report a stuck worker: keep every worker
    /// ring in epoll for good (runtime/io/uring/watch.rs).
    pub(crate) fn watch_rings_always(&self) {
        if let Some(rings) = self.handle.io().and_then(|io| io.rings()) {
            rings.watch_always();
        }
    }

    /// Worker `index` is stuck in one poll (the long-poll monitor saw
    /// it): submit and reap its ring on its behalf, as its batch point
    /// would, and have the driver's holder take the ring's completions
    /// until the worker is back (runtime/io/uring/watch.rs).
    pub(crate) fn flush_stuck_ring(&self, index: usize) {
        let Some(rings) = self.handle.io().and_then(|io| io.rings()) else {
            return;
        };
        let mut wakers = Vec::new();
        rings.flush_for_stuck_owner(index, &mut wakers);
        wakers.into_iter().for_each(std::task::Waker::wake);
    }

    /// Submit what worker `index`'s tasks queued on its io_uring ring,
    /// without collecting completions: for a thread about to leave the
    /// runtime (its next batch point collects them).
    #[inline]
    pub(crate) fn submit_ring(&self, index: usize) {
        if let Some(rings) = self.handle.io().and_then(|io| io.rings()) {
            rings.submit_pending(index);
        }
    }

    /// [`flush_ring`](Self::flush_ring) for worker `index`, then
    /// [`poll_now`](Self::poll_now).
    pub(crate) fn poll_now_and_flush(&self, index: usize) {
        self.flush_ring(index);
        self.poll_now();
    }

    /// Poll the drivers without blocking (if no other thread is in them).
    pub(crate) fn poll_now(&self) {
        if let Some(shared) = &self.shared {
            shared.poll_now();
        }
    }

    /// Whether there are drivers and no thread is parked in them, so I/O
    /// and timers wait for some worker's next maintenance tick or park (a
    /// hint: see [`park::SharedDriver::has_parker`]).
    pub(crate) fn unmanned(&self) -> bool {
        self.shared
            .as_ref()
            .is_some_and(|shared| !shared.has_parker())
    }
}

/// Scheduler settings shared by both flavours.
#[derive(Clone)]
pub(crate) struct Config {
    /// The runtime's identity (`Handle::id`, `Handle::name`).
    pub(crate) id: crate::runtime::Id,
    pub(crate) name: Option<std::sync::Arc<str>>,
    pub(crate) global_queue_interval: u32,
    /// Tune the multi_thread interval to the measured poll time (the user
    /// did not set one).
    pub(crate) adaptive_global_queue_interval: bool,
    pub(crate) event_interval: u32,
    pub(crate) disable_lifo_slot: bool,
    pub(crate) before_park: Option<Arc<dyn Fn() + Send + Sync>>,
    /// The long-poll monitor's settings (multi_thread); `None` disables it.
    pub(crate) long_poll: Option<multi_thread::MonitorConfig>,
    pub(crate) after_unpark: Option<Arc<dyn Fn() + Send + Sync>>,
    /// The thread a `LocalRuntime` was built on (its local tasks belong
    /// there); `None` for any other runtime.
    pub(crate) local_owner: Option<std::thread::ThreadId>,
}
