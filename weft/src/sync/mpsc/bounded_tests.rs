//! Unit tests of the bounded channel (`bounded.rs`, `chan.rs`,
//! `receiver.rs`).

use super::super::error::TryRecvError;
use super::super::test_support::{drop_counter, exhaust_budget, CountWaker, DropCount};
use super::*;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, Waker};

fn poll<F: Future + ?Sized>(f: Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(waker))
}

#[test]
#[should_panic(expected = "buffer > 0")]
fn zero_capacity_panics() {
    let _ = channel::<u8>(0);
}

#[test]
fn waiting_senders_are_served_in_order() {
    let (tx, mut rx) = channel(1);
    tx.try_send(0).unwrap();
    let (a, wa) = CountWaker::new();
    let (b, wb) = CountWaker::new();
    let mut send_a = Box::pin(tx.send(1));
    let mut send_b = Box::pin(tx.send(2));
    assert!(poll(send_a.as_mut(), &wa).is_pending());
    assert!(poll(send_b.as_mut(), &wb).is_pending());
    // A waiting sender is ahead: try_send may not take the next slot.
    assert_eq!(rx.try_recv(), Ok(0));
    assert_eq!(tx.try_send(9), Err(TrySendError::Full(9)));
    assert_eq!((a.count(), b.count()), (1, 0));
    // B is polled first but its turn has not come.
    assert!(poll(send_b.as_mut(), &wb).is_pending());
    assert_eq!(poll(send_a.as_mut(), &wa), Poll::Ready(Ok(())));
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(b.count(), 1);
    assert_eq!(poll(send_b.as_mut(), &wb), Poll::Ready(Ok(())));
    assert_eq!(rx.try_recv(), Ok(2));
    assert_eq!(tx.capacity(), 1);
}

#[test]
fn cancelled_waiting_send_leaves_no_trace() {
    let (tx, mut rx) = channel(1);
    tx.try_send(0).unwrap();
    let (a, wa) = CountWaker::new();
    let mut send_a = Box::pin(tx.send(1));
    assert!(poll(send_a.as_mut(), &wa).is_pending());
    drop(send_a);
    assert_eq!(rx.try_recv(), Ok(0));
    assert_eq!(a.count(), 0);
    assert_eq!(tx.capacity(), 1);
    tx.try_send(2).unwrap();
    assert_eq!(rx.try_recv(), Ok(2));
}

#[test]
fn cancelled_granted_send_passes_the_slot_on() {
    let (tx, mut rx) = channel(1);
    tx.try_send(0).unwrap();
    let (_a, wa) = CountWaker::new();
    let (b, wb) = CountWaker::new();
    let mut send_a = Box::pin(tx.send(1));
    let mut send_b = Box::pin(tx.send(2));
    assert!(poll(send_a.as_mut(), &wa).is_pending());
    assert!(poll(send_b.as_mut(), &wb).is_pending());
    assert_eq!(rx.try_recv(), Ok(0));
    // A was granted the slot but is dropped before it sees it.
    drop(send_a);
    assert_eq!(b.count(), 1);
    assert_eq!(poll(send_b.as_mut(), &wb), Poll::Ready(Ok(())));
    assert_eq!(rx.try_recv(), Ok(2));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    assert_eq!(tx.capacity(), 1);
}

#[test]
fn only_latest_waker_is_woken() {
    let (tx, mut rx) = channel(1);
    tx.try_send(0).unwrap();
    let (a, wa) = CountWaker::new();
    let (b, wb) = CountWaker::new();
    let mut send = Box::pin(tx.send(1));
    assert!(poll(send.as_mut(), &wa).is_pending());
    assert!(poll(send.as_mut(), &wb).is_pending());
    assert_eq!(rx.try_recv(), Ok(0));
    assert_eq!((a.count(), b.count()), (0, 1));

    let (c, wc) = CountWaker::new();
    let (d, wd) = CountWaker::new();
    assert_eq!(poll(send.as_mut(), &wb), Poll::Ready(Ok(())));
    assert_eq!(rx.try_recv(), Ok(1));
    let mut recv = Box::pin(rx.recv());
    assert!(poll(recv.as_mut(), &wc).is_pending());
    assert!(poll(recv.as_mut(), &wd).is_pending());
    tx.try_send(5).unwrap();
    assert_eq!((c.count(), d.count()), (0, 1));
    assert_eq!(poll(recv.as_mut(), &wd), Poll::Ready(Some(5)));
}

