//! `PollEvented`: a mio source plus its registration, with the read/write
//! loops every socket type shares.
//!
//! Owns: the mio source (until drop or `into_inner`) and its
//! [`Registration`]. Invariant: the source has its registration for as
//! long as this value holds it (in the poller from the start, or, a
//! ring-backed stream, once a readiness operation asks:
//! `runtime/io/lazy_interest.rs`), and leaves the poller before it is
//! closed or handed back, so the driver never sees events for a closed
//! descriptor.
//!
//! Edge-triggered epoll reports an edge once. A read that returns fewer
//! bytes than asked drained the socket, so the readiness is cleared right
//! there, saving the `WouldBlock` syscall the next read would make (the same
//! holds for a short write, plain or vectored). That is only done for stream
//! sockets, where a short read really means "drained"; one loop
//! (`poll_stream`) does it for every stream operation.
//!
//! With the io_uring driver, a stream socket made with
//! [`PollEvented::new_stream`] reads through the ring instead
//! (`runtime/io/uring/recv.rs`): `poll_read_uninit` takes what a receive
//! brought. The readiness-based reads (`try_read`, `peek`, ...) call
//! [`settle_read`](PollEvented::settle_read) first and read any
//! [leftover](PollEvented::read_leftover) bytes before the socket's, so
//! bytes stay in order whichever way a program reads. The receive in
//! flight is abandoned before the socket is closed (drop) or handed back
//! (`into_inner`, which settles: leftover bytes are then lost, so hand a
//! stream back only between reads).
//!
//! Writes on such a stream copy into a send through the ring and return
//! at once (`runtime/io/uring/send.rs` says what that changes: errors come
//! on the next operation, `poll_flush` does not wait, `poll_shutdown`
//! does). Readiness-based writes see `WouldBlock` while a send is in
//! flight, and `writable()` waits for it. A dropped stream's send still
//! goes out, finished by the ring.
//!
//! Only a worker reads and writes such a stream through the ring. Off a
//! worker (a multi_thread runtime's `block_on`, the blocking pool, another
//! runtime's thread) it reads and writes on readiness, as on the epoll
//! driver, whenever nothing of the ring's is pending: such a thread has no
//! ring of its own, and the shared ring is reaped by a worker, which then
//! wakes the caller, two thread hand-offs per step where readiness needs
//! one (BENCHMARKS.md, "One exchange at a time on io_uring"). A receive
//! or send already in flight (the stream came from a task) is finished on
//! the ring first, so bytes stay in order.

use crate::runtime::io::ready::{Interest, Ready};
use crate::runtime::io::registration::Registration;
use crate::runtime::io::scheduled_io::Direction;
use crate::runtime::io::uring::{RingRead, Rings, UringRead, UringWrite};
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::ops::Deref;
use std::os::fd::AsRawFd;
use std::task::{ready, Context, Poll};

pub(crate) struct PollEvented<E: mio::event::Source> {
    io: Option<E>,
    registration: Registration,
    /// Reads and writes through io_uring (a stream socket on a runtime
    /// with rings). Boxed: most resources have none, and stay small.
    uring: Option<Box<UringStream>>,
}

struct UringStream {
    read: UringRead,
    write: UringWrite,
    /// The socket's descriptor, for the ring's operations.
    fd: std::os::fd::RawFd,
    /// `poll_shutdown` shut the write direction down: later writes go
    /// straight to the socket, which fails them at once (`EPIPE`, or the
    /// socket's error) as it does for Tokio, instead of queueing a send
    /// whose error would only show on the next operation.
    write_shut: std::sync::atomic::AtomicBool,
    /// The shutdown was handed to the ring with a send still in flight
    /// (it shuts the direction down after the send's last byte): until
    /// then the socket itself would still take a write, so writes fail
    /// here with `EPIPE`, as after a shutdown.
    shut_after_send: std::sync::atomic::AtomicBool,
    /// A TCP socket: its pending error (a reset) goes to the first read
    /// or write, where a Unix stream's goes to reads only (the kernel's
    /// `unix_stream_sendmsg` does not look at it).
    tcp: bool,
}

