//! The long-poll monitor's alarm clock: the monitor thread sleeps on it,
//! whoever takes a sample sets it for the next one, and a kick rings it
//! at once.
//!
//! Owns: a timerfd (`CLOCK_MONOTONIC`) and the `kicked` flag.
//!
//! Why a timer in the kernel rather than a condvar's timeout: a worker
//! that takes the monitor's sample on its way to park pushes the monitor
//! thread's next wake-up back with one `timerfd_settime`, without waking
//! it. While workers park often, the monitor thread then never wakes, and
//! each wake-up of an extra thread costs the workers of an oversubscribed
//! machine several percent (BENCHMARKS.md, round 11).
//!
//! Invariant: **a kick is never lost to a re-arm.** Setting the timer
//! replaces its setting and drops an expiry nobody has read yet, a kick's
//! included. So a kick stores `kicked` before it rings, and every setting
//! reads `kicked` after it sets the timer and rings again if it is set.
//! The kernel orders the two `timerfd_settime` calls (under the timer's
//! lock): whichever comes second is the kick's ring, or reads `kicked`
//! after the kick stored it. [`Alarm::wait`] clears `kicked` only after a
//! ring woke it. Loom model `loom_alarm` (the timerfd modelled as a
//! mutex-guarded flag).

use crate::loom::{AtomicBool, Ordering};
use std::io;
use std::time::Duration;

pub(super) struct Alarm {
    timer: imp::Timer,
    kicked: AtomicBool,
}

impl Alarm {
    pub(super) fn new() -> io::Result<Alarm> {
        Ok(Alarm {
            timer: imp::Timer::new()?,
            kicked: AtomicBool::new(false),
        })
    }

    /// Ring `after` from now, replacing the current setting (unless a kick
    /// is pending: see the module doc).
    pub(super) fn set(&self, after: Duration) {
        self.timer.arm(after);
        if self.kicked.load(Ordering::SeqCst) {
            self.timer.ring();
        }
    }

    /// Ring now; the next `wait` says it was kicked.
    pub(super) fn kick(&self) {
        self.kicked.store(true, Ordering::SeqCst);
        self.timer.ring();
    }

    /// Sleep until the alarm rings. Returns whether a kick rang it (or
    /// came since the last wait).
    pub(super) fn wait(&self) -> bool {
        self.timer.wait();
        self.kicked.swap(false, Ordering::SeqCst)
    }
}

#[cfg(not(loom))]
mod imp {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::time::Duration;

    pub(super) struct Timer(OwnedFd);

    impl Timer {
        pub(super) fn new() -> io::Result<Timer> {
            // SAFETY: plain syscall; the result is checked below.
            let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `fd` was just created and nothing else owns it.
            Ok(Timer(unsafe { OwnedFd::from_raw_fd(fd) }))
        }

        /// Expire once, `after` from now (at least a nanosecond: zero
        /// would disarm it).
        pub(super) fn arm(&self, after: Duration) {
            let after = after.max(Duration::from_nanos(1));
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: after.as_secs().try_into().unwrap_or(libc::time_t::MAX),
                    tv_nsec: after.subsec_nanos().into(),
                },
            };
            // SAFETY: `spec` is a valid itimerspec; no old value is asked
            // for. It fails only for a bad descriptor or value, neither of
            // which this passes.
            unsafe { libc::timerfd_settime(self.0.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        }

        pub(super) fn ring(&self) {
            self.arm(Duration::ZERO);
        }

        /// Block until the timer expires (consuming the expiry).
        pub(super) fn wait(&self) {
            let mut expiries = 0u64;
            loop {
                // SAFETY: reads 8 bytes into `expiries`, which has them.
                let n = unsafe {
                    libc::read(
                        self.0.as_raw_fd(),
                        (&mut expiries as *mut u64).cast(),
                        std::mem::size_of::<u64>(),
                    )
                };
                if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                    return;
                }
            }
        }
    }
}

/// Under loom: the timer as a flag (an expiry nobody read) behind a
/// mutex, as the kernel keeps it. Time does not pass in a model, so an
/// armed timer never expires by itself: only a ring ends a wait, and a
/// lost kick shows up as a deadlock.
#[cfg(loom)]
mod imp {
    use crate::loom::{Condvar, Mutex};
    use std::io;
    use std::time::Duration;

    pub(super) struct Timer {
        expired: Mutex<bool>,
        rang: Condvar,
    }

    impl Timer {
        pub(super) fn new() -> io::Result<Timer> {
            Ok(Timer {
                expired: Mutex::new(false),
                rang: Condvar::new(),
            })
        }

        pub(super) fn arm(&self, _after: Duration) {
            *crate::loom::lock(&self.expired) = false;
        }

        pub(super) fn ring(&self) {
            *crate::loom::lock(&self.expired) = true;
            self.rang.notify_one();
        }

        pub(super) fn wait(&self) {
            let mut expired = crate::loom::lock(&self.expired);
            while !*expired {
                expired = self.rang.wait(expired).unwrap();
            }
            *expired = false;
        }
    }
}

#[cfg(all(test, loom))]
mod loom_alarm {
    //! A kick races with a worker's sample setting the alarm for later,
    //! and with the monitor setting it itself before it waits: the
    //! monitor's wait still ends, and says it was kicked. Without the
    //! re-read of `kicked` in `set`, loom finds the run where the setting
    //! drops the kick's ring and the monitor sleeps forever.

    use super::Alarm;
    use crate::loom::Arc;
    use std::time::Duration;

    #[test]
    fn loom_alarm_kick_is_never_lost_to_a_setting() {
        loom::model(|| {
            let alarm = Arc::new(Alarm::new().unwrap());
            let kicker = {
                let alarm = alarm.clone();
                loom::thread::spawn(move || alarm.kick())
            };
            let worker = {
                let alarm = alarm.clone();
                loom::thread::spawn(move || alarm.set(Duration::from_millis(9)))
            };
            alarm.set(Duration::from_millis(1));
            assert!(alarm.wait(), "woken without the kick");
            kicker.join().unwrap();
            worker.join().unwrap();
        });
    }
}
