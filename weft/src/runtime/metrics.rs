//! Runtime metrics, readable from any thread through `Handle::metrics()`.
//!
//! Owns: the counters schedulers publish. Per-worker counters are kept as
//! plain integers in the worker's core and *published* into the atomics
//! below at maintenance ticks and before parking, so the hot path pays no
//! atomic operation for bookkeeping. A reader therefore sees values at most
//! one maintenance interval old, and exact values once the runtime is idle.
//! The one exception is `park_unpark_count`, stored at every park and
//! unpark (one store each, next to a park's own cost), so its parity says
//! whether the worker is parked right now. A worker publishes its counters
//! *before* the store that makes the parity odd, and that store is a
//! release matched by the reader's acquire: a reader that sees a worker
//! parked sees every counter of that worker exact.

use crate::loom::{AtomicU64, AtomicUsize, Ordering};
use crate::scheduler;
use std::time::Duration;

/// Counters one worker publishes. Each field has a single writer.
#[derive(Default)]
pub(crate) struct WorkerMetrics {
    pub(crate) poll_count: AtomicU64,
    pub(crate) steal_count: AtomicU64,
    pub(crate) steal_operations: AtomicU64,
    pub(crate) park_count: AtomicU64,
    /// Parks plus unparks: odd while the worker is parked.
    pub(crate) park_unpark_count: AtomicU64,
    pub(crate) local_schedule_count: AtomicU64,
    pub(crate) overflow_count: AtomicU64,
    pub(crate) busy_duration_ns: AtomicU64,
    pub(crate) queue_depth: AtomicUsize,
    /// Polls the long-poll monitor saw run past its threshold (written by
    /// the monitor, not the worker).
    pub(crate) long_poll_count: AtomicU64,
}

/// The same counters as plain integers, owned by the worker's core.
#[derive(Default, Clone, Copy, Debug)]
pub(crate) struct WorkerStats {
    pub(crate) poll_count: u64,
    pub(crate) steal_count: u64,
    pub(crate) steal_operations: u64,
    pub(crate) park_count: u64,
    pub(crate) park_unpark_count: u64,
    pub(crate) local_schedule_count: u64,
    pub(crate) overflow_count: u64,
    pub(crate) busy_duration_ns: u64,
}

impl WorkerStats {
    /// The worker is about to park, or has just unparked: count it and
    /// store it at once (see the module doc).
    pub(crate) fn park_transition(&mut self, to: &WorkerMetrics) {
        self.park_unpark_count += 1;
        to.park_unpark_count
            .store(self.park_unpark_count, Ordering::Release);
    }

    pub(crate) fn publish(&self, to: &WorkerMetrics, queue_depth: usize) {
        to.poll_count.store(self.poll_count, Ordering::Relaxed);
        to.steal_count.store(self.steal_count, Ordering::Relaxed);
        to.steal_operations
            .store(self.steal_operations, Ordering::Relaxed);
        to.park_count.store(self.park_count, Ordering::Relaxed);
        to.local_schedule_count
            .store(self.local_schedule_count, Ordering::Relaxed);
        to.overflow_count
            .store(self.overflow_count, Ordering::Relaxed);
        to.busy_duration_ns
            .store(self.busy_duration_ns, Ordering::Relaxed);
        to.queue_depth.store(queue_depth, Ordering::Relaxed);
    }
}

/// Counters shared by all threads of a runtime (updated rarely).
#[derive(Default)]
pub(crate) struct SchedulerMetrics {
    pub(crate) remote_schedule_count: AtomicU64,
    pub(crate) budget_forced_yield_count: AtomicU64,
    pub(crate) lifo_steal_count: AtomicU64,
}

