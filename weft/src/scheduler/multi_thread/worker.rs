//! A multi-thread worker: its core, its run loop, and `block_in_place`.
//!
//! Owns: the [`Core`] — everything a worker needs to run tasks (local queue,
//! LIFO slot, tick, searching flag, parker, stats). Whoever holds the
//! `Box<Core>` *is* the worker: the core moves into the thread's
//! [`Context`] while a task is polled (so wakes from that task reach the
//! local queue), and moves to a new thread when a task calls
//! `block_in_place`.
//!
//! Loop, per tick: every `event_interval` ticks do maintenance (publish
//! stats, notice shutdown, poll the drivers without blocking, retune the
//! global-queue interval from the measured poll time); take the next task
//! (inject queue first every `global_queue_interval` ticks, else LIFO
//! slot, local queue, then a batch
//! from the inject queue); if none, search (steal half of a random
//! victim's queue, then the inject queue); if still none, park.
//!
//! LIFO slot: a task woken by the running task goes into the slot and runs
//! next, while what it needs is still in cache. After
//! `MAX_LIFO_POLLS_PER_TICK` slot polls in a row the slot is bypassed until
//! the next ordinary task, and slot polls share the first task's budget, so
//! two tasks waking each other cannot starve the queue.
//!
//! Stranded work (issue #13), and what each piece guarantees:
//! - **The LIFO slot is stolen only from a stuck worker** (lifo.rs,
//!   monitor.rs). The owner uses it with plain loads and stores (a Dekker
//!   flag whose other half is the thief's `membarrier(2)`), so a
//!   message-passing pair stays on one core and pays no atomic
//!   read-modify-write. The long-poll monitor takes the task from the slot
//!   of a worker it saw in one poll across a sampling period (a quarter of
//!   a millisecond after seeing the slot filled by a spawn, which kicks a
//!   slow monitor) and puts it on the inject queue for an idle worker: a
//!   child spawned by a task that then blocks runs within about a
//!   millisecond, not when the parent's poll ends; a task it *woke* before
//!   blocking, within two slow periods (monitor.rs, "Slow unless a task
//!   was spawned").
//!   Earlier attempts, measured (BENCHMARKS.md, round 5): an atomic take
//!   per message cost 6–8% on `oneshot_request_reply` and `ping_pong`;
//!   searchers stealing after Go's 3 µs back-off 9–19%; spawns to the
//!   stealable queue 25%.
//! - **A yielding worker reaches the inject queue.** A yield (explicit or
//!   a spent budget) is deferred until the worker has polled its drivers
//!   (scheduler/defer.rs), so a worker whose only task keeps yielding runs
//!   out of local work and searches: it takes from the inject queue and
//!   steals, whatever the OS does to the other workers (`task_yielded` also
//!   makes it look at the inject queue first).
//! - **A stuck poll does not hold its queue** (monitor.rs). Every poll is
//!   stamped (plain stores to the worker's own cache line); the monitor
//!   wakes a sleeper to steal a stuck worker's queue, counts polls past
//!   `long_poll_threshold`, calls the `on_long_poll` hook, and, when no
//!   other worker can take a stuck worker's queued work (every worker is
//!   stuck, or the others are all busy), hands it to a rescue thread that
//!   runs it (and the drivers) in the stuck worker's place until no worker
//!   is stuck: `block_in_place` without the task's cooperation, except
//!   that the core stays with the stuck thread (its queue is drained
//!   through the stealing end, so the owner needs no handshake to go on).
//! - **A stuck poll does not hold the drivers or its ring** (monitor.rs).
//!   If nobody is parked in the drivers (the stuck worker had left them to
//!   run what an I/O event woke), the monitor wakes a sleeper, which parks
//!   in them; it also submits what the stuck worker's tasks pushed on its
//!   io_uring ring. So a timer or socket of any task is served within a
//!   sampling period or two of a worker getting stuck.
//!
//! Notifying from a poll: a wake that pushes to the local queue (a yield, a
//! task displaced from the slot, or any wake while the slot is bypassed)
//! wakes a sleeper at once only if this worker now holds more than one task
//! (another worker could start on the rest). If the pushed task is all there
//! is, this worker runs it next, so the decision waits for the poll's end,
//! when it wakes a sleeper only if more work arrived meanwhile. Such a task
//! waits for the current poll to end, exactly as it would have in the LIFO
//! slot had the slot not been bypassed; with the slot disabled by
//! configuration every push notifies at once, and `block_in_place`
//! notifies for whatever its core holds before handing it over. Two tasks
//! waking each other through the capped slot otherwise woke a sleeper every
//! fourth poll, only for it to find the queue already taken and sleep again
//! (27 futex round trips per 1,000-round `Notify` ping-pong, against 2 now;
//! Tokio, which notifies at every push, parks 9 times per 1,000 rounds).

