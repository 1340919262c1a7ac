//! The ring's start path when the kernel refuses a submit (module doc,
//! "A queued entry is a started op"), with `refuse_submits` standing in
//! for a kernel short of memory.

use super::*;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

fn pair() -> (UnixStream, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    (a, b)
}

/// Submit and reap until `key` completes (5 s at most).
fn wait_for(ring: &Ring, key: OpKey) -> (i32, Vec<u8>) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut wakers = Vec::new();
        ring.flush(&mut wakers);
        if let Some(done) = ring.try_take(key) {
            return done;
        }
        assert!(Instant::now() < deadline, "the op never completed");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A receive whose entry was queued but whose every submit in the start
/// was refused is still the caller's op: it reaches the kernel with the
/// ring's next submit and receives from its own socket. (Reported as an
/// error, its caller closed the socket while the entry waited; a socket
/// that reused the number then lost its data to it.)
#[test]
fn a_receive_whose_submits_were_refused_is_started_and_reads_its_own_socket() {
    let ring = Ring::new().unwrap();
    let (a, mut b) = pair();
    ring.lock().refuse_submits = SUBMIT_TRIES;
    let key = ring
        .start_recv(
            a.as_raw_fd(),
            Vec::with_capacity(16),
            16,
            Waker::noop(),
            true,
            false,
        )
        .expect("a receive in the submission queue is started");
    assert_eq!(ring.lock().unsubmitted, 1, "left for the next submit");
    b.write_all(b"mine").unwrap();
    let (result, mut buf) = wait_for(&ring, key);
    assert_eq!(result, 4);
    // SAFETY: the receive wrote `result` bytes into the spare capacity
    // (`start_recv`).
    unsafe { buf.set_len(4) };
    assert_eq!(&buf, b"mine");
}

/// A refusal the kernel gets over within the start's tries costs the
/// caller nothing: the entry is submitted before the start returns.
#[test]
fn a_submit_refused_once_is_tried_again_in_the_start() {
    let ring = Ring::new().unwrap();
    let (a, mut b) = pair();
    ring.lock().refuse_submits = 1;
    let key = ring
        .start_recv(
            a.as_raw_fd(),
            Vec::with_capacity(16),
            16,
            Waker::noop(),
            true,
            false,
        )
        .unwrap();
    assert_eq!(ring.lock().unsubmitted, 0, "submitted by the start");
    b.write_all(b"ok").unwrap();
    assert_eq!(wait_for(&ring, key).0, 2);
}

/// A start whose push failed (the queue full, and the submit that would
/// make room refused) queued nothing: it reports the error and keeps no
/// slot (before, the slot stayed in the table, orphaned, waiting for a
/// completion that could never come).
#[test]
fn a_start_whose_push_failed_keeps_no_slot() {
    let ring = Ring::new().unwrap();
    let (a, mut b) = pair();
    // The owner's pushes wait for its batch point: fill the queue.
    let keys: Vec<OpKey> = (0..SQ_ENTRIES)
        .map(|_| {
            ring.start_poll(a.as_raw_fd(), libc::POLLIN as u32, Waker::noop(), false)
                .unwrap()
        })
        .collect();
    assert_eq!(ring.lock().table.in_flight(), keys.len());
    ring.lock().refuse_submits = 1;
    let err = ring
        .start_poll(a.as_raw_fd(), libc::POLLIN as u32, Waker::noop(), false)
        .expect_err("the queue was full and the submit refused");
    assert_eq!(err.raw_os_error(), Some(libc::EAGAIN));
    assert_eq!(
        ring.lock().table.in_flight(),
        keys.len(),
        "the failed start kept a slot"
    );
    // The queued ones still run.
    b.write_all(b"x").unwrap();
    for key in keys {
        assert!(wait_for(&ring, key).0 & libc::POLLIN as i32 != 0);
    }
    let mut byte = [0; 1];
    (&a).read_exact(&mut byte).unwrap();
}

/// A receive abandoned while readiness wakes it and finds nothing (a
/// second reader takes each byte first, so the kernel re-arms its poll
/// again and again) still ends: the kernel honours a cancel that lands
/// mid-re-arm, so `Ring::abandon`'s one cancel is enough. (A lost cancel
/// would keep the socket's file open in the kernel after its close,
/// and the peer would never see the end.) Half a second of 1,000 tries;
/// on Linux 6.18, about one in ten found the receive already completed
/// with a byte, the rest cancelled it, and every end came within 5 ms.
#[test]
fn a_receive_abandoned_amid_spurious_wakes_ends() {
    use std::os::fd::FromRawFd;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let ring = Ring::new().unwrap();
    for i in 0..1_000 {
        let (a, mut b) = pair();
        // SAFETY: `dup` returns a new descriptor that nothing else owns.
        let mut thief = unsafe { UnixStream::from_raw_fd(libc::dup(a.as_raw_fd())) };
        let stop = Arc::new(AtomicBool::new(false));
        let cycles = Arc::new(AtomicUsize::new(0));
        let wakes = {
            let (stop, cycles) = (stop.clone(), cycles.clone());
            std::thread::spawn(move || {
                let mut bytes = [0; 64];
                while !stop.load(Ordering::Relaxed) {
                    let _ = b.write(b"x");
                    let _ = thief.read(&mut bytes);
                    cycles.fetch_add(1, Ordering::Relaxed);
                }
                b
            })
        };
        let after = |n: usize| {
            let from = cycles.load(Ordering::Relaxed);
            while cycles.load(Ordering::Relaxed) < from + n {
                std::hint::spin_loop();
            }
        };
        after(50);
        let key = ring
            .start_recv(
                a.as_raw_fd(),
                Vec::with_capacity(16),
                16,
                Waker::noop(),
                true,
                true,
            )
            .unwrap();
        after(20 + i % 13);
        ring.abandon(key, Leave::Cancel);
        stop.store(true, Ordering::Relaxed);
        let b = wakes.join().unwrap();
        let deadline = Instant::now() + Duration::from_secs(1);
        while ring.lock().table.in_flight() > 0 {
            if Instant::now() > deadline {
                // Let the test end: a byte completes the receive.
                (&b).write_all(b"y").unwrap();
                panic!("try {i}: the abandoned receive was still in flight after 1 s");
            }
            ring.flush(&mut Vec::new());
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}
