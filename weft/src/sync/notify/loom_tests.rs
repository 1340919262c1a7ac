//! Loom models of `Notify`.

use super::*;
use loom::thread;
use std::future::Future;
use std::sync::Arc as StdArc;
use std::task::Context;

#[test]
fn notify_one_racing_registration() {
    loom::model(|| {
        let notify = StdArc::new(Notify::new());
        let n2 = notify.clone();
        let t = thread::spawn(move || n2.notify_one());
        loom::future::block_on(notify.notified());
        t.join().unwrap();
        // The notification was consumed, not also stored.
        assert_eq!(bits(notify.state.load(Ordering::SeqCst)), EMPTY);
    });
}

#[test]
fn dropped_notified_passes_permit_on() {
    loom::model(|| {
        let notify = StdArc::new(Notify::new());
        let n2 = notify.clone();
        let mut a = Box::pin(notify.notified());
        let mut b = Box::pin(notify.notified());
        let cx = &mut Context::from_waker(Waker::noop());
        assert!(a.as_mut().poll(cx).is_pending());
        assert!(b.as_mut().poll(cx).is_pending());
        let t = thread::spawn(move || n2.notify_one());
        drop(a);
        loom::future::block_on(b);
        t.join().unwrap();
    });
}

#[test]
fn notify_waiters_racing_registration() {
    loom::model(|| {
        let notify = StdArc::new(Notify::new());
        let n2 = notify.clone();
        let notified = notify.notified();
        let t = thread::spawn(move || n2.notify_waiters());
        loom::future::block_on(notified);
        t.join().unwrap();
    });
}

/// A queued waiter woken by `notify_one` completes by reading its
/// node's atomic `state`, without the lock; the notification is
/// consumed exactly once.
#[test]
fn woken_waiter_completes_without_lock() {
    loom::model(|| {
        let notify = StdArc::new(Notify::new());
        let n2 = notify.clone();
        let mut a = Box::pin(notify.notified());
        assert!(!a.as_mut().enable());
        let t = thread::spawn(move || n2.notify_one());
        loom::future::block_on(a);
        t.join().unwrap();
        assert_eq!(bits(notify.state.load(Ordering::SeqCst)), EMPTY);
        assert!(crate::loom::lock(&notify.waiters).is_empty());
    });
}

/// A queued waiter dropped while `notify_one` serves it: the
/// notification becomes the stored permit either way.
#[test]
fn dropped_waiter_racing_notify_one() {
    loom::model(|| {
        let notify = StdArc::new(Notify::new());
        let n2 = notify.clone();
        let mut a = Box::pin(notify.notified());
        assert!(!a.as_mut().enable());
        let t = thread::spawn(move || n2.notify_one());
        drop(a);
        t.join().unwrap();
        assert_eq!(bits(notify.state.load(Ordering::SeqCst)), NOTIFIED);
        assert!(crate::loom::lock(&notify.waiters).is_empty());
    });
}

#[test]
fn owned_notified_racing_notify_one() {
    // `OwnedNotified` runs the same core as `Notified`: a `notify_one` racing
    // its first poll on another thread is neither lost nor also stored.
    loom::model(|| {
        let notify = StdArc::new(Notify::new());
        let n2 = notify.clone();
        let t = thread::spawn(move || n2.notify_one());
        loom::future::block_on(notify.clone().notified_owned());
        t.join().unwrap();
        assert_eq!(bits(notify.state.load(Ordering::SeqCst)), EMPTY);
    });
}