mod block_in_place;

pub(crate) use block_in_place::block_in_place;

use super::lifo::LifoSlot;
use super::queue::{self, Local};
use super::Handle;
use crate::blocking;
use crate::coop;
use crate::loom::{lock, Mutex};
use crate::runtime::context;
use crate::runtime::metrics::WorkerStats;
use crate::scheduler::defer::{self, Defer};
use crate::scheduler::park::{Parker, SharedDriver, Unparker};
use crate::scheduler::Config;
use crate::task::Notified;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

type Task = Notified<Arc<Handle>>;

/// Slot polls allowed in a row before the slot is bypassed for this tick.
const MAX_LIFO_POLLS_PER_TICK: usize = 3;

/// The adaptive global-queue interval aims to look at the global queue
/// about this often (in task-polling time). The idea is Tokio's: with a
/// fixed tick count, a worker running long polls (say, a task streaming
/// from an always-ready socket, 100+ µs per poll) would leave remotely
/// woken tasks waiting 61 long polls.
const TARGET_GLOBAL_QUEUE_INTERVAL_NS: f64 = 200_000.0;
/// Weight of one poll in the moving average of poll time.
const POLL_TIME_EWMA_ALPHA: f64 = 0.1;
const MIN_GLOBAL_QUEUE_INTERVAL: u32 = 2;
const MAX_GLOBAL_QUEUE_INTERVAL: u32 = 127;

pub(crate) struct Worker {
    handle: Arc<Handle>,
    /// Where the core waits while no thread runs this worker (before launch,
    /// and while handed over by `block_in_place`).
    core: Mutex<Option<Box<Core>>>,
}

pub(crate) struct Core {
    index: usize,
    tick: u32,
    /// Shared with the monitor, which may steal from it (lifo.rs).
    lifo_slot: Arc<LifoSlot<Task>>,
    lifo_enabled: bool,
    run_queue: Local<Task>,
    /// Yielded wakers, woken after the next driver poll (defer.rs).
    deferred: Defer,
    is_searching: bool,
    is_shutdown: bool,
    /// The last task yielded: look at the inject queue before local work.
    task_yielded: bool,
    /// The drivers are dispatching on this thread (parked or polling).
    in_driver: bool,
    /// The running poll pushed to the local queue: decide at its end whether
    /// to wake a sleeper (`Context::notify_after_poll`).
    notify_after_poll: bool,
    park: Parker,
    stats: WorkerStats,
    busy_since: Instant,
    rand: FastRand,
    global_queue_interval: u32,
    adaptive_global_queue_interval: bool,
    /// Start of the current batch of polls (see `end_batch`).
    batch_start: Instant,
    batch_start_polls: u64,
    /// Moving average of one poll's duration, in ns.
    poll_time_ewma_ns: f64,
    event_interval: u32,
    disable_lifo_slot: bool,
}

/// The scheduler context of a worker thread.
pub(crate) struct Context {
    worker: Arc<Worker>,
    core: RefCell<Option<Box<Core>>>,
}

/// `Err` means the core was handed to another thread (`block_in_place`):
/// this thread is no longer a worker.
type RunResult = Result<Box<Core>, ()>;

