//! Readiness of an `AsyncFd` through io_uring poll requests
//! (`IORING_OP_POLL_ADD`), so a worker parked in its ring learns of it
//! without a trip through epoll.
//!
//! Owns: the poll requests in flight for one descriptor (at most one per
//! [`Kind`]: which ring, which op), and the link to the descriptor's
//! [`ScheduledIo`], whose readiness their completions set.
//!
//! How it fits the readiness model: a wait that finds no readiness (its
//! waker already stored in the `ScheduledIo`) [`arm`](UringPoll::arm)s a
//! one-shot poll for what it waits for, unless one is in flight; the
//! poll's completion wakes this object (it is the op's waker), which takes
//! the result, turns the returned events into readiness exactly as mio
//! reads epoll's, and sets it, waking the waiting tasks. Readiness stays
//! until a task clears it (an operation that would block), and the next
//! wait arms the next poll: a poll reports the descriptor's state when it
//! is armed, so no edge can be missed between two polls. Nothing is armed
//! while nobody waits, so readiness is learned by waiting, not ahead of
//! it (epoll's edge also sets readiness nobody asked for).
//!
//! Priority readiness stays with epoll (the descriptor is registered for
//! `EPOLLPRI` when its interest has `PRIORITY`): a `POLLPRI` poll request
//! on a TCP socket is not completed by urgent data arriving (measured on
//! Linux 6.18: the same request armed after the data arrived completes at
//! once, one armed before never does), where epoll reports it.
//!
//! Invariants:
//! - **No completion is left untaken while a task waits.** A slot goes
//!   `Idle` → `Arming` (under the lock) → the request is started (without
//!   the lock: starting may reap and call wakers, this object's among
//!   them) → `Armed` (under the lock), and then the arming side collects
//!   any completion that arrived meanwhile. A completion's wake collects
//!   every `Armed` slot. So a completion is taken by its wake if the slot
//!   was `Armed` by then, by the arming side's collect otherwise.
//! - **A slot is `Idle` again before its readiness is set**, under the
//!   same lock: a task that finds the readiness and then waits again
//!   cannot see the old request still armed and skip arming a new one.
//!   And arming re-checks the readiness under that lock, so a task that
//!   looked just before a completion's collect set it does not leave a
//!   second request in the kernel.
//! - Lock order: this object's lock, then the ring's. Ring wakers (this
//!   object's wake) are never called under a ring's lock (ring.rs), and
//!   nothing that may call them runs under this object's lock.
//! - Requests are abandoned (cancelled in the kernel, submitted at once)
//!   before the descriptor is deregistered, so none outlives the
//!   `AsyncFd`'s claim on it (`loom_poll.rs` models these handshakes).

use super::ops::{interrupted, OpKey};
use crate::loom::{lock, Mutex};
use crate::runtime::io::ready::{Interest, Ready};
use crate::runtime::io::scheduled_io::ScheduledIo;
use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::task::{Wake, Waker};

/// One kind of poll request: what a wait for one part of an `Interest`
/// asks the kernel for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
    /// Errors and hang-ups only (a wait for `Interest::ERROR` alone).
    Error,
}

const KINDS: [Kind; 3] = [Kind::Read, Kind::Write, Kind::Error];

impl Kind {
    fn index(self) -> usize {
        self as usize
    }

    /// The `poll(2)` events requested (errors and hang-ups always come).
    pub(crate) fn events(self) -> u32 {
        (match self {
            Kind::Read => libc::POLLIN | libc::POLLRDHUP,
            Kind::Write => libc::POLLOUT,
            Kind::Error => 0,
        }) as u32
    }

    /// The kinds a wait for `interest` needs, of those `registered` allows
    /// (a wait outside the registered interest waits forever, as with
    /// epoll). Priority is epoll's (module doc).
    fn needed(interest: Interest, registered: Interest) -> impl Iterator<Item = Kind> {
        let parts = [
            (
                interest.is_readable() && registered.is_readable(),
                Kind::Read,
            ),
            (
                interest.is_writable() && registered.is_writable(),
                Kind::Write,
            ),
        ];
        // Every request reports errors and hang-ups: a wait for
        // `Interest::ERROR` needs one of its own only when alone.
        let alone = interest.is_error() && !parts.iter().any(|&(yes, _)| yes);
        parts
            .into_iter()
            .chain([(alone, Kind::Error)])
            .filter_map(|(yes, kind)| yes.then_some(kind))
    }
}

