//! Unit tests of the unbounded channel (`unbounded.rs`).

use super::super::test_support::{drop_counter, CountWaker, DropCount};
use super::*;
use std::future::Future;
use std::sync::atomic::Ordering;

#[test]
fn send_recv_in_order() {
    let (tx, mut rx) = unbounded_channel();
    for i in 0..100 {
        tx.send(i).unwrap();
    }
    assert_eq!(rx.len(), 100);
    for i in 0..100 {
        assert_eq!(rx.try_recv(), Ok(i));
    }
    assert!(rx.is_empty());
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn recv_waits_then_wakes() {
    let (tx, mut rx) = unbounded_channel();
    let (a, wa) = CountWaker::new();
    let mut cx = Context::from_waker(&wa);
    let mut recv = Box::pin(rx.recv());
    assert!(recv.as_mut().poll(&mut cx).is_pending());
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    assert_eq!(a.count(), 1);
    assert_eq!(recv.as_mut().poll(&mut cx), Poll::Ready(Some(1)));
    drop(recv);
    assert_eq!(rx.try_recv(), Ok(2));
}

#[test]
fn close_keeps_buffered_messages() {
    let (tx, mut rx) = unbounded_channel();
    tx.send(1).unwrap();
    rx.close();
    assert!(rx.is_closed());
    assert!(tx.is_closed());
    assert_eq!(tx.send(2), Err(SendError(2)));
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn receiver_drop_drops_buffered_messages() {
    let drops = drop_counter();
    let (tx, rx) = unbounded_channel();
    for _ in 0..10 {
        tx.send(DropCount(drops.clone())).ok().unwrap();
    }
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(rx);
    assert_eq!(drops.load(Ordering::SeqCst), 10);
    assert!(tx.send(DropCount(drops.clone())).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 11);
}

#[test]
fn all_senders_dropped_ends_after_draining() {
    let (tx, mut rx) = unbounded_channel();
    let tx2 = tx.clone();
    assert_eq!(tx.strong_count(), 2);
    tx.send(1).unwrap();
    tx2.send(2).unwrap();
    drop(tx);
    assert!(!rx.is_closed());
    drop(tx2);
    assert!(rx.is_closed());
    let mut buf = Vec::new();
    assert_eq!(futures::executor::block_on(rx.recv_many(&mut buf, 10)), 2);
    assert_eq!(futures::executor::block_on(rx.recv()), None);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn weak_sender_upgrade() {
    let (tx, _rx) = unbounded_channel::<u8>();
    let weak = tx.downgrade();
    assert!(weak.clone().upgrade().unwrap().same_channel(&tx));
    drop(tx);
    assert!(weak.upgrade().is_none());
}

#[test]
fn closed_resolves_on_drop() {
    let (tx, rx) = unbounded_channel::<u8>();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(10));
        drop(rx);
    });
    futures::executor::block_on(tx.closed());
    assert!(tx.is_closed());
    t.join().unwrap();
}

#[test]
fn blocking_recv_from_thread() {
    let (tx, mut rx) = unbounded_channel();
    let t = std::thread::spawn(move || (rx.blocking_recv(), rx.blocking_recv()));
    std::thread::sleep(std::time::Duration::from_millis(10));
    tx.send(3).unwrap();
    drop(tx);
    assert_eq!(t.join().unwrap(), (Some(3), None));
}

#[test]
fn send_sync_and_debug() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<UnboundedSender<std::cell::Cell<u8>>>();
    assert_send_sync::<UnboundedReceiver<std::cell::Cell<u8>>>();
    assert_send_sync::<WeakUnboundedSender<std::cell::Cell<u8>>>();
    let (tx, rx) = unbounded_channel::<u8>();
    let s = format!("{tx:?} {rx:?} {:?}", tx.downgrade());
    assert!(
        s.contains("UnboundedSender") && s.contains("tx_count: 1"),
        "{s}"
    );
}
