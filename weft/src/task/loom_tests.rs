//! Loom models of the task state machine: wake, complete, abort, shutdown and
//! the `JoinHandle` (output, waker, drop) racing each other in every order.
//!
//! What is modelled: the real task cell, state word, harness, waker, handles
//! and `OwnedTasks`, all built on `crate::loom` types, driven by a minimal
//! scheduler: one FIFO run queue behind a loom mutex plus one owned list.
//! Any thread may pop an entry and run it, as a worker would. Each model
//! spawns exactly one task and uses two or three threads, so each explores
//! all its interleavings within `LOOM_MAX_PREEMPTIONS=2` in well under a
//! second (most finish unbounded too).
//!
//! Why the scheduler handle is zero-sized: run-queue entries hold no
//! reference (state.rs), so the riskiest bug in this design is touching a
//! task cell after its last reference is gone, and the harness calls into
//! the scheduler handle *stored in the cell* right after state transitions
//! (to queue a yield, to push a wake, to release a completed task). Loom
//! tracks its own objects, not heap memory, so it cannot see such a use
//! after free. Here the handle [`Sched`] is a zero-sized type that reaches
//! the per-execution [`TestSched`] through a `loom::lazy_static`: calling it
//! reads no memory of the cell, its `Drop` runs exactly when the cell is
//! freed (and counts that), and every call into it asserts that the cell is
//! still allocated (after its first loom operation, see [`push`]). A use
//! after free on those paths is thus an assertion failure, and a leaked cell
//! is one too (checked at the end of each model).
//!
//! Instrumentation (poll, drop and wake counters, slots handing a waker or a
//! thread handle to the main thread) uses std types on purpose: it is ghost
//! state, read after the threads that write it are joined. Loom runs all of
//! a model's threads on one OS thread, so the values are exact; were they
//! loom atomics, loom would explore interleavings that check nothing more.

use super::{new_task, Id, JoinError, JoinHandle, Notified, OwnedTasks, RawTask, Schedule, Task};
use crate::loom::{lock, Mutex};
use loom::future::block_on;
use loom::thread;
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// The scheduler state of one loom execution.
struct TestSched {
    run_queue: Mutex<RunQueue>,
    /// Always `Some` until dropped (see the `Drop` impl).
    owned: Option<OwnedTasks<Sched>>,
    /// Task cells freed so far (each model spawns one task).
    freed: AtomicUsize,
}

impl TestSched {
    fn owned(&self) -> &OwnedTasks<Sched> {
        self.owned.as_ref().expect("dropped only at the end")
    }
}

impl Drop for TestSched {
    fn drop(&mut self) {
        // A failed model unwinds out of the execution and drops the lazy
        // statics outside it, where `OwnedTasks::drop` (which locks a loom
        // mutex) would panic again and abort the whole test binary. Leak the
        // list instead: the model already failed.
        let owned = self.owned.take();
        if std::thread::panicking() {
            std::mem::forget(owned);
        }
    }
}

struct RunQueue {
    entries: VecDeque<Notified<Sched>>,
    /// Like a closed inject queue: entries pushed now are forgotten.
    closed: bool,
}

loom::lazy_static! {
    static ref SCHED: TestSched = TestSched {
        run_queue: Mutex::new(RunQueue {
            entries: VecDeque::new(),
            closed: false,
        }),
        owned: Some(OwnedTasks::new(1)),
        freed: AtomicUsize::new(0),
    };
}

/// The handle stored in every task cell (see the module doc).
struct Sched;

impl Drop for Sched {
    fn drop(&mut self) {
        // Runs when the cell holding this handle is deallocated.
        SCHED.freed.fetch_add(1, SeqCst);
    }
}

impl Schedule for Sched {
    fn release(&self, task: RawTask) -> Option<Task<Sched>> {
        let owner_ref = SCHED.owned().remove(task);
        // After the shard lock (see `push`).
        assert_live("release");
        owner_ref
    }

    fn schedule(&self, task: Notified<Sched>) {
        push(task, "schedule");
    }

    fn yield_now(&self, task: Notified<Sched>) {
        push(task, "yield_now");
    }
}

fn assert_live(path: &str) {
    assert_eq!(
        SCHED.freed.load(SeqCst),
        0,
        "`{path}` called for a task whose cell was already freed"
    );
}

