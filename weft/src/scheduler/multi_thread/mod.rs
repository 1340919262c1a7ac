//! The work-stealing multi-thread scheduler.
//!
//! Owns: the shared state of all workers ([`Handle`]): their stealable
//! queues and unparkers, the inject queue, the idle/searching bookkeeping,
//! the owned-task list, and the cores handed back at shutdown.
//!
//! Shutdown (the order task/list.rs requires): `shutdown` closes the inject
//! queue and unparks every worker. Each worker, seeing the closed queue,
//! stops polling and hands its core back. The *last* core to come back
//! forgets every queued entry (local queues, LIFO slots; the inject queue
//! forgot its own on close) and only then cancels all owned tasks. No entry
//! can be polled after that point on its borrowed reference: polling needs
//! a core, except on the long-poll monitor's rescue thread, which takes its
//! entries under the monitor's rescue turn (taken here before the cancel)
//! and runs them with a reference of its own (rescue.rs).

mod alarm;
mod idle;
mod lifo;
#[cfg(all(test, loom))]
mod loom_idle;
mod monitor;
mod pace;
pub(crate) mod queue;
mod rescue;
mod stamp;
mod worker;

pub(crate) use monitor::{MonitorConfig, MonitorThread};
pub(crate) use worker::{block_in_place, Context};

use self::idle::Idle;
use self::worker::{Core, Worker};
use super::inject::Inject;
use super::park::Unparker;
use super::{Config, Drivers};
use crate::blocking;
use crate::loom::{lock, Mutex};
use crate::runtime::metrics::{SchedulerMetrics, WorkerMetrics};
use crate::task::{Id, JoinHandle, Notified, OwnedTasks, RawTask, Schedule, Task};
use std::future::Future;
use std::sync::Arc;

/// The runtime-owned half: the workers to launch.
pub(crate) struct MultiThread {
    workers: Mutex<Vec<Arc<Worker>>>,
}

pub(crate) struct Handle {
    remotes: Box<[Remote]>,
    inject: Inject<Arc<Handle>>,
    idle: Idle,
    owned: OwnedTasks<Arc<Handle>>,
    // Boxed: a core is moved around as a whole (it is the worker's
    // capability), and is large.
    #[allow(clippy::vec_box)]
    shutdown_cores: Mutex<Vec<Box<Core>>>,
    pub(in crate::scheduler) config: Config,
    metrics: SchedulerMetrics,
    worker_metrics: Box<[WorkerMetrics]>,
    pub(crate) blocking: blocking::Spawner,
    pub(crate) drivers: Drivers,
    /// `None` when the long-poll threshold is disabled.
    monitor: Option<Arc<monitor::Monitor>>,
}

/// What other threads may touch of a worker.
struct Remote {
    steal: queue::Steal<Notified<Arc<Handle>>>,
    unpark: Unparker,
    /// Written by the worker around each poll, read by the monitor.
    stamp: stamp::PollStamp,
    /// The worker's LIFO slot, which the monitor may steal from.
    lifo: Arc<lifo::LifoSlot<Notified<Arc<Handle>>>>,
}

impl MultiThread {
    pub(crate) fn new(
        num_workers: usize,
        config: Config,
        blocking: blocking::Spawner,
        drivers: Drivers,
    ) -> (MultiThread, Arc<Handle>) {
        let mut cores = Vec::with_capacity(num_workers);
        let mut remotes = Vec::with_capacity(num_workers);
        for index in 0..num_workers {
            let (core, steal, unpark) = Core::new(index, &config, drivers.shared.clone());
            let lifo = core.lifo_slot();
            cores.push(core);
            remotes.push(Remote {
                steal,
                unpark,
                stamp: stamp::PollStamp::new(),
                lifo,
            });
        }
        let monitor = config
            .long_poll
            .clone()
            // No timer for the monitor (descriptors exhausted): a lost
            // feature, not a broken runtime.
            .and_then(|c| monitor::Monitor::new(c, num_workers).ok().map(Arc::new));
        if monitor.is_some() {
            lifo::prepare_steals();
        } else {
            // Nothing would hand a stuck worker's ring to another thread.
            drivers.watch_rings_always();
        }
        let handle = Arc::new(Handle {
            remotes: remotes.into_boxed_slice(),
            inject: Inject::new(),
            idle: Idle::new(num_workers),
            owned: OwnedTasks::new(num_workers * 4),
            shutdown_cores: Mutex::new(Vec::with_capacity(num_workers)),
            config,
            metrics: SchedulerMetrics::default(),
            worker_metrics: (0..num_workers).map(|_| WorkerMetrics::default()).collect(),
            blocking,
            drivers,
            monitor,
        });
        let workers = cores
            .into_iter()
            .map(|core| Worker::new(handle.clone(), core))
            .collect();
        (
            MultiThread {
                workers: Mutex::new(workers),
            },
            handle,
        )
    }

