//! Behaviour specific to the multi_thread scheduler, and misuse messages.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use weft::runtime::{Builder, Handle, Runtime};
use weft::task;

fn mt(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
}

/// Waits until every worker is parked, after which its published counters
/// are exact. `block_on` returns as soon as its future is done, while the
/// workers that ran the tasks may not have parked (and published) yet; on
/// a loaded machine that gap is long enough to read stale counters.
fn wait_until_every_worker_parks(rt: &Runtime) {
    let m = rt.metrics();
    let deadline = Instant::now() + Duration::from_secs(10);
    while (0..m.num_workers()).any(|w| m.worker_park_unpark_count(w).is_multiple_of(2)) {
        assert!(
            Instant::now() < deadline,
            "workers still running after 10 s"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn work_spreads_across_workers() {
    let rt = mt(4);
    let threads = Arc::new(Mutex::new(HashSet::new()));
    rt.block_on(async {
        let handles: Vec<_> = (0..64)
            .map(|_| {
                let threads = threads.clone();
                weft::spawn(async move {
                    // Hold the worker long enough that idle ones steal.
                    thread::sleep(Duration::from_millis(2));
                    threads.lock().unwrap().insert(thread::current().id());
                })
            })
            .collect();
        for h in handles {
            h.await.unwrap();
        }
    });
    let n = threads.lock().unwrap().len();
    assert!(n >= 2, "all tasks ran on {n} thread(s)");
}

#[test]
fn idle_workers_steal_from_a_busy_one() {
    let rt = mt(4);
    rt.block_on(async {
        // Spawned from inside a task: everything lands on one worker's queue.
        weft::spawn(async {
            let handles: Vec<_> = (0..64)
                .map(|_| weft::spawn(async { thread::sleep(Duration::from_millis(1)) }))
                .collect();
            for h in handles {
                h.await.unwrap();
            }
        })
        .await
        .unwrap();
    });
    wait_until_every_worker_parks(&rt);
    let m = rt.metrics();
    let steals: u64 = (0..4).map(|w| m.worker_steal_count(w)).sum();
    let ops: u64 = (0..4).map(|w| m.worker_steal_operations(w)).sum();
    assert!(steals >= 1 && ops >= 1, "steals {steals}, operations {ops}");
    assert!(steals >= ops);
}

#[test]
fn tasks_spawned_before_a_long_poll_run_elsewhere_meanwhile() {
    // A task spawns work and then blocks its worker (badly, but it happens):
    // the queued tasks must not wait for the end of that poll.
    let rt = mt(4);
    rt.block_on(async {
        weft::spawn(async {
            // Let every other worker go to sleep first.
            thread::sleep(Duration::from_millis(50));
            let done = Arc::new(AtomicUsize::new(0));
            for _ in 0..10 {
                let done = done.clone();
                drop(weft::spawn(async move {
                    done.fetch_add(1, Ordering::SeqCst);
                }));
            }
            // The last spawn sits in this worker's LIFO slot; the other 9 are
            // in its queue, for the other workers to take.
            let deadline = Instant::now() + Duration::from_secs(10);
            while done.load(Ordering::SeqCst) < 9 && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(1));
            }
            assert!(
                done.load(Ordering::SeqCst) >= 9,
                "queued tasks waited for the blocking poll"
            );
        })
        .await
        .unwrap();
    });
}

#[test]
fn without_the_lifo_slot_a_single_wake_is_stealable_at_once() {
    // With the slot disabled, a task spawned before a blocking poll must be
    // taken by another worker meanwhile, even when it is the only one.
    let rt = Builder::new_multi_thread()
        .worker_threads(4)
        .disable_lifo_slot()
        .build()
        .unwrap();
    rt.block_on(async {
        weft::spawn(async {
            // Let every other worker go to sleep first.
            thread::sleep(Duration::from_millis(50));
            let done = Arc::new(AtomicBool::new(false));
            let flag = done.clone();
            drop(weft::spawn(
                async move { flag.store(true, Ordering::SeqCst) },
            ));
            let deadline = Instant::now() + Duration::from_secs(10);
            while !done.load(Ordering::SeqCst) && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(1));
            }
            assert!(
                done.load(Ordering::SeqCst),
                "the spawned task waited for the blocking poll"
            );
        })
        .await
        .unwrap();
    });
}

