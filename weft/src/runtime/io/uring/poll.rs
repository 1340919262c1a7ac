//! Readiness of an `AsyncFd` registered for the rings
//! (`AsyncFd::with_interest_on_rings`: weft's Ruby selector; a plain
//! `AsyncFd` waits on epoll) through io_uring poll requests
//! (`IORING_OP_POLL_ADD`), so a worker parked in its ring learns of it
//! without a trip through epoll.
//!
//! Owns: the poll requests in flight for one descriptor (at most one per
//! [`Kind`]: which ring, which op), which kinds moved to epoll, and the
//! link to the descriptor's [`ScheduledIo`], whose readiness their
//! completions set.
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
//! What stays with epoll, where the descriptor is also registered (quietly,
//! `Handle::register_quiet`):
//! - **Errors and hang-ups**, which epoll reports on any registration: a
//!   wait for `Interest::ERROR` alone arms nothing.
//! - **Priority** (the descriptor is registered for `EPOLLPRI` when its
//!   interest has `PRIORITY`): a `POLLPRI` poll request on a TCP socket is
//!   not completed by urgent data arriving (measured on Linux 6.18: the
//!   same request armed after the data arrived completes at once, one
//!   armed before never does), where epoll reports it.
//! - **Writes on a half-closed socket.** The kernel adds `POLLRDHUP` to
//!   every poll request, so once the peer has shut its sending side down a
//!   write request completes at once with `POLLRDHUP` alone whenever ours
//!   cannot write: armed again, it would do the same forever, and a writer
//!   waiting for room would never learn of it. So such a completion sets
//!   `READ_CLOSED` (which it is) and moves the descriptor's write
//!   readiness to epoll for good (`EPOLLOUT`, edge-triggered).
//! - **Reads after an error alone.** A read request on a socket holding a
//!   pending error and nothing to read (an ICMP refusal on a connected UDP
//!   socket; datagram sockets wait on epoll now, registration.rs
//!   `waits_on_epoll`, so this stays for any other socket that gets one)
//!   completes with `POLLERR` alone: that readiness (`ERROR`,
//!   `WRITE_CLOSED`, as mio reads it) wakes no plain read wait (only
//!   weft-ruby's `_or_error` ones), and armed again
//!   the request would complete the same way until someone takes the
//!   error. So such a completion sets it and moves the descriptor's read
//!   readiness to epoll for good (`EPOLLIN`, edge-triggered), where data
//!   arriving later is reported as on the epoll driver.
//!
//! Invariants:
//! - **No completion is left untaken while a task waits.** A slot goes
//!   `Idle` → `Arming` (under the lock) → the request is started (without
//!   the lock: starting may reap and call wakers, this object's among
//!   them) → `Armed` (under the lock). A completion's wake collects every
//!   `Armed` slot and marks every `Arming` one `missed`; the arming side,
//!   storing `Armed`, collects if one of its slots was missed. So a
//!   completion is taken by its wake if the slot was `Armed` by then, by
//!   the arming side's collect otherwise, and an arm that nothing raced
//!   does not look at the ring again.
//! - **A slot is `Idle` again before its readiness is set**, under the
//!   same lock: a task that finds the readiness and then waits again
//!   cannot see the old request still armed and skip arming a new one.
//!   And arming re-checks the readiness under that lock, so a task that
//!   looked just before a completion's collect set it does not leave a
//!   second request in the kernel.
//! - Lock order: this object's lock, then the ring's. Ring wakers (this
//!   object's wake) are never called under a ring's lock (ring/mod.rs), and
//!   nothing that may call them runs under this object's lock.
//! - **No request outlives the `AsyncFd`'s claim on the descriptor.**
//!   [`abandon`](UringPoll::abandon) (before the descriptor is
//!   deregistered) cancels the armed requests, submitted at once, and marks
//!   the object closed under the lock; an arm that started a request
//!   meanwhile finds the mark when it stores it and cancels it itself, and
//!   a request the kernel interrupted is not armed again (`loom_poll.rs`
//!   models these handshakes).

