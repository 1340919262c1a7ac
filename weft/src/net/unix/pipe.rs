//! Unix pipes and FIFOs on the I/O driver: [`pipe`], [`Sender`],
//! [`Receiver`] and [`OpenOptions`] (for named FIFOs), as
//! `tokio::net::unix::pipe`.
//!
//! Owns: one end of a pipe each, registered with the driver for its one
//! direction only (a `Sender` for writes, a `Receiver` for reads). The
//! descriptor is non-blocking for as long as weft holds it; handing it back
//! ([`Sender::into_blocking_fd`]) deregisters it first, so the driver never
//! sees events for a descriptor it no longer owns. A pipe is a byte stream,
//! so reads and writes share the sockets' loop (`PollEvented`): a short
//! transfer means the pipe ran dry or full, and its readiness is cleared.
//!
//! The child-process pipes of [`crate::process`] are these types inside.

use crate::io::poll_evented::PollEvented;
use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A new anonymous pipe: what is written to the [`Sender`] is read from
/// the [`Receiver`].
///
/// # Panics
/// Outside a runtime with the I/O driver.
///
/// ```
/// use weft::io::{AsyncReadExt, AsyncWriteExt};
///
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let (mut tx, mut rx) = weft::net::unix::pipe::pipe()?;
/// tx.write_all(b"through the pipe").await?;
/// drop(tx);
/// let mut got = String::new();
/// rx.read_to_string(&mut got).await?;
/// assert_eq!(got, "through the pipe");
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
#[track_caller]
pub fn pipe() -> io::Result<(Sender, Receiver)> {
    let (tx, rx) = mio::unix::pipe::new()?;
    Ok((Sender::register(tx)?, Receiver::register(rx)?))
}

/// Options for opening a named FIFO as one end of a pipe.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    read_write: bool,
    unchecked: bool,
}

/// Which end of a FIFO [`OpenOptions`] opens.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Sender,
    Receiver,
}

impl OpenOptions {
    /// Default options: open the FIFO for one direction, and check that the
    /// file is a FIFO.
    pub fn new() -> OpenOptions {
        OpenOptions::default()
    }

    /// Open the FIFO for reading and writing (Linux): opening a sender then
    /// succeeds without a reader, and a receiver never sees end-of-file
    /// while it holds the write side itself.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn read_write(&mut self, value: bool) -> &mut Self {
        self.read_write = value;
        self
    }

    /// Skip the check that the path names a FIFO (for character devices
    /// and the like that behave as one).
    pub fn unchecked(&mut self, value: bool) -> &mut Self {
        self.unchecked = value;
        self
    }

    /// Open the FIFO at `path` for reading.
    ///
    /// # Errors
    /// From `open(2)`; `InvalidInput` if the file is not a FIFO (unless
    /// [`unchecked`](Self::unchecked)).
    #[track_caller]
    pub fn open_receiver<P: AsRef<Path>>(&self, path: P) -> io::Result<Receiver> {
        let file = self.open(path.as_ref(), End::Receiver)?;
        Receiver::from_file_unchecked(file)
    }

    /// Open the FIFO at `path` for writing. Without
    /// [`read_write`](Self::read_write), fails with `ENXIO` while no reader
    /// has it open (as `open(2)` does for a non-blocking writer).
    ///
    /// # Errors
    /// As [`open_receiver`](Self::open_receiver).
    #[track_caller]
    pub fn open_sender<P: AsRef<Path>>(&self, path: P) -> io::Result<Sender> {
        let file = self.open(path.as_ref(), End::Sender)?;
        Sender::from_file_unchecked(file)
    }

    fn open(&self, path: &Path, end: End) -> io::Result<File> {
        let mut options = std::fs::OpenOptions::new();
        options
            .read(end == End::Receiver)
            .write(end == End::Sender)
            .custom_flags(libc::O_NONBLOCK);
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if self.read_write {
            options.read(true).write(true);
        }
        let file = options.open(path)?;
        if !self.unchecked && !is_fifo(file.as_fd())? {
            return Err(not_a_pipe());
        }
        Ok(file)
    }
}