/// The readiness `revents` from a poll request says, read as mio reads
/// the same bits from epoll (they are the same bits on Linux), so both
/// drivers report the same `Ready` for the same state.
pub(crate) fn ready_from_poll(revents: u32) -> Ready {
    let has = |bits: libc::c_short| revents & bits as u32 != 0;
    let mut ready = Ready::EMPTY;
    if has(libc::POLLIN) || has(libc::POLLPRI) {
        ready = ready | Ready::READABLE;
    }
    if has(libc::POLLOUT) {
        ready = ready | Ready::WRITABLE;
    }
    if has(libc::POLLHUP) || (has(libc::POLLIN) && has(libc::POLLRDHUP)) {
        ready = ready | Ready::READ_CLOSED;
    }
    if has(libc::POLLHUP)
        || (has(libc::POLLOUT) && has(libc::POLLERR))
        || revents == libc::POLLERR as u32
    {
        ready = ready | Ready::WRITE_CLOSED;
    }
    if has(libc::POLLERR) {
        ready = ready | Ready::ERROR;
    }
    if has(libc::POLLPRI) {
        ready = ready | Ready::PRIORITY;
    }
    ready
}

/// What the poll requests run on: weft's rings, or a model of one.
pub(crate) trait PollRings: Send + Sync + 'static {
    /// The ring a request started on this thread goes to, and whether
    /// this thread owns it (its entries may wait for the owner's flush).
    fn here(&self) -> (usize, bool);
    /// Start a poll for `events` on `fd` on ring `ring`.
    fn start_poll(
        &self,
        ring: usize,
        fd: RawFd,
        events: u32,
        waker: &Waker,
        submit_now: bool,
    ) -> io::Result<OpKey>;
    /// The request's result if it completed (the op is then gone).
    fn take(&self, ring: usize, key: OpKey) -> Option<i32>;
    /// Give the request up: cancel it in the kernel, now.
    fn abandon(&self, ring: usize, key: OpKey);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Idle,
    /// Someone is starting this kind's request (module doc).
    Arming,
    Armed(usize, OpKey),
}

/// One descriptor's poll requests (module doc).
pub(crate) struct UringPoll<R: PollRings> {
    rings: R,
    fd: RawFd,
    /// What the `AsyncFd` was registered for.
    registered: Interest,
    io: Arc<ScheduledIo>,
    slots: Mutex<[Slot; 3]>,
}

impl<R: PollRings> UringPoll<R> {
    pub(crate) fn new(
        rings: R,
        fd: RawFd,
        registered: Interest,
        io: Arc<ScheduledIo>,
    ) -> Arc<UringPoll<R>> {
        Arc::new(UringPoll {
            rings,
            fd,
            registered,
            io,
            slots: Mutex::new([Slot::Idle; 3]),
        })
    }

