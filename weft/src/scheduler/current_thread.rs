//! The current_thread scheduler: every task runs on the thread that calls
//! `block_on`.
//!
//! Owns: a `Core` (the local `VecDeque` run queue, tick counter and stats)
//! that lives in a mutex while no thread drives the runtime, and moves into
//! the driving thread's [`Context`] for the duration of its `block_on`. Only
//! the thread holding the core pops tasks, so at most one thread polls tasks
//! of this runtime at a time. Wakes from that thread push to the core's
//! queue; wakes from other threads go to the inject queue and unpark the
//! driver.
//!
//! Shutdown order (required by task/list.rs): close the inject queue, forget
//! the local queue's entries, then cancel every owned task.

use super::defer::{self, Defer};
use super::inject::Inject;
use super::park::{Parked, Parker, Unparker};
use super::{Config, Drivers};
use crate::blocking;
use crate::coop;
use crate::loom::{lock, AtomicBool, Mutex, Ordering};
use crate::runtime::context;
use crate::runtime::metrics::{SchedulerMetrics, WorkerMetrics, WorkerStats};
use crate::runtime::park_thread::ThreadParker;
use crate::task::{Id, JoinHandle, Notified, OwnedTasks, RawTask, Schedule, Task};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::Instant;

/// The runtime-owned half: holds the core while nobody drives.
pub(crate) struct CurrentThread {
    core: Mutex<Option<Box<Core>>>,
}

pub(crate) struct Handle {
    inject: Inject<Arc<Handle>>,
    owned: OwnedTasks<Arc<Handle>>,
    parker: Parker,
    unparker: Unparker,
    /// The `block_on` future was woken and must be polled.
    woken: AtomicBool,
    /// Threads in `block_on` waiting for the core to come back.
    core_waiters: Mutex<Vec<Waker>>,
    metrics: SchedulerMetrics,
    worker_metrics: WorkerMetrics,
    pub(super) config: Config,
    pub(crate) blocking: blocking::Spawner,
    pub(crate) drivers: Drivers,
}

struct Core {
    tasks: VecDeque<Notified<Arc<Handle>>>,
    /// Yielded wakers, woken after the next driver poll (defer.rs).
    deferred: Defer,
    tick: u32,
    stats: WorkerStats,
}

/// The driving thread's scheduler context.
pub(crate) struct Context {
    handle: Arc<Handle>,
    core: RefCell<Option<Box<Core>>>,
}

impl CurrentThread {
    pub(crate) fn new(
        config: Config,
        blocking: blocking::Spawner,
        drivers: Drivers,
    ) -> (CurrentThread, Arc<Handle>) {
        let parker = Parker::with_driver(drivers.shared.clone());
        let handle = Arc::new(Handle {
            inject: Inject::new(),
            owned: OwnedTasks::new(1),
            unparker: parker.unparker(),
            parker,
            woken: AtomicBool::new(false),
            core_waiters: Mutex::new(Vec::new()),
            metrics: SchedulerMetrics::default(),
            worker_metrics: WorkerMetrics::default(),
            config,
            blocking,
            drivers,
        });
        let core = Box::new(Core {
            tasks: VecDeque::with_capacity(64),
            deferred: Defer::default(),
            tick: 0,
            stats: WorkerStats::default(),
        });
        (
            CurrentThread {
                core: Mutex::new(Some(core)),
            },
            handle,
        )
    }

    fn take_core(&self) -> Option<Box<Core>> {
        lock(&self.core).take()
    }

    fn put_core(&self, handle: &Handle, core: Box<Core>) {
        *lock(&self.core) = Some(core);
        for w in std::mem::take(&mut *lock(&handle.core_waiters)) {
            w.wake();
        }
    }