#[test]
fn permit_accounting() {
    let (tx, mut rx) = channel::<u32>(2);
    let p1 = tx.try_reserve().unwrap();
    let p2 = tx.try_reserve().unwrap();
    assert_eq!(tx.capacity(), 0);
    assert_eq!(tx.try_reserve().unwrap_err(), TrySendError::Full(()));
    drop(p1);
    assert_eq!(tx.capacity(), 1);
    p2.send(7);
    assert_eq!(tx.capacity(), 1);
    assert_eq!(rx.len(), 1);
    assert_eq!(rx.try_recv(), Ok(7));
    assert_eq!(tx.capacity(), 2);
    assert_eq!(rx.capacity(), 2);
    assert_eq!(rx.max_capacity(), 2);

    let permit = tx.clone().reserve_owned();
    let permit = futures::executor::block_on(permit).unwrap();
    assert_eq!(tx.strong_count(), 2);
    let tx2 = permit.release();
    assert_eq!(tx.capacity(), 2);
    drop(tx2);
    assert_eq!(tx.strong_count(), 1);
}

#[test]
fn dropped_permit_wakes_waiting_sender() {
    let (tx, _rx) = channel::<u32>(1);
    let permit = tx.try_reserve().unwrap();
    let (a, wa) = CountWaker::new();
    let mut send = Box::pin(tx.send(1));
    assert!(poll(send.as_mut(), &wa).is_pending());
    drop(permit);
    assert_eq!(a.count(), 1);
    assert_eq!(poll(send.as_mut(), &wa), Poll::Ready(Ok(())));
}

#[test]
fn close_waits_for_outstanding_permits() {
    let (tx, mut rx) = channel::<u32>(2);
    let permit = tx.try_reserve().unwrap();
    rx.close();
    assert!(rx.is_closed());
    assert!(tx.is_closed());
    assert_eq!(tx.try_send(1), Err(TrySendError::Closed(1)));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    let (a, wa) = CountWaker::new();
    let mut recv = Box::pin(rx.recv());
    assert!(poll(recv.as_mut(), &wa).is_pending());
    permit.send(3);
    assert_eq!(a.count(), 1);
    assert_eq!(poll(recv.as_mut(), &wa), Poll::Ready(Some(3)));
    drop(recv);

    let permit = tx.try_reserve();
    assert!(permit.is_err());
    let (tx, mut rx) = channel::<u32>(2);
    let permit = tx.try_reserve().unwrap();
    rx.close();
    let mut recv = Box::pin(rx.recv());
    assert!(poll(recv.as_mut(), &wa).is_pending());
    drop(permit);
    assert_eq!(a.count(), 2);
    assert_eq!(poll(recv.as_mut(), &wa), Poll::Ready(None));
}

