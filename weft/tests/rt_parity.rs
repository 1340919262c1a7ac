//! Runtime behaviours a Tokio program can observe, pinned down one by one
//! (issue #10): the JoinSet budget spin, panics and drops inside tasks,
//! blocking work across shutdown, `block_in_place` outside a worker, task
//! ids in destructors, deferred yields, short `block_on` bursts, busy-time
//! metrics, and a runtime kept in a thread-local.
//!
//! A test that could hang runs its body under `support::watchdog`, so a hang fails
//! that one test instead of stalling the suite.

#![allow(clippy::disallowed_names)]

#[macro_use]
mod support;

use std::thread;
use std::time::Duration;

/// How long a body may run before it counts as hung.
const HANG: Duration = Duration::from_secs(30);

/// The watchdog itself: a body that never finishes fails its test, which
/// names the body's last step.
#[test]
#[should_panic(expected = "hung for 200ms at: parked for good")]
fn the_watchdog_fails_a_hung_body_and_names_its_step() {
    support::watchdog(Duration::from_millis(200), |progress| {
        progress.step("parked for good");
        loop {
            std::thread::park();
        }
    });
}

rt_test! {
    use futures::FutureExt;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;
    use weft::task::{self, JoinSet};

    // Item 1: a JoinSet polled with a spent budget must return Pending once,
    // not spin re-polling the member whose budget check woke it.
    #[test]
    fn join_set_now_or_never_loop_finishes() {
        crate::support::watchdog(crate::HANG, |_| {
            let rt = rt();
            rt.block_on(async {
                let done = Arc::new(AtomicUsize::new(0));
                let mut set = JoinSet::new();
                for i in 0..1000u64 {
                    let done = done.clone();
                    set.spawn(async move {
                        done.fetch_add(1, Ordering::SeqCst);
                        i
                    });
                }
                while done.load(Ordering::SeqCst) < 1000 {
                    task::yield_now().await;
                }
                let mut sum = 0;
                while !set.is_empty() {
                    // Drain what is ready in one poll: past 128 joins the
                    // budget is spent, and join_next must say Pending.
                    while let Some(Some(res)) = set.join_next().now_or_never() {
                        sum += res.unwrap();
                    }
                    task::yield_now().await;
                }
                assert_eq!(sum, 999 * 1000 / 2);
            });
        });
    }

    #[test]
    fn join_set_try_join_next_loop_finishes() {
        crate::support::watchdog(crate::HANG, |_| {
            let rt = rt();
            rt.block_on(async {
                let mut set = JoinSet::new();
                for i in 0..1000u64 {
                    set.spawn(async move { i });
                }
                let mut joined = 0;
                while !set.is_empty() {
                    while let Some(res) = set.try_join_next() {
                        res.unwrap();
                        joined += 1;
                    }
                    task::yield_now().await;
                }
                assert_eq!(joined, 1000);
            });
        });
    }

    // Item 5: the future of a task that panics is dropped during the unwind.
    #[test]
    fn panicking_task_drops_its_future_while_unwinding() {
        struct SeesPanic(Arc<AtomicUsize>);
        impl Drop for SeesPanic {
            fn drop(&mut self) {
                // 1 = dropped while panicking, 2 = dropped normally.
                let v = if std::thread::panicking() { 1 } else { 2 };
                self.0.store(v, Ordering::SeqCst);
            }
        }
        let rt = rt();
        let seen = Arc::new(AtomicUsize::new(0));
        let guard = SeesPanic(seen.clone());
        let res = rt.block_on(rt.spawn(async move {
            let _guard = guard;
            task::yield_now().await;
            panic!("boom");
        }));
        assert!(res.unwrap_err().is_panic());
        assert_eq!(seen.load(Ordering::SeqCst), 1, "the future was not dropped during the unwind");
    }

    // Item 6: a panic in the output's destructor is the runtime's, not the
    // caller of drop(handle).
    #[test]
    fn output_drop_panic_does_not_escape_join_handle_drop() {
        struct PanicsOnDrop;
        impl Drop for PanicsOnDrop {
            fn drop(&mut self) {
                panic!("output destructor panics");
            }
        }
        let rt = rt();
        rt.block_on(async {
            let handle = weft::spawn(async { PanicsOnDrop });
            while !handle.is_finished() {
                task::yield_now().await;
            }
            let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(handle)));
            assert!(dropped.is_ok(), "the output's panic escaped drop(JoinHandle)");
            // The runtime still works.
            assert_eq!(weft::spawn(async { 3 }).await.unwrap(), 3);
        });
    }

    // Item 7: blocking work handed over before shutdown runs to the end and
    // its handle yields the value, even if its thread had not started it
    // yet when shutdown began.
    #[test]
    fn blocking_work_spawned_before_shutdown_runs_after_shutdown_background() {
        let rt = rt();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let handle = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            7
        });
        rt.shutdown_background();
        go_tx.send(()).unwrap();
        assert_eq!(futures::executor::block_on(handle).unwrap(), 7);
        started_rx.recv().unwrap();
    }

    #[test]
    fn blocking_work_spawned_before_shutdown_runs_after_drop() {
        let rt = rt();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let handle = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            8
        });
        drop(rt);
        assert_eq!(futures::executor::block_on(handle).unwrap(), 8);
        started_rx.recv().unwrap();
    }

    #[test]
    fn blocking_work_spawned_before_shutdown_runs_after_shutdown_timeout() {
        let rt = rt();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let handle = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            9
        });
        rt.shutdown_timeout(Duration::from_millis(10));
        go_tx.send(()).unwrap();
        assert_eq!(futures::executor::block_on(handle).unwrap(), 9);
        started_rx.recv().unwrap();
    }

    // Item 8: Handle::block_on on a thread that is no worker: block_in_place
    // just runs the closure.
    #[test]
    fn block_in_place_inside_handle_block_on_runs_the_closure() {
        let rt = rt();
        let handle = rt.handle().clone();
        let out = std::thread::spawn(move || {
            handle.block_on(async { task::block_in_place(|| 11) })
        })
        .join()
        .unwrap();
        assert_eq!(out, 11);
    }

    // Item 9: the task's id is current in its future's destructor when it
    // is aborted, and in its output's destructor.
    #[test]
    fn task_id_in_destructor_of_aborted_future() {
        struct RecordId(Arc<std::sync::Mutex<Option<Option<task::Id>>>>);
        impl Drop for RecordId {
            fn drop(&mut self) {
                *self.0.lock().unwrap() = Some(task::try_id());
            }
        }
        let rt = rt();
        rt.block_on(async {
            let seen = Arc::new(std::sync::Mutex::new(None));
            let guard = RecordId(seen.clone());
            let (tx, rx) = weft::sync::oneshot::channel::<()>();
            let handle = weft::spawn(async move {
                let _guard = guard;
                let _ = tx.send(());
                std::future::pending::<()>().await;
            });
            rx.await.unwrap();
            let id = handle.id();
            handle.abort();
            assert!(handle.await.unwrap_err().is_cancelled());
            assert_eq!(*seen.lock().unwrap(), Some(Some(id)));
        });
    }

    #[test]
    fn task_id_in_destructor_of_output() {
        struct IdOnDrop(Arc<std::sync::Mutex<Option<Option<task::Id>>>>);
        impl Drop for IdOnDrop {
            fn drop(&mut self) {
                *self.0.lock().unwrap() = Some(task::try_id());
                // `id()` must not panic here either.
                let _ = task::id();
            }
        }
        let rt = rt();
        rt.block_on(async {
            // Dropped by the JoinHandle's owner after completion.
            let seen = Arc::new(std::sync::Mutex::new(None));
            let out = IdOnDrop(seen.clone());
            let handle = weft::spawn(async move { out });
            let id = handle.id();
            while !handle.is_finished() {
                task::yield_now().await;
            }
            drop(handle);
            assert_eq!(*seen.lock().unwrap(), Some(Some(id)));

            // Dropped by the runtime: nobody holds the JoinHandle.
            let seen = Arc::new(std::sync::Mutex::new(None));
            let out = IdOnDrop(seen.clone());
            let (tx, rx) = weft::sync::oneshot::channel();
            let handle = weft::spawn(async move {
                tx.send(()).unwrap();
                task::yield_now().await;
                out
            });
            let id = handle.id();
            drop(handle);
            rx.await.unwrap();
            for _ in 0..1000 {
                if seen.lock().unwrap().is_some() {
                    break;
                }
                weft::time::sleep(Duration::from_millis(1)).await;
            }
            assert_eq!(*seen.lock().unwrap(), Some(Some(id)));
        });
    }

    // Item 10: after `yield_now` the drivers are polled before the yielder
    // runs again, so an I/O event that is already there is delivered next.
    #[test]
    fn yield_now_lets_io_in_before_the_yielder_runs_again() {
        use std::io::Write;
        let rt = rt();
        rt.block_on(async {
            let (ours, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
            ours.set_nonblocking(true).unwrap();
            let ours = weft::net::UnixStream::from_std(ours).unwrap();
            let spins = Arc::new(AtomicUsize::new(0));
            let stop = Arc::new(AtomicBool::new(false));
            let (reg_tx, reg_rx) = weft::sync::oneshot::channel();
            let reader = {
                let spins = spins.clone();
                let stop = stop.clone();
                weft::spawn(async move {
                    // First poll registers interest; the event is not there yet.
                    let mut readable = std::pin::pin!(ours.readable());
                    assert!(futures::poll!(readable.as_mut()).is_pending());
                    reg_tx.send(()).unwrap();
                    readable.await.unwrap();
                    stop.store(true, Ordering::SeqCst);
                    spins.load(Ordering::SeqCst)
                })
            };
            reg_rx.await.unwrap();
            let spinner = {
                let spins = spins.clone();
                let stop = stop.clone();
                weft::spawn(async move {
                    // The event arrives while this task spins on yield_now.
                    theirs.write_all(b"x").unwrap();
                    while !stop.load(Ordering::SeqCst) && spins.load(Ordering::SeqCst) < 100_000 {
                        spins.fetch_add(1, Ordering::SeqCst);
                        task::yield_now().await;
                    }
                })
            };
            let seen_at = reader.await.unwrap();
            spinner.await.unwrap();
            // With spare workers another thread may hold the driver (blocked
            // in the poller); it gets the event from the OS, so how many
            // spins happen first is up to thread wake-up latency. With one
            // scheduler thread the spinner's own thread must deliver it.
            if matches!(FLAVOR, crate::support::Flavor::CurrentThread | crate::support::Flavor::MultiThread(1)) {
                assert!(seen_at <= 3, "the yielding task ran {seen_at} times before I/O was delivered");
            }
        });
    }

    // Item 12: busy time is published for every worker, including the time
    // before shutdown that no park closed.
    #[test]
    fn every_worker_reports_busy_time_after_drop() {
        let rt = rt();
        let metrics = rt.metrics();
        rt.block_on(async {
            for _ in 0..5 {
                weft::spawn(async { task::yield_now().await }).await.unwrap();
            }
        });
        drop(rt);
        for w in 0..metrics.num_workers() {
            assert!(
                metrics.worker_total_busy_duration(w) > Duration::ZERO,
                "worker {w} reports no busy time"
            );
        }
    }
}

