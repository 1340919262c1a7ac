//! The poller's unit tests: registrations, edges, left-over readiness,
//! the hooks' hints (`EAGAIN`, short reads) and cross-thread wakes, on
//! pipes and socket pairs without a Ruby VM.

use super::registration::Named;
use super::*;

/// A wait by the IO the fd's other waiters wait on.
const KNOWN: bool = true;

fn pipe() -> [RawFd; 2] {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    fds
}

fn write_byte(fd: RawFd) {
    // SAFETY: `fd` is an open write end; the buffer is one byte.
    assert_eq!(unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) }, 1);
}

/// One driver turn without blocking: the fds it woke.
fn turn(poller: &mut Poller, shared: &Shared) -> Vec<RawFd> {
    let mut seen = Vec::new();
    poller
        .wait(
            shared,
            Some(Duration::ZERO),
            |_| READABLE | WRITABLE,
            |fd, _| seen.push(fd),
        )
        .unwrap()
        .unwrap();
    seen
}

/// A poller watching a pipe's read end for `READABLE`, after a byte was
/// written and a turn saw it (the registration's bit is set).
fn fired_pipe() -> (Poller, Shared, [RawFd; 2]) {
    let (mut poller, shared) = Poller::new().unwrap();
    let fds = pipe();
    assert!(matches!(
        poller.watch(fds[0], READABLE, false, false),
        Ok(Some(Watch::Pending))
    ));
    write_byte(fds[1]);
    assert_eq!(turn(&mut poller, &shared), vec![fds[0]]);
    (poller, shared, fds)
}

/// Read what is in the pipe (up to 16 bytes): the byte count.
fn drain(fd: RawFd) -> isize {
    let mut buf = [0u8; 16];
    // SAFETY: reading into `buf`, of that length, from an open fd.
    unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) }
}

fn close(fds: [RawFd; 2]) {
    for fd in fds {
        // SAFETY: closing descriptors the test opened.
        unsafe { libc::close(fd) };
    }
}

#[test]
fn an_edge_after_the_watch_wakes_the_fd_through_weft_driver() {
    let (mut poller, _shared, fds) = fired_pipe();
    assert_eq!(poller.readiness(fds[0], READABLE) & READABLE, READABLE);
    // The next wait finds the bit set, asks the kernel, and the byte is
    // still there: ready at once.
    assert!(matches!(
        poller.watch(fds[0], READABLE, KNOWN, false),
        Ok(Some(Watch::Ready(READABLE)))
    ));
    assert_eq!(poller.registrations(), 1, "registered once");
    close(fds);
}

#[test]
fn a_left_over_bit_is_cleared_when_the_data_is_gone() {
    let (mut poller, _shared, fds) = fired_pipe();
    assert_eq!(drain(fds[0]), 1);
    assert!(matches!(
        poller.watch(fds[0], READABLE, KNOWN, false),
        Ok(Some(Watch::Pending))
    ));
    assert_eq!(
        poller.readiness(fds[0], READABLE) & READABLE,
        0,
        "bit cleared"
    );
    close(fds);
}

#[test]
fn a_wait_after_eagain_trusts_the_caller_and_sees_the_next_edge() {
    let (mut poller, shared, fds) = fired_pipe();
    assert_eq!(drain(fds[0]), 1);
    assert!(matches!(
        poller.watch(fds[0], READABLE, KNOWN, true),
        Ok(Some(Watch::Pending))
    ));
    assert_eq!(
        poller.readiness(fds[0], READABLE) & READABLE,
        0,
        "left-over bit cleared"
    );
    write_byte(fds[1]);
    assert_eq!(turn(&mut poller, &shared), vec![fds[0]]);
    close(fds);
}

#[test]
fn a_noted_eagain_counts_only_until_the_driver_turns() {
    let (mut poller, shared, fds) = fired_pipe();
    // The byte is unread, so a noted EAGAIN is a lie here: trusting it
    // leaves the wait pending, which shows the kernel was not asked...
    poller.note_eagain(fds[0], READABLE);
    assert!(matches!(
        poller.watch(fds[0], READABLE, KNOWN, false),
        Ok(Some(Watch::Pending))
    ));
    // ...while a note from before a turn is ignored: the kernel is
    // asked, and the byte found.
    poller.note_eagain(fds[0], READABLE);
    turn(&mut poller, &shared);
    write_byte(fds[1]);
    turn(&mut poller, &shared);
    assert!(matches!(
        poller.watch(fds[0], READABLE, KNOWN, false),
        Ok(Some(Watch::Ready(READABLE)))
    ));
    close(fds);
}

