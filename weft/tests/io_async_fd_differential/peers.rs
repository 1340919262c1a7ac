//! The peers' side of the scripts and cases, plain syscalls shared by
//! both crates' expansions: fresh descriptor pairs (socketpair, TCP, UDP,
//! pipe), the peer's writes, reads, shutdowns and resets, one read(2) or
//! write(2) through an `AsyncFd`'s object, a counting waker, and the
//! time limit of a wait that must end.

use crate::scripts::Kind;
use std::fs::File;
use std::future::Future;
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
