//! Tasks: spawning them, joining them, cancelling them, and cooperating
//! with the scheduler.
//!
//! [`spawn`] starts a task and returns a [`JoinHandle`]; [`JoinSet`] manages
//! many; [`AbortHandle`] cancels one from anywhere; [`spawn_blocking`] and
//! [`block_in_place`] are for blocking code; [`coop`] is the budget that
//! keeps a busy task from starving its neighbours.

// Internals. Owns: the task cell (`core.rs`), its state machine
// (`state.rs`), what happens on poll / complete / cancel (`harness.rs`), the
// waker (`waker.rs`), the owned-task list (`list.rs`) and the public handles.
//
// Who holds what (the reference rules are in `state.rs`):
// - `Task`: the owner's reference, held by the scheduler's owned list.
// - `Notified`: a run-queue entry. It holds **no** reference; it borrows the
//   owner's, and there is at most one per task (the `NOTIFIED` bit).
// - `UnownedTask`: a task that no list owns (blocking work); it holds the
//   owner reference itself and gives it up when run or shut down.
// - `JoinHandle`, `AbortHandle` and wakers each hold one reference.

mod abort;
mod core;
mod error;
mod harness;
mod id;
mod join;
mod join_set;
mod list;
mod local;
#[cfg(all(test, loom))]
mod loom_tests;
mod raw;
mod spawn;
mod state;
mod task_local;
mod waker;
mod yield_now;

pub use self::abort::AbortHandle;
pub use self::error::JoinError;
pub use self::id::{id, try_id, Id};
pub use self::join::JoinHandle;
pub use self::join_set::JoinSet;
pub use self::local::{spawn_local, LocalEnterGuard, LocalSet};
pub(crate) use self::spawn::spawn_blocking_unless_shut_down;
pub use self::spawn::{block_in_place, spawn, spawn_blocking};
pub use self::task_local::{AccessError, LocalKey, TaskLocalFuture};
pub use self::yield_now::yield_now;

/// The future types of this module, at Tokio's path
/// (`tokio::task::futures`).
pub mod futures {
    pub use super::task_local::TaskLocalFuture;
}
pub use crate::coop::{consume_budget, unconstrained, Unconstrained};

/// Cooperative scheduling: the per-task operation budget.
pub mod coop {
    pub use crate::coop::{
        consume_budget, cooperative, has_budget_remaining, poll_proceed, unconstrained, Coop,
        RestoreOnPending, Unconstrained,
    };
}

pub(crate) use self::core::Header;
pub(crate) use self::list::OwnedTasks;
pub(crate) use self::raw::RawTask;

use std::future::Future;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// How a scheduler receives its tasks back.
pub(crate) trait Schedule: Send + Sync + Sized + 'static {
    /// The task completed: unlink it from the owned list and return the
    /// list's reference (or `None` if it was already unlinked).
    fn release(&self, task: RawTask) -> Option<Task<Self>>;

    /// A woken task must be queued.
    fn schedule(&self, task: Notified<Self>);

    /// A task woke itself during its own poll: queue it behind other work.
    fn yield_now(&self, task: Notified<Self>) {
        self.schedule(task);
    }
}

/// The owner's reference to a task.
pub(crate) struct Task<S: 'static> {
    raw: RawTask,
    _s: PhantomData<S>,
}

/// A run-queue entry (no reference of its own; see the module doc).
pub(crate) struct Notified<S: 'static> {
    raw: RawTask,
    _s: PhantomData<S>,
}

/// A task owned by no list: blocking work on the blocking pool.
pub(crate) struct UnownedTask<S: 'static> {
    raw: RawTask,
    _s: PhantomData<S>,
}

// SAFETY: the wrappers are pointers to cells whose shared fields follow the
// rules in core.rs; futures are required to be Send where tasks may move.
unsafe impl<S> Send for Task<S> {}
// SAFETY: as above.
unsafe impl<S> Sync for Task<S> {}
// SAFETY: as above.
unsafe impl<S> Send for Notified<S> {}
// SAFETY: as above.
unsafe impl<S> Sync for Notified<S> {}
// SAFETY: as above.
unsafe impl<S> Send for UnownedTask<S> {}

impl<S: 'static> Task<S> {
    /// # Safety
    /// The caller transfers the owner's reference to the new value.
    pub(crate) unsafe fn from_raw(raw: RawTask) -> Task<S> {
        Task {
            raw,
            _s: PhantomData,
        }
    }

    fn into_raw(self) -> RawTask {
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }
}

impl<S: 'static> Drop for Task<S> {
    fn drop(&mut self) {
        // SAFETY: a Task owns one reference.
        unsafe { self.raw.drop_reference() };
    }
}

