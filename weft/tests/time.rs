//! Timers on every flavour: ordering, timeouts, intervals, many timers,
//! cancellation freeing entries, and (current_thread) paused time.

#[macro_use]
mod support;

rt_test! {
    use std::sync::Arc;
    use std::time::Duration;
    use weft::time::{self, Instant};

    #[test]
    fn sleep_waits_at_least_its_duration() {
        rt().block_on(async {
            for ms in [0u64, 1, 5, 20] {
                let start = std::time::Instant::now();
                time::sleep(Duration::from_millis(ms)).await;
                assert!(start.elapsed() >= Duration::from_millis(ms), "slept {ms} ms");
            }
        });
    }

    /// A waker whose drop arms a timer of the same runtime.
    struct ArmsOnDrop(weft::runtime::Handle);

    impl std::task::Wake for ArmsOnDrop {
        fn wake(self: Arc<Self>) {}
    }

    impl Drop for ArmsOnDrop {
        fn drop(&mut self) {
            use std::future::Future;
            let _enter = self.0.enter();
            let mut sleep = Box::pin(time::sleep(Duration::from_secs(60)));
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            assert!(sleep.as_mut().poll(&mut cx).is_pending());
        }
    }

    #[test]
    fn a_timer_waker_is_dropped_outside_the_wheel_lock() {
        // A waker's drop may run any code, including timer code: if the
        // wheel dropped it under its own lock, this would deadlock.
        use std::future::Future;
        let rt = rt();
        rt.block_on(async {
            let handle = weft::runtime::Handle::current();
            for displace in [false, true] {
                let mut sleep = Box::pin(time::sleep(Duration::from_secs(60)));
                let waker = std::task::Waker::from(Arc::new(ArmsOnDrop(handle.clone())));
                let mut cx = std::task::Context::from_waker(&waker);
                assert!(sleep.as_mut().poll(&mut cx).is_pending());
                // The wheel now holds the only other clone.
                drop(waker);
                if displace {
                    // Re-polled with another waker: the wheel hands the old
                    // one back, and it is dropped after unlocking.
                    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    assert!(sleep.as_mut().poll(&mut cx).is_pending());
                } else {
                    // Cancelled: the same, through `cancel`.
                    drop(sleep);
                }
            }
        });
    }

    #[test]
    fn each_timer_fires_no_earlier_than_its_deadline() {
        rt().block_on(async {
            let mut handles = Vec::new();
            for i in [5u64, 1, 4, 2, 3, 0, 7] {
                let deadline = Instant::now() + Duration::from_millis(i * 3);
                handles.push(weft::spawn(async move {
                    time::sleep_until(deadline).await;
                    Instant::now() >= deadline
                }));
            }
            for h in handles {
                assert!(h.await.unwrap());
            }
        });
    }

    #[test]
    fn timeout_fires_and_does_not_fire() {
        rt().block_on(async {
            let slow = time::sleep(Duration::from_secs(30));
            let start = std::time::Instant::now();
            let r = time::timeout(Duration::from_millis(10), slow).await;
            assert!(r.is_err());
            assert!(start.elapsed() < Duration::from_secs(10));
            assert_eq!(r.unwrap_err().to_string(), "deadline has elapsed");

            let fast = async { 42 };
            assert_eq!(time::timeout(Duration::from_millis(10), fast).await, Ok(42));

            let ok = time::timeout(Duration::from_secs(5), time::sleep(Duration::from_millis(5)));
            assert_eq!(ok.await, Ok(()));
        });
    }

    #[test]
    fn timeout_fires_even_when_the_inner_future_eats_the_budget() {
        rt().block_on(async {
            // Always ready on its own budget-spending yield: without the
            // unconstrained delay poll, the timeout would never be checked.
            let spinner = async {
                loop {
                    weft::task::coop::consume_budget().await;
                }
            };
            let r = time::timeout(Duration::from_millis(20), spinner).await;
            assert!(r.is_err());
        });
    }

    #[test]
    fn ten_thousand_timers_all_fire_and_free_their_entries() {
        let rt = rt();
        rt.block_on(async {
            let mut handles = Vec::new();
            for i in 0..10_000u64 {
                handles.push(weft::spawn(async move {
                    time::sleep(Duration::from_millis(1 + i % 50)).await;
                    i
                }));
            }
            let mut sum = 0;
            for h in handles {
                sum += h.await.unwrap();
            }
            assert_eq!(sum, (0..10_000u64).sum::<u64>());
        });
        assert_eq!(rt.metrics().num_timer_entries(), 0);
    }

    #[test]
    fn cancelled_timers_free_their_entries() {
        let rt = rt();
        rt.block_on(async {
            let mut sleeps: Vec<_> = (0..1000)
                .map(|i| Box::pin(time::sleep(Duration::from_secs(60 + i))))
                .collect();
            // Arm them all (first poll registers).
            for s in sleeps.iter_mut() {
                let polled = futures::poll!(s.as_mut());
                assert!(polled.is_pending());
            }
            assert_eq!(weft::runtime::Handle::current().metrics().num_timer_entries(), 1000);
            sleeps.truncate(10);
            assert_eq!(weft::runtime::Handle::current().metrics().num_timer_entries(), 10);
            drop(sleeps);
            assert_eq!(weft::runtime::Handle::current().metrics().num_timer_entries(), 0);
        });
    }

    #[test]
    fn an_earlier_timer_interrupts_a_parked_driver() {
        let rt = rt();
        // A long timer first: the driver parks until it.
        let long = rt.spawn(async { time::sleep(Duration::from_secs(60)).await });
        std::thread::sleep(Duration::from_millis(20));
        // A short one armed from a task woken remotely must still fire soon.
        let start = std::time::Instant::now();
        let short = rt.spawn(async { time::sleep(Duration::from_millis(10)).await });
        rt.block_on(async {
            time::timeout(Duration::from_secs(20), short)
                .await
                .expect("the short timer waited behind the long one")
                .unwrap();
        });
        assert!(start.elapsed() < Duration::from_secs(20));
        long.abort();
    }

    #[test]
    fn sleep_reset_moves_the_deadline() {
        rt().block_on(async {
            let mut s = Box::pin(time::sleep(Duration::from_secs(60)));
            assert!(futures::poll!(s.as_mut()).is_pending());
            let start = Instant::now();
            s.as_mut().reset(Instant::now() + Duration::from_millis(10));
            s.as_mut().await;
            assert!(s.is_elapsed());
            assert!(start.elapsed() >= Duration::from_millis(10));
            assert!(start.elapsed() < Duration::from_secs(30));
            // Reset after completion: pending again.
            s.as_mut().reset(Instant::now() + Duration::from_millis(5));
            assert!(!s.is_elapsed());
            s.as_mut().await;
            assert!(s.is_elapsed());
        });
    }

    #[test]
    fn interval_ticks_at_its_period() {
        rt().block_on(async {
            let mut iv = time::interval(Duration::from_millis(10));
            let t0 = iv.tick().await;
            let t1 = iv.tick().await;
            let t2 = iv.tick().await;
            assert_eq!(t1 - t0, Duration::from_millis(10));
            assert_eq!(t2 - t1, Duration::from_millis(10));
            assert!(Instant::now() >= t2);
        });
    }

    #[test]
    fn sleep_from_a_task_on_a_busy_runtime_still_fires() {
        // Timers are delivered by the periodic driver poll, not only when
        // a worker parks.
        rt().block_on(async {
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let spinner = {
                let stop = stop.clone();
                weft::spawn(async move {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        weft::task::yield_now().await;
                    }
                })
            };
            time::sleep(Duration::from_millis(10)).await;
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            spinner.await.unwrap();
        });
    }
}

