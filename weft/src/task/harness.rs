//! What happens to a task: poll, complete, cancel, read the output, drop the
//! join handle, deallocate. These are the monomorphic functions the vtable
//! points at; each one acts only after a state transition says it may.

use super::core::{Cell, Header, Stage};
use super::id::TaskIdGuard;
use super::raw::RawTask;
use super::state::{ToIdle, ToRunning, ToShutdown};
use super::waker::waker_ref;
use super::{JoinError, Notified, Schedule};
use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

/// # Safety (all functions here)
/// `ptr` points to a live `Cell<T, S>`: the vtable that calls these functions
/// was built for exactly that cell type, and every caller holds a reference
/// or a run-queue entry that keeps the cell alive (see state.rs).
unsafe fn cell<'a, T: Future, S>(ptr: NonNull<Header>) -> &'a Cell<T, S> {
    // SAFETY: see the function-level contract above.
    unsafe { ptr.cast::<Cell<T, S>>().as_ref() }
}

pub(super) unsafe fn poll<T: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: vtable contract.
    let cell = unsafe { cell::<T, S>(ptr) };
    match cell.header.state.transition_to_running() {
        ToRunning::Poll => {}
        ToRunning::Cancel => {
            // SAFETY: we hold RUNNING.
            unsafe { cancel_claimed::<T, S>(ptr) };
            return;
        }
        ToRunning::Skip => return,
    }
    // SAFETY: we hold RUNNING, which grants access to the stage.
    let ready = unsafe { poll_future(cell, ptr) };
    if ready {
        // SAFETY: we still hold RUNNING; the output is stored.
        unsafe { complete::<T, S>(ptr) };
        return;
    }
    match cell.header.state.transition_to_idle() {
        ToIdle::Idle => {}
        ToIdle::Notified => {
            // Woken during its own poll: a yield, which goes to the back.
            // SAFETY: NOTIFIED is set and we are the one who must queue it.
            cell.core
                .scheduler
                .yield_now(unsafe { Notified::from_raw(RawTask::from_raw(ptr)) });
            // SAFETY: transition_to_idle gave us this reference to keep the
            // cell alive across the push (a shutdown may claim the task as
            // soon as it is idle); nothing touches the cell after this.
            unsafe { RawTask::from_raw(ptr).drop_reference() };
        }
        ToIdle::Cancel => {
            // SAFETY: transition_to_idle kept RUNNING for us.
            unsafe { cancel_claimed::<T, S>(ptr) };
        }
    }
}

/// Poll the future once. Returns true when the stage now holds the output.
///
/// # Safety
/// The caller holds `RUNNING`.
unsafe fn poll_future<T: Future, S>(cell: &Cell<T, S>, ptr: NonNull<Header>) -> bool {
    let id = cell.header.id;
    let _id_guard = TaskIdGuard::enter(id);
    // SAFETY: the waker borrows the reference held by the caller's entry.
    let waker = unsafe { waker_ref(ptr) };
    let mut cx = Context::from_waker(&waker);
    let polled = catch_unwind(AssertUnwindSafe(|| {
        // A panicking poll drops the future during the unwind, inside this
        // catch, as Tokio does: its destructors see `thread::panicking()`
        // and the task id, and the stage is empty when the catch returns.
        let drop_on_unwind = DropStageOnUnwind(cell);
        let polled = cell.core.stage.with_mut(|stage| {
            // SAFETY: RUNNING gives exclusive access to the stage.
            let stage = unsafe { &mut *stage };
            let Stage::Running(fut) = stage else {
                unreachable!("a running task always holds its future");
            };
            // SAFETY: the future lives inside the heap cell and is never
            // moved until it is dropped in place.
            let fut = unsafe { Pin::new_unchecked(fut) };
            fut.poll(&mut cx)
        });
        std::mem::forget(drop_on_unwind);
        polled
    }));
    let output = match polled {
        Ok(Poll::Pending) => return false,
        Ok(Poll::Ready(out)) => {
            // Drop the future before publishing the output; its drop may
            // panic too.
            // SAFETY: still holding RUNNING.
            match unsafe { drop_stage(cell) } {
                Ok(()) => Ok(out),
                Err(payload) => Err(JoinError::panic(id, payload)),
            }
        }
        // The guard already dropped the future.
        Err(payload) => Err(JoinError::panic(id, payload)),
    };
    // SAFETY: still holding RUNNING.
    unsafe { store(cell, Stage::Finished(output)) };
    true
}