impl Worker {
    pub(super) fn new(handle: Arc<Handle>, core: Box<Core>) -> Arc<Worker> {
        Arc::new(Worker {
            handle,
            core: Mutex::new(Some(core)),
        })
    }
}

impl Core {
    pub(super) fn new(
        index: usize,
        config: &Config,
        driver: Option<std::sync::Arc<SharedDriver>>,
    ) -> (Box<Core>, queue::Steal<Task>, Unparker) {
        let (steal, run_queue) = queue::local();
        let park = Parker::for_worker(driver, Some(index));
        let unpark = park.unparker();
        let core = Box::new(Core {
            index,
            tick: 0,
            lifo_slot: Arc::new(LifoSlot::new()),
            lifo_enabled: !config.disable_lifo_slot,
            run_queue,
            deferred: Defer::default(),
            is_searching: false,
            is_shutdown: false,
            task_yielded: false,
            in_driver: false,
            notify_after_poll: false,
            park,
            stats: WorkerStats::default(),
            busy_since: Instant::now(),
            rand: FastRand::new(index as u64),
            global_queue_interval: config.global_queue_interval,
            adaptive_global_queue_interval: config.adaptive_global_queue_interval,
            batch_start: Instant::now(),
            batch_start_polls: 0,
            poll_time_ewma_ns: 0.0,
            event_interval: config.event_interval,
            disable_lifo_slot: config.disable_lifo_slot,
        });
        (core, steal, unpark)
    }

    pub(super) fn lifo_slot(&self) -> Arc<LifoSlot<Task>> {
        self.lifo_slot.clone()
    }

    /// Forget every queued entry (shutdown; entries hold no reference).
    pub(super) fn forget_queued(&mut self) {
        self.lifo_slot.with_owner(|slot| *slot = None);
        while self.run_queue.pop().is_some() {}
        // These are counted wakers, not queue entries: dropping them
        // releases their references.
        drop(self.deferred.take());
    }

    pub(super) fn publish_stats(&self, handle: &Handle) {
        self.stats
            .publish(&handle.worker_metrics[self.index], self.local_tasks());
    }

    /// Tasks held here: the local queue and the LIFO slot.
    fn local_tasks(&self) -> usize {
        self.run_queue.len() + usize::from(self.lifo_slot.looks_occupied())
    }

    /// Whether this worker holds more than the one task it runs next, so
    /// that waking a sleeper to take some is worth it.
    fn has_work_to_share(&self) -> bool {
        self.local_tasks() > 1
    }

    fn next_task(&mut self, handle: &Handle) -> Option<Task> {
        let yielded = std::mem::take(&mut self.task_yielded);
        if yielded || self.tick.is_multiple_of(self.global_queue_interval) {
            // Fairness: the inject queue must not starve behind local work.
            // Take a fair share, not one task: under load this tick is the
            // only time remote work is served, and one task per interval
            // left 10,000 remote spawns waiting seconds behind a few busy
            // tasks (spawn_many_remote_busy1 in BENCHMARKS.md).
            // A task that just yielded (explicitly or out of budget) says
            // "let others run": remote work goes first then too, or a
            // remotely woken task waits behind a task that is always ready
            // (Tokio gets the same effect by deferring yielded tasks until
            // the worker next looks at its queues; tail_latency measures
            // it).
            return self
                .next_inject_batch(handle)
                .or_else(|| self.next_local_task());
        }
        if let Some(task) = self.next_local_task() {
            return Some(task);
        }
        self.next_inject_batch(handle)
    }

    /// The slot's task, if the monitor did not steal it.
    #[inline]
    fn take_lifo(&self) -> Option<Task> {
        if !self.lifo_slot.looks_occupied() {
            return None;
        }
        self.lifo_slot.with_owner(Option::take)
    }

    fn next_local_task(&mut self) -> Option<Task> {
        self.take_lifo().or_else(|| self.run_queue.pop())
    }

