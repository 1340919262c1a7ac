//! The tasks waiting on one op that several tasks share (a stream's send
//! in flight: its writer and `writable()` waiters): the op's waker is the
//! whole list.
//!
//! Invariant: **every waiting task hears of a completion**. The op wakes
//! the whole list, and a task joins the list *before* it looks at the op,
//! so a completion between its look and its sleep still wakes it; one of
//! the woken takes the result, the others start the next op or wait for
//! it. (A loom mutex under `--cfg loom`: `loom_ops.rs` models a join
//! against a completion.)

use std::sync::Arc;
use std::task::{Wake, Waker};

#[derive(Default)]
pub(super) struct Waiters(crate::loom::Mutex<Vec<Waker>>);

impl Waiters {
    fn lock(&self) -> crate::loom::MutexGuard<'_, Vec<Waker>> {
        crate::loom::lock(&self.0)
    }

    /// Add `waker` (once) to the tasks woken by the next completion. A
    /// task joins before it looks at the op (module doc).
    pub(super) fn join(&self, waker: &Waker) {
        let mut waiting = self.lock();
        if !waiting.iter().any(|w| w.will_wake(waker)) {
            waiting.push(waker.clone());
        }
    }
}

impl Wake for Waiters {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let waiting = std::mem::take(&mut *self.lock());
        for waker in waiting {
            waker.wake();
        }
    }
}
