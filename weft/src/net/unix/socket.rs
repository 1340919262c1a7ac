//! `UnixSocket`: a Unix-domain socket set up before it listens, connects
//! or becomes a datagram socket.
//!
//! Owns: a socket2 socket of type `SOCK_STREAM` or `SOCK_DGRAM`, created
//! non-blocking and close-on-exec, and not yet registered with the I/O
//! driver. The consuming conversions check the type: a stream socket
//! cannot become a [`UnixDatagram`], nor a datagram socket a listener or a
//! stream (that is an error, as in Tokio, not a panic).
//!
//! Invariant: `inner` is the only owner of its descriptor, so handing it
//! to std or mio (`into_raw_fd`/`from_raw_fd`) moves sole ownership.

use super::{UnixDatagram, UnixListener, UnixStream};
use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, RawFd};
use std::path::Path;

/// A Unix-domain socket that has not listened, connected or been turned
/// into a datagram socket yet: bind it, set options on it (through
/// `socket2::SockRef::from(&socket)`), then consume it.
///
/// ```
/// use weft::io::{AsyncReadExt, AsyncWriteExt};
/// use weft::net::UnixSocket;
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("weft-doc-unix-socket-{}", std::process::id()));
/// let _ = std::fs::remove_file(&dir);
/// let server = UnixSocket::new_stream().unwrap();
/// server.bind(&dir).unwrap();
/// let listener = server.listen(16).unwrap();
/// let mut client = UnixSocket::new_stream().unwrap().connect(&dir).await.unwrap();
/// let (mut conn, _) = listener.accept().await.unwrap();
/// client.write_all(b"hi").await.unwrap();
/// let mut got = [0u8; 2];
/// conn.read_exact(&mut got).await.unwrap();
/// assert_eq!(&got, b"hi");
/// std::fs::remove_file(&dir).unwrap();
/// # });
/// ```
pub struct UnixSocket {
    inner: socket2::Socket,
}

impl UnixSocket {
    /// A new `SOCK_DGRAM` socket, to become a [`UnixDatagram`] through
    /// [`datagram`](Self::datagram).
    pub fn new_datagram() -> io::Result<UnixSocket> {
        UnixSocket::new(socket2::Type::DGRAM)
    }

    /// A new `SOCK_STREAM` socket, to become a [`UnixListener`] through
    /// [`listen`](Self::listen) or a [`UnixStream`] through
    /// [`connect`](Self::connect).
    pub fn new_stream() -> io::Result<UnixSocket> {
        UnixSocket::new(socket2::Type::STREAM)
    }

    fn new(ty: socket2::Type) -> io::Result<UnixSocket> {
        let inner = socket2::Socket::new(socket2::Domain::UNIX, ty.nonblocking().cloexec(), None)?;
        Ok(UnixSocket { inner })
    }

    fn is_type(&self, ty: socket2::Type) -> io::Result<bool> {
        Ok(self.inner.r#type()? == ty)
    }

    /// An error naming the conversion `what` that this socket's type rules
    /// out.
    fn wrong_type(what: &str, ty: &str) -> io::Error {
        io::Error::other(format!("{what} cannot be called on a {ty} socket"))
    }

    /// Bind to `path` (a socket file; on Linux, `"\0name"` is the abstract
    /// name `name`).
    pub fn bind(&self, path: impl AsRef<Path>) -> io::Result<()> {
        self.inner.bind(&socket2::SockAddr::unix(path)?)
    }

    /// Listen with the given backlog (capped at `i32::MAX`), consuming the
    /// socket. An error on a datagram socket.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn listen(self, backlog: u32) -> io::Result<UnixListener> {
        if self.is_type(socket2::Type::DGRAM)? {
            return Err(UnixSocket::wrong_type("listen", "datagram"));
        }
        self.inner.listen(backlog.min(i32::MAX as u32) as i32)?;
        let std = std::os::unix::net::UnixListener::from(self.inner);
        UnixListener::from_mio(mio::net::UnixListener::from_std(std))
    }

    /// Connect to the socket listening at `path`, consuming this one;
    /// resolves once the connection is established (or fails with the
    /// connect error). An error on a datagram socket.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    pub async fn connect(self, path: impl AsRef<Path>) -> io::Result<UnixStream> {
        if self.is_type(socket2::Type::DGRAM)? {
            return Err(UnixSocket::wrong_type("connect", "datagram"));
        }
        match self.inner.connect(&socket2::SockAddr::unix(path)?) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        let std = std::os::unix::net::UnixStream::from(self.inner);
        UnixStream::connect_mio(mio::net::UnixStream::from_std(std)).await
    }

    /// Turn the socket into a [`UnixDatagram`] (bound if
    /// [`bind`](Self::bind) was called). An error on a stream socket.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn datagram(self) -> io::Result<UnixDatagram> {
        if self.is_type(socket2::Type::STREAM)? {
            return Err(UnixSocket::wrong_type("datagram", "stream"));
        }
        let std = std::os::unix::net::UnixDatagram::from(self.inner);
        UnixDatagram::from_mio(mio::net::UnixDatagram::from_std(std))
    }
}

impl fmt::Debug for UnixSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixSocket")
            .field("fd", &self.inner.as_raw_fd())
            .finish()
    }
}

impl AsRawFd for UnixSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

impl AsFd for UnixSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.inner.as_fd()
    }
}

impl FromRawFd for UnixSocket {
    /// Take ownership of `fd`, which must be an open Unix-domain socket no
    /// one else owns (and should be non-blocking: the runtime never
    /// blocks waiting on it).
    unsafe fn from_raw_fd(fd: RawFd) -> UnixSocket {
        // SAFETY: the caller hands over sole ownership of an open socket,
        // which is the module's invariant for `inner`.
        let inner = unsafe { socket2::Socket::from_raw_fd(fd) };
        UnixSocket { inner }
    }
}

impl IntoRawFd for UnixSocket {
    fn into_raw_fd(self) -> RawFd {
        self.inner.into_raw_fd()
    }
}
