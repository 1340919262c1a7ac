//! `PollEvented`: a mio source plus its registration, with the read/write
//! loops every socket type shares.
//!
//! Owns: the mio source (until drop or `into_inner`) and its
//! [`Registration`]. Invariant: the source is registered for as long as
//! this value holds it, and deregistered before it is closed or handed
//! back, so the driver never sees events for a closed descriptor.
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

use crate::runtime::io::ready::Interest;
use crate::runtime::io::registration::Registration;
use crate::runtime::io::scheduled_io::Direction;
use crate::runtime::io::uring::UringRead;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::ops::Deref;
use std::os::fd::AsRawFd;
use std::task::{ready, Context, Poll};

pub(crate) struct PollEvented<E: mio::event::Source> {
    io: Option<E>,
    registration: Registration,
    /// Reads through io_uring (a stream socket on a runtime with rings).
    /// (Boxed: most resources have none, and stay small.)
    uring: Option<Box<UringRead>>,
}

/// The most one read(2)/write(2) moves on Linux (`MAX_RW_COUNT`), and the
/// most buffers std hands one writev(2) (`IOV_MAX`). A transfer shorter than
/// what the call could take means the socket buffer ran dry or full, so
/// readiness is cleared; one shorter only because of these caps does not,
/// or the next call would wait for an edge that never comes.
const MAX_RW_COUNT: usize = 0x7fff_f000;
const IOV_MAX: usize = 1024;

impl<E: mio::event::Source> PollEvented<E> {
    /// Register for reads and writes on the current runtime.
    ///
    /// # Panics
    /// Outside a runtime, or on a runtime without the I/O driver.
    #[track_caller]
    pub(crate) fn new(io: E) -> io::Result<Self> {
        Self::new_with_interest(io, Interest::READABLE | Interest::WRITABLE)
    }

    #[track_caller]
    pub(crate) fn new_with_interest(mut io: E, interest: Interest) -> io::Result<Self> {
        let registration = Registration::new(&mut io, interest)?;
        Ok(PollEvented {
            io: Some(io),
            registration,
            uring: None,
        })
    }

    /// A stream socket (TCP, Unix): registered for reads and writes, and
    /// reading through io_uring when the runtime's driver has rings.
    #[track_caller]
    pub(crate) fn new_stream(io: E) -> io::Result<Self> {
        let mut this = Self::new(io)?;
        if this.registration.rings().is_some() {
            this.uring = Some(Box::default());
        }
        Ok(this)
    }

    /// Before a readiness-based read: end any receive in flight through the
    /// ring, keeping what it brought for [`read_leftover`](Self::read_leftover).
    pub(crate) fn settle_read(&self) {
        if let (Some(uring), Some(rings)) = (&self.uring, self.registration.rings()) {
            uring.settle(rings);
        }
    }

    /// Bytes a ring receive brought that no reader took yet: handed to `f`,
    /// which returns how many it took (`consume`) or only looks. `None`
    /// when there are none (read the socket).
    pub(crate) fn read_leftover(
        &self,
        consume: bool,
        f: impl FnOnce(&[u8]) -> usize,
    ) -> Option<usize> {
        self.uring.as_ref()?.with_leftover(consume, f)
    }

    /// Whether leftover bytes wait (the stream counts as readable).
    pub(crate) fn has_leftover(&self) -> bool {
        self.uring.as_ref().is_some_and(|u| u.has_leftover())
    }

    fn abandon_ring_read(&self) {
        if let (Some(uring), Some(rings)) = (&self.uring, self.registration.rings()) {
            uring.abandon(rings);
        }
    }

    pub(crate) fn registration(&self) -> &Registration {
        &self.registration
    }

    /// Deregister and hand the source back.
    pub(crate) fn into_inner(mut self) -> io::Result<E> {
        self.settle_read();
        self.abandon_ring_read();
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
        if let (Some(uring), Some(rings)) = (&self.uring, self.registration.rings()) {
            let restore = ready!(crate::coop::poll_proceed(cx));
            let io = self.registration.io_handle();
            let ring = io.current_ring(rings);
            let n = ready!(uring.poll_read(rings, ring, io.is_shutdown(), fd, cx, buf))?;
            restore.made_progress();
            return Poll::Ready(Ok(n));
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
        let len = buf.len().min(MAX_RW_COUNT);
        self.poll_stream(cx, Direction::Write, len, || (&mut self.io()).write(buf))
    }

    pub(crate) fn poll_write_vectored<'a>(
        &'a self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>>
    where
        &'a E: Write,
    {
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
    }

    fn io(&self) -> &E {
        self.io.as_ref().expect("source present until drop")
    }
}

impl<E: mio::event::Source> Deref for PollEvented<E> {
    type Target = E;
    fn deref(&self) -> &E {
        self.io()
    }
}

impl<E: mio::event::Source> Drop for PollEvented<E> {
    fn drop(&mut self) {
        // Before the socket closes: a receive pushed but not submitted must
        // not reach the kernel against a reused descriptor number.
        self.abandon_ring_read();
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
