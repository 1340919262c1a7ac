//! The poller interest of a socket whose reads go through io_uring: it
//! starts with less than reads and writes, and gains read or write
//! interest when a readiness-based operation first needs it.
//!
//! Owns: the interest the socket was registered with (`base`) and what was
//! added since.
//!
//! Why: on the rings, readiness the program never waits for only wakes the
//! driver. A stream's read interest would wake it for every arrival the
//! ring receives anyway (half the wake-ups of an echo server); a UDP
//! socket's write interest for every datagram sent (its write-space
//! callback fires each time a sent datagram's buffer is freed). So a
//! stream registers for writes only, a datagram socket for `PRIORITY`
//! only (which never fires on it), and [`LazyInterest::want`] adds the
//! rest before the first wait for it.
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
const WRITE: u8 = 2;

pub(crate) struct LazyInterest {
    base: Interest,
    /// `READ` and `WRITE` bits added to `base`.
    added: AtomicU8,
    changing: Mutex<()>,
}

impl LazyInterest {
    /// A socket registered for `base`.
    pub(crate) fn new(base: Interest) -> LazyInterest {
        LazyInterest {
            base,
            added: AtomicU8::new(0),
            changing: Mutex::new(()),
        }
    }

    /// Make sure the poller reports `wanted` (its read and write parts)
    /// for `fd`, registered through `registration`. After the first time,
    /// one load.
    pub(crate) fn want(&self, registration: &Registration, fd: RawFd, wanted: Interest) {
        let mut bits = 0;
        if wanted.is_readable() && !self.base.is_readable() {
            bits |= READ;
        }
        if wanted.is_writable() && !self.base.is_writable() {
            bits |= WRITE;
        }
        if self.added.load(Ordering::Acquire) & bits == bits {
            return;
        }
        let _changing = self.changing.lock().unwrap_or_else(|e| e.into_inner());
        let added = self.added.fetch_or(bits, Ordering::AcqRel) | bits;
        let mut interest = self.base;
        if added & READ != 0 {
            interest |= Interest::READABLE;
        }
        if added & WRITE != 0 {
            interest |= Interest::WRITABLE;
        }
        // Changing the interest of a registered, open socket fails only if
        // the descriptor is gone, which the operation that follows reports.
        let _ = registration.reregister_fd(fd, interest);
    }
}