/// A deadline that passed after the driver last turned is not "elapsed"
/// at the first poll: the sleep yields to the driver once, and a task
/// spawned meanwhile runs first. Tokio's behaviour (a timer is compared
/// with the wheel's time, not the clock's).
#[test]
fn a_deadline_passed_since_the_last_driver_turn_yields_once() {
    use std::future::Future;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;
    use weft::time::{self, Instant};
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        time::sleep(Duration::from_millis(1)).await; // the driver turns
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        weft::spawn(async move { r.store(true, Ordering::SeqCst) });
        std::thread::sleep(Duration::from_millis(5)); // busy: no turn
        let mut sleep =
            std::pin::pin!(time::sleep_until(Instant::now() - Duration::from_millis(2)));
        let mut polls = 0;
        std::future::poll_fn(|cx| {
            polls += 1;
            sleep.as_mut().poll(cx)
        })
        .await;
        assert_eq!(polls, 2, "completed without yielding to the driver");
        assert!(
            ran.load(Ordering::SeqCst),
            "the spawned task did not run first"
        );
        // A deadline the wheel has passed completes at once.
        let mut sleep = std::pin::pin!(time::sleep_until(
            Instant::now() - Duration::from_millis(50)
        ));
        let mut polls = 0;
        std::future::poll_fn(|cx| {
            polls += 1;
            sleep.as_mut().poll(cx)
        })
        .await;
        assert_eq!(polls, 1);
    });
}

