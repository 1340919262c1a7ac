//! `TcpStream`: a connected TCP socket.
//!
//! Owns: the connected socket and its registration. Reads and writes go
//! through `PollEvented` (readiness with ticks, coop budget); the `try_*`
//! methods make one attempt without waiting.

use super::split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
use crate::io::poll_evented::PollEvented;
use crate::io::{Interest, ReadBuf};
use crate::net::addr::{each_addr, ToSocketAddrs};
use crate::net::halves;
use crate::runtime::io::scheduled_io::Direction;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd as _;
use std::task::{Context, Poll};
use std::time::Duration;

/// A TCP connection.
///
/// Reading and writing use the [`AsyncRead`](crate::io::AsyncRead) /
/// [`AsyncWrite`](crate::io::AsyncWrite) traits (see
/// [`AsyncReadExt`](crate::io::AsyncReadExt)); [`readable`](Self::readable) +
/// [`try_read`](Self::try_read) give finer control.
pub struct TcpStream {
    pub(crate) io: PollEvented<mio::net::TcpStream>,
}

impl TcpStream {
    /// Connect to `addr`, trying each resolved address in turn.
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        // A fresh non-blocking socket per address, connected the way the
        // runtime's driver connects (`TcpSocket::connect`: on the ring, or
        // a non-blocking connect and a wait for writability).
        each_addr(addr, |addr| async move {
            super::TcpSocket::for_addr(addr)?.connect(addr).await
        })
        .await
    }

    /// Register a socket whose non-blocking connect is in flight and wait
    /// for the outcome.
    pub(crate) async fn connect_mio(sys: mio::net::TcpStream) -> io::Result<TcpStream> {
        let stream = TcpStream::from_mio(sys)?;
        // Writable means the connect finished, one way or the other.
        std::future::poll_fn(|cx| stream.io.registration().poll_write_ready(cx)).await?;
        if let Some(e) = stream.io.take_error()? {
            return Err(e);
        }
        // ENOTCONN here means the connection was refused after all.
        stream.io.peer_addr()?;
        Ok(stream)
    }

    #[track_caller]
    pub(crate) fn from_mio(sys: mio::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream {
            io: PollEvented::new_stream(sys)?,
        })
    }

    /// A stream a listener just accepted (`PollEvented::new_accepted_stream`).
    pub(crate) fn from_accepted(sys: mio::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream {
            io: PollEvented::new_accepted_stream(sys)?,
        })
    }

    /// Wrap a connected std stream (it is switched to non-blocking mode).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        TcpStream::from_mio(mio::net::TcpStream::from_std(stream))
    }

    /// Deregister and return the std stream (still non-blocking).
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands us sole ownership of the descriptor.
        Ok(unsafe { std::net::TcpStream::from_raw_fd(mio.into_raw_fd()) })
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.peer_addr()
    }

    /// The pending socket error, if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.take_error()
    }

    /// `TCP_NODELAY`: send small writes at once instead of batching them.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.io.set_nodelay(nodelay)
    }

    /// `TCP_NODELAY`.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.io.nodelay()
    }

    /// `IP_TTL`.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.set_ttl(ttl)
    }

    /// `IP_TTL`.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.ttl()
    }

    /// `SO_LINGER`.
    pub fn set_linger(&self, dur: Option<Duration>) -> io::Result<()> {
        socket2::SockRef::from(self).set_linger(dur)
    }

    /// `SO_LINGER`.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        socket2::SockRef::from(self).linger()
    }

    /// `SO_LINGER` of zero: dropping the stream resets the connection
    /// (RST) instead of the orderly shutdown.
    pub fn set_zero_linger(&self) -> io::Result<()> {
        self.set_linger(Some(Duration::ZERO))
    }

    /// `TCP_QUICKACK` (Linux): whether ACKs are sent at once rather than
    /// delayed. The kernel clears it again on its own.
    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "fuchsia",
        target_os = "cygwin"
    ))]
    pub fn quickack(&self) -> io::Result<bool> {
        socket2::SockRef::from(self).tcp_quickack()
    }

    /// Set `TCP_QUICKACK` (Linux).
    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "fuchsia",
        target_os = "cygwin"
    ))]
    pub fn set_quickack(&self, quickack: bool) -> io::Result<()> {
        socket2::SockRef::from(self).set_tcp_quickack(quickack)
    }

    crate::net::readiness_methods!("stream");

    crate::net::stream_methods!();

    /// Read without consuming the data. Cancel-safe. Any number of tasks
    /// may peek at once: each waits in the readiness waiter list, as in
    /// Tokio (`poll_peek` keeps one waker).
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        // Bytes a ring receive already brought come first (and make the
        // stream readable now; poll_evented.rs), before any wait and
        // again whenever readiness fires.
        let leftover = |buf: &mut [u8]| {
            self.io.read_leftover(false, |src| {
                let n = src.len().min(buf.len());
                buf[..n].copy_from_slice(&src[..n]);
                n
            })
        };
        self.io.settle_read();
        if let Some(peeked) = leftover(buf) {
            return peeked;
        }
        self.io
            .registration()
            .async_io_or(
                Interest::READABLE,
                || self.io.ring_took_bytes(),
                || {
                    self.io.settle_read();
                    leftover(buf).unwrap_or_else(|| self.io.peek(buf))
                },
            )
            .await
    }

    /// Poll-style [`peek`](Self::peek): copies what is queued into `buf`'s
    /// unfilled part without consuming it, advances `buf` and returns how
    /// many bytes that was (`0` at EOF).
    pub fn poll_peek(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<usize>> {
        let leftover = |buf: &mut ReadBuf<'_>| {
            self.io.read_leftover(false, |src| {
                let n = src.len().min(buf.remaining());
                buf.put_slice(&src[..n]);
                n
            })
        };
        self.io.settle_read();
        if let Some(r) = leftover(buf) {
            return Poll::Ready(r);
        }
        self.io.registration().poll_io_or(
            cx,
            Direction::Read,
            || self.io.ring_took_bytes(),
            || {
                // As `peek`: bytes a ring receive kept come first.
                self.io.settle_read();
                leftover(buf).unwrap_or_else(|| {
                    let before = buf.filled().len();
                    crate::net::recv_into_read_buf(socket2::SockRef::from(self), buf, true)?;
                    Ok(buf.filled().len() - before)
                })
            },
        )
    }

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

/// The stream itself, so code generic over `AsRef<TcpStream>` takes a
/// stream as well as its split halves (as Tokio's does).
impl AsRef<TcpStream> for TcpStream {
    fn as_ref(&self) -> &TcpStream {
        self
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}

impl std::os::fd::AsRawFd for TcpStream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.as_raw_fd()
    }
}

impl std::os::fd::AsFd for TcpStream {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        // SAFETY: the descriptor stays open as long as `self` is borrowed.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(self.io.as_raw_fd()) }
    }
}

/// The same as [`TcpStream::from_std`], as Tokio's `TryFrom`.
impl TryFrom<std::net::TcpStream> for TcpStream {
    type Error = std::io::Error;

    fn try_from(std: std::net::TcpStream) -> std::io::Result<TcpStream> {
        TcpStream::from_std(std)
    }
}
