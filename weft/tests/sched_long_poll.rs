//! A poll that blocks its worker does not hold up the work queued behind it
//! (issue #13): a timer or socket task queued on the blocked worker still
//! runs on time, and the long-poll hook reports the task with its spawn
//! location. Each test runs on 1, 2 and 4 workers.
//!
//! A task left in the blocked worker's LIFO slot is stolen by the monitor
//! (`sched_stranded.rs` tests that).
//!
//! Timing bounds are far from what the mechanism needs (it acts within a
//! monitoring period, or the threshold), so a loaded CI machine does not
//! make them flake.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn runtime(workers: usize, threshold: Duration) -> weft::runtime::Runtime {
    weft::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .long_poll_threshold(threshold)
        .build()
        .unwrap()
}

/// A task on the blocked worker waits for a timer and for a socket; both
/// must be served within twice the threshold of when they are ready.
fn timer_and_socket_behind_a_blocked_worker(workers: usize) {
    let threshold = Duration::from_millis(50);
    let rt = runtime(workers, threshold);
    let (timer_late, socket_late) = rt.block_on(async move {
        weft::spawn(async move {
            let (ours, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
            ours.set_nonblocking(true).unwrap();
            let ours = weft::net::UnixStream::from_std(ours).unwrap();
            // Spawned from the worker that will block: they queue behind it.
            let timer = weft::spawn(async move {
                let due = Instant::now() + Duration::from_millis(100);
                weft::time::sleep_until(due.into()).await;
                Instant::now() - due
            });
            let socket = weft::spawn(async move {
                ours.readable().await.unwrap();
                Instant::now()
            });
            // Each spawn goes to this worker's LIFO slot and pushes the one
            // before to its queue: this one takes the slot, so the two
            // above are in the queue.
            let slot_holder = weft::spawn(async {});
            let writer = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                use std::io::Write;
                theirs.write_all(b"x").unwrap();
                let sent = Instant::now();
                (sent, theirs)
            });
            // Block this worker for a second.
            std::thread::sleep(Duration::from_secs(1));
            let timer_late = timer.await.unwrap();
            let read_at = socket.await.unwrap();
            let (sent, _theirs) = writer.join().unwrap();
            slot_holder.await.unwrap();
            (timer_late, read_at.saturating_duration_since(sent))
        })
        .await
        .unwrap()
    });
    eprintln!("{workers} worker(s): timer late by {timer_late:?}, socket by {socket_late:?}");
    assert!(
        timer_late <= threshold * 2,
        "{workers} worker(s): the timer fired {timer_late:?} late behind a blocked worker"
    );
    assert!(
        socket_late <= threshold * 2,
        "{workers} worker(s): the socket was served {socket_late:?} late"
    );
}

#[test]
fn timer_and_socket_behind_a_blocked_worker_1_worker() {
    timer_and_socket_behind_a_blocked_worker(1);
}

#[test]
fn timer_and_socket_behind_a_blocked_worker_2_workers() {
    timer_and_socket_behind_a_blocked_worker(2);
}

#[test]
fn timer_and_socket_behind_a_blocked_worker_4_workers() {
    timer_and_socket_behind_a_blocked_worker(4);
}

/// A task woken by I/O blocks the worker that was parked in the drivers
/// (and so ran it): a timer and a socket that other tasks wait on must
/// still be served within twice the threshold. Before the monitor learned
/// to wake a sleeper into the unmanned drivers, both waited for the whole
/// blocking poll on 2 and 4 workers (the timer 330 ms late behind 400 ms).
fn timer_and_socket_while_the_driver_worker_blocks(workers: usize) {
    use std::io::Write;
    let threshold = Duration::from_millis(50);
    let rt = runtime(workers, threshold);
    let (timer_late, socket_late) = rt.block_on(async move {
        let pair = || {
            let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
            ours.set_nonblocking(true).unwrap();
            (weft::net::UnixStream::from_std(ours).unwrap(), theirs)
        };
        let (wakes_blocker, mut blocker_peer) = pair();
        let (watched, mut watched_peer) = pair();
        let timer = weft::spawn(async move {
            let due = Instant::now() + Duration::from_millis(150);
            weft::time::sleep_until(due.into()).await;
            Instant::now() - due
        });
        let socket = weft::spawn(async move {
            watched.readable().await.unwrap();
            Instant::now()
        });
        let blocker = weft::spawn(async move {
            wakes_blocker.readable().await.unwrap();
            std::thread::sleep(Duration::from_millis(600));
        });
        let writer = std::thread::spawn(move || {
            // Everything is parked by now; the worker in the drivers gets
            // the event and runs the blocker.
            std::thread::sleep(Duration::from_millis(50));
            blocker_peer.write_all(b"x").unwrap();
            std::thread::sleep(Duration::from_millis(100));
            watched_peer.write_all(b"x").unwrap();
            (Instant::now(), blocker_peer, watched_peer)
        });
        let timer_late = timer.await.unwrap();
        let read_at = socket.await.unwrap();
        let (sent, _blocker_peer, _watched_peer) = writer.join().unwrap();
        blocker.await.unwrap();
        (timer_late, read_at.saturating_duration_since(sent))
    });
    eprintln!("{workers} worker(s): timer late by {timer_late:?}, socket by {socket_late:?}");
    assert!(
        timer_late <= threshold * 2,
        "{workers} worker(s): the timer fired {timer_late:?} late while the driver's worker blocked"
    );
    assert!(
        socket_late <= threshold * 2,
        "{workers} worker(s): the socket was served {socket_late:?} late"
    );
}

