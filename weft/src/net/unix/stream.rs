//! `UnixStream`: a connected Unix-domain stream socket.
//!
//! Owns: the connected socket and its registration. Reads and writes go
//! through `PollEvented` (readiness with ticks, coop budget); the `try_*`
//! methods make one attempt without waiting. The `AsyncRead` /
//! `AsyncWrite` impls and the split halves are shared with `TcpStream`
//! (`net::halves`).

use super::split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
use super::{SocketAddr, UCred};
use crate::io::poll_evented::PollEvented;
use crate::net::halves;
use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, RawFd};
use std::path::Path;

/// A connected Unix-domain stream socket.
///
/// Reading and writing use the [`AsyncRead`](crate::io::AsyncRead) /
/// [`AsyncWrite`](crate::io::AsyncWrite) traits (see
/// [`AsyncReadExt`](crate::io::AsyncReadExt)); `poll_close` (and so
/// [`AsyncWriteExt::shutdown`](crate::io::AsyncWriteExt::shutdown)) shuts
/// down the write direction.
///
/// ```
/// use weft::io::{AsyncReadExt, AsyncWriteExt};
/// use weft::net::UnixStream;
///
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let (mut a, mut b) = UnixStream::pair()?;
/// a.write_all(b"ping").await?;
/// a.shutdown().await?;
///
/// let mut got = Vec::new();
/// b.read_to_end(&mut got).await?;
/// assert_eq!(got, b"ping");
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub struct UnixStream {
    pub(crate) io: PollEvented<mio::net::UnixStream>,
}

impl UnixStream {
    /// Connect to the socket listening at `path` (on Linux, `"\0name"` is
    /// an abstract name).
    pub async fn connect(path: impl AsRef<Path>) -> io::Result<UnixStream> {
        let addr = super::socket_addr(path.as_ref())?;
        UnixStream::connect_mio(mio::net::UnixStream::connect_addr(&addr)?).await
    }

    /// Connect to the socket listening at `addr` (a path, or an abstract
    /// name: convert std's `SocketAddrExt::from_abstract_name` with
    /// `SocketAddr::from`).
    pub async fn connect_addr(addr: &SocketAddr) -> io::Result<UnixStream> {
        UnixStream::connect_mio(mio::net::UnixStream::connect_addr(&addr.0)?).await
    }

    /// Register a socket whose non-blocking `connect` has started, and wait
    /// for it to finish.
    pub(crate) async fn connect_mio(sys: mio::net::UnixStream) -> io::Result<UnixStream> {
        let stream = UnixStream::from_mio(sys)?;
        // Writable means the connect finished, one way or the other.
        std::future::poll_fn(|cx| stream.io.registration().poll_write_ready(cx)).await?;
        if let Some(e) = stream.io.take_error()? {
            return Err(e);
        }
        Ok(stream)
    }

    /// Two connected streams (`socketpair`).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = mio::net::UnixStream::pair()?;
        let (a, b) = (UnixStream::from_mio(a)?, UnixStream::from_mio(b)?);
        a.io.assume_writable();
        b.io.assume_writable();
        Ok((a, b))
    }

    /// A stream a listener just accepted (`PollEvented::new_accepted_stream`).
    #[track_caller]
    pub(crate) fn from_accepted(sys: mio::net::UnixStream) -> io::Result<UnixStream> {
        Ok(UnixStream {
            io: PollEvented::new_accepted_stream(sys)?,
        })
    }

    #[track_caller]
    pub(crate) fn from_mio(sys: mio::net::UnixStream) -> io::Result<UnixStream> {
        Ok(UnixStream {
            io: PollEvented::new_stream(sys)?,
        })
    }

    /// Wrap a connected std stream (it is switched to non-blocking mode).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        stream.set_nonblocking(true)?;
        UnixStream::from_mio(mio::net::UnixStream::from_std(stream))
    }

    /// Deregister and return the std stream (still non-blocking).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands us sole ownership of the descriptor.
        Ok(unsafe { std::os::unix::net::UnixStream::from_raw_fd(mio.into_raw_fd()) })
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr().map(SocketAddr)
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.peer_addr().map(SocketAddr)
    }

    /// The credentials of the peer process, as of when it connected.
    pub fn peer_cred(&self) -> io::Result<UCred> {
        super::ucred::peer_cred(&*self.io)
    }

    /// The pending socket error, if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.take_error()
    }

    crate::net::readiness_methods!("stream");

    crate::net::stream_methods!();

    /// Borrowed read and write halves, usable from two tasks in the same
    /// scope (e.g. with `join`).
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        halves::split(self)
    }

    /// Owned halves that can move to different tasks;
    /// `OwnedReadHalf::reunite` puts them back together. Dropping the
    /// write half shuts down the write direction.
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        halves::into_split(self)
    }
}

/// The stream itself, so code generic over `AsRef<UnixStream>` takes a
/// stream as well as its split halves (as Tokio's does).
impl AsRef<UnixStream> for UnixStream {
    fn as_ref(&self) -> &UnixStream {
        self
    }
}

impl fmt::Debug for UnixStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}

impl AsRawFd for UnixStream {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for UnixStream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor stays open as long as `self` is borrowed.
        unsafe { BorrowedFd::borrow_raw(self.io.as_raw_fd()) }
    }
}

/// The same as [`UnixStream::from_std`], as Tokio's `TryFrom`.
impl TryFrom<std::os::unix::net::UnixStream> for UnixStream {
    type Error = std::io::Error;

    fn try_from(std: std::os::unix::net::UnixStream) -> std::io::Result<UnixStream> {
        UnixStream::from_std(std)
    }
}