fn push(task: Notified<Sched>, path: &str) {
    let mut q = lock(&SCHED.run_queue);
    // Checked after taking the lock, not before: loom interleaves threads
    // only at its own operations, and the harness read the cell right
    // before calling us. If another thread could free the cell by the time
    // we hold the lock, it could have freed it before that read too.
    assert_live(path);
    if q.closed {
        // Entries hold no reference: forgetting one is all a closed queue
        // may do (inject.rs does the same).
        return;
    }
    assert!(
        q.entries
            .iter()
            .all(|e| e.header_ptr() != task.header_ptr()),
        "task queued twice (second entry from `{path}`)"
    );
    q.entries.push_back(task);
}

/// Spawn onto the test scheduler, as `Handle::spawn` does.
fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (task, notified, join) =
        new_task(future, Sched, Id::next(), std::panic::Location::caller());
    let notified = SCHED
        .owned()
        .bind(task, notified)
        .expect("the owned list is open");
    push(notified, "spawn");
    join
}

/// Pop and run one entry; false if the queue was empty.
fn run_one() -> bool {
    let next = lock(&SCHED.run_queue).entries.pop_front();
    match next {
        Some(task) => {
            task.run();
            true
        }
        None => false,
    }
}

fn run_until_empty() {
    while run_one() {}
}

/// Runtime shutdown in the order the real ones use: close the queue (its
/// entries are forgotten) so nothing more is polled, then cancel every task.
fn shutdown() {
    {
        let mut q = lock(&SCHED.run_queue);
        q.closed = true;
        q.entries.clear();
    }
    SCHED.owned().close_and_shutdown_all();
}

fn queue_is_empty() -> bool {
    lock(&SCHED.run_queue).entries.is_empty()
}

/// End of a model: the one task cell was freed and the list let go of it.
fn assert_cell_freed() {
    assert_eq!(SCHED.freed.load(SeqCst), 1, "the task cell leaked");
    assert_eq!(SCHED.owned().len(), 0);
}

/// A shared ghost counter.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicUsize>);

impl Counter {
    fn inc(&self) -> usize {
        self.0.fetch_add(1, SeqCst) + 1
    }

    fn get(&self) -> usize {
        self.0.load(SeqCst)
    }
}

/// A task output that counts its drops.
struct Output {
    value: usize,
    drops: Counter,
}

impl Drop for Output {
    fn drop(&mut self) {
        self.drops.inc();
    }
}

/// A future that counts its drops.
struct DropCounted<F> {
    inner: F,
    drops: Counter,
}

impl<F: Future + Unpin> Future for DropCounted<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        Pin::new(&mut self.inner).poll(cx)
    }
}

impl<F> Drop for DropCounted<F> {
    fn drop(&mut self) {
        self.drops.inc();
    }
}

/// A waker that counts its wakes; `Arc::strong_count` tells whether every
/// clone handed to the task was dropped again.
#[derive(Default)]
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// A task completes on one thread while the main thread awaits its
/// `JoinHandle`: the output arrives exactly once, and the join waker
/// registered by `block_on` is woken (or the completion is seen first).
#[test]
fn join_output_race() {
    loom::model(|| {
        let out_drops = Counter::default();
        let drops = out_drops.clone();
        let join = spawn(poll_fn(move |_| {
            Poll::Ready(Output {
                value: 42,
                drops: drops.clone(),
            })
        }));
        let runner = thread::spawn(run_until_empty);
        let out = block_on(join).expect("the task completed");
        assert_eq!(out.value, 42);
        drop(out);
        runner.join().unwrap();
        assert_eq!(out_drops.get(), 1);
        assert_cell_freed();
    });
}

/// The task hands a clone of its waker to a new thread during its first
/// poll and returns `Pending`; that thread wakes it twice (by reference,
/// then by reference or by value) while the poll may still be running, then
/// helps run the queue. The task must be polled a second time (no lost
/// wakeup) and never a third, and is never queued twice (asserted by
/// `push`).
#[test]
fn wake_by_ref_and_by_val_while_running() {
    for by_val in [false, true] {
        loom::model(move || wake_while_running(by_val));
    }
}

