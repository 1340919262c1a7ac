//! Unit tests of the semaphore (not under loom).

use super::*;
use crate::sync::mpsc::test_support::CountWaker;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Waker};

fn poll(f: Pin<&mut Acquire<'_>>, w: &Waker) -> Poll<Result<(), AcquireError>> {
    f.poll(&mut Context::from_waker(w))
}

fn queued(sem: &Semaphore) -> usize {
    crate::loom::lock(&sem.waiters).len()
}

#[test]
fn fast_path_and_release() {
    let sem = Semaphore::new(2);
    let a = sem.try_acquire_many(2).unwrap();
    assert_eq!(sem.available_permits(), 0);
    assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::NoPermits));
    drop(a);
    assert_eq!(sem.available_permits(), 2);
}

#[test]
fn big_waiter_blocks_small_later_ones() {
    let sem = Semaphore::new(1);
    let (c1, w1) = CountWaker::new();
    let (c2, w2) = CountWaker::new();
    let mut big = Box::pin(sem.acquire_raw(3));
    assert!(poll(big.as_mut(), &w1).is_pending());
    // The one available permit went to the big waiter.
    assert_eq!(sem.available_permits(), 0);
    let mut small = Box::pin(sem.acquire_raw(1));
    assert!(poll(small.as_mut(), &w2).is_pending());
    assert!(sem.try_acquire().is_err());
    sem.release(1);
    assert_eq!((c1.count(), c2.count()), (0, 0));
    sem.release(1);
    assert_eq!(c1.count(), 1);
    assert_eq!(c2.count(), 0);
    assert!(poll(big.as_mut(), &w1).is_ready());
    sem.release(1);
    assert_eq!(c2.count(), 1);
    assert!(poll(small.as_mut(), &w2).is_ready());
    sem.release(3);
    assert_eq!(sem.available_permits(), 3);
    assert_eq!(crate::loom::lock(&sem.waiters).len(), 0);
}

#[test]
fn dropped_waiter_returns_partial_permits_and_waker() {
    let sem = Semaphore::new(2);
    let (_c1, w1) = CountWaker::new();
    let (c2, w2) = CountWaker::new();
    let mut big = Box::pin(sem.acquire_raw(5));
    assert!(poll(big.as_mut(), &w1).is_pending());
    let mut small = Box::pin(sem.acquire_raw(1));
    assert!(poll(small.as_mut(), &w2).is_pending());
    // The counter, `w1`, and the clone stored in the queue.
    assert_eq!(StdArc::strong_count(&_c1), 3, "waker stored");
    drop(big);
    assert_eq!(StdArc::strong_count(&_c1), 2, "waker freed on drop");
    assert_eq!(c2.count(), 1, "next waiter served");
    assert_eq!(sem.available_permits(), 1);
    assert!(poll(small.as_mut(), &w2).is_ready());
    sem.release(1);
    assert_eq!(sem.available_permits(), 2);
}

#[test]
fn dropped_served_waiter_returns_permits() {
    let sem = Semaphore::new(0);
    let (c, w) = CountWaker::new();
    let mut a = Box::pin(sem.acquire_raw(2));
    assert!(poll(a.as_mut(), &w).is_pending());
    sem.release(2);
    assert_eq!(c.count(), 1);
    assert_eq!(sem.available_permits(), 0);
    drop(a);
    assert_eq!(sem.available_permits(), 2);
    assert_eq!(queued(&sem), 0);
}

/// Invariant 6: a closed-out waiter keeps what was assigned to it until
/// its future is dropped, as in Tokio.
#[test]
fn close_fails_waiters_which_return_assigned_permits_when_dropped() {
    let sem = Semaphore::new(1);
    let (c, w) = CountWaker::new();
    let mut a = Box::pin(sem.acquire_raw(3));
    assert!(poll(a.as_mut(), &w).is_pending());
    sem.close();
    assert_eq!(c.count(), 1);
    assert_eq!(sem.available_permits(), 0);
    assert_eq!(poll(a.as_mut(), &w), Poll::Ready(Err(AcquireError(()))));
    assert_eq!(sem.available_permits(), 0);
    drop(a);
    assert_eq!(sem.available_permits(), 1);
    let mut b = Box::pin(sem.acquire_raw(1));
    assert_eq!(poll(b.as_mut(), &w), Poll::Ready(Err(AcquireError(()))));
    assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::Closed));
}

/// Invariant 6: a waiter served before `close` but polled after it
/// fails, as in Tokio (no permit is issued after `close`); its permits go
/// back when it is dropped.
#[test]
fn a_waiter_served_before_close_fails_when_polled_after_it() {
    let sem = Semaphore::new(0);
    let (c, w) = CountWaker::new();
    let mut a = Box::pin(sem.acquire_raw(2));
    assert!(poll(a.as_mut(), &w).is_pending());
    sem.release(2);
    assert_eq!(c.count(), 1);
    sem.close();
    assert_eq!(poll(a.as_mut(), &w), Poll::Ready(Err(AcquireError(()))));
    assert_eq!(sem.available_permits(), 0);
    drop(a);
    assert_eq!(sem.available_permits(), 2);
}

