//! Type-erased task pointers and the per-(future, scheduler) vtable.
//!
//! Owns: [`RawTask`], a copyable pointer to a task's header that carries no
//! reference by itself; whether a reference comes with it is decided by the
//! wrapper that holds it (`Task`, `Notified`, `JoinHandle`, `Waker`, ...).
//! The [`Vtable`] is a `static` per `(T, S)` pair, so the header pays one
//! pointer for all the type information.

use super::core::{Cell, Header};
use super::harness;
use super::id::Id;
use super::state::State;
use super::Schedule;
use std::future::Future;
use std::ptr::NonNull;
use std::task::Waker;

pub(crate) struct Vtable {
    pub(super) poll: unsafe fn(NonNull<Header>),
    pub(super) schedule: unsafe fn(NonNull<Header>),
    pub(super) dealloc: unsafe fn(NonNull<Header>),
    /// Writes `Poll<Result<T::Output, JoinError>>` into `*dst` if ready.
    pub(super) try_read_output: unsafe fn(NonNull<Header>, *mut (), &Waker),
    pub(super) drop_join_handle: unsafe fn(NonNull<Header>),
    pub(super) shutdown: unsafe fn(NonNull<Header>) -> bool,
    pub(super) cancel_claimed: unsafe fn(NonNull<Header>),
    pub(super) trailer_offset: usize,
}

struct VtableFor<T, S>(std::marker::PhantomData<(T, S)>);

impl<T: Future, S: Schedule> VtableFor<T, S> {
    const VTABLE: Vtable = Vtable {
        poll: harness::poll::<T, S>,
        schedule: harness::schedule::<T, S>,
        dealloc: harness::dealloc::<T, S>,
        try_read_output: harness::try_read_output::<T, S>,
        drop_join_handle: harness::drop_join_handle::<T, S>,
        shutdown: harness::shutdown::<T, S>,
        cancel_claimed: harness::cancel_claimed::<T, S>,
        trailer_offset: std::mem::offset_of!(Cell<T, S>, trailer),
    };
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawTask {
    ptr: NonNull<Header>,
}

impl RawTask {
    /// Allocate a task cell. The new task's state holds two references (the
    /// owner's and the `JoinHandle`'s) and is `NOTIFIED`.
    pub(super) fn new<T, S>(
        future: T,
        scheduler: S,
        id: Id,
        spawned_at: &'static std::panic::Location<'static>,
    ) -> RawTask
    where
        T: Future,
        S: Schedule,
    {
        let vtable: &'static Vtable = &VtableFor::<T, S>::VTABLE;
        let cell = Cell::new(future, scheduler, id, vtable, spawned_at);
        // SAFETY: Box::into_raw never returns null.
        let ptr = unsafe { NonNull::new_unchecked(Box::into_raw(cell).cast::<Header>()) };
        RawTask { ptr }
    }

    /// # Safety
    /// `ptr` points to a live task header.
    pub(crate) unsafe fn from_raw(ptr: NonNull<Header>) -> RawTask {
        RawTask { ptr }
    }

    pub(crate) fn header_ptr(self) -> NonNull<Header> {
        self.ptr
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: a RawTask is only used while some reference keeps the
        // cell alive (see the wrappers in task/mod.rs).
        unsafe { self.ptr.as_ref() }
    }

    pub(crate) fn state(&self) -> &State {
        &self.header().state
    }

    fn vtable(&self) -> &'static Vtable {
        self.header().vtable
    }

    /// # Safety
    /// The caller holds a run-queue entry for the task (its `NOTIFIED` bit).
    pub(crate) unsafe fn poll(self) {
        // SAFETY: forwarded caller contract.
        unsafe { (self.vtable().poll)(self.ptr) }
    }

    /// # Safety
    /// The task is notified and the caller must push its entry.
    pub(crate) unsafe fn schedule(self) {
        // SAFETY: forwarded caller contract.
        unsafe { (self.vtable().schedule)(self.ptr) }
    }

    /// # Safety
    /// The caller owns the last reference.
    pub(crate) unsafe fn dealloc(self) {
        // SAFETY: forwarded caller contract.
        unsafe { (self.vtable().dealloc)(self.ptr) }
    }

    /// # Safety
    /// `dst` points to a `Poll<Result<T::Output, JoinError>>` of this task's
    /// output type, and the caller is the `JoinHandle`.
    pub(crate) unsafe fn try_read_output(self, dst: *mut (), waker: &Waker) {
        // SAFETY: forwarded caller contract.
        unsafe { (self.vtable().try_read_output)(self.ptr, dst, waker) }
    }

    /// # Safety
    /// Called once, by the `JoinHandle`'s drop; releases its reference.
    pub(crate) unsafe fn drop_join_handle(self) {
        // SAFETY: forwarded caller contract.
        unsafe { (self.vtable().drop_join_handle)(self.ptr) }
    }

    /// Cancel the task if it is idle. Returns whether it was cancelled.
    ///
    /// # Safety
    /// The caller holds a reference that outlives the call.
    pub(crate) unsafe fn shutdown(self) -> bool {
        // SAFETY: forwarded caller contract.
        unsafe { (self.vtable().shutdown)(self.ptr) }
    }

    /// Drop the future of a task whose `RUNNING` bit the caller acquired
    /// through a shutdown transition, and complete it.
    ///
    /// # Safety
    /// The caller holds `RUNNING` and a reference that outlives the call.
    pub(crate) unsafe fn cancel_claimed(self) {
        // SAFETY: forwarded caller contract.
        unsafe { (self.vtable().cancel_claimed)(self.ptr) }
    }

    pub(crate) fn ref_inc(self) {
        self.state().ref_inc();
    }

    /// Release one reference, deallocating on the last.
    ///
    /// # Safety
    /// The caller owns the reference it releases.
    pub(crate) unsafe fn drop_reference(self) {
        if self.state().ref_dec() {
            // SAFETY: that was the last reference.
            unsafe { self.dealloc() }
        }
    }
}

// SAFETY: RawTask is a pointer; the task types it points to are Send and
// their shared fields follow the access rules of core.rs.
unsafe impl Send for RawTask {}
// SAFETY: as above.
unsafe impl Sync for RawTask {}