    /// Take a fair share of the inject queue into the local queue (one lock
    /// acquisition), returning the first task.
    fn next_inject_batch(&mut self, handle: &Handle) -> Option<Task> {
        if handle.inject.is_empty() {
            return None;
        }
        let room = self
            .run_queue
            .remaining_slots()
            .min(self.run_queue.max_capacity() / 2);
        let share = handle.inject.len() / handle.remotes.len() + 1;
        let n = share.min(room).max(1);
        let mut first = None;
        let run_queue = &mut self.run_queue;
        handle.inject.pop_n(n, |task| {
            if first.is_none() {
                first = Some(task);
            } else {
                // Cannot overflow: we took at most the free room.
                run_queue.push_back(std::iter::once(task));
            }
        });
        first
    }

    fn transition_to_searching(&mut self, handle: &Handle) -> bool {
        if !self.is_searching {
            self.is_searching = handle.idle.transition_worker_to_searching();
        }
        self.is_searching
    }

    /// Stop searching: the work found came from `found`. The last searcher
    /// to stop makes sure queued work still has a taker.
    fn transition_from_searching(&mut self, handle: &Handle, found: Found) {
        if !self.is_searching {
            return;
        }
        self.is_searching = false;
        if let Some(monitor) = &handle.monitor {
            monitor.wake_if_dormant();
        }
        if handle.idle.transition_worker_from_searching() {
            match found {
                // There may be more where it came from: hand the search on
                // to a sleeper.
                Found::Elsewhere => handle.notify_parked(),
                // The other queues are as empty as the search just found
                // them: only work pushed meanwhile needs a sleeper.
                Found::Own => handle.notify_if_work_pending(),
            }
        }
    }

    fn steal_work(&mut self, handle: &Handle) -> Option<Task> {
        if !self.transition_to_searching(handle) {
            return None;
        }
        let n = handle.remotes.len();
        let start = self.rand.below(n);
        for i in 0..n {
            let victim = (start + i) % n;
            if victim == self.index {
                continue;
            }
            let mut stolen = 0;
            if let Some(task) = handle.remotes[victim]
                .steal
                .steal_into(&mut self.run_queue, &mut stolen)
            {
                self.stats.steal_count += stolen as u64;
                self.stats.steal_operations += 1;
                return Some(task);
            }
        }
        self.next_inject_batch(handle)
    }

    fn has_local_work(&self) -> bool {
        self.lifo_slot.looks_occupied() || self.run_queue.has_tasks()
    }

    /// Returns false if the worker must not sleep (it has work).
    fn transition_to_parked(&mut self, handle: &Handle) -> bool {
        if self.has_local_work() {
            return false;
        }
        let was_searching = self.is_searching;
        let was_last_searcher = handle
            .idle
            .transition_worker_to_parked(self.index, was_searching);
        self.is_searching = false;
        if was_last_searcher {
            // Nobody is searching any more: re-check every queue so work
            // pushed while we were giving up is not stranded.
            handle.notify_if_work_pending();
        } else if !was_searching && !handle.inject.is_empty() {
            // We gave up without searching (half the workers searched): a
            // push meanwhile may have seen a searcher and woken nobody, and
            // that searcher, taking other work, may have seen us still
            // unparked and woken nobody either. Our count is down now
            // (SeqCst, after theirs or seen by them): look once more
            // (loom model `a_push_is_taken_while_the_last_takers_poll_blocks`).
            handle.notify_parked();
        }
        true
    }

    /// Returns true if the worker should leave its park loop.
    fn transition_from_parked(&mut self, handle: &Handle) -> bool {
        if self.has_local_work() {
            // The drivers woke tasks into our queue while we were parked.
            if !handle.idle.unpark_worker_by_id(self.index) {
                // A notifier already took us off the sleepers list and
                // counted us as searching: carry that count.
                self.is_searching = true;
            }
            return true;
        }
        if handle.idle.is_parked(self.index) {
            return false;
        }
        // A notifier took us off the sleepers list and counted us as
        // searching.
        self.is_searching = true;
        true
    }

    /// Begin timing a batch of polls at `now`.
    fn start_batch(&mut self, now: Instant) {
        self.batch_start = now;
        self.batch_start_polls = self.stats.poll_count;
    }

