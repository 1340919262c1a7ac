//! `TcpListener`: accepting TCP connections.
//!
//! Owns: a listening socket registered with the I/O driver for read
//! readiness, on both drivers (the io_uring driver's module doc says why
//! accepts stay off the rings). An accept error (for example `EMFILE`, out
//! of descriptors) is returned to the caller and does not clear the
//! listener's readiness, so the next `accept` retries the pending
//! connection once descriptors are free again.

use super::TcpStream;
use crate::io::poll_evented::PollEvented;
use crate::io::Interest;
use crate::net::addr::{each_addr, ToSocketAddrs};
use crate::runtime::io::scheduled_io::Direction;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd as _;
use std::task::{ready, Context, Poll};

/// A TCP socket server, listening for connections.
///
/// ```
/// use weft::io::{AsyncReadExt, AsyncWriteExt};
/// use weft::net::{TcpListener, TcpStream};
///
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let addr = listener.local_addr().unwrap();
/// weft::spawn(async move {
///     let (mut socket, _) = listener.accept().await.unwrap();
///     socket.write_all(b"hi").await.unwrap();
/// });
/// let mut client = TcpStream::connect(addr).await.unwrap();
/// let mut buf = [0; 2];
/// client.read_exact(&mut buf).await.unwrap();
/// assert_eq!(&buf, b"hi");
/// # });
/// ```
pub struct TcpListener {
    io: PollEvented<mio::net::TcpListener>,
}

impl TcpListener {
    /// Bind to `addr` (the first address that works) and listen, with
    /// `SO_REUSEADDR` set and a backlog of 1024.
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        each_addr(addr, |addr| async move {
            let socket = super::TcpSocket::for_addr(addr)?;
            socket.set_reuseaddr(true)?;
            socket.bind(addr)?;
            socket.listen(1024)
        })
        .await
    }

    #[track_caller]
    pub(crate) fn from_mio(listener: mio::net::TcpListener) -> io::Result<TcpListener> {
        Ok(TcpListener {
            io: PollEvented::new_with_interest(listener, Interest::READABLE)?,
        })
    }

    /// Wrap a std listener (it is switched to non-blocking mode).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        TcpListener::from_mio(mio::net::TcpListener::from_std(listener))
    }

    /// Deregister and return the std listener (still non-blocking).
    pub fn into_std(self) -> io::Result<std::net::TcpListener> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        let mio = self.io.into_inner()?;
        // SAFETY: the descriptor comes from `into_raw_fd`, so we own it and
        // nothing else closes it.
        Ok(unsafe { std::net::TcpListener::from_raw_fd(mio.into_raw_fd()) })
    }

    /// Accept a new connection. Cancel-safe: a dropped `accept` loses no
    /// connection (it stays in the backlog). Any number of tasks may
    /// accept on one listener at once: each waits in the readiness waiter
    /// list, as in Tokio.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let (stream, addr) = self
            .io
            .registration()
            .async_io(Interest::READABLE, || self.io.accept())
            .await?;
        Ok((TcpStream::from_accepted(stream)?, addr))
    }

    /// Poll-style [`accept`](Self::accept). It keeps one waker: when
    /// several tasks poll it, only the last one is woken (as Tokio's);
    /// tasks sharing a listener use `accept`.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        let (stream, addr) = ready!(self
            .io
            .registration()
            .poll_io(cx, Direction::Read, || self.io.accept()))?;
        Poll::Ready(TcpStream::from_accepted(stream).map(|s| (s, addr)))
    }

    /// The address this listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }

    /// Set `IP_TTL` for accepted sockets.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.set_ttl(ttl)
    }

    /// `IP_TTL`.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.ttl()
    }
}

impl fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpListener")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

impl std::os::fd::AsRawFd for TcpListener {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.as_raw_fd()
    }
}

impl std::os::fd::AsFd for TcpListener {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        // SAFETY: the descriptor stays open as long as `self` is borrowed.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(self.io.as_raw_fd()) }
    }
}

/// The same as [`TcpListener::from_std`], as Tokio's `TryFrom`.
impl TryFrom<std::net::TcpListener> for TcpListener {
    type Error = std::io::Error;

    fn try_from(std: std::net::TcpListener) -> std::io::Result<TcpListener> {
        TcpListener::from_std(std)
    }
}
