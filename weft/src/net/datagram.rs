//! The receive and send methods the datagram sockets (`UdpSocket`,
//! `UnixDatagram`) share, as macros over their `io: PollEvented<_>` field.
//!
//! Two ways to receive, chosen per socket when it is made
//! (`PollEvented::new_datagram`):
//! - **Readiness** (epoll): wait until the socket is readable, then
//!   `recv(2)`. Readiness is cleared only on `WouldBlock` (`poll_io`),
//!   never on a short datagram, which says nothing about the next one.
//! - **io_uring**: the `async` and `poll_` receives take a datagram a
//!   `recvmsg` on the ring brought (runtime/io/uring/datagram.rs). The
//!   readiness-based ones (`try_*`, peeks, `try_io`) first end that
//!   receive and take its datagram if it brought one, then the socket's:
//!   so each datagram is received once, in order, whichever way a program
//!   mixes them.
//!
//! Sends are `sendto(2)` calls (datagram.rs in the ring module says why).

use crate::io::ReadBuf;
use socket2::SockAddr;
use std::io;

// What a received datagram's bytes and sender are put into: each `to_*`
// makes the function `PollEvented::poll_recv_datagram` and `take_datagram`
// hand them to. A datagram is truncated to the room there, the rest
// dropped, as `recv(2)` does.

/// Turns socket2's sender address into the socket type's (`None`: an
/// address of another family, an error).
pub(crate) type Sender<A> = fn(&SockAddr) -> Option<A>;

/// Into a slice; the length put.
pub(crate) fn to_slice(
    dst: &mut [u8],
) -> impl FnOnce(&[u8], &SockAddr) -> io::Result<usize> + use<'_> {
    move |data, _| {
        let n = data.len().min(dst.len());
        dst[..n].copy_from_slice(&data[..n]);
        Ok(n)
    }
}

/// Into a slice, with the sender.
pub(crate) fn to_slice_from<A>(
    dst: &mut [u8],
    as_addr: Sender<A>,
) -> impl FnOnce(&[u8], &SockAddr) -> io::Result<(usize, A)> + use<'_, A> {
    move |data, from| {
        let n = to_slice(dst)(data, from)?;
        Ok((n, sender(from, as_addr)?))
    }
}

/// Into a `ReadBuf`'s unfilled part, returning the sender.
pub(crate) fn to_read_buf_from<'a, 'b, A>(
    buf: &'a mut ReadBuf<'b>,
    as_addr: Sender<A>,
) -> impl FnOnce(&[u8], &SockAddr) -> io::Result<A> + use<'a, 'b, A> {
    move |data, from| {
        let n = data.len().min(buf.remaining());
        buf.put_slice(&data[..n]);
        sender(from, as_addr)
    }
}

/// Into a `ReadBuf`'s unfilled part.
pub(crate) fn to_read_buf<'a, 'b>(
    buf: &'a mut ReadBuf<'b>,
) -> impl FnOnce(&[u8], &SockAddr) -> io::Result<()> + use<'a, 'b> {
    move |data, _| {
        let n = data.len().min(buf.remaining());
        buf.put_slice(&data[..n]);
        Ok(())
    }
}

/// Into a `BufMut`'s current spare chunk (what a `recv(2)` into it would
/// have had), advancing it; the length put.
pub(crate) fn to_buf_mut<B: bytes::BufMut>(
    buf: &mut B,
) -> impl FnOnce(&[u8], &SockAddr) -> io::Result<usize> + use<'_, B> {
    move |data, _| {
        let chunk = buf.chunk_mut();
        let n = data.len().min(chunk.len());
        chunk[..n].copy_from_slice(&data[..n]);
        // SAFETY: the first `n` bytes of the chunk were just written.
        unsafe { buf.advance_mut(n) };
        Ok(n)
    }
}

/// Into a `BufMut`, with the sender.
pub(crate) fn to_buf_mut_from<B: bytes::BufMut, A>(
    buf: &mut B,
    as_addr: Sender<A>,
) -> impl FnOnce(&[u8], &SockAddr) -> io::Result<(usize, A)> + use<'_, B, A> {
    move |data, from| {
        let n = to_buf_mut(buf)(data, from)?;
        Ok((n, sender(from, as_addr)?))
    }
}

/// The sender's address in the socket type's form.
pub(crate) fn sender<A>(from: &SockAddr, as_addr: Sender<A>) -> io::Result<A> {
    as_addr(from).ok_or_else(|| io::Error::other("sender address of an unexpected family"))
}

