//! What the long-poll monitor (monitor.rs) does for a worker stuck in one
//! poll: take the work queued behind it, and, when nobody else can run
//! that work, run it on a rescue thread in the worker's place.
//!
//! Owns: the rescue thread's loop, and its [`Rescuer`] (its poll stamp,
//! and whether it was retired). At most one is current (the monitor's
//! `rescuer`, set when it starts one, cleared by
//! `Monitor::rescue_ended` as it leaves). It has no core of its own:
//! what it wakes goes to the inject queue, what it took and did not run
//! goes back there, and it never parks, so it leaves the drivers to the
//! workers it unparks on its way out.
//!
//! Invariants:
//! - **A rescued task may block too.** It may block as the task its
//!   worker is stuck in did (they are often alike), and the rescue thread
//!   is then as stuck as that worker. So it stamps its polls as a worker
//!   does (stamp.rs), and the monitor, seeing it in one poll for the
//!   threshold, retires it: it is no longer current, a sample that wants a
//!   rescue starts another, and the retired thread leaves once its poll
//!   returns. Retired threads number at most the tasks blocked in them,
//!   each on a blocking-pool thread, as `block_in_place` would have them.
//!   The poll it is retired in is counted as a long poll of the worker
//!   whose place it took, and given to the hook
//!   (`LongPollInfo::on_rescue_thread`). (Before, work queued after such a task waited until it
//!   or the worker's task returned: test
//!   `a_task_queued_while_the_rescue_thread_blocks_too_is_run`.) Which
//!   rescuer is current changes under the monitor's `rescuer` lock, and
//!   a leaving one clears it only if it is still the one there; the
//!   `retired` flag it reads is a hint, not a handshake: a retired thread
//!   that misses it for a step is one more rescuer for that step, and
//!   every step is taken under the turn below.
//! - **Every task it puts in the inject queue is announced**
//!   (`notify_parked`, as every push there is). The bare unparks on its
//!   way out do not announce work: a worker they wake that is still on
//!   the sleepers list (idle.rs) takes the wake-up for a spurious one and
//!   sleeps again without looking at the queues.
//! - **It holds no task but the one it runs.** What a steal took beyond
//!   that goes back to the inject queue before the run, which may block.
//! - **Shutdown waits for its step.** Queue entries hold no reference to
//!   their task: the runtime frees every task once all cores are back
//!   (multi_thread/mod.rs), and this thread is no core (nor is the monitor
//!   thread, which takes tasks from stuck workers' LIFO slots). So each
//!   looks at the queues and takes an entry under the monitor's rescue
//!   turn, after checking that the inject queue is still open, and the
//!   last core back takes the turn once before freeing anything: a step
//!   under way ends first, and the next one sees the queue closed. The
//!   rescue thread then runs the task with a reference of its own
//!   (`Notified::into_referenced`), taken under the turn, so the run
//!   itself is outside it: a rescued task that blocks until shutdown
//!   drops other tasks (a channel's last sender) or ends the runtime
//!   itself must not hold the shutdown up.

use super::monitor::Monitor;
use super::queue;
use super::stamp::PollStamp;
use super::Handle;
use crate::coop;
use crate::loom::{AtomicBool, Ordering};
use crate::task::Notified;
use std::sync::{Arc, MutexGuard, Weak};
use std::time::Duration;

/// One rescue thread, as the monitor sees it (module doc, "A rescued task
/// may block too").
pub(super) struct Rescuer {
    /// Its polls; only its thread writes it.
    stamp: PollStamp,
    /// The monitor saw it stuck and let another start: it leaves after
    /// the poll it is in.
    retired: AtomicBool,
    /// The stuck worker whose place it took when it started (its long
    /// polls are reported as that worker's).
    stands_in_for: usize,
}

impl Rescuer {
    pub(super) fn new(stands_in_for: usize) -> Rescuer {
        Rescuer {
            stamp: PollStamp::new(),
            retired: AtomicBool::new(false),
            stands_in_for,
        }
    }

    pub(super) fn stamp(&self) -> &PollStamp {
        &self.stamp
    }

    pub(super) fn stands_in_for(&self) -> usize {
        self.stands_in_for
    }

    pub(super) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }

    fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }
}

/// Worker `index` is in the same poll as a period ago: move its LIFO
/// task to the inject queue, and wake a sleeper to run it and to steal the
/// worker's queue, or to park in the drivers if nobody is in them; submit
/// what the worker's tasks pushed on its io_uring ring.
/// Returns whether it stole the LIFO task.
pub(super) fn rescue_queued(handle: &Arc<Handle>, monitor: &Monitor, index: usize) -> bool {
    let remote = &handle.remotes[index];
    // An entry taken from the slot is pushed before shutdown can free its
    // task (module doc, "Shutdown waits").
    let stolen = remote.lifo.looks_occupied()
        && open_step(handle, monitor).is_some_and(|_turn| match remote.lifo.steal() {
            Some(task) => {
                handle.metrics.inc_lifo_steal();
                handle.schedule_remote(task);
                true
            }
            None => false,
        });
    // What its tasks pushed on its io_uring ring waits for its own flush,
    // which will not come while it is stuck: submit it on its behalf
    // (completions reaped here wake their tasks through the inject queue),
    // and have the driver's holder take what completes later.
    handle.drivers.flush_stuck_ring(index);
    // Queued work needs a taker: the stuck worker's, and the inject
    // queue's too (a worker that went to sleep without searching, while
    // the stuck one was the last searcher, did not look at it again, and
    // a push that saw a searcher woke nobody). And if the stuck worker had
    // left the drivers to run this poll, nobody is in them: a woken
    // sleeper that finds nothing to do parks in them.
    if !remote.steal.is_empty() || !handle.inject.is_empty() || handle.drivers.unmanned() {
        handle.notify_parked();
    }
    stolen
}

