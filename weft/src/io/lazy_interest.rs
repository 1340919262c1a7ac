//! The poller interest of a stream socket whose reads go through io_uring:
//! it starts with writes only, and gains read or priority interest when a
//! readiness-based operation first needs it.
//!
//! Owns: what was added since the socket was registered for
//! [`LazyInterest::BASE`].
//!
//! Why: on the rings, readiness the program never waits for only wakes the
//! driver. A stream's read interest would wake it for every arrival the
//! ring receives anyway (half the wake-ups of an echo server). So a
//! stream registers for writes only, and [`LazyInterest::want`] adds the
//! rest before the first wait for it. (Datagram sockets, which once
//! received on the rings and registered for nothing, are readiness-based
//! on both drivers now, registered for reads and writes as on epoll.)
//!
//! Invariant: interest is only ever added, and each change re-registers
//! the whole interest under `changing`, so two changes racing cannot leave
//! the poller with the older one.

use crate::runtime::io::ready::Interest;
use crate::runtime::io::registration::Registration;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

const READ: u8 = 1;
const PRIORITY: u8 = 2;

/// The parts of an interest this adds, with their bits.
const PARTS: [(u8, Interest); 2] = [(READ, Interest::READABLE), (PRIORITY, Interest::PRIORITY)];

#[derive(Default)]
pub(crate) struct LazyInterest {
    /// `READ` and `PRIORITY` bits added to [`BASE`](Self::BASE).
    added: AtomicU8,
    changing: Mutex<()>,
}

impl LazyInterest {
    /// What a ring-backed stream registers for: writes only.
    pub(crate) const BASE: Interest = Interest::WRITABLE;

    /// Whether read interest was added: only then can a task wait for
    /// read readiness (every such wait asks for it first).
    pub(crate) fn has_reads(&self) -> bool {
        self.added.load(Ordering::Acquire) & READ != 0
    }

    /// Make sure the poller reports `wanted` (its read and priority parts)
    /// for `fd`, registered through `registration`. After the first time,
    /// one load.
    pub(crate) fn want(&self, registration: &Registration, fd: RawFd, wanted: Interest) {
        let bits = PARTS
            .iter()
            .filter(|&&(_, part)| has(wanted, part))
            .fold(0, |bits, &(bit, _)| bits | bit);
        if self.added.load(Ordering::Acquire) & bits == bits {
            return;
        }
        let _changing = self.changing.lock().unwrap_or_else(|e| e.into_inner());
        let added = self.added.fetch_or(bits, Ordering::AcqRel) | bits;
        let interest = PARTS
            .iter()
            .filter(|&&(bit, _)| added & bit != 0)
            .fold(Self::BASE, |interest, &(_, part)| interest | part);
        // Changing the interest of a registered, open socket fails only if
        // the descriptor is gone, which the operation that follows reports.
        let _ = registration.reregister_fd(fd, interest);
    }
}

/// Whether `interest` includes `part` (one of `PARTS`).
fn has(interest: Interest, part: Interest) -> bool {
    (part.is_readable() && interest.is_readable()) || (part.is_priority() && interest.is_priority())
}
