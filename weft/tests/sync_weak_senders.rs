//! Channel handle counts, weak senders and the other handle queries of
//! issue 14 (`mpsc`, `broadcast`, `watch`), on every runtime flavour.

#[macro_use]
mod support;

use weft::sync::{broadcast, mpsc, watch};

#[test]
fn mpsc_bounded_counts_follow_clones_and_drops() {
    let (tx, rx) = mpsc::channel::<u8>(4);
    assert_eq!((tx.strong_count(), tx.weak_count()), (1, 0));
    let weak = tx.downgrade();
    let weak2 = weak.clone();
    let tx2 = tx.clone();
    assert_eq!(rx.sender_strong_count(), 2);
    assert_eq!(rx.sender_weak_count(), 2);
    assert_eq!((weak.strong_count(), weak.weak_count()), (2, 2));
    assert_eq!(tx2.weak_count(), 2);
    drop(weak2);
    assert_eq!(rx.sender_weak_count(), 1);
    // An owned permit holds a strong sender.
    let permit = tx2.try_reserve_owned().unwrap();
    assert_eq!(rx.sender_strong_count(), 2);
    assert!(permit.same_channel_as_sender(&tx));
    let (other_tx, _other_rx) = mpsc::channel::<u8>(1);
    assert!(!permit.same_channel_as_sender(&other_tx));
    let permit2 = tx.clone().try_reserve_owned().unwrap();
    assert!(permit.same_channel(&permit2));
    let other_permit = other_tx.try_reserve_owned().unwrap();
    assert!(!permit.same_channel(&other_permit));
    drop((permit, permit2));
    drop(tx);
    assert_eq!(rx.sender_strong_count(), 0);
    assert_eq!(weak.strong_count(), 0);
    drop(weak);
    assert_eq!(rx.sender_weak_count(), 0);
}

#[test]
fn mpsc_unbounded_counts_and_upgrade_after_close() {
    let (tx, mut rx) = mpsc::unbounded_channel::<u8>();
    let weak = tx.downgrade();
    assert_eq!((tx.weak_count(), weak.weak_count()), (1, 1));
    assert_eq!((rx.sender_strong_count(), weak.strong_count()), (1, 1));
    let upgraded = weak.upgrade().unwrap();
    assert_eq!(rx.sender_strong_count(), 2);
    upgraded.send(1).unwrap();
    drop((tx, upgraded));
    assert!(weak.upgrade().is_none());
    assert_eq!(weak.strong_count(), 0);
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(rx.try_recv(), Err(mpsc::error::TryRecvError::Disconnected));
    assert_eq!(rx.sender_weak_count(), 1);
}

#[test]
fn mpsc_blocking_recv_many_from_a_thread() {
    let (tx, mut rx) = mpsc::channel::<u32>(8);
    let (utx, mut urx) = mpsc::unbounded_channel::<u32>();
    for i in 0..5 {
        tx.try_send(i).unwrap();
        utx.send(i).unwrap();
    }
    let t = std::thread::spawn(move || {
        let mut a = Vec::new();
        let mut b = Vec::new();
        // At most `limit`, appended to the buffer.
        let n = rx.blocking_recv_many(&mut a, 3);
        let m = urx.blocking_recv_many(&mut b, 10);
        drop((tx, utx));
        // Closed: the rest first, then 0.
        let rest = rx.blocking_recv_many(&mut a, 10);
        let end = rx.blocking_recv_many(&mut a, 10);
        (n, m, rest, end, a, b)
    });
    let (n, m, rest, end, a, b) = t.join().unwrap();
    assert_eq!((n, m, rest, end), (3, 5, 2, 0));
    assert_eq!(a, [0, 1, 2, 3, 4]);
    assert_eq!(b, [0, 1, 2, 3, 4]);
}

#[test]
fn mpsc_blocking_recv_many_waits_then_ends_at_close() {
    let (tx, mut rx) = mpsc::unbounded_channel::<u32>();
    let t = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let first = rx.blocking_recv_many(&mut buf, 10);
        let after_close = rx.blocking_recv_many(&mut buf, 10);
        (first, after_close, buf)
    });
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(!t.is_finished());
    tx.send(9).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    drop(tx);
    let (first, after_close, buf) = t.join().unwrap();
    assert_eq!((first, after_close, buf), (1, 0, vec![9]));
}

#[test]
fn broadcast_weak_sender_counts_and_close() {
    let (tx, mut rx) = broadcast::channel::<u8>(4);
    assert_eq!((tx.strong_count(), tx.weak_count()), (1, 0));
    let weak = tx.downgrade();
    let weak2 = weak.clone();
    assert_eq!((tx.weak_count(), rx.sender_weak_count()), (2, 2));
    let tx2 = weak.upgrade().unwrap();
    assert_eq!((weak.strong_count(), rx.sender_strong_count()), (2, 2));
    drop(weak2);
    assert_eq!(weak.weak_count(), 1);
    tx2.send(1).unwrap();
    drop(tx);
    assert!(!rx.is_closed());
    drop(tx2);
    assert!(rx.is_closed());
    assert!(weak.upgrade().is_none());
    assert_eq!(rx.sender_strong_count(), 0);
    // Values still held come first, then the close.
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(rx.try_recv(), Err(broadcast::error::TryRecvError::Closed));
    drop(weak);
    assert_eq!(rx.sender_weak_count(), 0);
}