// Item 10, current_thread: the block_on future is polled again before a
// spawned task that keeps yielding runs a second time.
#[test]
fn current_thread_yield_now_lets_block_on_future_run() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let spins = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let most_between = rt.block_on(async {
        let spinner = {
            let spins = spins.clone();
            let stop = stop.clone();
            weft::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    spins.fetch_add(1, Ordering::SeqCst);
                    weft::task::yield_now().await;
                }
            })
        };
        let mut most = 0;
        let mut last = spins.load(Ordering::SeqCst);
        for _ in 0..20 {
            weft::task::yield_now().await;
            let now = spins.load(Ordering::SeqCst);
            most = most.max(now - last);
            last = now;
        }
        stop.store(true, Ordering::SeqCst);
        spinner.await.unwrap();
        most
    });
    assert!(
        most_between <= 2,
        "the spawned task yielded {most_between} times between two polls of block_on's future"
    );
}

// Item 11: a current_thread runtime driven in short bursts still polls its
// drivers, so a timer armed by a spawned task fires.
#[test]
fn current_thread_short_bursts_still_fire_timers() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    support::watchdog(HANG, |_| {
        let notify = Arc::new(weft::sync::Notify::new());
        let rt = {
            let notify = notify.clone();
            weft::runtime::Builder::new_current_thread()
                .enable_all()
                .on_thread_park(move || notify.notify_waiters())
                .build()
                .unwrap()
        };
        let fired = Arc::new(AtomicBool::new(false));
        {
            let fired = fired.clone();
            rt.spawn(async move {
                weft::time::sleep(Duration::from_millis(5)).await;
                fired.store(true, Ordering::SeqCst);
            });
        }
        while !fired.load(Ordering::SeqCst) {
            rt.block_on(notify.notified());
        }
    });
}

