//! Unit tests of `Mutex` and its guards.

use super::*;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

#[test]
fn try_lock_and_unlock() {
    let m = Mutex::new(1);
    let mut g = m.try_lock().unwrap();
    *g += 1;
    assert_eq!(m.try_lock().err(), Some(TryLockError(())));
    drop(g);
    assert_eq!(*m.try_lock().unwrap(), 2);
}

#[test]
fn queued_lock_blocks_try_lock() {
    let m = Mutex::new(());
    let g = m.try_lock().unwrap();
    let mut fut = pin!(m.lock());
    let cx = &mut Context::from_waker(Waker::noop());
    assert!(fut.as_mut().poll(cx).is_pending());
    drop(g);
    // The permit went to the queued lock, not back to the mutex.
    assert!(m.try_lock().is_err());
    let Poll::Ready(g2) = fut.as_mut().poll(cx) else {
        panic!("queued lock not granted")
    };
    drop(g2);
    assert!(m.try_lock().is_ok());
}

#[test]
fn get_mut_into_inner_and_map() {
    let mut m = Mutex::new(vec![1, 2]);
    m.get_mut().push(3);
    {
        let mut g = MutexGuard::map(m.try_lock().unwrap(), |v| &mut v[..]);
        g[0] = 9;
        assert!(m.try_lock().is_err());
    }
    assert_eq!(m.into_inner(), [9, 2, 3]);
}

#[test]
fn debug_shows_value_or_locked() {
    let m = Mutex::new(7);
    assert_eq!(format!("{m:?}"), "Mutex { data: 7 }");
    let _g = m.try_lock().unwrap();
    assert_eq!(format!("{m:?}"), "Mutex { data: <locked> }");
}

#[test]
fn send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}
    assert_send_sync::<Mutex<std::cell::Cell<u8>>>();
    assert_send::<MutexGuard<'static, std::cell::Cell<u8>>>();
    assert_send_sync::<MutexGuard<'static, u8>>();
    assert_send_sync::<OwnedMutexGuard<u8>>();
    assert_send_sync::<MappedMutexGuard<'static, [u8]>>();
}
