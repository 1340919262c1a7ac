//! Mapped lock guards and the other lock items of issue 14: `map` /
//! `try_map` on every mutex and rwlock guard, the mapped write guards,
//! `into_mapped`, the downgrades, `rwlock()` / `mutex()`, and
//! `RwLock::const_with_max_readers`. Each checks that the mapped guard
//! still holds the lock (others fail to take it until it is dropped).

#[macro_use]
mod support;

use std::sync::Arc;

use weft::sync::{
    MappedMutexGuard, Mutex, MutexGuard, OwnedMappedMutexGuard, OwnedMutexGuard,
    OwnedRwLockMappedWriteGuard, OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock,
    RwLockMappedWriteGuard, RwLockReadGuard, RwLockWriteGuard,
};

static LIMITED: RwLock<u8> = RwLock::const_with_max_readers(5, 2);

#[test]
fn const_with_max_readers_limits_readers() {
    let a = LIMITED.try_read().unwrap();
    let b = LIMITED.try_read().unwrap();
    assert!(LIMITED.try_read().is_err());
    drop(a);
    assert_eq!(*LIMITED.try_read().unwrap(), 5);
    drop(b);
    // A writer takes all (two) permits.
    let w = LIMITED.try_write().unwrap();
    assert!(LIMITED.try_read().is_err());
    drop(w);
}

#[test]
fn mutex_guard_map_and_try_map_hold_the_lock() {
    let mutex = Mutex::new((1, vec![1, 2, 3]));
    let guard = mutex.try_lock().unwrap();
    // Declining gives the guard back, still locked.
    let guard = MutexGuard::try_map(guard, |v| v.1.get_mut(10)).unwrap_err();
    assert!(mutex.try_lock().is_err());
    let mut items = MutexGuard::map(guard, |v| &mut v.1[..]);
    items[0] = 10;
    assert!(mutex.try_lock().is_err());
    let items = MappedMutexGuard::try_map(items, |s| s.get_mut(9)).unwrap_err();
    let mut last = MappedMutexGuard::try_map(items, |s| s.last_mut()).unwrap();
    *last = 30;
    assert!(mutex.try_lock().is_err());
    let mut last = MappedMutexGuard::map(last, |x| x);
    *last += 1;
    assert_eq!(format!("{last:?}"), "31");
    drop(last);
    assert_eq!(*mutex.try_lock().unwrap(), (1, vec![10, 2, 31]));
}

#[test]
fn owned_mutex_guard_map_keeps_lock_and_arc() {
    let mutex = Arc::new(Mutex::new((String::from("a"), 2)));
    let guard = mutex.clone().try_lock_owned().unwrap();
    let guard = OwnedMutexGuard::try_map(guard, |_| None::<&mut u8>).unwrap_err();
    let pair: OwnedMappedMutexGuard<(String, i32)> = OwnedMutexGuard::map(guard, |v| v);
    assert!(Arc::ptr_eq(OwnedMappedMutexGuard::mutex(&pair), &mutex));
    let mut text = OwnedMappedMutexGuard::map(pair, |p| &mut p.0);
    text.push('b');
    let mut text = OwnedMappedMutexGuard::try_map(text, |s| Some(s)).unwrap();
    text.push('c');
    let text = OwnedMappedMutexGuard::try_map(text, |_| None::<&mut u8>).unwrap_err();
    assert!(mutex.try_lock().is_err());
    // The guard holds an Arc: it outlives the caller's handle.
    assert_eq!(Arc::strong_count(&mutex), 2);
    let weak = Arc::downgrade(&mutex);
    drop(mutex);
    assert_eq!(&*text, "abc");
    drop(text);
    assert!(weak.upgrade().is_none());
}

#[test]
fn map_closure_panic_releases_the_lock() {
    let mutex = Mutex::new(1);
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = MutexGuard::map(mutex.try_lock().unwrap(), |_| -> &mut i32 {
            panic!("boom")
        });
    }));
    assert!(res.is_err());
    assert!(mutex.try_lock().is_ok());

    let lock = RwLock::new(1);
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = RwLockWriteGuard::map(lock.try_write().unwrap(), |_| -> &mut i32 {
            panic!("boom")
        });
    }));
    assert!(res.is_err());
    assert!(lock.try_write().is_ok());
}