    /// A wait for `interest` found no readiness (its waker is stored in
    /// the `ScheduledIo`): make sure a request is in flight for each kind
    /// it needs.
    pub(crate) fn arm(self: &Arc<Self>, interest: Interest) -> io::Result<()> {
        let mut reserved = [false; 3];
        {
            let mut slots = lock(&self.slots);
            // A completion's collect may have set the readiness since the
            // task looked (it did so under this lock, and woke the task):
            // a request now would only be left in the kernel.
            let now = self.io.ready_now(interest);
            if !now.ready.is_empty() || now.is_shutdown {
                return Ok(());
            }
            for kind in Kind::needed(interest, self.registered) {
                if slots[kind.index()] == Slot::Idle {
                    slots[kind.index()] = Slot::Arming;
                    reserved[kind.index()] = true;
                }
            }
        }
        if !reserved.contains(&true) {
            return Ok(());
        }
        let (ring, owned) = self.rings.here();
        let waker = Waker::from(self.clone());
        let mut started = [None; 3];
        let mut failed = None;
        for kind in KINDS {
            if reserved[kind.index()] && failed.is_none() {
                match self
                    .rings
                    .start_poll(ring, self.fd, kind.events(), &waker, !owned)
                {
                    Ok(key) => started[kind.index()] = Some(key),
                    Err(e) => failed = Some(e),
                }
            }
        }
        let mut wakers = Vec::new();
        let rearm = {
            let mut slots = lock(&self.slots);
            for kind in KINDS {
                if reserved[kind.index()] {
                    slots[kind.index()] = match started[kind.index()] {
                        Some(key) => Slot::Armed(ring, key),
                        None => Slot::Idle,
                    };
                }
            }
            // Completions that came before their slot was `Armed` woke
            // this object for nothing: take them now (module doc).
            self.collect(&mut slots, &mut wakers)
        };
        for waker in wakers {
            waker.wake();
        }
        match failed {
            Some(e) => Err(e),
            None if rearm.is_empty() => Ok(()),
            None => self.arm(rearm.interest()),
        }
    }

    /// Take every completed request's result, under the lock: readiness
    /// for the waiting tasks (their wakers go to `wakers`), and the kinds
    /// whose request the kernel interrupted, to be armed again.
    #[must_use]
    fn collect(&self, slots: &mut [Slot; 3], wakers: &mut Vec<Waker>) -> Rearm {
        let mut rearm = Rearm::default();
        for kind in KINDS {
            let Slot::Armed(ring, key) = slots[kind.index()] else {
                continue;
            };
            let Some(result) = self.rings.take(ring, key) else {
                continue;
            };
            slots[kind.index()] = Slot::Idle;
            match u32::try_from(result) {
                Ok(revents) => self.io.set_readiness(ready_from_poll(revents), wakers),
                Err(_) if interrupted(result) => rearm.0[kind.index()] = true,
                // The poll itself failed (the descriptor was closed under
                // the AsyncFd, against its contract): wake every waiter so
                // its own operation reports the error instead of hanging.
                Err(_) => self.io.set_readiness(
                    Ready::READABLE | Ready::WRITABLE | Ready::PRIORITY | Ready::ERROR,
                    wakers,
                ),
            }
        }
        rearm
    }

    /// The descriptor goes away: cancel every request in flight. Runs
    /// before it is deregistered (and then closed or handed back).
    pub(crate) fn abandon(&self) {
        let armed: Vec<(usize, OpKey)> = {
            let mut slots = lock(&self.slots);
            slots
                .iter_mut()
                .filter_map(|slot| match std::mem::replace(slot, Slot::Idle) {
                    Slot::Armed(ring, key) => Some((ring, key)),
                    _ => None,
                })
                .collect()
        };
        for (ring, key) in armed {
            self.rings.abandon(ring, key);
        }
    }

    /// Requests in flight (for the loom models).
    #[cfg(loom)]
    pub(crate) fn armed(&self) -> usize {
        lock(&self.slots)
            .iter()
            .filter(|s| matches!(s, Slot::Armed(..)))
            .count()
    }
}

/// Kinds to arm again (their request was interrupted by the kernel).
#[derive(Default)]
struct Rearm([bool; 3]);

impl Rearm {
    fn is_empty(&self) -> bool {
        !self.0.contains(&true)
    }

    fn interest(&self) -> Interest {
        [
            (Kind::Read, Interest::READABLE),
            (Kind::Write, Interest::WRITABLE),
            (Kind::Error, Interest::ERROR),
        ]
        .into_iter()
        .filter(|(kind, _)| self.0[kind.index()])
        .map(|(_, part)| part)
        .reduce(|a, b| a | b)
        .unwrap_or(Interest::ERROR)
    }
}