/// The most one read(2)/write(2) moves on Linux (`MAX_RW_COUNT`), and the
/// most buffers std hands one writev(2) (`IOV_MAX`). A transfer shorter than
/// what the call could take means the socket buffer ran dry or full, so
/// readiness is cleared; one shorter only because of these caps does not,
/// or the next call would wait for an edge that never comes.
const MAX_RW_COUNT: usize = 0x7fff_f000;
const IOV_MAX: usize = 1024;

impl<E: mio::event::Source> PollEvented<E> {
    /// Register for `interest` on the current runtime.
    ///
    /// # Panics
    /// Outside a runtime, or on a runtime without the I/O driver.
    #[track_caller]
    pub(crate) fn new_with_interest(mut io: E, interest: Interest) -> io::Result<Self> {
        let registration = Registration::new(&mut io, interest)?;
        Ok(PollEvented {
            io: Some(io),
            registration,
            uring: None,
        })
    }

    /// A stream socket (TCP, Unix): registered for reads and writes; when
    /// the runtime's driver has rings, reading and writing through them
    /// and out of the poller until a readiness-based operation needs it
    /// (`runtime/io/lazy_interest.rs`).
    #[track_caller]
    pub(crate) fn new_stream(mut io: E) -> io::Result<Self>
    where
        E: AsRawFd + 'static,
    {
        let driver = crate::runtime::io::registration::current_driver();
        if driver.io().is_none_or(|io| io.rings().is_none()) {
            let both = Interest::READABLE | Interest::WRITABLE;
            let registration = Registration::new_with(driver, &mut io, both)?;
            return Ok(PollEvented {
                io: Some(io),
                registration,
                uring: None,
            });
        }
        let registration = Registration::new_unpolled(driver, io.as_raw_fd())?;
        let uring = Box::new(UringStream {
            read: UringRead::default(),
            write: UringWrite::default(),
            fd: io.as_raw_fd(),
            write_shut: std::sync::atomic::AtomicBool::new(false),
            shut_after_send: std::sync::atomic::AtomicBool::new(false),
            tcp: std::any::TypeId::of::<E>() == std::any::TypeId::of::<mio::net::TcpStream>(),
        });
        Ok(PollEvented {
            io: Some(io),
            registration,
            uring: Some(uring),
        })
    }

    /// A stream a listener accepted: [`new_stream`](Self::new_stream),
    /// assumed readable and writable from the start, as Tokio (1.54) does,
    /// so its first read and write try the socket instead of waiting for
    /// the poller's first event (a client usually sent its request before
    /// the server accepted). An assumption that turns out wrong is cleared
    /// by the operation that would block, as a stale edge is.
    #[track_caller]
    pub(crate) fn new_accepted_stream(io: E) -> io::Result<Self>
    where
        E: AsRawFd + 'static,
    {
        let stream = Self::new_stream(io)?;
        stream
            .registration
            .assume_ready(Ready::READABLE | Ready::WRITABLE);
        Ok(stream)
    }

    /// Take the resource as writable before the poller's first event says
    /// so (one end of a fresh pair, as Tokio 1.54 does): it can send at
    /// once. An assumption that turns out wrong is cleared by the write
    /// that would block.
    pub(crate) fn assume_writable(&self) {
        self.registration.assume_ready(Ready::WRITABLE);
    }

    /// A datagram socket (UDP, Unix): registered for reads and writes, on
    /// both drivers. Its receives and sends are readiness-based on the
    /// io_uring driver too: a receive in flight on a ring held a killed
    /// process's socket (and port) until the kernel's asynchronous
    /// teardown of the ring, and it cost no less CPU than `recvmsg(2)` on
    /// readiness (BENCHMARKS.md, "io_uring driver").
    #[track_caller]
    pub(crate) fn new_datagram(io: E) -> io::Result<Self> {
        Self::new_with_interest(io, Interest::READABLE | Interest::WRITABLE)
    }

