//! `UnixListener`: accepting Unix-domain stream connections.
//!
//! Owns: a listening socket registered with the I/O driver. As with
//! `TcpListener`, an accept error does not clear the listener's readiness,
//! so the next `accept` retries the pending connection. Accepts are
//! readiness-based on both drivers, as `TcpListener`'s.

use super::{SocketAddr, UnixStream};
use crate::io::poll_evented::PollEvented;
use crate::io::Interest;
use crate::runtime::io::scheduled_io::Direction;
use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, RawFd};
use std::path::Path;
use std::task::{ready, Context, Poll};

/// A Unix-domain socket server, listening for connections on a path.
///
/// The socket file is not removed when the listener is dropped (as with
/// std's listener): remove it yourself, or `bind` fails with `AddrInUse`
/// next time.
pub struct UnixListener {
    io: PollEvented<mio::net::UnixListener>,
}

impl UnixListener {
    /// Create a socket file at `path` and listen on it (on Linux,
    /// `"\0name"` binds the abstract name `name` instead, with no file).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixListener> {
        UnixListener::bind_std_addr(&super::socket_addr(path.as_ref())?)
    }

    /// Listen at an address (a path, or an abstract name: convert std's
    /// `SocketAddrExt::from_abstract_name` with `SocketAddr::from`).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn bind_addr(addr: &SocketAddr) -> io::Result<UnixListener> {
        UnixListener::bind_std_addr(&addr.0)
    }

    #[track_caller]
    fn bind_std_addr(addr: &std::os::unix::net::SocketAddr) -> io::Result<UnixListener> {
        UnixListener::from_mio(mio::net::UnixListener::bind_addr(addr)?)
    }

    #[track_caller]
    pub(crate) fn from_mio(listener: mio::net::UnixListener) -> io::Result<UnixListener> {
        Ok(UnixListener {
            io: PollEvented::new_with_interest(listener, Interest::READABLE)?,
        })
    }

    /// Wrap a std listener (it is switched to non-blocking mode).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        listener.set_nonblocking(true)?;
        UnixListener::from_mio(mio::net::UnixListener::from_std(listener))
    }

    /// Deregister and return the std listener (still non-blocking).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands us sole ownership of the descriptor.
        Ok(unsafe { std::os::unix::net::UnixListener::from_raw_fd(mio.into_raw_fd()) })
    }

    /// Accept a new connection. Cancel-safe: a dropped `accept` loses no
    /// connection (it stays in the backlog). Any number of tasks may
    /// accept on one listener at once: each waits in the readiness waiter
    /// list, as in Tokio.
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        let (stream, addr) = self
            .io
            .registration()
            .async_io(Interest::READABLE, || self.io.accept())
            .await?;
        Ok((UnixStream::from_accepted(stream)?, SocketAddr(addr)))
    }

    /// Poll-style [`accept`](Self::accept). It keeps one waker: when
    /// several tasks poll it, only the last one is woken (as Tokio's);
    /// tasks sharing a listener use `accept`.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
        let (stream, addr) = ready!(self
            .io
            .registration()
            .poll_io(cx, Direction::Read, || self.io.accept()))?;
        Poll::Ready(UnixStream::from_accepted(stream).map(|s| (s, SocketAddr(addr))))
    }

    /// The address this listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr().map(SocketAddr)
    }

    /// The pending socket error, if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.take_error()
    }
}

impl fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixListener")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

impl AsRawFd for UnixListener {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for UnixListener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor stays open as long as `self` is borrowed.
        unsafe { BorrowedFd::borrow_raw(self.io.as_raw_fd()) }
    }
}

/// The same as [`UnixListener::from_std`], as Tokio's `TryFrom`.
impl TryFrom<std::os::unix::net::UnixListener> for UnixListener {
    type Error = std::io::Error;

    fn try_from(std: std::os::unix::net::UnixListener) -> std::io::Result<UnixListener> {
        UnixListener::from_std(std)
    }
}
