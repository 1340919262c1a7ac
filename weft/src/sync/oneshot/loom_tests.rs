use super::*;
use loom::sync::atomic::AtomicUsize as LoomAtomicUsize;
use loom::sync::Arc as LoomArc;
use loom::thread;

/// Counts its own drops, in loom-visible memory.
struct DropCount(LoomArc<LoomAtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn send_recv_race() {
    loom::model(|| {
        let (tx, rx) = channel();
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
        });
        assert_eq!(loom::future::block_on(rx), Ok(1));
        t.join().unwrap();
    });
}

#[test]
fn drop_sender_race() {
    loom::model(|| {
        let (tx, rx) = channel::<i32>();
        let t = thread::spawn(move || drop(tx));
        assert!(loom::future::block_on(rx).is_err());
        t.join().unwrap();
    });
}

#[test]
fn drop_receiver_race() {
    loom::model(|| {
        let drops = LoomArc::new(LoomAtomicUsize::new(0));
        let (tx, rx) = channel();
        let value = DropCount(drops.clone());
        let t = thread::spawn(move || {
            // Either outcome is fine; a returned value drops here.
            let _ = tx.send(value);
        });
        drop(rx);
        t.join().unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn close_send_race() {
    // Exactly one of "send fails" and "try_recv gets it" happens.
    loom::model(|| {
        let drops = LoomArc::new(LoomAtomicUsize::new(0));
        let (tx, mut rx) = channel();
        let value = DropCount(drops.clone());
        let t = thread::spawn(move || tx.send(value).is_ok());
        rx.close();
        // Runs while the send may still be in flight: once closed, the
        // receiver's view is final, so it must agree with `send`.
        let got = rx.try_recv();
        let sent = t.join().unwrap();
        match got {
            Ok(v) => {
                assert!(sent);
                drop(v);
            }
            Err(e) => {
                assert!(!sent);
                assert_eq!(e, TryRecvError::Closed);
            }
        }
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn closed_vs_drop_receiver() {
    loom::model(|| {
        let (mut tx, rx) = channel::<i32>();
        let t = thread::spawn(move || drop(rx));
        loom::future::block_on(tx.closed());
        assert!(tx.is_closed());
        t.join().unwrap();
    });
}

#[test]
fn receiver_changes_waker_while_sending() {
    loom::model(|| {
        let (tx, mut rx) = channel();
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
        });
        // First poll registers waker A, which nobody will act on; the
        // sender must end up waking block_on's waker instead.
        let first = Pin::new(&mut rx).poll(&mut Context::from_waker(Waker::noop()));
        let got = match first {
            Poll::Ready(v) => v,
            Poll::Pending => loom::future::block_on(&mut rx),
        };
        assert_eq!(got, Ok(1));
        t.join().unwrap();
    });
}

#[test]
fn closed_changes_waker_while_dropping() {
    loom::model(|| {
        let (mut tx, rx) = channel::<i32>();
        let t = thread::spawn(move || drop(rx));
        let first = tx.poll_closed(&mut Context::from_waker(Waker::noop()));
        if first.is_pending() {
            loom::future::block_on(tx.closed());
        }
        assert!(tx.is_closed());
        t.join().unwrap();
    });
}