/// A sleep pushed later (`paused::a_sleep_pushed_later_many_times_...`)
/// on a real clock, with the driver parked on another thread
/// until the old deadline each time.
#[test]
fn a_sleep_pushed_later_on_a_worker_waits_for_its_last_deadline() {
    use std::time::Duration;
    use weft::time::{self, Instant};
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        weft::spawn(async {
            let ms = Duration::from_millis;
            // Once: the wheel keeps it at 10 ms, the driver wakes then.
            let mut sleep = Box::pin(time::sleep(ms(10)));
            assert!(futures::poll!(sleep.as_mut()).is_pending());
            let last = Instant::now() + ms(40);
            sleep.as_mut().reset(last);
            sleep.as_mut().await;
            assert!(Instant::now() >= last, "completed before its new deadline");

            // Again and again, each time before the old deadline.
            let mut sleep = Box::pin(time::sleep(ms(10)));
            assert!(futures::poll!(sleep.as_mut()).is_pending());
            let mut last = Instant::now();
            for _ in 0..10 {
                time::sleep(ms(4)).await;
                last = Instant::now() + ms(10);
                sleep.as_mut().reset(last);
            }
            sleep.as_mut().await;
            assert!(Instant::now() >= last, "completed before its last deadline");
        })
        .await
        .unwrap();
    });
}

mod paused {
    use std::time::Duration;
    use weft::time::{self, Instant, MissedTickBehavior};

    fn paused_rt() -> weft::runtime::Runtime {
        weft::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap()
    }