    /// The batch ended at `now`: fold its mean poll time into the moving
    /// average and retune the global-queue interval from it.
    fn end_batch(&mut self, now: Instant) {
        let polls = self.stats.poll_count - self.batch_start_polls;
        if polls == 0 || !self.adaptive_global_queue_interval {
            return;
        }
        let mean = (now - self.batch_start).as_nanos() as f64 / polls as f64;
        // As if each of the batch's polls had updated the average in turn.
        let keep = (1.0 - POLL_TIME_EWMA_ALPHA).powi(polls.min(i32::MAX as u64) as i32);
        self.poll_time_ewma_ns = mean * (1.0 - keep) + self.poll_time_ewma_ns * keep;
        let interval = TARGET_GLOBAL_QUEUE_INTERVAL_NS / self.poll_time_ewma_ns.max(1.0);
        self.global_queue_interval =
            (interval as u32).clamp(MIN_GLOBAL_QUEUE_INTERVAL, MAX_GLOBAL_QUEUE_INTERVAL);
    }

    /// Count the time since `busy_since` as busy and start a new period at
    /// `now`, so the busy-time metric grows while a worker never parks (and
    /// covers the stretch before shutdown).
    fn end_busy_period(&mut self, now: Instant) {
        self.stats.busy_duration_ns +=
            now.saturating_duration_since(self.busy_since).as_nanos() as u64;
        self.busy_since = now;
    }

    fn maintenance(&mut self, handle: &Handle) {
        self.publish_stats(handle);
        if !self.is_shutdown && handle.inject.is_closed() {
            self.is_shutdown = true;
        }
    }
}

impl Context {
    fn handle(&self) -> &Handle {
        &self.worker.handle
    }

    pub(crate) fn driver(&self) -> &crate::runtime::driver::Handle {
        &self.handle().drivers.handle
    }

    /// The index of the core this thread holds; `None` once `block_in_place`
    /// handed it to another thread.
    pub(crate) fn worker_index(&self) -> Option<usize> {
        self.core.try_borrow().ok()?.as_ref().map(|core| core.index)
    }

    fn run(&self, mut core: Box<Core>) -> RunResult {
        core.busy_since = Instant::now();
        while !core.is_shutdown {
            core.tick = core.tick.wrapping_add(1);
            if core.tick.is_multiple_of(core.event_interval) {
                let now = Instant::now();
                core.end_batch(now);
                core.end_busy_period(now);
                core.maintenance(self.handle());
                if core.is_shutdown {
                    break;
                }
                core = self.poll_drivers(core);
                core = self.wake_deferred(core);
                core.start_batch(now);
            }
            if let Some(task) = core.next_task(self.handle()) {
                core = self.run_task(task, core)?;
                continue;
            }
            if let Some(task) = core.steal_work(self.handle()) {
                core = self.run_task(task, core)?;
                continue;
            }
            if !core.deferred.is_empty() {
                // Only yielded tasks are left: let the drivers deliver what
                // is ready, then run them again, without sleeping.
                core = self.poll_drivers(core);
                core = self.wake_deferred(core);
                core.transition_from_searching(self.handle(), Found::Own);
                continue;
            }
            // Submit what the tasks queued on this worker's ring before
            // sleeping; what completed meanwhile is work, not a reason to.
            let (flushed, woke) = self.flush_ring(core);
            core = flushed;
            if woke {
                core.transition_from_searching(self.handle(), Found::Own);
                continue;
            }
            core = self.park(core);
        }
        core.end_busy_period(Instant::now());
        self.handle().shutdown_core(core);
        Err(())
    }

