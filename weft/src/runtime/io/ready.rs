//! `Interest` (what a task waits for) and `Ready` (what the OS reported).
//!
//! Owns: the two bit sets and their conversions from and to mio's types.
//! `Ready` bits are stored in the low 16 bits of a resource's readiness
//! word (see `scheduled_io.rs`).

use std::fmt;
use std::ops;

/// The readiness a task waits for on an I/O resource.
///
/// ```
/// use weft::io::Interest;
/// let both = Interest::READABLE | Interest::WRITABLE;
/// assert!(both.is_readable() && both.is_writable());
/// assert!(!Interest::READABLE.is_writable());
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Interest(u8);

const R: u8 = 0b0001;
const W: u8 = 0b0010;
const P: u8 = 0b0100;
const E: u8 = 0b1000;

impl Interest {
    /// Readable (or read-closed) readiness.
    pub const READABLE: Interest = Interest(R);
    /// Writable (or write-closed) readiness.
    pub const WRITABLE: Interest = Interest(W);
    /// Priority (out-of-band) readiness, e.g. `POLLPRI` (Linux only).
    pub const PRIORITY: Interest = Interest(P);
    /// Error readiness (a pending socket error).
    pub const ERROR: Interest = Interest(E);

    /// Includes readable interest.
    pub const fn is_readable(self) -> bool {
        self.0 & R != 0
    }
    /// Includes writable interest.
    pub const fn is_writable(self) -> bool {
        self.0 & W != 0
    }
    /// Includes priority interest.
    pub const fn is_priority(self) -> bool {
        self.0 & P != 0
    }
    /// Includes error interest.
    pub const fn is_error(self) -> bool {
        self.0 & E != 0
    }
    /// Both interests together.
    #[must_use]
    pub const fn add(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
    }
    /// `self` without `other`; `None` if nothing would be left.
    #[must_use]
    pub fn remove(self, other: Interest) -> Option<Interest> {
        let left = self.0 & !other.0;
        (left != 0).then_some(Interest(left))
    }

    /// The readiness bits that satisfy this interest.
    pub(crate) fn mask(self) -> Ready {
        let mut ready = Ready::EMPTY;
        if self.is_readable() {
            ready |= Ready::READABLE | Ready::READ_CLOSED;
        }
        if self.is_writable() {
            ready |= Ready::WRITABLE | Ready::WRITE_CLOSED;
        }
        if self.is_priority() {
            ready |= Ready::PRIORITY | Ready::READ_CLOSED;
        }
        if self.is_error() {
            ready |= Ready::ERROR;
        }
        ready
    }