impl<S: 'static> Notified<S> {
    /// # Safety
    /// The caller owes this entry: it set the task's `NOTIFIED` bit.
    pub(crate) unsafe fn from_raw(raw: RawTask) -> Notified<S> {
        Notified {
            raw,
            _s: PhantomData,
        }
    }

    /// Poll the task (or cancel it, if it was aborted). Consumes the entry.
    pub(crate) fn run(self) {
        // SAFETY: an entry keeps the task alive (it borrows the owner's
        // reference) and its NOTIFIED bit lets us transition to running.
        unsafe { self.raw.poll() };
    }

    /// The entry with a reference of its own, for a runner that is no
    /// worker core (the long-poll monitor's rescue thread): an entry only
    /// borrows the owned list's reference, which the runtime's shutdown
    /// drops once every core is back, and such a runner may still hold
    /// the entry then. Call it while the runtime's tasks cannot be freed
    /// (multi_thread/rescue.rs says how).
    pub(crate) fn into_referenced(self) -> ReferencedNotified<S> {
        self.raw.ref_inc();
        ReferencedNotified { entry: self }
    }

    pub(crate) fn header_ptr(&self) -> NonNull<Header> {
        self.raw.header_ptr()
    }

    /// The task's header (the entry keeps the task alive).
    pub(crate) fn header(&self) -> &Header {
        self.raw.header()
    }

    /// # Safety
    /// `ptr` came from [`Notified::header_ptr`] of an entry that was not
    /// used since.
    pub(crate) unsafe fn from_header(ptr: NonNull<Header>) -> Notified<S> {
        // SAFETY: forwarded caller contract.
        unsafe { Notified::from_raw(RawTask::from_raw(ptr)) }
    }
}

/// A run-queue entry that also holds a reference ([`Notified::into_referenced`]).
pub(crate) struct ReferencedNotified<S: 'static> {
    entry: Notified<S>,
}

impl<S: 'static> ReferencedNotified<S> {
    /// Poll the task (or cancel it, or skip it if shutdown ended it
    /// meanwhile), then let the reference go (the drop).
    pub(crate) fn run(self) {
        // SAFETY: our reference keeps the cell alive whatever happened to
        // the owned list's; the entry's NOTIFIED bit lets us transition
        // to running (a task shutdown completed meanwhile is skipped).
        unsafe { self.entry.raw.poll() };
    }
}

impl<S: 'static> Drop for ReferencedNotified<S> {
    /// Gives the reference back: after the run, or when unwinding before
    /// it (then the entry is forgotten, and the task, still marked
    /// notified, is stranded until shutdown cancels it; nothing between
    /// taking the entry and the run panics).
    fn drop(&mut self) {
        // SAFETY: the reference `into_referenced` took.
        unsafe { self.entry.raw.drop_reference() };
    }
}

impl<S: 'static> UnownedTask<S> {
    pub(crate) fn run(self) {
        let raw = self.raw;
        std::mem::forget(self);
        // SAFETY: the task starts NOTIFIED; our owner reference is handed to
        // the scheduler's `release`, which returns it when the task completes.
        unsafe { raw.poll() };
    }

    /// Cancel a task that never ran (its pool shut down): its `JoinHandle`
    /// sees a cancellation. Dropping does exactly that.
    pub(crate) fn shutdown(self) {
        drop(self);
    }
}

impl<S: 'static> Drop for UnownedTask<S> {
    fn drop(&mut self) {
        // Dropped without running: make its JoinHandle see a cancellation.
        let raw = self.raw;
        // SAFETY: we own the owner reference; as in `shutdown`.
        unsafe {
            if !raw.shutdown() {
                raw.drop_reference();
            }
        }
    }
}

/// Allocate a task bound for an owned list: the caller passes the `Task` and
/// `Notified` to `OwnedTasks::bind`.
pub(crate) fn new_task<T, S>(
    future: T,
    scheduler: S,
    id: Id,
    spawned_at: &'static std::panic::Location<'static>,
) -> (Task<S>, Notified<S>, JoinHandle<T::Output>)
where
    T: Future + Send + 'static,
    T::Output: Send + 'static,
    S: Schedule,
{
    let raw = RawTask::new::<T, S>(future, scheduler, id, spawned_at);
    // SAFETY: the new state holds two references (owner + join handle) and
    // NOTIFIED, which are handed out exactly once here.
    unsafe {
        (
            Task::from_raw(raw),
            Notified::from_raw(raw),
            JoinHandle::new(raw),
        )
    }
}

/// Allocate a task whose future need not be `Send`, bound for an owned list
/// (a `LocalSet`'s).
///
/// # Safety
/// The caller polls, cancels and drops the task's future only on the thread
/// that calls this (the `LocalSet`'s thread: see local.rs).
pub(crate) unsafe fn new_task_local<T, S>(
    future: T,
    scheduler: S,
    id: Id,
    spawned_at: &'static std::panic::Location<'static>,
) -> (Task<S>, Notified<S>, JoinHandle<T::Output>)
where
    T: Future + 'static,
    T::Output: 'static,
    S: Schedule,
{
    let raw = RawTask::new::<T, S>(future, scheduler, id, spawned_at);
    // SAFETY: as in `new_task`; the caller keeps the future on its thread.
    unsafe {
        (
            Task::from_raw(raw),
            Notified::from_raw(raw),
            JoinHandle::new(raw),
        )
    }
}

/// Allocate a task run by no owned list (blocking work).
#[track_caller]
pub(crate) fn new_unowned<T, S>(
    future: T,
    scheduler: S,
    id: Id,
) -> (UnownedTask<S>, JoinHandle<T::Output>)
where
    T: Future + Send + 'static,
    T::Output: Send + 'static,
    S: Schedule,
{
    let raw = RawTask::new::<T, S>(future, scheduler, id, std::panic::Location::caller());
    (
        UnownedTask {
            raw,
            _s: PhantomData,
        },
        JoinHandle::new(raw),
    )
}