#[test]
fn timer_and_socket_while_the_driver_worker_blocks_1_worker() {
    timer_and_socket_while_the_driver_worker_blocks(1);
}

#[test]
fn timer_and_socket_while_the_driver_worker_blocks_2_workers() {
    timer_and_socket_while_the_driver_worker_blocks(2);
}

#[test]
fn timer_and_socket_while_the_driver_worker_blocks_4_workers() {
    timer_and_socket_while_the_driver_worker_blocks(4);
}

/// A task starts a read on its worker and then that worker blocks (the
/// next task it runs sleeps): the read must still complete within twice the
/// threshold of the data's arrival. On the io_uring driver the read is an
/// entry pushed on the blocked worker's ring, which that worker would
/// submit only at its next maintenance tick or park; the monitor submits it
/// instead. On epoll the readiness reaches whoever is in the drivers.
fn read_started_just_before_its_worker_blocks(workers: usize) {
    use std::future::Future;
    use std::task::Poll;
    use weft::io::AsyncReadExt;
    let threshold = Duration::from_millis(50);
    let rt = runtime(workers, threshold);
    let late = rt.block_on(async move {
        let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut stream, _) = listener.accept().await.unwrap();
        let reader = weft::spawn(async move {
            let mut buf = [0u8; 1];
            let mut read = std::pin::pin!(stream.read(&mut buf));
            let started =
                std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx).is_pending()));
            assert!(started.await, "nothing was written yet");
            // Runs next on this worker, from its LIFO slot.
            weft::spawn(async { std::thread::sleep(Duration::from_millis(600)) });
            assert_eq!(read.await.unwrap(), 1);
            Instant::now()
        });
        let sent = weft::task::spawn_blocking(move || {
            std::thread::sleep(Duration::from_millis(100));
            use std::io::Write;
            peer.write_all(b"x").unwrap();
            (Instant::now(), peer)
        });
        let read_at = reader.await.unwrap();
        let (sent, _peer) = sent.await.unwrap();
        read_at.saturating_duration_since(sent)
    });
    eprintln!("{workers} worker(s): read completed {late:?} after the data arrived");
    assert!(
        late <= threshold * 2,
        "{workers} worker(s): a read started before its worker blocked completed {late:?} late"
    );
}

#[test]
fn read_started_just_before_its_worker_blocks_1_worker() {
    read_started_just_before_its_worker_blocks(1);
}

#[test]
fn read_started_just_before_its_worker_blocks_2_workers() {
    read_started_just_before_its_worker_blocks(2);
}

#[test]
fn read_started_just_before_its_worker_blocks_4_workers() {
    read_started_just_before_its_worker_blocks(4);
}

