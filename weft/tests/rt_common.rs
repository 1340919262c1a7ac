//! Runtime behaviour that every flavour must share. The `rt_test!` macro
//! runs each test on current_thread, multi_thread with 1 worker, and
//! multi_thread with 4 workers.

#![allow(clippy::disallowed_names)]

#[macro_use]
mod support;

rt_test! {
    use crate::support::Flavor;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{mpsc, Arc, Mutex};
    use std::task::{Context, Poll, Waker};
    use std::thread;
    use std::time::{Duration, Instant};
    use weft::sync::oneshot;
    use weft::task::{self, JoinSet};

    /// Sets a flag when dropped: proves a future was dropped.
    struct DropFlag(Arc<AtomicBool>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn block_on_returns_value() {
        let rt = rt();
        assert_eq!(rt.block_on(async { 1 + 2 }), 3);
    }

    #[test]
    fn spawn_one_and_join() {
        let rt = rt();
        let out = rt.block_on(async { weft::spawn(async { "hi" }).await.unwrap() });
        assert_eq!(out, "hi");
    }

    #[test]
    fn spawn_two_communicating() {
        let rt = rt();
        let out = rt.block_on(async {
            let (tx, rx) = oneshot::channel();
            weft::spawn(async move {
                tx.send("ZOMG").unwrap();
            });
            rx.await.unwrap()
        });
        assert_eq!(out, "ZOMG");
    }

    #[test]
    fn spawn_many_from_block_on() {
        const N: usize = 1_000;
        let rt = rt();
        let out = rt.block_on(async {
            let handles: Vec<_> = (0..N).map(|i| weft::spawn(async move { i })).collect();
            let mut got = Vec::with_capacity(N);
            for h in handles {
                got.push(h.await.unwrap());
            }
            got
        });
        assert_eq!(out, (0..N).collect::<Vec<_>>());
    }

    #[test]
    fn spawn_many_from_task() {
        const N: usize = 1_000;
        let rt = rt();
        let sum = rt.block_on(async {
            weft::spawn(async {
                let handles: Vec<_> = (0..N).map(|i| weft::spawn(async move { i })).collect();
                let mut sum = 0;
                for h in handles {
                    sum += h.await.unwrap();
                }
                sum
            })
            .await
            .unwrap()
        });
        assert_eq!(sum, N * (N - 1) / 2);
    }

    fn chain(depth: usize) -> Pin<Box<dyn Future<Output = usize> + Send>> {
        Box::pin(async move {
            if depth == 0 {
                0
            } else {
                weft::spawn(chain(depth - 1)).await.unwrap() + 1
            }
        })
    }

    #[test]
    fn spawn_await_chain_10_000_deep() {
        let rt = rt();
        assert_eq!(rt.block_on(chain(10_000)), 10_000);
    }

    #[test]
    fn a_million_tiny_tasks() {
        const N: usize = 1_000_000;
        const BATCH: usize = 20_000;
        let rt = rt();
        let counter = Arc::new(AtomicUsize::new(0));
        let c = counter.clone();
        rt.block_on(async move {
            for _ in 0..N / BATCH {
                let mut handles = Vec::with_capacity(BATCH);
                for _ in 0..BATCH {
                    let c = c.clone();
                    handles.push(weft::spawn(async move {
                        c.fetch_add(1, Ordering::Relaxed);
                    }));
                }
                for h in handles {
                    h.await.unwrap();
                }
            }
        });
        assert_eq!(counter.load(Ordering::Relaxed), N);
        // Unlinking from the owned list trails the output by a moment.
        let deadline = Instant::now() + Duration::from_secs(10);
        while rt.metrics().num_alive_tasks() != 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(rt.metrics().num_alive_tasks(), 0);
    }

    #[test]
    fn spawn_from_other_thread_idle() {
        let rt = rt();
        let handle = rt.handle().clone();
        let (tx, rx) = oneshot::channel();
        let t = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            handle.spawn(async move {
                tx.send(5).unwrap();
            });
        });
        assert_eq!(rt.block_on(rx).unwrap(), 5);
        t.join().unwrap();
    }

    #[test]
    fn spawn_from_other_thread_under_load() {
        let rt = rt();
        let handle = rt.handle().clone();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = oneshot::channel();
        let t = thread::spawn(move || {
            handle.spawn(async move {
                tx.send(7).unwrap();
            });
        });
        let out = rt.block_on(async {
            let stop2 = stop.clone();
            // Keep the runtime busy with a task that never parks.
            let spinner = weft::spawn(async move {
                while !stop2.load(Ordering::SeqCst) {
                    task::yield_now().await;
                }
            });
            let v = rx.await.unwrap();
            stop.store(true, Ordering::SeqCst);
            spinner.await.unwrap();
            v
        });
        assert_eq!(out, 7);
        t.join().unwrap();
    }

    #[test]
    fn block_on_completes_while_a_task_spins() {
        let rt = rt();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        rt.block_on(async move {
            weft::spawn(async move {
                while !stop2.load(Ordering::SeqCst) {
                    task::yield_now().await;
                }
            });
            let v = weft::spawn(async { 3 }).await.unwrap();
            assert_eq!(v, 3);
        });
        stop.store(true, Ordering::SeqCst);
    }

    #[test]
    fn panic_in_task_is_contained() {
        let rt = rt();
        rt.block_on(async {
            let err = weft::spawn(async { panic!("task blew up") }).await.unwrap_err();
            assert!(err.is_panic());
            assert!(!err.is_cancelled());
            assert!(err.to_string().contains("task blew up"), "{err}");
            let payload = err.into_panic();
            assert_eq!(*payload.downcast_ref::<&str>().unwrap(), "task blew up");
            // The worker that ran it is still alive.
            assert_eq!(weft::spawn(async { 9 }).await.unwrap(), 9);
        });
        // And the runtime is still usable from outside.
        assert_eq!(rt.block_on(async { weft::spawn(async { 1 }).await.unwrap() }), 1);
    }

    #[test]
    fn panic_in_task_drops_its_future() {
        let rt = rt();
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = DropFlag(dropped.clone());
        rt.block_on(async move {
            let res = weft::spawn(async move {
                let _flag = flag;
                panic!("bye");
            })
            .await;
            assert!(res.unwrap_err().is_panic());
        });
        assert!(dropped.load(Ordering::SeqCst));
    }

    #[test]
    fn panic_in_block_on_propagates() {
        let rt = rt();
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async { panic!("block_on blew up") })
        }));
        let payload = res.unwrap_err();
        assert_eq!(*payload.downcast_ref::<&str>().unwrap(), "block_on blew up");
        // The runtime still works afterwards.
        assert_eq!(rt.block_on(async { weft::spawn(async { 2 }).await.unwrap() }), 2);
    }

    #[test]
    fn abort_pending_task() {
        let rt = rt();
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = DropFlag(dropped.clone());
        rt.block_on(async move {
            let h = weft::spawn(async move {
                let _flag = flag;
                std::future::pending::<()>().await;
            });
            task::yield_now().await;
            h.abort();
            let err = h.await.unwrap_err();
            assert!(err.is_cancelled());
            assert_eq!(err.to_string(), format!("task {} was cancelled", err.id()));
        });
        assert!(dropped.load(Ordering::SeqCst));
    }

    #[test]
    fn abort_before_first_poll() {
        let rt = rt();
        rt.block_on(async {
            let h = weft::spawn(async { 5 });
            h.abort();
            // Either it ran first or it was cancelled: never both, never hang.
            match h.await {
                Ok(v) => assert_eq!(v, 5),
                Err(e) => assert!(e.is_cancelled()),
            }
        });
    }

    #[test]
    fn abort_finished_task_keeps_output() {
        let rt = rt();
        rt.block_on(async {
            let h = weft::spawn(async { 11 });
            while !h.is_finished() {
                task::yield_now().await;
            }
            h.abort();
            assert_eq!(h.await.unwrap(), 11);
        });
    }

    #[test]
    fn abort_from_another_thread() {
        let rt = rt();
        rt.block_on(async {
            let h = weft::spawn(std::future::pending::<()>());
            let abort = h.abort_handle();
            assert_eq!(abort.id(), h.id());
            thread::spawn(move || abort.abort()).join().unwrap();
            assert!(h.await.unwrap_err().is_cancelled());
        });
    }

    #[test]
    fn join_handle_drop_detaches() {
        let rt = rt();
        let (tx, rx) = oneshot::channel();
        rt.block_on(async move {
            let (go_tx, go_rx) = oneshot::channel::<()>();
            let h = weft::spawn(async move {
                go_rx.await.unwrap();
                tx.send("still ran").unwrap();
            });
            drop(h);
            go_tx.send(()).unwrap();
            assert_eq!(rx.await.unwrap(), "still ran");
        });
    }

    #[test]
    fn task_ids_are_unique_and_visible_inside() {
        let rt = rt();
        rt.block_on(async {
            assert!(task::try_id().is_none(), "block_on itself is not a task");
            let handles: Vec<_> = (0..100).map(|_| weft::spawn(async { task::id() })).collect();
            let mut ids = std::collections::HashSet::new();
            for h in handles {
                let outside = h.id();
                let inside = h.await.unwrap();
                assert_eq!(inside, outside);
                assert!(ids.insert(inside));
            }
        });
    }

    #[test]
    fn join_set_joins_everything() {
        let rt = rt();
        rt.block_on(async {
            let mut set = JoinSet::new();
            for i in 0..100u64 {
                set.spawn(async move {
                    task::yield_now().await;
                    i
                });
            }
            assert_eq!(set.len(), 100);
            let mut sum = 0;
            while let Some(r) = set.join_next().await {
                sum += r.unwrap();
            }
            assert_eq!(sum, 4950);
            assert!(set.is_empty());
            assert!(set.join_next().await.is_none());
        });
    }

    #[test]
    fn join_set_abort_all_and_drop_cancel() {
        let rt = rt();
        let dropped = Arc::new(AtomicUsize::new(0));
        rt.block_on(async {
            let mut set = JoinSet::new();
            struct Count(Arc<AtomicUsize>);
            impl Drop for Count {
                fn drop(&mut self) {
                    self.0.fetch_add(1, Ordering::SeqCst);
                }
            }
            for _ in 0..10 {
                // Created outside the future: dropped even if never polled.
                let c = Count(dropped.clone());
                set.spawn(async move {
                    let _c = c;
                    std::future::pending::<()>().await;
                });
            }
            set.abort_all();
            let mut cancelled = 0;
            while let Some(r) = set.join_next().await {
                assert!(r.unwrap_err().is_cancelled());
                cancelled += 1;
            }
            assert_eq!(cancelled, 10);

            let mut set2 = JoinSet::new();
            let (tx, rx) = oneshot::channel::<()>();
            // Fields drop in declaration order: the flag is set before the
            // sender's drop can resolve `rx` (captures of a never-polled
            // future have no such order).
            #[allow(dead_code)] // held only for its drop order
            struct FlagThenSender(DropFlag, oneshot::Sender<()>);
            let flag = DropFlag(Arc::new(AtomicBool::new(false)));
            let seen = flag.0.clone();
            let guard = FlagThenSender(flag, tx);
            set2.spawn(async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            });
            drop(set2);
            // The sender is dropped when the aborted task's future is dropped.
            assert!(rx.await.is_err());
            assert!(seen.load(Ordering::SeqCst));
        });
        assert_eq!(dropped.load(Ordering::SeqCst), 10);
    }

    /// Counts how often the inner future is polled.
    struct CountPolls<F>(F, Arc<AtomicUsize>);
    impl<F: Future + Unpin> Future for CountPolls<F> {
        type Output = F::Output;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            self.1.fetch_add(1, Ordering::SeqCst);
            Pin::new(&mut self.0).poll(cx)
        }
    }

    #[test]
    fn coop_budget_forces_a_yield() {
        let rt = rt();
        let polls = Arc::new(AtomicUsize::new(0));
        let p = polls.clone();
        rt.block_on(async move {
            let greedy = Box::pin(async {
                // Never waits on anything: only the budget can interrupt it.
                for _ in 0..1_000 {
                    task::coop::consume_budget().await;
                }
            });
            weft::spawn(CountPolls(greedy, p)).await.unwrap();
        });
        // 1,000 units at 128 per poll: at least 8 polls (7 forced yields).
        let n = polls.load(Ordering::SeqCst);
        assert!((8..=20).contains(&n), "polled {n} times");
        assert!(rt.metrics().budget_forced_yield_count() >= 7);
    }

    #[test]
    fn coop_yield_lets_a_queued_task_run_first() {
        if FLAVOR != Flavor::CurrentThread {
            // On a multi_thread runtime the greedy task may finish before the
            // second one is even spawned; the forced yield is shown above.
            return;
        }
        let rt = rt();
        let other_ran = Arc::new(AtomicBool::new(false));
        let o = other_ran.clone();
        rt.block_on(async move {
            let o2 = o.clone();
            let greedy = weft::spawn(async move {
                for _ in 0..1_000 {
                    task::coop::consume_budget().await;
                }
                o2.load(Ordering::SeqCst)
            });
            let polite = weft::spawn(async move {
                o.store(true, Ordering::SeqCst);
            });
            polite.await.unwrap();
            assert!(greedy.await.unwrap(), "the greedy task finished before the other ran");
        });
        assert!(other_ran.load(Ordering::SeqCst));
    }

    #[test]
    fn coop_has_budget_remaining_and_unconstrained() {
        let rt = rt();
        rt.block_on(async {
            weft::spawn(async {
                assert!(task::coop::has_budget_remaining());
                for _ in 0..128 {
                    task::coop::consume_budget().await;
                }
                // Exhausted at exactly 128 units: the next spend yields.
                assert!(!task::coop::has_budget_remaining());
                task::coop::consume_budget().await;
                assert!(task::coop::has_budget_remaining());
                task::coop::unconstrained(async {
                    for _ in 0..1_000 {
                        task::coop::consume_budget().await;
                    }
                    assert!(task::coop::has_budget_remaining());
                })
                .await;
            })
            .await
            .unwrap();
        });
    }

    /// A minimal mailbox: `send` wakes the receiver directly, which is what
    /// lands the receiver in the LIFO slot on a worker.
    #[derive(Default)]
    struct Mailbox(Mutex<(u32, Option<Waker>)>);
    impl Mailbox {
        fn send(&self) {
            let waker = {
                let mut g = self.0.lock().unwrap();
                g.0 += 1;
                g.1.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        }
        fn recv(&self) -> impl Future<Output = ()> + '_ {
            std::future::poll_fn(move |cx| {
                let mut g = self.0.lock().unwrap();
                if g.0 > 0 {
                    g.0 -= 1;
                    Poll::Ready(())
                } else {
                    g.1 = Some(cx.waker().clone());
                    Poll::Pending
                }
            })
        }
    }

    #[test]
    fn ping_pong_pair_does_not_starve_a_third_task() {
        let rt = rt();
        let stop = Arc::new(AtomicBool::new(false));
        let to_b = Arc::new(Mailbox::default());
        let to_a = Arc::new(Mailbox::default());
        rt.block_on(async {
            let (s, ta, tb) = (stop.clone(), to_a.clone(), to_b.clone());
            let a = weft::spawn(async move {
                while !s.load(Ordering::SeqCst) {
                    tb.send();
                    ta.recv().await;
                }
                tb.send();
            });
            let (s, ta, tb) = (stop.clone(), to_a.clone(), to_b.clone());
            let b = weft::spawn(async move {
                while !s.load(Ordering::SeqCst) {
                    tb.recv().await;
                    ta.send();
                }
                ta.send();
            });
            // Let the pair get going before the third task is spawned.
            for _ in 0..10 {
                task::yield_now().await;
            }
            let third = weft::spawn(async { 42 });
            assert_eq!(third.await.unwrap(), 42);
            stop.store(true, Ordering::SeqCst);
            a.await.unwrap();
            b.await.unwrap();
        });
    }

    #[test]
    fn yield_now_lets_others_run() {
        let rt = rt();
        rt.block_on(async {
            let flag = Arc::new(AtomicBool::new(false));
            let f = flag.clone();
            let h = weft::spawn(async move {
                f.store(true, Ordering::SeqCst);
            });
            while !flag.load(Ordering::SeqCst) {
                task::yield_now().await;
            }
            h.await.unwrap();
        });
    }

    #[test]
    fn spawn_blocking_runs_and_returns() {
        let rt = rt();
        let out = rt.block_on(async {
            let h = task::spawn_blocking(|| {
                thread::sleep(Duration::from_millis(5));
                "blocked"
            });
            h.await.unwrap()
        });
        assert_eq!(out, "blocked");
        assert!(rt.metrics().num_blocking_threads() >= 1);
    }

    #[test]
    fn spawn_blocking_panic_is_a_join_error() {
        let rt = rt();
        rt.block_on(async {
            let err = task::spawn_blocking(|| panic!("blocking boom")).await.unwrap_err();
            assert!(err.is_panic());
        });
    }

    #[test]
    fn handle_current_inside_block_on_and_tasks() {
        let rt = rt();
        rt.block_on(async {
            let h = weft::runtime::Handle::current();
            let v = h.spawn(async { weft::runtime::Handle::try_current().is_ok() }).await.unwrap();
            assert!(v);
        });
    }

    #[test]
    fn enter_makes_spawn_work_outside_block_on() {
        let rt = rt();
        let h = {
            let _guard = rt.enter();
            weft::spawn(async { 8 })
        };
        assert_eq!(rt.block_on(h).unwrap(), 8);
    }

    #[test]
    fn drop_runtime_drops_pending_futures() {
        let rt = rt();
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = DropFlag(dropped.clone());
        rt.block_on(async move {
            weft::spawn(async move {
                let _flag = flag;
                std::future::pending::<()>().await;
            });
            task::yield_now().await;
        });
        assert!(!dropped.load(Ordering::SeqCst));
        drop(rt);
        assert!(dropped.load(Ordering::SeqCst));
    }

    #[test]
    fn drop_runtime_frees_tasks_holding_each_others_join_handles() {
        let rt = rt();
        let a_dropped = Arc::new(AtomicBool::new(false));
        let b_dropped = Arc::new(AtomicBool::new(false));
        let fa = DropFlag(a_dropped.clone());
        let fb = DropFlag(b_dropped.clone());
        rt.block_on(async move {
            let (tx_a, rx_a) = oneshot::channel::<weft::task::JoinHandle<()>>();
            let (tx_b, rx_b) = oneshot::channel::<weft::task::JoinHandle<()>>();
            let a = weft::spawn(async move {
                let _f = fa;
                let b = rx_a.await.unwrap();
                let _ = b.await;
            });
            let b = weft::spawn(async move {
                let _f = fb;
                let a = rx_b.await.unwrap();
                let _ = a.await;
            });
            tx_a.send(b).unwrap();
            tx_b.send(a).unwrap();
            task::yield_now().await;
        });
        drop(rt);
        assert!(a_dropped.load(Ordering::SeqCst));
        assert!(b_dropped.load(Ordering::SeqCst));
    }

    /// Captures a task's waker so it can be used after the runtime is gone.
    struct StealWaker(Arc<Mutex<Option<Waker>>>);
    impl Future for StealWaker {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            *self.0.lock().unwrap() = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    #[test]
    // The clone-then-wake is the point: it exercises wake-by-value.
    #[allow(clippy::waker_clone_wake)]
    fn wake_after_shutdown_is_a_no_op() {
        let rt = rt();
        let slot = Arc::new(Mutex::new(None));
        let s = slot.clone();
        let (tx, rx) = oneshot::channel::<()>();
        let probe = slot.clone();
        rt.block_on(async move {
            weft::spawn(async move {
                let _tx = tx;
                StealWaker(s).await;
            });
            // Wait until the task has been polled (and stored its waker).
            let _ = weft::spawn(async {}).await;
            while probe.lock().unwrap().is_none() {
                task::yield_now().await;
            }
            drop(rx);
        });
        drop(rt);
        let waker = slot.lock().unwrap().take().unwrap();
        waker.wake_by_ref();
        waker.clone().wake();
        waker.wake();
    }

    #[test]
    fn spawn_after_shutdown_is_cancelled() {
        let rt = rt();
        let handle = rt.handle().clone();
        drop(rt);
        let h = handle.spawn(async { 1 });
        let err = handle.block_on(h).unwrap_err();
        assert!(err.is_cancelled());
        let b = handle.spawn_blocking(|| 1);
        assert!(handle.block_on(b).unwrap_err().is_cancelled());
    }

    #[test]
    fn shutdown_timeout_returns_despite_a_stuck_blocking_task() {
        let rt = rt();
        let release = Arc::new(AtomicBool::new(false));
        let r = release.clone();
        let (started_tx, started_rx) = mpsc::channel();
        rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            // "Never" ends: only the test lets it go, after the assertion.
            while !r.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(5));
            }
        });
        started_rx.recv().unwrap();
        let start = Instant::now();
        rt.shutdown_timeout(Duration::from_millis(100));
        let took = start.elapsed();
        release.store(true, Ordering::SeqCst);
        assert!(took < Duration::from_secs(5), "shutdown_timeout took {took:?}");
    }

    #[test]
    fn shutdown_background_returns() {
        let rt = rt();
        rt.spawn(std::future::pending::<()>());
        rt.shutdown_background();
    }

    #[test]
    fn block_on_inside_runtime_panics_with_advice() {
        let rt = rt();
        let inner = rt.handle().clone();
        let msg = rt.block_on(async move {
            let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                inner.block_on(async {});
            }));
            let payload = res.unwrap_err();
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap()
        });
        assert!(msg.contains("Cannot start a runtime from within a runtime"), "{msg}");
        assert!(msg.contains(".await"), "{msg}");
    }

    #[test]
    fn metrics_add_up() {
        const N: u64 = 200;
        let rt = rt();
        let m = rt.metrics();
        assert_eq!(
            m.num_workers(),
            match FLAVOR {
                Flavor::CurrentThread => 1,
                Flavor::MultiThread(n) => n,
            }
        );
        let before_remote = m.remote_schedule_count();
        // Spawned from outside the runtime: all remote.
        let handles: Vec<_> = (0..N).map(|_| rt.spawn(async {})).collect();
        assert!(m.remote_schedule_count() >= before_remote + N);
        rt.block_on(async {
            for h in handles {
                h.await.unwrap();
            }
            let inner: Vec<_> = (0..N).map(|_| weft::spawn(async {})).collect();
            for h in inner {
                h.await.unwrap();
            }
        });
        assert_eq!(m.spawned_tasks_count(), 2 * N);
        assert_eq!(m.global_queue_depth(), 0);
        // Stats are published before a worker parks: wait for the workers
        // to go idle, then the poll counts must cover every task.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            // A task's output is readable a moment before its worker unlinks
            // it from the owned list, so the alive count reaches 0 shortly
            // after the last await, not necessarily at it.
            let polls: u64 = (0..m.num_workers()).map(|w| m.worker_poll_count(w)).sum();
            let alive = m.num_alive_tasks();
            if (polls >= 2 * N && alive == 0) || Instant::now() > deadline {
                assert!(polls >= 2 * N, "polls {polls} < {}", 2 * N);
                assert_eq!(alive, 0, "tasks still alive after every join");
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
        for w in 0..m.num_workers() {
            // An idle worker parks; a current_thread runtime may never have
            // had to (block_on always had work).
            if FLAVOR != Flavor::CurrentThread {
                assert!(m.worker_park_count(w) >= 1 || m.worker_poll_count(w) == 0);
            }
            let _ = m.worker_total_busy_duration(w);
            let _ = m.worker_local_queue_depth(w);
            let _ = m.worker_overflow_count(w);
            let _ = m.worker_steal_count(w);
            let _ = m.worker_steal_operations(w);
            let _ = m.worker_local_schedule_count(w);
        }
    }
}