/// Empties the stage when dropped: armed around a poll and forgotten when
/// the poll returns, so it runs only while a panic unwinds out of the poll.
struct DropStageOnUnwind<'a, T: Future, S>(&'a Cell<T, S>);

impl<T: Future, S> Drop for DropStageOnUnwind<'_, T, S> {
    fn drop(&mut self) {
        // SAFETY: armed only by `poll_future`, whose caller holds RUNNING.
        unsafe { store(self.0, Stage::Consumed) };
    }
}

/// Drop what the stage holds (future or output) with the task's id
/// current, catching a panic of its destructor.
///
/// # Safety
/// Caller has exclusive access to the stage (module rules in core.rs).
unsafe fn drop_stage<T: Future, S>(cell: &Cell<T, S>) -> Result<(), Box<dyn Any + Send>> {
    let _id_guard = TaskIdGuard::enter(cell.header.id);
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: forwarded caller contract.
        unsafe { store(cell, Stage::Consumed) }
    }))
}

/// # Safety
/// Caller has exclusive access to the stage.
unsafe fn store<T: Future, S>(cell: &Cell<T, S>, stage: Stage<T>) {
    // SAFETY: forwarded caller contract.
    cell.core.stage.with_mut(|p| unsafe { *p = stage });
}

/// Drop the future and record the cancellation, then complete.
///
/// # Safety
/// The caller holds `RUNNING` for this task.
pub(super) unsafe fn cancel_claimed<T: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: vtable contract.
    let cell = unsafe { cell::<T, S>(ptr) };
    let id = cell.header.id;
    // SAFETY: RUNNING held.
    let err = match unsafe { drop_stage(cell) } {
        Ok(()) => JoinError::cancelled(id),
        Err(payload) => JoinError::panic(id, payload),
    };
    // SAFETY: RUNNING held.
    unsafe { store(cell, Stage::Finished(Err(err))) };
    // SAFETY: RUNNING held, output stored.
    unsafe { complete::<T, S>(ptr) };
}

/// Publish completion, hand the output to whoever owns it, and release the
/// owner's reference. Nothing touches the cell after the release.
///
/// # Safety
/// The caller holds `RUNNING` and has stored the output.
unsafe fn complete<T: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: vtable contract.
    let cell = unsafe { cell::<T, S>(ptr) };
    let prev = cell.header.state.transition_to_complete();
    // A panicking output destructor or join waker must not take the worker
    // down; the task is complete either way.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if !prev.is_join_interested() {
            // Nobody will read the output.
            // SAFETY: without JOIN_INTEREST the completer owns the output.
            let _ = unsafe { drop_stage(cell) };
        } else if prev.is_join_waker_set() {
            cell.trailer.waker.with(|w| {
                // SAFETY: JOIN_WAKER is set, so the runtime may read the slot.
                if let Some(w) = unsafe { &*w } {
                    w.wake_by_ref();
                }
            });
            let after = cell.header.state.unset_join_waker_after_complete();
            if !after.is_join_interested() {
                // The handle was dropped meanwhile and left the waker to us.
                // SAFETY: JOIN_WAKER was set until our unset.
                cell.trailer.waker.with_mut(|w| unsafe { *w = None });
            }
        }
    }));
    // SAFETY: the cell is alive (vtable contract).
    let raw = unsafe { RawTask::from_raw(ptr) };
    if let Some(owner_ref) = cell.core.scheduler.release(raw) {
        drop(owner_ref);
    }
}

pub(super) unsafe fn schedule<T: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: vtable contract.
    let cell = unsafe { cell::<T, S>(ptr) };
    // SAFETY: the caller set NOTIFIED and owes the queue its entry.
    cell.core
        .scheduler
        .schedule(unsafe { Notified::from_raw(RawTask::from_raw(ptr)) });
}

