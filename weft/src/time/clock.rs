//! A runtime's clock: real time, or frozen and moved by hand in tests.
//!
//! Owns: the offset between the runtime's (virtual) time and the system's
//! monotonic clock, and the frozen instant while paused.
//!
//! Invariants: virtual time never goes backwards. While running, virtual
//! now = `std::time::Instant::now() + offset`; `pause` freezes it at its
//! current value, `advance` moves the frozen value forward, and `resume`
//! recomputes the offset so time carries on from where it was frozen.
//! The running path reads one atomic and never locks.
//!
//! Also owns `ANY_CLOCK_PAUSED`, set (for the process's life) by the first
//! `pause` of any runtime's clock, before that pause changes anything.
//! Until then every clock is the system's with no offset, so
//! `Instant::now()` reads the system clock without looking up the current
//! runtime (Tokio's, built without `test-util`, never looks). A thread
//! that must see a pause (the pause happens before its read, through
//! whatever synchronises them) sees the flag too: the flag's store is
//! sequenced before the pause, and a load that the store happens before
//! cannot return the older value (write-read coherence). A thread with no
//! such order may read either time, as it could before the flag existed.
//!
//! Also owns the count of `spawn_blocking` closures in flight: while it is
//! above zero a frozen clock does not jump to the next timer on its own
//! (Tokio's rule), since a blocking closure is work the runtime cannot see.
//! Its handshake with the driver's unpark flag is loom-modelled in
//! `loom_auto_advance.rs`.

use crate::loom::AtomicUsize;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// See the module doc: true once any clock in the process was paused.
static ANY_CLOCK_PAUSED: AtomicBool = AtomicBool::new(false);

/// True while no runtime's clock has ever been paused in this process:
/// every runtime's time is then the system's monotonic clock.
#[inline]
pub(crate) fn all_clocks_are_real() -> bool {
    !ANY_CLOCK_PAUSED.load(Ordering::Acquire)
}

pub(crate) struct Clock {
    /// Virtual minus real, in nanoseconds, while running.
    offset_ns: AtomicI64,
    paused: AtomicBool,
    frozen: Mutex<Option<Instant>>,
    /// `spawn_blocking` closures not yet finished (or dropped).
    blocking_in_flight: AtomicUsize,
}

impl Clock {
    pub(crate) fn new(start_paused: bool) -> Clock {
        let clock = Clock {
            offset_ns: AtomicI64::new(0),
            paused: AtomicBool::new(false),
            frozen: Mutex::new(None),
            blocking_in_flight: AtomicUsize::new(0),
        };
        if start_paused {
            clock.pause();
        }
        clock
    }

    pub(crate) fn now(&self) -> Instant {
        if self.paused.load(Ordering::Acquire) {
            if let Some(frozen) = *self.lock() {
                return frozen;
            }
        }
        let offset_ns = self.offset_ns.load(Ordering::Acquire);
        let real = Instant::now();
        // A clock never paused has no offset: skip the checked arithmetic.
        if offset_ns == 0 {
            real
        } else {
            shift(real, offset_ns)
        }
    }

    pub(crate) fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Acquire)
    }

    /// Freeze time. Returns false if it was already frozen.
    pub(crate) fn pause(&self) -> bool {
        // Before anything changes (module doc).
        ANY_CLOCK_PAUSED.store(true, Ordering::Release);
        let mut frozen = self.lock();
        if frozen.is_some() {
            return false;
        }
        *frozen = Some(shift(
            Instant::now(),
            self.offset_ns.load(Ordering::Acquire),
        ));
        self.paused.store(true, Ordering::Release);
        true
    }

    /// Let time run again from the frozen instant. Returns false if it was
    /// not frozen.
    pub(crate) fn resume(&self) -> bool {
        let mut frozen = self.lock();
        let Some(at) = frozen.take() else {
            return false;
        };
        let real = Instant::now();
        let offset = if at >= real {
            i64::try_from((at - real).as_nanos()).unwrap_or(i64::MAX)
        } else {
            -i64::try_from((real - at).as_nanos()).unwrap_or(i64::MAX)
        };
        self.offset_ns.store(offset, Ordering::Release);
        self.paused.store(false, Ordering::Release);
        true
    }

    /// Move frozen time forward by `by`. Returns false if not frozen.
    pub(crate) fn advance(&self, by: Duration) -> bool {
        let mut frozen = self.lock();
        match frozen.as_mut() {
            Some(at) => {
                *at += by;
                true
            }
            None => false,
        }
    }

    /// A `spawn_blocking` closure was queued: hold off auto-advance.
    pub(crate) fn inhibit_auto_advance(&self) {
        self.blocking_in_flight.fetch_add(1, Ordering::AcqRel);
    }

    /// A `spawn_blocking` closure finished or was dropped. Returns true if
    /// it was the last one in flight.
    #[must_use]
    pub(crate) fn allow_auto_advance(&self) -> bool {
        self.blocking_in_flight.fetch_sub(1, Ordering::AcqRel) == 1
    }

    /// Whether an idle runtime may jump a frozen clock to its next timer.
    pub(crate) fn can_auto_advance(&self) -> bool {
        self.blocking_in_flight.load(Ordering::Acquire) == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.frozen.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn shift(real: Instant, offset_ns: i64) -> Instant {
    if offset_ns >= 0 {
        real + Duration::from_nanos(offset_ns as u64)
    } else {
        real.checked_sub(Duration::from_nanos(offset_ns.unsigned_abs()))
            .unwrap_or(real)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paused_clock_moves_only_by_advance_and_resumes_from_there() {
        let clock = Clock::new(true);
        let t0 = clock.now();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(clock.now(), t0);
        assert!(clock.advance(Duration::from_secs(3600)));
        assert_eq!(clock.now(), t0 + Duration::from_secs(3600));
        assert!(clock.resume());
        let after = clock.now();
        assert!(after >= t0 + Duration::from_secs(3600));
        assert!(after < t0 + Duration::from_secs(3601));
        assert!(!clock.resume());
        assert!(!clock.advance(Duration::from_secs(1)));
    }
}
