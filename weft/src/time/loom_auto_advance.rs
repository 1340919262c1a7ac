//! Loom model of the frozen clock's auto-advance against the end of
//! `spawn_blocking` work: time must not jump while the runtime has work it
//! has not looked at.
//!
//! What is modelled: the real [`Clock`] count of blocking work in flight
//! and the real `time::Handle::park_timeout` decision, with the driver's
//! unpark flag as an `AtomicBool` (`runtime/driver.rs`, `Inner::woken`).
//! The blocking side does what completion does, in its order: the task it
//! wakes is queued (a flag here), the wake unparks the runtime (sets the
//! flag), then the blocking task's scheduler releases its in-flight mark
//! (`BlockingInFlight::finish`). The runtime side is one scheduling step:
//! look for a task; with none, park, where a frozen clock may jump to the
//! next timer.
//!
//! The check: a step that found no task never moves time, because the only
//! way the in-flight count reaches zero is after the task was queued and
//! the runtime unparked.

use super::driver::Handle;
use crate::loom::{Arc, AtomicBool, Ordering};
use loom::thread;
use std::time::{Duration, Instant};

#[test]
fn blocking_completion_is_seen_before_time_moves() {
    loom::model(|| {
        let time = Arc::new(Handle::new(true));
        let t0 = time.clock().now();
        // A timer an hour ahead: what a frozen clock would jump to.
        let armed = time.arm(
            Instant::now() + Duration::from_secs(3600),
            std::task::Waker::noop(),
        );
        assert!(matches!(armed, super::driver::Armed::Pending { .. }));
        time.clock().inhibit_auto_advance();
        let queued = Arc::new(AtomicBool::new(false));
        let woken = Arc::new(AtomicBool::new(false));

        let blocking = {
            let (time, queued, woken) = (time.clone(), queued.clone(), woken.clone());
            thread::spawn(move || {
                queued.store(true, Ordering::Release);
                woken.store(true, Ordering::Release);
                if time.clock().allow_auto_advance() {
                    woken.store(true, Ordering::Release);
                }
            })
        };

        if !queued.load(Ordering::Acquire) {
            let timeout = time.park_timeout(None, || woken.swap(false, Ordering::AcqRel));
            // Either it blocks (work in flight) or it returns at once to look
            // again; it never moves the frozen clock.
            assert_ne!(timeout, None);
            assert_eq!(time.clock().now(), t0, "time jumped over blocking work");
        }
        blocking.join().unwrap();
    });
}