/// The send/recv and `recv_from` methods of the datagram sockets (`$addr`
/// is the sender's address type, `$as_addr` turns socket2's address into
/// it).
macro_rules! datagram_methods {
    ($addr:ty, $as_addr:path) => {
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
            self.io.arm_write_interest();
            std::task::ready!(self.io.poll_writes_drained(cx));
            self.io.registration().poll_write_ready(cx).map_ok(drop)
        }

        /// Send `buf` to the connected peer; returns the bytes sent.
        /// Cancel-safe.
        pub async fn send(&self, buf: &[u8]) -> std::io::Result<usize> {
            if let Some(sent) = self.io.send_now(|| self.io.send(buf)) {
                return sent;
            }
            self.async_io(crate::io::Interest::WRITABLE, || self.io.send(buf))
                .await
        }

        /// Poll-style [`send`](Self::send).
        pub fn poll_send(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            if let Some(sent) = self.io.send_now(|| self.io.send(buf)) {
                return std::task::Poll::Ready(sent);
            }
            self.io.registration().poll_io(
                cx,
                crate::runtime::io::scheduled_io::Direction::Write,
                || self.io.send(buf),
            )
        }

        /// Send once without waiting: `WouldBlock` if the socket is not ready.
        pub fn try_send(&self, buf: &[u8]) -> std::io::Result<usize> {
            if let Some(sent) = self.io.send_now(|| self.io.send(buf)) {
                return sent;
            }
            self.try_io(crate::io::Interest::WRITABLE, || self.io.send(buf))
        }

        /// Receive one datagram from the connected peer into `buf`; a
        /// datagram longer than `buf` is truncated. Cancel-safe: a
        /// datagram is never lost to a dropped receive.
        pub async fn recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.io.receives_on_ring() {
                return std::future::poll_fn(|cx| {
                    self.io
                        .poll_recv_datagram(cx, crate::net::datagram::to_slice(buf))
                })
                .await;
            }
            self.async_io(crate::io::Interest::READABLE, || self.io.recv(buf))
                .await
        }

        /// Poll-style [`recv`](Self::recv), into `buf`'s unfilled part (as
        /// Tokio: the datagram lands in uninitialised memory, not zeroed).
        pub fn poll_recv(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &mut crate::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            if self.io.receives_on_ring() {
                return self
                    .io
                    .poll_recv_datagram(cx, crate::net::datagram::to_read_buf(buf));
            }
            self.io.registration().poll_io(
                cx,
                crate::runtime::io::scheduled_io::Direction::Read,
                || crate::net::recv_into_read_buf(socket2::SockRef::from(self), buf, false),
            )
        }

        /// Receive once without waiting: `WouldBlock` if no datagram is
        /// queued.
        pub fn try_recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            if let Some(taken) = self
                .io
                .take_datagram(true, crate::net::datagram::to_slice(buf))
            {
                return taken;
            }
            self.try_io(crate::io::Interest::READABLE, || self.io.recv(buf))
        }

        /// Receive one datagram and its sender's address. Cancel-safe: a
        /// datagram is never lost to a dropped receive.
        pub async fn recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $addr)> {
            if self.io.receives_on_ring() {
                return std::future::poll_fn(|cx| {
                    self.io
                        .poll_recv_datagram(cx, crate::net::datagram::to_slice_from(buf, $as_addr))
                })
                .await;
            }
            self.async_io(crate::io::Interest::READABLE, || {
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
            if self.io.receives_on_ring() {
                return self
                    .io
                    .poll_recv_datagram(cx, crate::net::datagram::to_read_buf_from(buf, $as_addr));
            }
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
            if let Some(taken) = self
                .io
                .take_datagram(true, crate::net::datagram::to_slice_from(buf, $as_addr))
            {
                return taken;
            }
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
/// first) and advance it. `$addr` is the sender's address type and
/// `$as_addr` turns socket2's address into it.
macro_rules! datagram_buf_methods {
    ($addr:ty, $as_addr:path) => {
        /// Receive one datagram from the connected peer into `buf`'s spare
        /// capacity, advancing it. Cancel-safe.
        pub async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            if self.io.receives_on_ring() {
                return std::future::poll_fn(|cx| {
                    self.io
                        .poll_recv_datagram(cx, crate::net::datagram::to_buf_mut(buf))
                })
                .await;
            }
            self.async_io(crate::io::Interest::READABLE, || {
                crate::net::recv_into_buf_mut(socket2::SockRef::from(self), buf)
            })
            .await
        }

        /// [`recv_buf`](Self::recv_buf) once, without waiting:
        /// `WouldBlock` if no datagram is queued.
        pub fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            if let Some(taken) = self
                .io
                .take_datagram(true, crate::net::datagram::to_buf_mut(buf))
            {
                return taken;
            }
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
            if self.io.receives_on_ring() {
                return std::future::poll_fn(|cx| {
                    self.io.poll_recv_datagram(
                        cx,
                        crate::net::datagram::to_buf_mut_from(buf, $as_addr),
                    )
                })
                .await;
            }
            self.async_io(crate::io::Interest::READABLE, || {
                crate::net::recv_from_into_buf_mut(socket2::SockRef::from(self), buf, $as_addr)
            })
            .await
        }

        /// [`recv_buf_from`](Self::recv_buf_from) once, without waiting.
        pub fn try_recv_buf_from<B: bytes::BufMut>(
            &self,
            buf: &mut B,
        ) -> std::io::Result<(usize, $addr)> {
            if let Some(taken) = self
                .io
                .take_datagram(true, crate::net::datagram::to_buf_mut_from(buf, $as_addr))
            {
                return taken;
            }
            self.try_io(crate::io::Interest::READABLE, || {
                crate::net::recv_from_into_buf_mut(socket2::SockRef::from(self), buf, $as_addr)
            })
        }
    };
}
pub(crate) use datagram_buf_methods;