/// A reader's key ([`Poller::note_short_read`]).
const IO: u64 = 0x1000;

fn socket_pair(kind: libc::c_int) -> [RawFd; 2] {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    assert_eq!(
        unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) },
        0
    );
    fds
}

#[test]
fn a_short_read_counts_once_only_until_the_driver_turns_and_on_streams_only() {
    let (mut poller, shared) = Poller::new().unwrap();
    let stream = socket_pair(libc::SOCK_STREAM);
    let datagrams = socket_pair(libc::SOCK_DGRAM);
    poller.note_short_read(stream[0], IO);
    assert!(
        !poller.read_would_fail(stream[0], IO, || false),
        "not registered"
    );
    for fd in [stream[0], datagrams[0]] {
        let _ = poller.watch(fd, READABLE, false, false).unwrap();
    }
    poller.note_short_read(stream[0], IO);
    assert!(
        !poller.read_would_fail(datagrams[0], IO, || false),
        "another fd"
    );
    poller.note_short_read(stream[0], IO);
    assert!(
        !poller.read_would_fail(stream[0], IO + 1, || false),
        "another IO"
    );
    poller.note_short_read(stream[0], IO);
    assert!(poller.read_would_fail(stream[0], IO, || false));
    assert!(!poller.read_would_fail(stream[0], IO, || false), "once");
    poller.note_short_read(datagrams[0], IO);
    assert!(
        !poller.read_would_fail(datagrams[0], IO, || false),
        "a datagram socket"
    );
    poller.note_short_read(stream[0], IO);
    turn(&mut poller, &shared);
    assert!(
        !poller.read_would_fail(stream[0], IO, || false),
        "a turn took the edges"
    );
    close(stream);
    close(datagrams);
}

#[test]
fn bytes_that_come_after_a_short_read_wake_the_wait_that_skipped_the_read() {
    let (mut poller, shared) = Poller::new().unwrap();
    let fds = socket_pair(libc::SOCK_STREAM);
    let _ = poller.watch(fds[0], READABLE, false, false).unwrap();
    write_byte(fds[1]);
    assert_eq!(turn(&mut poller, &shared), vec![fds[0]]);
    assert_eq!(drain(fds[0]), 1, "short of 16");
    poller.note_short_read(fds[0], IO);
    write_byte(fds[1]);
    assert!(poller.read_would_fail(fds[0], IO, || false));
    // What the hooks do next: note the EAGAIN and wait.
    poller.note_eagain(fds[0], READABLE);
    assert!(matches!(
        poller.watch(fds[0], READABLE, KNOWN, false),
        Ok(Some(Watch::Pending))
    ));
    assert_eq!(turn(&mut poller, &shared), vec![fds[0]]);
    assert_eq!(poller.readiness(fds[0], READABLE) & READABLE, READABLE);
    close(fds);
}

#[test]
fn a_close_taken_with_the_bytes_is_reported_to_a_wait_after_a_skipped_read() {
    let (mut poller, shared) = Poller::new().unwrap();
    let fds = socket_pair(libc::SOCK_STREAM);
    let _ = poller.watch(fds[0], READABLE, false, false).unwrap();
    write_byte(fds[1]);
    // SAFETY: closing the peer end the test opened.
    unsafe { libc::close(fds[1]) };
    // One edge for the byte and the close, taken by this turn.
    assert_eq!(turn(&mut poller, &shared), vec![fds[0]]);
    assert_eq!(drain(fds[0]), 1, "short of 16");
    poller.note_short_read(fds[0], IO);
    assert!(poller.read_would_fail(fds[0], IO, || false));
    poller.note_eagain(fds[0], READABLE);
    // No edge is left to wake a wait: the driver's "closed" must answer.
    assert!(matches!(
        poller.watch(fds[0], READABLE, KNOWN, false),
        Ok(Some(Watch::Ready(READABLE)))
    ));
    assert_eq!(drain(fds[0]), 0, "the end of the stream");
    // SAFETY: closing the descriptor the test opened.
    unsafe { libc::close(fds[0]) };
}

