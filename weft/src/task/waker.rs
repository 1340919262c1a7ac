//! The task waker: two words, the header pointer and one static vtable.
//!
//! `clone` adds a reference and `drop` releases one; `wake_by_ref` never
//! touches the count (run-queue entries borrow the owned list's reference,
//! see state.rs); `wake` releases its own reference in the same atomic
//! operation as the notification when there is nothing to queue, and right
//! after the push when there is.

use super::core::Header;
use super::raw::RawTask;
use super::state::{Notify, NotifyByVal};
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::task::{RawWaker, RawWakerVTable, Waker};

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

fn raw(data: *const ()) -> RawTask {
    // SAFETY: every RawWaker built here carries a non-null header pointer
    // whose reference (or borrowed entry) keeps the cell alive.
    unsafe { RawTask::from_raw(NonNull::new_unchecked(data as *mut Header)) }
}

unsafe fn clone(data: *const ()) -> RawWaker {
    raw(data).ref_inc();
    RawWaker::new(data, &VTABLE)
}

unsafe fn wake(data: *const ()) {
    let task = raw(data);
    match task.state().transition_to_notified_by_val() {
        NotifyByVal::SubmitThenRelease => {
            // SAFETY: we set NOTIFIED on an idle task, so we owe the entry;
            // then we release the reference this waker owned.
            unsafe {
                task.schedule();
                task.drop_reference();
            }
        }
        NotifyByVal::Done => {}
        // SAFETY: the transition released the last reference.
        NotifyByVal::Dealloc => unsafe { task.dealloc() },
    }
}

unsafe fn wake_by_ref(data: *const ()) {
    let task = raw(data);
    if task.state().transition_to_notified_by_ref() == Notify::Submit {
        // SAFETY: we set NOTIFIED on an idle task, so we owe the entry.
        unsafe { task.schedule() };
    }
}

unsafe fn drop_waker(data: *const ()) {
    // SAFETY: a cloned waker owns one reference.
    unsafe { raw(data).drop_reference() };
}

/// A waker that borrows the caller's reference: no count change. Cloning it
/// makes an owning waker as usual.
///
/// # Safety
/// The task stays alive while the returned waker (not its clones) is used.
pub(super) unsafe fn waker_ref(ptr: NonNull<Header>) -> ManuallyDrop<Waker> {
    let raw = RawWaker::new(ptr.as_ptr() as *const (), &VTABLE);
    // SAFETY: VTABLE upholds the RawWaker contract described above.
    ManuallyDrop::new(unsafe { Waker::from_raw(raw) })
}
