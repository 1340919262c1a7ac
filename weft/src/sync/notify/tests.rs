//! Unit tests of `Notify` (not under loom).

use super::*;
use crate::sync::mpsc::test_support::CountWaker;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll};

fn poll(n: Pin<&mut Notified<'_>>, w: &Waker) -> Poll<()> {
    n.poll(&mut Context::from_waker(w))
}

#[test]
fn permit_is_stored_once() {
    let notify = Notify::new();
    notify.notify_one();
    notify.notify_one();
    assert!(poll(Box::pin(notify.notified()).as_mut(), Waker::noop()).is_ready());
    assert!(poll(Box::pin(notify.notified()).as_mut(), Waker::noop()).is_pending());
}

#[test]
fn notify_one_is_fifo_and_notify_last_is_lifo() {
    let notify = Notify::new();
    let (c1, w1) = CountWaker::new();
    let (c2, w2) = CountWaker::new();
    let (c3, w3) = CountWaker::new();
    let mut a = Box::pin(notify.notified());
    let mut b = Box::pin(notify.notified());
    let mut c = Box::pin(notify.notified());
    assert!(poll(a.as_mut(), &w1).is_pending());
    assert!(poll(b.as_mut(), &w2).is_pending());
    assert!(poll(c.as_mut(), &w3).is_pending());
    notify.notify_one();
    assert_eq!((c1.count(), c2.count(), c3.count()), (1, 0, 0));
    notify.notify_last();
    assert_eq!((c1.count(), c2.count(), c3.count()), (1, 0, 1));
    assert!(poll(a.as_mut(), &w1).is_ready());
    assert!(poll(b.as_mut(), &w2).is_pending());
    assert!(poll(c.as_mut(), &w3).is_ready());
    notify.notify_one();
    assert!(poll(b.as_mut(), &w2).is_ready());
    assert_eq!(bits(notify.state.load(Ordering::SeqCst)), EMPTY);
}

#[test]
fn notify_waiters_wakes_all_and_stores_no_permit() {
    let notify = Notify::new();
    let (c, w) = CountWaker::new();
    let mut a = Box::pin(notify.notified());
    let mut b = Box::pin(notify.notified());
    assert!(poll(a.as_mut(), &w).is_pending());
    assert!(poll(b.as_mut(), &w).is_pending());
    // Created before the call, never polled: also woken.
    let mut unpolled = Box::pin(notify.notified());
    notify.notify_waiters();
    assert_eq!(c.count(), 2);
    assert!(poll(a.as_mut(), &w).is_ready());
    assert!(poll(b.as_mut(), &w).is_ready());
    assert!(poll(unpolled.as_mut(), &w).is_ready());
    assert!(poll(Box::pin(notify.notified()).as_mut(), &w).is_pending());
}

#[test]
fn dropped_notified_passes_notification_on() {
    let notify = Notify::new();
    let (ca, wa) = CountWaker::new();
    let (cb, wb) = CountWaker::new();
    let mut a = Box::pin(notify.notified());
    let mut b = Box::pin(notify.notified());
    assert!(poll(a.as_mut(), &wa).is_pending());
    assert!(poll(b.as_mut(), &wb).is_pending());
    notify.notify_one();
    assert_eq!((ca.count(), cb.count()), (1, 0));
    drop(a);
    assert_eq!(cb.count(), 1);
    assert!(poll(b.as_mut(), &wb).is_ready());
}

#[test]
fn dropped_notified_with_no_successor_stores_permit() {
    let notify = Notify::new();
    let mut a = Box::pin(notify.notified());
    assert!(poll(a.as_mut(), Waker::noop()).is_pending());
    notify.notify_one();
    drop(a);
    assert!(poll(Box::pin(notify.notified()).as_mut(), Waker::noop()).is_ready());
}

#[test]
fn dropped_waiter_frees_waker_and_resets_state() {
    let notify = Notify::new();
    let (c, w) = CountWaker::new();
    let mut a = Box::pin(notify.notified());
    assert!(poll(a.as_mut(), &w).is_pending());
    assert_eq!(StdArc::strong_count(&c), 3);
    drop(a);
    assert_eq!(StdArc::strong_count(&c), 2);
    assert_eq!(bits(notify.state.load(Ordering::SeqCst)), EMPTY);
    // No waiter: the notification becomes a permit.
    notify.notify_one();
    assert!(poll(Box::pin(notify.notified()).as_mut(), &w).is_ready());
}

#[test]
fn enable_registers_without_waker() {
    let notify = Notify::new();
    let mut a = Box::pin(notify.notified());
    assert!(!a.as_mut().enable());
    notify.notify_one();
    assert!(a.as_mut().enable());
    assert!(poll(a.as_mut(), Waker::noop()).is_ready());
    // The notification went to `a`, not into a permit.
    assert!(poll(Box::pin(notify.notified()).as_mut(), Waker::noop()).is_pending());
}

#[test]
fn budget_is_spent_and_refunded() {
    crate::coop::budget(|| {
        let notify = Notify::new();
        let before = crate::coop::remaining();
        let mut a = Box::pin(notify.notified());
        assert!(poll(a.as_mut(), Waker::noop()).is_pending());
        assert_eq!(crate::coop::remaining(), before);
        notify.notify_one();
        assert!(poll(a.as_mut(), Waker::noop()).is_ready());
        assert_eq!(crate::coop::remaining(), before.map(|n| n - 1));
    });
}

#[test]
fn send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Notify>();
    assert_send_sync::<Notified<'static>>();
}
