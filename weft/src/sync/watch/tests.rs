use super::*;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use std::sync::Arc as StdArc;
use std::task::{Wake, Waker};

/// Counts wakes.
#[derive(Default)]
struct CountWaker(StdAtomicUsize);

impl Wake for CountWaker {
    fn wake(self: StdArc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn count_waker() -> (StdArc<CountWaker>, Waker) {
    let c = StdArc::new(CountWaker::default());
    (c.clone(), Waker::from(c))
}

fn wakes(c: &CountWaker) -> usize {
    c.0.load(Ordering::SeqCst)
}

fn poll_once<F: Future>(fut: std::pin::Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    fut.poll(&mut Context::from_waker(waker))
}

#[test]
fn changed_after_send() {
    let (tx, mut rx) = channel(0);
    let (count, waker) = count_waker();
    {
        let mut fut = pin!(rx.changed());
        assert!(poll_once(fut.as_mut(), &waker).is_pending());
        tx.send(1).unwrap();
        assert_eq!(wakes(&count), 1);
        assert_eq!(poll_once(fut.as_mut(), &waker), Poll::Ready(Ok(())));
    }
    assert_eq!(*rx.borrow(), 1);
    assert!(!rx.has_changed().unwrap());
    // Nothing new: pending again.
    let mut fut = pin!(rx.changed());
    assert!(poll_once(fut.as_mut(), &waker).is_pending());
}

#[test]
fn several_sends_are_one_change() {
    let (tx, mut rx) = channel(0);
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    futures::executor::block_on(rx.changed()).unwrap();
    assert_eq!(*rx.borrow_and_update(), 2);
    let mut fut = pin!(rx.changed());
    assert!(poll_once(fut.as_mut(), Waker::noop()).is_pending());
}

#[test]
fn borrow_does_not_mark_seen_borrow_and_update_does() {
    let (tx, mut rx) = channel("a");
    tx.send("b").unwrap();
    let r = rx.borrow();
    assert!(r.has_changed());
    assert_eq!(*r, "b");
    drop(r);
    assert!(rx.has_changed().unwrap());
    let r = rx.borrow_and_update();
    assert!(r.has_changed());
    drop(r);
    assert!(!rx.has_changed().unwrap());
    assert!(!rx.borrow_and_update().has_changed());
    assert!(!tx.borrow().has_changed());
}

#[test]
fn send_without_receivers() {
    let (tx, rx) = channel(1);
    drop(rx);
    assert!(tx.is_closed());
    assert_eq!(tx.send(2), Err(SendError(2)));
    assert_eq!(*tx.borrow(), 1);
    assert_eq!(tx.send_replace(3), 1);
    assert_eq!(*tx.borrow(), 3);
    tx.send_modify(|v| *v += 1);
    assert_eq!(*tx.borrow(), 4);
    assert_eq!(SendError(()).to_string(), "channel closed");
    assert_eq!(format!("{:?}", SendError(5)), "SendError { .. }");
}

#[test]
fn send_if_modified_only_notifies_on_true() {
    let (tx, rx) = channel(0);
    assert!(!tx.send_if_modified(|_| false));
    assert!(!rx.has_changed().unwrap());
    assert!(tx.send_if_modified(|v| {
        *v = 9;
        true
    }));
    assert!(rx.has_changed().unwrap());
}

#[test]
fn sender_drop_ends_changed_after_last_value() {
    let (tx, mut rx) = channel(0);
    tx.send(1).unwrap();
    drop(tx);
    assert_eq!(rx.has_changed(), Err(RecvError(())));
    // The last value is still reported as a change first.
    assert_eq!(futures::executor::block_on(rx.changed()), Ok(()));
    assert_eq!(*rx.borrow(), 1);
    assert_eq!(
        futures::executor::block_on(rx.changed()),
        Err(RecvError(()))
    );
    assert_eq!(RecvError(()).to_string(), "channel closed");
}

#[test]
fn sender_drop_wakes_pending_changed() {
    let (tx, mut rx) = channel(0);
    let (count, waker) = count_waker();
    let mut fut = pin!(rx.changed());
    assert!(poll_once(fut.as_mut(), &waker).is_pending());
    drop(tx);
    assert_eq!(wakes(&count), 1);
    assert_eq!(
        poll_once(fut.as_mut(), &waker),
        Poll::Ready(Err(RecvError(())))
    );
}

#[test]
fn mark_changed_and_unchanged() {
    let (tx, mut rx) = channel(0);
    rx.mark_changed();
    assert!(rx.has_changed().unwrap());
    assert_eq!(futures::executor::block_on(rx.changed()), Ok(()));
    tx.send(1).unwrap();
    rx.mark_unchanged();
    assert!(!rx.has_changed().unwrap());
    let mut fut = pin!(rx.changed());
    assert!(poll_once(fut.as_mut(), Waker::noop()).is_pending());
}

#[test]
fn clone_keeps_seen_version() {
    let (tx, mut rx) = channel(0);
    tx.send(1).unwrap();
    let rx_unseen = rx.clone();
    rx.borrow_and_update();
    let rx_seen = rx.clone();
    assert!(rx_unseen.has_changed().unwrap());
    assert!(!rx_seen.has_changed().unwrap());
    assert_eq!(tx.receiver_count(), 3);
    assert!(rx.same_channel(&rx_seen));
    let (_tx2, rx2) = channel(0);
    assert!(!rx.same_channel(&rx2));
}

#[test]
fn subscribe_starts_seen() {
    let (tx, rx) = channel(0);
    tx.send(1).unwrap();
    let sub = tx.subscribe();
    assert!(!sub.has_changed().unwrap());
    assert!(rx.has_changed().unwrap());
    assert_eq!(tx.receiver_count(), 2);
}

#[test]
fn closed_resolves_when_all_receivers_drop() {
    let (tx, rx) = channel(0);
    let rx2 = rx.clone();
    let (count, waker) = count_waker();
    let mut fut = pin!(tx.closed());
    assert!(poll_once(fut.as_mut(), &waker).is_pending());
    drop(rx);
    assert_eq!(wakes(&count), 0);
    assert!(poll_once(fut.as_mut(), &waker).is_pending());
    drop(rx2);
    assert_eq!(wakes(&count), 1);
    assert!(poll_once(fut.as_mut(), &waker).is_ready());
    // Already closed: resolves at once.
    futures::executor::block_on(tx.closed());
}

#[test]
fn cancelled_changed_loses_nothing() {
    let (tx, mut rx) = channel(0);
    {
        let mut fut = pin!(rx.changed());
        assert!(poll_once(fut.as_mut(), Waker::noop()).is_pending());
        tx.send(1).unwrap();
        // Dropped without being polled again.
    }
    assert!(rx.has_changed().unwrap());
    assert_eq!(futures::executor::block_on(rx.changed()), Ok(()));
    assert_eq!(*rx.borrow(), 1);
    // The cancelled wait left no registration behind.
    assert!(loom::lock(&tx.shared.rx_waiters).take_all().is_empty());
}

#[test]
fn wait_for_checks_current_then_new_values() {
    let (tx, mut rx) = channel(3);
    // The current value already matches.
    assert_eq!(
        *futures::executor::block_on(rx.wait_for(|v| *v == 3)).unwrap(),
        3
    );
    let t = std::thread::spawn(move || {
        for i in 4..=10 {
            tx.send(i).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    });
    let r = futures::executor::block_on(rx.wait_for(|v| *v >= 8)).unwrap();
    assert!(*r >= 8);
    drop(r);
    t.join().unwrap();
    // Sender gone: the last value is still checked, then an error.
    assert_eq!(
        *futures::executor::block_on(rx.wait_for(|v| *v == 10)).unwrap(),
        10
    );
    assert!(futures::executor::block_on(rx.wait_for(|v| *v == 11)).is_err());
}

#[test]
fn changed_across_threads() {
    let (tx, mut rx) = channel(0);
    let t = std::thread::spawn(move || {
        for i in 1..=100 {
            tx.send(i).unwrap();
        }
    });
    let mut last = 0;
    while futures::executor::block_on(rx.changed()).is_ok() {
        let v = *rx.borrow_and_update();
        assert!(v > last);
        last = v;
    }
    assert_eq!(last, 100);
    t.join().unwrap();
}

#[test]
fn budget_exhausted_changed_yields() {
    let (tx, mut rx) = channel(0);
    tx.send(1).unwrap();
    let (count, waker) = count_waker();
    let mut cx = Context::from_waker(&waker);
    crate::coop::budget(|| {
        for _ in 0..crate::coop::INITIAL_BUDGET {
            match crate::coop::poll_proceed(&mut cx) {
                Poll::Ready(guard) => guard.made_progress(),
                Poll::Pending => panic!("budget ran out early"),
            }
        }
        let mut fut = pin!(rx.changed());
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        assert_eq!(wakes(&count), 1);
    });
    // Nothing was marked seen.
    assert!(rx.has_changed().unwrap());
}

#[test]
fn budget_spent_only_on_progress() {
    let (tx, mut rx) = channel(0);
    crate::coop::budget(|| {
        let before = crate::coop::remaining();
        {
            let mut fut = pin!(rx.changed());
            assert!(poll_once(fut.as_mut(), Waker::noop()).is_pending());
        }
        assert_eq!(crate::coop::remaining(), before);
        tx.send(1).unwrap();
        let mut fut = pin!(rx.changed());
        assert!(poll_once(fut.as_mut(), Waker::noop()).is_ready());
        assert_eq!(crate::coop::remaining(), before.map(|n| n - 1));
    });
}

#[test]
fn send_sync_and_debug() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Sender<u8>>();
    assert_send_sync::<Receiver<u8>>();
    assert_send_sync::<RecvError>();
    assert_send_sync::<SendError<u8>>();
    let (tx, rx) = channel(7);
    let s = format!("{tx:?} {rx:?} {:?}", rx.borrow());
    assert!(s.contains("Sender") && s.contains("Receiver"), "{s}");
    assert!(s.ends_with(" 7"), "{s}");
}