    /// Wake the tasks that yielded (the drivers were just polled). They go
    /// to the back of the local queue, not the LIFO slot: a yield asks to
    /// run after the others.
    fn wake_deferred(&self, mut core: Box<Core>) -> Box<Core> {
        let mut wakers = core.deferred.take();
        if wakers.is_empty() {
            core.deferred.recycle(wakers);
            return core;
        }
        // Batch the notification as the drivers' wakes are (in_driver), and
        // keep the wakes out of the slot; the next task poll re-enables it.
        core.in_driver = true;
        core.lifo_enabled = false;
        *self.core.borrow_mut() = Some(core);
        defer::wake_all(&mut wakers);
        let mut core = self
            .core
            .borrow_mut()
            .take()
            .expect("core gone while waking yielded tasks");
        core.in_driver = false;
        core.deferred.recycle(wakers);
        // They yielded to let others run: remote work goes first next tick.
        core.task_yielded = true;
        if core.has_work_to_share() {
            self.handle().notify_parked();
        }
        core
    }

    /// See [`crate::scheduler::Context::defer`].
    pub(crate) fn defer(&self, waker: &std::task::Waker) -> bool {
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

    fn run_task(&self, task: Task, mut core: Box<Core>) -> RunResult {
        core.transition_from_searching(self.handle(), Found::Elsewhere);
        core.lifo_enabled = !core.disable_lifo_slot;
        core.stats.poll_count += 1;
        // Read by the long-poll monitor (monitor.rs).
        let stamp = &self.handle().remotes[core.index].stamp;
        *self.core.borrow_mut() = Some(core);
        coop::budget(|| {
            stamp.begin(&task);
            task.run();
            let mut lifo_polls = 0;
            loop {
                // The core may be gone: the task called block_in_place,
                // and the stamp is the new thread's (stamp.rs).
                let mut core = self.core.borrow_mut().take().ok_or(())?;
                stamp.end();
                self.notify_after_poll(&mut core);
                let Some(task) = core.take_lifo() else {
                    return Ok(core);
                };
                if !coop::has_remaining() {
                    // Out of budget: the slot task waits its turn instead
                    // (its wake already set `task_yielded`).
                    let overflowed = core
                        .run_queue
                        .push_back_or_overflow(task, &self.handle().inject);
                    core.stats.overflow_count += u64::from(overflowed);
                    return Ok(core);
                }
                lifo_polls += 1;
                if lifo_polls >= MAX_LIFO_POLLS_PER_TICK {
                    core.lifo_enabled = false;
                }
                core.stats.poll_count += 1;
                *self.core.borrow_mut() = Some(core);
                stamp.begin(&task);
                task.run();
            }
        })
    }

    /// A poll ended that pushed to the local queue: wake a sleeper only if
    /// there is more here than the task this worker runs next (see the
    /// module doc, "Notifying from a poll").
    fn notify_after_poll(&self, core: &mut Core) {
        if std::mem::take(&mut core.notify_after_poll) && core.has_work_to_share() {
            self.handle().notify_parked();
        }
    }

    /// Let the drivers deliver what is ready (I/O events, expired timers)
    /// without blocking. The core sits in the context meanwhile, so the
    /// tasks they wake land in this worker's queue.
    fn poll_drivers(&self, core: Box<Core>) -> Box<Core> {
        if self.handle().drivers.shared.is_none() {
            return core;
        }
        let (core, ()) = self.in_drivers(core, |drivers, index| drivers.poll_now_and_flush(index));
        core
    }

    /// The io_uring batch point before parking (see `runtime/io/uring`):
    /// submit this worker's ring and take its completions. Also returns
    /// whether any task was woken.
    fn flush_ring(&self, core: Box<Core>) -> (Box<Core>, bool) {
        self.in_drivers(core, |drivers, index| drivers.flush_ring(index))
    }

    /// Run `f` on the drivers with the core in the context (so the tasks
    /// they wake land in this worker's queue, notifications batched), then
    /// spread what they woke, unless all this worker holds is the one task
    /// it runs next (Tokio's test too: a task queued by the poll that just
    /// ended is no reason to wake anyone).
    fn in_drivers<R>(
        &self,
        mut core: Box<Core>,
        f: impl FnOnce(&crate::scheduler::Drivers, usize) -> R,
    ) -> (Box<Core>, R) {
        core.in_driver = true;
        let index = core.index;
        *self.core.borrow_mut() = Some(core);
        let result = f(&self.handle().drivers, index);
        let mut core = self
            .core
            .borrow_mut()
            .take()
            .expect("core gone while in the drivers");
        core.in_driver = false;
        if core.has_work_to_share() {
            self.handle().notify_parked();
        }
        (core, result)
    }

    fn park(&self, mut core: Box<Core>) -> Box<Core> {
        let handle = self.handle();
        if let Some(f) = &handle.config.before_park {
            f();
        }
        // One clock read ends both the poll batch and the busy period (and
        // one starts both again below).
        let now = Instant::now();
        // The monitor's sample, if one is due, is taken here rather than
        // by waking its thread (monitor.rs, "Who samples").
        if let Some(monitor) = &handle.monitor {
            if monitor.is_due(now) {
                monitor.look(&self.worker.handle, now);
            }
        }
        core.end_batch(now);
        let mut resumed_at = now;
        if core.transition_to_parked(handle) {
            core.end_busy_period(now);
            while !core.is_shutdown {
                core.stats.park_count += 1;
                // Publish first: an odd parity then says every counter
                // is exact (see runtime/metrics.rs).
                core.publish_stats(handle);
                core.stats
                    .park_transition(&handle.worker_metrics[core.index]);
                // Park with the core in the context: tasks the drivers wake
                // on this thread go to our own queue.
                let park = core.park.clone();
                core.in_driver = true;
                *self.core.borrow_mut() = Some(core);
                // Whether this thread polled the drivers does not matter:
                // one that did not was woken to look for work.
                let _ = park.park();
                core = self
                    .core
                    .borrow_mut()
                    .take()
                    .expect("core gone while parked");
                core.in_driver = false;
                core.stats
                    .park_transition(&handle.worker_metrics[core.index]);
                core.maintenance(handle);
                if core.transition_from_parked(handle) {
                    break;
                }
            }
            resumed_at = Instant::now();
            core.busy_since = resumed_at;
            if let Some(monitor) = &handle.monitor {
                monitor.wake_if_dormant();
            }
            if core.has_work_to_share() {
                // The drivers woke more than we run next: now that we are
                // off the sleepers list, hand some to a sleeper.
                handle.notify_parked();
            }
        }
        core.start_batch(resumed_at);
        if let Some(f) = &handle.config.after_unpark {
            f();
        }
        core
    }
}

/// Where a searching worker found the work that ends its search.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Found {
    /// A steal, or the inject queue.
    Elsewhere,
    /// Its own batch point: its ring's, or the driver poll that precedes
    /// running its yielded tasks. The other queues are as empty as the
    /// search just found them, so, like a searcher going to sleep, the last
    /// searcher only re-checks them, and wakes a sleeper only for work
    /// pushed meanwhile (the same SeqCst handshake as
    /// `transition_to_parked`'s; loom model
    /// `own_work_ends_the_search_without_stranding_a_push`). Handing the
    /// search on woke the idle worker twice per round trip of a
    /// one-connection ping-pong on io_uring, only for it to find nothing
    /// (BENCHMARKS.md, "One exchange at a time on io_uring").
    Own,
}