impl SchedulerMetrics {
    pub(crate) fn inc_remote_schedule(&self) {
        self.remote_schedule_count.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn inc_lifo_steal(&self) {
        self.lifo_steal_count.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn inc_budget_forced_yield(&self) {
        self.budget_forced_yield_count
            .fetch_add(1, Ordering::Relaxed);
    }
}

/// A view of a runtime's metrics.
///
/// ```
/// let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
/// let m = rt.handle().metrics();
/// assert_eq!(m.num_workers(), 2);
/// rt.block_on(async { weft::spawn(async {}).await.unwrap() });
/// assert!(m.spawned_tasks_count() >= 1);
/// ```
#[derive(Clone, Debug)]
pub struct RuntimeMetrics {
    handle: scheduler::Handle,
}

// As the `Handle` it wraps: its state is the runtime's, which a panic
// caught around a metrics read cannot leave half-changed.
impl std::panic::UnwindSafe for RuntimeMetrics {}
impl std::panic::RefUnwindSafe for RuntimeMetrics {}

impl RuntimeMetrics {
    pub(crate) fn new(handle: scheduler::Handle) -> RuntimeMetrics {
        RuntimeMetrics { handle }
    }

    /// Number of worker threads (1 for `current_thread`).
    pub fn num_workers(&self) -> usize {
        self.handle.num_workers()
    }

    /// Tasks spawned and not yet completed.
    pub fn num_alive_tasks(&self) -> usize {
        self.handle.owned_len()
    }

    /// Entries waiting in the global (inject) queue.
    pub fn global_queue_depth(&self) -> usize {
        self.handle.inject_len()
    }

    /// Threads currently in the blocking pool.
    pub fn num_blocking_threads(&self) -> usize {
        self.handle.blocking_spawner().num_threads()
    }

    /// Idle threads in the blocking pool.
    pub fn num_idle_blocking_threads(&self) -> usize {
        self.handle.blocking_spawner().num_idle_threads()
    }

    /// Tasks queued on the blocking pool and not yet started.
    pub fn blocking_queue_depth(&self) -> usize {
        self.handle.blocking_spawner().queue_depth()
    }

    /// Tasks spawned on this runtime since it started.
    pub fn spawned_tasks_count(&self) -> u64 {
        self.handle.spawned_count()
    }

    /// The I/O driver this runtime runs ([`IoDriver::Epoll`] or
    /// [`IoDriver::Uring`], never `Auto`); `None` without the I/O driver.
    ///
    /// [`IoDriver::Epoll`]: crate::runtime::IoDriver::Epoll
    /// [`IoDriver::Uring`]: crate::runtime::IoDriver::Uring
    pub fn io_driver(&self) -> Option<crate::runtime::IoDriver> {
        let io = self.handle.driver().io()?;
        Some(if io.rings().is_some() {
            crate::runtime::IoDriver::Uring
        } else {
            crate::runtime::IoDriver::Epoll
        })
    }

    /// File descriptors registered with the I/O driver so far (0 without
    /// the driver).
    pub fn io_driver_fd_registered_count(&self) -> u64 {
        self.handle
            .driver()
            .io()
            .map_or(0, |io| io.registered_count())
    }

    /// File descriptors deregistered from the I/O driver so far (a dropped
    /// socket deregisters at once; so does an `AsyncFd` handed back by
    /// `into_inner_stale`, which frees its registration).
    pub fn io_driver_fd_deregistered_count(&self) -> u64 {
        self.handle
            .driver()
            .io()
            .map_or(0, |io| io.deregistered_count())
    }

    /// Timer entries currently held in the timer wheel (armed timers; a
    /// cancelled or completed one frees its entry at once).
    pub fn num_timer_entries(&self) -> usize {
        self.handle.driver().time().map_or(0, |t| t.entry_count())
    }

    /// Tasks the long-poll monitor took out of the LIFO slot of a worker
    /// stuck in one poll, so another worker could run them (multi_thread;
    /// 0 elsewhere). Message-passing workloads should see none.
    pub fn lifo_steal_count(&self) -> u64 {
        self.handle
            .scheduler_metrics()
            .lifo_steal_count
            .load(Ordering::Relaxed)
    }

    /// Tasks scheduled from outside the runtime's worker threads.
    pub fn remote_schedule_count(&self) -> u64 {
        self.handle
            .scheduler_metrics()
            .remote_schedule_count
            .load(Ordering::Relaxed)
    }

    /// Times a task was forced to yield because its budget ran out.
    pub fn budget_forced_yield_count(&self) -> u64 {
        self.handle
            .scheduler_metrics()
            .budget_forced_yield_count
            .load(Ordering::Relaxed)
    }

    fn worker(&self, worker: usize) -> &WorkerMetrics {
        let n = self.num_workers();
        assert!(
            worker < n,
            "worker index {worker} out of range: this runtime has {n} worker(s)"
        );
        self.handle.worker_metrics(worker)
    }

    /// Tasks polled by `worker`.
    pub fn worker_poll_count(&self, worker: usize) -> u64 {
        self.worker(worker).poll_count.load(Ordering::Relaxed)
    }

    /// Tasks `worker` stole from other workers.
    pub fn worker_steal_count(&self, worker: usize) -> u64 {
        self.worker(worker).steal_count.load(Ordering::Relaxed)
    }

    /// Successful steal operations by `worker` (each may move many tasks).
    pub fn worker_steal_operations(&self, worker: usize) -> u64 {
        self.worker(worker).steal_operations.load(Ordering::Relaxed)
    }

    /// Times `worker` parked.
    pub fn worker_park_count(&self, worker: usize) -> u64 {
        self.worker(worker).park_count.load(Ordering::Relaxed)
    }

    /// Times `worker` parked plus times it unparked: an odd count means
    /// it is parked now, an even one that it is running. Once a read of
    /// this count is odd, the worker's other counters read after it are
    /// exact (it published them before parking).
    pub fn worker_park_unpark_count(&self, worker: usize) -> u64 {
        self.worker(worker)
            .park_unpark_count
            .load(Ordering::Acquire)
    }

    /// Tasks scheduled onto `worker`'s own queue from the worker itself.
    pub fn worker_local_schedule_count(&self, worker: usize) -> u64 {
        self.worker(worker)
            .local_schedule_count
            .load(Ordering::Relaxed)
    }

    /// Times `worker`'s local queue overflowed into the global queue.
    pub fn worker_overflow_count(&self, worker: usize) -> u64 {
        self.worker(worker).overflow_count.load(Ordering::Relaxed)
    }

    /// Entries in `worker`'s local queue.
    pub fn worker_local_queue_depth(&self, worker: usize) -> usize {
        self.handle.worker_local_queue_depth(worker)
    }

    /// Time `worker` spent running tasks.
    pub fn worker_total_busy_duration(&self, worker: usize) -> Duration {
        Duration::from_nanos(self.worker(worker).busy_duration_ns.load(Ordering::Relaxed))
    }

    /// Polls on `worker` that ran longer than the long-poll threshold
    /// (`Builder::long_poll_threshold`; multi_thread only).
    pub fn worker_long_poll_count(&self, worker: usize) -> u64 {
        self.worker(worker).long_poll_count.load(Ordering::Relaxed)
    }

    /// Polls on all workers that ran longer than the long-poll threshold.
    pub fn long_poll_count(&self) -> u64 {
        (0..self.num_workers())
            .map(|w| self.worker_long_poll_count(w))
            .sum()
    }
}