#[test]
fn waker_is_updated() {
    let sem = Semaphore::new(0);
    let (c1, w1) = CountWaker::new();
    let (c2, w2) = CountWaker::new();
    let mut a = Box::pin(sem.acquire_raw(1));
    assert!(poll(a.as_mut(), &w1).is_pending());
    assert!(poll(a.as_mut(), &w2).is_pending());
    sem.release(1);
    assert_eq!(c1.count(), 0);
    assert_eq!(c2.count(), 1);
    assert!(poll(a.as_mut(), &w2).is_ready());
}

#[test]
fn many_waiters_over_a_wake_batch() {
    let sem = Semaphore::new(0);
    let (c, w) = CountWaker::new();
    let mut futs: Vec<_> = (0..100).map(|_| Box::pin(sem.acquire_raw(1))).collect();
    for f in &mut futs {
        assert!(poll(f.as_mut(), &w).is_pending());
    }
    sem.add_permits(150);
    assert_eq!(c.count(), 100);
    assert_eq!(sem.available_permits(), 50);
    for f in &mut futs {
        assert!(poll(f.as_mut(), &w).is_ready());
    }
}

#[test]
fn permit_merge_split_forget() {
    let sem = Semaphore::new(4);
    let mut a = sem.try_acquire_many(2).unwrap();
    let b = sem.try_acquire().unwrap();
    a.merge(b);
    assert_eq!(a.num_permits(), 3);
    let c = a.split(2).unwrap();
    assert!(a.split(2).is_none());
    c.forget();
    drop(a);
    assert_eq!(sem.available_permits(), 2);
}

/// A guard's count is a `usize`: two guards of `u32::MAX - 1` permits
/// each merge into one, split again and give back every permit.
#[cfg(target_pointer_width = "64")]
#[test]
fn merged_permits_may_exceed_u32() {
    let half = u32::MAX - 1;
    let sem = std::sync::Arc::new(Semaphore::new(2 * half as usize));
    let mut a = sem.clone().try_acquire_many_owned(half).unwrap();
    let b = sem.clone().try_acquire_many_owned(half).unwrap();
    a.merge(b);
    assert_eq!(a.num_permits(), 2 * half as usize);
    let c = a.split(half as usize + 7).unwrap();
    assert_eq!(c.num_permits(), half as usize + 7);
    drop(a);
    assert_eq!(sem.available_permits(), half as usize - 7);
    drop(c);
    assert_eq!(sem.available_permits(), 2 * half as usize);
    let mut d = sem.try_acquire_many(half).unwrap();
    d.merge(sem.try_acquire_many(half).unwrap());
    assert_eq!(d.num_permits(), 2 * half as usize);
}

#[test]
#[should_panic(expected = "overflow")]
fn add_permits_overflow_panics() {
    let sem = Semaphore::new(Semaphore::MAX_PERMITS);
    sem.add_permits(1);
}

#[test]
fn budget_is_spent_and_refunded() {
    crate::coop::budget(|| {
        let sem = Semaphore::new(0);
        let before = crate::coop::remaining();
        let mut a = Box::pin(sem.acquire_raw(1));
        assert!(poll(a.as_mut(), Waker::noop()).is_pending());
        assert_eq!(crate::coop::remaining(), before);
        sem.release(1);
        assert!(poll(a.as_mut(), Waker::noop()).is_ready());
        assert_eq!(crate::coop::remaining(), before.map(|n| n - 1));
    });
}

#[test]
fn send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Semaphore>();
    assert_send_sync::<SemaphorePermit<'static>>();
    assert_send_sync::<OwnedSemaphorePermit>();
    assert_send_sync::<Acquire<'static>>();
}

/// Spend every unit of the current budget.
fn spend_the_budget(waker: &Waker) {
    let mut cx = Context::from_waker(waker);
    while crate::coop::has_remaining() {
        if let Poll::Ready(unit) = crate::coop::poll_proceed(&mut cx) {
            unit.made_progress();
        }
    }
}

/// A task out of budget still takes its place in line, as on Tokio: the
/// queue comes first and only the hand-over waits for the budget. So a
/// lock stays first come, first served when its first waiter had spent
/// its budget before it asked.
#[test]
fn a_waiter_out_of_budget_still_takes_its_place_in_line() {
    let sem = Semaphore::new(1);
    let first = sem.try_acquire().unwrap();
    let waker = Waker::noop();
    let mut a = Box::pin(sem.acquire_raw(1));
    crate::coop::budget(|| {
        spend_the_budget(waker);
        assert!(poll(a.as_mut(), waker).is_pending());
    });
    assert_eq!(queued(&sem), 1, "the waiter out of budget is queued");
    let mut b = Box::pin(sem.acquire_raw(1));
    assert!(poll(b.as_mut(), waker).is_pending());
    drop(first);
    assert!(
        poll(a.as_mut(), waker).is_ready(),
        "the first in line got the permit"
    );
    assert!(poll(b.as_mut(), waker).is_pending());
    // `a`'s permit goes back (as its guard's drop would), to `b`; `b`
    // dropped served gives it back too.
    sem.release(1);
    drop(a);
    drop(b);
    assert_eq!(sem.available_permits(), 1);
    // Permits that came while the budget was spent go back if the future
    // is dropped before it hands them over.
    let mut c = Box::pin(sem.acquire_raw(1));
    crate::coop::budget(|| {
        spend_the_budget(waker);
        assert!(poll(c.as_mut(), waker).is_pending());
    });
    drop(c);
    assert_eq!(sem.available_permits(), 1);
}