#[test]
fn block_in_place_hands_queued_work_to_a_sleeper() {
    // The thread that takes over the core cannot start while the blocking
    // pool is full; the queued task must not wait for it.
    for disable_lifo in [false, true] {
        let mut builder = Builder::new_multi_thread();
        builder.worker_threads(2).max_blocking_threads(1);
        if disable_lifo {
            builder.disable_lifo_slot();
        }
        let rt = builder.build().unwrap();
        rt.block_on(async {
            // Occupy the pool's only spare thread for 1 s.
            drop(task::spawn_blocking(|| {
                thread::sleep(Duration::from_secs(1))
            }));
            weft::spawn(async move {
                thread::sleep(Duration::from_millis(50));
                let done = Arc::new(AtomicBool::new(false));
                let flag = done.clone();
                drop(weft::spawn(
                    async move { flag.store(true, Ordering::SeqCst) },
                ));
                let ran = task::block_in_place(|| {
                    let deadline = Instant::now() + Duration::from_millis(800);
                    while !done.load(Ordering::SeqCst) && Instant::now() < deadline {
                        thread::sleep(Duration::from_millis(1));
                    }
                    done.load(Ordering::SeqCst)
                });
                assert!(
                    ran,
                    "queued task stranded during block_in_place (lifo off: {disable_lifo})"
                );
            })
            .await
            .unwrap();
        });
    }
}

#[test]
fn a_ping_pong_pair_does_not_wake_sleeping_workers() {
    // Two tasks waking each other run on one worker through the LIFO slot;
    // every fourth wake goes to the queue (the slot's cap), and the worker
    // runs it next: waking a sleeper for it would only make that sleeper
    // find nothing and park again.
    let rt = mt(4);
    let parks = || -> u64 {
        let m = Handle::current().metrics();
        (0..4).map(|w| m.worker_park_count(w)).sum()
    };
    rt.block_on(async {
        let ping = Arc::new(weft::sync::Notify::new());
        let pong = Arc::new(weft::sync::Notify::new());
        let (ping2, pong2) = (ping.clone(), pong.clone());
        weft::spawn(async move {
            let ponger = weft::spawn(async move {
                for _ in 0..2_000 {
                    ping2.notified().await;
                    pong2.notify_one();
                }
            });
            // Let every other worker go to sleep first.
            thread::sleep(Duration::from_millis(50));
            let before = parks();
            for _ in 0..2_000 {
                ping.notify_one();
                pong.notified().await;
            }
            ponger.await.unwrap();
            let woken = parks() - before;
            assert!(woken < 20, "{woken} parks during 2,000 rounds");
        })
        .await
        .unwrap();
    });
}

#[test]
fn local_queue_overflows_into_the_global_queue() {
    let rt = mt(1);
    rt.block_on(async {
        weft::spawn(async {
            // 1,000 spawns without yielding: far beyond a 256-slot ring.
            let handles: Vec<_> = (0..1_000).map(|i| weft::spawn(async move { i })).collect();
            let mut sum = 0;
            for h in handles {
                sum += h.await.unwrap();
            }
            assert_eq!(sum, 499_500);
        })
        .await
        .unwrap();
    });
    wait_until_every_worker_parks(&rt);
    assert!(rt.metrics().worker_overflow_count(0) >= 1);
}

#[test]
fn block_in_place_lets_other_tasks_run_on_one_worker() {
    let rt = mt(1);
    let flag = Arc::new(AtomicBool::new(false));
    rt.block_on(async {
        let f = flag.clone();
        let blocker = weft::spawn(async move {
            task::block_in_place(|| {
                // Only another task can set the flag, and there is only one
                // worker: it must have been handed to a new thread.
                let deadline = Instant::now() + Duration::from_secs(20);
                while !f.load(Ordering::SeqCst) {
                    assert!(Instant::now() < deadline, "the other task never ran");
                    thread::sleep(Duration::from_millis(1));
                }
            });
            // Still a working task afterwards.
            weft::spawn(async { 1 }).await.unwrap()
        });
        let f = flag.clone();
        let setter = weft::spawn(async move {
            f.store(true, Ordering::SeqCst);
        });
        setter.await.unwrap();
        assert_eq!(blocker.await.unwrap(), 1);
    });
}

/// Records whether it was woken.
struct WakeFlag(AtomicBool);

impl std::task::Wake for WakeFlag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn block_in_place_wakes_yielded_tasks_before_its_closure_runs() {
    let rt = mt(1);
    rt.block_on(async {
        weft::spawn(async {
            // A yield polled with a waker of our own: the worker keeps the
            // waker until its next driver poll.
            let flag = Arc::new(WakeFlag(AtomicBool::new(false)));
            let waker = std::task::Waker::from(flag.clone());
            let mut yielded = std::pin::pin!(task::yield_now());
            let mut cx = std::task::Context::from_waker(&waker);
            assert!(std::future::Future::poll(yielded.as_mut(), &mut cx).is_pending());
            assert!(!flag.0.load(Ordering::SeqCst), "deferred, not woken yet");
            // The closure may wait for what the yielded task would do: it is
            // woken before the closure starts, not whenever the thread that
            // takes the worker over first polls its drivers.
            let woken = task::block_in_place(|| flag.0.load(Ordering::SeqCst));
            assert!(
                woken,
                "the yielded task was not woken before block_in_place"
            );
        })
        .await
        .unwrap();
    });
}