#[test]
fn a_wait_or_a_readiness_check_ends_the_short_read_hint() {
    let (mut poller, _shared) = Poller::new().unwrap();
    let fds = socket_pair(libc::SOCK_STREAM);
    let _ = poller.watch(fds[0], READABLE, false, false).unwrap();
    poller.note_short_read(fds[0], IO);
    let _ = poller.watch(fds[0], WRITABLE, KNOWN, false).unwrap();
    assert!(
        !poller.read_would_fail(fds[0], IO, || false),
        "a wait came between"
    );
    poller.note_short_read(fds[0], IO);
    poller.forget_short_read(fds[1]);
    assert!(
        poller.read_would_fail(fds[0], IO, || false),
        "another fd's check"
    );
    close(fds);
}

#[test]
fn a_wake_from_another_thread_ends_a_blocked_wait_without_ruby() {
    // Without a Ruby VM the blocking path can't release a GVL, so drive
    // the same future directly: a wake from another thread ends it.
    let (poller, shared) = Poller::new().unwrap();
    let shared = Arc::new(shared);
    let other = shared.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        other.wake();
    });
    let start = std::time::Instant::now();
    poller.inner.rt.block_on(poll_fn(|cx| poller.poll_wake(cx)));
    assert!(start.elapsed() < Duration::from_secs(5));
    t.join().unwrap();
    // A wake with nobody blocked is kept for the next wait, once.
    shared.wake();
    let woken_within = |poller: &Poller, ms| {
        let wait = poll_fn(|cx| poller.poll_wake(cx));
        let limit = Duration::from_millis(ms);
        poller
            .inner
            .rt
            .block_on(async { weft::time::timeout(limit, wait).await.is_ok() })
    };
    assert!(woken_within(&poller, 5_000), "the kept wake was lost");
    assert!(!woken_within(&poller, 50), "the kept wake counted twice");
}

/// Registrations made so far by `poller`'s driver.
fn registered(poller: &Poller) -> u64 {
    poller.inner.rt.metrics().io_driver_fd_registered_count()
}

#[test]
fn a_socket_registration_is_kept_for_the_same_socket_and_remade_for_another() {
    let (mut poller, shared) = Poller::new().unwrap();
    let (a, _peer_a) = UnixStream::pair().unwrap();
    let fd = a.as_raw_fd();
    let watch = |poller: &mut Poller| {
        watch_pending(poller, fd);
        poller.inner.fds[&fd].named
    };
    let (checks, made) = (crate::fd_query::identity_checks(), registered(&poller));
    assert_eq!(
        watch(&mut poller),
        Named::Unasked,
        "registered without a question"
    );
    assert_eq!(crate::fd_query::identity_checks(), checks);
    // The next check by nobody in particular can't tell the poller's
    // registration of this file from one given up: it asks, and
    // registers afresh.
    let first = watch(&mut poller);
    assert!(first.is_socket(), "a socket has an identity: {first:?}");
    assert_eq!(crate::fd_query::identity_checks() - checks, 1);
    assert_eq!(registered(&poller) - made, 2);
    assert_eq!(watch(&mut poller), first, "the same socket: kept");
    assert_eq!(registered(&poller) - made, 2, "not registered again");
    // Another socket on the same number: the poller takes it as new, so
    // it is registered without a question, and the old registration is
    // given up without removing the fd from the poller by number.
    let mut peer_b = swap_socket(fd);
    let checks = crate::fd_query::identity_checks();
    assert_eq!(watch(&mut poller), Named::Unasked);
    assert_eq!(crate::fd_query::identity_checks(), checks, "no question");
    assert_eq!(poller.registrations(), 1);
    peer_b.write_all(b"x").unwrap();
    assert_reported_readable(&mut poller, &shared, fd, "the new socket's registration");
}

