//! The random scripts' interpreter (`scripts.rs` has the script, the
//! generator and the model), written once and expanded for both crates;
//! and the peers' side, plain syscalls shared by both.
//!
//! Every wait has a time limit (`LIMIT`): a wait that hangs on one crate
//! logs `TIMEOUT` and ends the script.

use crate::harness::{block_on, for_both, show, Log, Step};
use crate::scripts::{Fd, FdScript, Kind, Make, Op, Peer, Rd, Reg, Tri, Wr, CAP, G};
use std::fs::File;
use std::future::{poll_fn, Future};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

/// How long a wait that must end may take.
pub const LIMIT: Duration = Duration::from_secs(3);

/// A waker that counts its wake-ups.
#[derive(Default)]
pub struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Count {
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Polls `f` once with `count`'s waker.
pub fn poll_counting<F: Future + ?Sized>(f: Pin<&mut F>, count: &Arc<Count>) -> Poll<F::Output> {
    let waker = Waker::from(count.clone());
    f.poll(&mut Context::from_waker(&waker))
}

/// Whether `fd` has any of `events` within `ms` milliseconds (`poll(2)`).
pub fn wait_fd(fd: &impl AsRawFd, events: libc::c_short, ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for the length passed.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}

fn owned(fd: impl Into<OwnedFd>) -> File {
    File::from(fd.into())
}

/// A fresh pair: the end the `AsyncFd` gets and the peer's, both
/// non-blocking.
pub fn pair(kind: Kind) -> (File, File) {
    match kind {
        Kind::Unix => {
            let (a, b) = std::os::unix::net::UnixStream::pair().expect("pair");
            set_buf(&a, libc::SO_SNDBUF, 64 * 1024);
            a.set_nonblocking(true).expect("nonblocking");
            b.set_nonblocking(true).expect("nonblocking");
            (owned(a), owned(b))
        }
        Kind::Tcp => {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            let a = std::net::TcpStream::connect(l.local_addr().expect("addr")).expect("connect");
            let (b, _) = l.accept().expect("accept");
            // Small buffers, so that filling them (`Op::Fill`) is quick;
            // still far more than `CAP`.
            set_buf(&a, libc::SO_SNDBUF, 64 * 1024);
            set_buf(&b, libc::SO_RCVBUF, 64 * 1024);
            a.set_nonblocking(true).expect("nonblocking");
            b.set_nonblocking(true).expect("nonblocking");
            (owned(a), owned(b))
        }
        Kind::Udp => {
            let a = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
            let b = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
            a.connect(b.local_addr().expect("addr")).expect("connect");
            b.connect(a.local_addr().expect("addr")).expect("connect");
            a.set_nonblocking(true).expect("nonblocking");
            b.set_nonblocking(true).expect("nonblocking");
            (owned(a), owned(b))
        }
        Kind::Pipe => {
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for the two descriptors pipe2 writes.
            let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
            assert_eq!(r, 0, "pipe2");
            // SAFETY: pipe2 returned two open descriptors that nobody else
            // owns.
            unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
        }
    }
}

/// Sets a socket's buffer size option (`SO_SNDBUF` / `SO_RCVBUF`).
fn set_buf(fd: &impl AsRawFd, opt: libc::c_int, size: libc::c_int) {
    // SAFETY: a valid int, for the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0, "setsockopt");
}

/// `shutdown(2)` of `fd`'s writing side.
pub fn shutdown_write(fd: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: shutdown takes a descriptor and a constant, no memory.
    if unsafe { libc::shutdown(fd.as_raw_fd(), libc::SHUT_WR) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A zero linger: closing `fd` then resets the connection.
pub fn linger0(fd: &impl AsRawFd) {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid linger struct, for the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0, "SO_LINGER");
}

/// The peer writes all of `data` (one datagram on UDP).
pub fn peer_write(peer: &File, data: &[u8]) -> io::Result<()> {
    let mut at = 0;
    while at < data.len() {
        match (&*peer).write(&data[at..]) {
            Ok(n) => at += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                assert!(wait_fd(peer, libc::POLLOUT, 3000), "peer never writable");
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The peer reads `want` bytes (one datagram of up to `want` on UDP),
/// waiting for them; or, with `want == 0`, one read that does not wait
/// unless `eof` (then it waits for the end).
pub fn peer_read(peer: &File, want: usize, datagram: bool, eof: bool) -> io::Result<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = vec![0u8; want.max(1)];
    loop {
        let room = if datagram { want } else { want - got.len() };
        match (&*peer).read(&mut buf[..room.max(1)]) {
            Ok(0) => return Ok(got),
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                if datagram || got.len() == want {
                    return Ok(got);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && (want > 0 || eof) => {
                if !wait_fd(peer, libc::POLLIN, 3000) {
                    return Err(io::ErrorKind::TimedOut.into());
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// One read(2) through the object (a socket or a pipe).
pub fn rd(f: &File, buf: &mut [u8]) -> io::Result<usize> {
    (&*f).read(buf)
}

/// One write(2) through the object.
pub fn wr(f: &File, data: &[u8]) -> io::Result<usize> {
    (&*f).write(data)
}

/// The kind of an error, with the two ways a write to a gone peer fails
/// shown as one.
pub fn kind(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => "BrokenPipe|Reset".into(),
        k => format!("{k:?}"),
    }
}

/// A wait hung: the script ends.
pub struct Stop;

macro_rules! interp_group {
    () => {
        use k::io::unix::AsyncFd;
        use k::io::{Interest, Ready};

        type Afd = AsyncFd<File>;

        fn interest(reg: Reg) -> Interest {
            match reg {
                Reg::Read => Interest::READABLE,
                Reg::Write => Interest::WRITABLE,
                Reg::Both => Interest::READABLE | Interest::WRITABLE,
                Reg::BothError => Interest::READABLE | Interest::WRITABLE | Interest::ERROR,
                Reg::BothPriority => Interest::READABLE | Interest::WRITABLE | Interest::PRIORITY,
            }
        }

        /// Registers `file` as `how` says.
        #[allow(deprecated)] // Tokio 1.54 deprecates the safe constructors
        fn make(file: File, how: Make) -> io::Result<Afd> {
            let i = interest(how.reg());
            match how {
                Make::New => AsyncFd::new(file),
                Make::TryNew => AsyncFd::try_new(file).map_err(io::Error::from),
                // SAFETY: `file` owns its descriptor, which stays open
                // while the AsyncFd holds it.
                Make::Register => unsafe { AsyncFd::register(file) }.map_err(io::Error::from),
                Make::WithInterest(0, _) => AsyncFd::with_interest(file, i),
                Make::WithInterest(1, _) => {
                    AsyncFd::try_with_interest(file, i).map_err(io::Error::from)
                }
                // SAFETY: as above.
                Make::WithInterest(..) => unsafe { AsyncFd::register_with_interest(file, i) }
                    .map_err(io::Error::from),
            }
        }

        /// Awaits `$f` within the limit: the guard, or the op's result
        /// for a failed wait, or `Stop`.
        macro_rules! wait {
            ($f:expr) => {
                match k::time::timeout(LIMIT, $f).await {
                    Err(_) => return Err(Stop),
                    Ok(Err(e)) => return Ok(Some(Err(e))),
                    Ok(Ok(g)) => g,
                }
            };
        }

        /// `Some(result)` of one read, or `None` if it would block (the
        /// readiness was cleared).
        type Once = Result<Option<io::Result<usize>>, Stop>;

        fn sole(fd: &mut Arc<Afd>) -> &mut Afd {
            Arc::get_mut(fd).expect("no waiter holds the AsyncFd between ops")
        }

        /// One wait for readability and one read into `buf`, as `how`
        /// says; `seen`: the first guard's readiness.
        async fn read_once(fd: &mut Arc<Afd>, how: Rd, buf: &mut [u8], seen: &mut Option<Ready>) -> Once {
            let blocked = |r: &io::Result<usize>| {
                matches!(r, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            };
            Ok(match how {
                Rd::Guard => {
                    let mut g = wait!(fd.readable());
                    seen.get_or_insert(g.ready());
                    g.try_io(|f| rd(f.get_ref(), buf)).ok()
                }
                Rd::GuardManual => {
                    let mut g = wait!(fd.readable());
                    seen.get_or_insert(g.ready());
                    let r = rd(g.get_inner(), buf);
                    if blocked(&r) {
                        g.clear_ready();
                        None
                    } else {
                        Some(r)
                    }
                }
                Rd::MutGuard => {
                    let mut g = wait!(sole(fd).readable_mut());
                    seen.get_or_insert(g.ready());
                    g.try_io(|f| rd(f.get_ref(), buf)).ok()
                }
                Rd::Ready => {
                    let mut g = wait!(fd.ready(Interest::READABLE));
                    seen.get_or_insert(g.ready());
                    g.try_io(|f| rd(f.get_ref(), buf)).ok()
                }
                Rd::ReadyMut => {
                    let mut g = wait!(sole(fd).ready_mut(Interest::READABLE));
                    seen.get_or_insert(g.ready());
                    let r = rd(g.get_inner_mut(), buf);
                    if blocked(&r) {
                        g.clear_ready_matching(Ready::READABLE);
                        None
                    } else {
                        Some(r)
                    }
                }
                Rd::AsyncIo => Some(wait!(async {
                    fd.async_io(Interest::READABLE, |f| rd(f, buf)).await.map(Ok)
                })),
                Rd::AsyncIoMut => Some(wait!(async {
                    sole(fd)
                        .async_io_mut(Interest::READABLE, |f| rd(f, buf))
                        .await
                        .map(Ok)
                })),
                Rd::PollReady => {
                    let (ready, r) = wait!(poll_fn(|cx| {
                        let mut g = match fd.poll_read_ready(cx) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                            Poll::Ready(Ok(g)) => g,
                        };
                        let r = g.try_io(|f| rd(f.get_ref(), buf)).ok();
                        Poll::Ready(Ok((g.ready(), r)))
                    }));
                    seen.get_or_insert(ready);
                    r
                }
                Rd::PollReadyMut => {
                    let fd = sole(fd);
                    let (ready, r) = wait!(poll_fn(|cx| {
                        let mut g = match fd.poll_read_ready_mut(cx) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                            Poll::Ready(Ok(g)) => g,
                        };
                        let r = g.try_io(|f| rd(f.get_ref(), buf)).ok();
                        Poll::Ready(Ok((g.ready(), r)))
                    }));
                    seen.get_or_insert(ready);
                    r
                }
                Rd::TryIo => {
                    let g = wait!(fd.readable());
                    seen.get_or_insert(g.ready());
                    drop(g);
                    let r = fd.try_io(Interest::READABLE, |f| rd(f, buf));
                    if blocked(&r) {
                        None
                    } else {
                        Some(r)
                    }
                }
            })
        }

        /// One wait for writability and one write of `data`.
        async fn write_once(fd: &mut Arc<Afd>, how: Wr, data: &[u8], seen: &mut Option<Ready>) -> Once {
            let blocked = |r: &io::Result<usize>| {
                matches!(r, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            };
            Ok(match how {
                Wr::Guard => {
                    let mut g = wait!(fd.writable());
                    seen.get_or_insert(g.ready());
                    g.try_io(|f| wr(f.get_ref(), data)).ok()
                }
                Wr::MutGuard => {
                    let mut g = wait!(sole(fd).writable_mut());
                    seen.get_or_insert(g.ready());
                    g.try_io(|f| wr(f.get_ref(), data)).ok()
                }
                Wr::Ready => {
                    let mut g = wait!(fd.ready(Interest::WRITABLE));
                    seen.get_or_insert(g.ready());
                    let r = wr(g.get_inner(), data);
                    if blocked(&r) {
                        g.clear_ready_matching(Ready::WRITABLE);
                        None
                    } else {
                        Some(r)
                    }
                }
                Wr::AsyncIo => Some(wait!(async {
                    fd.async_io(Interest::WRITABLE, |f| wr(f, data)).await.map(Ok)
                })),
                Wr::AsyncIoMut => Some(wait!(async {
                    sole(fd)
                        .async_io_mut(Interest::WRITABLE, |f| wr(f, data))
                        .await
                        .map(Ok)
                })),
                Wr::PollReady => {
                    let (ready, r) = wait!(poll_fn(|cx| {
                        let mut g = match fd.poll_write_ready(cx) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                            Poll::Ready(Ok(g)) => g,
                        };
                        let r = g.try_io(|f| wr(f.get_ref(), data)).ok();
                        Poll::Ready(Ok((g.ready(), r)))
                    }));
                    seen.get_or_insert(ready);
                    r
                }
                Wr::PollReadyMut => {
                    let fd = sole(fd);
                    let (ready, r) = wait!(poll_fn(|cx| {
                        let mut g = match fd.poll_write_ready_mut(cx) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                            Poll::Ready(Ok(g)) => g,
                        };
                        let r = g.try_io(|f| wr(f.get_ref(), data)).ok();
                        Poll::Ready(Ok((g.ready(), r)))
                    }));
                    seen.get_or_insert(ready);
                    r
                }
                Wr::TryIo | Wr::TryIoMut => {
                    let g = wait!(fd.writable());
                    seen.get_or_insert(g.ready());
                    drop(g);
                    let r = if how == Wr::TryIo {
                        fd.try_io(Interest::WRITABLE, |f| wr(f, data))
                    } else {
                        sole(fd).try_io_mut(Interest::WRITABLE, |f| wr(f, data))
                    };
                    if blocked(&r) {
                        None
                    } else {
                        Some(r)
                    }
                }
            })
        }

        struct Slot {
            fd: Option<Arc<Afd>>,
            peer: Option<File>,
            make: Make,
        }

        struct I {
            slots: Vec<Slot>,
            m: Vec<Fd>,
            multi: bool,
        }

        /// `r` ("R" or "-") where the model is sure of `READABLE`'s state.
        fn bit(ready: Ready, sure: bool) -> &'static str {
            match (sure, ready.is_readable()) {
                (false, _) => "?",
                (true, true) => "R",
                (true, false) => "-",
            }
        }

        impl I {
            fn fd(&mut self, p: usize) -> &mut Arc<Afd> {
                self.slots[p].fd.as_mut().expect("present")
            }

            /// Whether the model is sure `READABLE` is not in the
            /// readiness (and cannot arrive from an older event).
            fn surely_clear(&self, p: usize) -> bool {
                !self.multi && self.m[p].r == Tri::Clear && !self.m[p].readable() && !self.m[p].hangup()
            }

            async fn op(&mut self, op: Op) -> Result<String, Stop> {
                let p = op.fd();
                let m = &mut self.m[p];
                let skip = Ok("skip".to_string());
                if m.err && m.kind == Kind::Udp && !matches!(op, Op::WaitError(_) | Op::Refs(_)) {
                    return skip;
                }
                match op {
                    Op::Fill(_, poll) => {
                        if !m.stream() || !m.reg.writes() || m.shut || !matches!(m.peer, Peer::Open | Peer::Shut) {
                            return skip;
                        }
                        let sure = m.kind == Kind::Unix && !self.multi;
                        // How much fits is the kernel's business (TCP's
                        // varies from run to run): the pattern goes on
                        // from where it was once the peer drained it all.
                        let mark = m.written[1];
                        let mut expect: Vec<u8> = m.outq.iter().flatten().copied().collect();
                        let fd = self.slots[p].fd.as_ref().expect("present");
                        let mut full = false;
                        for _ in 0..1000 {
                            let mut g = match k::time::timeout(LIMIT, fd.writable()).await {
                                Err(_) => return Err(Stop),
                                Ok(Err(e)) => return Ok(format!("Err({})", kind(&e))),
                                Ok(Ok(g)) => g,
                            };
                            let m = &mut self.m[p];
                            let data = m.pattern(1, 16 * 1024);
                            match g.try_io(|f| wr(f.get_ref(), &data)) {
                                Ok(Ok(n)) => {
                                    m.written[1] -= data.len() - n;
                                    expect.extend_from_slice(&data[..n]);
                                }
                                Ok(Err(e)) => return Ok(format!("Err({})", kind(&e))),
                                Err(_would_block) => {
                                    m.written[1] -= data.len();
                                    full = true;
                                    break;
                                }
                            }
                        }
                        if !full {
                            return Ok("never full".into());
                        }
                        let count = Arc::new(Count::default());
                        let pending = {
                            let f = std::pin::pin!(fd.writable());
                            poll_counting(f, &count).is_pending()
                        };
                        let peer = self.slots[p].peer.as_ref().expect("open").try_clone().expect("dup");
                        let want = expect.len();
                        let reader = std::thread::spawn(move || peer_read(&peer, want, false, false));
                        let again = if poll {
                            let w = k::time::timeout(LIMIT, poll_fn(|cx| fd.poll_write_ready(cx).map(|r| r.map(|g| g.ready().is_writable())))).await;
                            match w {
                                Err(_) => return Err(Stop),
                                Ok(r) => r.map_err(|e| kind(&e)),
                            }
                        } else {
                            match k::time::timeout(LIMIT, fd.writable()).await {
                                Err(_) => return Err(Stop),
                                Ok(r) => r.map(|g| g.ready().is_writable()).map_err(|e| kind(&e)),
                            }
                        };
                        let drained = reader.join().expect("reader").map(|b| b == expect);
                        let m = &mut self.m[p];
                        m.outq.clear();
                        m.w = false;
                        m.written[1] = mark;
                        let pending = if sure { format!("pending {pending}, ") } else { String::new() };
                        Ok(format!("full, {pending}writable again {again:?}, drained as written {:?}", drained.map_err(|e| kind(&e))))
                    }
                    Op::WaitError(_) => {
                        if !m.err {
                            return skip;
                        }
                        let udp = m.kind == Kind::Udp;
                        let fd = self.fd(p);
                        let e = match k::time::timeout(LIMIT, fd.ready(Interest::ERROR)).await {
                            Err(_) => return Err(Stop),
                            Ok(r) => format!("{:?}", r.map(|g| g.ready().is_error()).map_err(|e| kind(&e))),
                        };
                        if !udp {
                            return Ok(e);
                        }
                        // The refusal, read off the socket.
                        let r = rd(fd.get_ref(), &mut [0u8; 8]);
                        self.m[p].err = false;
                        Ok(format!("{e}, read {:?}", r.map_err(|e| kind(&e))))
                    }
                    Op::Urgent(_) => {
                        if m.kind != Kind::Tcp || m.peer != Peer::Open || m.reg != Reg::BothPriority {
                            return skip;
                        }
                        // Pending before the first urgent byte (where
                        // certain), ready once a guard showed PRIORITY.
                        let sure = (!self.multi && !m.hangup() && !m.rc && !m.urgent) || m.pri;
                        m.urgent = true;
                        m.read_edge();
                        let count = Arc::new(Count::default());
                        let fd = self.slots[p].fd.as_ref().expect("present");
                        let before = {
                            let f = std::pin::pin!(fd.ready(Interest::PRIORITY));
                            poll_counting(f, &count).is_pending()
                        };
                        let peer = self.slots[p].peer.as_ref().expect("open");
                        crate::cases::send_oob(peer);
                        let after = match k::time::timeout(LIMIT, fd.ready(Interest::PRIORITY)).await {
                            Err(_) => return Err(Stop),
                            Ok(r) => r.map(|g| g.ready().is_priority()).map_err(|e| kind(&e)),
                        };
                        if after == Ok(true) {
                            self.m[p].pri = true;
                        }
                        let before = if sure {
                            format!("pending before {before}, ")
                        } else {
                            String::new()
                        };
                        Ok(format!("{before}priority {after:?}"))
                    }
                    Op::PeerWrite(_, n) => {
                        let alive = matches!(m.peer, Peer::Open);
                        if !alive || Fd::queued(&m.inq) + n > CAP {
                            return skip;
                        }
                        let data = m.pattern(0, n);
                        let peer = self.slots[p].peer.as_ref().expect("open");
                        let r = peer_write(peer, &data);
                        if r.is_ok() {
                            let m = &mut self.m[p];
                            m.inq.push_back(data);
                            m.read_edge();
                        }
                        Ok(format!("{:?}", r.map_err(|e| kind(&e))))
                    }
                    Op::PeerRead(_, n) => {
                        if m.kind == Kind::Pipe || matches!(m.peer, Peer::Closed | Peer::Reset) {
                            return skip;
                        }
                        let dgram = m.kind == Kind::Udp;
                        let want = if dgram {
                            m.outq.front().map_or(0, |d| d.len().min(n))
                        } else {
                            Fd::queued(&m.outq).min(n)
                        };
                        let eof = want == 0 && m.shut && m.stream();
                        if want == 0 && !eof && m.kind == Kind::Tcp {
                            // Nothing on its way: a read would block (not
                            // compared on TCP, where nothing is certain
                            // about an ACK in flight; only the model moves).
                            return skip;
                        }
                        let peer = self.slots[p].peer.as_ref().expect("open");
                        let r = peer_read(peer, want, dgram, eof);
                        let m = &mut self.m[p];
                        if let Ok(b) = &r {
                            if dgram {
                                if want > 0 {
                                    m.outq.pop_front();
                                }
                            } else {
                                let mut left = b.len();
                                while left > 0 {
                                    let front = m.outq.front_mut().expect("model");
                                    let take = left.min(front.len());
                                    front.drain(..take);
                                    if front.is_empty() {
                                        m.outq.pop_front();
                                    }
                                    left -= take;
                                }
                            }
                        }
                        Ok(match r {
                            Ok(b) => format!("Ok({})", show(&b)),
                            Err(e) => format!("Err({})", kind(&e)),
                        })
                    }
                    Op::PeerShutdown(_) => {
                        if !m.stream() || m.peer != Peer::Open {
                            return skip;
                        }
                        m.peer = Peer::Shut;
                        m.read_edge();
                        let peer = self.slots[p].peer.as_ref().expect("open");
                        Ok(format!("{:?}", shutdown_write(peer).map_err(|e| kind(&e))))
                    }
                    Op::PeerClose(_) => {
                        if matches!(m.peer, Peer::Closed | Peer::Reset) {
                            return skip;
                        }
                        // Read what is on its way first, so the close is
                        // clean (not a reset).
                        let dgram = m.kind == Kind::Udp;
                        let mut drained = 0;
                        let want = Fd::queued(&m.outq);
                        if m.kind != Kind::Pipe && !dgram && want > 0 {
                            let peer = self.slots[p].peer.as_ref().expect("open");
                            match peer_read(peer, want, false, false) {
                                Ok(b) => drained = b.len(),
                                Err(e) => return Ok(format!("drain Err({})", kind(&e))),
                            }
                        }
                        let m = &mut self.m[p];
                        m.outq.clear();
                        m.peer = Peer::Closed;
                        m.read_edge();
                        self.slots[p].peer = None;
                        Ok(format!("drained {drained}"))
                    }
                    Op::PeerReset(_) => {
                        if m.kind != Kind::Tcp || !matches!(m.peer, Peer::Open | Peer::Shut) || !m.inq.is_empty() {
                            return skip;
                        }
                        m.peer = Peer::Reset;
                        m.err = true;
                        m.outq.clear();
                        m.read_edge();
                        let peer = self.slots[p].peer.take().expect("open");
                        linger0(&peer);
                        drop(peer);
                        Ok("reset".into())
                    }
                    Op::Shutdown(_) => {
                        if !m.stream() || m.shut || m.peer == Peer::Reset {
                            return skip;
                        }
                        m.shut = true;
                        let r = shutdown_write(self.fd(p).get_ref());
                        Ok(format!("{:?}", r.map_err(|e| kind(&e))))
                    }
                    Op::Read(_, how, n) => self.read(p, how, n).await,
                    Op::Write(_, how, n) => self.write(p, how, n).await,
                    Op::PollRead(_) => {
                        let m = &self.m[p];
                        let sure_pending = if m.reg.reads() {
                            self.surely_clear(p)
                        } else {
                            !self.multi && !m.hangup() && m.peer != Peer::Reset
                        };
                        let sure_ready = m.reg.reads() && m.r == Tri::Set;
                        let count = Arc::new(Count::default());
                        let fd = self.fd(p);
                        let mut f = std::pin::pin!(fd.readable());
                        let out = match poll_counting(f.as_mut(), &count) {
                            Poll::Ready(r) => format!("Ready({})", r.is_ok()),
                            Poll::Pending => "Pending".into(),
                        };
                        Ok(if sure_pending || sure_ready { out } else { "-".into() })
                    }
                    Op::WaitWake(_, n, thread) => self.wait_wake(p, n, thread).await,
                    Op::ReadyBoth(_, g) => {
                        if !m.reg.reads() || !m.reg.writes() {
                            return skip;
                        }
                        if m.peer == Peer::Reset || m.shut {
                            return skip;
                        }
                        let sure_r = m.r == Tri::Set || self.surely_clear(p);
                        let m = &self.m[p];
                        let quiet = m.r == Tri::Clear && !m.readable() && !m.hangup() && m.peer == Peer::Open;
                        let sure_w = m.w || (quiet && !self.multi);
                        let clear = g == G::ClearReadable && !m.readable();
                        let fd = self.fd(p);
                        let mut guard = match k::time::timeout(LIMIT, fd.ready(Interest::READABLE | Interest::WRITABLE)).await {
                            Err(_) => return Err(Stop),
                            Ok(Err(e)) => return Ok(format!("Err({})", kind(&e))),
                            Ok(Ok(g)) => g,
                        };
                        let ready = guard.ready();
                        let w = match (sure_w, ready.is_writable()) {
                            (false, _) => "?",
                            (true, true) => "W",
                            (true, false) => "-",
                        };
                        let out = format!("{}{w}", bit(ready, sure_r));
                        match g {
                            G::Drop => drop(guard),
                            G::Retain => guard.retain_ready(),
                            G::ClearReadable if clear => {
                                guard.clear_ready_matching(Ready::READABLE);
                                assert!(!guard.ready().is_readable(), "cleared from the guard");
                            }
                            G::ClearReadable => drop(guard),
                        }
                        let m = &mut self.m[p];
                        if sure_w && ready.is_writable() {
                            m.w = true;
                        }
                        if clear {
                            m.r = Tri::Clear;
                        } else if sure_r && ready.is_readable() {
                            m.r = Tri::Set;
                        }
                        Ok(out)
                    }
                    Op::ClearRead(_, how, mutable) => {
                        if !m.reg.reads() || m.readable() || m.peer == Peer::Reset {
                            return skip;
                        }
                        let sure = m.r == Tri::Set || self.surely_clear(p);
                        let count = Arc::new(Count::default());
                        let fd = self.fd(p);
                        let out = if mutable {
                            let fd = sole(fd);
                            let mut f = std::pin::pin!(fd.readable_mut());
                            match poll_counting(f.as_mut(), &count) {
                                Poll::Pending => "Pending".to_string(),
                                Poll::Ready(Err(e)) => format!("Err({})", kind(&e)),
                                Poll::Ready(Ok(mut g)) => match how {
                                    0 => {
                                        g.clear_ready();
                                        "cleared".into()
                                    }
                                    1 => {
                                        g.clear_ready_matching(Ready::READABLE);
                                        "cleared".into()
                                    }
                                    _ => format!("{:?}", g.try_io(|_| -> io::Result<()> {
                                        Err(io::ErrorKind::WouldBlock.into())
                                    }).is_err()),
                                },
                            }
                        } else {
                            let mut f = std::pin::pin!(fd.readable());
                            match poll_counting(f.as_mut(), &count) {
                                Poll::Pending => "Pending".to_string(),
                                Poll::Ready(Err(e)) => format!("Err({})", kind(&e)),
                                Poll::Ready(Ok(mut g)) => match how {
                                    0 => {
                                        g.clear_ready();
                                        "cleared".into()
                                    }
                                    1 => {
                                        g.clear_ready_matching(Ready::READABLE);
                                        "cleared".into()
                                    }
                                    _ => format!("{:?}", g.try_io(|_| -> io::Result<()> {
                                        Err(io::ErrorKind::WouldBlock.into())
                                    }).is_err()),
                                },
                            }
                        };
                        self.m[p].r = Tri::Clear;
                        Ok(if sure { out } else { "-".into() })
                    }
                    Op::SettleClosed(_) => {
                        if !m.reg.reads() || !m.eof() || m.peer == Peer::Reset {
                            return skip;
                        }
                        let fd = self.fd(p);
                        let mut seen = false;
                        for _ in 0..50 {
                            let mut g = match k::time::timeout(LIMIT, fd.readable()).await {
                                Err(_) => return Err(Stop),
                                Ok(Err(e)) => return Ok(format!("Err({})", kind(&e))),
                                Ok(Ok(g)) => g,
                            };
                            if g.ready().is_read_closed() {
                                seen = true;
                                break;
                            }
                            // READ_CLOSED has not come yet: the event that
                            // brings it is still to come on epoll, and on
                            // io_uring the next wait arms a poll that
                            // reports it.
                            g.clear_ready();
                        }
                        let m = &mut self.m[p];
                        m.rc = seen;
                        m.r = Tri::Unknown;
                        Ok(format!("read_closed {seen}"))
                    }
                    Op::Waiters(_, n) => {
                        if !m.reg.reads() || m.peer != Peer::Open || Fd::queued(&m.inq) + 1 > CAP {
                            return skip;
                        }
                        let fd = self.fd(p).clone();
                        let tasks: Vec<_> = (0..n)
                            .map(|_| {
                                let fd = fd.clone();
                                k::spawn(async move {
                                    match k::time::timeout(LIMIT, fd.readable()).await {
                                        Ok(Ok(g)) => g.ready().is_readable(),
                                        _ => false,
                                    }
                                })
                            })
                            .collect();
                        drop(fd);
                        k::task::yield_now().await;
                        let m = &mut self.m[p];
                        let data = m.pattern(0, 1);
                        let peer = self.slots[p].peer.as_ref().expect("open");
                        peer_write(peer, &data).expect("peer write");
                        let m = &mut self.m[p];
                        m.inq.push_back(data);
                        m.read_edge();
                        let mut woke = 0;
                        for t in tasks {
                            if t.await.unwrap_or(false) {
                                woke += 1;
                            }
                        }
                        self.m[p].r = Tri::Set;
                        Ok(format!("{woke} of {n} saw READABLE"))
                    }
                    Op::Rewrap(_) => {
                        let fd = self.slots[p].fd.take().expect("present");
                        let fd = Arc::into_inner(fd).expect("sole owner");
                        let raw = fd.as_raw_fd();
                        let file = fd.into_inner();
                        let same = file.as_raw_fd() == raw;
                        let made = make(file, self.slots[p].make);
                        let out = format!("same fd {same}, again {:?}", made.as_ref().map(|_| ()).map_err(|e| kind(e)));
                        match made {
                            Ok(fd) => self.slots[p].fd = Some(Arc::new(fd)),
                            Err(_) => return Err(Stop),
                        }
                        let m = &mut self.m[p];
                        m.r = Tri::Unknown;
                        m.w = false;
                        m.rc = false;
                        m.pri = false;
                        Ok(out)
                    }
                    Op::Refs(_) => {
                        let fd = sole(self.fd(p));
                        let raw = fd.as_raw_fd();
                        let a = fd.get_ref().as_raw_fd() == raw;
                        let b = fd.get_mut().as_raw_fd() == raw;
                        let c = std::os::fd::AsFd::as_fd(&*fd).as_raw_fd() == raw;
                        Ok(format!("{a} {b} {c}"))
                    }
                }
            }

            async fn read(&mut self, p: usize, how: Rd, n: usize) -> Result<String, Stop> {
                let m = &self.m[p];
                if !m.reg.reads() {
                    return Ok("skip".into());
                }
                let dgram = m.kind == Kind::Udp;
                let reset = m.peer == Peer::Reset && !m.reset_read;
                let want = if dgram {
                    m.inq.front().map_or(0, |d| d.len().min(n))
                } else {
                    Fd::queued(&m.inq).min(n)
                };
                let eof = m.eof() && Fd::queued(&m.inq) <= n;
                if want == 0 && !eof && !reset {
                    // Nothing to read: `try_io` says `WouldBlock` whether
                    // or not the readiness was stale, and either way
                    // leaves it clear.
                    let mut buf = vec![0u8; n];
                    let r = self.fd(p).try_io(Interest::READABLE, |f| rd(f, &mut buf));
                    self.m[p].r = Tri::Clear;
                    return Ok(match r {
                        Ok(k) => format!("Ok({k})"),
                        Err(e) => format!("Err({})", kind(&e)),
                    });
                }
                let sure_r = !self.m[p].hangup();
                let rc = self.m[p].rc;
                let mut got = Vec::new();
                let mut end = String::new();
                let mut seen = None;
                let mut buf = vec![0u8; n];
                for _ in 0..200 {
                    let room = if dgram { n } else { want - got.len() };
                    let fd = self.fd(p);
                    match read_once(fd, how, &mut buf[..room.max(1)], &mut seen).await? {
                        None => continue,
                        Some(Ok(0)) => {
                            end = "EOF".into();
                            break;
                        }
                        Some(Ok(k)) => {
                            got.extend_from_slice(&buf[..k]);
                            if dgram || got.len() == want {
                                break;
                            }
                        }
                        Some(Err(e)) => {
                            end = format!("Err({})", kind(&e));
                            break;
                        }
                    }
                }
                let m = &mut self.m[p];
                if end.starts_with("Err") && reset {
                    m.reset_read = true;
                    m.err = false;
                }
                if dgram {
                    if !got.is_empty() {
                        m.inq.pop_front();
                    }
                } else {
                    let mut left = got.len();
                    while left > 0 {
                        let front = m.inq.front_mut().expect("model");
                        let take = left.min(front.len());
                        front.drain(..take);
                        if front.is_empty() {
                            m.inq.pop_front();
                        }
                        left -= take;
                    }
                }
                m.r = Tri::Set;
                let ready = seen.map_or("".into(), |s: Ready| {
                    let rc = if rc { if s.is_read_closed() { " RC" } else { " no RC" } } else { "" };
                    format!(" [{}{rc}]", bit(s, sure_r))
                });
                Ok(format!("{} {end}{ready}", show(&got)))
            }

            async fn write(&mut self, p: usize, how: Wr, n: usize) -> Result<String, Stop> {
                let m = &mut self.m[p];
                if !m.reg.writes() {
                    return Ok("skip".into());
                }
                let gone = matches!(m.peer, Peer::Closed | Peer::Reset);
                // A datagram to a closed peer is sent, and refused after
                // (`err`): only with nothing queued, whose reads would
                // otherwise race the refusal.
                let refused = m.kind == Kind::Udp && m.peer == Peer::Closed && m.inq.is_empty();
                if (gone && m.kind != Kind::Unix && !refused) || m.peer == Peer::Reset || Fd::queued(&m.outq) + n > CAP {
                    return Ok("skip".into());
                }
                let sure_w = m.peer == Peer::Open;
                let data = m.pattern(1, n);
                let mut seen = None;
                let mut out = "gave up".to_string();
                let mut wrote = None;
                for _ in 0..200 {
                    let fd = self.fd(p);
                    match write_once(fd, how, &data, &mut seen).await? {
                        None => continue,
                        Some(Ok(k)) => {
                            out = format!("Ok({k})");
                            wrote = Some(k);
                            break;
                        }
                        Some(Err(e)) => {
                            out = format!("Err({})", kind(&e));
                            break;
                        }
                    }
                }
                let m = &mut self.m[p];
                if let Some(k) = wrote {
                    if refused {
                        m.err = true;
                    } else {
                        m.outq.push_back(data[..k].to_vec());
                    }
                }
                let ready = seen.map_or("".into(), |s: Ready| match (sure_w, s.is_writable()) {
                    (false, _) => "".to_string(),
                    (true, w) => format!(" [{}]", if w { "W" } else { "-" }),
                });
                if sure_w && seen.is_some_and(|s| s.is_writable()) {
                    m.w = true;
                }
                Ok(format!("{out}{ready}"))
            }

            async fn wait_wake(&mut self, p: usize, n: usize, thread: bool) -> Result<String, Stop> {
                let m = &self.m[p];
                if !m.reg.reads() || m.readable() || m.peer != Peer::Open || n > CAP {
                    return Ok("skip".into());
                }
                let sure = self.surely_clear(p);
                let m = &mut self.m[p];
                let data = m.pattern(0, n);
                m.inq.push_back(data.clone());
                m.read_edge();
                m.r = Tri::Set;
                let peer = self.slots[p].peer.as_ref().expect("open").try_clone().expect("dup");
                let count = Arc::new(Count::default());
                let fd = self.fd(p);
                let mut f = std::pin::pin!(fd.readable());
                let first = poll_counting(f.as_mut(), &count);
                let first_ready = first.is_ready();
                drop(first);
                if thread {
                    std::thread::spawn(move || peer_write(&peer, &data))
                        .join()
                        .expect("writer thread")
                        .expect("peer write");
                } else {
                    peer_write(&peer, &data).expect("peer write");
                }
                // Where the model cannot say whether the first poll is
                // pending, both outcomes log alike when all went well.
                let fine = "woken, or ready at once";
                if first_ready {
                    return Ok(if sure { "Ready at once" } else { fine }.into());
                }
                // The waker must be called; the runtime runs its drivers
                // while this task sleeps.
                let deadline = std::time::Instant::now() + LIMIT;
                while count.get() == 0 && std::time::Instant::now() < deadline {
                    k::time::sleep(Duration::from_millis(1)).await;
                }
                let woken = count.get() > 0;
                let again = match poll_counting(f.as_mut(), &count) {
                    Poll::Ready(Ok(g)) => if g.ready().is_readable() { "R" } else { "no R" },
                    Poll::Ready(Err(_)) => "Err",
                    Poll::Pending => "Pending",
                };
                if !sure && woken && again == "R" {
                    return Ok(fine.into());
                }
                let first = if sure { "Pending, " } else { "" };
                Ok(format!("{first}woken {woken}, then {again}"))
            }
        }

        pub fn run(s: &FdScript) -> Vec<Step> {
            let mut log = Log::default();
            block_on!(s.multi, async {
                let mut i = I {
                    slots: Vec::new(),
                    m: Vec::new(),
                    multi: s.multi,
                };
                for &(kind, how) in &s.fds {
                    let (ours, peer) = pair(kind);
                    let made = make(ours, how);
                    log.push(("make", kind, how), format!("{:?}", made.as_ref().map(|_| ()).map_err(kind_of)));
                    let Ok(fd) = made else { return };
                    i.slots.push(Slot {
                        fd: Some(Arc::new(fd)),
                        peer: Some(peer),
                        make: how,
                    });
                    i.m.push(Fd::new(kind, how.reg()));
                }
                for &op in &s.ops {
                    match i.op(op).await {
                        Ok(out) => log.push(op, out),
                        Err(Stop) => {
                            log.push(op, "TIMEOUT");
                            return;
                        }
                    }
                }
            });
            log.steps
        }

        fn kind_of(e: &io::Error) -> String {
            kind(e)
        }
    };
}

for_both!(interp_group);
