//! Blocking work: `spawn_blocking` on a growable thread pool, and the glue
//! that runs such work as a task so that it gets a `JoinHandle`.
//!
//! Owns: the blocking task type (an `UnownedTask` whose future runs the
//! closure once) and its scheduler, which never re-queues anything: the
//! future is `Ready` on its first poll. `block_in_place` lives with the
//! multi-thread worker, whose core it hands over.

pub(crate) mod pool;

use crate::coop;
use crate::task::{self, Id, JoinHandle, Notified, RawTask, Schedule, Task, UnownedTask};
use crate::time::BlockingInFlight;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

pub(crate) use pool::{BlockingPool, PoolConfig, SpawnError};

/// The task type the blocking pool runs.
pub(crate) type BlockingTask = UnownedTask<BlockingSchedule>;
pub(crate) type Spawner = pool::Spawner<BlockingTask>;

/// The "scheduler" of blocking tasks: they complete on their first poll.
/// It also holds a user closure's [`BlockingInFlight`] mark, so that a
/// frozen clock stays put until the task's completion has woken whoever
/// awaits it (`release` runs after that wake).
pub(crate) struct BlockingSchedule {
    in_flight: Option<BlockingInFlight>,
}

impl Schedule for BlockingSchedule {
    fn release(&self, task: RawTask) -> Option<Task<Self>> {
        if let Some(in_flight) = &self.in_flight {
            in_flight.finish();
        }
        // UnownedTask::run gave its owner reference to the running poll;
        // hand it back so completion releases it.
        // SAFETY: that reference is ours to transfer, exactly once.
        Some(unsafe { Task::from_raw(task) })
    }

    fn schedule(&self, _task: Notified<Self>) {
        // A blocking task starts NOTIFIED and is never idle before it
        // completes, so no transition can ask for it to be queued.
        unreachable!("a blocking task was scheduled");
    }
}

impl pool::Job for BlockingTask {
    fn run(self) {
        UnownedTask::run(self);
    }
}

/// Runs a closure to completion on its first poll.
struct BlockingFn<F>(Option<F>);

impl<F> Unpin for BlockingFn<F> {}

impl<F: FnOnce() -> R, R> Future for BlockingFn<F> {
    type Output = R;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<R> {
        let f = self
            .0
            .take()
            .expect("a blocking task is polled exactly once");
        // Blocking code is not cooperative: do not let it trip the budget.
        Poll::Ready(coop::with_unconstrained(f))
    }
}

/// Queue `f` on the pool. After shutdown the returned handle resolves to a
/// cancelled `JoinError`. `in_flight` (users' closures on a runtime with
/// timers) is released once the task has completed and woken its handle.
///
/// # Panics
/// If the OS refuses a thread and none of the pool's is running.
pub(crate) fn spawn_blocking_on<F, R>(
    spawner: &Spawner,
    f: F,
    in_flight: Option<BlockingInFlight>,
) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    try_spawn_blocking_on(spawner, f, in_flight).unwrap_or_else(|| no_threads())
}

/// The panic of a blocking spawn the OS refused a thread for while none of
/// the pool's was running.
#[cold]
#[track_caller]
pub(crate) fn no_threads() -> ! {
    panic!(
        "weft could not start a thread for spawn_blocking: the OS refused to create one and \
         none is running. Lower the thread count or raise the process's limits."
    )
}

/// [`spawn_blocking_on`], or `None` (`f` dropped unrun) where it would
/// panic.
pub(crate) fn try_spawn_blocking_on<F, R>(
    spawner: &Spawner,
    f: F,
    in_flight: Option<BlockingInFlight>,
) -> Option<JoinHandle<R>>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    match queue_on(spawner, f, in_flight) {
        (join, Queued::Yes | Queued::ShutDown) => Some(join),
        (_, Queued::NoThreads) => None,
    }
}

/// Whether the pool took a job; a refused one's task is already
/// cancelled, so its handle resolves to a cancelled `JoinError`.
#[must_use]
pub(crate) enum Queued {
    Yes,
    /// The runtime has shut down.
    ShutDown,
    /// The OS refused a thread and none of the pool's is running.
    NoThreads,
}

/// Queue `f` on the pool; its handle, and whether it was taken.
pub(crate) fn queue_on<F, R>(
    spawner: &Spawner,
    f: F,
    in_flight: Option<BlockingInFlight>,
) -> (JoinHandle<R>, Queued)
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let schedule = BlockingSchedule { in_flight };
    let (task, join) = task::new_unowned(BlockingFn(Some(f)), schedule, Id::next());
    match spawner.spawn(task) {
        Ok(()) => (join, Queued::Yes),
        Err(SpawnError::Shutdown(task)) => {
            task.shutdown();
            (join, Queued::ShutDown)
        }
        Err(SpawnError::NoThreads(task)) => {
            task.shutdown();
            (join, Queued::NoThreads)
        }
    }
}