#[test]
fn read_guard_map_keeps_one_read_permit() {
    let lock = RwLock::with_max_readers((1, 2), 2);
    let r = lock.try_read().unwrap();
    let r = RwLockReadGuard::try_map(r, |_| None::<&u8>).unwrap_err();
    let second = RwLockReadGuard::map(r, |p| &p.1);
    assert_eq!(*second, 2);
    // One permit held by the mapped guard: one more reader fits, a writer
    // does not.
    assert!(lock.try_write().is_err());
    let other = lock.try_read().unwrap();
    assert!(lock.try_read().is_err());
    drop(other);
    let first = RwLockReadGuard::try_map(lock.try_read().unwrap(), |p| Some(&p.0)).unwrap();
    assert_eq!(*first, 1);
    drop((second, first));
    assert!(lock.try_write().is_ok());
}

#[test]
fn write_guard_map_into_mapped_and_downgrades() {
    let lock = RwLock::with_max_readers((1, 2), 3);
    let w = lock.try_write().unwrap();
    let w = RwLockWriteGuard::try_map(w, |_| None::<&mut u8>).unwrap_err();
    let mut second = RwLockWriteGuard::map(w, |p| &mut p.1);
    *second = 20;
    assert!(lock.try_read().is_err());
    let second = RwLockMappedWriteGuard::try_map(second, |_| None::<&mut u8>).unwrap_err();
    let mut second = RwLockMappedWriteGuard::map(second, |x| x);
    *second += 1;
    let mut second = RwLockMappedWriteGuard::try_map(second, |x| Some(x)).unwrap();
    *second += 1;
    drop(second);
    assert_eq!(*lock.try_read().unwrap(), (1, 22));

    let mut whole = RwLockWriteGuard::into_mapped(lock.try_write().unwrap());
    whole.0 = 5;
    assert!(lock.try_read().is_err());
    drop(whole);

    // downgrade_map: a reader of a part; other readers get in, writers not.
    let first = RwLockWriteGuard::downgrade_map(lock.try_write().unwrap(), |p| &p.0);
    assert_eq!(*first, 5);
    let r1 = lock.try_read().unwrap();
    let r2 = lock.try_read().unwrap();
    assert!(lock.try_read().is_err(), "three readers at most");
    assert!(lock.try_write().is_err());
    drop((first, r1, r2));

    // try_downgrade_map declining keeps the write lock.
    let w = lock.try_write().unwrap();
    let w = RwLockWriteGuard::try_downgrade_map(w, |_| None::<&u8>).unwrap_err();
    assert!(lock.try_read().is_err());
    let r = RwLockWriteGuard::try_downgrade_map(w, |p| Some(&p.1)).unwrap();
    assert_eq!(*r, 22);
    assert!(lock.try_read().is_ok());
    drop(r);

    let r = lock.try_write().unwrap().downgrade();
    assert_eq!(*r, (5, 22));
    assert!(lock.try_write().is_err());
    drop(r);
    assert!(lock.try_write().is_ok());
}