#[test]
fn close_fails_waiting_senders_and_granted_ones_not_yet_polled() {
    let (tx, mut rx) = channel(1);
    tx.try_send(0).unwrap();
    let (a, wa) = CountWaker::new();
    let (b, wb) = CountWaker::new();
    let mut send_a = Box::pin(tx.send(1));
    let mut send_b = Box::pin(tx.send(2));
    assert!(poll(send_a.as_mut(), &wa).is_pending());
    assert!(poll(send_b.as_mut(), &wb).is_pending());
    assert_eq!(rx.try_recv(), Ok(0)); // grants A
    rx.close();
    assert_eq!((a.count(), b.count()), (1, 1));
    assert_eq!(poll(send_b.as_mut(), &wb), Poll::Ready(Err(SendError(2))));
    // Granted before the close, polled after it: nothing gets in after
    // `close`, as in Tokio (its slot is back once the send has failed).
    assert_eq!(poll(send_a.as_mut(), &wa), Poll::Ready(Err(SendError(1))));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn receiver_drop_fails_granted_sender_and_drops_messages() {
    let drops = drop_counter();
    let (tx, mut rx) = channel(1);
    tx.try_send(DropCount(drops.clone())).ok().unwrap();
    let (_a, wa) = CountWaker::new();
    let mut send_a = Box::pin(tx.send(DropCount(drops.clone())));
    assert!(poll(send_a.as_mut(), &wa).is_pending());
    drop(rx.try_recv().ok().unwrap()); // grants A
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    tx.try_send(DropCount(drops.clone())).err().unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    drop(rx);
    match poll(send_a.as_mut(), &wa) {
        Poll::Ready(Err(SendError(v))) => drop(v),
        other => panic!("expected failure, got {:?}", other.map(|r| r.is_ok())),
    }
    assert_eq!(drops.load(Ordering::SeqCst), 3);
    assert!(tx.is_closed());
}

/// Invariant 6: as in Tokio, the value waits in the channel (its slot
/// taken) until the channel goes with its last handle.
#[test]
fn permit_used_after_receiver_drop_keeps_value_until_the_channel_goes() {
    let drops = drop_counter();
    let (tx, rx) = channel(1);
    let permit = tx.try_reserve().unwrap();
    drop(rx);
    permit.send(DropCount(drops.clone()));
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    assert_eq!(tx.capacity(), 0);
    drop(tx);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn message_destructor_may_use_the_channel() {
    // Invariant 5: a message dropped with the receiver drops a sender of
    // the same channel; this must not deadlock on the channel's lock.
    struct HoldsSender(#[allow(dead_code)] Option<Sender<HoldsSender>>);
    let (tx, rx) = channel(2);
    tx.try_send(HoldsSender(Some(tx.clone()))).ok().unwrap();
    drop(tx);
    drop(rx);
}

#[test]
fn last_sender_drop_wakes_receiver() {
    let (tx, mut rx) = channel::<u8>(1);
    let tx2 = tx.clone();
    let (a, wa) = CountWaker::new();
    let mut recv = Box::pin(rx.recv());
    assert!(poll(recv.as_mut(), &wa).is_pending());
    drop(tx);
    assert_eq!(a.count(), 0);
    drop(tx2);
    assert_eq!(a.count(), 1);
    assert_eq!(poll(recv.as_mut(), &wa), Poll::Ready(None));
}

#[test]
fn closed_future_resolves_and_cancels() {
    let (tx, mut rx) = channel::<u8>(1);
    let (a, wa) = CountWaker::new();
    let mut c1 = Box::pin(tx.closed());
    let mut c2 = Box::pin(tx.closed());
    assert!(poll(c1.as_mut(), &wa).is_pending());
    assert!(poll(c2.as_mut(), &wa).is_pending());
    drop(c2);
    rx.close();
    assert_eq!(a.count(), 1);
    assert!(poll(c1.as_mut(), &wa).is_ready());
    assert!(poll(Box::pin(tx.closed()).as_mut(), &wa).is_ready());
}

#[test]
fn budget_exhausted_recv_and_send_yield() {
    let (tx, mut rx) = channel(4);
    tx.try_send(1).unwrap();
    let (count, waker) = CountWaker::new();
    let mut cx = Context::from_waker(&waker);
    crate::coop::budget(|| {
        exhaust_budget(&mut cx);
        assert!(rx.poll_recv(&mut cx).is_pending());
        assert_eq!(count.count(), 1);
        assert!(Box::pin(tx.send(2)).as_mut().poll(&mut cx).is_pending());
        assert!(Box::pin(tx.reserve()).as_mut().poll(&mut cx).is_pending());
        assert_eq!(count.count(), 3);
        // Nothing was lost or reserved.
        assert_eq!(rx.len(), 1);
        assert_eq!(tx.capacity(), 3);
    });
    assert_eq!(rx.poll_recv(&mut cx), Poll::Ready(Some(1)));
}

#[test]
fn budget_spent_only_on_progress() {
    let (tx, mut rx) = channel::<u8>(1);
    crate::coop::budget(|| {
        let before = crate::coop::remaining();
        assert!(poll(Box::pin(rx.recv()).as_mut(), Waker::noop()).is_pending());
        assert_eq!(crate::coop::remaining(), before);
        tx.try_send(1).unwrap();
        assert!(poll(Box::pin(tx.send(2)).as_mut(), Waker::noop()).is_pending());
        assert_eq!(crate::coop::remaining(), before);
        assert!(poll(Box::pin(rx.recv()).as_mut(), Waker::noop()).is_ready());
        assert_eq!(crate::coop::remaining(), before.map(|n| n - 1));
    });
}

#[test]
fn recv_many_limits_and_releases_capacity() {
    let (tx, mut rx) = channel(4);
    for i in 0..4 {
        tx.try_send(i).unwrap();
    }
    let mut buf = vec![100];
    let n = futures::executor::block_on(rx.recv_many(&mut buf, 3));
    assert_eq!(n, 3);
    assert_eq!(buf, [100, 0, 1, 2]);
    assert_eq!(tx.capacity(), 3);
    assert_eq!(futures::executor::block_on(rx.recv_many(&mut buf, 0)), 0);
    drop(tx);
    assert_eq!(futures::executor::block_on(rx.recv_many(&mut buf, 9)), 1);
    assert_eq!(futures::executor::block_on(rx.recv_many(&mut buf, 9)), 0);
}

#[test]
fn weak_sender() {
    let (tx, mut rx) = channel::<u8>(1);
    let weak = tx.downgrade();
    let weak2 = weak.clone();
    let tx2 = weak.upgrade().unwrap();
    assert!(tx2.same_channel(&tx));
    drop(tx);
    drop(tx2);
    assert!(weak2.upgrade().is_none());
    assert!(rx.is_closed());
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn send_sync_and_debug() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Sender<std::cell::Cell<u8>>>();
    assert_send_sync::<Receiver<std::cell::Cell<u8>>>();
    assert_send_sync::<Permit<'_, std::cell::Cell<u8>>>();
    assert_send_sync::<OwnedPermit<std::cell::Cell<u8>>>();
    assert_send_sync::<WeakSender<std::cell::Cell<u8>>>();
    fn assert_send<T: Send>(_: &T) {}
    let (tx, mut rx) = channel::<std::cell::Cell<u8>>(1);
    assert_send(&tx.send(std::cell::Cell::new(1)));
    assert_send(&tx.reserve());
    assert_send(&tx.closed());
    assert_send(&rx.recv());
    let s = format!("{tx:?} {rx:?} {:?}", tx.downgrade());
    assert!(s.contains("Sender") && s.contains("Receiver"), "{s}");
}

#[test]
fn batched_messages_keep_their_slots_until_received() {
    let (tx, mut rx) = channel::<u32>(3);
    for i in 0..3 {
        tx.try_send(i).unwrap();
    }
    // The first receive moves all three into the receiver's batch; only the
    // received one frees its slot.
    assert_eq!(rx.try_recv(), Ok(0));
    assert_eq!(tx.capacity(), 1);
    assert_eq!(rx.len(), 2);
    tx.try_send(3).unwrap();
    assert_eq!(tx.try_send(4), Err(TrySendError::Full(4)));
    // Order holds across the batch and the queue behind it.
    assert_eq!(rx.len(), 3);
    for i in 1..4 {
        assert_eq!(rx.try_recv(), Ok(i));
    }
    assert_eq!(tx.capacity(), 3);
    assert!(rx.is_empty());
}

#[test]
fn receive_from_batch_serves_waiting_sender() {
    let (tx, mut rx) = channel::<u32>(2);
    tx.try_send(0).unwrap();
    tx.try_send(1).unwrap();
    let (a, wa) = CountWaker::new();
    let mut send = Box::pin(tx.send(2));
    assert!(poll(send.as_mut(), &wa).is_pending());
    assert_eq!(rx.try_recv(), Ok(0)); // moves 0 and 1 into the batch
    assert_eq!(a.count(), 1);
    assert_eq!(poll(send.as_mut(), &wa), Poll::Ready(Ok(())));
    // 1 comes from the batch (no lock), 2 from the queue.
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(rx.try_recv(), Ok(2));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn receiver_drop_drops_its_batch_and_the_queue() {
    let drops = drop_counter();
    let (tx, mut rx) = channel(4);
    for _ in 0..3 {
        tx.try_send(DropCount(drops.clone())).ok().unwrap();
    }
    drop(rx.try_recv().ok().unwrap()); // two stay in the batch
    tx.try_send(DropCount(drops.clone())).ok().unwrap(); // one in the queue
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(rx);
    assert_eq!(drops.load(Ordering::SeqCst), 4);
    assert!(tx.is_closed());
    // A send after the drop hands the value back.
    match tx.try_send(DropCount(drops.clone())) {
        Err(TrySendError::Closed(v)) => drop(v),
        other => panic!("expected Closed, got {:?}", other.is_ok()),
    }
    assert_eq!(drops.load(Ordering::SeqCst), 5);
}

#[test]
fn closed_receiver_drains_batch_then_ends() {
    let (tx, mut rx) = channel::<u32>(4);
    for i in 0..3 {
        tx.try_send(i).unwrap();
    }
    assert_eq!(rx.try_recv(), Ok(0));
    rx.close();
    assert_eq!(tx.try_send(9), Err(TrySendError::Closed(9)));
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(rx.try_recv(), Ok(2));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn recv_many_takes_from_the_batch_and_the_queue_behind_it() {
    let (tx, mut rx) = channel::<u32>(8);
    tx.try_send(0).unwrap();
    tx.try_send(1).unwrap();
    assert_eq!(rx.try_recv(), Ok(0)); // 1 stays in the receiver's batch
    for i in 2..5 {
        tx.try_send(i).unwrap();
    }
    let mut got = Vec::new();
    let n = futures::executor::block_on(rx.recv_many(&mut got, 10));
    assert_eq!(n, 4);
    assert_eq!(got, [1, 2, 3, 4]);
    assert_eq!(tx.capacity(), 8);
    // The limit still holds across the two.
    for i in 0..5 {
        tx.try_send(i).unwrap();
    }
    assert_eq!(rx.try_recv(), Ok(0));
    tx.try_send(5).unwrap();
    got.clear();
    assert_eq!(futures::executor::block_on(rx.recv_many(&mut got, 5)), 5);
    assert_eq!(got, [1, 2, 3, 4, 5]);
}

#[test]
fn cancelled_granted_send_after_close_wakes_the_receiver() {
    // The slot a waiting send was granted comes back when that send is
    // dropped; after `close`, that can be what ends the channel.
    let (tx, mut rx) = channel::<u32>(1);
    tx.try_send(1).unwrap();
    let mut send = Box::pin(tx.send(2));
    assert!(poll(send.as_mut(), Waker::noop()).is_pending());
    assert_eq!(rx.try_recv(), Ok(1)); // grants the slot to `send`
    rx.close(); // which keeps it
    let (woken, waker) = CountWaker::new();
    let mut recv = Box::pin(rx.recv());
    assert!(poll(recv.as_mut(), &waker).is_pending());
    drop(send);
    assert_eq!(woken.count(), 1);
    assert_eq!(poll(recv.as_mut(), &waker), Poll::Ready(None));
}
