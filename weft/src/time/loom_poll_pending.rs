//! Loom model of a pending sleep polled again without the lock while the
//! driver fires its timer (`driver.rs`, `Handle::poll_fired`).
//!
//! What is modelled: the real time `Handle` (its lock, wheel and deadline
//! cells) with a frozen clock. A task's timer is due at 5 ms; the task
//! polls it again with the waker the timer holds (the lock-free path), or
//! with another one (the locked path, which replaces the stored waker),
//! while the driver moves the clock to 5 ms and fires what is due.
//!
//! The check is the one a task needs: a poll that says "pending" is
//! followed by a wake of the waker it was polled with, and by a poll that
//! says "fired". A wake-up is never lost, and a stale waker is never the
//! one woken.

use super::driver::{Armed, Handle};
use super::loom_lazy_extend::Count;
use crate::loom::Arc;
use loom::thread;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Waker;
use std::time::Duration;

fn counter() -> (std::sync::Arc<Count>, Waker) {
    let count = std::sync::Arc::new(Count(AtomicUsize::new(0)));
    let waker = Waker::from(count.clone());
    (count, waker)
}

/// Arms a timer 5 ms ahead with `first`, then polls it with `second`
/// while the driver fires it.
fn poll_while_it_fires(second_is_first: bool) {
    loom::model(move || {
        let time = Arc::new(Handle::new(true));
        let t0 = time.clock().now();
        let (first_wakes, first) = counter();
        let (second_wakes, second) = counter();
        let Armed::Pending {
            key,
            waker: mut stored,
            ..
        } = time.arm(t0 + Duration::from_millis(5), &first)
        else {
            panic!("a timer 5 ms ahead is pending");
        };
        let (polled_with, polled_wakes) = if second_is_first {
            (&first, &first_wakes)
        } else {
            (&second, &second_wakes)
        };

        let driver = {
            let time = time.clone();
            thread::spawn(move || {
                time.clock().advance(Duration::from_millis(5));
                time.process();
            })
        };
        let fired = time.poll_fired(key, &mut stored, polled_with);
        driver.join().unwrap();

        if !fired {
            assert_eq!(
                polled_wakes.0.load(Ordering::SeqCst),
                1,
                "said pending, and the waker it was polled with was not woken"
            );
            assert!(
                time.poll_fired(key, &mut stored, polled_with),
                "woken, and the next poll is not fired"
            );
        }
        // One wake in all: the timer fired once.
        let total = first_wakes.0.load(Ordering::SeqCst) + second_wakes.0.load(Ordering::SeqCst);
        assert_eq!(total, 1, "the timer woke {total} times");
        time.cancel(key);
        assert_eq!(time.entry_count(), 0);
    });
}

#[test]
fn a_poll_by_the_stored_waker_while_the_timer_fires_is_woken_or_fired() {
    poll_while_it_fires(true);
}

#[test]
fn a_poll_by_a_new_waker_while_the_timer_fires_is_woken_or_fired() {
    poll_while_it_fires(false);
}
