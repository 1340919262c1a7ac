//! Behaviour of `weft::sync` that must match Tokio's (issue #10), through the
//! public API, on every runtime flavour (`rt_test!` in `support/mod.rs`).
//!
//! The "reentrant waker" tests hand a primitive a waker whose `Drop` or
//! `wake` calls back into that same primitive. If the primitive drops or
//! wakes it while holding its own lock, the callback blocks on that lock:
//! each such body runs under `support::watchdog`, which turns the hang
//! into a failure.

#[macro_use]
mod support;

/// How long a reentrant-waker body may run before it counts as hung.
const HANG: std::time::Duration = std::time::Duration::from_secs(10);

mod helpers {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Wake, Waker};

    /// A waker that runs `on_wake` at every wake and `on_drop` when its
    /// last clone is dropped.
    struct Hook {
        on_wake: Box<dyn Fn() + Send + Sync>,
        on_drop: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    }

    impl Wake for Hook {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            (self.on_wake)();
        }
    }

    impl Drop for Hook {
        fn drop(&mut self) {
            if let Some(f) = self.on_drop.get_mut().unwrap().take() {
                f();
            }
        }
    }

    /// A waker that calls `f` once, when its last clone is dropped. Give
    /// the primitive a reference and drop the returned one, so the
    /// primitive's clone is the last.
    pub fn on_drop(f: impl FnOnce() + Send + 'static) -> Waker {
        Waker::from(Arc::new(Hook {
            on_wake: Box::new(|| {}),
            on_drop: Mutex::new(Some(Box::new(f))),
        }))
    }

    /// A waker that calls `f` every time it is woken.
    pub fn on_wake(f: impl Fn() + Send + Sync + 'static) -> Waker {
        Waker::from(Arc::new(Hook {
            on_wake: Box::new(f),
            on_drop: Mutex::new(None),
        }))
    }

    /// Polls `fut` once with `waker`.
    pub fn poll_with<F: Future + ?Sized>(fut: Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
        fut.poll(&mut Context::from_waker(waker))
    }

    /// Polls `fut` once with `waker`, then, unless that completed it, awaits
    /// it with the task's own waker.
    pub async fn poll_then_await<F: Future + ?Sized>(
        mut fut: Pin<&mut F>,
        waker: &Waker,
    ) -> F::Output {
        match poll_with(fut.as_mut(), waker) {
            Poll::Ready(out) => out,
            Poll::Pending => fut.await,
        }
    }

    /// A value whose `clone` panics when `poisoned`.
    #[derive(Debug, PartialEq)]
    pub struct PanicOnClone {
        pub id: u32,
        pub poisoned: bool,
    }

    impl Clone for PanicOnClone {
        fn clone(&self) -> Self {
            assert!(!self.poisoned, "clone of a poisoned value ({})", self.id);
            PanicOnClone {
                id: self.id,
                poisoned: false,
            }
        }
    }
}

/// The channel handles are `Unpin` whatever `T` is, as in Tokio. Checked at
/// compile time: the file does not build otherwise.
#[test]
fn channel_handles_are_unpin_for_any_t() {
    fn assert_unpin<T: Unpin>() {}
    type P = std::marker::PhantomPinned;
    assert_unpin::<weft::sync::mpsc::Receiver<P>>();
    assert_unpin::<weft::sync::mpsc::UnboundedReceiver<P>>();
    assert_unpin::<weft::sync::mpsc::Sender<P>>();
    assert_unpin::<weft::sync::mpsc::UnboundedSender<P>>();
    assert_unpin::<weft::sync::broadcast::Receiver<P>>();
    assert_unpin::<weft::sync::broadcast::Sender<P>>();
    assert_unpin::<weft::sync::watch::Receiver<P>>();
    assert_unpin::<weft::sync::watch::Sender<P>>();
    assert_unpin::<weft::sync::oneshot::Receiver<P>>();
    assert_unpin::<weft::sync::oneshot::Sender<P>>();
    assert_unpin::<weft::sync::mpsc::WeakSender<P>>();
    assert_unpin::<weft::sync::mpsc::WeakUnboundedSender<P>>();
    assert_unpin::<weft::sync::mpsc::OwnedPermit<P>>();
    assert_unpin::<weft::sync::mpsc::Permit<'static, P>>();
    assert_unpin::<weft::sync::mpsc::PermitIterator<'static, P>>();
}

