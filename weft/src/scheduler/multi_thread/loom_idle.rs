//! Loom model of the multi-thread scheduler's sleep/wake protocol: work
//! pushed from outside the runtime is never stranded while every worker
//! sleeps (no lost wakeup).
//!
//! What is modelled: the real [`Idle`] (searching/unparked counts and the
//! sleepers list) and the real [`Parker`], driven in the order `worker.rs`
//! and `mod.rs` call them. The worker loop is `Context::run` / `Context::park`
//! reduced to what the protocol reads: take work from the inject queue, else
//! try to become a searcher (`Core::transition_to_searching`) and look
//! again, else `Core::transition_to_parked` (the last searcher to park
//! re-checks the queues, `Handle::notify_if_work_pending`), then park and,
//! on every wake, `Core::maintenance` and `Core::transition_from_parked`.
//! A worker that takes work leaves the searching state first
//! (`Core::transition_from_searching`, which hands the search on with
//! `Handle::notify_parked` if it was the last searcher, or, when its own
//! driver gave it the work (`Found::Own`), only re-checks the queues). The
//! pusher is
//! `Handle::schedule_remote`: push, then `notify_parked`, which unparks the
//! worker `Idle::worker_to_notify` picks. Shutdown is `Handle::close`.
//!
//! Reductions, each because the real code makes the part unobservable here:
//! - The inject queue is [`ModelInject`], a copy of `Inject`'s
//!   synchronisation (length stored with `Release` under the lock, emptiness
//!   read with `Acquire` and no lock) holding plain numbers, not tasks.
//! - Local queues and LIFO slots are always empty: only their owner pushes
//!   to them, and nothing in this model runs tasks that spawn. So
//!   `has_local_work` is false, no victim has anything to steal, and the
//!   `unpark_worker_by_id` branch of `transition_from_parked` is not taken.
//! - Ticks are not counted: the periodic `maintenance` of the run loop only
//!   matters for a worker that never parks, and here every idle worker parks.
//!
//! The check: the main thread pushes one item (or two) and then waits on a
//! loom `Notify` that a worker signals after taking one. If an item were
//! stranded, every thread would be blocked and loom would report a deadlock.
//! Then the runtime closes and both workers must exit.
//!
//! The model is sharp enough to matter: each of these mutations makes loom
//! report the deadlock within `LOOM_MAX_PREEMPTIONS=2`: `should_notify`
//! reading the state with a plain load instead of `fetch_add(0)`; a parking
//! last searcher skipping the `notify_if_work_pending` re-check; a worker
//! parking without having searched skipping its look at the inject queue
//! (with a taken item's poll blocking its worker); `unpark` notifying the
//! condvar without first taking the parker's mutex; a last searcher that
//! leaves the search for work of its own skipping its re-check of the
//! queues (`own_work_ends_the_search_without_stranding_a_push`).

use super::idle::Idle;
use crate::loom::{lock, Arc, AtomicUsize, Mutex, Ordering};
use crate::scheduler::park::{Parker, Unparker};
use loom::sync::Notify;
use loom::thread;
use std::collections::VecDeque;
use std::sync::atomic::Ordering::SeqCst;

const NUM_WORKERS: usize = 2;
const ITEM: u32 = 7;

/// `Inject`'s synchronisation over plain items.
struct ModelInject {
    len: AtomicUsize,
    synced: Mutex<Synced>,
}

struct Synced {
    items: VecDeque<u32>,
    closed: bool,
}

impl ModelInject {
    fn new() -> ModelInject {
        ModelInject {
            len: AtomicUsize::new(0),
            synced: Mutex::new(Synced {
                items: VecDeque::new(),
                closed: false,
            }),
        }
    }

    fn is_empty(&self) -> bool {
        self.len.load(Ordering::Acquire) == 0
    }

    fn is_closed(&self) -> bool {
        lock(&self.synced).closed
    }

    fn close(&self) -> bool {
        let mut s = lock(&self.synced);
        if s.closed {
            return false;
        }
        s.closed = true;
        s.items.clear();
        self.len.store(0, Ordering::Release);
        true
    }

    fn push(&self, item: u32) -> bool {
        let mut s = lock(&self.synced);
        if s.closed {
            return false;
        }
        s.items.push_back(item);
        self.len
            .store(self.len.load(Ordering::Relaxed) + 1, Ordering::Release);
        true
    }

