//! Loom models of the semaphore's lock-free paths.

use super::*;
use loom::thread;
use std::future::Future;
use std::sync::Arc as StdArc;
use std::task::{Context, Waker};

#[test]
fn two_acquirers_and_release() {
    loom::model(|| {
        let sem = StdArc::new(Semaphore::new(1));
        let s2 = sem.clone();
        let t = thread::spawn(move || {
            loom::future::block_on(async {
                let p = s2.acquire().await.unwrap();
                drop(p);
            });
        });
        loom::future::block_on(async {
            let p = sem.acquire().await.unwrap();
            drop(p);
        });
        t.join().unwrap();
        assert_eq!(sem.available_permits(), 1);
        assert_eq!(crate::loom::lock(&sem.waiters).len(), 0);
    });
}

#[test]
fn two_acquirers_racing_add_permits() {
    loom::model(|| {
        let sem = StdArc::new(Semaphore::new(0));
        let (s1, s2) = (sem.clone(), sem.clone());
        let acquirer = thread::spawn(move || {
            loom::future::block_on(s1.acquire()).unwrap().forget();
        });
        let releaser = thread::spawn(move || s2.add_permits(2));
        loom::future::block_on(sem.acquire()).unwrap().forget();
        acquirer.join().unwrap();
        releaser.join().unwrap();
        assert_eq!(sem.available_permits(), 0);
        assert_eq!(crate::loom::lock(&sem.waiters).len(), 0);
    });
}

#[test]
fn release_wakes_queued_acquirer() {
    loom::model(|| {
        let sem = StdArc::new(Semaphore::new(0));
        let s2 = sem.clone();
        let t = thread::spawn(move || s2.add_permits(2));
        loom::future::block_on(async {
            sem.acquire_many(2).await.unwrap().forget();
        });
        t.join().unwrap();
        assert_eq!(sem.available_permits(), 0);
    });
}

#[test]
fn cancel_queued_acquire_racing_add_permits() {
    loom::model(|| {
        let sem = StdArc::new(Semaphore::new(1));
        let s2 = sem.clone();
        let t = thread::spawn(move || s2.add_permits(1));
        {
            let mut fut = Box::pin(sem.acquire_raw(3));
            // Takes the one available permit and queues for two more.
            let _ = fut.as_mut().poll(&mut Context::from_waker(Waker::noop()));
            drop(fut);
        }
        t.join().unwrap();
        assert_eq!(sem.available_permits(), 2);
        assert_eq!(crate::loom::lock(&sem.waiters).len(), 0);
    });
}

#[test]
fn cancel_racing_the_release_that_serves_it() {
    loom::model(|| {
        let sem = StdArc::new(Semaphore::new(0));
        let s2 = sem.clone();
        let mut fut = Box::pin(sem.acquire_raw(1));
        let _ = fut.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        let t = thread::spawn(move || s2.add_permits(1));
        // The permit reaches `fut` (which must hand it back on drop) or
        // `state`; either way the next acquirer gets it.
        drop(fut);
        loom::future::block_on(sem.acquire_raw(1)).unwrap();
        t.join().unwrap();
        assert_eq!(sem.available_permits(), 0);
        assert_eq!(crate::loom::lock(&sem.waiters).len(), 0);
    });
}

#[test]
fn close_racing_queued_acquire() {
    loom::model(|| {
        let sem = StdArc::new(Semaphore::new(0));
        let s2 = sem.clone();
        let t = thread::spawn(move || s2.close());
        let res = loom::future::block_on(sem.acquire_raw(1));
        assert!(res.is_err());
        t.join().unwrap();
    });
}

/// A release that would serve a queued waiter races `close` (invariant 6):
/// the waiter fails if it sees the close, even when the release served it
/// first, and whatever it was handed comes back when its future goes; so
/// in every interleaving the one permit is available at the end.
#[test]
fn close_racing_the_release_that_serves_a_waiter() {
    loom::model(|| {
        let sem = StdArc::new(Semaphore::new(1));
        let held = sem.clone().try_acquire_owned().unwrap();
        let s2 = sem.clone();
        let closer = thread::spawn(move || s2.close());
        let releaser = thread::spawn(move || drop(held));
        if loom::future::block_on(sem.acquire_raw(1)).is_ok() {
            sem.release(1);
        }
        closer.join().unwrap();
        releaser.join().unwrap();
        assert!(sem.is_closed());
        assert_eq!(sem.available_permits(), 1);
    });
}

/// The lock-free release (`WAITERS` clear) racing a waiter that is about to
/// enqueue: the permit reaches the waiter either through `state` or through
/// the queue, never neither.
#[test]
fn lock_free_release_racing_enqueue() {
    loom::model(|| {
        let sem = StdArc::new(Semaphore::new(1));
        let held = sem.clone().try_acquire_owned().unwrap();
        let t = thread::spawn(move || drop(held));
        loom::future::block_on(sem.acquire()).unwrap().forget();
        t.join().unwrap();
        assert_eq!(sem.state.load(Ordering::SeqCst), 0, "no permit, no flag");
        assert!(crate::loom::lock(&sem.waiters).is_empty());
    });
}

/// A `Mutex` handed over through the queue: the woken task completes by
/// reading its node's atomic `state`, without the lock, and must still see
/// the previous holder's write (the `UnsafeCell` accesses are checked).
#[test]
fn mutex_handoff_publishes_value() {
    loom::model(|| {
        let m = StdArc::new(crate::sync::Mutex::new(0usize));
        let m2 = m.clone();
        let t = thread::spawn(move || {
            loom::future::block_on(async { *m2.lock().await += 1 });
        });
        loom::future::block_on(async { *m.lock().await += 1 });
        t.join().unwrap();
        assert_eq!(*m.try_lock().unwrap(), 2);
    });
}
