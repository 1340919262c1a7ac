//! One fd's registration with weft's driver, and how a wait gets one:
//! kept (the wait knows or trusts it), made, or checked and then kept or
//! replaced.
//!
//! Owns: [`Registration`], what it knows of the file it was made for
//! ([`Named`]) and [`Poller::registration_for`], the plan a wait follows.
//!
//! Invariants (the check itself is in `poller.rs`'s module doc):
//! - epoll finds a registration by fd number *and* open file. So an
//!   `EPOLL_CTL_ADD` of a number whose old file is closed succeeds, and
//!   removing the old registration by number afterwards would remove the
//!   new one: a registration whose number names another file is given up
//!   with [`AsyncFd::into_inner_stale`], never dropped (its drop removes by
//!   number).
//! - An `EPOLL_CTL_ADD` that epoll refuses with `EEXIST` says only that the
//!   fd's current file is registered under *some* token: this
//!   registration's, or that of one given up while its file was open
//!   elsewhere (a `dup`, a forked child), the file since back on the
//!   number. Only a registration made for that very socket (its `fstat`
//!   identity, [`Named::Socket`]) is kept on that answer; any other is
//!   removed by number (which removes whichever epoll holds) and made
//!   afresh.
//! - A registration is made without asking what the fd names
//!   ([`Named::Unasked`]): a connection per request waits once, and its
//!   socket's registration is never asked about. So a wait trusts only a
//!   registration whose identity is known (`trust.rs`'s audit compares it).
//! - A registration is given up only when epoll has just accepted the fd
//!   anew. One whose fd epoll refuses outright (a regular file now, or
//!   closed) stays: were its file to come back to the number while open
//!   elsewhere, epoll would still hold it under this registration's token.
//!   (A registration dropped by number when its number named another file,
//!   `Poller::release` after an unnoticed swap on io_uring, leaves its file
//!   under a dead token, and a wait on that file back on that number
//!   fails with `EEXIST`, as it did before the probe.)
//! - On kqueue (the BSDs, macOS) adding a registered descriptor modifies
//!   it, so a probe always "succeeds": every check replaces the
//!   registration, which is sound (kqueue drops a registration when its
//!   descriptor closes) but never earns a trust.

use super::trust::{Verified, WaitingIo};
use super::wake::FdWaker;
use super::Poller;
use crate::fd_query::socket_identity;
use crate::state::{PRIORITY, READABLE, WRITABLE};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::task::{Context, Waker};
use weft::io::unix::AsyncFd;
use weft::io::Interest;

/// An fd number for [`AsyncFd`], which does not own it (Ruby's IO does).
pub(super) struct Fd(pub(super) RawFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// One fd's registration with weft's driver.
pub(super) struct Registration {
    pub(super) fd: AsyncFd<Fd>,
    /// Queues this fd on [`Woken`](super::wake::Woken).
    pub(super) waker: Waker,
    /// What the fd named, if asked: what lets a later IO on the same fd
    /// number keep the registration, and a wait trust it (`trust.rs`).
    pub(super) named: Named,
    /// Which IO's wait checked it last, and whether a wait trusted it
    /// since (`trust.rs`).
    pub(super) verified: Verified,
    /// Registered for `PRIORITY` too (on io_uring only when a wait asked
    /// for it: `poller.rs`'s module doc).
    pub(super) priority: bool,
    /// On [`Poller`]'s `pending` list.
    pub(super) queued: bool,
    /// A byte-stream socket
    /// ([`byte_stream_socket`](crate::fd_query::byte_stream_socket)), asked
    /// the first time a read hint needs it ([`Poller::read_would_fail`]).
    pub(super) stream: Option<bool>,
    /// Directions (`READABLE`, `WRITABLE`) whose wait was left armed in
    /// the driver and not yet seen ready: on io_uring, a poll request in
    /// the kernel (`poller.rs`'s module doc, "On io_uring").
    pub(super) armed: u8,
}

/// What a registration's fd named, as far as it was asked (`fstat`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Named {
    /// Not asked: registered by an `epoll_ctl(ADD)` that found the fd new
    /// to the poller, which needed no question (a connection per request
    /// waits once, and its registration is never asked).
    Unasked,
    /// A socket: its device and inode, which no other open socket shares.
    Socket(u64, u64),
    /// Not a socket (a pipe's two ends share one inode: no identity), or
    /// not open.
    Other,
}