#[test]
fn block_in_place_can_block_on_another_runtime() {
    let rt = mt(2);
    rt.block_on(async {
        weft::spawn(async {
            let v = task::block_in_place(|| {
                let inner = Builder::new_current_thread().build().unwrap();
                inner.block_on(async { weft::spawn(async { 5 }).await.unwrap() })
            });
            assert_eq!(v, 5);
        })
        .await
        .unwrap();
    });
}

#[test]
fn block_in_place_outside_a_runtime_just_runs() {
    assert_eq!(task::block_in_place(|| 3), 3);
}

#[test]
fn block_in_place_on_current_thread_panics_with_advice() {
    let rt = Builder::new_current_thread().build().unwrap();
    let err = rt
        .block_on(async { weft::spawn(async { task::block_in_place(|| ()) }).await })
        .unwrap_err();
    let msg = panic_message(err.into_panic());
    assert!(msg.contains("spawn_blocking"), "{msg}");
    assert!(msg.contains("new_multi_thread"), "{msg}");
}

#[test]
fn zero_workers_panics_with_advice() {
    let res = std::panic::catch_unwind(|| {
        Builder::new_multi_thread().worker_threads(0);
    });
    let msg = panic_message(res.unwrap_err());
    assert!(msg.contains("Worker threads cannot be set to 0"), "{msg}");
    assert!(msg.contains("new_current_thread"), "{msg}");
}

#[test]
fn zero_blocking_threads_panics() {
    let res = std::panic::catch_unwind(|| {
        Builder::new_multi_thread().max_blocking_threads(0);
    });
    assert!(panic_message(res.unwrap_err()).contains("max_blocking_threads"));
}

#[test]
fn handle_current_outside_runtime_panics_with_advice() {
    let err = Handle::try_current().unwrap_err();
    assert!(err.is_missing_context());
    let res = std::panic::catch_unwind(Handle::current);
    let msg = panic_message(res.unwrap_err());
    assert!(msg.contains("no weft runtime"), "{msg}");
    assert!(msg.contains("Runtime::enter"), "{msg}");
}

#[test]
fn spawn_outside_runtime_panics_with_advice() {
    let res = std::panic::catch_unwind(|| {
        weft::spawn(async {});
    });
    let msg = panic_message(res.unwrap_err());
    assert!(msg.contains("weft::spawn"), "{msg}");
    assert!(msg.contains("no weft runtime"), "{msg}");
}

#[test]
fn worker_threads_env_var() {
    // The only test in this binary that builds a runtime with the default
    // worker count, so setting the variable cannot disturb the others.
    // SAFETY (std): no other thread reads the environment concurrently in
    // this test binary's tests that matter here.
    unsafe { std::env::set_var(weft::runtime::WORKER_THREADS_ENV, "3") };
    let rt = Builder::new_multi_thread().build().unwrap();
    assert_eq!(rt.metrics().num_workers(), 3);
    drop(rt);
    // SAFETY (std): as above.
    unsafe { std::env::set_var(weft::runtime::WORKER_THREADS_ENV, "lots") };
    let err = Builder::new_multi_thread().build().unwrap_err();
    assert!(err.to_string().contains("WEFT_WORKER_THREADS"), "{err}");
    // Tokio's variable counts when weft's is unset, and names itself when
    // it is wrong; weft's wins where both are set.
    // SAFETY (std): as above.
    unsafe { std::env::set_var(weft::runtime::WORKER_THREADS_ENV, "3") };
    // SAFETY (std): as above.
    unsafe { std::env::set_var("TOKIO_WORKER_THREADS", "2") };
    let rt = Builder::new_multi_thread().build().unwrap();
    assert_eq!(rt.metrics().num_workers(), 3);
    drop(rt);
    // SAFETY (std): as above.
    unsafe { std::env::remove_var(weft::runtime::WORKER_THREADS_ENV) };
    let rt = Builder::new_multi_thread().build().unwrap();
    assert_eq!(rt.metrics().num_workers(), 2);
    drop(rt);
    // SAFETY (std): as above.
    unsafe { std::env::set_var("TOKIO_WORKER_THREADS", "0") };
    let err = Builder::new_multi_thread().build().unwrap_err();
    assert!(
        err.to_string().contains("TOKIO_WORKER_THREADS=\"0\""),
        "{err}"
    );
    // SAFETY (std): as above.
    unsafe { std::env::remove_var("TOKIO_WORKER_THREADS") };
}

