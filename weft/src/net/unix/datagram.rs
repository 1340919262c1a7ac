//! `UnixDatagram`: datagrams over Unix-domain sockets.
//!
//! Owns: a datagram socket registered with the I/O driver. As for UDP, a
//! short datagram read says nothing about the queue, so readiness is only
//! cleared on `WouldBlock` (`Registration::poll_io` / `async_io`), never by
//! the stream shortcut. Receives are readiness-based on both I/O drivers
//! (`net/datagram.rs`).

use super::SocketAddr;
use crate::io::poll_evented::PollEvented;
use crate::io::Interest;
use crate::runtime::io::scheduled_io::Direction;
use std::fmt;
use std::io;
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, RawFd};
use std::path::Path;
use std::task::{Context, Poll};

/// A Unix-domain datagram socket, bound to a path, unbound, or one of a
/// connected [`pair`](Self::pair).
///
/// Every method takes `&self`, so a socket can be shared between tasks in
/// an `Arc`.
///
/// ```
/// use weft::net::UnixDatagram;
///
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let (a, b) = UnixDatagram::pair()?;
/// a.send(b"one").await?;
/// a.send(b"two").await?;
/// let mut buf = [0u8; 8];
/// let n = b.recv(&mut buf).await?;
/// assert_eq!(&buf[..n], b"one");
/// let n = b.recv(&mut buf).await?;
/// assert_eq!(&buf[..n], b"two");
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub struct UnixDatagram {
    io: PollEvented<mio::net::UnixDatagram>,
}

impl UnixDatagram {
    /// A socket bound to `path` (a socket file is created there).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixDatagram> {
        let addr = super::socket_addr(path.as_ref())?;
        UnixDatagram::from_mio(mio::net::UnixDatagram::bind_addr(&addr)?)
    }

    /// A socket bound to no address (it can send, and receive replies only
    /// once connected).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn unbound() -> io::Result<UnixDatagram> {
        UnixDatagram::from_mio(mio::net::UnixDatagram::unbound()?)
    }

    /// Two sockets connected to each other (`socketpair`).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = mio::net::UnixDatagram::pair()?;
        let (a, b) = (UnixDatagram::from_mio(a)?, UnixDatagram::from_mio(b)?);
        a.io.assume_writable();
        b.io.assume_writable();
        Ok((a, b))
    }

    #[track_caller]
    pub(crate) fn from_mio(sys: mio::net::UnixDatagram) -> io::Result<UnixDatagram> {
        Ok(UnixDatagram {
            io: PollEvented::new_datagram(sys)?,
        })
    }

    /// Wrap a std socket (it is switched to non-blocking mode).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        socket.set_nonblocking(true)?;
        UnixDatagram::from_mio(mio::net::UnixDatagram::from_std(socket))
    }

    /// Deregister and return the std socket (still non-blocking).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixDatagram> {
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands us sole ownership of the descriptor.
        Ok(unsafe { std::os::unix::net::UnixDatagram::from_raw_fd(mio.into_raw_fd()) })
    }

    /// Set the only peer [`send`](Self::send) sends to and
    /// [`recv`](Self::recv) receives from.
    pub fn connect(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let addr = super::socket_addr(path.as_ref())?;
        self.with_std(|socket| socket.connect_addr(&addr))
    }

    /// Run `f` on a std view of this socket (for the `*_addr` calls mio
    /// lacks), without taking ownership of the descriptor.
    fn with_std<R>(&self, f: impl FnOnce(&std::os::unix::net::UnixDatagram) -> R) -> R {
        // SAFETY: the descriptor stays open for the whole call (`self` is
        // borrowed), and `ManuallyDrop` keeps the std view from closing it.
        let socket = std::mem::ManuallyDrop::new(unsafe {
            std::os::unix::net::UnixDatagram::from_raw_fd(self.io.as_raw_fd())
        });
        f(&socket)
    }

    fn send_to_path(&self, buf: &[u8], target: &Path) -> io::Result<usize> {
        let addr = super::socket_addr(target)?;
        self.with_std(|socket| socket.send_to_addr(buf, &addr))
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr().map(SocketAddr)
    }

    /// The connected peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.peer_addr().map(SocketAddr)
    }

    /// The pending socket error, if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.take_error()
    }

    /// Shut down the read, write or both directions.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.shutdown(how)
    }

    crate::net::readiness_methods!("socket");

    crate::net::datagram_methods!(SocketAddr, unix_sender, crate::io::Interest::READABLE);

    crate::net::datagram_buf_methods!(SocketAddr, unix_sender, crate::io::Interest::READABLE);

    /// Send `buf` to the socket bound at `target`. Cancel-safe.
    pub async fn send_to(&self, buf: &[u8], target: impl AsRef<Path>) -> io::Result<usize> {
        let target = target.as_ref();
        self.async_io(Interest::WRITABLE, || self.send_to_path(buf, target))
            .await
    }

    /// Poll-style [`send_to`](Self::send_to).
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: impl AsRef<Path>,
    ) -> Poll<io::Result<usize>> {
        let target = target.as_ref();
        self.io
            .registration()
            .poll_io(cx, Direction::Write, || self.send_to_path(buf, target))
    }

    /// Send once without waiting: `WouldBlock` if the socket is not ready.
    pub fn try_send_to(&self, buf: &[u8], target: impl AsRef<Path>) -> io::Result<usize> {
        let target = target.as_ref();
        self.try_io(Interest::WRITABLE, || self.send_to_path(buf, target))
    }
}

impl fmt::Debug for UnixDatagram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixDatagram")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}

impl AsRawFd for UnixDatagram {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for UnixDatagram {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor stays open as long as `self` is borrowed.
        unsafe { BorrowedFd::borrow_raw(self.io.as_raw_fd()) }
    }
}

/// The sender of a Unix datagram (a path, an abstract name, or unnamed:
/// `SocketAddr::from_raw`, which socket2's `as_unix` would not do for
/// abstract names).
fn unix_sender(addr: &socket2::SockAddr) -> Option<SocketAddr> {
    // SAFETY: a `SockAddr` holds `len()` initialised bytes of address at
    // `as_ptr()`, borrowed with `addr`.
    let raw =
        unsafe { std::slice::from_raw_parts(addr.as_ptr().cast::<u8>(), addr.len() as usize) };
    SocketAddr::from_raw(raw).ok()
}

/// The same as [`UnixDatagram::from_std`], as Tokio's `TryFrom`.
impl TryFrom<std::os::unix::net::UnixDatagram> for UnixDatagram {
    type Error = std::io::Error;

    fn try_from(std: std::os::unix::net::UnixDatagram) -> std::io::Result<UnixDatagram> {
        UnixDatagram::from_std(std)
    }
}
