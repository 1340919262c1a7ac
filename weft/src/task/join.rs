//! `JoinHandle<T>`: await a task's output, abort it, or detach by dropping.

use super::abort::AbortHandle;
use super::id::Id;
use super::raw::RawTask;
use super::state::Notify;
use super::JoinError;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// An owned permission to join a task: awaiting it yields the task's output.
///
/// Dropping a `JoinHandle` *detaches* the task: it keeps running and its
/// output is dropped when it finishes. Awaiting is cancel-safe.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let handle = weft::spawn(async { 6 * 7 });
/// assert_eq!(handle.await.unwrap(), 42);
/// # });
/// ```
pub struct JoinHandle<T> {
    raw: RawTask,
    _output: PhantomData<T>,
}

// SAFETY: the handle only moves a `T` out of the task (so `T: Send`); the
// shared fields it touches follow the join-waker protocol of state.rs.
unsafe impl<T: Send> Send for JoinHandle<T> {}
// SAFETY: `&JoinHandle` only allows `abort`, `is_finished` and `id`, which
// touch the atomic state word alone.
unsafe impl<T: Send> Sync for JoinHandle<T> {}

impl<T> JoinHandle<T> {
    pub(super) fn new(raw: RawTask) -> JoinHandle<T> {
        JoinHandle {
            raw,
            _output: PhantomData,
        }
    }

    /// Cancel the task. If it is not running, its future is dropped the next
    /// time a worker picks it up; if it is running, at the end of the current
    /// poll. Awaiting the handle then returns a cancelled [`JoinError`]
    /// (unless the task completed first). Works from any thread.
    ///
    /// ```
    /// # weft::runtime::Runtime::new().unwrap().block_on(async {
    /// let handle = weft::spawn(std::future::pending::<()>());
    /// handle.abort();
    /// assert!(handle.await.unwrap_err().is_cancelled());
    /// # });
    /// ```
    pub fn abort(&self) {
        remote_abort(self.raw);
    }

    /// Whether the task has finished (completed, panicked or been cancelled).
    pub fn is_finished(&self) -> bool {
        self.raw.state().load().is_complete()
    }

    /// A handle that can abort the task without owning its output.
    pub fn abort_handle(&self) -> AbortHandle {
        self.raw.ref_inc();
        AbortHandle::new(self.raw)
    }

    /// The task's id.
    pub fn id(&self) -> Id {
        self.raw.header().id()
    }
}

pub(super) fn remote_abort(raw: RawTask) {
    if raw.state().transition_to_notified_and_cancel() == Notify::Submit {
        // SAFETY: we set NOTIFIED on an idle task, so we owe the entry; our
        // handle's reference keeps the task alive through the push.
        unsafe { raw.schedule() };
    }
}

impl<T> Unpin for JoinHandle<T> {}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let coop = ready!(crate::coop::poll_proceed(cx));
        let mut out: Poll<Result<T, JoinError>> = Poll::Pending;
        // SAFETY: `out` has the task's output type and we are its JoinHandle.
        unsafe {
            self.raw.try_read_output(
                &mut out as *mut Poll<Result<T, JoinError>> as *mut (),
                cx.waker(),
            )
        };
        if out.is_ready() {
            coop.made_progress();
        }
        out
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        // SAFETY: called once, with the handle's own reference.
        unsafe { self.raw.drop_join_handle() };
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("id", &self.id())
            .finish()
    }
}

// A panic caught around a join handle leaves the task's state consistent
// (every transition is one atomic step), whatever `T` is, as Tokio's.
impl<T> std::panic::UnwindSafe for JoinHandle<T> {}
impl<T> std::panic::RefUnwindSafe for JoinHandle<T> {}