#[test]
fn a_file_back_on_its_old_number_is_registered_again() {
    let (mut poller, shared) = Poller::new().unwrap();
    let (a, mut peer_a) = UnixStream::pair().unwrap();
    let fd = a.as_raw_fd();
    // Kept open elsewhere while the number names another socket (as
    // `IO#reopen` to a dup and back does): the poller keeps its
    // registration of (number, a's file) under a token given up.
    let saved = a.try_clone().unwrap();
    watch_pending(&mut poller, fd);
    let _peer_b = swap_socket(fd);
    // Made for b's socket, then checked: it knows it names b's.
    watch_pending(&mut poller, fd);
    watch_pending(&mut poller, fd);
    assert!(poller.inner.fds[&fd].named.is_socket());
    // a's file, off the number, is not reported under it.
    peer_a.write_all(b"x").unwrap();
    let (seen, _) = turns_for(&mut poller, &shared, 3 * AUDIT_EVERY, |_| READABLE);
    assert!(
        seen.is_empty(),
        "a given-up registration reported: {seen:?}"
    );
    let mut byte = [0u8; 1];
    assert_eq!(std::io::Read::read(&mut &saved, &mut byte).unwrap(), 1);
    dup_onto(&saved, fd);
    // The poller refuses to add it (`EEXIST`): the check finds b's
    // registration does not name it, and replaces whatever the poller held
    // under that number and file.
    watch_pending(&mut poller, fd);
    peer_a.write_all(b"y").unwrap();
    assert_reported_readable(&mut poller, &shared, fd, "the file back on its number");
}

#[test]
fn a_pipe_is_registered_afresh_at_each_check() {
    let (mut poller, shared) = Poller::new().unwrap();
    let fds @ [rd, wr] = pipe();
    // Registered; then checked (the probe finds it registered, and a pipe
    // has no identity to keep it by); then replaced without a probe.
    let made = registered(&poller);
    for _ in 0..3 {
        watch_pending(&mut poller, rd);
    }
    assert_eq!(registered(&poller) - made, 3);
    assert_eq!(poller.inner.fds[&rd].named, Named::Other);
    write_byte(wr);
    assert_reported_readable(&mut poller, &shared, rd, "the pipe's last registration");
    drop(poller);
    close(fds);
}

#[test]
fn a_registration_outlives_a_regular_file_on_its_number() {
    let (mut poller, shared) = Poller::new().unwrap();
    let (a, mut peer_a) = UnixStream::pair().unwrap();
    let fd = a.as_raw_fd();
    let saved = a.try_clone().unwrap();
    // Registered, then checked: it knows it names a's socket.
    watch_pending(&mut poller, fd);
    watch_pending(&mut poller, fd);
    let file = std::fs::File::open("/proc/self/status").unwrap();
    dup_onto(&file, fd);
    assert!(matches!(
        poller.watch(fd, READABLE, false, false),
        Ok(None | Some(Watch::Ready(READABLE)))
    ));
    // a's file comes back to its number.
    dup_onto(&saved, fd);
    // epoll still holds a's file under the kept registration's token: the
    // check keeps it (given up, the fd could not be registered again).
    let made = registered(&poller);
    watch_pending(&mut poller, fd);
    assert_eq!(registered(&poller), made, "kept");
    peer_a.write_all(b"x").unwrap();
    assert_reported_readable(&mut poller, &shared, fd, "the kept registration");
}

#[test]
fn a_check_keeps_the_priority_another_waiter_needs() {
    let (mut poller, _shared) = Poller::new().unwrap();
    let (a, _peer) = UnixStream::pair().unwrap();
    let fd = a.as_raw_fd();
    // A fiber waits for urgent data: on io_uring the fd is then registered
    // with epoll for priority (elsewhere always).
    assert!(matches!(
        poller.watch(fd, PRIORITY, KNOWN, false),
        Ok(Some(Watch::Pending))
    ));
    assert!(poller.inner.fds[&fd].priority);
    // Another IO's wait on the fd checks the registration and, not knowing
    // its file, registers it afresh: with the priority still wanted.
    let made = registered(&poller);
    let io = CountedIo::new(IO, 7);
    assert!(io.watch(&mut poller, fd).is_ok());
    assert_eq!(registered(&poller) - made, 1, "registered afresh");
    assert!(poller.inner.fds[&fd].priority, "priority dropped");
}