    fn pop(&self) -> Option<u32> {
        if self.is_empty() {
            return None;
        }
        let mut s = lock(&self.synced);
        let item = s.items.pop_front()?;
        self.len
            .store(self.len.load(Ordering::Relaxed) - 1, Ordering::Release);
        Some(item)
    }
}

/// The parts of `Handle` the protocol touches.
struct Shared {
    idle: Idle,
    inject: ModelInject,
    unparkers: Vec<Unparker>,
    /// Signalled by the worker that takes the pushed item.
    taken: Notify,
    /// Items taken so far (ghost state, read after the signal).
    taken_count: std::sync::atomic::AtomicUsize,
    /// The first item's poll blocks its worker for the rest of the model
    /// (a task that blocks its thread: the worker stays counted unparked
    /// and takes nothing else).
    first_blocks: bool,
}

/// What a worker has besides the inject queue: in this model, at most one
/// task its own driver wakes (the io_uring batch point, `Context::flush_ring`)
/// once a search of the queues found nothing, whose poll then blocks the
/// worker for the rest of the model.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OwnWork {
    None,
    BlockingAfterSearch,
}

impl Shared {
    /// `Handle::schedule_remote`.
    fn schedule_remote(&self, item: u32) {
        if self.inject.push(item) {
            self.notify_parked();
        }
    }

    /// `Handle::notify_parked`.
    fn notify_parked(&self) {
        if let Some(index) = self.idle.worker_to_notify() {
            self.unparkers[index].unpark();
        }
    }

    /// `Handle::notify_if_work_pending` (local queues are always empty).
    fn notify_if_work_pending(&self) {
        if !self.inject.is_empty() {
            self.notify_parked();
        }
    }

    fn taken(&self) -> usize {
        self.taken_count.load(SeqCst)
    }

    /// `Handle::close`.
    fn close(&self) {
        if self.inject.close() {
            for unpark in &self.unparkers {
                unpark.unpark();
            }
        }
    }
}

/// The parts of a worker's `Core` the protocol touches.
struct Core {
    index: usize,
    is_searching: bool,
    is_shutdown: bool,
    park: Parker,
    own_work: OwnWork,
}

impl Core {
    /// `Core::next_task`: the local queue and LIFO slot are empty, so it is
    /// the inject queue.
    fn next_task(&mut self, shared: &Shared) -> Option<u32> {
        shared.inject.pop()
    }

    /// `Core::transition_to_searching`.
    fn transition_to_searching(&mut self, shared: &Shared) -> bool {
        if !self.is_searching {
            self.is_searching = shared.idle.transition_worker_to_searching();
        }
        self.is_searching
    }

    /// `Core::transition_from_searching`; `own`: the work came from the
    /// worker's own drivers (`Found::Own`).
    fn transition_from_searching(&mut self, shared: &Shared, own: bool) {
        if !self.is_searching {
            return;
        }
        self.is_searching = false;
        if shared.idle.transition_worker_from_searching() {
            if own {
                shared.notify_if_work_pending();
            } else {
                shared.notify_parked();
            }
        }
    }

    /// `Core::steal_work`: no victim has work, then the inject queue.
    fn steal_work(&mut self, shared: &Shared) -> Option<u32> {
        if !self.transition_to_searching(shared) {
            return None;
        }
        shared.inject.pop()
    }

    /// `Core::transition_to_parked` (never any local work here).
    fn transition_to_parked(&mut self, shared: &Shared) -> bool {
        let was_searching = self.is_searching;
        let was_last_searcher = shared
            .idle
            .transition_worker_to_parked(self.index, was_searching);
        self.is_searching = false;
        if was_last_searcher {
            shared.notify_if_work_pending();
        } else if !was_searching && !shared.inject.is_empty() {
            shared.notify_parked();
        }
        true
    }

    /// `Core::transition_from_parked` (never any local work here).
    fn transition_from_parked(&mut self, shared: &Shared) -> bool {
        if shared.idle.is_parked(self.index) {
            return false;
        }
        self.is_searching = true;
        true
    }

    /// `Core::maintenance`.
    fn maintenance(&mut self, shared: &Shared) {
        if !self.is_shutdown && shared.inject.is_closed() {
            self.is_shutdown = true;
        }
    }
}

