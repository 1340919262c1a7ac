//! `Instant`: a monotonic instant that follows the runtime's clock.
//!
//! Owns: nothing but a `std::time::Instant`. `now()` reads the current
//! runtime's clock, so it stands still while the clock is paused and jumps
//! with `advance`; outside a runtime it is the system's monotonic clock.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::time::Duration;

/// A point in time on the runtime's clock (see the module doc).
///
/// ```
/// use weft::time::Instant;
/// use std::time::Duration;
/// let a = Instant::now();
/// let b = a + Duration::from_millis(5);
/// assert_eq!(b - a, Duration::from_millis(5));
/// assert_eq!(b.duration_since(a), Duration::from_millis(5));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    std: std::time::Instant,
}

impl Instant {
    /// The current time on this thread's runtime clock (the system's
    /// monotonic clock outside a runtime with the time driver).
    pub fn now() -> Instant {
        if super::clock::all_clocks_are_real() {
            return Instant {
                std: std::time::Instant::now(),
            };
        }
        let paused =
            crate::runtime::context::with_current(|h| h.driver().time().map(|t| t.clock().now()))
                .flatten();
        Instant {
            std: paused.unwrap_or_else(std::time::Instant::now),
        }
    }

    /// Wrap a std instant.
    pub fn from_std(std: std::time::Instant) -> Instant {
        Instant { std }
    }

    /// The std instant.
    pub fn into_std(self) -> std::time::Instant {
        self.std
    }

    /// Time since `earlier`, zero if `earlier` is later.
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// `None` if `earlier` is later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.std.checked_duration_since(earlier.std)
    }

    /// Time since `earlier`, zero if `earlier` is later.
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// Time since this instant, on the runtime clock.
    pub fn elapsed(&self) -> Duration {
        Instant::now().duration_since(*self)
    }

    /// `None` on overflow.
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        self.std.checked_add(d).map(Instant::from_std)
    }

    /// `None` on underflow.
    pub fn checked_sub(&self, d: Duration) -> Option<Instant> {
        self.std.checked_sub(d).map(Instant::from_std)
    }

    /// An instant so far away that it never comes (about 30 years ahead).
    pub(crate) fn far_future() -> Instant {
        Instant::now() + Duration::from_secs(86_400 * 365 * 30)
    }

    /// `self + d`, or [`far_future`](Self::far_future) ("never") when that
    /// is past the clock's range: `sleep(Duration::MAX)` and the like must
    /// not panic. Every timer deadline computed from a duration goes
    /// through here.
    // Inlined into `sleep`: left to itself, LLVM stopped inlining it once
    // the timer code grew (+11 instructions per sleep, callgrind).
    #[inline]
    pub(crate) fn saturating_add_or_never(self, d: Duration) -> Instant {
        self.checked_add(d).unwrap_or_else(Instant::far_future)
    }
}

impl From<std::time::Instant> for Instant {
    fn from(std: std::time::Instant) -> Instant {
        Instant::from_std(std)
    }
}

impl From<Instant> for std::time::Instant {
    fn from(i: Instant) -> std::time::Instant {
        i.std
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant::from_std(self.std + d)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        self.std += d;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, d: Duration) -> Instant {
        Instant::from_std(self.std - d)
    }
}

impl SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, d: Duration) {
        self.std -= d;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, other: Instant) -> Duration {
        self.std.saturating_duration_since(other.std)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.std.fmt(f)
    }
}