#[test]
fn a_regular_file_is_always_ready() {
    let (mut poller, _shared) = Poller::new().unwrap();
    let file = std::fs::File::open("/proc/self/status").unwrap();
    // epoll refuses to register it; io_uring's driver asks the kernel
    // first, which says ready: either way the wait is over at once.
    assert!(matches!(
        poller.watch(file.as_raw_fd(), READABLE, false, false),
        Ok(None | Some(Watch::Ready(READABLE)))
    ));
}

/// An IO whose waits count the object ids asked of it (`trust.rs`).
struct CountedIo {
    addr: u64,
    id: u64,
    asked: std::cell::Cell<u32>,
}

impl CountedIo {
    fn new(addr: u64, id: u64) -> CountedIo {
        CountedIo {
            addr,
            id,
            asked: std::cell::Cell::new(0),
        }
    }

    /// Watch `fd` for reading as a wait by this IO.
    fn watch(&self, poller: &mut Poller, fd: RawFd) -> io::Result<Option<Watch>> {
        let object_id = || {
            self.asked.set(self.asked.get() + 1);
            self.id
        };
        let io = WaitingIo {
            addr: self.addr,
            object_id: &object_id,
        };
        poller.watch_by(fd, READABLE, false, false, Some(io))
    }
}

/// A unix stream pair, and a poller on which `io`'s waits trust the first
/// end's registration: it made it and checked it once.
fn trusted_pair(io: &CountedIo) -> (Poller, Shared, UnixStream, UnixStream) {
    let (mut poller, shared) = Poller::new().unwrap();
    let (a, peer) = UnixStream::pair().unwrap();
    for _ in 0..2 {
        assert!(matches!(
            io.watch(&mut poller, a.as_raw_fd()),
            Ok(Some(Watch::Pending))
        ));
    }
    (poller, shared, a, peer)
}

/// Make `fd`, which the caller owns, name `from`'s file behind the
/// registration's back (as `IO#reopen` does).
fn dup_onto(from: &impl AsRawFd, fd: RawFd) {
    // SAFETY: both are open descriptors; `fd`'s owner closes it later,
    // which then closes its reference to `from`'s file.
    assert_eq!(unsafe { libc::dup2(from.as_raw_fd(), fd) }, fd);
}

/// Make `fd` name a new socket: the returned end is its peer.
fn swap_socket(fd: RawFd) -> UnixStream {
    let (b, peer) = UnixStream::pair().unwrap();
    dup_onto(&b, fd);
    peer
}

/// A read wait on `fd` by nobody in particular, which must not be over.
fn watch_pending(poller: &mut Poller, fd: RawFd) {
    assert!(matches!(
        poller.watch(fd, READABLE, false, false),
        Ok(Some(Watch::Pending))
    ));
}

use std::io::Write as _;
use std::os::unix::net::UnixStream;

#[test]
fn an_io_gets_an_object_id_only_when_it_checks_a_registration_a_second_time() {
    let io = CountedIo::new(IO, 7);
    let (mut poller, _shared) = Poller::new().unwrap();
    let (a, _peer) = UnixStream::pair().unwrap();
    let checks = crate::fd_query::identity_checks();
    assert!(io.watch(&mut poller, a.as_raw_fd()).is_ok());
    assert_eq!(io.asked.get(), 0, "a wait that registers asks no id");
    assert_eq!(
        crate::fd_query::identity_checks(),
        checks,
        "a registration is made without a question"
    );
    assert!(io.watch(&mut poller, a.as_raw_fd()).is_ok());
    assert_eq!(io.asked.get(), 1, "the second check records the id");
    assert_eq!(crate::fd_query::identity_checks() - checks, 1);
    for _ in 0..10 {
        assert!(io.watch(&mut poller, a.as_raw_fd()).is_ok());
    }
    assert_eq!(
        crate::fd_query::identity_checks() - checks,
        1,
        "later waits by the same object ask the kernel nothing"
    );
    assert_eq!(io.asked.get(), 11, "each compares the id");
}

