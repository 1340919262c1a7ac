//! `sync::watch` and `sync::broadcast` through the public API, on every runtime
//! flavour (`rt_test!` in `support/mod.rs`).

#[macro_use]
mod support;

rt_test! {
    use std::future::{poll_fn, Future};
    use std::pin::{pin, Pin};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll};
    use weft::sync::broadcast::{self, error::RecvError, error::TryRecvError};
    use weft::sync::watch;

    /// Polls `fut` exactly once from inside a task.
    async fn poll_once<F: Future>(fut: Pin<&mut F>) -> Poll<F::Output> {
        let mut fut = Some(fut);
        poll_fn(move |cx| Poll::Ready(fut.take().unwrap().poll(cx))).await
    }

    /// Counts live instances: +1 on creation and clone, -1 on drop; also
    /// counts every drop.
    #[derive(Debug)]
    struct Live {
        counts: Arc<(AtomicUsize, AtomicUsize)>,
        n: u32,
    }

    impl Live {
        fn new(counts: &Arc<(AtomicUsize, AtomicUsize)>, n: u32) -> Live {
            counts.0.fetch_add(1, Ordering::SeqCst);
            Live { counts: counts.clone(), n }
        }
    }

    impl Clone for Live {
        fn clone(&self) -> Live {
            Live::new(&self.counts, self.n)
        }
    }

    impl Drop for Live {
        fn drop(&mut self) {
            self.counts.0.fetch_sub(1, Ordering::SeqCst);
            self.counts.1.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Counts how many times the wrapped future is polled.
    struct PollCount<F> {
        inner: Pin<Box<F>>,
        polls: Arc<AtomicUsize>,
    }

    impl<F: Future> Future for PollCount<F> {
        type Output = F::Output;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            self.inner.as_mut().poll(cx)
        }
    }

    // ----- watch ---------------------------------------------------------

    #[test]
    fn watch_changed_after_send() {
        rt().block_on(async {
            let (tx, mut rx) = watch::channel(0);
            let h = weft::spawn(async move {
                rx.changed().await.unwrap();
                *rx.borrow_and_update()
            });
            tx.send(5).unwrap();
            assert_eq!(h.await.unwrap(), 5);
        });
    }

    #[test]
    fn watch_no_change_is_pending() {
        rt().block_on(async {
            let (tx, mut rx) = watch::channel(0);
            {
                let mut fut = pin!(rx.changed());
                assert!(poll_once(fut.as_mut()).await.is_pending());
            }
            tx.send(1).unwrap();
            rx.changed().await.unwrap();
            let mut fut = pin!(rx.changed());
            assert!(poll_once(fut.as_mut()).await.is_pending());
        });
    }

    #[test]
    fn watch_borrow_and_update_marks_seen() {
        rt().block_on(async {
            let (tx, mut rx) = watch::channel("a");
            tx.send("b").unwrap();
            assert_eq!(*rx.borrow(), "b");
            assert!(rx.has_changed().unwrap());
            assert_eq!(*rx.borrow_and_update(), "b");
            assert!(!rx.has_changed().unwrap());
            let mut fut = pin!(rx.changed());
            assert!(poll_once(fut.as_mut()).await.is_pending());
        });
    }

    #[test]
    fn watch_send_fails_without_receivers_send_replace_works() {
        rt().block_on(async {
            let (tx, rx) = watch::channel(1);
            drop(rx);
            assert_eq!(tx.send(2).unwrap_err().0, 2);
            assert_eq!(*tx.borrow(), 1);
            assert_eq!(tx.send_replace(3), 1);
            assert_eq!(*tx.borrow(), 3);
            let rx = tx.subscribe();
            assert_eq!(*rx.borrow(), 3);
        });
    }

    #[test]
    fn watch_closed_resolves_when_all_receivers_drop() {
        rt().block_on(async {
            let (tx, rx) = watch::channel(());
            let rxs: Vec<_> = (0..4).map(|_| rx.clone()).collect();
            drop(rx);
            {
                let mut fut = pin!(tx.closed());
                assert!(poll_once(fut.as_mut()).await.is_pending());
            }
            for rx in rxs {
                weft::spawn(async move { drop(rx) });
            }
            tx.closed().await;
            assert!(tx.is_closed());
            assert_eq!(tx.receiver_count(), 0);
        });
    }

    #[test]
    fn watch_sender_drop_errors_after_last_value_seen() {
        rt().block_on(async {
            let (tx, mut rx) = watch::channel(0);
            weft::spawn(async move {
                tx.send(7).unwrap();
            })
            .await
            .unwrap();
            assert!(rx.changed().await.is_ok());
            assert_eq!(*rx.borrow_and_update(), 7);
            assert!(rx.changed().await.is_err());
            assert_eq!(*rx.borrow(), 7);
        });
    }

    #[test]
    fn watch_wait_for() {
        rt().block_on(async {
            let (tx, mut rx) = watch::channel(0);
            let h = weft::spawn(async move {
                for i in 1..=100 {
                    tx.send(i).unwrap();
                    weft::task::yield_now().await;
                }
            });
            assert!(*rx.wait_for(|v| *v >= 50).await.unwrap() >= 50);
            h.await.unwrap();
            assert_eq!(*rx.wait_for(|v| *v == 100).await.unwrap(), 100);
            assert!(rx.wait_for(|v| *v == 101).await.is_err());
        });
    }

    #[test]
    fn watch_fan_out_to_16_receivers_all_see_final_value() {
        rt().block_on(async {
            let (tx, rx) = watch::channel(0u32);
            let handles: Vec<_> = (0..16)
                .map(|_| {
                    let mut rx = rx.clone();
                    weft::spawn(async move {
                        let mut last = *rx.borrow_and_update();
                        while rx.changed().await.is_ok() {
                            let v = *rx.borrow_and_update();
                            assert!(v > last, "values go backwards: {last} then {v}");
                            last = v;
                        }
                        last
                    })
                })
                .collect();
            drop(rx);
            for i in 1..=1000 {
                tx.send(i).unwrap();
                if i % 100 == 0 {
                    weft::task::yield_now().await;
                }
            }
            drop(tx);
            for h in handles {
                assert_eq!(h.await.unwrap(), 1000);
            }
        });
    }

    #[test]
    fn watch_cancelled_changed_loses_nothing() {
        rt().block_on(async {
            let (tx, mut rx) = watch::channel(0);
            {
                let mut fut = pin!(rx.changed());
                assert!(poll_once(fut.as_mut()).await.is_pending());
                tx.send(1).unwrap();
                // Cancelled after the send woke it, before it completed.
            }
            rx.changed().await.unwrap();
            assert_eq!(*rx.borrow_and_update(), 1);
        });
    }

    // ----- broadcast -----------------------------------------------------

    #[test]
    fn broadcast_every_receiver_gets_every_message_in_order() {
        rt().block_on(async {
            let (tx, rx) = broadcast::channel(128);
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let mut rx = tx.subscribe();
                    weft::spawn(async move {
                        let mut got = Vec::new();
                        loop {
                            match rx.recv().await {
                                Ok(v) => got.push(v),
                                Err(RecvError::Closed) => return got,
                                Err(e) => panic!("{e}"),
                            }
                        }
                    })
                })
                .collect();
            drop(rx);
            for i in 0..100 {
                assert_eq!(tx.send(i).unwrap(), 8);
            }
            drop(tx);
            for h in handles {
                assert_eq!(h.await.unwrap(), (0..100).collect::<Vec<_>>());
            }
        });
    }

    #[test]
    fn broadcast_lagged_exact_count_then_oldest() {
        rt().block_on(async {
            let (tx, mut rx) = broadcast::channel(8);
            for i in 0..20 {
                tx.send(i).unwrap();
            }
            assert_eq!(rx.recv().await, Err(RecvError::Lagged(12)));
            for i in 12..20 {
                assert_eq!(rx.recv().await, Ok(i));
            }
            let mut fut = pin!(rx.recv());
            assert!(poll_once(fut.as_mut()).await.is_pending());
        });
    }

    #[test]
    fn broadcast_closed_after_sender_drops_and_buffer_drains() {
        rt().block_on(async {
            let (tx, mut rx) = broadcast::channel(4);
            let h = weft::spawn(async move {
                tx.send(1).unwrap();
                tx.send(2).unwrap();
            });
            h.await.unwrap();
            assert_eq!(rx.recv().await, Ok(1));
            assert_eq!(rx.recv().await, Ok(2));
            assert_eq!(rx.recv().await, Err(RecvError::Closed));
            assert_eq!(rx.recv().await, Err(RecvError::Closed));
        });
    }

    #[test]
    fn broadcast_values_dropped_exactly_once() {
        let counts = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
        rt().block_on(async {
            let (tx, rx) = broadcast::channel::<Live>(16);
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let mut rx = tx.subscribe();
                    weft::spawn(async move {
                        let mut n = 0;
                        loop {
                            match rx.recv().await {
                                Ok(v) => {
                                    assert_eq!(v.n, n);
                                    n += 1;
                                }
                                Err(RecvError::Closed) => return n,
                                Err(e) => panic!("{e}"),
                            }
                        }
                    })
                })
                .collect();
            // A receiver that never reads, dropped midway.
            let mut idle = Some(tx.subscribe());
            drop(rx);
            for i in 0..200 {
                // Stay within capacity so no reader lags.
                while tx.len() >= 16 {
                    weft::task::yield_now().await;
                }
                tx.send(Live::new(&counts, i)).unwrap();
                if i == 10 {
                    drop(idle.take());
                }
            }
            drop(tx);
            for h in handles {
                assert_eq!(h.await.unwrap(), 200);
            }
        });
        assert_eq!(counts.0.load(Ordering::SeqCst), 0, "a value leaked");
        // 200 originals plus 4 clones each, every one dropped exactly once.
        assert_eq!(counts.1.load(Ordering::SeqCst), 200 * 5);
    }

    #[test]
    fn broadcast_try_recv_variants() {
        rt().block_on(async {
            let (tx, mut rx) = broadcast::channel(2);
            assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
            tx.send(1).unwrap();
            assert_eq!(rx.try_recv(), Ok(1));
            for i in 2..=6 {
                tx.send(i).unwrap();
            }
            assert_eq!(rx.try_recv(), Err(TryRecvError::Lagged(3)));
            assert_eq!(rx.try_recv(), Ok(5));
            assert_eq!(rx.try_recv(), Ok(6));
            assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
            drop(tx);
            assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
        });
    }

    #[test]
    fn broadcast_resubscribe_starts_from_tail() {
        rt().block_on(async {
            let (tx, mut rx) = broadcast::channel(8);
            tx.send(1).unwrap();
            tx.send(2).unwrap();
            let mut rx2 = rx.resubscribe();
            assert!(rx2.is_empty());
            assert_eq!(rx.len(), 2);
            tx.send(3).unwrap();
            assert_eq!(rx2.recv().await, Ok(3));
            assert_eq!(rx.recv().await, Ok(1));
            assert_eq!(rx.recv().await, Ok(2));
            assert_eq!(rx.recv().await, Ok(3));
        });
    }

    #[test]
    fn broadcast_many_receivers() {
        rt().block_on(async {
            let (tx, rx) = broadcast::channel(1024);
            let sum: u64 = (0..1000u64).sum();
            let handles: Vec<_> = (0..32)
                .map(|_| {
                    let mut rx = tx.subscribe();
                    weft::spawn(async move {
                        let (mut total, mut expect) = (0u64, 0u64);
                        while let Ok(v) = rx.recv().await {
                            assert_eq!(v, expect);
                            expect += 1;
                            total += v;
                        }
                        total
                    })
                })
                .collect();
            drop(rx);
            let producer = weft::spawn(async move {
                for i in 0..1000u64 {
                    tx.send(i).unwrap();
                    if i % 64 == 0 {
                        weft::task::yield_now().await;
                    }
                }
            });
            producer.await.unwrap();
            for h in handles {
                assert_eq!(h.await.unwrap(), sum);
            }
        });
    }

    #[test]
    fn broadcast_receiving_ready_messages_yields_to_scheduler() {
        rt().block_on(async {
            let (tx, mut rx) = broadcast::channel(1024);
            for i in 0..1000 {
                tx.send(i).unwrap();
            }
            let polls = Arc::new(AtomicUsize::new(0));
            let task = PollCount {
                inner: Box::pin(async move {
                    for i in 0..1000 {
                        assert_eq!(rx.recv().await, Ok(i));
                    }
                }),
                polls: polls.clone(),
            };
            weft::spawn(task).await.unwrap();
            // 1,000 ready messages with a budget of 128 per poll.
            let n = polls.load(Ordering::SeqCst);
            assert!(n >= 7, "the receiving task was polled only {n} times");
            drop(tx);
        });
    }

    #[test]
    fn broadcast_blocking_recv_panics_inside_runtime() {
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt().block_on(async {
                let (_tx, mut rx) = broadcast::channel::<()>(1);
                let _ = rx.blocking_recv();
            })
        }));
        let payload = res.unwrap_err();
        let msg = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        assert!(msg.contains("blocking_recv") && msg.contains("recv().await"), "{msg}");
    }

    #[test]
    fn broadcast_blocking_recv_outside_runtime() {
        // The sender runs on a runtime driven by another thread.
        let (tx, mut rx) = broadcast::channel(4);
        let t = std::thread::spawn(move || {
            rt().block_on(async move {
                weft::spawn(async move { tx.send(1).unwrap() }).await.unwrap();
            })
        });
        assert_eq!(rx.blocking_recv(), Ok(1));
        assert_eq!(rx.blocking_recv(), Err(RecvError::Closed));
        t.join().unwrap();
    }
}
