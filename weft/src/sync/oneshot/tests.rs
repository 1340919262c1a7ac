use super::error::{RecvError, TryRecvError};
use super::*;
use crate::sync::mpsc::test_support::{drop_counter, exhaust_budget, CountWaker, DropCount};

fn poll_rx<T>(rx: &mut Receiver<T>, waker: &Waker) -> Poll<Result<T, RecvError>> {
    Pin::new(rx).poll(&mut Context::from_waker(waker))
}

#[test]
fn send_then_recv() {
    let (tx, rx) = channel();
    assert!(tx.send(1).is_ok());
    assert_eq!(futures::executor::block_on(rx), Ok(1));
}

#[test]
fn recv_then_send_from_other_thread() {
    let (tx, rx) = channel();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(20));
        tx.send("hi").unwrap();
    });
    assert_eq!(futures::executor::block_on(rx), Ok("hi"));
    t.join().unwrap();
}

#[test]
fn blocking_recv_from_other_thread() {
    let (tx, rx) = channel();
    let t = std::thread::spawn(move || rx.blocking_recv());
    std::thread::sleep(std::time::Duration::from_millis(20));
    tx.send(5).unwrap();
    assert_eq!(t.join().unwrap(), Ok(5));
}

#[test]
fn drop_sender_gives_recv_error() {
    let (tx, mut rx) = channel::<i32>();
    let (count, waker) = CountWaker::new();
    assert!(poll_rx(&mut rx, &waker).is_pending());
    drop(tx);
    assert_eq!(count.count(), 1);
    assert_eq!(poll_rx(&mut rx, &waker), Poll::Ready(Err(RecvError(()))));
    assert!(rx.is_terminated());
    assert_eq!(RecvError(()).to_string(), "channel closed");
}

#[test]
fn drop_sender_try_recv_closed() {
    let (tx, mut rx) = channel::<i32>();
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    assert!(!rx.is_terminated());
    drop(tx);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    assert!(rx.is_terminated());
    assert_eq!(TryRecvError::Empty.to_string(), "channel empty");
    assert_eq!(TryRecvError::Closed.to_string(), "channel closed");
}

#[test]
fn drop_receiver_send_returns_value() {
    let (tx, rx) = channel();
    assert!(!tx.is_closed());
    drop(rx);
    assert!(tx.is_closed());
    assert_eq!(tx.send(String::from("back")), Err(String::from("back")));
}

#[test]
fn close_then_try_recv() {
    let (tx, mut rx) = channel::<i32>();
    rx.close();
    assert!(tx.is_closed());
    assert_eq!(tx.send(1), Err(1));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));

    // A value sent before the close can still be taken.
    let (tx, mut rx) = channel();
    tx.send(2).unwrap();
    rx.close();
    assert!(!rx.is_empty());
    assert_eq!(rx.try_recv(), Ok(2));
    assert!(rx.is_empty());
    assert!(rx.is_terminated());
}

#[test]
fn close_then_poll_is_error() {
    let (tx, mut rx) = channel::<i32>();
    rx.close();
    rx.close(); // idempotent
    assert_eq!(futures::executor::block_on(&mut rx), Err(RecvError(())));
    assert!(rx.is_terminated());
    drop(tx);
}

#[test]
fn is_empty_states() {
    let (tx, mut rx) = channel::<i32>();
    assert!(rx.is_empty());
    drop(tx);
    assert!(rx.is_empty());
    assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    assert!(rx.is_empty());
}

