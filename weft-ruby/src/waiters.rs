//! `Weft::Selector`'s bookkeeping, in plain Rust (no Ruby calls, no
//! syscalls): the loop fiber, the ready queue, the fibers waiting on each
//! fd, the waiters found ready at once, and (in scheduler mode) the first
//! exception a fiber ended with. [`crate::selector`] holds one in a
//! `RefCell` and states the invariants of its use; the ones kept here:
//!
//! - Ids are handed out in increasing order, to queue entries and waiters
//!   alike, so "waited before the poll" is "id up to the poll's horizon",
//!   and `ready_waiters` is in id order.
//! - A waiter is on its fd's list until it is taken ([`Inner::take_ready`],
//!   [`Inner::take_waiter`]), at most once; an fd's entry (and so the IO
//!   its registration is trusted for) goes with its last waiter.
//! - Every `Obj` held here is reported by the selector's mark function.

use crate::fd_map::FdMap;
use crate::state::Obj;
use std::collections::VecDeque;
use std::os::fd::RawFd;

#[derive(Default)]
pub(crate) struct Inner {
    pub(crate) loop_fiber: Option<Obj>,
    /// Fibers to resume, each with an id; a suspension's own entry is
    /// nulled (`fiber: None`) when it comes back another way.
    pub(crate) ready: VecDeque<Queued>,
    pub(crate) next_id: u64,
    pub(crate) fds: FdMap<FdWaiters>,
    /// The waiters on all fds (kept so the loop's "anything left?" costs
    /// no walk of `fds`).
    fd_waiters: usize,
    /// Waiters whose fd was ready when they started waiting (fd, waiter
    /// id, events): the next `select` resumes them, as io-event's
    /// selectors do (module doc). In id order, as ids are handed out.
    pub(crate) ready_waiters: VecDeque<(RawFd, u64, u8)>,
    /// In scheduler mode: the first exception a fiber ended with.
    pub(crate) failed: Option<Obj>,
}

pub(crate) struct Queued {
    pub(crate) id: u64,
    pub(crate) fiber: Option<Obj>,
}

#[derive(Default)]
pub(crate) struct FdWaiters {
    /// The IO the waiters wait on: a wait by the same IO while waiters are
    /// here trusts the fd's registration (`Poller::watch`'s `known`).
    pub(crate) io: Option<Obj>,
    pub(crate) waiters: Vec<IoWaiter>,
}

pub(crate) struct IoWaiter {
    pub(crate) id: u64,
    pub(crate) fiber: Obj,
    pub(crate) events: u8,
}