impl<R: PollRings> Wake for UringPoll<R> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    /// A request completed: collect it (see the module doc).
    fn wake_by_ref(self: &Arc<Self>) {
        let mut wakers = Vec::new();
        let rearm = self.collect(&mut lock(&self.slots), &mut wakers);
        for waker in wakers {
            waker.wake();
        }
        if !rearm.is_empty() {
            // Nobody else would: the waiting tasks stay parked. A failure
            // to start it wakes them, so their wait reports it.
            if self.arm(rearm.interest()).is_err() {
                let mut wakers = Vec::new();
                self.io.set_readiness(Ready::ERROR, &mut wakers);
                for waker in wakers {
                    waker.wake();
                }
            }
        }
    }
}

/// The real rings, through the driver handle that keeps them alive.
impl PollRings for crate::runtime::driver::Handle {
    fn here(&self) -> (usize, bool) {
        let io = self.io().expect("a ring-polled AsyncFd has an I/O driver");
        io.current_ring(io.rings().expect("and rings"))
    }

    fn start_poll(
        &self,
        ring: usize,
        fd: RawFd,
        events: u32,
        waker: &Waker,
        submit_now: bool,
    ) -> io::Result<OpKey> {
        rings(self)
            .get(ring)
            .start_poll(fd, events, waker, submit_now)
    }

    fn take(&self, ring: usize, key: OpKey) -> Option<i32> {
        rings(self)
            .get(ring)
            .try_take(key)
            .map(|(result, _)| result)
    }

    fn abandon(&self, ring: usize, key: OpKey) {
        rings(self)
            .get(ring)
            .abandon(key, super::ops::Leave::Cancel);
    }
}

fn rings(handle: &crate::runtime::driver::Handle) -> &super::Rings {
    handle
        .io()
        .and_then(|io| io.rings())
        .expect("a ring-polled AsyncFd's driver has rings")
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn poll_events_read_as_mio_reads_epolls() {
        let c = |bits: libc::c_short| bits as u32;
        assert_eq!(ready_from_poll(c(libc::POLLIN)), Ready::READABLE);
        assert_eq!(ready_from_poll(c(libc::POLLOUT)), Ready::WRITABLE);
        assert_eq!(
            ready_from_poll(c(libc::POLLIN | libc::POLLRDHUP)),
            Ready::READABLE | Ready::READ_CLOSED
        );
        // RDHUP without IN is not read-closed (mio's rule).
        assert_eq!(ready_from_poll(c(libc::POLLRDHUP)), Ready::EMPTY);
        assert_eq!(
            ready_from_poll(c(libc::POLLHUP)),
            Ready::READ_CLOSED | Ready::WRITE_CLOSED
        );
        assert_eq!(
            ready_from_poll(c(libc::POLLERR)),
            Ready::WRITE_CLOSED | Ready::ERROR
        );
        assert_eq!(
            ready_from_poll(c(libc::POLLOUT | libc::POLLERR)),
            Ready::WRITABLE | Ready::WRITE_CLOSED | Ready::ERROR
        );
        assert_eq!(
            ready_from_poll(c(libc::POLLPRI)),
            Ready::READABLE | Ready::PRIORITY
        );
    }

    #[test]
    fn a_wait_arms_only_the_kinds_it_needs_and_the_registration_allows() {
        let kinds = |i, r| Kind::needed(i, r).collect::<Vec<_>>();
        let rw = Interest::READABLE | Interest::WRITABLE;
        assert_eq!(kinds(Interest::READABLE, rw), [Kind::Read]);
        assert_eq!(kinds(rw, rw), [Kind::Read, Kind::Write]);
        assert_eq!(kinds(Interest::WRITABLE, Interest::READABLE), []);
        // ERROR alone needs its own request; with a read it rides along.
        assert_eq!(kinds(Interest::ERROR, Interest::READABLE), [Kind::Error]);
        assert_eq!(
            kinds(Interest::ERROR | Interest::READABLE, Interest::READABLE),
            [Kind::Read]
        );
        // Priority is left to epoll.
        assert_eq!(
            kinds(Interest::PRIORITY, Interest::PRIORITY | Interest::READABLE),
            []
        );
    }
}
