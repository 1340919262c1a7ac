//! Loom model of a timer pushed later without the lock while the driver
//! fires it (`wheel/deadlines.rs`, "The handshake").
//!
//! What is modelled: the real time `Handle` (its lock, wheel and
//! deadline cells) with a frozen clock. The owner moves a timer due at 5
//! ms to 10 ms (`rearm`, as `Sleep::reset` does) while the driver moves
//! the clock to 5 ms and fires what is due (`process`, as after a park).
//!
//! The check: either the move lands before the driver's decision, and the
//! timer is not fired at 5 ms but at 10 ms, once; or it fired at 5 ms and
//! the move reports it unarmed (so the `Sleep` arms a new timer on its
//! next poll). Never a timer that says it is pending at 10 ms and fired at
//! 5 ms, or that fires twice.

use super::driver::{Armed, Handle, Rearmed};
use super::wheel::TimerKey;
use crate::loom::Arc;
use loom::thread;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Wake, Waker};
use std::time::{Duration, Instant};

/// A waker's wake count (shared with `loom_poll_pending.rs`).
pub(super) struct Count(pub(super) AtomicUsize);

impl Wake for Count {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A frozen clock's time driver with one timer, 5 ms ahead, whose waker
/// counts its wakes.
fn a_timer_at_5_ms() -> (Arc<Handle>, Instant, std::sync::Arc<Count>, TimerKey) {
    let time = Arc::new(Handle::new(true));
    let t0 = time.clock().now();
    let wakes = std::sync::Arc::new(Count(AtomicUsize::new(0)));
    let waker = Waker::from(wakes.clone());
    let Armed::Pending { key, .. } = time.arm(t0 + Duration::from_millis(5), &waker) else {
        panic!("a timer 5 ms ahead is pending");
    };
    (time, t0, wakes, key)
}

#[test]
fn a_later_deadline_set_while_the_timer_fires_is_kept_or_refused() {
    loom::model(|| {
        let (time, t0, wakes, key) = a_timer_at_5_ms();

        let driver = {
            let time = time.clone();
            thread::spawn(move || {
                time.clock().advance(Duration::from_millis(5));
                time.process();
            })
        };
        let moved = time.rearm(key, t0 + Duration::from_millis(10));
        driver.join().unwrap();

        match moved {
            Rearmed::Pending { key, .. } => {
                assert_eq!(
                    wakes.0.load(Ordering::SeqCst),
                    0,
                    "fired before its new deadline"
                );
                assert!(!time.has_fired(key));
                time.clock().advance(Duration::from_millis(5));
                time.process();
                assert_eq!(
                    wakes.0.load(Ordering::SeqCst),
                    1,
                    "not fired at its new deadline"
                );
                assert!(time.has_fired(key));
                time.cancel(key);
            }
            Rearmed::Unarmed => {
                assert_eq!(
                    wakes.0.load(Ordering::SeqCst),
                    1,
                    "refused, yet never fired"
                );
            }
        }
        assert_eq!(time.entry_count(), 0);
    });
}

/// Two moves against two driver turns: the timer is re-placed at 10 ms by
/// the first turn while its owner moves it again, to 15 ms.
#[test]
fn a_timer_moved_again_while_it_is_re_placed_fires_once_at_the_last_deadline() {
    loom::model(|| {
        let (time, t0, wakes, key) = a_timer_at_5_ms();

        let driver = {
            let time = time.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    time.clock().advance(Duration::from_millis(5));
                    time.process();
                }
            })
        };
        let first = time.rearm(key, t0 + Duration::from_millis(10));
        let second = match first {
            Rearmed::Pending { key, .. } => Some(time.rearm(key, t0 + Duration::from_millis(15))),
            Rearmed::Unarmed => None,
        };
        driver.join().unwrap();

        // The driver is at 10 ms.
        match second {
            Some(Rearmed::Pending { key, .. }) => {
                assert_eq!(wakes.0.load(Ordering::SeqCst), 0, "fired before 15 ms");
                time.clock().advance(Duration::from_millis(5));
                time.process();
                assert_eq!(wakes.0.load(Ordering::SeqCst), 1, "not fired at 15 ms");
                time.cancel(key);
            }
            // Refused: it had fired (at 5 or 10 ms), once.
            Some(Rearmed::Unarmed) | None => {
                assert_eq!(
                    wakes.0.load(Ordering::SeqCst),
                    1,
                    "refused, yet not fired once"
                );
            }
        }
        assert_eq!(time.entry_count(), 0);
    });
}