/// The hook fires once, with the blocking task's id and spawn location, and
/// the metric counts it.
fn hook_reports_the_task(workers: usize) {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let rt = {
        let reports = reports.clone();
        weft::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .long_poll_threshold(Duration::from_millis(20))
            .on_long_poll(move |info| {
                reports.lock().unwrap().push((
                    info.task_id(),
                    info.spawned_at().file(),
                    info.spawned_at().line(),
                    info.poll_duration(),
                ))
            })
            .build()
            .unwrap()
    };
    let metrics = rt.metrics();
    let line = line!() + 1;
    let handle = rt.spawn(async { std::thread::sleep(Duration::from_millis(300)) });
    let id = handle.id();
    rt.block_on(handle).unwrap();
    // A short poll is not reported.
    rt.block_on(rt.spawn(async {})).unwrap();
    let reports = reports.lock().unwrap().clone();
    assert_eq!(reports.len(), 1, "{workers} worker(s): {reports:?}");
    let (task, file, at_line, duration) = reports[0];
    assert_eq!(task, id);
    assert!(file.ends_with("sched_long_poll.rs"), "{file}");
    assert_eq!(at_line, line);
    assert!(duration >= Duration::from_millis(20), "{duration:?}");
    assert_eq!(metrics.long_poll_count(), 1);
}

#[test]
fn hook_reports_the_task_1_worker() {
    hook_reports_the_task(1);
}

#[test]
fn hook_reports_the_task_2_workers() {
    hook_reports_the_task(2);
}

#[test]
fn hook_reports_the_task_4_workers() {
    hook_reports_the_task(4);
}

#[test]
fn monitor_can_be_turned_off() {
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .long_poll_threshold(None)
        .build()
        .unwrap();
    let metrics = rt.metrics();
    rt.block_on(rt.spawn(async { std::thread::sleep(Duration::from_millis(50)) }))
        .unwrap();
    assert_eq!(metrics.long_poll_count(), 0);
}

