//! `TcpSocket`: a TCP socket configured before it connects or listens.
//!
//! Owns: a not-yet-connected socket2 socket (non-blocking, close-on-exec).
//! It becomes a [`TcpStream`] through [`TcpSocket::connect`] or a
//! [`TcpListener`] through [`TcpSocket::listen`].

use super::{TcpListener, TcpStream};
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
use std::time::Duration;

/// A TCP socket that has not connected or listened yet, for setting
/// options first.
///
/// ```
/// use weft::net::TcpSocket;
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let socket = TcpSocket::new_v4().unwrap();
/// socket.set_reuseaddr(true).unwrap();
/// socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
/// let listener = socket.listen(128).unwrap();
/// assert!(listener.local_addr().unwrap().port() != 0);
/// # });
/// ```
pub struct TcpSocket {
    inner: socket2::Socket,
}

impl TcpSocket {
    /// An IPv4 TCP socket.
    pub fn new_v4() -> io::Result<TcpSocket> {
        TcpSocket::new(socket2::Domain::IPV4)
    }

    /// An IPv6 TCP socket.
    pub fn new_v6() -> io::Result<TcpSocket> {
        TcpSocket::new(socket2::Domain::IPV6)
    }

    pub(crate) fn for_addr(addr: SocketAddr) -> io::Result<TcpSocket> {
        TcpSocket::new(socket2::Domain::for_address(addr))
    }

    fn new(domain: socket2::Domain) -> io::Result<TcpSocket> {
        let ty = socket2::Type::STREAM.nonblocking().cloexec();
        let inner = socket2::Socket::new(domain, ty, Some(socket2::Protocol::TCP))?;
        Ok(TcpSocket { inner })
    }

    /// `SO_REUSEADDR`.
    pub fn set_reuseaddr(&self, reuseaddr: bool) -> io::Result<()> {
        self.inner.set_reuse_address(reuseaddr)
    }

    /// `SO_REUSEADDR`.
    pub fn reuseaddr(&self) -> io::Result<bool> {
        self.inner.reuse_address()
    }

    /// `SO_REUSEPORT`.
    pub fn set_reuseport(&self, reuseport: bool) -> io::Result<()> {
        self.inner.set_reuse_port(reuseport)
    }

    /// `SO_REUSEPORT`.
    pub fn reuseport(&self) -> io::Result<bool> {
        self.inner.reuse_port()
    }

    /// `SO_SNDBUF`.
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        self.inner.set_send_buffer_size(size as usize)
    }

    /// `SO_SNDBUF`.
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        self.inner.send_buffer_size().map(|n| n as u32)
    }

    /// `SO_RCVBUF`.
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        self.inner.set_recv_buffer_size(size as usize)
    }

    /// `SO_RCVBUF`.
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        self.inner.recv_buffer_size().map(|n| n as u32)
    }

    /// `SO_LINGER`.
    pub fn set_linger(&self, dur: Option<Duration>) -> io::Result<()> {
        self.inner.set_linger(dur)
    }

    /// `SO_KEEPALIVE`.
    pub fn set_keepalive(&self, keepalive: bool) -> io::Result<()> {
        self.inner.set_keepalive(keepalive)
    }

    /// `SO_KEEPALIVE`.
    pub fn keepalive(&self) -> io::Result<bool> {
        self.inner.keepalive()
    }

    /// `SO_LINGER`.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        self.inner.linger()
    }

    /// `SO_LINGER` of zero: closing the connection resets it (RST) instead
    /// of the orderly shutdown, and drops unsent data.
    pub fn set_zero_linger(&self) -> io::Result<()> {
        self.inner.set_linger(Some(Duration::ZERO))
    }

    crate::net::ip_options!();

    /// `TCP_NODELAY`.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.inner.set_tcp_nodelay(nodelay)
    }

    /// `TCP_NODELAY`.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.inner.tcp_nodelay()
    }

    /// Bind to a local address.
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        self.inner.bind(&addr.into())
    }

    /// The bound local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner
            .local_addr()?
            .as_socket()
            .ok_or_else(|| io::Error::other("not an IP socket"))
    }

    /// The pending socket error, if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.take_error()
    }

    /// Connect, consuming the socket. Resolves once the connection is
    /// established (or fails with the connect error).
    pub async fn connect(self, addr: SocketAddr) -> io::Result<TcpStream> {
        let driver = crate::runtime::io::registration::current_driver();
        // With the io_uring driver, the ring makes the connect and reports
        // its outcome (no wait for writability, no `SO_ERROR` read).
        let inner =
            match crate::runtime::io::uring::ConnectOp::new(&driver, self.inner, &addr.into()) {
                Ok(connect) => {
                    let std = std::net::TcpStream::from(connect.await?);
                    return TcpStream::from_mio(mio::net::TcpStream::from_std(std));
                }
                Err(inner) => inner,
            };
        let this = TcpSocket { inner };
        match this.inner.connect(&addr.into()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        let std = std::net::TcpStream::from(this.inner);
        TcpStream::connect_mio(mio::net::TcpStream::from_std(std)).await
    }

    /// Listen with the given backlog, consuming the socket.
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        self.inner.listen(backlog.min(i32::MAX as u32) as i32)?;
        let std = std::net::TcpListener::from(self.inner);
        TcpListener::from_mio(mio::net::TcpListener::from_std(std))
    }

    /// Wrap a std stream's socket (e.g. to set options on an accepted one).
    pub fn from_std_stream(stream: std::net::TcpStream) -> TcpSocket {
        // SAFETY: `into_raw_fd` hands us sole ownership of the descriptor.
        let inner = unsafe { socket2::Socket::from_raw_fd(stream.into_raw_fd()) };
        TcpSocket { inner }
    }
}

impl fmt::Debug for TcpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpSocket")
            .field("fd", &self.inner.as_raw_fd())
            .finish()
    }
}

impl AsRawFd for TcpSocket {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.inner.as_raw_fd()
    }
}

impl std::os::fd::AsFd for TcpSocket {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.inner.as_fd()
    }
}

/// Takes ownership of a socket descriptor, as Tokio's does; the caller
/// must hand over an open TCP socket, which weft then uses in non-blocking
/// mode.
impl std::os::fd::FromRawFd for TcpSocket {
    unsafe fn from_raw_fd(fd: std::os::fd::RawFd) -> TcpSocket {
        // SAFETY: the caller passes an open socket it owns (this trait's
        // contract), which the socket2 value then owns.
        let inner = unsafe { socket2::Socket::from_raw_fd(fd) };
        // As `from_std` does for the net types (README): a blocking socket
        // would block a worker in `connect`. A descriptor that refuses is
        // not a socket, and its first call says so.
        let _ = inner.set_nonblocking(true);
        TcpSocket { inner }
    }
}

impl std::os::fd::IntoRawFd for TcpSocket {
    fn into_raw_fd(self) -> std::os::fd::RawFd {
        self.inner.into_raw_fd()
    }
}
