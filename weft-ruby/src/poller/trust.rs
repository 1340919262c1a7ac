//! When a wait may use an fd's registration without asking the kernel
//! what the fd names, and the audit that makes a wrong guess late instead
//! of fatal.
//!
//! A wait that is not `known` (no other fiber waits on the same IO) must
//! make sure its fd number still names the socket the registration was
//! made for: the number may have been closed and reused, and closing the
//! old file took it out of the kernel's interest list. That check (an
//! `epoll_ctl` that epoll refuses and an `fstat`: `registration.rs`) per
//! wait was 5% of the server's CPU per keep-alive request at 10
//! connections (perf, BENCHMARKS.md, when it was the `fstat` alone). A
//! keep-alive connection's waits are all by one IO object, so this module
//! lets that object's waits skip it. Trust needs the registration's
//! socket identity (`Named` in `registration.rs`), for the audit.
//!
//! Owns: [`Verified`] (per registration: which IO checked it last, and
//! whether a wait trusted it since) and [`Audit`] (the poller's list of
//! registrations trusted since their last check, and when it next looks).
//!
//! Invariants:
//! - A wait trusts a socket's registration unchecked only if it is a wait
//!   by the IO object whose wait checked (or made) it last: the same
//!   address and the same object id. An object id is never reused, so a
//!   new IO at a freed one's address is told apart (a closed connection's
//!   IO collected and the next accepted one allocated in its slot, with
//!   the same fd number, is the common case). The id is recorded only at
//!   the second check by the same address: an IO waited on once (a
//!   connection per request) gets none, which would cost a table entry,
//!   unless its first wait finds a registration whose IO had one at the
//!   same address, whose id must then be compared.
//! - The same IO object's fd can come to name another file with no new
//!   IO: `IO#reopen`, or C code that closes and reuses the number under a
//!   wait-only `IO.for_fd(fd, autoclose: false)` (a database client that
//!   reconnects). A wait trusting that registration would never be woken.
//!   So a registration that a wait trusted, with no check since and no
//!   bytes moved on its fd by a hook while no fiber waited on it
//!   ([`Poller::note_moved`]: the waits ended well; bytes a writer moves
//!   while a reader waits say nothing about the reader), is checked by
//!   the first audit at least [`AUDIT_EVERY`] after that first trusting
//!   wait if a fiber still waits on the fd, and
//!   a stale one is registered afresh and its waiters told what the new
//!   registration finds. So a wait stranded by a swap made before the
//!   audit's check ends 1–2 × [`AUDIT_EVERY`] late instead of never (a
//!   swap during a wait already checked goes unseen, as it did before
//!   trust). A busy connection moves bytes between its waits: it is not
//!   checked. If the old file is still open elsewhere, its events keep
//!   waking the fd's waiters until the audit, who then find nothing to
//!   read: no progress, so the audit still comes.
//! - Audits run in [`Poller::wait`], which while any registration awaits
//!   one blocks no longer than until the next is due.

use super::registration::Checked;
use super::{Poller, Watch};
use crate::fd_map::FdSet;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// How often audits run while a registration awaits one (module
/// invariants): the most a wait on a swapped fd can be late by, twice over.
pub const AUDIT_EVERY: Duration = Duration::from_millis(50);

/// The Ruby IO a wait is by, as far as trust needs it.
#[derive(Clone, Copy)]
pub struct WaitingIo<'a> {
    /// The IO object's address.
    pub addr: u64,
    /// Its object id (Ruby's `rb_obj_id`, which gives it one if it has
    /// none yet).
    pub object_id: &'a dyn Fn() -> u64,
}

/// A registration's record of who checked it.
#[derive(Default)]
pub(super) struct Verified {
    /// Address of the IO whose wait checked or made it last; 0: none.
    by: u64,
    /// That IO's object id, once it has checked it twice.
    id: Option<u64>,
    /// [`Audit::audits_run`] when the first wait that trusted it since its
    /// last check or progress began.
    trusted_since_audit: Option<u64>,
}

impl Verified {
    /// May a wait by `io` use the registration unchecked?
    pub(super) fn trusts(&self, io: Option<WaitingIo<'_>>) -> bool {
        io.is_some_and(|io| self.by == io.addr && self.id.is_some_and(|id| id == (io.object_id)()))
    }

    /// Bytes moved on the fd: if a wait trusts the registration and no
    /// fiber waits on the fd now (`nobody_waits`, asked only then), the
    /// trusting waits ended well. Bytes a writer moves while a reader
    /// waits say nothing about the reader.
    pub(super) fn progressed(&mut self, nobody_waits: impl FnOnce() -> bool) {
        if self.trusted_since_audit.is_some() && nobody_waits() {
            self.trusted_since_audit = None;
        }
    }