#[test]
fn watch_sender_clones_count_and_close_last() {
    let (tx, rx) = watch::channel(0);
    assert_eq!(tx.sender_count(), 1);
    let tx2 = tx.clone();
    assert_eq!((tx.sender_count(), tx2.sender_count()), (2, 2));
    assert!(tx.same_channel(&tx2));
    let (tx3, _rx3) = watch::channel(0);
    assert!(!tx.same_channel(&tx3));
    tx2.send(5).unwrap();
    assert_eq!(*tx.borrow(), 5);
    drop(tx);
    assert!(!rx.is_closed());
    assert_eq!(tx2.sender_count(), 1);
    drop(tx2);
    assert!(rx.is_closed());
    assert_eq!(*rx.borrow(), 5);
}

rt_test! {
    use std::time::Duration;

    use weft::sync::{broadcast, mpsc, watch};

    #[test]
    fn mpsc_weak_sender_upgrade_fails_after_last_sender_and_rx_sees_close() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel::<u32>(4);
            let weak = tx.downgrade();
            let producer = weft::spawn(async move {
                tx.send(1).await.unwrap();
                // `tx` dropped here: the last strong sender.
            });
            assert_eq!(rx.recv().await, Some(1));
            producer.await.unwrap();
            assert_eq!(rx.recv().await, None);
            assert!(weak.upgrade().is_none());
            assert_eq!(rx.sender_strong_count(), 0);
        })
    }

    #[test]
    fn broadcast_rx_sees_close_after_weak_holders_only() {
        rt().block_on(async {
            let (tx, mut rx) = broadcast::channel::<u32>(4);
            let weak = tx.downgrade();
            let sender = weak.upgrade().unwrap();
            drop(tx);
            let producer = weft::spawn(async move {
                sender.send(3).unwrap();
            });
            assert_eq!(rx.recv().await, Ok(3));
            producer.await.unwrap();
            assert_eq!(rx.recv().await, Err(broadcast::error::RecvError::Closed));
            assert!(rx.is_closed());
            assert!(weak.upgrade().is_none());
        })
    }

    #[test]
    fn broadcast_closed_waits_for_the_last_receiver() {
        rt().block_on(async {
            let (tx, rx1) = broadcast::channel::<u32>(4);
            let rx2 = tx.subscribe();
            let closed = {
                let tx = tx.clone();
                weft::spawn(async move { tx.closed().await })
            };
            drop(rx1);
            weft::time::sleep(Duration::from_millis(10)).await;
            assert!(!closed.is_finished());
            weft::spawn(async move { drop(rx2) }).await.unwrap();
            weft::time::timeout(Duration::from_secs(5), closed)
                .await
                .unwrap()
                .unwrap();
            // No receiver: resolves at once.
            tx.closed().await;
            // Cancelling a pending `closed` leaves no waiter behind.
            let _rx3 = tx.subscribe();
            assert!(weft::time::timeout(Duration::from_millis(5), tx.closed())
                .await
                .is_err());
        })
    }

    #[test]
    fn watch_changed_ends_only_after_the_last_sender() {
        rt().block_on(async {
            let (tx, mut rx) = watch::channel(0);
            let tx2 = tx.clone();
            drop(tx);
            let waiter = weft::spawn(async move {
                let mut seen = Vec::new();
                while rx.changed().await.is_ok() {
                    seen.push(*rx.borrow_and_update());
                }
                (seen, rx.is_closed())
            });
            weft::time::sleep(Duration::from_millis(10)).await;
            assert!(!waiter.is_finished());
            tx2.send(1).unwrap();
            weft::time::sleep(Duration::from_millis(10)).await;
            drop(tx2);
            let (seen, closed) = waiter.await.unwrap();
            assert!(closed);
            assert_eq!(seen.last(), Some(&1));
        })
    }

    #[test]
    #[should_panic(expected = "mpsc::Receiver::blocking_recv_many was called on a thread that drives a weft runtime")]
    fn blocking_recv_many_panics_inside_runtime() {
        rt().block_on(async {
            let (_tx, mut rx) = mpsc::channel::<u8>(1);
            let mut buf = Vec::new();
            rx.blocking_recv_many(&mut buf, 1);
        })
    }

    #[test]
    #[should_panic(expected = "mpsc::UnboundedReceiver::blocking_recv_many was called on a thread that drives")]
    fn unbounded_blocking_recv_many_panics_inside_runtime() {
        rt().block_on(async {
            let (_tx, mut rx) = mpsc::unbounded_channel::<u8>();
            let mut buf = Vec::new();
            rx.blocking_recv_many(&mut buf, 1);
        })
    }
}