use super::ops::{interrupted, OpKey};
use crate::loom::{lock, Mutex};
use crate::runtime::io::ready::{Interest, Ready};
use crate::runtime::io::scheduled_io::ScheduledIo;
use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::task::{Wake, Waker};

/// One kind of poll request: what a wait for one part of an `Interest`
/// asks the kernel for. Errors and hang-ups need none: epoll reports them
/// on the quiet registration (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
}

const KINDS: [Kind; 2] = [Kind::Read, Kind::Write];

impl Kind {
    fn index(self) -> usize {
        self as usize
    }

    /// The `poll(2)` events requested (errors and hang-ups always come,
    /// and so does `POLLRDHUP`: the kernel adds all three to every poll
    /// request).
    pub(crate) fn events(self) -> u32 {
        (match self {
            Kind::Read => libc::POLLIN | libc::POLLRDHUP,
            Kind::Write => libc::POLLOUT,
        }) as u32
    }

    /// The kinds a wait for `interest` needs, of those `registered` allows
    /// (a wait outside the registered interest waits forever, as with
    /// epoll; an interest with `ERROR` allows reads, as the epoll
    /// registration asks for them: `Interest::to_mio`). Priority, errors
    /// and hang-ups are epoll's (module doc).
    fn needed(interest: Interest, registered: Interest) -> impl Iterator<Item = Kind> {
        [
            (
                interest.is_readable() && (registered.is_readable() || registered.is_error()),
                Kind::Read,
            ),
            (
                interest.is_writable() && registered.is_writable(),
                Kind::Write,
            ),
        ]
        .into_iter()
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
        ready |= Ready::READABLE;
    }
    if has(libc::POLLOUT) {
        ready |= Ready::WRITABLE;
    }
    if has(libc::POLLHUP) || (has(libc::POLLIN) && has(libc::POLLRDHUP)) {
        ready |= Ready::READ_CLOSED;
    }
    if has(libc::POLLHUP)
        || (has(libc::POLLOUT) && has(libc::POLLERR))
        || revents == libc::POLLERR as u32
    {
        ready |= Ready::WRITE_CLOSED;
    }
    if has(libc::POLLERR) {
        ready |= Ready::ERROR;
    }
    if has(libc::POLLPRI) {
        ready |= Ready::PRIORITY;
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
    /// From now on have epoll report `interest` for `fd` (the
    /// directions moved there, and `PRIORITY` if registered), on its
    /// registration.
    fn to_epoll(&self, fd: RawFd, interest: Interest);
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
    polls: Mutex<Polls>,
}

/// The requests' state, under one lock.
struct Polls {
    slots: [Slot; 2],
    /// A completion's wake found this slot `Arming`: its result may be
    /// the arming side's to take (module doc).
    missed: [bool; 2],
    /// The descriptor went away ([`UringPoll::abandon`]): nothing is
    /// armed again.
    closed: bool,
    /// This kind's readiness comes from epoll (module doc, "half-closed"
    /// and "error alone").
    on_epoll: [bool; 2],
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
            polls: Mutex::new(Polls {
                slots: [Slot::Idle; 2],
                missed: [false; 2],
                closed: false,
                on_epoll: [false; 2],
            }),
        })
    }

    /// A wait for `interest` found no readiness (its waker is stored in
    /// the `ScheduledIo`): make sure a request is in flight for each kind
    /// it needs.
    pub(crate) fn arm(self: &Arc<Self>, interest: Interest) -> io::Result<()> {
        self.arm_with(interest, false)
    }

    /// [`arm`](Self::arm); `submit_now` even on this thread's own ring
    /// (a re-arm after the kernel interrupted a poll, from `finish`, which
    /// a completion's waker or a task's own collect runs: that thread may
    /// be a worker about to park without another batch point).
    fn arm_with(self: &Arc<Self>, interest: Interest, submit_now: bool) -> io::Result<()> {
        let mut reserved = [false; 2];
        {
            let mut polls = lock(&self.polls);
            // A completion's collect may have set the readiness since the
            // task looked (it did so under this lock, and woke the task):
            // a request now would only be left in the kernel.
            let now = self.io.ready_now(interest);
            if polls.closed || !now.ready.is_empty() || now.is_shutdown {
                return Ok(());
            }
            for kind in Kind::needed(interest, self.registered) {
                if polls.on_epoll[kind.index()] {
                    continue;
                }
                if polls.slots[kind.index()] == Slot::Idle {
                    polls.slots[kind.index()] = Slot::Arming;
                    reserved[kind.index()] = true;
                }
            }
        }
        if !reserved.contains(&true) {
            return Ok(());
        }
        let (ring, owned) = self.rings.here();
        let waker = Waker::from(self.clone());
        let mut started = [None; 2];
        let mut failed = None;
        for kind in KINDS {
            if reserved[kind.index()] && failed.is_none() {
                match self.rings.start_poll(
                    ring,
                    self.fd,
                    kind.events(),
                    &waker,
                    !owned || submit_now,
                ) {
                    Ok(key) => started[kind.index()] = Some(key),
                    Err(e) => failed = Some(e),
                }
            }
        }
        let mut wakers = Vec::new();
        let mut orphans = Vec::new();
        let outcome = {
            let mut polls = lock(&self.polls);
            let closed = polls.closed;
            for kind in KINDS {
                if reserved[kind.index()] {
                    polls.slots[kind.index()] = match started[kind.index()] {
                        // Abandoned meanwhile: this request is nobody's.
                        Some(key) if closed => {
                            orphans.push(key);
                            Slot::Idle
                        }
                        Some(key) => Slot::Armed(ring, key),
                        None => Slot::Idle,
                    };
                }
            }
            if failed.is_some() {
                // Other waiters may have seen `Arming` and left it to this
                // call: wake them all (whatever they wait for: `ERROR` is
                // in no plain read or write wait's mask), so each wait arms
                // again and reports the failure of its own operation
                // rather than hang.
                self.io.set_readiness(Ready::ERROR, &mut wakers);
                self.io.take_all_wakers(&mut wakers);
            }
            // A completion that came before its slot was `Armed` woke this
            // object for nothing: take it now (module doc). Only then: the
            // look costs a lock of the ring per slot.
            // Every reserved slot's mark is cleared (no short cut), so none
            // is left to cost a later arm a needless look.
            let missed = KINDS.iter().fold(false, |any, k| {
                let i = k.index();
                (reserved[i] && std::mem::take(&mut polls.missed[i])) || any
            });
            if missed {
                self.collect(&mut polls, &mut wakers)
            } else {
                Collected::default()
            }
        };
        for key in orphans {
            self.rings.abandon(ring, key);
        }
        self.finish(outcome, wakers);
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Take every completed request's result, under the lock: readiness
    /// for the waiting tasks (their wakers go to `wakers`), and what must
    /// happen after the lock is released.
    #[must_use]
    fn collect(&self, polls: &mut Polls, wakers: &mut Vec<Waker>) -> Collected {
        let mut out = Collected::default();
        for kind in KINDS {
            let Slot::Armed(ring, key) = polls.slots[kind.index()] else {
                continue;
            };
            let Some(result) = self.rings.take(ring, key) else {
                continue;
            };
            polls.slots[kind.index()] = Slot::Idle;
            match u32::try_from(result) {
                Ok(revents) if kind == Kind::Write && half_closed_only(revents) => {
                    // The peer shut its side down and ours cannot write
                    // yet: every write request would complete at once the
                    // same way (module doc, "half-closed").
                    self.io.set_readiness(Ready::READ_CLOSED, wakers);
                    polls.on_epoll[kind.index()] = true;
                    out.to_epoll = true;
                }
                Ok(revents) if kind == Kind::Read && error_alone(revents) => {
                    // A pending error and nothing to read: every read
                    // request would complete at once the same way until
                    // the error is taken (module doc, "error alone").
                    self.io.set_readiness(ready_from_poll(revents), wakers);
                    polls.on_epoll[kind.index()] = true;
                    out.to_epoll = true;
                }
                Ok(revents) => self.io.set_readiness(ready_from_poll(revents), wakers),
                Err(_) if interrupted(result) && !polls.closed => {
                    out.rearm = Some(match kind {
                        Kind::Read => Interest::READABLE,
                        Kind::Write => Interest::WRITABLE,
                    });
                }
                Err(_) if interrupted(result) => {}
                // The poll itself failed (the descriptor was closed under
                // the AsyncFd, against its contract): wake every waiter so
                // its own operation reports the error instead of hanging.
                Err(_) => self.io.set_readiness(
                    Ready::READABLE | Ready::WRITABLE | Ready::PRIORITY | Ready::ERROR,
                    wakers,
                ),
            }
        }
        out
    }

    /// After the lock: wake the tasks, hand the moved directions to
    /// epoll, re-arm what
    /// the kernel interrupted (nobody else would: its waiters stay
    /// parked; a failure to start it wakes them, so their wait reports
    /// it).
    fn finish(self: &Arc<Self>, collected: Collected, wakers: Vec<Waker>) {
        for waker in wakers {
            waker.wake();
        }
        if collected.to_epoll {
            // Under the lock, and not once abandoned: the descriptor's
            // number may name another file by then (a registration given
            // up with `AsyncFd::into_inner_stale`), whose epoll entry the
            // change (by number) would take over with this dead token.
            // The interest is read under the lock too: the other
            // direction may have moved since the collect (its completion
            // reaped on another ring's thread), and a change made from
            // the collect's view would drop it.
            let polls = lock(&self.polls);
            if !polls.closed {
                self.rings
                    .to_epoll(self.fd, polls.epoll_interest(self.registered));
            }
        }
        if let Some(interest) = collected.rearm {
            // A failed start already set ERROR and woke the waiters.
            let _ = self.arm_with(interest, true);
        }
    }

    /// The descriptor goes away: cancel every request in flight, and arm
    /// none again. Runs before it is deregistered (and then closed or
    /// handed back).
    pub(crate) fn abandon(&self) {
        let armed: Vec<(usize, OpKey)> = {
            let mut polls = lock(&self.polls);
            polls.closed = true;
            polls
                .slots
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
        lock(&self.polls)
            .slots
            .iter()
            .filter(|s| matches!(s, Slot::Armed(..)))
            .count()
    }
}

/// What [`UringPoll::collect`] leaves for after the lock.
#[derive(Default)]
struct Collected {
    /// A request the kernel interrupted, to be armed again (one is
    /// enough: the next wait arms the other kind if it needs it).
    rearm: Option<Interest>,
    /// A direction's readiness moved to epoll: change its registration.
    to_epoll: bool,
}

impl Polls {
    /// What epoll must report for the descriptor: the directions moved
    /// there, and `PRIORITY` if it was registered for it (which epoll
    /// always reports: module doc).
    fn epoll_interest(&self, registered: Interest) -> Interest {
        let mut interest = if registered.is_priority() {
            Some(Interest::PRIORITY)
        } else {
            None
        };
        for (kind, wanted) in [
            (Kind::Read, Interest::READABLE),
            (Kind::Write, Interest::WRITABLE),
        ] {
            if self.on_epoll[kind.index()] {
                interest = Some(interest.map_or(wanted, |i| i | wanted));
            }
        }
        interest.expect("a direction moved to epoll")
    }
}

/// Whether a read request's result is an error with nothing to read: the
/// socket holds a pending error (an ICMP refusal on a connected UDP
/// socket), and no data or hang-up.
fn error_alone(revents: u32) -> bool {
    let bits = |b: libc::c_short| b as u32;
    revents & bits(libc::POLLERR) != 0
        && revents & bits(libc::POLLIN | libc::POLLPRI | libc::POLLHUP) == 0
}

/// Whether a write request's result says only that the peer hung up its
/// sending side (`POLLRDHUP`, which the kernel adds to every request),
/// with nothing about writing.
fn half_closed_only(revents: u32) -> bool {
    let bits = |b: libc::c_short| b as u32;
    revents & bits(libc::POLLRDHUP) != 0
        && revents & bits(libc::POLLOUT | libc::POLLERR | libc::POLLHUP) == 0
}

impl<R: PollRings> Wake for UringPoll<R> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    /// A request completed: collect it (see the module doc).
    fn wake_by_ref(self: &Arc<Self>) {
        let mut wakers = Vec::new();
        let collected = {
            let mut polls = lock(&self.polls);
            for kind in KINDS {
                if polls.slots[kind.index()] == Slot::Arming {
                    polls.missed[kind.index()] = true;
                }
            }
            self.collect(&mut polls, &mut wakers)
        };
        self.finish(collected, wakers);
    }
}

