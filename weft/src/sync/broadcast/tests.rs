use super::*;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use std::sync::Arc as StdArc;
use std::task::Wake;

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

fn live(n: &StdAtomicUsize) -> usize {
    n.load(Ordering::SeqCst)
}

#[test]
fn every_receiver_gets_every_value_in_order() {
    let (tx, mut rx1) = channel(8);
    let mut rx2 = tx.subscribe();
    for i in 0..5 {
        assert_eq!(tx.send(i), Ok(2));
    }
    for i in 0..5 {
        assert_eq!(rx1.try_recv(), Ok(i));
    }
    for i in 0..5 {
        assert_eq!(rx2.try_recv(), Ok(i));
    }
    assert_eq!(rx1.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn recv_waits_and_is_woken() {
    let (tx, mut rx) = channel(4);
    let (count, waker) = count_waker();
    let mut fut = pin!(rx.recv());
    assert!(fut
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    tx.send(7).unwrap();
    assert_eq!(wakes(&count), 1);
    assert_eq!(
        fut.as_mut().poll(&mut Context::from_waker(&waker)),
        Poll::Ready(Ok(7))
    );
}

#[test]
fn lagged_reports_exact_count_then_oldest() {
    let (tx, mut rx) = channel(4);
    for i in 0..10 {
        tx.send(i).unwrap();
    }
    assert_eq!(rx.len(), 10);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Lagged(6)));
    for i in 6..10 {
        assert_eq!(rx.try_recv(), Ok(i));
    }
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn capacity_rounds_up_to_power_of_two() {
    let (tx, mut rx) = channel(3);
    for i in 0..5 {
        tx.send(i).unwrap();
    }
    assert_eq!(rx.try_recv(), Err(TryRecvError::Lagged(1)));
    assert_eq!(rx.try_recv(), Ok(1));
}

#[test]
#[should_panic(expected = "broadcast channel capacity cannot be zero")]
fn zero_capacity_panics() {
    let _ = channel::<()>(0);
}

#[test]
#[should_panic(expected = "broadcast channel capacity exceeded `usize::MAX / 2`")]
fn huge_capacity_panics() {
    let _ = channel::<()>((usize::MAX >> 1) + 1);
}

#[test]
fn closed_after_senders_drop_and_buffer_drains() {
    let (tx, mut rx) = channel(4);
    let tx2 = tx.clone();
    tx.send(1).unwrap();
    drop(tx);
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    tx2.send(2).unwrap();
    drop(tx2);
    assert_eq!(rx.try_recv(), Ok(2));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    assert_eq!(
        futures::executor::block_on(rx.recv()),
        Err(RecvError::Closed)
    );
}

#[test]
fn sender_drop_wakes_waiting_receiver() {
    let (tx, mut rx) = channel::<i32>(4);
    let (count, waker) = count_waker();
    let mut fut = pin!(rx.recv());
    assert!(fut
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    drop(tx);
    assert_eq!(wakes(&count), 1);
    assert_eq!(
        fut.as_mut().poll(&mut Context::from_waker(&waker)),
        Poll::Ready(Err(RecvError::Closed))
    );
}

#[test]
fn send_without_receivers_fails() {
    let (tx, rx) = channel(4);
    drop(rx);
    assert_eq!(tx.send(1), Err(SendError(1)));
    assert_eq!(SendError(1).to_string(), "channel closed");
    assert_eq!(format!("{:?}", SendError(1)), "SendError { .. }");
    let mut rx = tx.subscribe();
    assert_eq!(tx.send(2), Ok(1));
    assert_eq!(rx.try_recv(), Ok(2));
}

#[test]
fn values_dropped_once_all_receivers_saw_them() {
    let n = StdArc::new(StdAtomicUsize::new(0));
    let (tx, mut rx1) = channel(4);
    let mut rx2 = tx.subscribe();
    tx.send(Live::new(&n)).ok().unwrap();
    assert_eq!(live(&n), 1);
    drop(rx1.try_recv().ok().unwrap());
    assert_eq!(live(&n), 1, "rx2 has not seen it yet");
    drop(rx2.try_recv().ok().unwrap());
    assert_eq!(live(&n), 0, "everyone saw it: freed");
    assert!(tx.is_empty());
}

#[test]
fn values_dropped_when_overwritten() {
    let n = StdArc::new(StdAtomicUsize::new(0));
    let (tx, mut rx) = channel(2);
    for _ in 0..5 {
        tx.send(Live::new(&n)).ok().unwrap();
    }
    assert_eq!(live(&n), 2);
    assert_eq!(rx.try_recv().err(), Some(TryRecvError::Lagged(3)));
    drop(rx.try_recv().ok().unwrap());
    drop(rx.try_recv().ok().unwrap());
    assert_eq!(live(&n), 0);
}

#[test]
fn receiver_drop_releases_unread_values() {
    let n = StdArc::new(StdAtomicUsize::new(0));
    let (tx, mut rx1) = channel(4);
    let rx2 = tx.subscribe();
    for _ in 0..3 {
        tx.send(Live::new(&n)).ok().unwrap();
    }
    drop(rx1.try_recv().ok().unwrap());
    assert_eq!(live(&n), 3);
    drop(rx2);
    assert_eq!(live(&n), 2, "value 0 was seen by rx1 and released by rx2");
    drop(rx1);
    assert_eq!(live(&n), 0);
    drop(tx);
}

#[test]
fn values_left_in_channel_dropped_with_it() {
    let n = StdArc::new(StdAtomicUsize::new(0));
    let (tx, rx) = channel(4);
    tx.send(Live::new(&n)).ok().unwrap();
    tx.send(Live::new(&n)).ok().unwrap();
    drop(tx);
    assert_eq!(live(&n), 2);
    drop(rx);
    assert_eq!(live(&n), 0);
}

#[test]
fn resubscribe_starts_at_tail() {
    let (tx, mut rx) = channel(4);
    tx.send(1).unwrap();
    let mut rx2 = rx.resubscribe();
    assert_eq!(rx2.try_recv(), Err(TryRecvError::Empty));
    tx.send(2).unwrap();
    assert_eq!(rx2.try_recv(), Ok(2));
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(rx.try_recv(), Ok(2));
    assert!(rx.same_channel(&rx2));
}

#[test]
fn lengths() {
    let (tx, mut rx1) = channel(4);
    let mut rx2 = tx.subscribe();
    assert_eq!((tx.len(), rx1.len()), (0, 0));
    assert!(tx.is_empty() && rx1.is_empty());
    for i in 0..3 {
        tx.send(i).unwrap();
    }
    assert_eq!((tx.len(), rx1.len(), rx2.len()), (3, 3, 3));
    rx1.try_recv().unwrap();
    assert_eq!((tx.len(), rx1.len(), rx2.len()), (3, 2, 3));
    rx2.try_recv().unwrap();
    assert_eq!(tx.len(), 2);
    for i in 3..10 {
        tx.send(i).unwrap();
    }
    assert_eq!(tx.len(), 4);
    assert_eq!(rx1.len(), 9);
    assert_eq!(tx.receiver_count(), 2);
    drop(rx2);
    assert_eq!(tx.receiver_count(), 1);
}

#[test]
fn cancelled_recv_loses_nothing_and_deregisters() {
    let (tx, mut rx) = channel(4);
    {
        let mut fut = pin!(rx.recv());
        assert!(fut
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_pending());
    }
    assert!(loom::lock(&tx.shared.tail).waiters.take_all().is_empty());
    tx.send(1).unwrap();
    assert_eq!(rx.try_recv(), Ok(1));
}

#[test]
fn recv_across_threads() {
    let (tx, mut rx) = channel(1024);
    let t = std::thread::spawn(move || {
        for i in 0..1000 {
            tx.send(i).unwrap();
        }
    });
    for i in 0..1000 {
        assert_eq!(rx.blocking_recv(), Ok(i));
    }
    assert_eq!(rx.blocking_recv(), Err(RecvError::Closed));
    t.join().unwrap();
}

#[test]
fn budget_exhausted_recv_yields() {
    let (tx, mut rx) = channel(4);
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
        let mut fut = pin!(rx.recv());
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        assert_eq!(wakes(&count), 1);
    });
    assert_eq!(rx.try_recv(), Ok(1));
}

#[test]
fn budget_spent_only_on_progress() {
    let (tx, mut rx) = channel(4);
    crate::coop::budget(|| {
        let before = crate::coop::remaining();
        {
            let mut fut = pin!(rx.recv());
            let pending = fut.as_mut().poll(&mut Context::from_waker(Waker::noop()));
            assert!(pending.is_pending());
        }
        assert_eq!(crate::coop::remaining(), before);
        tx.send(1).unwrap();
        let mut fut = pin!(rx.recv());
        let ready = fut.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        assert_eq!(ready, Poll::Ready(Ok(1)));
        assert_eq!(crate::coop::remaining(), before.map(|n| n - 1));
    });
}

#[test]
fn errors_display() {
    assert_eq!(RecvError::Closed.to_string(), "channel closed");
    assert_eq!(RecvError::Lagged(3).to_string(), "channel lagged by 3");
    assert_eq!(TryRecvError::Empty.to_string(), "channel empty");
    assert_eq!(TryRecvError::Closed.to_string(), "channel closed");
    assert_eq!(TryRecvError::Lagged(2).to_string(), "channel lagged by 2");
}

#[test]
fn send_sync_and_debug() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Sender<u8>>();
    assert_send_sync::<Receiver<u8>>();
    assert_send_sync::<RecvError>();
    assert_send_sync::<TryRecvError>();
    let (tx, rx) = channel::<u8>(3);
    let s = format!("{tx:?} {rx:?}");
    assert!(s.contains("Sender") && s.contains("Receiver"), "{s}");
    assert!(s.contains("capacity: 4"), "{s}");
}

