use super::*;
use ::loom::thread;
use std::future::Future;
use std::pin::pin;
use std::task::Waker;

#[test]
fn send_vs_changed_registration() {
    // No lost wakeup: `changed` registering while `send` publishes.
    ::loom::model(|| {
        let (tx, mut rx) = channel(0);
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
        });
        assert_eq!(::loom::future::block_on(rx.changed()), Ok(()));
        assert_eq!(*rx.borrow_and_update(), 1);
        t.join().unwrap();
    });
}

#[test]
fn sender_drop_vs_changed() {
    // The last value is reported, then the close, whatever the order.
    ::loom::model(|| {
        let (tx, mut rx) = channel(0);
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            drop(tx);
        });
        let mut seen = 0;
        while ::loom::future::block_on(rx.changed()).is_ok() {
            seen = *rx.borrow_and_update();
        }
        assert_eq!(seen, 1);
        assert_eq!(*rx.borrow(), 1);
        t.join().unwrap();
    });
}

#[test]
fn receiver_drop_vs_closed() {
    ::loom::model(|| {
        let (tx, rx) = channel(0);
        let rx2 = rx.clone();
        let t = thread::spawn(move || drop(rx));
        drop(rx2);
        ::loom::future::block_on(tx.closed());
        assert!(tx.is_closed());
        t.join().unwrap();
    });
}

#[test]
fn changed_rewaits_with_new_waker() {
    // A first poll with a waker nobody acts on, then a real wait.
    ::loom::model(|| {
        let (tx, mut rx) = channel(0);
        let t = thread::spawn(move || {
            tx.send_modify(|v| *v = 2);
        });
        let first = {
            let mut fut = pin!(rx.changed());
            fut.as_mut().poll(&mut Context::from_waker(Waker::noop()))
        };
        if first.is_pending() {
            ::loom::future::block_on(rx.changed()).unwrap();
        }
        assert_eq!(*rx.borrow(), 2);
        t.join().unwrap();
    });
}

#[test]
fn last_of_two_senders_closes() {
    // Invariant 5: two senders dropped on two threads close the channel
    // exactly once, after both values were sent, and `changed` wakes.
    ::loom::model(|| {
        let (tx, mut rx) = channel(0);
        let tx2 = tx.clone();
        let t = thread::spawn(move || {
            tx2.send(2).unwrap();
            drop(tx2);
        });
        tx.send(1).unwrap();
        drop(tx);
        while ::loom::future::block_on(rx.changed()).is_ok() {
            rx.borrow_and_update();
        }
        assert!(rx.is_closed());
        t.join().unwrap();
    });
}