/// How a task reaches a worker's queues.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Push {
    /// Woken by the running task: the LIFO slot, so it runs next.
    Wake,
    /// Spawned by the running task: the LIFO slot too (sending spawns to
    /// the back of the queue instead, which would make them stealable
    /// behind a blocking parent, cost 25% on `ping_pong` and 10% on
    /// `chained_spawn`, measured), and the monitor is told, so that it
    /// looks quickly in case the parent now blocks (monitor.rs).
    Spawn,
    /// Woke itself during its poll: the back of the queue.
    Yield,
}

impl Handle {
    pub(super) fn schedule_task(&self, task: Task, push: Push) {
        let leftover = context::with_scheduler(|cx| {
            if let Some(crate::scheduler::Context::MultiThread(cx)) = cx {
                if std::ptr::eq(&*cx.worker.handle, self) {
                    if let Ok(mut core) = cx.core.try_borrow_mut() {
                        if let Some(core) = core.as_mut() {
                            self.schedule_local(core, task, push);
                            return None;
                        }
                    }
                }
            }
            Some(task)
        });
        if let Some(task) = leftover {
            self.schedule_remote(task);
        }
    }

    fn schedule_local(&self, core: &mut Core, task: Task, push: Push) {
        core.stats.local_schedule_count += 1;
        // A yield, or a wake while the running task is out of budget (its
        // forced yield): let remote work go first on the next tick.
        core.task_yielded |= push == Push::Yield || !coop::has_remaining();
        let pushed_to_queue = if push == Push::Yield || !core.lifo_enabled {
            let overflowed = core.run_queue.push_back_or_overflow(task, &self.inject);
            core.stats.overflow_count += u64::from(overflowed);
            true
        } else {
            let displaced = core.lifo_slot.with_owner(|slot| slot.replace(task));
            // After the task is in the slot, so a monitor this kicks finds
            // it there.
            if push == Push::Spawn {
                if let Some(monitor) = &self.monitor {
                    monitor.note_lifo_spawn(&self.remotes[core.index].stamp);
                }
            }
            match displaced {
                Some(prev) => {
                    let overflowed = core.run_queue.push_back_or_overflow(prev, &self.inject);
                    core.stats.overflow_count += u64::from(overflowed);
                    true
                }
                // Only the monitor steals from the slot, and only from a
                // worker stuck in a poll: waking a sleeper now would be
                // wasted.
                None => false,
            }
        };
        // Wakes from the drivers come in batches while this worker is in
        // them (and still counted as parked, so a notification could pick
        // this very worker and cost a poller wake-up): notify once after
        // the batch instead (the end of `park` / `poll_drivers`). Tokio
        // defers the same way.
        if pushed_to_queue && !core.in_driver {
            if core.disable_lifo_slot || core.has_work_to_share() {
                // Another worker could start on some of it now (and without
                // the slot, the user asked for every wake to be stealable).
                self.notify_parked();
            } else {
                // Only the task we run next: see the poll's end.
                core.notify_after_poll = true;
            }
        }
    }
}