rt_test! {
    use std::pin::pin;
    use std::sync::{Arc, Mutex};
    use std::task::Waker;
    use weft::sync::{broadcast, mpsc, oneshot, watch, Notify, Semaphore};

    use crate::helpers::{on_drop, on_wake, poll_then_await, poll_with, PanicOnClone};
    use crate::support::watchdog;
    use crate::HANG;

    // ----- reentrant wakers ----------------------------------------------

    #[test]
    fn broadcast_waker_dropped_on_reregister_may_send() {
        watchdog(HANG, |_| rt().block_on(async {
            let (tx, mut rx) = broadcast::channel(4);
            let tx2 = tx.clone();
            let mut fut = pin!(rx.recv());
            let first = on_drop(move || {
                tx2.send(1).unwrap();
            });
            assert!(poll_with(fut.as_mut(), &first).is_pending());
            drop(first);
            // A different waker replaces the stored one, which sends.
            assert_eq!(poll_then_await(fut, Waker::noop()).await, Ok(1));
            drop(tx);
        }));
    }

    #[test]
    fn broadcast_waker_dropped_on_cancel_may_send() {
        watchdog(HANG, |_| rt().block_on(async {
            let (tx, mut rx) = broadcast::channel(4);
            let tx2 = tx.clone();
            {
                let mut fut = pin!(rx.recv());
                let w = on_drop(move || {
                    tx2.send(7).unwrap();
                });
                assert!(poll_with(fut.as_mut(), &w).is_pending());
                drop(w);
            } // the pending recv is cancelled: its waker goes
            assert_eq!(rx.try_recv(), Ok(7));
            drop(tx);
        }));
    }

    #[test]
    fn broadcast_woken_waker_may_send() {
        watchdog(HANG, |_| rt().block_on(async {
            let (tx, mut rx) = broadcast::channel(4);
            let tx2 = tx.clone();
            let sent = Arc::new(Mutex::new(false));
            let w = on_wake(move || {
                let mut sent = sent.lock().unwrap();
                if !*sent {
                    *sent = true;
                    tx2.send(2).unwrap();
                }
            });
            {
                let mut fut = pin!(rx.recv());
                assert!(poll_with(fut.as_mut(), &w).is_pending());
                tx.send(1).unwrap();
                assert_eq!(fut.await, Ok(1));
            }
            assert_eq!(rx.recv().await, Ok(2));
        }));
    }

    #[test]
    fn notify_waker_dropped_or_woken_may_notify() {
        watchdog(HANG, |_| rt().block_on(async {
            let notify = Arc::new(Notify::new());
            // Replaced on a later poll, then the cancelled waiter's waker.
            {
                let mut fut = pin!(notify.notified());
                let n = notify.clone();
                let w = on_drop(move || n.notify_one());
                assert!(poll_with(fut.as_mut(), &w).is_pending());
                drop(w);
                let n = notify.clone();
                let w = on_drop(move || n.notify_one());
                assert!(poll_with(fut.as_mut(), &w).is_pending());
                drop(w);
                // Both permits collapse into one stored permit.
            }
            notify.notified().await;
            // A woken waker notifies again.
            let mut fut = pin!(notify.notified());
            let n = notify.clone();
            let w = on_wake(move || n.notify_waiters());
            assert!(poll_with(fut.as_mut(), &w).is_pending());
            notify.notify_one();
            fut.await;
        }));
    }

    #[test]
    fn mpsc_waker_dropped_may_send_and_close() {
        watchdog(HANG, |_| rt().block_on(async {
            let (tx, mut rx) = mpsc::channel::<u32>(1);
            {
                let mut fut = pin!(rx.recv());
                let tx2 = tx.clone();
                let w = on_drop(move || tx2.try_send(1).unwrap());
                assert!(poll_with(fut.as_mut(), &w).is_pending());
                drop(w);
                assert_eq!(poll_then_await(fut, Waker::noop()).await, Some(1));
            }

            // `closed()`: replaced waker, then the cancelled future's.
            let tx3 = tx.clone();
            {
                let mut closed = pin!(tx.closed());
                let w = on_drop(move || tx3.try_send(2).unwrap());
                assert!(poll_with(closed.as_mut(), &w).is_pending());
                drop(w);
                assert!(poll_with(closed.as_mut(), Waker::noop()).is_pending());
            }
            assert_eq!(rx.recv().await, Some(2));

            // A sender waiting for capacity.
            tx.try_send(3).unwrap();
            let tx4 = tx.clone();
            {
                let mut send = pin!(tx.send(4));
                let w = on_drop(move || {
                    let _ = tx4.try_send(5);
                });
                assert!(poll_with(send.as_mut(), &w).is_pending());
                drop(w);
                assert!(poll_with(send.as_mut(), Waker::noop()).is_pending());
            }
            assert_eq!(rx.recv().await, Some(3));

            // Dropping the receiver drops its waker.
            let (tx, mut rx) = mpsc::unbounded_channel::<u32>();
            let tx2 = tx.clone();
            {
                let mut fut = pin!(rx.recv());
                let w = on_drop(move || assert!(tx2.send(1).is_err()));
                assert!(poll_with(fut.as_mut(), &w).is_pending());
                drop(w);
            }
            drop(rx);
            assert!(tx.is_closed());
        }));
    }

    #[test]
    fn semaphore_waker_dropped_or_woken_may_release() {
        watchdog(HANG, |_| rt().block_on(async {
            let sem = Arc::new(Semaphore::new(0));
            {
                let mut acq = pin!(sem.acquire());
                let s = sem.clone();
                let w = on_drop(move || s.add_permits(1));
                assert!(poll_with(acq.as_mut(), &w).is_pending());
                drop(w);
                let s = sem.clone();
                let w = on_drop(move || s.add_permits(1));
                // The first waker is replaced and adds a permit, which
                // completes this acquire.
                let permit = poll_then_await(acq, &w).await.unwrap();
                drop(w);
                permit.forget();
            }
            assert_eq!(sem.available_permits(), 1);
            sem.forget_permits(1);
            // A cancelled waiter's waker releases.
            {
                let mut acq = pin!(sem.acquire());
                let s = sem.clone();
                let w = on_drop(move || s.add_permits(2));
                assert!(poll_with(acq.as_mut(), &w).is_pending());
                drop(w);
            }
            assert_eq!(sem.available_permits(), 2);
            // A woken waker takes and releases the lock of a Mutex.
            let m = Arc::new(weft::sync::Mutex::new(0));
            let g = m.lock().await;
            let mut lock = pin!(m.lock());
            let m2 = m.clone();
            let w = on_wake(move || {
                if let Ok(mut g) = m2.try_lock() {
                    *g += 1;
                }
            });
            assert!(poll_with(lock.as_mut(), &w).is_pending());
            drop(g);
            assert_eq!(*lock.await, 0);
        }));
    }

    #[test]
    fn watch_waker_dropped_may_send_and_drop_receiver() {
        watchdog(HANG, |_| rt().block_on(async {
            let (tx, mut rx) = watch::channel(0);
            let tx = Arc::new(tx);
            {
                let mut changed = pin!(rx.changed());
                let t = tx.clone();
                let w = on_drop(move || t.send(1).unwrap());
                assert!(poll_with(changed.as_mut(), &w).is_pending());
                drop(w);
                poll_then_await(changed, Waker::noop()).await.unwrap();
            }
            assert_eq!(*rx.borrow_and_update(), 1);
            // The cancelled `changed()`'s waker sends.
            {
                let mut changed = pin!(rx.changed());
                let t = tx.clone();
                let w = on_drop(move || t.send(2).unwrap());
                assert!(poll_with(changed.as_mut(), &w).is_pending());
                drop(w);
            }
            assert!(rx.has_changed().unwrap());
            // `closed()`: the waker drops the last receiver.
            let slot = Arc::new(Mutex::new(Some(rx)));
            {
                let mut closed = pin!(tx.closed());
                let s = slot.clone();
                let w = on_drop(move || drop(s.lock().unwrap().take()));
                assert!(poll_with(closed.as_mut(), &w).is_pending());
                drop(w);
                poll_then_await(closed, Waker::noop()).await;
            }
            assert!(tx.is_closed());
        }));
    }

    #[test]
    fn oneshot_waker_dropped_may_send_or_close() {
        watchdog(HANG, |_| rt().block_on(async {
            let (tx, mut rx) = oneshot::channel::<u32>();
            let tx = Arc::new(Mutex::new(Some(tx)));
            let t = tx.clone();
            let w = on_drop(move || {
                let _ = t.lock().unwrap().take().unwrap().send(5);
            });
            assert!(poll_with(std::pin::Pin::new(&mut rx), &w).is_pending());
            drop(w);
            assert_eq!(poll_then_await(std::pin::Pin::new(&mut rx), Waker::noop()).await, Ok(5));

            let (mut tx, rx) = oneshot::channel::<u32>();
            let rx = Arc::new(Mutex::new(Some(rx)));
            {
                let mut closed = pin!(tx.closed());
                let r = rx.clone();
                let w = on_drop(move || drop(r.lock().unwrap().take()));
                assert!(poll_with(closed.as_mut(), &w).is_pending());
                drop(w);
                poll_then_await(closed, Waker::noop()).await;
            }
            assert!(tx.is_closed());
        }));
    }

    #[test]
    fn barrier_woken_waker_may_wait_again() {
        watchdog(HANG, |_| rt().block_on(async {
            let barrier = Arc::new(weft::sync::Barrier::new(2));
            let mut first = pin!(barrier.wait());
            let b = barrier.clone();
            let w = on_wake(move || {
                // Arrives for the next group from inside the wake.
                let mut next = Box::pin(b.wait());
                assert!(poll_with(next.as_mut(), Waker::noop()).is_pending());
            });
            assert!(poll_with(first.as_mut(), &w).is_pending());
            assert!(barrier.wait().await.is_leader());
            assert!(!first.await.is_leader());
            // The arrival made inside the wake counts for the next group.
            assert!(barrier.wait().await.is_leader());
        }));
    }

    // ----- Notify::notify_last passes on to the next newest ----------------

    #[test]
    fn notify_last_passed_on_to_next_newest_when_dropped() {
        rt().block_on(async {
            let notify = Notify::new();
            let mut a = pin!(notify.notified());
            let mut b = pin!(notify.notified());
            let mut c = Box::pin(notify.notified());
            assert!(!a.as_mut().enable());
            assert!(!b.as_mut().enable());
            assert!(!c.as_mut().enable());
            notify.notify_last();
            // `c` got it and is dropped unpolled: `b`, the newest left, is next.
            drop(c);
            assert!(poll_with(b.as_mut(), Waker::noop()).is_ready());
            assert!(poll_with(a.as_mut(), Waker::noop()).is_pending());
            notify.notify_last();
            a.await;
        });
    }

    #[test]
    fn notify_one_still_passed_on_to_next_oldest_when_dropped() {
        rt().block_on(async {
            let notify = Notify::new();
            let mut a = Box::pin(notify.notified());
            let mut b = pin!(notify.notified());
            let mut c = pin!(notify.notified());
            assert!(!a.as_mut().enable());
            assert!(!b.as_mut().enable());
            assert!(!c.as_mut().enable());
            notify.notify_one();
            drop(a);
            assert!(poll_with(b.as_mut(), Waker::noop()).is_ready());
            assert!(poll_with(c.as_mut(), Waker::noop()).is_pending());
        });
    }

    // ----- broadcast: a panicking Clone skips the value ---------------------

    #[test]
    fn broadcast_try_recv_moves_past_value_whose_clone_panics() {
        let (tx, mut rx) = broadcast::channel(4);
        let mut rx2 = tx.subscribe();
        tx.send(PanicOnClone { id: 1, poisoned: true }).unwrap();
        tx.send(PanicOnClone { id: 2, poisoned: false }).unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rx.try_recv()));
        assert!(r.is_err(), "the clone should have panicked");
        assert_eq!(rx.try_recv().unwrap().id, 2);
        // The other receiver and the sender still work.
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rx2.try_recv())).is_err());
        assert_eq!(rx2.try_recv().unwrap().id, 2);
        tx.send(PanicOnClone { id: 3, poisoned: false }).unwrap();
        assert_eq!(rx.try_recv().unwrap().id, 3);
        assert_eq!(rx2.try_recv().unwrap().id, 3);
        assert!(tx.is_empty());
        assert_eq!(tx.len(), 0);
    }

    #[test]
    fn broadcast_recv_moves_past_value_whose_clone_panics() {
        rt().block_on(async {
            let (tx, mut rx) = broadcast::channel(2);
            tx.send(PanicOnClone { id: 1, poisoned: true }).unwrap();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut fut = pin!(rx.recv());
                poll_with(fut.as_mut(), Waker::noop()).map(|r| r.map(|v| v.id))
            }));
            assert!(r.is_err(), "the clone should have panicked");
            tx.send(PanicOnClone { id: 2, poisoned: false }).unwrap();
            assert_eq!(rx.recv().await.unwrap().id, 2);
            // The panicking value was released: nothing is left queued.
            assert!(tx.is_empty());
            drop(tx);
            assert_eq!(rx.recv().await, Err(broadcast::error::RecvError::Closed));
        });
    }

    // ----- mpsc: reserving on a closed channel fails ----------------------

    #[test]
    fn mpsc_reserve_fails_after_receiver_close() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel::<u32>(4);
            rx.close();
            assert!(tx.reserve().await.is_err());
            assert!(tx.clone().reserve_owned().await.is_err());
            assert!(matches!(tx.try_reserve(), Err(mpsc::error::TrySendError::Closed(()))));
            assert!(tx.send(1).await.is_err());
            assert_eq!(rx.recv().await, None);
        });
    }

    #[test]
    fn mpsc_reserve_fails_after_receiver_drop() {
        rt().block_on(async {
            let (tx, rx) = mpsc::channel::<u32>(4);
            drop(rx);
            assert!(tx.reserve().await.is_err());
            assert!(tx.clone().reserve_owned().await.is_err());
            assert!(matches!(tx.try_reserve(), Err(mpsc::error::TrySendError::Closed(()))));
        });
    }

    #[test]
    fn mpsc_reserve_with_permits_outstanding_fails_after_close() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel::<u32>(2);
            let held = tx.reserve().await.unwrap();
            rx.close();
            // A slot is still free, but the receiver is closed.
            assert!(tx.reserve().await.is_err());
            assert!(matches!(tx.try_reserve(), Err(mpsc::error::TrySendError::Closed(()))));
            held.send(1);
            assert_eq!(rx.recv().await, Some(1));
            assert_eq!(rx.recv().await, None);
        });
    }

    #[test]
    fn mpsc_waiting_reserve_fails_when_receiver_closes_or_drops() {
        rt().block_on(async {
            for drop_rx in [false, true] {
                let (tx, mut rx) = mpsc::channel::<u32>(1);
                tx.send(1).await.unwrap();
                let mut reserve = pin!(tx.reserve());
                let mut owned = pin!(tx.clone().reserve_owned());
                assert!(poll_with(reserve.as_mut(), Waker::noop()).is_pending());
                assert!(poll_with(owned.as_mut(), Waker::noop()).is_pending());
                if drop_rx {
                    drop(rx);
                } else {
                    rx.close();
                    // Receiving frees the slot; it must not go to a sender.
                    assert_eq!(rx.recv().await, Some(1));
                }
                assert!(reserve.await.is_err());
                assert!(owned.await.is_err());
                assert!(tx.reserve().await.is_err());
                assert!(tx.try_reserve().is_err());
                assert!(tx.clone().try_reserve_owned().is_err());
            }
        });
    }

    #[test]
    fn mpsc_reserve_many_fails_after_receiver_close_or_drop() {
        rt().block_on(async {
            for drop_rx in [false, true] {
                let (tx, mut rx) = mpsc::channel::<u32>(4);
                tx.send(1).await.unwrap();
                // Waiting for 4 slots (one is taken) when the receiver goes.
                let mut many = pin!(tx.reserve_many(4));
                assert!(poll_with(many.as_mut(), Waker::noop()).is_pending());
                if drop_rx {
                    drop(rx);
                } else {
                    rx.close();
                    assert_eq!(rx.recv().await, Some(1));
                }
                assert!(many.await.is_err());
                assert!(tx.reserve_many(1).await.is_err());
                assert!(matches!(
                    tx.try_reserve_many(1),
                    Err(mpsc::error::TrySendError::Closed(()))
                ));
            }
        });
    }

    #[test]
    fn mpsc_reserve_many_hands_out_and_returns_slots() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel::<u32>(3);
            // More than the channel can ever hold.
            assert!(tx.reserve_many(4).await.is_err());
            assert!(matches!(
                tx.try_reserve_many(4),
                Err(mpsc::error::TrySendError::Full(()))
            ));
            let mut permits = tx.reserve_many(3).await.unwrap();
            assert_eq!(permits.len(), 3);
            assert!(matches!(
                tx.try_reserve_many(1),
                Err(mpsc::error::TrySendError::Full(()))
            ));
            permits.next().unwrap().send(10);
            let unused = permits.next().unwrap();
            drop(permits);
            // One slot came back with the iterator, one is still reserved.
            assert_eq!(tx.capacity(), 1);
            drop(unused);
            assert_eq!(tx.capacity(), 2);
            assert_eq!(rx.recv().await, Some(10));
            assert_eq!(tx.capacity(), 3);
        });
    }
}