#[test]
fn handles_are_send_and_sync_for_a_send_but_not_sync_value() {
    // Invariant 8: Cell is Send but not Sync, as tokio-stream's
    // BroadcastStream<T: Send> needs.
    fn send_sync<T: Send + Sync>() {}
    send_sync::<super::Receiver<std::cell::Cell<u8>>>();
    send_sync::<super::Sender<std::cell::Cell<u8>>>();
    let (tx, mut rx) = super::channel(2);
    tx.send(std::cell::Cell::new(3)).unwrap();
    let moved = std::thread::spawn(move || rx.try_recv().unwrap().get());
    assert_eq!(moved.join().unwrap(), 3);
}

/// `Sender::closed`'s waiter, woken by the last receiver's drop, already
/// sees the channel as that receiver left it: no receiver, and its unread
/// messages no longer counted (as on Tokio).
#[test]
fn the_closed_wake_up_sees_the_last_receiver_gone() {
    struct LookOnWake {
        sender: Sender<u8>,
        seen: std::sync::Mutex<Option<(usize, usize)>>,
    }
    impl Wake for LookOnWake {
        fn wake(self: StdArc<Self>) {
            let seen = (self.sender.receiver_count(), self.sender.len());
            *self.seen.lock().unwrap() = Some(seen);
        }
    }
    let (tx, rx) = channel::<u8>(4);
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    let look = StdArc::new(LookOnWake {
        sender: tx.clone(),
        seen: std::sync::Mutex::new(None),
    });
    let waker = Waker::from(look.clone());
    let mut closed = pin!(tx.closed());
    assert!(closed
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    drop(rx);
    assert_eq!(*look.seen.lock().unwrap(), Some((0, 0)));
    assert!(closed
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_ready());
}
