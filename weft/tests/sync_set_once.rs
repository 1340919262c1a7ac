//! `SetOnce`, `OnceCell::const_new_with`, `Notify::notified_owned` and the
//! `Semaphore::blocking_*` methods (issue 14), on every runtime flavour.

#[macro_use]
mod support;

use std::sync::Arc;

use weft::sync::{OnceCell, Semaphore, SetOnce, SetOnceError};

static PRESET: OnceCell<u32> = OnceCell::const_new_with(3);
static EMPTY_SET_ONCE: SetOnce<u32> = SetOnce::const_new();
static PRESET_SET_ONCE: SetOnce<u32> = SetOnce::const_new_with(9);

#[test]
fn once_cell_const_new_with_is_initialised() {
    assert!(PRESET.initialized());
    assert_eq!(PRESET.get(), Some(&3));
    assert!(PRESET.set(4).unwrap_err().is_already_init_err());
}

#[test]
fn set_once_const_constructors() {
    assert_eq!(PRESET_SET_ONCE.get(), Some(&9));
    assert_eq!(PRESET_SET_ONCE.set(1), Err(SetOnceError(1)));
    assert!(!EMPTY_SET_ONCE.initialized());
}

#[test]
fn set_once_set_get_into_inner() {
    let cell = SetOnce::new();
    assert_eq!(cell.get(), None);
    assert!(!cell.initialized());
    assert_eq!(cell.set(String::from("a")), Ok(()));
    assert!(cell.initialized());
    assert_eq!(
        cell.set(String::from("b")),
        Err(SetOnceError(String::from("b")))
    );
    assert_eq!(cell.get().map(String::as_str), Some("a"));
    assert_eq!(cell.clone().into_inner().as_deref(), Some("a"));
    assert_eq!(cell.into_inner().as_deref(), Some("a"));
    assert_eq!(SetOnce::<u8>::new_with(None).into_inner(), None);
    assert_eq!(SetOnce::from(4).get(), Some(&4));
    assert_eq!(format!("{}", SetOnceError(1)), "SetOnceError");
}

#[test]
fn set_once_drops_its_value_once() {
    let value = Arc::new(());
    let cell = SetOnce::new();
    cell.set(value.clone()).unwrap();
    assert_eq!(Arc::strong_count(&value), 2);
    drop(cell);
    assert_eq!(Arc::strong_count(&value), 1);
}

#[test]
fn racing_sets_have_one_winner() {
    for _ in 0..100 {
        let cell = Arc::new(SetOnce::new());
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let cell = cell.clone();
                std::thread::spawn(move || cell.set(i).is_ok().then_some(i))
            })
            .collect();
        let winners: Vec<u32> = threads
            .into_iter()
            .filter_map(|t| t.join().unwrap())
            .collect();
        assert_eq!(winners.len(), 1);
        assert_eq!(cell.get(), Some(&winners[0]));
    }
}

#[test]
fn handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SetOnce<u8>>();
    send_sync::<weft::sync::futures::OwnedNotified>();
    send_sync::<weft::sync::futures::Notified<'static>>();
}

#[test]
fn blocking_acquire_waits_for_a_release() {
    let sem = Arc::new(Semaphore::new(1));
    let held = sem.try_acquire().unwrap();
    let s = sem.clone();
    let waiter = std::thread::spawn(move || {
        let permit = s.blocking_acquire().unwrap();
        assert_eq!(permit.num_permits(), 1);
        assert!(std::ptr::eq(permit.semaphore(), &*s));
    });
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(!waiter.is_finished());
    drop(held);
    waiter.join().unwrap();
    assert_eq!(sem.available_permits(), 1);

    let many = sem.blocking_acquire_many(1).unwrap();
    assert_eq!(sem.available_permits(), 0);
    drop(many);
    let owned = sem.clone().blocking_acquire_owned().unwrap();
    assert!(Arc::ptr_eq(owned.semaphore(), &sem));
    drop(owned);
    let owned_many = sem.clone().blocking_acquire_many_owned(1).unwrap();
    assert_eq!(owned_many.num_permits(), 1);
    drop(owned_many);
    sem.close();
    assert!(sem.blocking_acquire().is_err());
}

