//! Behaviour of `weft::sync` that must match Tokio's (issue #10), through the
//! public API, on every runtime flavour (`rt_test!` in `support/mod.rs`).
//!
//! The "reentrant waker" tests hand a primitive a waker whose `Drop` or
//! `wake` calls back into that same primitive. If the primitive drops or
//! wakes it while holding its own lock, the callback blocks on that lock:
//! each such body runs under [`helpers::watchdog`], which turns the hang
//! into a failure.

#[macro_use]
mod support;

mod helpers {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::{mpsc, Arc, Mutex};
    use std::task::{Context, Poll, Wake, Waker};
    use std::time::Duration;

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

    /// Runs `f` on its own thread and fails if it has not finished within
    /// 10 s (a deadlock otherwise hangs the whole test binary). A panic in
    /// `f` is propagated.
    pub fn watchdog<F: FnOnce() + Send + 'static>(f: F) {
        let (done_tx, done_rx) = mpsc::channel();
        let t = std::thread::spawn(move || {
            f();
            let _ = done_tx.send(());
        });
        match done_rx.recv_timeout(Duration::from_secs(10)) {
            Ok(()) => t.join().unwrap(),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                if let Err(p) = t.join() {
                    std::panic::resume_unwind(p);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("deadlock: the test body did not finish within 10 s")
            }
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
}

rt_test! {
    use std::pin::pin;
    use std::sync::{Arc, Mutex};
    use std::task::Waker;
    use weft::sync::{broadcast, mpsc, oneshot, watch, Notify, Semaphore};

    use crate::helpers::{on_drop, on_wake, poll_with, watchdog, PanicOnClone};

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
}