#[test]
fn thread_hooks_and_names() {
    let started = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let (s1, s2) = (started.clone(), stopped.clone());
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("hooked")
        .on_thread_start(move || {
            s1.fetch_add(1, Ordering::SeqCst);
        })
        .on_thread_stop(move || {
            s2.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let name = rt.block_on(async {
        weft::spawn(async { thread::current().name().map(str::to_owned) })
            .await
            .unwrap()
    });
    assert_eq!(name.as_deref(), Some("hooked"));
    drop(rt);
    assert!(started.load(Ordering::SeqCst) >= 2);
    assert_eq!(
        started.load(Ordering::SeqCst),
        stopped.load(Ordering::SeqCst)
    );
}

#[test]
fn global_queue_interval_one_and_no_lifo_slot_still_work() {
    for rt in [
        Builder::new_multi_thread()
            .worker_threads(2)
            .global_queue_interval(1)
            .build()
            .unwrap(),
        Builder::new_multi_thread()
            .worker_threads(2)
            .disable_lifo_slot()
            .event_interval(1)
            .build()
            .unwrap(),
    ] {
        let sum = rt.block_on(async {
            weft::spawn(async {
                let hs: Vec<_> = (0..500u64).map(|i| weft::spawn(async move { i })).collect();
                let mut s = 0;
                for h in hs {
                    s += h.await.unwrap();
                }
                s
            })
            .await
            .unwrap()
        });
        assert_eq!(sum, 124_750);
    }
}

/// A runtime dropped inside a task is shut down in the background (its
/// tasks dropped, nothing waited for: the drop cannot deadlock on the very
/// worker it runs on), then the drop panics, as Tokio's does, naming the
/// fix; the panic is the task's, the outer runtime carries on.
#[test]
fn dropping_a_runtime_inside_another_shuts_it_down_and_panics_without_deadlock() {
    struct Flag(Arc<AtomicBool>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let outer = mt(2);
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Flag(dropped.clone());
    let err = outer.block_on(async {
        weft::spawn(async move {
            let inner = Builder::new_multi_thread()
                .worker_threads(1)
                .build()
                .unwrap();
            inner.spawn(async move {
                let _flag = flag;
                std::future::pending::<()>().await
            });
            drop(inner);
        })
        .await
        .unwrap_err()
    });
    let message = err.into_panic();
    let message = message.downcast_ref::<&'static str>().unwrap();
    assert!(
        message.contains("shutdown_background"),
        "the panic names the fix: {message}"
    );
    // A multi_thread shutdown in the background signals its workers,
    // which drop the task soon after.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !dropped.load(Ordering::SeqCst) {
        assert!(
            Instant::now() < deadline,
            "the inner runtime's task was never dropped"
        );
        thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        outer.block_on(async { weft::spawn(async { 1 }).await.unwrap() }),
        1
    );
}

#[test]
fn runtime_built_and_used_inside_block_on_thread() {
    let outer = mt(1);
    outer.block_on(async {
        let inner = thread::spawn(|| {
            let rt = Builder::new_current_thread().build().unwrap();
            rt.block_on(async { weft::spawn(async { 4 }).await.unwrap() })
        })
        .join()
        .unwrap();
        assert_eq!(inner, 4);
    });
}

#[test]
fn many_remote_spawners_at_once() {
    let rt = mt(4);
    let counter = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let h = rt.handle().clone();
            let c = counter.clone();
            thread::spawn(move || {
                let hs: Vec<_> = (0..2_000)
                    .map(|_| {
                        let c = c.clone();
                        h.spawn(async move {
                            c.fetch_add(1, Ordering::Relaxed);
                        })
                    })
                    .collect();
                h.block_on(async {
                    for j in hs {
                        j.await.unwrap();
                    }
                });
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(counter.load(Ordering::Relaxed), 8_000);
    assert!(rt.metrics().remote_schedule_count() >= 8_000);
}

#[test]
fn oneshot_blocking_recv_inside_runtime_panics_with_advice() {
    let rt = mt(1);
    let err = rt
        .block_on(async {
            weft::spawn(async {
                let (_tx, rx) = weft::sync::oneshot::channel::<()>();
                let _ = rx.blocking_recv();
            })
            .await
        })
        .unwrap_err();
    let msg = panic_message(err.into_panic());
    assert!(msg.contains("blocking_recv"), "{msg}");
    assert!(msg.contains("spawn_blocking"), "{msg}");
}

#[test]
fn oneshot_blocking_recv_from_spawn_blocking_works() {
    let rt = mt(2);
    let v = rt.block_on(async {
        let (tx, rx) = weft::sync::oneshot::channel();
        let waiter = task::spawn_blocking(move || rx.blocking_recv().unwrap());
        tx.send(21).unwrap();
        waiter.await.unwrap() * 2
    });
    assert_eq!(v, 42);
}