/// What [`Named::check`] found.
#[must_use]
#[derive(PartialEq, Eq, Debug)]
pub(super) enum Checked {
    /// The fd still names the registered socket.
    Same,
    /// It names this, and the registration can't be kept on its word.
    Other(Named),
}

impl Named {
    /// Ask what `fd` names now (an `fstat`).
    fn asked(fd: RawFd) -> Named {
        match socket_identity(fd) {
            Some((dev, ino)) => Named::Socket(dev, ino),
            None => Named::Other,
        }
    }

    pub(super) fn is_socket(self) -> bool {
        matches!(self, Named::Socket(..))
    }

    /// Does `fd` still name the socket this registration was made for?
    pub(super) fn check(self, fd: RawFd) -> Checked {
        let now = Named::asked(fd);
        if self.is_socket() && now == self {
            Checked::Same
        } else {
            Checked::Other(now)
        }
    }
}

/// How [`Poller::watch_by`] gets an fd's registration.
#[must_use]
enum Plan {
    /// Keep the one there (the wait knows or trusts it).
    Reuse,
    /// None is there: make one.
    Register,
    /// Take the one there out of the poller by number (the same file
    /// wants more interest, or nothing could tell the file apart from
    /// another), then make one that named this.
    Replace(Named),
    /// Ask the poller to add the fd: it refuses (`EEXIST`) if the fd's
    /// current file is registered, which the old registration's check
    /// then settles; otherwise the number names a new file. Says whether
    /// the old registration had priority, which other waiters may need.
    Probe { priority: bool },
}

/// What a replaced registration leaves its successor.
struct Left {
    /// Directions it had armed ([`Got::carried`]).
    armed: u8,
    /// The fd is on [`Poller`]'s `pending` list.
    queued: bool,
    /// Who checked it, when the successor's making is the same file's
    /// check.
    verified: Option<Verified>,
}

impl Left {
    fn by(old: &Registration) -> Left {
        Left {
            armed: old.armed,
            queued: old.queued,
            verified: None,
        }
    }
}

/// What [`Poller::registration_for`] did.
pub(super) struct Got {
    /// A registration was made for this wait: it reports nothing yet.
    pub(super) fresh: bool,
    /// Directions the replaced registration had armed for other waiters,
    /// to arm again on the new one: a new registration reports nothing by
    /// itself on io_uring.
    pub(super) carried: u8,
    /// The wait trusted the registration unchecked (`trust.rs`).
    pub(super) trusted: bool,
}