pub(super) unsafe fn dealloc<T: Future, S>(ptr: NonNull<Header>) {
    // SAFETY: the last reference is gone; the cell was made by Box::new.
    drop(unsafe { Box::from_raw(ptr.cast::<Cell<T, S>>().as_ptr()) });
}

/// Runtime shutdown of a task that is not in any owned list. Returns
/// whether it was cancelled (and the owner reference consumed by release).
pub(super) unsafe fn shutdown<T: Future, S: Schedule>(ptr: NonNull<Header>) -> bool {
    // SAFETY: vtable contract.
    let cell = unsafe { cell::<T, S>(ptr) };
    match cell.header.state.transition_to_shutdown() {
        ToShutdown::Cancel => {
            // SAFETY: the transition gave us RUNNING.
            unsafe { cancel_claimed::<T, S>(ptr) };
            true
        }
        ToShutdown::Busy => false,
    }
}

pub(super) unsafe fn try_read_output<T: Future, S>(
    ptr: NonNull<Header>,
    dst: *mut (),
    waker: &Waker,
) {
    // SAFETY: vtable contract.
    let cell = unsafe { cell::<T, S>(ptr) };
    if !can_read_output(&cell.header, &cell.trailer, waker) {
        return;
    }
    // SAFETY: COMPLETE with JOIN_INTEREST: the JoinHandle owns the output.
    let stage = cell
        .core
        .stage
        .with_mut(|p| unsafe { std::mem::replace(&mut *p, Stage::Consumed) });
    let Stage::Finished(output) = stage else {
        panic!("JoinHandle polled after it already returned its output");
    };
    let dst = dst.cast::<Poll<Result<T::Output, JoinError>>>();
    // SAFETY: the caller passes a Poll of this task's output type.
    unsafe { *dst = Poll::Ready(output) };
}

/// The JoinHandle side of the join-waker protocol (state.rs): true when the
/// task is complete; otherwise makes sure `waker` is the one that will be
/// woken at completion.
fn can_read_output(header: &Header, trailer: &super::core::Trailer, waker: &Waker) -> bool {
    let snapshot = header.state.load();
    if snapshot.is_complete() {
        return true;
    }
    if snapshot.is_join_waker_set() {
        // SAFETY: JOIN_WAKER set and not complete: the runtime may read the
        // slot concurrently, but nobody writes it, so a shared read is fine.
        let same = trailer
            .waker
            .with(|w| unsafe { (*w).as_ref() }.is_some_and(|w| w.will_wake(waker)));
        if same {
            return false;
        }
        if header.state.unset_join_waker().is_err() {
            return true;
        }
    }
    // JOIN_WAKER is clear and the task is not complete: the slot is ours.
    // SAFETY: exclusive access per the join-waker rule.
    trailer
        .waker
        .with_mut(|w| unsafe { *w = Some(waker.clone()) });
    match header.state.set_join_waker() {
        Ok(_) => false,
        Err(_) => {
            // Completed before we published: the slot is still ours.
            // SAFETY: as above.
            trailer.waker.with_mut(|w| unsafe { *w = None });
            true
        }
    }
}

pub(super) unsafe fn drop_join_handle<T: Future, S>(ptr: NonNull<Header>) {
    // SAFETY: vtable contract.
    let cell = unsafe { cell::<T, S>(ptr) };
    let todo = cell.header.state.transition_to_join_handle_dropped();
    if todo.drop_output {
        // The output's destructor runs on the dropping thread with the
        // task's id current; a panic in it is caught, as Tokio does, so
        // dropping a handle never panics.
        // SAFETY: the handle owns the output of a complete task.
        let _ = unsafe { drop_stage(cell) };
    }
    if todo.drop_waker {
        // SAFETY: the transition says the slot is ours.
        cell.trailer.waker.with_mut(|w| unsafe { *w = None });
    }
    // SAFETY: the JoinHandle's own reference.
    unsafe { RawTask::from_raw(ptr).drop_reference() };
}