/// The real rings, through the driver handle that keeps them alive, and
/// the descriptor's registration in the driver (for
/// [`PollRings::to_epoll`]).
pub(crate) struct DriverRings {
    pub(crate) driver: crate::runtime::driver::Handle,
    pub(crate) key: crate::runtime::io::Key,
}

impl DriverRings {
    fn io(&self) -> &crate::runtime::io::Handle {
        self.driver
            .io()
            .expect("a ring-polled AsyncFd has an I/O driver")
    }

    fn rings(&self) -> &super::Rings {
        self.io()
            .rings()
            .expect("a ring-polled AsyncFd's driver has rings")
    }

    fn ring(&self, index: usize) -> &super::Ring {
        self.rings().get(index)
    }
}

impl PollRings for DriverRings {
    fn here(&self) -> (usize, bool) {
        self.io().current_ring(self.rings())
    }

    fn start_poll(
        &self,
        ring: usize,
        fd: RawFd,
        events: u32,
        waker: &Waker,
        submit_now: bool,
    ) -> io::Result<OpKey> {
        self.ring(ring).start_poll(fd, events, waker, submit_now)
    }

    fn take(&self, ring: usize, key: OpKey) -> Option<i32> {
        self.ring(ring).try_take(key).map(|(result, _)| result)
    }

