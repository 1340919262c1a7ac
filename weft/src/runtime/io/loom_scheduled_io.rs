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
        let ev =
            loom::future::block_on(poll_fn(|cx| io.poll_direction(cx, Direction::Read, false)));
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
        let observed =
            loom::future::block_on(poll_fn(|cx| io.poll_direction(cx, Direction::Read, false)));
        let driver = {
            let io = io.clone();
            thread::spawn(move || set_and_wake(&io, Ready::READABLE))
        };
        io.clear_readiness(observed);
        let again =
            loom::future::block_on(poll_fn(|cx| io.poll_direction(cx, Direction::Read, false)));
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
        let ev =
            loom::future::block_on(poll_fn(|cx| io.poll_direction(cx, Direction::Write, false)));
        assert!(ev.is_shutdown);
        driver.join().unwrap();
    });
}

/// A reader that also waits for errors (`poll_ready_or_error`, weft-ruby's
/// selector) is woken by an error alone, whichever comes first; the error
/// is no readiness for a plain read wait.
#[test]
fn an_error_alone_wakes_an_error_aware_reader() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let driver = {
            let io = io.clone();
            thread::spawn(move || set_and_wake(&io, Ready::ERROR))
        };
        let ev = loom::future::block_on(poll_fn(|cx| io.poll_direction(cx, Direction::Read, true)));
        assert!(ev.ready.is_error());
        driver.join().unwrap();
        // A plain read wait does not count the error as readiness.
        let plain = io.ready_now(super::ready::Interest::READABLE);
        assert!(plain.ready.is_empty());
    });
}

/// A `readiness(interest)` waiter woken by an event ends its wait even if
/// another task cleared the readiness before it polled again (as Tokio's
/// `Readiness` future): it never goes back to sleep on an event it was
/// woken for. (The waiter registers first: an event a task cleared before
/// the waiter was there is rightly not its to see.)
#[test]
fn a_woken_interest_waiter_ends_even_if_the_readiness_was_cleared() {
    use super::ready::Interest;
    use std::task::{Context, Waker};
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let mut key = None;
        let mut cx = Context::from_waker(Waker::noop());
        assert!(io
            .poll_interest(&mut cx, Interest::READABLE, &mut key)
            .is_pending());
        let driver = {
            let io = io.clone();
            thread::spawn(move || set_and_wake(&io, Ready::READABLE))
        };
        let clearer = {
            let io = io.clone();
            thread::spawn(move || {
                let seen = io.ready_now(Interest::READABLE);
                io.clear_readiness(seen);
            })
        };
        let ev = loom::future::block_on(poll_fn(|cx| {
            io.poll_interest(cx, Interest::READABLE, &mut key)
        }));
        io.drop_waiter(&mut key);
        assert!(!ev.is_shutdown);
        driver.join().unwrap();
        clearer.join().unwrap();
    });
}