impl Inner {
    pub(crate) fn queue(&mut self, fiber: Option<Obj>) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.ready.push_back(Queued { id, fiber });
        id
    }

    pub(crate) fn null(&mut self, id: u64) {
        if let Some(q) = self.ready.iter_mut().find(|q| q.id == id) {
            q.fiber = None;
        }
    }

    /// Record a waiter; `true` if the fd's other waiters wait on this IO.
    pub(crate) fn add_waiter(&mut self, fd: RawFd, io: Obj, fiber: Obj, events: u8) -> (u64, bool) {
        self.next_id += 1;
        let id = self.next_id;
        let entry = self.fds.entry(fd).or_default();
        let known = entry.io == Some(io) && !entry.waiters.is_empty();
        entry.io = Some(io);
        entry.waiters.push(IoWaiter { id, fiber, events });
        self.fd_waiters += 1;
        (id, known)
    }

    pub(crate) fn remove_waiter(&mut self, fd: RawFd, id: u64) {
        self.take_waiter(fd, id);
    }

    /// Fibers suspended here: waiting on an fd, or queued to resume.
    pub(crate) fn suspended(&self) -> usize {
        // The ready queue is short (the scheduler does not use it at all).
        self.fd_waiters + self.ready.iter().filter(|q| q.fiber.is_some()).count()
    }

    /// Take the waiter `id` off `fd`'s list, if it still waits.
    pub(crate) fn take_waiter(&mut self, fd: RawFd, id: u64) -> Option<Obj> {
        let entry = self.fds.get_mut(&fd)?;
        let at = entry.waiters.iter().position(|w| w.id == id)?;
        let waiter = entry.waiters.remove(at);
        self.fd_waiters -= 1;
        if entry.waiters.is_empty() {
            self.fds.remove(&fd);
        }
        Some(waiter.fiber)
    }

    /// Some fiber waits on `fd` (an fd's entry goes with its last waiter).
    pub(crate) fn has_waiters(&self, fd: RawFd) -> bool {
        self.fds.contains_key(&fd)
    }

    pub(crate) fn wanted(&self, fd: RawFd) -> u8 {
        self.fds
            .get(&fd)
            .map_or(0, |e| e.waiters.iter().fold(0, |a, w| a | w.events))
    }

    /// Take off `fd`'s list the waiters (up to id `horizon`) that `ready`
    /// satisfies.
    pub(crate) fn take_ready(&mut self, fd: RawFd, ready: u8, horizon: u64) -> Vec<(Obj, u8)> {
        let Some(entry) = self.fds.get_mut(&fd) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        entry.waiters.retain(|w| {
            let got = if w.id <= horizon { w.events & ready } else { 0 };
            if got != 0 {
                out.push((w.fiber, got));
            }
            got == 0
        });
        self.fd_waiters -= out.len();
        if entry.waiters.is_empty() {
            self.fds.remove(&fd);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{READABLE, WRITABLE};

    #[test]
    fn waiters_on_one_io_trust_its_registration_until_the_last_leaves() {
        let mut inner = Inner::default();
        let (a, known) = inner.add_waiter(3, 7, 100, READABLE);
        assert!(!known, "the first waiter has the poller verify the fd");
        let (b, known) = inner.add_waiter(3, 7, 101, WRITABLE);
        assert!(
            known,
            "same IO, a waiter still there: the registration is good"
        );
        assert_eq!(inner.wanted(3), READABLE | WRITABLE);
        assert_eq!(inner.suspended(), 2);
        inner.remove_waiter(3, a);
        inner.remove_waiter(3, b);
        assert_eq!(inner.wanted(3), 0);
        assert_eq!(inner.suspended(), 0);
        // The fd number may have been closed and reused since.
        let (_, known) = inner.add_waiter(3, 7, 102, READABLE);
        assert!(!known);
    }

    #[test]
    fn a_new_io_on_a_reused_fd_number_is_verified() {
        let mut inner = Inner::default();
        inner.add_waiter(3, 7, 100, READABLE);
        let (_, known) = inner.add_waiter(3, 8, 101, READABLE);
        assert!(!known);
    }

    #[test]
    fn readiness_takes_only_the_waiters_it_satisfies_up_to_the_horizon() {
        let mut inner = Inner::default();
        let (r, _) = inner.add_waiter(3, 7, 100, READABLE);
        inner.add_waiter(3, 7, 101, WRITABLE);
        let horizon = inner.next_id;
        // Waited after the poll: not this turn's.
        inner.add_waiter(3, 7, 102, READABLE);
        let taken = inner.take_ready(3, READABLE, horizon);
        assert_eq!(taken, vec![(100, READABLE)]);
        assert_eq!(inner.take_waiter(3, r), None, "taken once");
        assert_eq!(inner.suspended(), 2);
        assert_eq!(inner.take_ready(3, READABLE | WRITABLE, u64::MAX).len(), 2);
        assert!(inner.fds.is_empty());
    }

    #[test]
    fn a_nulled_queue_entry_is_not_counted() {
        let mut inner = Inner::default();
        let id = inner.queue(Some(100));
        inner.queue(Some(101));
        inner.null(id);
        assert_eq!(inner.suspended(), 1);
    }
}
