//! The poller interest of a stream socket whose reads and writes go
//! through io_uring: it starts out of the poller altogether, and is added
//! for reads, writes or priority when a readiness-based operation first
//! needs them.
//!
//! Owns: which parts of an interest were added for the descriptor.
//!
//! Why: on the rings, readiness the program never waits for only costs.
//! A stream's read interest would wake the driver for every arrival the
//! ring receives anyway (half the wake-ups of an echo server), and even
//! write interest alone cost an `EPOLL_CTL_ADD` and an `EPOLL_CTL_DEL` per
//! connection (2 of a connection-per-request server's 7 syscalls, 1.2 µs)
//! for a registration most programs (hyper, anything reading and writing
//! through `AsyncRead`/`AsyncWrite`) never wait on. So a ring-backed
//! stream enters the poller only when a readiness wait or a `try_*`
//! operation asks ([`Registration`](super::registration::Registration)
//! calls [`LazyInterest::want`] from its waits, after the waiter is
//! registered, and from `try_io`): the add reports what is ready already,
//! so no edge before it is lost; and since that report comes on the
//! poller's next turn, the registration also asks `poll(2)` once per
//! interest added and sets what it says at once, so a `try_*` right
//! after finds a ready socket ready, as on a stream registered when made.
//!
//! Invariants: interest is only ever added; `added` changes only under
//! `changing`, together with the poller's registration (`EPOLL_CTL_ADD`
//! from nothing, `EPOLL_CTL_MOD` after), and only once the poller took
//! it; so `added` is what the poller has, and two changes racing cannot
//! leave the poller with the older one. `added == 0` means the descriptor
//! is not in the poller, and nothing must take it out.

use super::ready::Interest;
use super::{Handle, Key};
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

const READ: u8 = 1;
const WRITE: u8 = 2;
const PRIORITY: u8 = 4;

/// The parts an interest is added in, with their bits.
const PARTS: [(u8, Interest); 3] = [
    (READ, Interest::READABLE),
    (WRITE, Interest::WRITABLE),
    (PRIORITY, Interest::PRIORITY),
];

#[derive(Default)]
pub(crate) struct LazyInterest {
    /// `READ`, `WRITE` and `PRIORITY` bits the poller has.
    added: AtomicU8,
    changing: Mutex<()>,
}

impl LazyInterest {
    /// Whether read interest was added: only then can a task wait for
    /// read readiness (every such wait asks for it).
    pub(crate) fn has_reads(&self) -> bool {
        self.added.load(Ordering::Acquire) & READ != 0
    }

    /// Whether the descriptor is in the poller at all.
    pub(crate) fn is_polled(&self) -> bool {
        self.added.load(Ordering::Acquire) != 0
    }

    /// Make sure the poller reports `wanted` for `fd` (registered under
    /// `key`). After the first time, one load. `Some(interest)`: the
    /// poller's interest grew to `interest`, and reports what is ready
    /// already only on its next turn.
    pub(crate) fn want(
        &self,
        io: &Handle,
        key: Key,
        fd: RawFd,
        wanted: Interest,
    ) -> io::Result<Option<Interest>> {
        let bits = PARTS
            .iter()
            .filter(|&&(_, part)| has(wanted, part))
            .fold(0, |bits, &(bit, _)| bits | bit);
        if self.added.load(Ordering::Acquire) & bits == bits {
            return Ok(None);
        }
        let _changing = self.changing.lock().unwrap_or_else(|e| e.into_inner());
        let before = self.added.load(Ordering::Acquire);
        let after = before | bits;
        if after == before {
            return Ok(None);
        }
        let interest = PARTS
            .iter()
            .filter(|&&(bit, _)| after & bit != 0)
            .map(|&(_, part)| part)
            .reduce(|interest, part| interest | part)
            .expect("`after` has a bit");
        if before == 0 {
            io.add_fd(fd, key, interest)?;
        } else {
            io.reregister_fd(fd, key, interest)?;
        }
        self.added.store(after, Ordering::Release);
        Ok(Some(interest))
    }
}

/// Whether `interest` needs `part` (one of `PARTS`). An error interest
/// needs reads, as it registers them (`Interest::to_mio`).
fn has(interest: Interest, part: Interest) -> bool {
    (part.is_readable() && (interest.is_readable() || interest.is_error()))
        || (part.is_writable() && interest.is_writable())
        || (part.is_priority() && interest.is_priority())
}