/// A task that wakes itself after every poll keeps its worker busy for
/// good: the worker's own queue never runs dry, so it never steals.
struct Spinner {
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl std::future::Future for Spinner {
    type Output = std::thread::ThreadId;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::thread::ThreadId> {
        if self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return std::task::Poll::Ready(std::thread::current().id());
        }
        let until = Instant::now() + Duration::from_micros(50);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// Every other worker is busy with a task that never lets its queue run
/// dry, and one worker blocks with a task queued behind it: nobody is idle
/// to steal that task, so the monitor hands the stuck worker's queue to a
/// rescue thread, and the task runs long before the blocking poll ends
/// (it waited for the whole poll before).
fn queued_work_runs_while_every_other_worker_is_busy(workers: usize) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let threshold = Duration::from_millis(50);
    let rt = runtime(workers, threshold);
    let waited = rt.block_on(async move {
        let stop = Arc::new(AtomicBool::new(false));
        let spinners: Vec<_> = (1..workers)
            .map(|_| weft::spawn(Spinner { stop: stop.clone() }))
            .collect();
        // Let the spinners settle on their workers.
        weft::time::sleep(Duration::from_millis(20)).await;
        let waited = weft::spawn(async move {
            let spawned = Instant::now();
            // Spawned from the worker that will block: `queued` goes to
            // its LIFO slot, and `slot_holder` pushes it to the queue.
            let queued = weft::spawn(async move { spawned.elapsed() });
            let slot_holder = weft::spawn(async {});
            std::thread::sleep(Duration::from_secs(1));
            slot_holder.await.unwrap();
            queued.await.unwrap()
        })
        .await
        .unwrap();
        stop.store(true, Ordering::Relaxed);
        for spinner in spinners {
            spinner.await.unwrap();
        }
        waited
    });
    eprintln!("{workers} workers: the queued task waited {waited:?}");
    assert!(
        waited <= threshold * 4,
        "{workers} workers: a task queued behind a blocked worker waited {waited:?} \
         while every other worker was busy"
    );
}

#[test]
fn queued_work_runs_while_every_other_worker_is_busy_2_workers() {
    queued_work_runs_while_every_other_worker_is_busy(2);
}

#[test]
fn queued_work_runs_while_every_other_worker_is_busy_4_workers() {
    queued_work_runs_while_every_other_worker_is_busy(4);
}

/// What the rescue thread's steal took beyond the task it runs reaches a
/// worker. A one-worker runtime blocks in a task with four tasks queued
/// behind it: the rescue thread steals two and runs one; the other must
/// be run, by the worker once its poll ends (it was not: the rescue
/// thread kept it until it stopped, then handed it back and woke the
/// worker, which, still on the sleepers list, went back to sleep without
/// looking; seen as `a_million_tiny_tasks` hanging on a loaded machine).
#[test]
fn work_the_rescue_thread_took_but_did_not_run_is_run() {
    let threshold = Duration::from_millis(10);
    let rt = runtime(1, threshold);
    let blocked_until = Instant::now() + Duration::from_millis(100);
    let handles = rt.block_on(async move {
        weft::spawn(async move {
            // In the LIFO slot (the last), and the queue (the four others).
            let handles: Vec<_> = (0..5)
                .map(|_| {
                    weft::spawn(async move {
                        // Started while the parent blocks: only the rescue
                        // thread runs a task then; it stays busy a while
                        // after the parent's poll ends.
                        let now = Instant::now();
                        if now < blocked_until {
                            std::thread::sleep(blocked_until - now + Duration::from_millis(50));
                        }
                    })
                })
                .collect();
            std::thread::sleep(blocked_until.saturating_duration_since(Instant::now()));
            handles
        })
        .await
        .unwrap()
    });
    let all_ran = rt.block_on(async move {
        let all = async move {
            for handle in handles {
                handle.await.unwrap();
            }
        };
        weft::time::timeout(Duration::from_secs(5), all).await
    });
    assert!(
        all_ran.is_ok(),
        "a task the rescue thread handed back was never run (5 s)"
    );
    let long_polls: u64 = (0..rt.metrics().num_workers())
        .map(|w| rt.metrics().worker_long_poll_count(w))
        .sum();
    assert!(long_polls >= 1, "the parent's poll was not seen as long");
}

/// A task the rescue thread's steal took along must not wait for the
/// task it runs: that one may block too, even on the other. A one-worker
/// runtime blocks in a parent with `y`, `x`, `z` queued behind it (and a
/// fourth in the LIFO slot); the rescue thread's steal takes `y` and `x`
/// and runs `x`, which blocks until `y` has run. `y` must reach a worker
/// meanwhile (it waited in the rescue thread's own queue until `x` gave
/// up, and with no limit on `x`'s wait, for ever).
#[test]
fn a_task_the_rescue_thread_stole_along_does_not_wait_for_the_one_it_runs() {
    let rt = runtime(1, Duration::from_millis(20));
    let y_ran_first = rt.block_on(async {
        let x = weft::spawn(async {
            let (y_done, y_ran) = std::sync::mpsc::channel::<()>();
            let y = weft::spawn(async move {
                let _ = y_done.send(());
            });
            let x = weft::spawn(async move { y_ran.recv_timeout(Duration::from_secs(3)).is_ok() });
            let z = weft::spawn(async {});
            let last = weft::spawn(async {});
            std::thread::sleep(Duration::from_millis(300));
            (y, x, z, last)
        })
        .await
        .unwrap();
        let (y, x, z, last) = x;
        y.await.unwrap();
        z.await.unwrap();
        last.await.unwrap();
        x.await.unwrap()
    });
    assert!(
        y_ran_first,
        "a task the rescue thread took along waited for the task it ran (3 s)"
    );
}

/// A poll that blocks on the thread that took a worker over from
/// `block_in_place` is watched like any other. Task `a` hands its worker
/// to a new thread; that thread polls `b`, which spawns `c` into the LIFO
/// slot and blocks for a second; `a`'s poll then ends on its old thread.
/// `c` must be taken from the slot within the threshold's reach (the old
/// thread's end of its poll marked `b`'s poll ended too, and `c` waited
/// the whole second).
#[test]
#[allow(clippy::async_yields_async)] // the tasks hand back their children's handles
fn a_poll_on_the_thread_block_in_place_started_is_watched() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let rt = runtime(1, Duration::from_millis(20));
    let waited = rt.block_on(async {
        let b = weft::spawn(async {
            let b_started = Arc::new(AtomicBool::new(false));
            let started = b_started.clone();
            let b = weft::spawn(async move {
                started.store(true, Ordering::SeqCst);
                let spawned = Instant::now();
                let c = weft::spawn(async move { spawned.elapsed() });
                std::thread::sleep(Duration::from_secs(1));
                c
            });
            weft::task::block_in_place(|| {
                while !b_started.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                std::thread::sleep(Duration::from_millis(20));
            });
            b
        })
        .await
        .unwrap();
        b.await.unwrap().await.unwrap()
    });
    assert!(
        waited < Duration::from_millis(500),
        "a task in the slot behind a poll on block_in_place's new thread waited {waited:?}"
    );
}

