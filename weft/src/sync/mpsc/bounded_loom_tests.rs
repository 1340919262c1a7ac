//! loom models of the bounded channel.

use super::super::error::TryRecvError;
use super::*;
use loom::thread;
use std::future::Future;
use std::task::Context;

#[test]
fn two_senders_race_receiver_for_one_slot() {
    loom::model(|| {
        let (tx, mut rx) = channel(1);
        let tx2 = tx.clone();
        let t1 = thread::spawn(move || loom::future::block_on(tx.send(1)).unwrap());
        let t2 = thread::spawn(move || loom::future::block_on(tx2.send(2)).unwrap());
        let a = loom::future::block_on(rx.recv()).unwrap();
        let b = loom::future::block_on(rx.recv()).unwrap();
        assert_eq!(a + b, 3);
        assert_ne!(a, b);
        assert_eq!(loom::future::block_on(rx.recv()), None);
        t1.join().unwrap();
        t2.join().unwrap();
    });
}

#[test]
fn sender_dropped_while_receiver_waits() {
    loom::model(|| {
        let (tx, mut rx) = channel::<u8>(1);
        let t = thread::spawn(move || drop(tx));
        assert_eq!(loom::future::block_on(rx.recv()), None);
        t.join().unwrap();
    });
}

#[test]
fn cancelled_send_races_recv() {
    loom::model(|| {
        let (tx, mut rx) = channel(1);
        tx.try_send(0).unwrap();
        let tx2 = tx.clone();
        let t = thread::spawn(move || {
            // Poll once (it may wait for the slot or win it), then cancel.
            let mut send = Box::pin(tx2.send(1));
            let sent = send
                .as_mut()
                .poll(&mut Context::from_waker(std::task::Waker::noop()))
                .is_ready();
            drop(send);
            sent
        });
        assert_eq!(loom::future::block_on(rx.recv()), Some(0));
        let sent = t.join().unwrap();
        if sent {
            assert_eq!(rx.try_recv(), Ok(1));
        }
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        // Capacity is conserved: the slot is free again.
        assert_eq!(tx.capacity(), 1);
        tx.try_send(2).unwrap();
    });
}

#[test]
fn cancelled_send_races_waiting_sender() {
    // A slot granted to a send that is then cancelled must reach the
    // other waiting sender (no lost wakeup, no lost capacity).
    loom::model(|| {
        let (tx, mut rx) = channel(1);
        tx.try_send(0).unwrap();
        let tx1 = tx.clone();
        let tx2 = tx.clone();
        drop(tx);
        let t1 = thread::spawn(move || {
            let mut send = Box::pin(tx1.send(1));
            let sent = send
                .as_mut()
                .poll(&mut Context::from_waker(std::task::Waker::noop()))
                .is_ready();
            drop(send);
            sent
        });
        let t2 = thread::spawn(move || loom::future::block_on(tx2.send(2)).unwrap());
        let mut got = Vec::new();
        while let Some(v) = loom::future::block_on(rx.recv()) {
            got.push(v);
        }
        let sent1 = t1.join().unwrap();
        t2.join().unwrap();
        assert_eq!(got[0], 0);
        assert!(got.contains(&2));
        assert_eq!(got.contains(&1), sent1);
        assert_eq!(got.len(), if sent1 { 3 } else { 2 });
    });
}

#[test]
fn close_races_waiting_sender() {
    loom::model(|| {
        let (tx, mut rx) = channel(1);
        tx.try_send(0).unwrap();
        let t = thread::spawn(move || loom::future::block_on(tx.send(1)).is_ok());
        rx.close();
        assert_eq!(loom::future::block_on(rx.recv()), Some(0));
        let sent = t.join().unwrap();
        // A send granted the slot before the close still lands.
        let next = loom::future::block_on(rx.recv());
        assert_eq!(next, if sent { Some(1) } else { None });
        assert_eq!(loom::future::block_on(rx.recv()), None);
    });
}

#[test]
fn unused_permit_drop_races_closed_receiver() {
    loom::model(|| {
        let (tx, mut rx) = channel::<u32>(1);
        // A second sender keeps the channel open, so only the permit's
        // return can end it for the closed receiver (mpsc invariant 7).
        let keep_open = tx.clone();
        let permit = loom::future::block_on(tx.reserve_owned()).unwrap();
        let t = thread::spawn(move || drop(permit));
        rx.close();
        assert_eq!(loom::future::block_on(rx.recv()), None);
        t.join().unwrap();
        drop(keep_open);
    });
}

#[test]
fn batch_refill_races_sends() {
    loom::model(|| {
        let (tx, mut rx) = channel::<u32>(2);
        // Three messages through two slots: the third send waits for a
        // receive, which frees its slot from the receiver's batch.
        let t = thread::spawn(move || {
            for i in 0..3 {
                loom::future::block_on(tx.send(i)).unwrap();
            }
        });
        let mut got = Vec::new();
        while let Some(v) = loom::future::block_on(rx.recv()) {
            got.push(v);
        }
        t.join().unwrap();
        assert_eq!(got, [0, 1, 2]);
    });
}