    fn abandon(&self, ring: usize, key: OpKey) {
        self.ring(ring).abandon(key, super::ops::Leave::Cancel);
    }

    fn to_epoll(&self, fd: RawFd, interest: Interest) {
        // Fails only if the descriptor is gone, which the waiting
        // operation then reports.
        let _ = self.io().reregister_fd(fd, self.key, interest);
    }
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
        // RDHUP without IN is not read-closed (mio's rule); a write
        // request that brings only it is handled apart (`collect`).
        assert_eq!(ready_from_poll(c(libc::POLLRDHUP)), Ready::EMPTY);
        assert!(half_closed_only(c(libc::POLLRDHUP)));
        assert!(!half_closed_only(c(libc::POLLRDHUP | libc::POLLOUT)));
        assert!(!half_closed_only(c(libc::POLLOUT)));
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
        // Registered for ERROR: reads are asked for too, as on epoll.
        assert_eq!(kinds(Interest::READABLE, Interest::ERROR), [Kind::Read]);
        assert_eq!(kinds(Interest::WRITABLE, Interest::ERROR), []);
        // Errors, hang-ups and priority are epoll's.
        assert_eq!(kinds(Interest::ERROR, Interest::READABLE), []);
        assert_eq!(
            kinds(Interest::ERROR | Interest::READABLE, Interest::READABLE),
            [Kind::Read]
        );
        assert_eq!(
            kinds(Interest::PRIORITY, Interest::PRIORITY | Interest::READABLE),
            []
        );
    }
}