    #[track_caller]
    pub(crate) fn block_on<F: Future>(
        &self,
        handle: &Arc<Handle>,
        scheduler_handle: &super::Handle,
        future: F,
    ) -> F::Output {
        let _enter = context::enter_runtime(false);
        let _current = context::set_current(scheduler_handle);
        let mut future = pin!(future);
        let parker = ThreadParker::new();
        loop {
            if let Some(core) = self.take_core() {
                let cx = super::Context::CurrentThread(Context {
                    handle: handle.clone(),
                    core: RefCell::new(Some(core)),
                });
                // Give the core back even if the future panics.
                struct PutBack<'a>(&'a CurrentThread, &'a super::Context);
                impl Drop for PutBack<'_> {
                    fn drop(&mut self) {
                        let super::Context::CurrentThread(cx) = self.1 else {
                            unreachable!()
                        };
                        if let Some(core) = cx.core.borrow_mut().take() {
                            self.0.put_core(&cx.handle, core);
                        }
                    }
                }
                let _put_back = PutBack(self, &cx);
                return context::set_scheduler(&cx, || {
                    let super::Context::CurrentThread(cx) = &cx else {
                        unreachable!()
                    };
                    cx.run(future.as_mut())
                });
            }
            // Another thread is driving: wait for our future or for the
            // core to come back (both wake the same waker).
            let waker = parker.waker();
            lock(&handle.core_waiters).push(waker.clone());
            if parker.take_notification() {
                let mut cx = TaskContext::from_waker(&waker);
                if let Poll::Ready(v) = coop::budget(|| future.as_mut().poll(&mut cx)) {
                    return v;
                }
            }
            if lock(&self.core).is_none() {
                parker.park();
            }
        }
    }

    /// Cancel every task and forget every queued entry.
    pub(crate) fn shutdown(&self, handle: &Arc<Handle>, scheduler_handle: &super::Handle) {
        let core = self.take_core();
        let _current = context::set_current(scheduler_handle);
        handle.inject.close();
        let Some(mut core) = core else {
            // A thread is inside block_on with the core (possible when the
            // runtime is dropped from another thread through a handle that
            // outlived it): its queue entries are never polled again once it
            // sees the closed inject queue, so cancelling is still sound.
            handle.owned.close_and_shutdown_all();
            handle.drivers.handle.shutdown();
            return;
        };
        core.tasks.clear();
        let cx = super::Context::CurrentThread(Context {
            handle: handle.clone(),
            core: RefCell::new(Some(core)),
        });
        context::set_scheduler(&cx, || handle.owned.close_and_shutdown_all());
        handle.drivers.handle.shutdown();
        let super::Context::CurrentThread(cx) = cx else {
            unreachable!()
        };
        if let Some(mut core) = cx.core.into_inner() {
            // Entries pushed by wakes during the futures' drops: forget them.
            core.tasks.clear();
            core.stats.publish(&handle.worker_metrics, 0);
            *lock(&self.core) = Some(core);
        }
    }
}

/// Wakes the `block_on` future: flag it and unpark the driver.
struct BlockOnWaker(Arc<Handle>);

impl Wake for BlockOnWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.woken.store(true, Ordering::Release);
        self.0.unparker.unpark();
    }
}

impl Context {
    /// This thread holds the core (always, while user code runs here: the
    /// context exists only on the thread that took it).
    pub(super) fn driver(&self) -> &crate::runtime::driver::Handle {
        &self.handle.drivers.handle
    }

    pub(super) fn has_core(&self) -> bool {
        self.core.try_borrow().map_or(true, |core| core.is_some())
    }