#[test]
fn value_dropped_once_received() {
    let n = drop_counter();
    let v = DropCount(n.clone());
    let (tx, rx) = channel();
    tx.send(v).ok().unwrap();
    let got = futures::executor::block_on(rx).ok().unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 0);
    drop(got);
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn value_dropped_once_try_recv() {
    let n = drop_counter();
    let v = DropCount(n.clone());
    let (tx, mut rx) = channel();
    tx.send(v).ok().unwrap();
    drop(rx.try_recv().ok().unwrap());
    drop(rx);
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn value_dropped_once_unreceived() {
    // Receiver dropped after the send: the receiver drops the value.
    let n = drop_counter();
    let v = DropCount(n.clone());
    let (tx, rx) = channel();
    tx.send(v).ok().unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 0);
    drop(rx);
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn value_dropped_once_rejected() {
    // Receiver dropped first: the value comes back and is dropped by us.
    let n = drop_counter();
    let v = DropCount(n.clone());
    let (tx, rx) = channel();
    drop(rx);
    let back = tx.send(v).err().unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 0);
    drop(back);
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn value_dropped_once_closed_then_taken() {
    let n = drop_counter();
    let v = DropCount(n.clone());
    let (tx, mut rx) = channel();
    tx.send(v).ok().unwrap();
    rx.close();
    drop(rx.try_recv().ok().unwrap());
    drop(rx);
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn value_dropped_once_closed_then_dropped() {
    let n = drop_counter();
    let v = DropCount(n.clone());
    let (tx, mut rx) = channel();
    tx.send(v).ok().unwrap();
    rx.close();
    drop(rx);
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn new_waker_replaces_old() {
    let (tx, mut rx) = channel();
    let (a, wa) = CountWaker::new();
    let (b, wb) = CountWaker::new();
    assert!(poll_rx(&mut rx, &wa).is_pending());
    assert!(poll_rx(&mut rx, &wa).is_pending());
    assert!(poll_rx(&mut rx, &wb).is_pending());
    tx.send(9).unwrap();
    assert_eq!(a.count(), 0);
    assert_eq!(b.count(), 1);
    assert_eq!(poll_rx(&mut rx, &wb), Poll::Ready(Ok(9)));
}

#[test]
fn closed_resolves_when_receiver_drops() {
    let (mut tx, rx) = channel::<i32>();
    let (count, waker) = CountWaker::new();
    let mut cx = Context::from_waker(&waker);
    assert!(tx.poll_closed(&mut cx).is_pending());
    let (count2, waker2) = CountWaker::new();
    assert!(tx
        .poll_closed(&mut Context::from_waker(&waker2))
        .is_pending());
    let t = std::thread::spawn(move || drop(rx));
    t.join().unwrap();
    assert_eq!(count.count(), 0);
    assert_eq!(count2.count(), 1);
    assert!(tx.poll_closed(&mut cx).is_ready());
    futures::executor::block_on(tx.closed());
    assert!(tx.is_closed());
}

#[test]
fn closed_resolves_on_close_across_threads() {
    let (mut tx, mut rx) = channel::<i32>();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(20));
        rx.close();
        rx
    });
    futures::executor::block_on(tx.closed());
    let _rx = t.join().unwrap();
}

#[test]
fn budget_exhausted_receiver_yields() {
    let (tx, mut rx) = channel();
    tx.send(1).unwrap();
    let (count, waker) = CountWaker::new();
    let mut cx = Context::from_waker(&waker);
    crate::coop::budget(|| {
        exhaust_budget(&mut cx);
        assert!(Pin::new(&mut rx).poll(&mut cx).is_pending());
        assert_eq!(count.count(), 1);
        assert!(!rx.is_terminated());
        assert!(!rx.is_empty());
    });
    // With a fresh budget the value is still there.
    assert_eq!(Pin::new(&mut rx).poll(&mut cx), Poll::Ready(Ok(1)));
}

#[test]
fn budget_exhausted_poll_closed_yields() {
    let (mut tx, rx) = channel::<i32>();
    drop(rx);
    let (count, waker) = CountWaker::new();
    let mut cx = Context::from_waker(&waker);
    crate::coop::budget(|| {
        exhaust_budget(&mut cx);
        assert!(tx.poll_closed(&mut cx).is_pending());
        assert_eq!(count.count(), 1);
    });
    assert!(tx.poll_closed(&mut cx).is_ready());
}

#[test]
fn budget_spent_only_on_progress() {
    let (tx, mut rx) = channel::<i32>();
    let waker = Waker::noop();
    crate::coop::budget(|| {
        let before = crate::coop::remaining();
        assert!(poll_rx(&mut rx, waker).is_pending());
        assert_eq!(crate::coop::remaining(), before);
        tx.send(1).unwrap();
        assert!(poll_rx(&mut rx, waker).is_ready());
        assert_eq!(crate::coop::remaining(), before.map(|n| n - 1));
    });
}

#[test]
#[should_panic(expected = "polled after completion")]
fn poll_after_completion_panics() {
    let (tx, mut rx) = channel();
    tx.send(1).unwrap();
    assert!(poll_rx(&mut rx, Waker::noop()).is_ready());
    let _ = poll_rx(&mut rx, Waker::noop());
}

#[test]
fn send_sync_and_debug() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Sender<std::cell::Cell<u8>>>();
    assert_send_sync::<Receiver<std::cell::Cell<u8>>>();
    assert_send_sync::<RecvError>();
    assert_send_sync::<TryRecvError>();

    let (tx, rx) = channel::<i32>();
    let s = format!("{tx:?} {rx:?}");
    assert!(s.contains("Sender") && s.contains("Receiver"), "{s}");
    assert!(s.contains("is_complete: false"), "{s}");
}