    /// Start the worker threads (on the blocking pool, so runtime shutdown
    /// waits for them the same way it waits for blocking work).
    pub(crate) fn launch(&self, handle: &Arc<Handle>) {
        for worker in lock(&self.workers).drain(..) {
            worker::launch(worker);
        }
        if handle.monitor.is_some() {
            monitor::Monitor::start(handle);
        }
    }

    pub(crate) fn shutdown(&self, handle: &Handle) {
        handle.close();
    }
}

impl Handle {
    /// The monitor thread, if it runs and nobody took it yet: the runtime's
    /// drop joins it once the scheduler is shut down.
    pub(crate) fn take_monitor_thread(&self) -> Option<monitor::MonitorThread> {
        self.monitor
            .as_ref()
            .and_then(|monitor| monitor.take_thread())
    }

    pub(crate) fn spawn<F>(
        me: &Arc<Handle>,
        future: F,
        id: Id,
        spawned_at: &'static std::panic::Location<'static>,
    ) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (join, notified) = me.owned.spawn(future, me.clone(), id, spawned_at);
        if let Some(notified) = notified {
            me.schedule_task(notified, worker::Push::Spawn);
        }
        join
    }

    pub(crate) fn num_workers(&self) -> usize {
        self.remotes.len()
    }

    pub(crate) fn owned(&self) -> &OwnedTasks<Arc<Handle>> {
        &self.owned
    }

    pub(crate) fn inject(&self) -> &Inject<Arc<Handle>> {
        &self.inject
    }

    pub(crate) fn scheduler_metrics(&self) -> &SchedulerMetrics {
        &self.metrics
    }

    pub(crate) fn worker_metrics(&self, worker: usize) -> &WorkerMetrics {
        &self.worker_metrics[worker]
    }

    pub(crate) fn local_queue_depth(&self, worker: usize) -> usize {
        self.remotes[worker].steal.len()
    }

    /// Push from a thread that is not one of our workers.
    fn schedule_remote(&self, task: Notified<Arc<Handle>>) {
        self.metrics.inc_remote_schedule();
        if self.inject.push(task) {
            self.notify_parked();
        }
    }

    /// Wake a sleeping worker if nobody is searching.
    fn notify_parked(&self) {
        if let Some(index) = self.idle.worker_to_notify() {
            self.remotes[index].unpark.unpark();
        }
    }

    /// The last searcher went to sleep: make sure no queued work is left
    /// without a worker looking for it.
    fn notify_if_work_pending(&self) {
        let pending = self.remotes.iter().any(|r| !r.steal.is_empty()) || !self.inject.is_empty();
        if pending {
            self.notify_parked();
        }
    }

    fn close(&self) {
        if let Some(monitor) = &self.monitor {
            monitor.shutdown();
        }
        if self.inject.close() {
            for remote in self.remotes.iter() {
                remote.unpark.unpark();
            }
        }
    }

    /// A worker stopped for good and hands its core back. The last one
    /// cancels every task (see the module doc for why this order is safe).
    fn shutdown_core(&self, core: Box<Core>) {
        let mut cores = lock(&self.shutdown_cores);
        cores.push(core);
        if cores.len() != self.remotes.len() {
            return;
        }
        // A rescue thread's or the monitor's step under way (they take
        // entries without a core) ends before any task is freed; their
        // next one sees the queue closed (rescue.rs).
        if let Some(monitor) = &self.monitor {
            drop(monitor.rescue_turn());
        }
        for core in cores.iter_mut() {
            core.forget_queued();
        }
        self.owned.close_and_shutdown_all();
        // No task is left to wait on I/O or timers; fail or fire whatever
        // waits from outside the runtime.
        self.drivers.handle.shutdown();
        // Wakes during the futures' drops went to the closed inject queue;
        // nothing can have reached the local queues, but be thorough.
        for core in cores.iter_mut() {
            core.forget_queued();
        }
        for (index, core) in cores.iter().enumerate() {
            let _ = index;
            core.publish_stats(self);
        }
    }
}

impl Schedule for Arc<Handle> {
    fn release(&self, task: RawTask) -> Option<Task<Self>> {
        self.owned.remove(task)
    }

    fn schedule(&self, task: Notified<Self>) {
        self.schedule_task(task, worker::Push::Wake);
    }

    fn yield_now(&self, task: Notified<Self>) {
        self.schedule_task(task, worker::Push::Yield);
    }
}

impl queue::Overflow<Notified<Arc<Handle>>> for Inject<Arc<Handle>> {
    fn push_batch<I: Iterator<Item = Notified<Arc<Handle>>>>(&self, iter: I) {
        Inject::push_batch(self, iter);
    }
}
