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