rt_test! {
    use std::pin::pin;
    use std::sync::Arc;
    use std::time::Duration;

    use weft::sync::futures::OwnedNotified;
    use weft::sync::{Notify, Semaphore, SetOnce};

    #[test]
    fn wait_wakes_when_set_from_another_task() {
        rt().block_on(async {
            let cell = Arc::new(SetOnce::new());
            let waiters: Vec<_> = (0..3)
                .map(|_| {
                    let cell = cell.clone();
                    weft::spawn(async move { *cell.wait().await })
                })
                .collect();
            weft::time::sleep(Duration::from_millis(10)).await;
            for w in &waiters {
                assert!(!w.is_finished());
            }
            let setter = cell.clone();
            weft::spawn(async move { setter.set(11).unwrap() }).await.unwrap();
            for w in waiters {
                assert_eq!(w.await.unwrap(), 11);
            }
            // Already set: returns at once.
            assert_eq!(*cell.wait().await, 11);
        })
    }

    #[test]
    fn wait_is_cancel_safe() {
        rt().block_on(async {
            let cell = SetOnce::new();
            let timed_out = weft::time::timeout(Duration::from_millis(5), cell.wait()).await;
            assert!(timed_out.is_err());
            cell.set(1).unwrap();
            assert_eq!(*cell.wait().await, 1);
        })
    }

    #[test]
    #[should_panic(expected = "Semaphore::blocking_acquire was called on a thread that drives a weft runtime")]
    fn blocking_acquire_panics_inside_runtime() {
        rt().block_on(async {
            let sem = Semaphore::new(1);
            let _ = sem.blocking_acquire();
        })
    }

    #[test]
    #[should_panic(expected = "Semaphore::blocking_acquire_many_owned was called on a thread that drives")]
    fn blocking_acquire_many_owned_panics_inside_runtime() {
        rt().block_on(async {
            let sem = Arc::new(Semaphore::new(1));
            let _ = sem.blocking_acquire_many_owned(1);
        })
    }

    #[test]
    fn blocking_acquire_works_in_spawn_blocking() {
        rt().block_on(async {
            let sem = Arc::new(Semaphore::new(1));
            let s = sem.clone();
            let n = weft::task::spawn_blocking(move || s.blocking_acquire_many(1).unwrap().num_permits())
                .await
                .unwrap();
            assert_eq!(n, 1);
            assert_eq!(sem.available_permits(), 1);
        })
    }

    #[test]
    fn notified_owned_moves_into_a_task() {
        rt().block_on(async {
            let notify = Arc::new(Notify::new());
            // Created before notify_waiters, polled only after: still counts.
            let early: OwnedNotified = notify.clone().notified_owned();
            let woken = weft::spawn(early);
            notify.notify_waiters();
            woken.await.unwrap();

            // A stored permit completes a later owned future at once.
            notify.notify_one();
            notify.clone().notified_owned().await;

            // enable() queues the future, so notify_one goes to it, not to
            // a permit that another future could take.
            let mut owned = pin!(notify.clone().notified_owned());
            assert!(!owned.as_mut().enable());
            notify.notify_one();
            let mut other = pin!(notify.notified());
            assert!(!other.as_mut().enable());
            owned.await;
            let timed_out = weft::time::timeout(Duration::from_millis(5), other).await;
            assert!(timed_out.is_err());
        })
    }

    #[test]
    fn dropped_owned_notified_passes_notification_on() {
        rt().block_on(async {
            let notify = Arc::new(Notify::new());
            let mut first = Box::pin(notify.clone().notified_owned());
            assert!(!first.as_mut().enable());
            let mut second = pin!(notify.notified());
            assert!(!second.as_mut().enable());
            notify.notify_one();
            // `first` got it; dropping it unconsumed hands it to `second`.
            drop(first);
            weft::time::timeout(Duration::from_secs(5), second).await.unwrap();
        })
    }
}