#[test]
fn owned_rwlock_guards_map_downgrade_and_rwlock() {
    let lock = Arc::new(RwLock::with_max_readers((1, 2), 2));

    let r = lock.clone().try_read_owned().unwrap();
    assert!(Arc::ptr_eq(OwnedRwLockReadGuard::rwlock(&r), &lock));
    let r = OwnedRwLockReadGuard::try_map(r, |_| None::<&u8>).unwrap_err();
    let second = OwnedRwLockReadGuard::map(r, |p| &p.1);
    let second = OwnedRwLockReadGuard::try_map(second, |x| Some(x)).unwrap();
    assert!(Arc::ptr_eq(OwnedRwLockReadGuard::rwlock(&second), &lock));
    assert_eq!(*second, 2);
    assert!(lock.try_write().is_err());
    drop(second);

    let w = lock.clone().try_write_owned().unwrap();
    assert!(Arc::ptr_eq(OwnedRwLockWriteGuard::rwlock(&w), &lock));
    let w = OwnedRwLockWriteGuard::try_map(w, |_| None::<&mut u8>).unwrap_err();
    let mut first = OwnedRwLockWriteGuard::map(w, |p| &mut p.0);
    *first = 10;
    assert!(Arc::ptr_eq(
        OwnedRwLockMappedWriteGuard::rwlock(&first),
        &lock
    ));
    let first = OwnedRwLockMappedWriteGuard::try_map(first, |_| None::<&mut u8>).unwrap_err();
    let mut first = OwnedRwLockMappedWriteGuard::map(first, |x| x);
    *first += 1;
    let mut first = OwnedRwLockMappedWriteGuard::try_map(first, |x| Some(x)).unwrap();
    *first += 1;
    assert!(lock.try_read().is_err());
    drop(first);
    assert_eq!(*lock.try_read().unwrap(), (12, 2));

    let mut whole = OwnedRwLockWriteGuard::into_mapped(lock.clone().try_write_owned().unwrap());
    whole.1 = 3;
    assert!(lock.try_read().is_err());
    drop(whole);

    let r = lock.clone().try_write_owned().unwrap().downgrade();
    assert_eq!(*r, (12, 3));
    assert!(lock.try_read().is_ok());
    assert!(lock.try_write().is_err());
    drop(r);

    let part =
        OwnedRwLockWriteGuard::downgrade_map(lock.clone().try_write_owned().unwrap(), |p| &p.1);
    assert_eq!(*part, 3);
    let other = lock.try_read().unwrap();
    assert!(lock.try_read().is_err(), "two readers at most");
    drop((part, other));

    let w = lock.clone().try_write_owned().unwrap();
    let w = OwnedRwLockWriteGuard::try_downgrade_map(w, |_| None::<&u8>).unwrap_err();
    assert!(lock.try_read().is_err());
    let part = OwnedRwLockWriteGuard::try_downgrade_map(w, |p| Some(&p.0)).unwrap();
    assert_eq!(*part, 12);
    assert!(lock.try_write().is_err());
    drop(part);
    assert!(lock.try_write().is_ok());
}

#[test]
fn guards_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<MappedMutexGuard<'static, [u8]>>();
    send_sync::<OwnedMappedMutexGuard<Vec<u8>, [u8]>>();
    send_sync::<RwLockReadGuard<'static, [u8]>>();
    send_sync::<RwLockMappedWriteGuard<'static, [u8]>>();
    send_sync::<OwnedRwLockReadGuard<Vec<u8>, [u8]>>();
    send_sync::<OwnedRwLockMappedWriteGuard<Vec<u8>, [u8]>>();
}

rt_test! {
    use std::sync::Arc;
    use std::time::Duration;

    use weft::sync::{Mutex, OwnedMutexGuard, OwnedRwLockWriteGuard, RwLock};

    #[test]
    fn mapped_guard_blocks_a_waiting_task_until_dropped() {
        rt().block_on(async {
            let mutex = Arc::new(Mutex::new((0u32, 0u32)));
            let guard = mutex.clone().lock_owned().await;
            let mut second = OwnedMutexGuard::map(guard, |p| &mut p.1);
            let waiter = {
                let mutex = mutex.clone();
                weft::spawn(async move { *mutex.lock().await })
            };
            weft::time::sleep(Duration::from_millis(10)).await;
            assert!(!waiter.is_finished());
            *second = 7;
            // The mapped guard moves into another task and unlocks there.
            weft::spawn(async move { drop(second) }).await.unwrap();
            assert_eq!(waiter.await.unwrap(), (0, 7));
        })
    }

    #[test]
    fn mapped_write_guard_blocks_readers_until_dropped() {
        rt().block_on(async {
            let lock = Arc::new(RwLock::new(vec![0u8; 4]));
            let w = lock.clone().write_owned().await;
            let mut tail = OwnedRwLockWriteGuard::map(w, |v| &mut v[2..]);
            let reader = {
                let lock = lock.clone();
                weft::spawn(async move { lock.read().await.clone() })
            };
            weft::time::sleep(Duration::from_millis(10)).await;
            assert!(!reader.is_finished());
            tail[0] = 9;
            drop(tail);
            assert_eq!(reader.await.unwrap(), [0, 0, 9, 0]);
        })
    }
}
