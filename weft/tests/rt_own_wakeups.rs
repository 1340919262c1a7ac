//! A thread that dispatches I/O in its runtime's driver, and so wakes its
//! own `block_on` future, does not also wake itself through the driver's
//! eventfd (scheduler/park.rs, "An unpark from the parking thread itself").
//! Counted with the thread's own write syscalls (`/proc/thread-self/io`).

use std::io::Write;
use std::time::Duration;

/// This thread's write-family syscalls so far.
fn thread_writes() -> u64 {
    let io = std::fs::read_to_string("/proc/thread-self/io").expect("/proc/thread-self/io");
    io.lines()
        .find_map(|l| l.strip_prefix("syscw: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("a syscw line")
}

#[test]
fn a_block_on_future_woken_by_its_own_driver_costs_no_wakeup_write() {
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    ours.set_nonblocking(true).unwrap();
    let writes = rt.block_on(async {
        let ours = weft::net::UnixStream::from_std(ours).unwrap();
        let mut writes = Vec::new();
        for _ in 0..10 {
            let mut peer = theirs.try_clone().unwrap();
            // Written once this thread is parked in the driver: the wake
            // comes from the driver's dispatch, on this thread.
            let writer = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(5));
                peer.write_all(b"x").unwrap();
            });
            let before = thread_writes();
            loop {
                ours.readable().await.unwrap();
                if ours.try_read(&mut [0; 1]).is_ok() {
                    break;
                }
            }
            writes.push(thread_writes() - before);
            writer.join().unwrap();
        }
        writes
    });
    assert_eq!(
        writes,
        vec![0; 10],
        "write syscalls per wake of block_on's future"
    );
}

#[test]
fn a_wake_from_another_thread_still_reaches_a_parked_block_on() {
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for _ in 0..10 {
        let (tx, rx) = weft::sync::oneshot::channel();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            tx.send(7).unwrap();
        });
        let got = rt.block_on(async { weft::time::timeout(Duration::from_secs(10), rx).await });
        assert_eq!(got.expect("the other thread's wake was lost").unwrap(), 7);
        sender.join().unwrap();
    }
}

/// A wake-up deferred inside `on_thread_park` (a `yield_now` polled there
/// with another waker) is not slept on: the thread delivers it instead of
/// parking for good. Here it is the only thing that can end `block_on`.
#[test]
fn a_yield_polled_in_on_thread_park_is_woken() {
    use std::future::Future;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Wake};
    struct NotifyOnWake(weft::sync::Notify);
    impl Wake for NotifyOnWake {
        fn wake(self: Arc<Self>) {
            self.0.notify_one();
        }
    }
    let notify = Arc::new(NotifyOnWake(weft::sync::Notify::new()));
    let waker = std::task::Waker::from(notify.clone());
    let once = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let seen = once.clone();
    std::thread::spawn(move || {
        let rt = weft::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_park(move || {
                if !seen.swap(true, Ordering::SeqCst) {
                    let mut cx = Context::from_waker(&waker);
                    let _ = std::pin::pin!(weft::task::yield_now()).poll(&mut cx);
                }
            })
            .build()
            .unwrap();
        rt.block_on(notify.0.notified());
        tx.send(()).unwrap();
    });
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .expect("the yield deferred in on_thread_park was never woken");
    assert!(once.load(Ordering::SeqCst));
}
