//! `UdpSocket`: datagrams over IP.
//!
//! Owns: a UDP socket registered with the I/O driver for reads and writes.
//!
//! A datagram read that fills less than the buffer says nothing about
//! whether more datagrams are queued, so unlike the stream sockets every
//! operation here clears readiness only when the kernel answers
//! `WouldBlock` (through `Registration::poll_io` / `async_io`). The `async`
//! methods wait through the registration's multi-waiter `readiness`, so
//! any number of tasks may share one socket (e.g. in an `Arc`); the `poll_*`
//! methods keep one waker per direction, like the stream sockets. The
//! `async` receives and peeks also wake on an error alone (an ICMP "port
//! unreachable" on a connected socket), as Tokio's do, and return it;
//! `poll_*` and `try_*` ones wait for readability only, as Tokio's. Both
//! I/O drivers receive on readiness (`PollEvented::new_datagram` says
//! why not on the rings).

use crate::io::poll_evented::PollEvented;
use crate::io::Interest;
use crate::net::addr::{each_addr, resolve_first, ToSocketAddrs};
use crate::runtime::io::scheduled_io::Direction;
use socket2::SockAddr;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, RawFd};
use std::task::{Context, Poll};

/// What the `async` receives and peeks wait for: readability or an error
/// alone (Tokio's `UdpSocket` does the same; its `poll_*`/`try_*` forms,
/// and `UnixDatagram`'s receives, wait for readability only).
const RECV_INTEREST: Interest = Interest::READABLE.add(Interest::ERROR);

/// A UDP socket.
///
/// One socket can talk to many peers ([`send_to`](Self::send_to) /
/// [`recv_from`](Self::recv_from)), or be [`connect`](Self::connect)ed to
/// one peer and use [`send`](Self::send) / [`recv`](Self::recv). Every
/// method takes `&self`, so a socket can be shared between tasks in an
/// `Arc`, one task sending while another receives.
///
/// ```
/// use weft::net::UdpSocket;
///
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let a = UdpSocket::bind("127.0.0.1:0").await?;
/// let b = UdpSocket::bind("127.0.0.1:0").await?;
/// a.send_to(b"ping", b.local_addr()?).await?;
///
/// let mut buf = [0u8; 16];
/// let (n, from) = b.recv_from(&mut buf).await?;
/// assert_eq!(&buf[..n], b"ping");
/// assert_eq!(from, a.local_addr()?);
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub struct UdpSocket {
    io: PollEvented<mio::net::UdpSocket>,
}