fn wake_while_running(by_val: bool) {
    let polls = Counter::default();
    let waker_thread: Arc<std::sync::Mutex<Option<thread::JoinHandle<()>>>> = Arc::default();
    let (p, slot) = (polls.clone(), waker_thread.clone());
    let join = spawn(poll_fn(move |cx| {
        if p.inc() > 1 {
            return Poll::Ready(());
        }
        let waker = cx.waker().clone();
        let th = thread::spawn(move || {
            // Two wakes, so one may find the task queued, running or done.
            waker.wake_by_ref();
            if by_val {
                waker.wake();
            } else {
                waker.wake_by_ref();
                drop(waker);
            }
            run_until_empty();
        });
        *slot.lock().unwrap() = Some(th);
        Poll::Pending
    }));
    // The main thread is the first runner.
    run_until_empty();
    let th = waker_thread.lock().unwrap().take();
    th.expect("the first poll started the waking thread")
        .join()
        .unwrap();
    // Whoever pushed an entry ran the queue afterwards, so nothing is left.
    assert!(queue_is_empty(), "an entry was queued but never run");
    assert!(polls.get() >= 2, "the wakeup was lost");
    assert_eq!(polls.get(), 2, "polled again after completing");
    assert!(join.is_finished());
    block_on(join).expect("the task completed");
    assert_cell_freed();
}

/// `abort` from another thread races with the task's poll and completion,
/// with a task that completes on its first poll and one that yields first,
/// while the main thread runs the task and then awaits or drops the
/// `JoinHandle`. An awaiting handle sees the output or a cancellation; the
/// future is dropped exactly once, and so is the output if one was made.
#[test]
fn abort_races_poll() {
    for yield_first in [false, true] {
        for await_join in [true, false] {
            loom::model(move || abort_races(yield_first, await_join));
        }
    }
}

fn abort_races(yield_first: bool, await_join: bool) {
    let (fut_drops, out_made, out_drops, polls) = (
        Counter::default(),
        Counter::default(),
        Counter::default(),
        Counter::default(),
    );
    let (made, drops, p) = (out_made.clone(), out_drops.clone(), polls.clone());
    let join = spawn(DropCounted {
        inner: poll_fn(move |cx| {
            if yield_first && p.inc() == 1 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            made.inc();
            Poll::Ready(Output {
                value: 7,
                drops: drops.clone(),
            })
        }),
        drops: fut_drops.clone(),
    });
    let abort = join.abort_handle();
    let aborter = thread::spawn(move || {
        abort.abort();
        drop(abort);
        // An abort of an idle task queues it: run what we queued.
        run_until_empty();
    });
    run_until_empty();
    if await_join {
        match block_on(join) {
            Ok(out) => {
                assert_eq!(out.value, 7);
                drop(out);
            }
            Err(err) => {
                assert!(err.is_cancelled(), "{err:?}");
                assert_eq!(out_made.get(), 0);
            }
        }
    } else {
        drop(join);
    }
    aborter.join().unwrap();
    assert!(queue_is_empty());
    assert_eq!(fut_drops.get(), 1);
    assert!(out_made.get() <= 1);
    assert_eq!(out_drops.get(), out_made.get());
    assert_cell_freed();
}

/// The `JoinHandle` is dropped on the main thread (optionally after one
/// poll that registers a join waker) while the task completes on another.
/// The output and the future are each dropped exactly once, the join
/// waker's clone is released, and the cell is freed.
#[test]
fn drop_join_handle_races_complete() {
    for register_waker in [false, true] {
        loom::model(move || drop_join_races_complete(register_waker));
    }
}

fn drop_join_races_complete(register_waker: bool) {
    let (fut_drops, out_drops) = (Counter::default(), Counter::default());
    let drops = out_drops.clone();
    let mut join = spawn(DropCounted {
        inner: poll_fn(move |_| {
            Poll::Ready(Output {
                value: 1,
                drops: drops.clone(),
            })
        }),
        drops: fut_drops.clone(),
    });
    let runner = thread::spawn(run_until_empty);
    let counting = Arc::new(CountingWaker::default());
    if register_waker {
        let waker = Waker::from(counting.clone());
        if let Poll::Ready(out) = Pin::new(&mut join).poll(&mut Context::from_waker(&waker)) {
            assert_eq!(out.expect("completed").value, 1);
        }
    }
    drop(join);
    runner.join().unwrap();
    assert_eq!(out_drops.get(), 1);
    assert_eq!(fut_drops.get(), 1);
    assert!(counting.0.load(SeqCst) <= 1);
    assert_eq!(Arc::strong_count(&counting), 1, "the join waker leaked");
    assert_cell_freed();
}

/// Polls a `JoinHandle` once with `first`, then always with the caller's
/// waker, so the join waker is replaced while the task may be completing.
struct SwapWaker {
    join: JoinHandle<usize>,
    first: Option<Waker>,
}