/// The writing end of a pipe.
#[derive(Debug)]
pub struct Sender {
    io: PollEvented<mio::unix::pipe::Sender>,
}

/// The reading end of a pipe.
#[derive(Debug)]
pub struct Receiver {
    io: PollEvented<mio::unix::pipe::Receiver>,
}

/// The ready-state methods both ends share, on `self.io`.
macro_rules! pipe_end_methods {
    ($interest:ident, $poll_ready:ident, $noun:literal) => {
        /// Wait until the pipe end is ready for any of `interest`.
        /// Cancel-safe.
        pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
            Ok(self.io.registration().readiness(interest).await?.ready)
        }

        #[doc = concat!("Poll for ", $noun, " readiness (only the last task to poll is woken).")]
        pub fn $poll_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.io.registration().$poll_ready(cx).map_ok(drop)
        }

        /// Run `f` once if the pipe end looks ready, clearing the readiness
        /// if it returns `WouldBlock` (for custom syscalls on the fd).
        pub fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
            self.io.registration().try_io(Interest::$interest, f)
        }

        /// Hand the descriptor back in blocking mode (deregistered).
        pub fn into_blocking_fd(self) -> io::Result<OwnedFd> {
            let io = self.io.into_inner()?;
            io.set_nonblocking(false)?;
            Ok(io.into())
        }

        /// Hand the descriptor back as it is, non-blocking (deregistered).
        pub fn into_nonblocking_fd(self) -> io::Result<OwnedFd> {
            Ok(self.io.into_inner()?.into())
        }
    };
}

impl Sender {
    #[track_caller]
    fn register(tx: mio::unix::pipe::Sender) -> io::Result<Sender> {
        let io = PollEvented::new_with_interest(tx, Interest::WRITABLE)?;
        Ok(Sender { io })
    }

    /// The writing end from an open file: checks that it is a FIFO opened
    /// for writing, and makes it non-blocking.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_file(file: File) -> io::Result<Sender> {
        Sender::from_owned_fd(file.into())
    }

    /// As [`from_file`](Self::from_file), from a descriptor.
    #[track_caller]
    pub fn from_owned_fd(fd: OwnedFd) -> io::Result<Sender> {
        check_pipe_end(fd.as_fd(), End::Sender)?;
        Sender::from_owned_fd_unchecked(fd)
    }

    /// The writing end from a file without checks; it is made non-blocking.
    #[track_caller]
    pub fn from_file_unchecked(file: File) -> io::Result<Sender> {
        Sender::from_owned_fd_unchecked(file.into())
    }

    /// As [`from_file_unchecked`](Self::from_file_unchecked), from a
    /// descriptor.
    #[track_caller]
    pub fn from_owned_fd_unchecked(fd: OwnedFd) -> io::Result<Sender> {
        let tx = mio::unix::pipe::Sender::from(fd);
        tx.set_nonblocking(true)?;
        Sender::register(tx)
    }

    pipe_end_methods!(WRITABLE, poll_write_ready, "write");

    /// Wait until the pipe may take a write. Cancel-safe.
    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }

    /// Write once without waiting: `WouldBlock` if the pipe is full.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_io(|| (&*self.io).write(buf))
    }

    /// Vectored [`try_write`](Self::try_write).
    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.try_io(|| (&*self.io).write_vectored(bufs))
    }
}

impl Receiver {
    #[track_caller]
    fn register(rx: mio::unix::pipe::Receiver) -> io::Result<Receiver> {
        let io = PollEvented::new_with_interest(rx, Interest::READABLE)?;
        Ok(Receiver { io })
    }