/// A task the rescue thread runs may block until the runtime's shutdown
/// drops another task (here, the last sender of the channel it waits
/// on): dropping the runtime must not wait for that task first. (The
/// rescue thread's step used to hold the lock the shutdown takes before
/// it drops any task, for the whole run: the drop hung.)
#[test]
fn a_rescued_task_waiting_for_the_shutdown_does_not_hold_it_up() {
    let rt = runtime(1, Duration::from_millis(20));
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    rt.block_on(async move {
        weft::spawn(async move {
            // `x` is what the rescue thread's steal hands it to run; `y`,
            // taken along, goes back to the queue and then waits for good.
            let _y = weft::spawn(async move {
                let _tx = tx;
                std::future::pending::<()>().await
            });
            let _x = weft::spawn(async move {
                let _ = rx.recv_timeout(Duration::from_secs(20));
            });
            let _z = weft::spawn(async {});
            let _last = weft::spawn(async {});
            std::thread::sleep(Duration::from_millis(500));
        })
        .await
        .unwrap();
    });
    // The parent's poll is over; `x` blocks on the rescue thread.
    let (dropped, drop_done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(rt);
        let _ = dropped.send(());
    });
    assert!(
        drop_done.recv_timeout(Duration::from_secs(10)).is_ok(),
        "dropping the runtime waited for a rescued task that waited for the shutdown"
    );
}

/// On one worker, `a` blocks the worker and `b` then blocks the rescue
/// thread, both until `c` has run (10 s at most); `c` is queued after
/// both. Returns how long `c` waited, whether `a` and `b` saw it run, and
/// the line that spawned `b`.
fn block_the_worker_and_then_the_rescue_thread(
    rt: &weft::runtime::Runtime,
) -> (Duration, bool, u32) {
    use std::sync::mpsc;
    let limit = Duration::from_secs(10);
    let blocker = |started: mpsc::Sender<()>, release: mpsc::Receiver<()>| async move {
        let _ = started.send(());
        release.recv_timeout(limit).is_ok()
    };
    let (started, blocker_started) = mpsc::channel();
    let (release_a, a_released) = mpsc::channel();
    let (release_b, b_released) = mpsc::channel();
    let a = rt.spawn(blocker(started.clone(), a_released));
    blocker_started.recv_timeout(limit).unwrap();
    // Queued behind `a`, which blocks the only worker: the rescue thread's.
    let b_line = line!() + 1;
    let b = rt.spawn(blocker(started, b_released));
    blocker_started.recv_timeout(limit).unwrap();
    let queued = Instant::now();
    let c = rt.spawn(async move {
        let waited = queued.elapsed();
        let _ = release_a.send(());
        let _ = release_b.send(());
        waited
    });
    let (waited, a_released, b_released) =
        rt.block_on(async move { (c.await.unwrap(), a.await.unwrap(), b.await.unwrap()) });
    (waited, a_released && b_released, b_line)
}

/// A task the rescue thread runs may block as the one it was rescued
/// from did; what is queued after it must still run, long before the
/// blocked tasks' limit (with nobody watching the rescue thread's poll,
/// `c` waited for one of them to give up).
#[test]
fn a_task_queued_while_the_rescue_thread_blocks_too_is_run() {
    let rt = runtime(1, Duration::from_millis(20));
    let (waited, released, _) = block_the_worker_and_then_the_rescue_thread(&rt);
    assert!(
        released,
        "the blocked tasks gave up waiting for the task queued behind them"
    );
    assert!(
        waited < Duration::from_secs(2),
        "a task queued while the rescue thread blocked waited {waited:?}"
    );
}

/// A task that blocks the rescue thread is reported to the hook like one
/// that blocks a worker, marked as on the rescue thread, and counted.
#[test]
fn a_long_poll_on_the_rescue_thread_is_reported() {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let log = reports.clone();
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .long_poll_threshold(Duration::from_millis(20))
        .on_long_poll(move |info| {
            log.lock().unwrap().push((
                info.on_rescue_thread(),
                info.worker(),
                info.spawned_at().line(),
            ))
        })
        .build()
        .unwrap();
    let (_, released, b_line) = block_the_worker_and_then_the_rescue_thread(&rt);
    assert!(released);
    let reports = reports.lock().unwrap().clone();
    assert!(
        reports.contains(&(true, 0, b_line)),
        "the task blocking the rescue thread was not reported as such: {reports:?}"
    );
    assert!(
        reports
            .iter()
            .any(|&(rescue, _, line)| !rescue && line != b_line),
        "the task blocking the worker was not reported: {reports:?}"
    );
    assert!(rt.metrics().long_poll_count() >= 2);
}