// Item 12: every worker that ran a task reports busy time.
#[test]
fn every_worker_that_ran_tasks_reports_busy_time() {
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let metrics = rt.metrics();
    // Four tasks that wait for each other must run on four workers at once.
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let barrier = barrier.clone();
            rt.spawn(async move {
                barrier.wait();
                std::thread::current().id()
            })
        })
        .collect();
    let threads: std::collections::HashSet<_> = handles
        .into_iter()
        .map(|h| rt.block_on(h).unwrap())
        .collect();
    assert_eq!(threads.len(), 4);
    drop(rt);
    for w in 0..metrics.num_workers() {
        assert!(
            metrics.worker_total_busy_duration(w) > Duration::ZERO,
            "worker {w} ran a task but reports no busy time"
        );
    }
}

// Item 4: a current_thread runtime kept in a thread-local shuts down while
// the thread's locals are being destroyed. Run in a child process, since
// the failure is an abort of the whole process.
#[test]
fn runtime_in_thread_local_shuts_down_at_thread_exit() {
    if std::env::var_os("WEFT_TLS_RUNTIME_CHILD").is_some() {
        tls_runtime_child();
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "runtime_in_thread_local_shuts_down_at_thread_exit",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("WEFT_TLS_RUNTIME_CHILD", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child process failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("tls runtime child done"));
}

fn tls_runtime_child() {
    thread_local! {
        static RT: weft::runtime::Runtime = weft::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
    }
    thread::spawn(|| {
        RT.with(|rt| {
            rt.block_on(async {
                // Work left behind for shutdown to cancel: a pending task, a
                // timer, a socket and a blocking closure.
                weft::spawn(std::future::pending::<()>());
                weft::spawn(weft::time::sleep(Duration::from_secs(3600)));
                let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                weft::spawn(async move {
                    let _ = listener.accept().await;
                });
                weft::task::spawn_blocking(|| thread::sleep(Duration::from_millis(10)));
                weft::task::yield_now().await;
            });
        });
    })
    .join()
    .unwrap();
    println!("tls runtime child done");
}