    fn run<F: Future>(&self, mut future: std::pin::Pin<&mut F>) -> F::Output {
        let handle = &self.handle;
        let waker = Waker::from(Arc::new(BlockOnWaker(handle.clone())));
        let mut task_cx = TaskContext::from_waker(&waker);
        let event_interval = handle.config.event_interval;
        let global_interval = handle.config.global_queue_interval;
        handle.woken.store(true, Ordering::Release);
        let mut busy_since = Instant::now();
        'outer: loop {
            if handle.woken.swap(false, Ordering::AcqRel) {
                if let Poll::Ready(v) = coop::budget(|| future.as_mut().poll(&mut task_cx)) {
                    self.with_core(|core| {
                        core.stats.busy_duration_ns += busy_since.elapsed().as_nanos() as u64;
                        core.stats.publish(&handle.worker_metrics, core.tasks.len());
                    });
                    // Hand the ring what the future queued (a write's send
                    // waits for a batch point): the caller may block on
                    // the peer next, and no park of this runtime would
                    // submit it until the next `block_on`.
                    handle.drivers.submit_ring(0);
                    return v;
                }
            }
            for _ in 0..event_interval {
                let next = self.with_core(|core| {
                    core.tick = core.tick.wrapping_add(1);
                    let task = if core.tick.is_multiple_of(global_interval) {
                        handle.inject.pop().or_else(|| core.tasks.pop_front())
                    } else {
                        core.tasks.pop_front().or_else(|| handle.inject.pop())
                    };
                    if task.is_some() {
                        core.stats.poll_count += 1;
                    }
                    task
                });
                let Some(task) = next else {
                    let has_deferred = self.with_core(|core| !core.deferred.is_empty());
                    if handle.woken.load(Ordering::Acquire) || has_deferred {
                        // The block_on future is ready again, or tasks
                        // yielded: do not sleep, but let the drivers deliver
                        // first, or a future that keeps waking itself would
                        // starve them.
                        handle.drivers.poll_now_and_flush(0);
                        self.wake_deferred();
                    } else {
                        self.park(&mut busy_since);
                    }
                    continue 'outer;
                };
                coop::budget(|| task.run());
            }
            // A full batch ran without parking: let the drivers deliver
            // what is ready (without blocking) so I/O and timers are not
            // starved by a busy queue.
            self.with_core(|core| core.stats.publish(&handle.worker_metrics, core.tasks.len()));
            handle.drivers.poll_now_and_flush(0);
            self.wake_deferred();
        }
    }

    /// Wake the tasks that yielded; the drivers were just polled.
    fn wake_deferred(&self) {
        let mut wakers = self.with_core(|core| core.deferred.take());
        if wakers.is_empty() {
            return;
        }
        // Outside the core's borrow: each wake pushes to the core's queue.
        defer::wake_all(&mut wakers);
        self.with_core(|core| core.deferred.recycle(wakers));
    }

    /// See [`super::Context::defer`].
    pub(super) fn defer(&self, waker: &Waker) -> bool {
        match self.core.try_borrow_mut() {
            Ok(mut core) => match core.as_mut() {
                Some(core) => {
                    core.deferred.push(waker);
                    true
                }
                None => false,
            },
            Err(_) => false,
        }
    }

    fn park(&self, busy_since: &mut Instant) {
        let handle = &self.handle;
        self.with_core(|core| {
            core.stats.park_count += 1;
            core.stats.busy_duration_ns += busy_since.elapsed().as_nanos() as u64;
            // Publish first: an odd parity then says every counter is
            // exact (see runtime/metrics.rs).
            core.stats.publish(&handle.worker_metrics, core.tasks.len());
            core.stats.park_transition(&handle.worker_metrics);
        });
        // A token left by a wake made while this thread ran (its own
        // `block_on` future woken by a deferred yield: `block_on(yield_now())`)
        // would end the park at once, for a zero-timeout poll of the
        // drivers that finds nothing. Drop it, then look for work: the
        // wakes it announced are seen below (`Parker::discard_token`).
        handle.parker.discard_token();
        if let Some(f) = &handle.config.before_park {
            f();
        }
        // Hand the ring what the tasks queued (and take what completed)
        // before sleeping. That, or before_park, may have scheduled work:
        // do not sleep on it.
        handle.drivers.flush_ring(0);
        // What an `unpark` of this parker announces, all of it, since its
        // token may have been dropped above: the `block_on` future woken
        // (`BlockOnWaker`) and a task pushed from another thread
        // (`schedule`). A new caller of `unpark` must be checked here too.
        // A wake-up deferred by before_park (a `yield_now` polled there)
        // counts too: nothing else would ever wake it.
        let has_work = self.with_core(|core| !core.tasks.is_empty() || !core.deferred.is_empty())
            || !handle.inject.is_empty()
            || handle.woken.load(Ordering::Acquire);
        let polled_driver = !has_work && handle.parker.park() == Parked::InDriver;
        if !polled_driver {
            // Woken before sleeping (say, before_park woke the block_on
            // future): poll the drivers anyway. A caller that drives the
            // runtime in short `block_on` bursts would otherwise never let
            // a timer or socket event through.
            handle.drivers.poll_now_and_flush(0);
        }
        self.with_core(|core| core.stats.park_transition(&handle.worker_metrics));
        if let Some(f) = &handle.config.after_unpark {
            f();
        }
        *busy_since = Instant::now();
    }

    fn with_core<R>(&self, f: impl FnOnce(&mut Core) -> R) -> R {
        let mut core = self.core.borrow_mut();
        f(core
            .as_mut()
            .expect("current_thread core missing while driving"))
    }
}

impl Handle {
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
            me.schedule_task(notified);
        }
        join
    }

    fn schedule_task(self: &Arc<Self>, task: Notified<Arc<Handle>>) {
        let pushed_locally = context::with_scheduler(|cx| {
            let Some(super::Context::CurrentThread(cx)) = cx else {
                return Err(task);
            };
            if !Arc::ptr_eq(&cx.handle, self) {
                return Err(task);
            }
            match cx.core.try_borrow_mut() {
                Ok(mut core) => match core.as_mut() {
                    Some(core) => {
                        core.stats.local_schedule_count += 1;
                        core.tasks.push_back(task);
                        Ok(())
                    }
                    // Shutting down: the entry is forgotten (no reference).
                    None => Ok(()),
                },
                Err(_) => Err(task),
            }
        });
        if let Err(task) = pushed_locally {
            self.metrics.inc_remote_schedule();
            if self.inject.push(task) {
                self.unparker.unpark();
            }
        }
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

    pub(crate) fn worker_metrics(&self) -> &WorkerMetrics {
        &self.worker_metrics
    }

    pub(crate) fn local_queue_depth(&self) -> usize {
        self.worker_metrics.queue_depth.load(Ordering::Relaxed)
    }
}

impl Schedule for Arc<Handle> {
    fn release(&self, task: RawTask) -> Option<Task<Self>> {
        self.owned.remove(task)
    }

    // A yield needs nothing special here: `schedule` already pushes to the
    // back of the queue, behind everything that is ready.
    fn schedule(&self, task: Notified<Self>) {
        self.schedule_task(task);
    }
}