#[test]
fn a_new_object_at_a_trusted_address_checks_the_registration() {
    let io = CountedIo::new(IO, 7);
    let (mut poller, _shared, a, _peer) = trusted_pair(&io);
    let checks = crate::fd_query::identity_checks();
    assert!(io.watch(&mut poller, a.as_raw_fd()).is_ok());
    assert_eq!(crate::fd_query::identity_checks(), checks, "trusted");
    // Another object in the freed one's slot has another id.
    let newcomer = CountedIo::new(IO, 8);
    assert!(newcomer.watch(&mut poller, a.as_raw_fd()).is_ok());
    assert_eq!(crate::fd_query::identity_checks() - checks, 1, "checked");
}

/// Turn the driver without blocking (no Ruby VM to release a GVL) every
/// few milliseconds, with waiters wanting `wanted`, for `how_long` or until
/// an fd is reported: those reported, and when.
fn turns_for(
    poller: &mut Poller,
    shared: &Shared,
    how_long: Duration,
    wanted: impl Fn(RawFd) -> u8,
) -> (Vec<(RawFd, u8)>, Duration) {
    let start = std::time::Instant::now();
    let mut seen = Vec::new();
    while seen.is_empty() && start.elapsed() < how_long {
        std::thread::sleep(Duration::from_millis(2));
        poller
            .wait(shared, Some(Duration::ZERO), &wanted, |woken, ready| {
                seen.push((woken, ready))
            })
            .unwrap()
            .unwrap();
    }
    (seen, start.elapsed())
}

/// Turn the driver until an fd is reported (5 s at most): it must be
/// `fd` alone, readable (the driver reports urgent data with readability:
/// both bits may be set). `what` names the registration for the message.
fn assert_reported_readable(poller: &mut Poller, shared: &Shared, fd: RawFd, what: &str) {
    let (seen, _) = turns_for(poller, shared, Duration::from_secs(5), |_| READABLE);
    assert!(
        matches!(seen[..], [(woken, ready)] if woken == fd && ready & READABLE != 0),
        "{what} reports the fd readable: {seen:?}"
    );
}

#[test]
fn an_audit_finds_a_trusting_wait_on_a_swapped_fd_and_reports_it() {
    let io = CountedIo::new(IO, 7);
    let (mut poller, shared, a, _peer) = trusted_pair(&io);
    let fd = a.as_raw_fd();
    let mut new_peer = swap_socket(fd);
    assert!(matches!(
        io.watch(&mut poller, fd),
        Ok(Some(Watch::Pending))
    ));
    // While a trust awaits its audit, a blocking wait is cut short.
    let cap = poller.audit_timeout(None);
    assert!(cap.is_some_and(|c| c <= AUDIT_EVERY), "{cap:?}");
    new_peer.write_all(b"x").unwrap();
    let (seen, took) = turns_for(&mut poller, &shared, Duration::from_secs(5), |_| READABLE);
    assert!(
        matches!(seen[..], [(woken, ready)] if woken == fd && ready & READABLE != 0),
        "the waiter hears of the bytes: {seen:?}"
    );
    assert!(took < Duration::from_secs(1), "late: {took:?}");
    if poller.inner.ring {
        // A poll request names the fd by number: it saw the new socket
        // without an audit.
        return;
    }
    // On epoll the old socket's registration went with it: the first
    // audit keeps the trust (too young), the second checks it and
    // registers afresh.
    assert!(took >= AUDIT_EVERY, "not before the second audit: {took:?}");
    // So the next wait by the same IO checks the new registration (the
    // audit's own wait checked it for nobody).
    let checks = crate::fd_query::identity_checks();
    assert!(io.watch(&mut poller, fd).is_ok());
    assert_eq!(crate::fd_query::identity_checks() - checks, 1);
}

#[test]
fn an_audit_leaves_a_registration_that_still_names_its_socket() {
    let io = CountedIo::new(IO, 7);
    let (mut poller, shared, a, mut peer) = trusted_pair(&io);
    let fd = a.as_raw_fd();
    assert!(matches!(
        io.watch(&mut poller, fd),
        Ok(Some(Watch::Pending))
    ));
    let checks = crate::fd_query::identity_checks();
    // Four audits' time: nothing stale, nothing reported.
    let (seen, _) = turns_for(&mut poller, &shared, 4 * AUDIT_EVERY, |_| READABLE);
    assert!(seen.is_empty(), "{seen:?}");
    assert_eq!(
        crate::fd_query::identity_checks() - checks,
        1,
        "checked once, then no longer listed"
    );
    assert_eq!(poller.audit_timeout(None), None, "no audit to come");
    // The registration is still the one that sees the peer's bytes.
    peer.write_all(b"x").unwrap();
    assert_reported_readable(&mut poller, &shared, fd, "the audited registration");
}