impl Poller {
    /// Get `fd` a registration for a wait for `events` (module doc).
    /// `Ok(None)`: the fd can't be polled (a regular file).
    pub(super) fn registration_for(
        &mut self,
        fd: RawFd,
        events: u8,
        known: bool,
        io: Option<WaitingIo<'_>>,
    ) -> io::Result<Option<Got>> {
        let inner = &mut *self.inner;
        // On io_uring, priority readiness comes from epoll, where it is
        // woken by every arrival: asked for only by waits that need it.
        let priority = !inner.ring || events & PRIORITY != 0;
        // Trust or a check (module invariants), and priority when it is
        // asked for.
        let mut trusted = false;
        let plan = match inner.fds.get(&fd) {
            None => Plan::Register,
            // Registered without the priority this wait needs.
            Some(reg) if priority && !reg.priority => Plan::Replace(Named::Unasked),
            Some(_) if known => Plan::Reuse,
            Some(reg) if reg.named.is_socket() && reg.verified.trusts(io) => {
                trusted = true;
                Plan::Reuse
            }
            // Not a socket: nothing tells its registration apart from one
            // given up (module invariants), so a probe's `EEXIST` would end
            // in a replacement anyway.
            Some(reg) if reg.named == Named::Other => Plan::Replace(Named::asked(fd)),
            Some(reg) => Plan::Probe {
                priority: reg.priority,
            },
        };
        let rt = &inner.rt;
        let wakes = &self.wakes;
        let register = |named: Named, priority: bool| -> io::Result<Registration> {
            let mut interest = Interest::READABLE.add(Interest::WRITABLE);
            if priority {
                interest = interest.add(Interest::PRIORITY);
            }
            let fd_reg = {
                let _guard = rt.enter();
                AsyncFd::with_interest_on_rings(Fd(fd), interest)?
            };
            Ok(Registration {
                fd: fd_reg,
                waker: Waker::from(Arc::new(FdWaker {
                    fd,
                    woken: wakes.clone(),
                })),
                named,
                queued: false,
                stream: None,
                verified: Verified::default(),
                priority,
                armed: 0,
            })
        };
        // What the registration replaced (if any) leaves the new one.
        let mut left = None;
        // The new registration, if the old one (if any) is not kept.
        let made = match plan {
            Plan::Reuse => None,
            Plan::Register => Some(register(Named::Unasked, priority)),
            Plan::Replace(named) => {
                // Out of the poller first: its removal by number must not
                // remove the new one.
                let old = inner.fds.remove(&fd).expect("replaced because registered");
                left = Some(Left::by(&old));
                let priority = priority || old.priority;
                drop(old);
                Some(register(named, priority))
            }
            Plan::Probe { priority: had } => match register(Named::Unasked, priority || had) {
                // The poller took the fd as new, so the number names
                // another file than the old registration's: that one is
                // gone from the poller, or left to report its old file
                // under a token nobody holds. Removing it by number would
                // remove the new one.
                Ok(new) => {
                    let old = inner.fds.remove(&fd).expect("probed because registered");
                    left = Some(Left::by(&old));
                    let _ = old.fd.into_inner_stale();
                    Some(Ok(new))
                }
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                    match inner.fds[&fd].named.check(fd) {
                        Checked::Same => None,
                        Checked::Other(named) => {
                            // The fd's file is registered already: under
                            // this registration (which did not say what it
                            // named), or under one given up while its file
                            // was open elsewhere, and that file came back
                            // to this number (`IO#reopen` to a dup).
                            // Removed by number, whichever it is, and
                            // registered afresh. That is this wait's check:
                            // the IO that checked the old one keeps its
                            // standing, so its id is recorded now if it
                            // checked before (its next wait trusts).
                            let mut old = inner.fds.remove(&fd).expect("probed because registered");
                            left = Some(Left {
                                verified: Some(std::mem::take(&mut old.verified)),
                                ..Left::by(&old)
                            });
                            drop(old);
                            Some(register(named, priority || had))
                        }
                    }
                }
                // Not pollable now (a regular file: `EPERM`) or not open.
                // The old registration stays: if its file comes back to the
                // number, epoll still holds it under its token (given up,
                // it would be held under none, and the fd could not be
                // registered again: `EEXIST`).
                Err(e) => Some(Err(e)),
            },
        };
        let mut fresh = false;
        if let Some(made) = made {
            let mut new = match made {
                Ok(new) => new,
                // epoll refuses regular files: they are always ready.
                Err(e) if e.raw_os_error() == Some(libc::EPERM) => return Ok(None),
                Err(e) => return Err(e),
            };
            if let Some(left) = &mut left {
                new.queued = left.queued;
                if let Some(verified) = left.verified.take() {
                    new.verified = verified;
                }
            }
            inner.fds.insert(fd, new);
            fresh = true;
        }
        let carried = left.map_or(0, |left| left.armed);
        Ok(Some(Got {
            fresh,
            carried,
            trusted,
        }))
    }
}

impl Registration {
    /// [`Poller::readiness`] of this registration.
    pub(super) fn readiness(&mut self, wanted: u8) -> u8 {
        let mut cx = Context::from_waker(&self.waker);
        let mut ready = 0;
        if wanted & (READABLE | PRIORITY) != 0 {
            if self.fd.poll_read_ready_or_error(&mut cx).is_ready() {
                ready |= READABLE | PRIORITY;
                self.armed &= !READABLE;
            } else {
                self.armed |= READABLE;
            }
        }
        if wanted & WRITABLE != 0 {
            if self.fd.poll_write_ready_or_error(&mut cx).is_ready() {
                ready |= WRITABLE;
                self.armed &= !WRITABLE;
            } else {
                self.armed |= WRITABLE;
            }
        }
        ready
    }
}
