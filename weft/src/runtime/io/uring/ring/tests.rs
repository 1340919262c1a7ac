//! The ring's start path when the kernel refuses a submit (module doc,
//! "A queued entry is a started op"), with `refuse_submits` standing in
//! for a kernel short of memory.

use super::submit::SUBMIT_PATIENCE;
use super::*;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

fn pair() -> (UnixStream, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    (a, b)
}

/// A receive of up to 16 bytes from `a`, started as a thread that is
/// not the ring's owner starts one (it submits at once).
fn recv_from_another_thread(ring: &Ring, a: &UnixStream) -> io::Result<OpKey> {
    ring.start_recv(
        a.as_raw_fd(),
        Vec::with_capacity(16),
        16,
        Waker::noop(),
        true,
        false,
    )
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

/// A receive whose submits the kernel refuses for a while (short of
/// memory) is started once it stops: another thread's start waits the
/// refusals out, and the receive reads its own socket. (Reported as an
/// error with the entry left queued, its caller closed the socket; a
/// socket that reused the number then lost its data to the receive.)
#[test]
fn a_receive_whose_submits_were_refused_for_a_while_is_started() {
    let ring = Ring::new().unwrap();
    let (a, mut b) = pair();
    ring.lock().refuse_submits = 20;
    let key =
        recv_from_another_thread(&ring, &a).expect("a receive in the submission queue is started");
    assert_eq!(ring.lock().unsubmitted, 0, "submitted by the start");
    b.write_all(b"mine").unwrap();
    let (result, mut buf) = wait_for(&ring, key);
    assert_eq!(result, 4);
    // SAFETY: the receive wrote `result` bytes into the spare capacity
    // (`start_recv`).
    unsafe { buf.set_len(4) };
    assert_eq!(&buf, b"mine");
}

/// A start the kernel refuses for longer than `SUBMIT_PATIENCE` fails;
/// its entry, still queued, keeps its buffer in the table until the
/// entry completes (after a later submit), when the table frees it.
#[test]
fn a_start_refused_past_the_patience_fails_and_leaves_its_buffer_to_the_kernel() {
    let ring = Ring::new().unwrap();
    let (a, mut b) = pair();
    ring.lock().refuse_submits = usize::MAX;
    let began = Instant::now();
    let err = recv_from_another_thread(&ring, &a).expect_err("refused for good");
    assert!(began.elapsed() >= SUBMIT_PATIENCE);
    assert_eq!(err.raw_os_error(), Some(libc::EAGAIN));
    assert_eq!(
        ring.lock().table.in_flight(),
        1,
        "the queued entry's buffer"
    );
    ring.lock().refuse_submits = 0;
    b.write_all(b"late").unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while ring.lock().table.in_flight() > 0 {
        assert!(Instant::now() < deadline, "the orphan was never freed");
        ring.flush(&mut Vec::new());
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A batch the kernel takes only in part (it stops after an entry it
/// refuses on a ring without `SUBMIT_ALL`, as before Linux 5.18) is
/// carried on: the rest reaches the kernel, and the count of queued
/// entries says what is left (before, a short submit counted as whole).
#[test]
fn a_batch_the_kernel_takes_in_part_is_submitted_whole() {
    let ring = Ring::build(false).unwrap();
    let (a, mut b) = pair();
    {
        let mut state = ring.lock();
        // A flag bit no kernel knows: refused when the kernel reads it.
        let refused = opcode::Nop::new()
            .build()
            .flags(squeue::Flags::from_bits_retain(0x80))
            .user_data(INTERNAL_USER_DATA);
        // SAFETY: a no-op points at no memory.
        unsafe { state.push(&refused, &mut Vec::new()) }.unwrap();
    }
    let key = recv_from_another_thread(&ring, &a).unwrap();
    let mut state = ring.lock();
    assert_eq!(state.sq().len(), 0, "the receive was left in the queue");
    assert_eq!(state.unsubmitted, 0);
    drop(state);
    b.write_all(b"z").unwrap();
    assert_eq!(wait_for(&ring, key).0, 1);
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
/// again and again) still ends: on Linux 6.18 the kernel honours a cancel
/// that lands mid-re-arm, so `Ring::abandon`'s one cancel is enough
/// there. (A lost cancel would keep the socket's file open in the kernel
/// after its close, and the peer would never see the end.) In 5,000
/// tries, about one in ten found the receive already completed with a
/// byte, the rest cancelled it, and every end came within 5 ms.
#[test]
fn a_receive_abandoned_amid_spurious_wakes_ends() {
    use std::os::fd::FromRawFd;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let ring = Ring::new().unwrap();
    for i in 0..300 {
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
            let deadline = Instant::now() + Duration::from_secs(10);
            while cycles.load(Ordering::Relaxed) < from + n {
                assert!(Instant::now() < deadline, "the waking thread stopped");
                std::thread::yield_now();
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
