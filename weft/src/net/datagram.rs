//! The receive and send methods the datagram sockets (`UdpSocket`,
//! `UnixDatagram`) share, as macros over their `io: PollEvented<_>` field.
//!
//! Receives are readiness-based on both I/O drivers
//! (`PollEvented::new_datagram` says why not on the io_uring rings): wait
//! until the socket is readable, then `recv(2)`. Readiness is cleared only
//! on `WouldBlock` (`poll_io`, `async_io`), never on a short datagram,
//! which says nothing about the next one. The `async` receives wait for
//! `$recv_interest`: UDP's include `ERROR`, so that an error alone (an
//! ICMP "port unreachable" on a connected socket) ends a wait with that
//! error, as Tokio's do; Unix datagram sockets wait for readability only,
//! as Tokio's. Sends are `sendto(2)` calls, tried after readiness.

/// The send/recv and `recv_from` methods of the datagram sockets (`$addr`
/// is the sender's address type, `$as_addr` turns socket2's address into
/// it, `$recv_interest` is what the `async` receives wait for).
macro_rules! datagram_methods {
    ($addr:ty, $as_addr:path, $recv_interest:expr) => {
        /// Poll for receive readiness (only the last task to poll is woken).
        pub fn poll_recv_ready(
            &self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            self.io.poll_read_ready(cx)
        }

        /// Poll for send readiness (only the last task to poll is woken).
        pub fn poll_send_ready(
            &self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            self.io.registration().poll_write_ready(cx).map_ok(drop)
        }

        /// Send `buf` to the connected peer; returns the bytes sent.
        /// Cancel-safe.
        pub async fn send(&self, buf: &[u8]) -> std::io::Result<usize> {
            self.async_io(crate::io::Interest::WRITABLE, || self.io.send(buf))
                .await
        }

        /// Poll-style [`send`](Self::send).
        pub fn poll_send(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            self.io.registration().poll_io(
                cx,
                crate::runtime::io::scheduled_io::Direction::Write,
                || self.io.send(buf),
            )
        }

        /// Send once without waiting: `WouldBlock` if the socket is not ready.
        pub fn try_send(&self, buf: &[u8]) -> std::io::Result<usize> {
            self.try_io(crate::io::Interest::WRITABLE, || self.io.send(buf))
        }

        /// Receive one datagram from the connected peer into `buf`; a
        /// datagram longer than `buf` is truncated. Cancel-safe: a
        /// datagram is never lost to a dropped receive.
        pub async fn recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.async_io($recv_interest, || self.io.recv(buf)).await
        }

        /// Poll-style [`recv`](Self::recv), into `buf`'s unfilled part (as
        /// Tokio: the datagram lands in uninitialised memory, not zeroed).
        pub fn poll_recv(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &mut crate::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            self.io.registration().poll_io(
                cx,
                crate::runtime::io::scheduled_io::Direction::Read,
                || crate::net::recv_into_read_buf(socket2::SockRef::from(self), buf, false),
            )
        }

        /// Receive once without waiting: `WouldBlock` if no datagram is
        /// queued.
        pub fn try_recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.try_io(crate::io::Interest::READABLE, || self.io.recv(buf))
        }

        /// Receive one datagram and its sender's address. Cancel-safe: a
        /// datagram is never lost to a dropped receive.
        pub async fn recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $addr)> {
            self.async_io($recv_interest, || {
                let (n, from) = self.io.recv_from(buf)?;
                Ok((n, from.into()))
            })
            .await
        }

        /// Poll-style [`recv_from`](Self::recv_from), into `buf`'s
        /// unfilled part; returns the sender.
        pub fn poll_recv_from(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &mut crate::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<$addr>> {
            self.io.registration().poll_io(
                cx,
                crate::runtime::io::scheduled_io::Direction::Read,
                || {
                    crate::net::recv_from_into_read_buf(
                        socket2::SockRef::from(self),
                        buf,
                        false,
                        $as_addr,
                    )
                },
            )
        }

        /// Receive once without waiting: `WouldBlock` if no datagram is
        /// queued.
        pub fn try_recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $addr)> {
            self.try_io(crate::io::Interest::READABLE, || {
                let (n, from) = self.io.recv_from(buf)?;
                Ok((n, from.into()))
            })
        }
    };
}
pub(crate) use datagram_methods;

/// `recv_buf`, `recv_buf_from` and their `try_` forms for the datagram
/// sockets: receive into a `bytes::BufMut`'s spare capacity (not zeroed
/// first) and advance it. `$addr` is the sender's address type,
/// `$as_addr` turns socket2's address into it, and `$recv_interest` is
/// what the `async` receives wait for.
macro_rules! datagram_buf_methods {
    ($addr:ty, $as_addr:path, $recv_interest:expr) => {
        /// Receive one datagram from the connected peer into `buf`'s spare
        /// capacity, advancing it. Cancel-safe.
        pub async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            self.async_io($recv_interest, || {
                crate::net::recv_into_buf_mut(socket2::SockRef::from(self), buf)
            })
            .await
        }

        /// [`recv_buf`](Self::recv_buf) once, without waiting:
        /// `WouldBlock` if no datagram is queued.
        pub fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            self.try_io(crate::io::Interest::READABLE, || {
                crate::net::recv_into_buf_mut(socket2::SockRef::from(self), buf)
            })
        }

        /// Receive one datagram and its sender into `buf`'s spare
        /// capacity, advancing it. Cancel-safe.
        pub async fn recv_buf_from<B: bytes::BufMut>(
            &self,
            buf: &mut B,
        ) -> std::io::Result<(usize, $addr)> {
            self.async_io($recv_interest, || {
                crate::net::recv_from_into_buf_mut(socket2::SockRef::from(self), buf, $as_addr)
            })
            .await
        }

        /// [`recv_buf_from`](Self::recv_buf_from) once, without waiting.
        pub fn try_recv_buf_from<B: bytes::BufMut>(
            &self,
            buf: &mut B,
        ) -> std::io::Result<(usize, $addr)> {
            self.try_io(crate::io::Interest::READABLE, || {
                crate::net::recv_from_into_buf_mut(socket2::SockRef::from(self), buf, $as_addr)
            })
        }
    };
}
pub(crate) use datagram_buf_methods;