/// The rescue turn for one step that takes queue entries without a core,
/// or `None` once the runtime shuts down (module doc, "Shutdown waits").
fn open_step<'a>(handle: &Handle, monitor: &'a Monitor) -> Option<MutexGuard<'a, ()>> {
    let turn = monitor.rescue_turn();
    (!handle.inject.is_closed()).then_some(turn)
}

/// Whether a sample that found `stuck` of `workers` workers past the
/// threshold calls for the rescue thread: every worker is stuck, or a
/// stuck one has work queued behind it and no worker is parked or
/// searching to steal it (the others are busy, and a busy worker steals
/// only when its own queue runs dry, which may be never). The rescue
/// thread then runs in the stuck worker's place, as the thread
/// `block_in_place` starts does, without the task's cooperation.
pub(super) fn rescue_wanted(
    stuck: usize,
    workers: usize,
    stuck_with_queue: bool,
    any_idle: bool,
) -> bool {
    stuck > 0 && (stuck >= workers || (stuck_with_queue && !any_idle))
}

/// Stuck workers' queued work has nobody to run it: run it (and the
/// inject queue, and the drivers) on a thread of its own until no worker
/// is stuck. `false` if no thread could be had (the OS refused one and
/// the blocking pool has none running).
#[must_use]
pub(super) fn start(handle: &Arc<Handle>, rescuer: Arc<Rescuer>) -> bool {
    let weak = Arc::downgrade(handle);
    let run = move || run(weak, rescuer);
    crate::blocking::try_spawn_blocking_on(&handle.blocking, run, None).is_some()
}

/// What a steal took beyond the task this thread runs next goes back to
/// the inject queue before that task runs, announced as every push there
/// is. Held here, it would wait for that task's poll, which may block as
/// the one it was rescued from did (on a one-worker runtime a task
/// blocked waiting for its queue-mate held here never ended), with no
/// worker able to reach it (test
/// `work_the_rescue_thread_took_but_did_not_run_is_run`).
fn hand_back(handle: &Handle, local: &mut queue::Local<Notified<Arc<Handle>>>) {
    if handle.inject.push_batch(std::iter::from_fn(|| local.pop())) {
        handle.notify_parked();
    }
}

/// The rescue thread's loop (module doc).
fn run(handle: Weak<Handle>, rescuer: Arc<Rescuer>) {
    let Some(handle) = handle.upgrade() else {
        return;
    };
    let Some(monitor) = handle.monitor.clone() else {
        return;
    };
    let _ended = RescueEnded(monitor.clone(), rescuer.clone());
    let scheduler_handle = crate::scheduler::Handle::MultiThread(handle.clone());
    let _current = crate::runtime::context::set_current(&scheduler_handle);
    // Inside the runtime, as a worker is: a task's `block_on` panics with
    // the usual message, and dropping a runtime here does not wait on it.
    let _enter = crate::runtime::context::enter_runtime(true);
    // A queue of its own to steal into (a steal takes half a queue), never
    // holding anything while a task runs: see `hand_back`.
    let (_unused, mut local) = queue::local::<Notified<Arc<Handle>>>();
    let mut stuck = Vec::new();
    while !rescuer.is_retired() {
        // A look at the queues, and taking what it found, under the turn
        // (module doc); the run after it, with the task's own reference.
        let Some(turn) = open_step(&handle, &monitor) else {
            break;
        };
        stuck.clone_from(&monitor.stuck_workers());
        if stuck.is_empty() {
            break;
        }
        let steal = |r: &super::Remote, local: &mut queue::Local<_>| {
            let mut stolen = 0;
            r.steal.steal_into(local, &mut stolen)
        };
        // The stuck workers' queues first: nobody else may take them.
        let next = stuck
            .iter()
            .find_map(|&i| steal(&handle.remotes[i], &mut local))
            .or_else(|| handle.inject.pop())
            .or_else(|| handle.remotes.iter().find_map(|r| steal(r, &mut local)));
        hand_back(&handle, &mut local);
        match next {
            Some(task) => {
                rescuer.stamp.begin(&task);
                let task = task.into_referenced();
                drop(turn);
                coop::budget(|| task.run());
                rescuer.stamp.end();
            }
            None => {
                handle.drivers.poll_now();
                drop(turn);
                if handle.inject.is_empty() {
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        }
    }
    // A worker that went to park while this thread was polling the drivers
    // found them taken and sleeps on its condvar, where no I/O event or
    // timer reaches it: nobody else would poll the drivers again (seen as a
    // 1-worker runtime hung in a socket copy, under load). Wake every
    // worker; one of them parks in the drivers, the rest sleep again.
    for remote in handle.remotes.iter() {
        remote.unpark.unpark();
    }
}

/// Tells the monitor the rescue thread left, however it leaves: a
/// rescuer left current would keep every later rescue from starting.
struct RescueEnded(Arc<Monitor>, Arc<Rescuer>);

impl Drop for RescueEnded {
    fn drop(&mut self) {
        self.0.rescue_ended(&self.1);
    }
}