    /// A wait by `io` (`None`: by nobody in particular) found the fd still
    /// names the registered socket, or registered it.
    pub(super) fn checked_by(&mut self, io: Option<WaitingIo<'_>>) {
        self.trusted_since_audit = None;
        match io {
            // The second check by this address: from now on its id tells
            // whether a later wait is by the same object.
            Some(io) if io.addr == self.by => self.id = Some((io.object_id)()),
            Some(io) => {
                self.by = io.addr;
                self.id = None;
            }
            None => {
                self.by = 0;
                self.id = None;
            }
        }
    }
}

/// The registrations trusted since their last check, and when the next
/// audit is due.
#[derive(Default)]
pub(super) struct Audit {
    /// Audits run so far.
    audits_run: u64,
    /// When the next one is due; set while `listed` is not empty.
    next_at: Option<Instant>,
    /// Fds whose registration a wait trusted since the audit last looked
    /// at them (a set: a connection's every request, or the registration
    /// of the next connection on the same number, lists it once).
    listed: FdSet,
}

impl Audit {
    /// The fds listed (for tests).
    #[cfg(test)]
    pub(super) fn listed(&self) -> Vec<RawFd> {
        self.listed.iter().copied().collect()
    }

    /// A wait trusted `fd`'s registration (`verified` is its record): an
    /// audit is to look at it if no check or progress comes first.
    pub(super) fn note_trusted(&mut self, fd: RawFd, verified: &mut Verified) {
        if verified.trusted_since_audit.is_none() {
            verified.trusted_since_audit = Some(self.audits_run);
            self.listed.insert(fd);
        }
    }

    /// When the next audit is due, with fds listed: set at the first ask.
    fn due_at(&mut self, now: Instant) -> Instant {
        *self.next_at.get_or_insert(now + AUDIT_EVERY)
    }
}

impl Poller {
    /// How long [`Poller::wait`] may block, given `timeout`: no longer than
    /// until the next audit while one is to come.
    pub(super) fn audit_timeout(&mut self, timeout: Option<Duration>) -> Option<Duration> {
        if self.audit.listed.is_empty() {
            return timeout;
        }
        let now = Instant::now();
        let left = self.audit.due_at(now).saturating_duration_since(now);
        Some(timeout.map_or(left, |t| t.min(left)))
    }

    /// Run an audit if one is due (module invariants): each registration
    /// trusted since before the previous audit, with no check or progress
    /// since, is checked if a fiber still waits on its fd (`wanted` is
    /// non-zero); a busy connection moves bytes sooner and is not. A
    /// stale one is registered afresh; its fd goes to `f` with what the
    /// new registration finds ready, or with all that is wanted if the fd
    /// can't be polled any more (closed, or a regular file now), so its
    /// waiters try and see.
    pub(super) fn audit_if_due(
        &mut self,
        wanted: &impl Fn(RawFd) -> u8,
        f: &mut impl FnMut(RawFd, u8),
    ) {
        if self.audit.listed.is_empty() {
            self.audit.next_at = None;
            return;
        }
        let now = Instant::now();
        if now < self.audit.due_at(now) {
            return;
        }
        self.audit.next_at = Some(now + AUDIT_EVERY);
        // Trusted before the previous audit ran: at least AUDIT_EVERY ago.
        let old_enough = self.audit.audits_run;
        self.audit.audits_run += 1;
        let mut stale = Vec::new();
        let fds = &mut self.inner.fds;
        self.audit.listed.retain(|&fd| {
            let Some(reg) = fds.get_mut(&fd) else {
                return false;
            };
            let verified = &mut reg.verified;
            match verified.trusted_since_audit {
                Some(since) if since >= old_enough => return true,
                // Checked or progressed since.
                None => return false,
                // Checked now, or (nobody waiting) the trusting waits
                // ended: the next trusting wait lists it again.
                Some(_) => verified.trusted_since_audit = None,
            }
            if wanted(fd) != 0 && reg.named.check(fd) != Checked::Same {
                stale.push(fd);
            }
            false
        });
        for fd in stale {
            let events = wanted(fd);
            // The check in `watch` (`registration.rs`) replaces the
            // registration. As `just_failed`, so that neither driver takes
            // a short cut past that (io_uring asks the kernel first): the
            // new registration reports what is ready at the next turn.
            match self.watch(fd, events, false, true) {
                Ok(Some(Watch::Pending)) => {}
                Ok(Some(Watch::Ready(ready))) => f(fd, ready),
                Ok(None) | Err(_) => f(fd, events),
            }
        }
    }
}
