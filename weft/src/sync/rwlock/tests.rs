//! Unit tests of `RwLock` and its guards.

use super::*;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

#[test]
fn readers_share_writers_exclude() {
    let lock = RwLock::new(0);
    let r1 = lock.try_read().unwrap();
    let r2 = lock.try_read().unwrap();
    assert!(lock.try_write().is_err());
    drop((r1, r2));
    let mut w = lock.try_write().unwrap();
    *w = 1;
    assert!(lock.try_read().is_err());
    drop(w);
    assert_eq!(*lock.try_read().unwrap(), 1);
}

#[test]
fn waiting_writer_blocks_new_readers() {
    let lock = RwLock::new(0);
    let cx = &mut Context::from_waker(Waker::noop());
    let r = lock.try_read().unwrap();
    let mut w = pin!(lock.write());
    assert!(w.as_mut().poll(cx).is_pending());
    // A writer is queued: new readers must wait behind it.
    assert!(lock.try_read().is_err());
    let mut r2 = pin!(lock.read());
    assert!(r2.as_mut().poll(cx).is_pending());
    drop(r);
    let Poll::Ready(mut wg) = w.as_mut().poll(cx) else {
        panic!("writer not granted")
    };
    *wg = 7;
    assert!(r2.as_mut().poll(cx).is_pending());
    drop(wg);
    let Poll::Ready(rg) = r2.as_mut().poll(cx) else {
        panic!("reader not granted")
    };
    assert_eq!(*rg, 7);
}

#[test]
fn max_readers_and_downgrade() {
    let lock = RwLock::with_max_readers(1, 2);
    let w = lock.try_write().unwrap();
    let r = RwLockWriteGuard::downgrade(w);
    let r2 = lock.try_read().unwrap();
    assert!(lock.try_read().is_err(), "only two readers");
    drop((r, r2));
    assert_eq!(lock.into_inner(), 1);
}

#[test]
fn send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RwLock<u8>>();
    assert_send_sync::<RwLockReadGuard<'static, u8>>();
    assert_send_sync::<RwLockWriteGuard<'static, u8>>();
    assert_send_sync::<OwnedRwLockReadGuard<u8>>();
    assert_send_sync::<OwnedRwLockWriteGuard<u8>>();
}