/// Start (or restart, after `block_in_place`) a worker on its own thread.
pub(super) fn launch(worker: Arc<Worker>) {
    let spawner = worker.handle.blocking.clone();
    let launch = Launch(Some(worker));
    // The JoinHandle is dropped: the worker thread is detached.
    drop(blocking::spawn_blocking_on(
        &spawner,
        move || launch.run(),
        None,
    ));
}

/// A worker waiting for its thread. If the thread never runs (the pool
/// shut down first), dropping this hands the core back for shutdown.
struct Launch(Option<Arc<Worker>>);

impl Launch {
    fn run(mut self) {
        let Some(worker) = self.0.take() else { return };
        run_worker(worker);
    }
}

impl Drop for Launch {
    fn drop(&mut self) {
        if let Some(worker) = self.0.take() {
            if let Some(core) = lock(&worker.core).take() {
                worker.handle.shutdown_core(core);
            }
        }
    }
}

fn run_worker(worker: Arc<Worker>) {
    let Some(core) = lock(&worker.core).take() else {
        // Someone else already runs this worker.
        return;
    };
    let scheduler_handle = crate::scheduler::Handle::MultiThread(worker.handle.clone());
    let _current = context::set_current(&scheduler_handle);
    let _enter = context::enter_runtime(true);
    let cx = crate::scheduler::Context::MultiThread(Context {
        worker,
        core: RefCell::new(None),
    });
    context::set_scheduler(&cx, || {
        let crate::scheduler::Context::MultiThread(cx) = &cx else {
            unreachable!()
        };
        // Err only means the core moved on; nothing more to do here.
        let _ = cx.run(core);
    });
}

/// A small xorshift generator for picking steal victims.
struct FastRand(u64);

impl FastRand {
    fn new(seed: u64) -> FastRand {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        FastRand((seed.wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ t | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (((x >> 32) * n as u64) >> 32) as usize
    }
}