    pub(crate) fn to_mio(self) -> mio::Interest {
        let mut out: Option<mio::Interest> = None;
        let mut add = |i: mio::Interest| out = Some(out.map_or(i, |o| o.add(i)));
        if self.is_readable() {
            add(mio::Interest::READABLE);
        }
        if self.is_writable() {
            add(mio::Interest::WRITABLE);
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if self.is_priority() {
            add(mio::Interest::PRIORITY);
        }
        // mio always reports errors but has no error interest: as Tokio
        // does, an interest with ERROR asks for reads too (an error-only
        // one needs some interest to be registered at all), so a wait for
        // READABLE on such a registration sees the reads.
        if self.is_error() {
            add(mio::Interest::READABLE);
        }
        out.unwrap_or(mio::Interest::READABLE)
    }
}

impl ops::BitOr for Interest {
    type Output = Interest;
    fn bitor(self, other: Interest) -> Interest {
        self.add(other)
    }
}

impl ops::BitOrAssign for Interest {
    fn bitor_assign(&mut self, other: Interest) {
        *self = self.add(other);
    }
}

impl fmt::Debug for Interest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (R, "READABLE"),
            (W, "WRITABLE"),
            (P, "PRIORITY"),
            (E, "ERROR"),
        ];
        let mut first = true;
        for (bit, name) in names {
            if self.0 & bit != 0 {
                if !first {
                    f.write_str(" | ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// The readiness the OS reported for an I/O resource.
///
/// ```
/// use weft::io::Ready;
/// let r = Ready::READABLE | Ready::READ_CLOSED;
/// assert!(r.is_readable() && r.is_read_closed() && !r.is_writable());
/// ```
///
/// Ordered by its bits, as Tokio's is (`READABLE` < `WRITABLE` < ... <
/// `ERROR`, each bit worth more than all those below it).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ready(u16);

impl Ready {
    /// Nothing is ready.
    pub const EMPTY: Ready = Ready(0);
    /// Data can be read.
    pub const READABLE: Ready = Ready(0b00_0001);
    /// Data can be written.
    pub const WRITABLE: Ready = Ready(0b00_0010);
    /// The read side is closed (the peer shut down its write side).
    pub const READ_CLOSED: Ready = Ready(0b00_0100);
    /// The write side is closed.
    pub const WRITE_CLOSED: Ready = Ready(0b00_1000);
    /// Priority data is available.
    pub const PRIORITY: Ready = Ready(0b01_0000);
    /// An error is pending on the resource.
    pub const ERROR: Ready = Ready(0b10_0000);
    /// Every readiness bit.
    pub const ALL: Ready = Ready(0b11_1111);

    /// Nothing is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Readable or read-closed (a read will not block).
    pub fn is_readable(self) -> bool {
        self.0 & (Ready::READABLE.0 | Ready::READ_CLOSED.0) != 0
    }
    /// Writable or write-closed (a write will not block).
    pub fn is_writable(self) -> bool {
        self.0 & (Ready::WRITABLE.0 | Ready::WRITE_CLOSED.0) != 0
    }
    /// The read side is closed.
    pub fn is_read_closed(self) -> bool {
        self.0 & Ready::READ_CLOSED.0 != 0
    }
    /// The write side is closed.
    pub fn is_write_closed(self) -> bool {
        self.0 & Ready::WRITE_CLOSED.0 != 0
    }
    /// Priority data is available.
    pub fn is_priority(self) -> bool {
        self.0 & Ready::PRIORITY.0 != 0
    }
    /// An error is pending.
    pub fn is_error(self) -> bool {
        self.0 & Ready::ERROR.0 != 0
    }

    pub(crate) fn intersects(self, other: Ready) -> bool {
        self.0 & other.0 != 0
    }

    pub(crate) fn as_usize(self) -> usize {
        self.0 as usize
    }

    pub(crate) fn from_usize(bits: usize) -> Ready {
        Ready(bits as u16 & Ready::ALL.0)
    }

    pub(crate) fn from_mio(event: &mio::event::Event) -> Ready {
        let mut ready = Ready::EMPTY;
        if event.is_readable() {
            ready |= Ready::READABLE;
        }
        if event.is_writable() {
            ready |= Ready::WRITABLE;
        }
        if event.is_read_closed() {
            ready |= Ready::READ_CLOSED;
        }
        if event.is_write_closed() {
            ready |= Ready::WRITE_CLOSED;
        }
        if event.is_error() {
            ready |= Ready::ERROR;
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if event.is_priority() {
            ready |= Ready::PRIORITY;
        }
        ready
    }
}

impl ops::BitOr for Ready {
    type Output = Ready;
    fn bitor(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }
}

impl ops::BitOrAssign for Ready {
    fn bitor_assign(&mut self, other: Ready) {
        self.0 |= other.0;
    }
}

impl ops::BitAnd for Ready {
    type Output = Ready;
    fn bitand(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }
}

impl ops::Sub for Ready {
    type Output = Ready;
    fn sub(self, other: Ready) -> Ready {
        Ready(self.0 & !other.0)
    }
}

/// Tokio's shape: the six `is_*` answers (`is_priority` last, on Linux
/// and Android only, where `PRIORITY` is reported).
impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Ready");
        out.field("is_readable", &self.is_readable())
            .field("is_writable", &self.is_writable())
            .field("is_read_closed", &self.is_read_closed())
            .field("is_write_closed", &self.is_write_closed())
            .field("is_error", &self.is_error());
        #[cfg(any(target_os = "linux", target_os = "android"))]
        out.field("is_priority", &self.is_priority());
        out.finish()
    }
}
