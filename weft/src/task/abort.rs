//! `AbortHandle`: cancel a task without owning its output.

use super::id::Id;
use super::join::remote_abort;
use super::raw::RawTask;
use std::fmt;

/// Cancels a task from anywhere. Dropping it does nothing to the task.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let handle = weft::spawn(std::future::pending::<()>());
/// let abort = handle.abort_handle();
/// abort.abort();
/// assert!(handle.await.unwrap_err().is_cancelled());
/// assert!(abort.is_finished());
/// # });
/// ```
pub struct AbortHandle {
    raw: RawTask,
}

// SAFETY: an AbortHandle only touches the atomic state word and, through the
// scheduler, pushes a run-queue entry; both are thread-safe.
unsafe impl Send for AbortHandle {}
// SAFETY: as above.
unsafe impl Sync for AbortHandle {}

impl AbortHandle {
    /// `raw`'s reference count was already incremented for this handle.
    pub(super) fn new(raw: RawTask) -> AbortHandle {
        AbortHandle { raw }
    }

    /// Cancel the task; see [`JoinHandle::abort`](super::JoinHandle::abort).
    pub fn abort(&self) {
        remote_abort(self.raw);
    }

    /// Whether the task has finished.
    pub fn is_finished(&self) -> bool {
        self.raw.state().load().is_complete()
    }

    /// The task's id.
    pub fn id(&self) -> Id {
        self.raw.header().id()
    }
}

impl Clone for AbortHandle {
    fn clone(&self) -> AbortHandle {
        self.raw.ref_inc();
        AbortHandle::new(self.raw)
    }
}

impl Drop for AbortHandle {
    fn drop(&mut self) {
        // SAFETY: the handle owns one reference.
        unsafe { self.raw.drop_reference() };
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("id", &self.id())
            .finish()
    }
}

// As `JoinHandle`'s (Tokio has the same two impls).
impl std::panic::UnwindSafe for AbortHandle {}
impl std::panic::RefUnwindSafe for AbortHandle {}
