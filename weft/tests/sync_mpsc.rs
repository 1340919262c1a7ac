//! `weft::sync::mpsc` through the public API, on every runtime
//! flavour (`rt_test!` in `support/mod.rs`).

#[macro_use]
mod support;

rt_test! {
    use std::future::{poll_fn, Future};
    use std::pin::Pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll};
    use std::time::{Duration, Instant};
    use weft::sync::mpsc::{self, error::{SendError, TryRecvError, TrySendError}};
    use weft::task::yield_now;

    /// Counts its own drops.
    struct DropCount(Arc<AtomicUsize>);

    impl Drop for DropCount {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Polls `fut` exactly once.
    async fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
        poll_fn(|cx| Poll::Ready(Pin::new(&mut *fut).poll(cx))).await
    }

    /// Yields until `cond` holds; panics after 5 s.
    async fn wait_until(cond: impl Fn() -> bool) {
        let start = Instant::now();
        while !cond() {
            assert!(start.elapsed() < Duration::from_secs(5), "condition never held");
            yield_now().await;
        }
    }

    #[test]
    fn send_recv_order_bounded() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(4);
            weft::spawn(async move {
                for i in 0..100 {
                    tx.send(i).await.unwrap();
                }
            });
            for i in 0..100 {
                assert_eq!(rx.recv().await, Some(i));
            }
            assert_eq!(rx.recv().await, None);
        });
    }

    #[test]
    fn send_recv_order_unbounded() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::unbounded_channel();
            weft::spawn(async move {
                for i in 0..100 {
                    tx.send(i).unwrap();
                }
            });
            for i in 0..100 {
                assert_eq!(rx.recv().await, Some(i));
            }
            assert_eq!(rx.recv().await, None);
        });
    }

    fn check_many(received: Vec<(usize, usize)>, producers: usize, per: usize) {
        assert_eq!(received.len(), producers * per);
        let mut next = vec![0; producers];
        for (p, i) in received {
            assert_eq!(i, next[p], "producer {p}: out of order or duplicated");
            next[p] += 1;
        }
        assert!(next.iter().all(|&n| n == per));
    }

    #[test]
    fn many_producers_bounded() {
        const P: usize = 8;
        const N: usize = 1_000;
        let got = rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(16);
            for p in 0..P {
                let tx = tx.clone();
                weft::spawn(async move {
                    for i in 0..N {
                        tx.send((p, i)).await.unwrap();
                    }
                });
            }
            drop(tx);
            let mut got = Vec::new();
            while let Some(v) = rx.recv().await {
                got.push(v);
            }
            got
        });
        check_many(got, P, N);
    }

    #[test]
    fn many_producers_unbounded() {
        const P: usize = 8;
        const N: usize = 1_000;
        let got = rt().block_on(async {
            let (tx, mut rx) = mpsc::unbounded_channel();
            for p in 0..P {
                let tx = tx.clone();
                weft::spawn(async move {
                    for i in 0..N {
                        tx.send((p, i)).unwrap();
                        if i % 100 == 0 {
                            yield_now().await;
                        }
                    }
                });
            }
            drop(tx);
            let mut got = Vec::new();
            let mut buf = Vec::new();
            while rx.recv_many(&mut buf, 64).await > 0 {
                got.append(&mut buf);
            }
            got
        });
        check_many(got, P, N);
    }

    #[test]
    fn back_pressure_third_send_waits() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(2);
            let sent = Arc::new(AtomicUsize::new(0));
            let s = sent.clone();
            let producer = weft::spawn(async move {
                for i in 0..3 {
                    tx.send(i).await.unwrap();
                    s.fetch_add(1, Ordering::SeqCst);
                }
            });
            wait_until(|| sent.load(Ordering::SeqCst) == 2).await;
            for _ in 0..50 {
                yield_now().await;
            }
            assert_eq!(sent.load(Ordering::SeqCst), 2, "third send must wait");
            assert_eq!(rx.recv().await, Some(0));
            wait_until(|| sent.load(Ordering::SeqCst) == 3).await;
            producer.await.unwrap();
            assert_eq!(rx.recv().await, Some(1));
            assert_eq!(rx.recv().await, Some(2));
            assert_eq!(rx.recv().await, None);
        });
    }

    #[test]
    fn try_send_full_and_closed() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(1);
            tx.try_send(1).unwrap();
            assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
            assert_eq!(rx.recv().await, Some(1));
            tx.try_send(3).unwrap();
            drop(rx);
            assert_eq!(tx.try_send(4), Err(TrySendError::Closed(4)));
            assert_eq!(tx.send(5).await, Err(SendError(5)));
        });
    }

    #[test]
    fn reserve_permit_send_and_drop() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(2);
            let permit = tx.reserve().await.unwrap();
            assert_eq!(tx.capacity(), 1);
            assert_eq!(tx.max_capacity(), 2);
            permit.send(1);
            assert_eq!(tx.capacity(), 1);
            let p1 = tx.reserve().await.unwrap();
            assert_eq!(tx.capacity(), 0);
            assert!(matches!(tx.try_send(9), Err(TrySendError::Full(9))));
            drop(p1);
            assert_eq!(tx.capacity(), 1);
            assert_eq!(rx.recv().await, Some(1));
            assert_eq!(tx.capacity(), 2);

            // A dropped permit lets a waiting sender through.
            let p1 = tx.reserve().await.unwrap();
            let p2 = tx.reserve().await.unwrap();
            let tx2 = tx.clone();
            let waiting = weft::spawn(async move { tx2.send(7).await });
            for _ in 0..20 {
                yield_now().await;
            }
            assert!(!waiting.is_finished());
            drop(p1);
            waiting.await.unwrap().unwrap();
            p2.send(8);
            assert_eq!(rx.recv().await, Some(7));
            assert_eq!(rx.recv().await, Some(8));

            let owned = tx.clone().reserve_owned().await.unwrap();
            let handle = weft::spawn(async move {
                drop(owned.send(11));
            });
            handle.await.unwrap();
            assert_eq!(rx.recv().await, Some(11));
        });
    }

    #[test]
    fn close_semantics() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(4);
            tx.send(1).await.unwrap();
            let permit = tx.clone().reserve_owned().await.unwrap();
            let closed = {
                let tx = tx.clone();
                weft::spawn(async move { tx.closed().await })
            };
            rx.close();
            closed.await.unwrap();
            assert!(tx.is_closed());
            assert!(rx.is_closed());
            assert!(tx.send(2).await.is_err());
            assert!(tx.reserve().await.is_err());
            assert_eq!(rx.recv().await, Some(1));
            // The outstanding permit can still send; recv waits for it.
            weft::spawn(async move {
                yield_now().await;
                drop(permit.send(3));
            });
            assert_eq!(rx.recv().await, Some(3));
            assert_eq!(rx.recv().await, None);
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));

            let (tx, mut rx) = mpsc::unbounded_channel();
            tx.send(1).unwrap();
            rx.close();
            assert!(tx.send(2).is_err());
            tx.closed().await;
            assert_eq!(rx.recv().await, Some(1));
            assert_eq!(rx.recv().await, None);
        });
    }

    #[test]
    fn receiver_drop_drops_buffered_and_fails_sends() {
        rt().block_on(async {
            let drops = Arc::new(AtomicUsize::new(0));
            let (tx, rx) = mpsc::channel(8);
            for _ in 0..5 {
                tx.send(DropCount(drops.clone())).await.ok().unwrap();
            }
            let (utx, urx) = mpsc::unbounded_channel();
            for _ in 0..5 {
                utx.send(DropCount(drops.clone())).ok().unwrap();
            }
            assert_eq!(drops.load(Ordering::SeqCst), 0);
            weft::spawn(async move { drop(rx) }).await.unwrap();
            assert_eq!(drops.load(Ordering::SeqCst), 5);
            drop(urx);
            assert_eq!(drops.load(Ordering::SeqCst), 10);
            assert!(tx.send(DropCount(drops.clone())).await.is_err());
            assert!(utx.send(DropCount(drops.clone())).is_err());
            assert_eq!(drops.load(Ordering::SeqCst), 12);
            assert!(tx.is_closed() && utx.is_closed());
        });
    }

    #[test]
    fn all_senders_dropped_ends_after_draining() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(8);
            for t in 0..3 {
                let tx = tx.clone();
                weft::spawn(async move {
                    tx.send(t).await.unwrap();
                });
            }
            drop(tx);
            let mut got = Vec::new();
            while let Some(v) = rx.recv().await {
                got.push(v);
            }
            got.sort();
            assert_eq!(got, [0, 1, 2]);
            assert!(rx.is_closed());
        });
    }

    #[test]
    fn cancelled_send_loses_nothing() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(1);
            tx.send(0).await.unwrap();
            let mut send = Box::pin(tx.send(1));
            assert!(poll_once(&mut send).await.is_pending());
            drop(send);
            assert_eq!(tx.capacity(), 0);
            let tx2 = tx.clone();
            let other = weft::spawn(async move { tx2.send(2).await });
            assert_eq!(rx.recv().await, Some(0));
            other.await.unwrap().unwrap();
            assert_eq!(rx.recv().await, Some(2));
            assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
            assert_eq!(tx.capacity(), 1);
        });
    }

    #[test]
    fn cancelled_recv_loses_nothing() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(1);
            let (utx, mut urx) = mpsc::unbounded_channel();
            {
                let mut recv = Box::pin(rx.recv());
                assert!(poll_once(&mut recv).await.is_pending());
                let mut urecv = Box::pin(urx.recv());
                assert!(poll_once(&mut urecv).await.is_pending());
            }
            tx.send(1).await.unwrap();
            utx.send(2).unwrap();
            assert_eq!(rx.recv().await, Some(1));
            assert_eq!(urx.recv().await, Some(2));
        });
    }

    #[test]
    fn weak_sender_upgrade_fails_after_senders_drop() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel::<u8>(1);
            let weak = tx.downgrade();
            weak.upgrade().unwrap().send(1).await.unwrap();
            assert_eq!(rx.recv().await, Some(1));
            drop(tx);
            assert!(weak.upgrade().is_none());
            assert_eq!(rx.recv().await, None);

            let (tx, mut rx) = mpsc::unbounded_channel::<u8>();
            let weak = tx.downgrade();
            drop(tx);
            assert!(weak.upgrade().is_none());
            assert_eq!(rx.recv().await, None);
        });
    }

    #[test]
    fn recv_many_batches() {
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(10);
            for i in 0..10 {
                tx.send(i).await.unwrap();
            }
            let mut buf = Vec::new();
            assert_eq!(rx.recv_many(&mut buf, 4).await, 4);
            assert_eq!(rx.recv_many(&mut buf, 100).await, 6);
            assert_eq!(buf, (0..10).collect::<Vec<_>>());
            assert_eq!(tx.capacity(), 10);
            let waiting = weft::spawn(async move {
                let mut buf = Vec::new();
                let n = rx.recv_many(&mut buf, 8).await;
                (n, buf)
            });
            tx.send(42).await.unwrap();
            let (n, buf) = waiting.await.unwrap();
            assert!(n >= 1 && buf[0] == 42);
        });
    }

    #[test]
    fn blocking_send_and_recv_from_threads() {
        let rt = rt();
        let (tx, mut rx) = mpsc::channel(2);
        let producer = std::thread::spawn(move || {
            for i in 0..100 {
                tx.blocking_send(i).unwrap();
            }
        });
        let got = rt.block_on(async move {
            let mut got = Vec::new();
            while let Some(v) = rx.recv().await {
                got.push(v);
            }
            got
        });
        producer.join().unwrap();
        assert_eq!(got, (0..100).collect::<Vec<_>>());

        let (tx, mut rx) = mpsc::channel(2);
        let (utx, mut urx) = mpsc::unbounded_channel();
        let consumer = std::thread::spawn(move || {
            let mut got = Vec::new();
            while let Some(v) = rx.blocking_recv() {
                got.push(v);
            }
            got.push(urx.blocking_recv().unwrap());
            got
        });
        rt.block_on(async move {
            for i in 0..100 {
                tx.send(i).await.unwrap();
            }
            utx.send(100).unwrap();
        });
        assert_eq!(consumer.join().unwrap(), (0..101).collect::<Vec<_>>());
    }

    fn panic_message(err: Box<dyn std::any::Any + Send>) -> String {
        match err.downcast::<String>() {
            Ok(s) => *s,
            Err(err) => err.downcast::<&str>().map(|s| s.to_string()).unwrap_or_default(),
        }
    }

    #[test]
    fn blocking_calls_panic_inside_runtime() {
        let rt = rt();
        let (tx, mut rx) = mpsc::channel::<u8>(1);
        let (_utx, mut urx) = mpsc::unbounded_channel::<u8>();
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async { tx.blocking_send(1) })
        }))
        .unwrap_err();
        let msg = panic_message(err);
        assert!(msg.contains("blocking_send") && msg.contains("send(value).await"), "{msg}");
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async { rx.blocking_recv() })
        }))
        .unwrap_err();
        let msg = panic_message(err);
        assert!(msg.contains("blocking_recv") && msg.contains("recv().await"), "{msg}");
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async { urx.blocking_recv() })
        }))
        .unwrap_err();
        assert!(panic_message(err).contains("UnboundedReceiver::blocking_recv"));
    }

    /// Counts how often the wrapped future is polled.
    struct CountPolls<F> {
        inner: Pin<Box<F>>,
        polls: Arc<AtomicUsize>,
    }

    impl<F: Future> Future for CountPolls<F> {
        type Output = F::Output;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            self.inner.as_mut().poll(cx)
        }
    }

    #[test]
    fn draining_ready_channel_yields_to_scheduler() {
        const N: usize = 1_000;
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel(N);
            let (utx, mut urx) = mpsc::unbounded_channel();
            for i in 0..N {
                tx.try_send(i).unwrap();
                utx.send(i).unwrap();
            }
            let polls = Arc::new(AtomicUsize::new(0));
            let task = CountPolls {
                inner: Box::pin(async move {
                    for i in 0..N {
                        assert_eq!(rx.recv().await, Some(i));
                        assert_eq!(urx.recv().await, Some(i));
                    }
                }),
                polls: polls.clone(),
            };
            weft::spawn(task).await.unwrap();
            // 2,000 ready receives at 128 per poll.
            let n = polls.load(Ordering::SeqCst);
            assert!(n >= 2 * N / 128, "only {n} polls");

            // Sending into a channel with room also yields.
            let (tx, _rx) = mpsc::channel(N);
            let polls = Arc::new(AtomicUsize::new(0));
            let task = CountPolls {
                inner: Box::pin(async move {
                    for i in 0..N {
                        tx.send(i).await.unwrap();
                    }
                }),
                polls: polls.clone(),
            };
            weft::spawn(task).await.unwrap();
            let n = polls.load(Ordering::SeqCst);
            assert!(n >= 7, "only {n} polls");
        });
    }

    #[test]
    fn send_timeout_waits_times_out_and_reports_close() {
        use std::time::Duration;
        use weft::sync::mpsc::error::SendTimeoutError;
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel::<u32>(1);
            tx.send_timeout(1, Duration::from_millis(50)).await.unwrap();
            // Full: times out and hands the value back.
            let err = tx.send_timeout(2, Duration::from_millis(10)).await.unwrap_err();
            assert_eq!(err, SendTimeoutError::Timeout(2));
            assert_eq!(err.to_string(), "timed out waiting on send operation");
            // The timed-out send took no capacity: after one receive there is
            // exactly one free slot again.
            assert_eq!(rx.recv().await, Some(1));
            assert_eq!(tx.capacity(), 1);
            // Capacity freed while waiting: the send completes.
            tx.try_send(3).unwrap();
            let receiver = weft::spawn(async move {
                weft::time::sleep(Duration::from_millis(5)).await;
                let got = rx.recv().await;
                (got, rx)
            });
            tx.send_timeout(4, Duration::from_secs(30)).await.unwrap();
            let (got, mut rx) = receiver.await.unwrap();
            assert_eq!(got, Some(3));
            assert_eq!(rx.recv().await, Some(4));
            drop(rx);
            let err = tx.send_timeout(5, Duration::from_secs(30)).await.unwrap_err();
            assert_eq!(err, SendTimeoutError::Closed(5));
            assert_eq!(err.into_inner(), 5);
        });
    }

    /// A closed receiver waits for the slots still out, and is woken once
    /// the last one is back: by a reservation that fails on the closed
    /// channel (it held a slot assigned to it before the close), not by a
    /// permit's return that leaves another slot out.
    #[test]
    fn a_closed_receiver_is_woken_when_the_last_slot_comes_back() {
        use std::sync::atomic::AtomicBool;
        use std::task::Wake;
        struct Flag(AtomicBool);
        impl Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        rt().block_on(async {
            let (tx, mut rx) = mpsc::channel::<u8>(1);
            let permit = tx.try_reserve().unwrap();
            let reserve_flag = Arc::new(Flag(AtomicBool::new(false)));
            let reserve_waker = std::task::Waker::from(reserve_flag.clone());
            let mut reserve = Box::pin(tx.reserve());
            let mut cx = Context::from_waker(&reserve_waker);
            assert!(reserve.as_mut().poll(&mut cx).is_pending());
            // The slot goes to the queued reservation.
            drop(permit);
            assert!(reserve_flag.0.load(Ordering::SeqCst));
            rx.close();
            let recv_flag = Arc::new(Flag(AtomicBool::new(false)));
            let recv_waker = std::task::Waker::from(recv_flag.clone());
            let mut recv = Box::pin(rx.recv());
            let mut recv_cx = Context::from_waker(&recv_waker);
            assert!(recv.as_mut().poll(&mut recv_cx).is_pending(), "a slot is still out");
            assert!(reserve.as_mut().poll(&mut cx).is_ready(), "the reservation fails");
            assert!(recv_flag.0.load(Ordering::SeqCst), "the receiver was not woken");
            assert!(matches!(recv.as_mut().poll(&mut recv_cx), Poll::Ready(None)));
        });
    }
}
