//! Deferred wake-ups: where `yield_now` parks its waker.
//!
//! Owns: the list of wakers that yielded on one scheduler thread (a
//! current_thread core or a multi_thread worker's core). A task that yields
//! asks to run again only after everything else that is ready, *including*
//! what the I/O and timer drivers have to deliver. Waking it at once would
//! queue it behind the local run queue but ahead of events the drivers have
//! not collected yet, so a task looping on `yield_now` would run about
//! `event_interval` times before an already-arrived socket event reached
//! anyone (and, on current_thread, before `block_on`'s future was polled
//! again). Tokio defers yields the same way.
//!
//! Invariant: the list is woken only after the owning scheduler has polled
//! its drivers (without blocking) since the wakers were pushed: at the
//! scheduler's periodic driver poll, or when it runs out of other work,
//! instead of sleeping. A scheduler never sleeps while its list is
//! non-empty. Wakers are woken outside every borrow of the core, since a
//! wake schedules into that same core.

use std::task::Waker;

#[derive(Default)]
pub(crate) struct Defer {
    wakers: Vec<Waker>,
}

impl Defer {
    pub(crate) fn push(&mut self, waker: &Waker) {
        // A task that yields twice before it is woken needs one wake-up.
        if self.wakers.last().is_some_and(|last| last.will_wake(waker)) {
            return;
        }
        self.wakers.push(waker.clone());
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.wakers.is_empty()
    }

    /// The wakers to wake, leaving the list empty. Hand the list back with
    /// [`Defer::recycle`] after waking, to keep its allocation.
    #[must_use = "the taken wakers must be woken"]
    pub(crate) fn take(&mut self) -> Vec<Waker> {
        std::mem::take(&mut self.wakers)
    }

    /// Return a list emptied by waking, unless new wakers arrived meanwhile.
    pub(crate) fn recycle(&mut self, mut emptied: Vec<Waker>) {
        emptied.clear();
        if self.wakers.is_empty() {
            self.wakers = emptied;
        }
    }
}

/// Wake each taken waker (outside any borrow of the core they came from).
pub(crate) fn wake_all(wakers: &mut Vec<Waker>) {
    for waker in wakers.drain(..) {
        waker.wake();
    }
}