/// `Context::run`.
fn run(shared: &Shared, mut core: Core) {
    while !core.is_shutdown {
        let Some(item) = core.next_task(shared).or_else(|| core.steal_work(shared)) else {
            if core.own_work == OwnWork::BlockingAfterSearch {
                // `flush_ring` woke a task of this worker's: it stops
                // searching and runs it, and the poll blocks for good.
                core.transition_from_searching(shared, true);
                return;
            }
            park(shared, &mut core);
            continue;
        };
        if run_task(shared, &mut core, item) {
            return;
        }
    }
}

/// `Context::run_task`, with taking the item as the task's poll.
/// Returns whether the poll blocks the worker for good (`first_blocks`).
#[must_use]
fn run_task(shared: &Shared, core: &mut Core, item: u32) -> bool {
    core.transition_from_searching(shared, false);
    assert_eq!(item, ITEM);
    let first = shared.taken_count.fetch_add(1, SeqCst) == 0;
    shared.taken.notify();
    first && shared.first_blocks
}

/// `Context::park`.
fn park(shared: &Shared, core: &mut Core) {
    if core.transition_to_parked(shared) {
        while !core.is_shutdown {
            let _ = core.park.park();
            core.maintenance(shared);
            if core.transition_from_parked(shared) {
                break;
            }
        }
    }
}

/// Two workers start idle-hunting while the main thread pushes one item
/// from outside the runtime: some worker must take it. Then the runtime
/// shuts down and both workers must exit.
#[test]
fn remote_push_wakes_a_worker() {
    loom::model(|| push_and_shut_down(1));
}

/// As above with two items pushed back to back: the second push may find a
/// searcher and wake nobody, so the searcher that takes the first item must
/// hand the search on (`transition_from_searching`) or take both itself.
#[test]
fn two_remote_pushes_are_both_taken() {
    loom::model(|| push_and_shut_down(2));
}

/// Two items pushed back to back, and the poll of the first one taken
/// blocks its worker: the other worker must take the second. The second
/// push may see the first taker still searching and wake nobody; the
/// taker, leaving the search, may see the other worker still unparked
/// and wake nobody either; so the other worker, parking without having
/// searched, must look at the inject queue once more
/// (`Core::transition_to_parked`). Without that look loom finds the run
/// where the second item waits for the first one's poll to end.
#[test]
fn a_push_is_taken_while_the_last_takers_poll_blocks() {
    loom::model(|| run_model(2, true));
}

/// One item pushed while worker 0 searches; worker 0's search finds
/// nothing, its own ring then gives it a task whose poll blocks it. The
/// push may have seen worker 0 searching and woken nobody, and worker 1
/// may have parked before the push (without searching: half the workers
/// already did), so worker 0, leaving the search for its own work as the
/// last searcher, must re-check the queues and wake worker 1
/// (`Core::transition_from_searching` with `Found::Own`). Without that check
/// loom finds the run where the item is never taken.
#[test]
fn own_work_ends_the_search_without_stranding_a_push() {
    loom::model(|| run_model_with(1, false, OwnWork::BlockingAfterSearch));
}

fn push_and_shut_down(items: usize) {
    run_model(items, false);
}

fn run_model(items: usize, first_blocks: bool) {
    run_model_with(items, first_blocks, OwnWork::None);
}

/// `worker0`: what worker 0 has besides the inject queue.
fn run_model_with(items: usize, first_blocks: bool, worker0: OwnWork) {
    let parkers: Vec<Parker> = (0..NUM_WORKERS).map(|_| Parker::new()).collect();
    let shared = Arc::new(Shared {
        idle: Idle::new(NUM_WORKERS),
        inject: ModelInject::new(),
        unparkers: parkers.iter().map(Parker::unparker).collect(),
        taken: Notify::new(),
        taken_count: Default::default(),
        first_blocks,
    });
    let workers: Vec<_> = parkers
        .into_iter()
        .enumerate()
        .map(|(index, park)| {
            let shared = shared.clone();
            thread::spawn(move || {
                let core = Core {
                    index,
                    is_searching: false,
                    is_shutdown: false,
                    park,
                    own_work: if index == 0 { worker0 } else { OwnWork::None },
                };
                run(&shared, core);
            })
        })
        .collect();

    for _ in 0..items {
        shared.schedule_remote(ITEM);
    }
    // A lost wakeup leaves every thread blocked here: loom reports it.
    // (Loom's `Notify` may wake spuriously, hence the loop.)
    while shared.taken() < items {
        shared.taken.wait();
    }
    assert_eq!(shared.taken(), items);

    shared.close();
    for worker in workers {
        worker.join().unwrap();
    }
}