#[test]
fn an_audit_skips_a_registration_whose_fd_moved_bytes_since_the_trust() {
    let io = CountedIo::new(IO, 7);
    let (mut poller, shared, a, _peer) = trusted_pair(&io);
    let fd = a.as_raw_fd();
    assert!(matches!(
        io.watch(&mut poller, fd),
        Ok(Some(Watch::Pending))
    ));
    // A hook read bytes after the wait: it ended well.
    poller.note_moved(fd, || true);
    let checks = crate::fd_query::identity_checks();
    let (seen, _) = turns_for(&mut poller, &shared, 4 * AUDIT_EVERY, |_| READABLE);
    assert!(seen.is_empty(), "{seen:?}");
    assert_eq!(crate::fd_query::identity_checks(), checks, "not checked");
}

#[test]
fn a_busy_connection_is_on_the_audit_list_once() {
    let io = CountedIo::new(IO, 7);
    let (mut poller, _shared, a, _peer) = trusted_pair(&io);
    let fd = a.as_raw_fd();
    // A keep-alive connection's requests: a trusting wait, bytes moved.
    for _ in 0..1_000 {
        assert!(io.watch(&mut poller, fd).is_ok());
        poller.note_moved(fd, || true);
    }
    assert_eq!(poller.audit.listed(), vec![fd]);
}

#[test]
fn a_registration_replaced_while_listed_is_listed_once() {
    let io = CountedIo::new(IO, 7);
    let (mut poller, shared, a, _peer) = trusted_pair(&io);
    let fd = a.as_raw_fd();
    assert!(io.watch(&mut poller, fd).is_ok());
    let mut peers = Vec::new();
    for round in 0..5 {
        // The connection closes and the next one gets its number: a new
        // IO registers afresh, checks, then trusts (and lists) it.
        peers.push(swap_socket(fd));
        let next = CountedIo::new(IO, 100 + round);
        for _ in 0..3 {
            assert!(next.watch(&mut poller, fd).is_ok());
        }
        // Busy across an audit: requests move bytes and trust again.
        for _ in 0..2 {
            poller.note_moved(fd, || true);
            assert!(next.watch(&mut poller, fd).is_ok());
            std::thread::sleep(AUDIT_EVERY / 2 + Duration::from_millis(2));
            turn(&mut poller, &shared);
        }
    }
    assert_eq!(poller.audit.listed(), vec![fd]);
}

#[test]
fn an_audit_drops_a_trust_whose_fd_nobody_waits_on_without_a_check() {
    let io = CountedIo::new(IO, 7);
    let (mut poller, shared, a, _peer) = trusted_pair(&io);
    let fd = a.as_raw_fd();
    assert!(io.watch(&mut poller, fd).is_ok());
    let checks = crate::fd_query::identity_checks();
    let (seen, _) = turns_for(&mut poller, &shared, 3 * AUDIT_EVERY, |_| 0);
    assert!(seen.is_empty(), "{seen:?}");
    assert_eq!(crate::fd_query::identity_checks(), checks, "not checked");
    assert!(poller.audit.listed().is_empty(), "dropped from the list");
}

#[test]
fn bytes_moved_while_a_fiber_waits_on_the_fd_are_no_progress() {
    let io = CountedIo::new(IO, 7);
    let (mut poller, shared, a, _peer) = trusted_pair(&io);
    let fd = a.as_raw_fd();
    assert!(io.watch(&mut poller, fd).is_ok());
    // Another fiber wrote while this one still waits: the audit comes.
    poller.note_moved(fd, || false);
    let checks = crate::fd_query::identity_checks();
    let _ = turns_for(&mut poller, &shared, 4 * AUDIT_EVERY, |_| READABLE);
    assert_eq!(crate::fd_query::identity_checks() - checks, 1, "audited");
}