    /// A waker that counts its wakes.
    struct Count(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Count {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    impl Count {
        fn new() -> (std::sync::Arc<Count>, std::task::Waker) {
            let count = std::sync::Arc::new(Count(std::sync::atomic::AtomicUsize::new(0)));
            let waker = std::task::Waker::from(count.clone());
            (count, waker)
        }
        fn get(&self) -> usize {
            self.0.load(std::sync::atomic::Ordering::SeqCst)
        }
    }

    #[test]
    fn a_reset_sleep_wakes_its_task_at_the_new_deadline_without_a_poll() {
        use std::future::Future;
        paused_rt().block_on(async {
            let start = Instant::now();
            let ms = Duration::from_millis;
            // Polled once by "another task" (a waker of our own), then only
            // reset: the waker moves with the timer (tokio-util's
            // DelayQueue polls its sleep once and resets it).
            let (count, waker) = Count::new();
            let mut cx = std::task::Context::from_waker(&waker);
            let mut sleep = Box::pin(time::sleep_until(start + ms(200)));
            assert!(sleep.as_mut().poll(&mut cx).is_pending());
            sleep.as_mut().reset(start + ms(10));
            time::sleep(ms(20)).await;
            assert_eq!(count.get(), 1, "woken at the earlier deadline");
            assert!(sleep.is_elapsed());

            // Moved later: not woken at the old deadline, only at the new one.
            let (count, waker) = Count::new();
            let mut cx = std::task::Context::from_waker(&waker);
            let now = Instant::now();
            let mut sleep = Box::pin(time::sleep_until(now + ms(10)));
            assert!(sleep.as_mut().poll(&mut cx).is_pending());
            sleep.as_mut().reset(now + ms(100));
            time::sleep(ms(50)).await;
            assert_eq!(count.get(), 0, "the old deadline no longer wakes");
            assert!(!sleep.is_elapsed());
            time::sleep(ms(60)).await;
            assert_eq!(count.get(), 1, "woken at the later deadline");

            // Moved into the past: woken at once, and ready when polled.
            let (count, waker) = Count::new();
            let mut cx = std::task::Context::from_waker(&waker);
            let now = Instant::now();
            let mut sleep = Box::pin(time::sleep_until(now + ms(100)));
            assert!(sleep.as_mut().poll(&mut cx).is_pending());
            sleep.as_mut().reset(now - ms(1));
            assert_eq!(count.get(), 1, "woken by the reset itself");
            assert!(sleep.as_mut().poll(&mut cx).is_ready());

            // Never polled: a reset arms nothing, and nothing is woken.
            let mut unpolled = Box::pin(time::sleep(ms(5)));
            unpolled.as_mut().reset(Instant::now() + ms(1));
            time::sleep(ms(10)).await;
            assert!(!unpolled.is_elapsed(), "an unpolled sleep has no timer");
            assert!(unpolled.as_mut().poll(&mut cx).is_ready());
        });
    }

    /// A pending sleep polled again by the waker its timer holds skips the
    /// driver's lock (`Handle::poll_fired`); polled by another, it stores
    /// that one. Only the last poll's waker is woken, even when it is a
    /// waker the sleep held before (A, then B, then A again).
    #[test]
    fn only_the_last_polling_waker_of_a_sleep_is_woken() {
        use std::future::Future;
        paused_rt().block_on(async {
            let ms = Duration::from_millis;
            let (a_count, a) = Count::new();
            let (b_count, b) = Count::new();
            let mut sleep = Box::pin(time::sleep(ms(10)));
            for waker in [&a, &a, &b, &b, &a, &a] {
                let mut cx = std::task::Context::from_waker(waker);
                assert!(sleep.as_mut().poll(&mut cx).is_pending());
            }
            time::sleep(ms(20)).await;
            assert_eq!((a_count.get(), b_count.get()), (1, 0), "(A, B) wakes");
            assert!(sleep.is_elapsed());
            let mut cx = std::task::Context::from_waker(&a);
            assert!(sleep.as_mut().poll(&mut cx).is_ready());

            // B last: B alone is woken; and a poll by the same waker after
            // the timer fired (the lock-free look) reports it.
            let (a_count, a) = Count::new();
            let (b_count, b) = Count::new();
            let mut sleep = Box::pin(time::sleep(ms(10)));
            for waker in [&a, &b, &b] {
                let mut cx = std::task::Context::from_waker(waker);
                assert!(sleep.as_mut().poll(&mut cx).is_pending());
            }
            time::sleep(ms(20)).await;
            assert_eq!((a_count.get(), b_count.get()), (0, 1), "(A, B) wakes");
            let mut cx = std::task::Context::from_waker(&b);
            assert!(sleep.as_mut().poll(&mut cx).is_ready());
        });
    }

    /// Later deadlines are set without the driver's lock and the wheel
    /// keeps the old place until it comes up (`wheel/deadlines.rs`): the
    /// sleep must still fire once, at the last deadline, including after
    /// a move earlier than the latest but later than the first.
    #[test]
    fn a_sleep_pushed_later_many_times_fires_once_at_its_last_deadline() {
        use std::future::Future;
        paused_rt().block_on(async {
            let ms = Duration::from_millis;
            let start = Instant::now();
            let (count, waker) = Count::new();
            let mut cx = std::task::Context::from_waker(&waker);
            let mut sleep = Box::pin(time::sleep_until(start + ms(5)));
            assert!(sleep.as_mut().poll(&mut cx).is_pending());
            for i in 1..=100 {
                sleep.as_mut().reset(start + ms(5 + i * 3));
            }
            time::sleep_until(start + ms(100)).await;
            assert_eq!(count.get(), 0, "woken at a deadline it was moved from");
            sleep.as_mut().reset(start + ms(200));
            time::sleep_until(start + ms(199)).await;
            assert_eq!(count.get(), 0, "woken before its last deadline");
            assert!(!sleep.is_elapsed());
            time::sleep_until(start + ms(200)).await;
            assert_eq!(count.get(), 1, "not woken at its last deadline");
            assert!(sleep.is_elapsed());
            time::sleep(ms(300)).await;
            assert_eq!(count.get(), 1, "woken again at an old deadline");
        });
    }

    #[test]
    fn timers_fire_in_deadline_order() {
        // With a paused clock the runtime jumps from one deadline to the
        // next, so the order is exact (on a real clock, timers that come due
        // in the same driver turn may run in any order).
        paused_rt().block_on(async {
            let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let mut handles = Vec::new();
            let mut x = 12345u64;
            let mut expected = Vec::new();
            for i in 0..500u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Distinct deadlines spread over ~3 hours, some beyond the
                // wheel's lower levels.
                let ms = (x % 10_000_000) * 1000 + i;
                expected.push(ms);
                let order = order.clone();
                handles.push(weft::spawn(async move {
                    time::sleep(Duration::from_millis(ms)).await;
                    order.lock().unwrap().push(ms);
                }));
            }
            for h in handles {
                h.await.unwrap();
            }
            expected.sort_unstable();
            assert_eq!(*order.lock().unwrap(), expected);
        });
    }

    #[test]
    fn an_hour_of_sleep_takes_no_real_time() {
        paused_rt().block_on(async {
            let real = std::time::Instant::now();
            let virt = Instant::now();
            time::sleep(Duration::from_secs(3600)).await;
            assert!(virt.elapsed() >= Duration::from_secs(3600));
            assert!(real.elapsed() < Duration::from_secs(30));
        });
    }

    #[test]
    fn advance_fires_exactly_the_due_timers() {
        paused_rt().block_on(async {
            let a = weft::spawn(time::sleep(Duration::from_millis(100)));
            let b = weft::spawn(time::sleep(Duration::from_millis(300)));
            weft::task::yield_now().await; // let both arm
            time::advance(Duration::from_millis(150)).await;
            assert!(a.is_finished());
            assert!(!b.is_finished());
            time::advance(Duration::from_millis(150)).await;
            assert!(b.is_finished());
        });
    }

    #[test]
    fn timeout_with_paused_clock_is_exact() {
        paused_rt().block_on(async {
            let start = Instant::now();
            let r = time::timeout(Duration::from_secs(5), std::future::pending::<()>()).await;
            assert!(r.is_err());
            assert_eq!(start.elapsed(), Duration::from_secs(5));
        });
    }

    async fn ticks_after_a_stall(behavior: MissedTickBehavior) -> Vec<Duration> {
        let start = Instant::now();
        let mut iv = time::interval(Duration::from_millis(10));
        iv.set_missed_tick_behavior(behavior);
        iv.tick().await; // t = 0
                         // The task is busy for 35 ms: ticks at 10, 20, 30 are missed.
        time::advance(Duration::from_millis(35)).await;
        let mut out = Vec::new();
        for _ in 0..4 {
            iv.tick().await;
            out.push(start.elapsed());
        }
        out
    }

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    #[test]
    fn interval_missed_tick_burst() {
        let got = paused_rt().block_on(ticks_after_a_stall(MissedTickBehavior::Burst));
        // The three missed ticks (10, 20, 30) at once, then the original
        // schedule (40).
        assert_eq!(got, ms(&[35, 35, 35, 40]));
    }

    #[test]
    fn interval_missed_tick_delay() {
        let got = paused_rt().block_on(ticks_after_a_stall(MissedTickBehavior::Delay));
        // One late tick now, then every 10 ms from now.
        assert_eq!(got, ms(&[35, 45, 55, 65]));
    }

    #[test]
    fn interval_missed_tick_skip() {
        let got = paused_rt().block_on(ticks_after_a_stall(MissedTickBehavior::Skip));
        // One late tick now, then back on the 10 ms grid.
        assert_eq!(got, ms(&[35, 40, 50, 60]));
    }

    #[test]
    fn pause_resume_round_trip() {
        let rt = weft::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            time::pause();
            let t = Instant::now();
            std::thread::sleep(Duration::from_millis(5));
            assert_eq!(Instant::now(), t);
            time::resume();
            time::sleep(Duration::from_millis(2)).await;
            assert!(t.elapsed() >= Duration::from_millis(2));
        });
    }

    #[weft::test(start_paused = true)]
    async fn the_test_macro_starts_paused() {
        let real = std::time::Instant::now();
        time::sleep(Duration::from_secs(86_400)).await;
        assert!(real.elapsed() < Duration::from_secs(30));
    }

    /// A frozen clock does not jump over I/O that is already ready: a
    /// datagram sent before the runtime goes idle wakes its receiver at
    /// the current instant, before time moves to a pending sleep's end.
    #[test]
    fn auto_advance_delivers_ready_io_first() {
        paused_rt().block_on(async {
            let start = Instant::now();
            let a = weft::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = weft::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            b.connect(a.local_addr().unwrap()).await.unwrap();
            let mut buf = [0u8; 4];
            let (_, got_at) = weft::join!(
                async {
                    b.send(b"ping").await.unwrap();
                    time::sleep(Duration::from_millis(250)).await;
                },
                async {
                    a.recv(&mut buf).await.unwrap();
                    start.elapsed()
                },
            );
            assert_eq!(
                got_at,
                Duration::ZERO,
                "time moved before ready I/O was seen"
            );
            assert_eq!(&buf, b"ping");
            assert!(start.elapsed() >= Duration::from_millis(250));
        });
    }

    #[test]
    fn auto_advance_waits_for_blocking_work() {
        // Tokio's rule: an idle runtime with a frozen clock does not jump
        // over a `spawn_blocking` closure in flight, so the timeout sees the
        // closure finish instead of expiring at once.
        paused_rt().block_on(async {
            let start = Instant::now();
            let work = weft::task::spawn_blocking(|| {
                std::thread::sleep(Duration::from_millis(50));
                7
            });
            let got = time::timeout(Duration::from_secs(1), work).await;
            assert_eq!(got.expect("timed out over blocking work").unwrap(), 7);
            // The clock did not move while waiting.
            assert_eq!(start.elapsed(), Duration::ZERO);
        });
    }

    #[test]
    fn auto_advance_resumes_once_blocking_work_ends() {
        // Nobody awaits the closure: its end alone must let the parked
        // runtime move time again (without it, the park would last the
        // sleep's 10 s of real time).
        let real = std::time::Instant::now();
        paused_rt().block_on(async {
            let start = Instant::now();
            drop(weft::task::spawn_blocking(|| {
                std::thread::sleep(Duration::from_millis(30))
            }));
            time::sleep(Duration::from_secs(10)).await;
            assert_eq!(start.elapsed(), Duration::from_secs(10));
        });
        let real = real.elapsed();
        assert!(
            real >= Duration::from_millis(30),
            "time jumped over the closure"
        );
        assert!(
            real < Duration::from_secs(5),
            "the closure's end did not wake the runtime"
        );
    }

    #[test]
    fn finished_blocking_work_is_seen_before_time_moves() {
        // The closure's end must not let the frozen clock jump before the
        // task awaiting it has been woken: that window let a timeout over
        // finished work elapse (8–83 times in 3,000 before it was closed).
        // Two spinning threads widen the window, as a loaded machine does.
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let stop = Arc::new(AtomicBool::new(false));
        let spinners: Vec<_> = (0..2)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        let mut elapsed = 0;
        paused_rt().block_on(async {
            for _ in 0..2_000 {
                let work = weft::task::spawn_blocking(|| {
                    std::thread::sleep(Duration::from_micros(100));
                    7
                });
                match time::timeout(Duration::from_secs(3600), work).await {
                    Ok(got) => assert_eq!(got.unwrap(), 7),
                    Err(_) => elapsed += 1,
                }
            }
        });
        stop.store(true, Ordering::Relaxed);
        for s in spinners {
            s.join().unwrap();
        }
        assert_eq!(elapsed, 0, "a timeout over finished blocking work elapsed");
    }

    #[test]
    fn a_panicking_blocking_closure_releases_auto_advance() {
        paused_rt().block_on(async {
            let failed = weft::task::spawn_blocking(|| panic!("boom")).await;
            assert!(failed.unwrap_err().is_panic());
            let start = Instant::now();
            time::sleep(Duration::from_secs(60)).await;
            assert_eq!(start.elapsed(), Duration::from_secs(60));
        });
    }
}

mod misuse {
    use std::time::Duration;

    #[test]
    #[should_panic(expected = "there is no weft runtime on this thread")]
    fn sleep_outside_a_runtime() {
        drop(weft::time::sleep(Duration::from_millis(1)));
    }

    #[test]
    #[should_panic(expected = "enable_time()")]
    fn sleep_without_the_time_driver() {
        let rt = weft::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            weft::time::sleep(Duration::from_millis(1)).await;
        });
    }

    #[test]
    #[should_panic(expected = "requires the current_thread runtime")]
    fn pause_on_multi_thread() {
        let rt = weft::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async { weft::time::pause() });
    }

    #[test]
    fn start_paused_needs_current_thread_and_time() {
        let err = weft::runtime::Builder::new_multi_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("current_thread"), "{err}");
        let err = weft::runtime::Builder::new_current_thread()
            .start_paused(true)
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("enable_time"), "{err}");
    }

    #[test]
    #[should_panic(expected = "`period` must be non-zero")]
    fn zero_interval() {
        let rt = weft::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let _ = weft::time::interval(Duration::ZERO);
        });
    }
}
