//! Who takes a worker ring's completions while its owner does not: the
//! ring's one-shot registration in epoll, and the flag saying the owner
//! is away.
//!
//! Owns: the `away` flag of one worker ring, and the `epoll_ctl` calls
//! that arm the ring's descriptor (`EPOLLIN | EPOLLET | EPOLLONESHOT`).
//!
//! Why one-shot: a worker reaps its own ring at each batch point and
//! before it parks, and parks in its ring when it holds the driver. A
//! ring descriptor always in epoll made every completion also wake the
//! thread parked in epoll (another worker, idle), which found the owner
//! had taken everything, and slept again: on a one-connection ping-pong
//! on two workers, a wake-up of the idle worker per completion, and the
//! owner paid for each in the kernel's wake-up and in contention on the
//! ring's lock (1.6–1.8× Tokio's time per round trip; BENCHMARKS.md, "One
//! exchange at a time on io_uring"). So the descriptor is armed only for
//! the times its owner will not reap: a one-shot registration reports
//! one event and is then disarmed until armed again.
//!
//! The owner is *away* while it sleeps on its parker's condvar (another
//! thread holds the driver; scheduler/park.rs), while its core moves to a
//! new thread (`block_in_place`, until that thread's first batch point),
//! and while the long-poll monitor sees it stuck in one poll (monitor.rs).
//! A busy owner is not away: its completions wait for its next batch
//! point, as its submissions already do (uring/mod.rs). A runtime without
//! the monitor (`long_poll_threshold(None)`) has nothing to tell that an
//! owner is stuck, so its worker rings stay in epoll for good
//! (`Rings::watch_always`): a task blocked in a poll must not hold back a
//! completion another thread waits for.
//!
//! Invariants (loom model: `loom_watch.rs`):
//! - **Every departure arms.** Whoever marks the owner away stores the
//!   flag (SeqCst) and then arms the descriptor, unless the ring holds
//!   nothing (only the owner starts requests, so the ring of an owner
//!   asleep stays empty; a stuck owner may still start one inside its
//!   poll, which the monitor's next look, finding it stuck again, arms
//!   for). Arming reports a completion already posted at once
//!   (`EPOLL_CTL_MOD` polls the descriptor), so nothing posted before the
//!   arm is missed.
//! - **Every event re-arms while the owner is away.** The thread that
//!   takes a ring's event reaps the ring and then, if the flag says away
//!   and the ring still holds something (under its lock), arms it again.
//!   A flag read as "back" that the owner then changes to "away" is
//!   followed by the owner's own arm (the rule above), so no completion
//!   waits with nobody to reap it.
//! - A stale arm (the owner came back) costs at most one spurious event:
//!   the reap finds the owner's work taken, and the flag says not to
//!   re-arm.

use crate::loom::AtomicBool;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::Ordering;

/// The events a worker ring's descriptor is armed for.
const ONE_SHOT_READ: u32 = (libc::EPOLLIN | libc::EPOLLET | libc::EPOLLONESHOT) as u32;

/// Whether a worker ring's owner is away (module doc).
#[derive(Debug, Default)]
pub(crate) struct RingWatch {
    away: AtomicBool,
}

impl RingWatch {
    /// Mark the owner away; the caller arms the descriptor next if the
    /// ring may hold something.
    pub(crate) fn leave(&self) {
        self.away.store(true, Ordering::SeqCst);
    }

    /// The owner is back to reaping its ring itself.
    pub(crate) fn back(&self) {
        if self.away.load(Ordering::Relaxed) {
            self.away.store(false, Ordering::SeqCst);
        }
    }

    /// For the thread that took the ring's event, after its reap: whether
    /// to arm the descriptor again (the owner is away).
    pub(crate) fn is_away(&self) -> bool {
        self.away.load(Ordering::SeqCst)
    }
}

/// Turn ring descriptor `fd`'s registration into a lasting one (every
/// completion reports), as the shared ring's (`Rings::watch_always`).
pub(crate) fn watch_always(epoll: RawFd, fd: RawFd, token: usize) {
    // For a registered descriptor it can fail only for lack of kernel
    // memory, which is not handled.
    let always = (libc::EPOLLIN | libc::EPOLLET) as u32;
    let _ = epoll_ctl(epoll, libc::EPOLL_CTL_MOD, fd, token, always);
}

/// Put ring descriptor `fd` in epoll instance `epoll` under `token`,
/// armed once.
pub(crate) fn register(epoll: RawFd, fd: RawFd, token: usize) -> io::Result<()> {
    epoll_ctl(epoll, libc::EPOLL_CTL_ADD, fd, token, ONE_SHOT_READ)
}

/// Arm ring descriptor `fd` for one more event (it is registered).
pub(crate) fn arm(epoll: RawFd, fd: RawFd, token: usize) {
    // It can only fail if the descriptor left epoll, which happens with
    // the ring's teardown, when nobody waits for the event any more.
    let _ = epoll_ctl(epoll, libc::EPOLL_CTL_MOD, fd, token, ONE_SHOT_READ);
}

fn epoll_ctl(
    epoll: RawFd,
    op: libc::c_int,
    fd: RawFd,
    token: usize,
    events: u32,
) -> io::Result<()> {
    let mut event = libc::epoll_event {
        events,
        u64: token as u64,
    };
    // SAFETY: `event` is a valid epoll_event for the call, which only reads
    // it; bad descriptors are reported as errors.
    if unsafe { libc::epoll_ctl(epoll, op, fd, &mut event) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