impl UdpSocket {
    /// Bind to `addr` (the first resolved address that works).
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        each_addr(addr, |addr| async move {
            UdpSocket::from_mio(mio::net::UdpSocket::bind(addr)?)
        })
        .await
    }

    #[track_caller]
    fn from_mio(sys: mio::net::UdpSocket) -> io::Result<UdpSocket> {
        Ok(UdpSocket {
            io: PollEvented::new_datagram(sys)?,
        })
    }

    /// Wrap a std socket (it is switched to non-blocking mode).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        UdpSocket::from_mio(mio::net::UdpSocket::from_std(socket))
    }

    /// Deregister and return the std socket (still non-blocking).
    pub fn into_std(self) -> io::Result<std::net::UdpSocket> {
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands us sole ownership of the descriptor.
        Ok(unsafe { std::net::UdpSocket::from_raw_fd(mio.into_raw_fd()) })
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }

    /// The address of the connected peer (`NotConnected` if none).
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.peer_addr()
    }

    /// Set the only peer [`send`](Self::send) sends to and
    /// [`recv`](Self::recv) receives from (the first resolved address that
    /// works).
    pub async fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        each_addr(addr, |addr| async move { self.io.connect(addr) }).await
    }

    crate::net::readiness_methods!("socket");

    crate::net::datagram_methods!(
        std::net::SocketAddr,
        socket2::SockAddr::as_socket,
        RECV_INTEREST
    );

    /// Send `buf` to `target` (its first resolved address). Cancel-safe
    /// once the address is resolved.
    pub async fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], target: A) -> io::Result<usize> {
        let target = first_addr(target).await?;
        self.async_io(Interest::WRITABLE, || self.io.send_to(buf, target))
            .await
    }

    /// Poll-style [`send_to`](Self::send_to), to an already resolved
    /// address.
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.io
            .registration()
            .poll_io(cx, Direction::Write, || self.io.send_to(buf, target))
    }

    /// Send once without waiting: `WouldBlock` if the socket is not ready.
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.try_io(Interest::WRITABLE, || self.io.send_to(buf, target))
    }

    crate::net::datagram_buf_methods!(SocketAddr, socket2::SockAddr::as_socket, RECV_INTEREST);

    crate::net::ip_options!();

    /// Like [`recv`](Self::recv) (from the connected peer), but the
    /// datagram stays queued. Cancel-safe.
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.async_io(RECV_INTEREST, || self.io.peek(buf)).await
    }

    /// Peek once without waiting: `WouldBlock` if no datagram is queued.
    pub fn try_peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.try_io(Interest::READABLE, || self.io.peek(buf))
    }

    /// The sender of the next queued datagram, which stays queued.
    /// Cancel-safe.
    pub async fn peek_sender(&self) -> io::Result<SocketAddr> {
        self.async_io(RECV_INTEREST, || self.peek_sender_now())
            .await
    }

    /// Poll-style [`peek_sender`](Self::peek_sender).
    pub fn poll_peek_sender(&self, cx: &mut Context<'_>) -> Poll<io::Result<SocketAddr>> {
        self.io
            .registration()
            .poll_io(cx, Direction::Read, || self.peek_sender_now())
    }

    /// [`peek_sender`](Self::peek_sender) once, without waiting.
    pub fn try_peek_sender(&self) -> io::Result<SocketAddr> {
        self.try_io(Interest::READABLE, || self.peek_sender_now())
    }

    fn peek_sender_now(&self) -> io::Result<SocketAddr> {
        socket2::SockRef::from(self)
            .peek_sender()?
            .as_socket()
            .ok_or_else(|| io::Error::other("sender is not an IP address"))
    }

    /// Like [`recv_from`](Self::recv_from), but the datagram stays queued.
    /// Cancel-safe.
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.async_io(RECV_INTEREST, || self.io.peek_from(buf))
            .await
    }

    /// Poll-style [`peek_from`](Self::peek_from), into `buf`'s unfilled
    /// part; returns the sender.
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut crate::io::ReadBuf<'_>,
    ) -> Poll<io::Result<SocketAddr>> {
        self.io.registration().poll_io(cx, Direction::Read, || {
            crate::net::recv_from_into_read_buf(
                socket2::SockRef::from(self),
                buf,
                true,
                SockAddr::as_socket,
            )
        })
    }

    /// Poll-style [`peek`](Self::peek), into `buf`'s unfilled part.
    pub fn poll_peek(
        &self,
        cx: &mut Context<'_>,
        buf: &mut crate::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.io.registration().poll_io(cx, Direction::Read, || {
            crate::net::recv_into_read_buf(socket2::SockRef::from(self), buf, true)
        })
    }

    /// Peek once without waiting: `WouldBlock` if no datagram is queued.
    pub fn try_peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.try_io(Interest::READABLE, || self.io.peek_from(buf))
    }

    /// `SO_BROADCAST`: allow sending to broadcast addresses.
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.io.set_broadcast(on)
    }

    /// `SO_BROADCAST`.
    pub fn broadcast(&self) -> io::Result<bool> {
        self.io.broadcast()
    }

    /// `IP_TTL`.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.set_ttl(ttl)
    }

    /// `IP_TTL`.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.ttl()
    }

    /// `IP_MULTICAST_LOOP`: whether IPv4 multicast sent here loops back.
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        self.io.set_multicast_loop_v4(on)
    }

    /// `IP_MULTICAST_LOOP`.
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        self.io.multicast_loop_v4()
    }

    /// `IP_MULTICAST_TTL`.
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        self.io.set_multicast_ttl_v4(ttl)
    }

    /// `IP_MULTICAST_TTL`.
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        self.io.multicast_ttl_v4()
    }

    /// `IPV6_MULTICAST_LOOP`.
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        self.io.set_multicast_loop_v6(on)
    }

    /// `IPV6_MULTICAST_LOOP`.
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        self.io.multicast_loop_v6()
    }

    /// Join the IPv4 multicast group `multiaddr` on the interface with
    /// address `interface` (`0.0.0.0` lets the system choose).
    pub fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.join_multicast_v4(&multiaddr, &interface)
    }

    /// Join the IPv6 multicast group `multiaddr` on interface index
    /// `interface` (0 lets the system choose).
    pub fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.join_multicast_v6(multiaddr, interface)
    }

    /// Leave an IPv4 multicast group (see
    /// [`join_multicast_v4`](Self::join_multicast_v4)).
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.leave_multicast_v4(&multiaddr, &interface)
    }

    /// Leave an IPv6 multicast group (see
    /// [`join_multicast_v6`](Self::join_multicast_v6)).
    pub fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.leave_multicast_v6(multiaddr, interface)
    }

    /// The pending socket error, if any (e.g. an ICMP "port unreachable"
    /// for a connected socket).
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.take_error()
    }
}

/// The first address `addr` resolves to.
async fn first_addr<A: ToSocketAddrs>(addr: A) -> io::Result<SocketAddr> {
    resolve_first(addr)
        .await?
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no addresses to send data to"))
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpSocket")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}

impl AsRawFd for UdpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl AsFd for UdpSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor stays open as long as `self` is borrowed.
        unsafe { BorrowedFd::borrow_raw(self.io.as_raw_fd()) }
    }
}

/// The same as [`UdpSocket::from_std`], as Tokio's `TryFrom`.
impl TryFrom<std::net::UdpSocket> for UdpSocket {
    type Error = std::io::Error;

    fn try_from(std: std::net::UdpSocket) -> std::io::Result<UdpSocket> {
        UdpSocket::from_std(std)
    }
}