    /// The reading end from an open file: checks that it is a FIFO opened
    /// for reading, and makes it non-blocking.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_file(file: File) -> io::Result<Receiver> {
        Receiver::from_owned_fd(file.into())
    }

    /// As [`from_file`](Self::from_file), from a descriptor.
    #[track_caller]
    pub fn from_owned_fd(fd: OwnedFd) -> io::Result<Receiver> {
        check_pipe_end(fd.as_fd(), End::Receiver)?;
        Receiver::from_owned_fd_unchecked(fd)
    }

    /// The reading end from a file without checks; it is made non-blocking.
    #[track_caller]
    pub fn from_file_unchecked(file: File) -> io::Result<Receiver> {
        Receiver::from_owned_fd_unchecked(file.into())
    }

    /// As [`from_file_unchecked`](Self::from_file_unchecked), from a
    /// descriptor.
    #[track_caller]
    pub fn from_owned_fd_unchecked(fd: OwnedFd) -> io::Result<Receiver> {
        let rx = mio::unix::pipe::Receiver::from(fd);
        rx.set_nonblocking(true)?;
        Receiver::register(rx)
    }

    pipe_end_methods!(READABLE, poll_read_ready, "read");

    /// Wait until the pipe may be read. Cancel-safe.
    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }

    /// Read once without waiting: `WouldBlock` if the pipe is empty, `Ok(0)`
    /// at end-of-file (every writer closed).
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.try_io(|| (&*self.io).read(buf))
    }

    /// Vectored [`try_read`](Self::try_read).
    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        self.try_io(|| (&*self.io).read_vectored(bufs))
    }

    /// [`try_read`](Self::try_read) into the spare capacity of `buf`,
    /// advancing it by what was read.
    pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let fd = self.io.as_raw_fd();
        self.try_io(|| {
            let spare = buf.chunk_mut();
            let len = spare.len();
            let ptr = spare.as_mut_ptr().cast::<libc::c_void>();
            // SAFETY: `ptr` points to `len` writable bytes of `buf`'s spare
            // capacity, which read(2) only writes; `fd` is open while `self`
            // is borrowed.
            let n = unsafe { libc::read(fd, ptr, len) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            let n = n as usize;
            // SAFETY: read(2) initialised the first `n` bytes of the chunk.
            unsafe { buf.advance_mut(n) };
            Ok(n)
        })
    }
}

impl crate::net::halves::ReadUninit for Receiver {
    fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [std::mem::MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_read_uninit(cx, buf)
    }
}

impl AsyncRead for Receiver {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        crate::net::halves::poll_read_buf(&*self, cx, buf)
    }
}

impl AsyncWrite for Sender {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Writes go straight to the kernel.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // A pipe has no half-close: the reader sees end-of-file when the
        // sender is dropped, as in Tokio.
        Poll::Ready(Ok(()))
    }
}

macro_rules! fd_impls {
    ($($t:ty),*) => {$(
        impl AsRawFd for $t {
            fn as_raw_fd(&self) -> RawFd {
                self.io.as_raw_fd()
            }
        }

        impl AsFd for $t {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.io.as_fd()
            }
        }
    )*};
}
fd_impls!(Sender, Receiver);

fn not_a_pipe() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a pipe")
}

fn is_fifo(fd: BorrowedFd<'_>) -> io::Result<bool> {
    let file = File::from(fd.try_clone_to_owned()?);
    Ok(file.metadata()?.file_type().is_fifo())
}

/// `fd` is a FIFO opened for `end`'s direction.
fn check_pipe_end(fd: BorrowedFd<'_>, end: End) -> io::Result<()> {
    if !is_fifo(fd)? {
        return Err(not_a_pipe());
    }
    // SAFETY: F_GETFL only reads the flags of `fd`, which is open for the
    // duration of the borrow.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let mode = flags & libc::O_ACCMODE;
    let (wanted, message) = match end {
        End::Sender => (libc::O_WRONLY, "not in O_WRONLY or O_RDWR access mode"),
        End::Receiver => (libc::O_RDONLY, "not in O_RDONLY or O_RDWR access mode"),
    };
    if mode == wanted || mode == libc::O_RDWR {
        Ok(())
    } else {
        Err(io::Error::new(io::ErrorKind::InvalidInput, message))
    }
}