    /// Read readiness for a `poll_read_ready`/`poll_recv_ready`: ready at
    /// once if a ring receive brought bytes nobody took.
    pub(crate) fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.ring_took_bytes() {
            return Poll::Ready(Ok(()));
        }
        self.registration
            .poll_ready_or(cx, Direction::Read, || self.ring_took_bytes())
            .map_ok(drop)
    }

    /// End a ring receive in flight, and say whether that (or an earlier
    /// one) left bytes, which make the stream readable now. Called before
    /// a read wait, and again once it registered and found no readiness
    /// (`uring/recv.rs`, "Readiness waiters"): no receive can start after
    /// that while the waiter stays registered.
    pub(crate) fn ring_took_bytes(&self) -> bool {
        if self.uring.is_none() {
            return false;
        }
        self.settle_read();
        self.has_leftover()
    }

    /// Wait for `interest` in the readiness waiter list; a ring-backed
    /// stream's leftover bytes count as readable ([`ring_took_bytes`]
    /// once registered). The caller settled first.
    ///
    /// [`ring_took_bytes`]: Self::ring_took_bytes
    pub(crate) async fn readiness(
        &self,
        interest: Interest,
    ) -> io::Result<crate::runtime::io::scheduled_io::ReadyEvent> {
        self.registration
            .readiness_or(interest, || {
                interest.is_readable() && self.ring_took_bytes()
            })
            .await
    }

    fn ring_io(&self) -> Option<(&UringStream, &Rings)> {
        Some((self.uring.as_deref()?, self.registration.rings()?))
    }

    /// `AsyncWrite::poll_shutdown` of a stream: the ring's sends first, so
    /// the peer's end-of-stream comes after every byte written. A send
    /// still in flight (the peer is not reading yet) is not waited for:
    /// the ring shuts the direction down after its last byte, as the
    /// kernel sends a socket's buffered bytes before a shutdown's FIN, and
    /// the shutdown returns at once, as Tokio's does. (Waiting deadlocked a
    /// program whose peer reads only after it sees our end of stream.)
    pub(crate) fn poll_shutdown_write(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>
    where
        E: AsRawFd,
    {
        if let Some((uring, rings)) = self.ring_io() {
            // (A runtime that is gone has no ring to hand it to: the wait
            // below reports the shutdown error.) A send the socket can take
            // ends in its submission, made now: the usual case (a response
            // just written, then the shutdown), which then needs neither
            // the hand-off's duplicate descriptor nor another poll.
            let gone = self.registration.io_handle().is_shutdown();
            if !gone && !uring.write.settle_now(rings) && self.shutdown_write_after_sends() {
                use std::sync::atomic::Ordering::Relaxed;
                uring.shut_after_send.store(true, Relaxed);
                uring.write_shut.store(true, Relaxed);
                return Poll::Ready(Ok(()));
            }
        }
        ready!(self.poll_writes_drained(cx));
        ready!(self.poll_flush())?;
        shutdown_fd(self.io().as_raw_fd())?;
        if let Some(uring) = &self.uring {
            uring
                .write_shut
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Poll::Ready(Ok(()))
    }

    /// A ring-backed stream: the socket error (a reset) a ring receive
    /// took, which a write reports as the socket would have (recv.rs).
    pub(crate) fn take_stream_error(&self) -> Option<io::Error> {
        let (uring, rings) = self.ring_io().filter(|(uring, _)| uring.tcp)?;
        uring.read.take_error(rings)
    }

    /// A readiness-based write on a ring-backed stream failed with `err`:
    /// `EPIPE` there can mean a receive in flight took the socket's reset
    /// (which the kernel would have handed to this write): end that
    /// receive, and report its error instead if it had one.
    pub(crate) fn write_error(&self, err: io::Error) -> io::Error {
        let Some((uring, rings)) = self.ring_io() else {
            return err;
        };
        if !uring.tcp || err.raw_os_error() != Some(libc::EPIPE) {
            return err;
        }
        uring.read.settle(rings);
        uring.read.take_error(rings).unwrap_or(err)
    }

    /// A write after a shutdown the ring still owes (`shut_after_send`):
    /// what the socket will say once the ring has shut it down.
    fn shut_after_send_error(&self) -> Option<io::Error> {
        let deferred = self.uring.as_ref()?;
        deferred
            .shut_after_send
            .load(std::sync::atomic::Ordering::Relaxed)
            .then(|| io::Error::from_raw_os_error(libc::EPIPE))
    }

    /// The write direction was shut down (ring-backed streams only know).
    fn write_shut(&self) -> bool {
        self.uring
            .as_ref()
            .is_some_and(|u| u.write_shut.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Shut the write direction down now, or (a ring send in flight, from
    /// a dropped owned write half) have the ring do it after the send.
    pub(crate) fn shutdown_write_now(&self) -> io::Result<()>
    where
        E: AsRawFd,
    {
        if self.shutdown_write_after_sends() {
            return Ok(());
        }
        shutdown_fd(self.io().as_raw_fd())
    }

    /// Before a readiness-based read: end a stream's receive in flight
    /// through the ring, keeping what it brought for
    /// [`read_leftover`](Self::read_leftover).
    pub(crate) fn settle_read(&self) {
        if let Some((stream, rings)) = self.ring_io() {
            stream.read.settle(rings);
        }
    }

    /// Bytes a ring receive brought that no reader took yet: handed to `f`,
    /// which returns how many it took (`consume`) or only looks; or the
    /// error such a receive ended with. `None` when there are neither
    /// (read the socket).
    pub(crate) fn read_leftover(
        &self,
        consume: bool,
        f: impl FnOnce(&[u8]) -> usize,
    ) -> Option<io::Result<usize>> {
        self.uring.as_ref()?.read.with_leftover(consume, f)
    }

    /// Whether leftover bytes a ring receive brought wait (the socket
    /// counts as readable).
    pub(crate) fn has_leftover(&self) -> bool {
        self.uring.as_ref().is_some_and(|u| u.read.has_leftover())
    }

    /// Before the socket closes (or is handed back): give up the receive
    /// in flight and let the send in flight finish on its own.
    fn abandon_ring_ops(&self) {
        if let Some((uring, rings)) = self.ring_io() {
            uring.read.abandon(rings);
            let _ = uring.write.abandon(rings, uring.fd, false);
        }
    }

    /// Whether a readiness-based write may go to the socket now (no ring
    /// send in flight, which would then be overtaken).
    pub(crate) fn writes_idle(&self) -> bool {
        self.ring_io()
            .is_none_or(|(uring, rings)| uring.write.is_idle(rings))
    }

    /// `AsyncWrite::poll_flush`: nothing to wait for; a ring send's error
    /// is reported here if one is known.
    pub(crate) fn poll_flush(&self) -> Poll<io::Result<()>> {
        match self.ring_io() {
            Some((uring, rings)) => uring.write.poll_flush(rings),
            None => Poll::Ready(Ok(())),
        }
    }

    /// Wait until the ring has sent everything written (before a shutdown,
    /// or a readiness wait for writability); a send's error is left for
    /// the next write, flush or shutdown.
    pub(crate) fn poll_writes_drained(&self, cx: &mut Context<'_>) -> Poll<()> {
        let Some((uring, rings)) = self.ring_io() else {
            return Poll::Ready(());
        };
        let io = self.registration.io_handle();
        uring.write.poll_drained(
            rings,
            io.current_ring(rings),
            io.is_shutdown(),
            uring.fd,
            cx,
        )
    }

    /// Shut the write direction down without waiting (an owned write half
    /// dropped): if a ring send is in flight, the ring does it after the
    /// send's last byte.
    /// Returns false when nothing was in flight: the caller shuts down.
    fn shutdown_write_after_sends(&self) -> bool {
        self.ring_io()
            .is_some_and(|(uring, rings)| uring.write.abandon(rings, uring.fd, true))
    }

    pub(crate) fn registration(&self) -> &Registration {
        &self.registration
    }

    /// Deregister and hand the source back.
    pub(crate) fn into_inner(mut self) -> io::Result<E> {
        self.settle_read();
        self.abandon_ring_ops();
        let mut io = self.io.take().expect("source present until drop");
        self.registration.deregister(&mut io)?;
        Ok(io)
    }

    /// Read into uninitialized memory (stream semantics, as `poll_read`),
    /// with `read(2)` writing through a raw pointer: no `&mut [u8]` over
    /// uninitialized bytes is ever made, so callers with uninitialized
    /// buffers (hyper's, Tokio's `ReadBuf`) need not zero them first.
    pub(crate) fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>>
    where
        E: AsRawFd,
    {
        let fd = self.io().as_raw_fd();
        if let Some((uring, rings)) = self.ring_io() {
            let restore = ready!(crate::coop::poll_proceed(cx));
            if let Some(read) = self.read_assumed_ready(uring, fd, buf) {
                if read.is_ok() {
                    restore.made_progress();
                }
                return Poll::Ready(read);
            }
            let io = self.registration.io_handle();
            let ring = io.current_ring(rings);
            let readiness_waited = || self.registration.has_read_waiters();
            let read = if off_worker(ring) && uring.read.is_idle() {
                // Off a worker: on readiness (module doc).
                RingRead::OnReadiness
            } else {
                uring
                    .read
                    .poll_read(rings, ring, io.is_shutdown(), fd, cx, buf, readiness_waited)
            };
            match read {
                RingRead::Read { n, more } => {
                    restore.made_progress();
                    // A receive that filled all it asked for left the
                    // socket readable, most likely: the next read takes
                    // the bytes straight from the socket into its own
                    // buffer (`read_assumed_ready`), with no ring op and
                    // no copy, until a short read drains it. A bulk
                    // transfer took 40% longer with every read on the
                    // ring (weft-bench's bulk_transfer).
                    if more {
                        self.registration.assume_ready(Ready::READABLE);
                    }
                    return Poll::Ready(Ok(n));
                }
                RingRead::Failed(e) => return Poll::Ready(Err(e)),
                RingRead::Pending => return Poll::Pending,
                // Read on readiness below, which spends the budget itself.
                RingRead::OnReadiness => drop(restore),
            }
        }
        let len = buf.len().min(MAX_RW_COUNT);
        let ptr = buf.as_mut_ptr().cast::<libc::c_void>();
        self.poll_stream(cx, Direction::Read, len, || {
            // SAFETY: `ptr` points to `len` writable bytes that we borrow
            // exclusively for this call; read(2) writes at most `len` bytes
            // there and reports how many, and `fd` stays open while `self`
            // is borrowed.
            let n = unsafe { libc::read(fd, ptr, len) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n as usize)
            }
        })
    }

    /// A ring-backed stream's read while its readiness says readable (an
    /// accepted stream's assumed readiness, or an edge kept from a
    /// readiness wait) and nothing of the ring's is pending (no receive in
    /// flight, no bytes or error one brought): `read(2)` the socket now,
    /// as the epoll driver would, instead of a ring receive and a poll of
    /// the task for its completion. `None`: it would block (the readiness
    /// is cleared), or the ring has to be asked; read through the ring.
    fn read_assumed_ready(
        &self,
        uring: &UringStream,
        fd: std::os::fd::RawFd,
        buf: &mut [MaybeUninit<u8>],
    ) -> Option<io::Result<usize>> {
        let event = self.registration.ready_now(Interest::READABLE);
        if !event.ready.is_readable() || buf.is_empty() || !uring.read.is_idle() {
            return None;
        }
        let len = buf.len().min(MAX_RW_COUNT);
        // SAFETY: `buf` is `len` (or more) writable bytes we borrow
        // exclusively for this call; read(2) writes at most `len` of them
        // and reports how many, and `fd` stays open while `self` is
        // borrowed.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast::<libc::c_void>(), len) };
        if n < 0 {
            let err = io::Error::last_os_error();
            return match err.kind() {
                io::ErrorKind::WouldBlock => {
                    self.registration.clear_readiness(event);
                    None
                }
                io::ErrorKind::Interrupted => None,
                _ => Some(Err(err)),
            };
        }
        let n = n as usize;
        // A short read drained the socket: the next read waits (on the
        // ring). A full one leaves it readable, so draining goes on here.
        if n > 0 && n < len {
            self.registration.clear_readiness(event);
        }
        Some(Ok(n))
    }

    /// The loop every stream read and write shares: wait for readiness in
    /// `direction`, run `op` over `len` bytes; a short transfer drained the
    /// socket (or filled its buffer), so clear the readiness right away.
    fn poll_stream(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        len: usize,
        mut op: impl FnMut() -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        loop {
            let ev = ready!(self.registration.poll_ready(cx, direction))?;
            match op() {
                Ok(n) => {
                    if n > 0 && n < len {
                        self.registration.clear_readiness(ev);
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.registration.clear_readiness(ev);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    pub(crate) fn poll_write<'a>(
        &'a self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>>
    where
        &'a E: Write,
    {
        if self.ring_io().is_some() {
            if let Some(e) = self.take_stream_error() {
                return Poll::Ready(Err(e));
            }
            if self.write_shut() {
                if let Some(e) = self.shut_after_send_error() {
                    return Poll::Ready(Err(e));
                }
                // Fails at once: the kernel never sends after SHUT_WR.
                return Poll::Ready((&mut self.io()).write(buf).map_err(|e| self.write_error(e)));
            }
            if let Some(polled) = self.poll_ring_write(cx, &[io::IoSlice::new(buf)]) {
                return polled;
            }
        }
        let len = buf.len().min(MAX_RW_COUNT);
        self.poll_stream(cx, Direction::Write, len, || (&mut self.io()).write(buf))
            .map_err(|e| self.write_error(e))
    }

    pub(crate) fn poll_write_vectored<'a>(
        &'a self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>>
    where
        &'a E: Write,
    {
        if self.ring_io().is_some() {
            if let Some(e) = self.take_stream_error() {
                return Poll::Ready(Err(e));
            }
            if self.write_shut() {
                if let Some(e) = self.shut_after_send_error() {
                    return Poll::Ready(Err(e));
                }
                // Fails at once: the kernel never sends after SHUT_WR.
                return Poll::Ready(
                    (&mut self.io())
                        .write_vectored(bufs)
                        .map_err(|e| self.write_error(e)),
                );
            }
            if let Some(polled) = self.poll_ring_write(cx, bufs) {
                return polled;
            }
        }
        // std's `write_vectored` passes at most IOV_MAX buffers to writev(2):
        // only those count towards "the write came back short".
        let len = bufs
            .iter()
            .take(IOV_MAX)
            .fold(0usize, |sum, b| sum.saturating_add(b.len()))
            .min(MAX_RW_COUNT);
        self.poll_stream(cx, Direction::Write, len, || {
            (&mut self.io()).write_vectored(bufs)
        })
        .map_err(|e| self.write_error(e))
    }

    /// A write through the ring (send.rs), spending budget like the
    /// readiness path; `None` off a worker with no send in flight: the
    /// caller writes on readiness (module doc).
    fn poll_ring_write(
        &self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Option<Poll<io::Result<usize>>> {
        let (uring, rings) = self.ring_io().expect("checked by the caller");
        let io = self.registration.io_handle();
        let ring = io.current_ring(rings);
        if off_worker(ring) && uring.write.is_idle_and_clean(rings) {
            return None;
        }
        let restore = match crate::coop::poll_proceed(cx) {
            Poll::Ready(restore) => restore,
            Poll::Pending => return Some(Poll::Pending),
        };
        let fd = uring.fd;
        let polled = uring
            .write
            .poll_write(rings, ring, io.is_shutdown(), fd, cx, bufs);
        if matches!(polled, Poll::Ready(Ok(_))) {
            restore.made_progress();
        }
        Some(polled)
    }

    fn io(&self) -> &E {
        self.io.as_ref().expect("source present until drop")
    }
}

/// Whether the caller is off a worker: `ring` (`Handle::current_ring`'s
/// answer) is the shared ring, which the caller does not own. A
/// ring-backed stream then reads and writes on readiness, as on the epoll
/// driver, whenever nothing of the ring's is pending (module doc).
fn off_worker(ring: (usize, bool)) -> bool {
    !ring.1
}

/// `shutdown(fd, SHUT_WR)`, with "not connected" (already shut down, or
/// the peer is gone) counted as success: the write side is closed either
/// way.
fn shutdown_fd(fd: std::os::fd::RawFd) -> io::Result<()> {
    // SAFETY: `fd` is an open socket its resource owns.
    if unsafe { libc::shutdown(fd, libc::SHUT_WR) } < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::NotConnected {
            return Err(e);
        }
    }
    Ok(())
}

impl<E: mio::event::Source> Deref for PollEvented<E> {
    type Target = E;
    fn deref(&self) -> &E {
        self.io()
    }
}

impl<E: mio::event::Source> Drop for PollEvented<E> {
    fn drop(&mut self) {
        // A stream closed with bytes its reader never took: Tokio's close
        // finds them in the socket and the kernel resets the connection
        // (the peer reads `ConnectionReset`, not EOF). Bytes a ring receive
        // took are no longer there, so a zero linger makes the close reset
        // (TCP; a Unix socket ignores it: README, differences).
        if let Some((uring, rings)) = self.ring_io() {
            let here = self.registration.io_handle().current_ring(rings);
            if uring.read.abandon_unread(rings, here) {
                let linger = libc::linger {
                    l_onoff: 1,
                    l_linger: 0,
                };
                // SAFETY: `uring.fd` is the open socket this value owns;
                // setsockopt only reads the `linger` it is handed.
                unsafe {
                    libc::setsockopt(
                        uring.fd,
                        libc::SOL_SOCKET,
                        libc::SO_LINGER,
                        std::ptr::from_ref(&linger).cast(),
                        std::mem::size_of::<libc::linger>() as libc::socklen_t,
                    );
                }
            }
        }
        // Before the socket closes: a receive pushed but not submitted must
        // not reach the kernel against a reused descriptor number.
        self.abandon_ring_ops();
        if let Some(mut io) = self.io.take() {
            // Deregistering can only fail if the descriptor is already
            // gone; the slot is freed either way.
            let _ = self.registration.deregister(&mut io);
        }
    }
}

impl<E: mio::event::Source + std::fmt::Debug> std::fmt::Debug for PollEvented<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PollEvented").field("io", &self.io).finish()
    }
}

// A registration stays consistent across a panic caught around an I/O
// call (its state is atomics and poison-tolerant locks), so the socket
// types built on it are unwind safe, as Tokio's.
impl<E: mio::event::Source> std::panic::UnwindSafe for PollEvented<E> {}
impl<E: mio::event::Source> std::panic::RefUnwindSafe for PollEvented<E> {}
