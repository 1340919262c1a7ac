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
