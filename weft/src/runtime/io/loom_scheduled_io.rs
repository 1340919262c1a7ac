//! loom models of a resource's readiness (`scheduled_io.rs`): the driver
//! recording an event races a task waiting for it, and a task clearing the
//! readiness it found stale races a new event.

use super::ready::Ready;
use super::scheduled_io::{Direction, ScheduledIo};
use crate::loom::{thread, Arc};
use std::future::poll_fn;

fn set_and_wake(io: &ScheduledIo, ready: Ready) {
    let mut wakers = Vec::new();
    io.set_readiness(ready, &mut wakers);
    for w in wakers {
        w.wake();
    }
}

/// An event that arrives while the task registers its waker is never lost:
/// the task either sees the readiness or is woken.
#[test]
fn event_races_waiter_registration() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let driver = {
            let io = io.clone();
            thread::spawn(move || set_and_wake(&io, Ready::READABLE))
        };
        let ev = loom::future::block_on(poll_fn(|cx| io.poll_ready(cx, Direction::Read)));
        assert!(ev.ready.is_readable());
        driver.join().unwrap();
    });
}

/// The task read until `WouldBlock` and clears the readiness it observed,
/// while a new event arrives. Whatever the interleaving, the new event
/// survives (the tick moved on, so the clear is a no-op) or arrives after
/// the clear and wakes the waiting task: the second wait completes.
#[test]
fn clear_with_observed_tick_keeps_a_concurrent_event() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        set_and_wake(&io, Ready::READABLE);
        let observed = loom::future::block_on(poll_fn(|cx| io.poll_ready(cx, Direction::Read)));
        let driver = {
            let io = io.clone();
            thread::spawn(move || set_and_wake(&io, Ready::READABLE))
        };
        io.clear_readiness(observed);
        let again = loom::future::block_on(poll_fn(|cx| io.poll_ready(cx, Direction::Read)));
        assert!(again.ready.is_readable());
        driver.join().unwrap();
    });
}

/// Shutdown wakes a waiting task, which then sees the shutdown flag.
#[test]
fn shutdown_wakes_waiter() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let driver = {
            let io = io.clone();
            thread::spawn(move || io.shutdown())
        };
        let ev = loom::future::block_on(poll_fn(|cx| io.poll_ready(cx, Direction::Write)));
        assert!(ev.is_shutdown);
        driver.join().unwrap();
    });
}