impl Future for SwapWaker {
    type Output = Result<usize, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(first) = self.first.take() {
            if let Poll::Ready(out) =
                Pin::new(&mut self.join).poll(&mut Context::from_waker(&first))
            {
                return Poll::Ready(out);
            }
        }
        Pin::new(&mut self.join).poll(cx)
    }
}

/// The `JoinHandle` is polled with waker A, then with `block_on`'s waker B,
/// while the task completes on another thread. The completion must wake
/// the waker registered last: if it woke A only, `block_on` would sleep
/// forever and loom would report a deadlock.
#[test]
fn join_waker_replaced_while_completing() {
    loom::model(|| {
        let join = spawn(poll_fn(|_| Poll::Ready(5usize)));
        let runner = thread::spawn(run_until_empty);
        let first = Arc::new(CountingWaker::default());
        let out = block_on(SwapWaker {
            join,
            first: Some(Waker::from(first.clone())),
        });
        assert_eq!(out.expect("the task completed"), 5);
        runner.join().unwrap();
        assert!(first.0.load(SeqCst) <= 1);
        assert_eq!(Arc::strong_count(&first), 1, "waker A leaked");
        assert_cell_freed();
    });
}

/// Runtime shutdown (`close_and_shutdown_all`) on the main thread races with
/// another thread waking the idle task through a cloned waker (by value, or
/// by reference and then dropping the clone), with the `JoinHandle` kept or
/// dropped first (then the waker may hold the last reference). The future
/// is dropped exactly once, no freed cell is touched, and the cell is freed.
#[test]
fn shutdown_races_wake() {
    for by_val in [false, true] {
        for detach in [false, true] {
            loom::model(move || shutdown_races(by_val, detach));
        }
    }
}

fn shutdown_races(by_val: bool, detach: bool) {
    let fut_drops = Counter::default();
    let slot: Arc<std::sync::Mutex<Option<Waker>>> = Arc::default();
    let s = slot.clone();
    let join = spawn(DropCounted {
        inner: poll_fn(move |cx| {
            *s.lock().unwrap() = Some(cx.waker().clone());
            Poll::<()>::Pending
        }),
        drops: fut_drops.clone(),
    });
    // First poll, before any race: the task stores a waker and goes idle.
    assert!(run_one());
    let waker = slot
        .lock()
        .unwrap()
        .take()
        .expect("the task stored its waker");
    let join = if detach {
        drop(join);
        None
    } else {
        Some(join)
    };
    let waker_thread = thread::spawn(move || {
        if by_val {
            waker.wake();
        } else {
            waker.wake_by_ref();
            drop(waker);
        }
    });
    shutdown();
    waker_thread.join().unwrap();
    if let Some(join) = join {
        let err = block_on(join).expect_err("shutdown cancels the task");
        assert!(err.is_cancelled(), "{err:?}");
    }
    assert_eq!(fut_drops.get(), 1);
    assert_cell_freed();
}

/// Shutdown while the task is being polled, as when a worker thread that
/// called `block_in_place` is still polling its task without a core and
/// the replacement worker shuts the runtime down. The task is detached and
/// wakes itself through the borrowed waker (a yield), so after its poll
/// returns, the list's reference is the only one. `close_and_shutdown_all`
/// either flags the running task (its runner cancels it) or claims it once
/// idle; either way the runner's yield push must not touch a freed cell.
/// (This model caught exactly that: see `State::transition_to_idle`, which
/// now hands the runner a reference for the push.)
#[test]
fn shutdown_races_yield_of_running_task() {
    loom::model(|| {
        let fut_drops = Counter::default();
        let shutdown_thread: Arc<std::sync::Mutex<Option<thread::JoinHandle<()>>>> = Arc::default();
        let slot = shutdown_thread.clone();
        let join = spawn(DropCounted {
            inner: poll_fn(move |cx| {
                *slot.lock().unwrap() = Some(thread::spawn(shutdown));
                cx.waker().wake_by_ref();
                Poll::<()>::Pending
            }),
            drops: fut_drops.clone(),
        });
        drop(join);
        // One poll only: entries queued after shutdown began must not run.
        assert!(run_one());
        let th = shutdown_thread.lock().unwrap().take();
        th.expect("the poll started the shutdown").join().unwrap();
        assert_eq!(fut_drops.get(), 1);
        assert_cell_freed();
    });
}
