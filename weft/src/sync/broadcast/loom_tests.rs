use super::*;
use ::loom::thread;
use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use std::sync::Arc as StdArc;

/// Counts live instances: +1 on creation and clone, -1 on drop.
struct Live(StdArc<StdAtomicUsize>);

impl Live {
    fn new(n: &StdArc<StdAtomicUsize>) -> Live {
        n.fetch_add(1, Ordering::SeqCst);
        Live(n.clone())
    }
}

impl Clone for Live {
    fn clone(&self) -> Live {
        Live::new(&self.0)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[test]
fn send_vs_recv_registration() {
    // No lost wakeup: `recv` registering while `send` publishes.
    ::loom::model(|| {
        let (tx, mut rx) = channel(2);
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
        });
        assert_eq!(::loom::future::block_on(rx.recv()), Ok(1));
        t.join().unwrap();
    });
}

#[test]
fn sender_drop_vs_recv() {
    ::loom::model(|| {
        let (tx, mut rx) = channel(2);
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            drop(tx);
        });
        assert_eq!(::loom::future::block_on(rx.recv()), Ok(1));
        assert_eq!(::loom::future::block_on(rx.recv()), Err(RecvError::Closed));
        t.join().unwrap();
    });
}

#[test]
fn receiver_drop_vs_recv_drops_values_once() {
    ::loom::model(|| {
        let n = StdArc::new(StdAtomicUsize::new(0));
        let (tx, mut rx1) = channel(2);
        let rx2 = tx.subscribe();
        tx.send(Live::new(&n)).ok().unwrap();
        let t = thread::spawn(move || drop(rx2));
        drop(rx1.try_recv().ok().unwrap());
        t.join().unwrap();
        assert_eq!(n.load(Ordering::SeqCst), 0);
        drop((tx, rx1));
    });
}

#[test]
fn lagging_receiver_vs_send() {
    // Capacity 1: whatever the interleaving, the receiver accounts for
    // both values (received or reported lagged) and ends with the last.
    ::loom::model(|| {
        let (tx, mut rx) = channel(1);
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
        });
        let mut accounted = 0;
        let mut last = 0;
        loop {
            match ::loom::future::block_on(rx.recv()) {
                Ok(v) => {
                    accounted += 1;
                    last = v;
                }
                Err(RecvError::Lagged(n)) => accounted += n,
                Err(RecvError::Closed) => break,
            }
        }
        assert_eq!((accounted, last), (2, 2));
        t.join().unwrap();
    });
}

#[test]
fn concurrent_readers_and_overwrite_drop_each_value_once() {
    // Two receivers race to be the last reader of a value while the
    // sender overwrites its slot (capacity 1).
    ::loom::model(|| {
        let n = StdArc::new(StdAtomicUsize::new(0));
        let (tx, mut rx1) = channel(1);
        let mut rx2 = tx.subscribe();
        let t = thread::spawn(move || {
            // Empty, the first value, or lagged: all are fine.
            drop(rx2.try_recv());
        });
        tx.send(Live::new(&n)).ok().unwrap();
        drop(rx1.try_recv());
        tx.send(Live::new(&n)).ok().unwrap();
        t.join().unwrap();
        drop((tx, rx1));
        assert_eq!(n.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn upgrade_races_last_sender_drop() {
    // Invariant 7: an upgrade racing the last sender's drop either fails
    // (and the channel is closed) or keeps the channel open until the
    // upgraded sender is dropped; the receiver always ends with `Closed`.
    ::loom::model(|| {
        let (tx, mut rx) = channel::<u8>(2);
        let weak = tx.downgrade();
        let t = thread::spawn(move || {
            if let Some(tx2) = weak.upgrade() {
                tx2.send(7).unwrap();
                true
            } else {
                false
            }
        });
        drop(tx);
        let upgraded = t.join().unwrap();
        if upgraded {
            assert_eq!(rx.try_recv(), Ok(7));
        }
        assert!(rx.is_closed());
        assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
        assert_eq!(rx.sender_strong_count(), 0);
        assert_eq!(rx.sender_weak_count(), 0);
    });
}

#[test]
fn closed_races_last_receiver_drop() {
    // Invariant 8: `Sender::closed` waiting while the last receiver drops
    // on another thread always wakes.
    ::loom::model(|| {
        let (tx, rx) = channel::<u8>(2);
        let t = thread::spawn(move || drop(rx));
        ::loom::future::block_on(tx.closed());
        t.join().unwrap();
        assert_eq!(tx.receiver_count(), 0);
    });
}
