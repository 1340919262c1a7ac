//! Networking: TCP, UDP and Unix-domain sockets on the I/O driver.
//!
//! Every type here needs a runtime built with the I/O driver
//! (`Builder::enable_io` or `enable_all`; `Runtime::new` and the macros
//! enable it). Every read, write, accept and connect spends the task's
//! coop budget.

mod addr;
mod datagram;
pub(crate) use datagram::{datagram_buf_methods, datagram_methods};

/// The readiness methods every socket type has, delegating to its
/// `io: PollEvented<_>` field (`$noun` names the type in the docs).
macro_rules! readiness_methods {
    ($noun:literal) => {
        #[doc = concat!("Wait until the ", $noun, " is ready for any of `interest`. Cancel-safe;")]
        /// any number of tasks may wait at once.
        pub async fn ready(
            &self,
            interest: crate::io::Interest,
        ) -> std::io::Result<crate::io::Ready> {
            if interest.is_readable() {
                // io_uring streams: bytes a receive already brought make
                // the stream readable now (poll_evented.rs).
                if self.io.ring_took_bytes() {
                    return Ok(crate::io::Ready::READABLE);
                }
            }
            if interest.is_writable() {
                // io_uring: a stream is writable once the send in flight
                // ended.
                std::future::poll_fn(|cx| self.io.poll_writes_drained(cx)).await;
            }
            Ok(self.io.readiness(interest).await?.ready)
        }

        #[doc = concat!("Wait until the ", $noun, " may be readable. Cancel-safe.")]
        pub async fn readable(&self) -> std::io::Result<()> {
            self.ready(crate::io::Interest::READABLE).await.map(drop)
        }

        #[doc = concat!("Wait until the ", $noun, " may be writable. Cancel-safe.")]
        pub async fn writable(&self) -> std::io::Result<()> {
            self.ready(crate::io::Interest::WRITABLE).await.map(drop)
        }

        #[doc = concat!("Run `f` once if the ", $noun, " looks ready for `interest`, clearing")]
        /// the readiness if `f` returns `WouldBlock` (for custom syscalls).
        pub fn try_io<R>(
            &self,
            interest: crate::io::Interest,
            f: impl FnOnce() -> std::io::Result<R>,
        ) -> std::io::Result<R> {
            if interest.is_readable() {
                self.io.settle_read();
            }
            if interest.is_writable() {
                if !self.io.writes_idle() {
                    return Err(std::io::ErrorKind::WouldBlock.into());
                }
            }
            self.io.registration().try_io(interest, f)
        }

        /// Wait for `interest`, then run `f`, repeating while it returns
        /// `WouldBlock`.
        pub async fn async_io<R>(
            &self,
            interest: crate::io::Interest,
            f: impl FnMut() -> std::io::Result<R>,
        ) -> std::io::Result<R> {
            if interest.is_readable() {
                self.io.settle_read();
            }
            if interest.is_writable() {
                std::future::poll_fn(|cx| self.io.poll_writes_drained(cx)).await;
            }
            // Once registered, end a ring receive started meanwhile (it
            // would take the bytes this waits for; `f` reads the socket,
            // never bytes a receive kept).
            let settle = || {
                if interest.is_readable() {
                    self.io.settle_read();
                }
                false
            };
            self.io
                .registration()
                .async_io_or(interest, settle, f)
                .await
        }
    };
}
pub(crate) use readiness_methods;

/// The IP-level options Tokio gives both `TcpSocket` and `UdpSocket`
/// (type of service, IPv6 traffic class, the bound device), on
/// `socket2::SockRef::from(self)`.
macro_rules! ip_options {
    () => {
        /// `IP_TOS` (an IPv4 socket's type of service).
        pub fn tos_v4(&self) -> std::io::Result<u32> {
            socket2::SockRef::from(self).tos_v4()
        }

        /// `IP_TOS`; Tokio's older name for [`tos_v4`](Self::tos_v4).
        pub fn tos(&self) -> std::io::Result<u32> {
            self.tos_v4()
        }

        /// Set `IP_TOS`.
        pub fn set_tos_v4(&self, tos: u32) -> std::io::Result<()> {
            socket2::SockRef::from(self).set_tos_v4(tos)
        }

        /// Set `IP_TOS`; Tokio's older name for
        /// [`set_tos_v4`](Self::set_tos_v4).
        pub fn set_tos(&self, tos: u32) -> std::io::Result<()> {
            self.set_tos_v4(tos)
        }

        /// `IPV6_TCLASS` (an IPv6 socket's traffic class).
        pub fn tclass_v6(&self) -> std::io::Result<u32> {
            socket2::SockRef::from(self).tclass_v6()
        }

        /// Set `IPV6_TCLASS`.
        pub fn set_tclass_v6(&self, tclass: u32) -> std::io::Result<()> {
            socket2::SockRef::from(self).set_tclass_v6(tclass)
        }

        /// `SO_BINDTODEVICE`: the interface the socket is bound to, if any
        /// (Linux).
        #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
        pub fn device(&self) -> std::io::Result<Option<Vec<u8>>> {
            socket2::SockRef::from(self).device()
        }

        /// Bind the socket to an interface by name, or unbind it with
        /// `None` (Linux; binding needs `CAP_NET_RAW` on most kernels).
        #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
        pub fn bind_device(&self, interface: Option<&[u8]>) -> std::io::Result<()> {
            socket2::SockRef::from(self).bind_device(interface)
        }
    };
}
pub(crate) use ip_options;

/// The poll-readiness and `try_*` methods of the stream types (TCP, Unix),
/// delegating to their `io: PollEvented<_>` field.
macro_rules! stream_methods {
    () => {
        /// Poll for read readiness (only the last task to poll is woken).
        pub fn poll_read_ready(
            &self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            self.io.poll_read_ready(cx)
        }

        /// Poll for write readiness (only the last task to poll is woken).
        pub fn poll_write_ready(
            &self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::ready!(self.io.poll_writes_drained(cx));
            self.io.registration().poll_write_ready(cx).map_ok(drop)
        }

        /// Read once without waiting: `WouldBlock` if no data is there.
        pub fn try_read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            use std::io::Read as _;
            self.io.settle_read();
            if let Some(r) = self.io.read_leftover(true, |src| {
                let n = src.len().min(buf.len());
                buf[..n].copy_from_slice(&src[..n]);
                n
            }) {
                return r;
            }
            self.io
                .registration()
                .try_io(crate::io::Interest::READABLE, || (&*self.io).read(buf))
        }

        /// [`try_read`](Self::try_read) into `buf`'s spare capacity (not
        /// zeroed first), advancing it.
        pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            self.io.settle_read();
            if let Some(r) = self.io.read_leftover(true, |src| {
                let n = src.len().min(buf.remaining_mut());
                buf.put_slice(&src[..n]);
                n
            }) {
                return r;
            }
            self.io
                .registration()
                .try_io(crate::io::Interest::READABLE, || {
                    crate::net::recv_into_buf_mut(socket2::SockRef::from(self), buf)
                })
        }

        /// Vectored [`try_read`](Self::try_read).
        pub fn try_read_vectored(
            &self,
            bufs: &mut [std::io::IoSliceMut<'_>],
        ) -> std::io::Result<usize> {
            use std::io::Read as _;
            self.io.settle_read();
            if let Some(r) = self.io.read_leftover(true, |mut src| {
                let mut n = 0;
                for buf in bufs.iter_mut() {
                    let k = src.len().min(buf.len());
                    buf[..k].copy_from_slice(&src[..k]);
                    src = &src[k..];
                    n += k;
                }
                n
            }) {
                return r;
            }
            self.io
                .registration()
                .try_io(crate::io::Interest::READABLE, || {
                    (&*self.io).read_vectored(bufs)
                })
        }

        /// Write once without waiting: `WouldBlock` if the send buffer is
        /// full.
        pub fn try_write(&self, buf: &[u8]) -> std::io::Result<usize> {
            use std::io::Write as _;
            // A reset a ring receive took is this write's to report.
            if let Some(e) = self.io.take_stream_error() {
                return Err(e);
            }
            if !self.io.writes_idle() {
                return Err(std::io::ErrorKind::WouldBlock.into());
            }
            self.io
                .registration()
                .try_io(crate::io::Interest::WRITABLE, || (&*self.io).write(buf))
                .map_err(|e| self.io.write_error(e))
        }

        /// Vectored [`try_write`](Self::try_write).
        pub fn try_write_vectored(&self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
            use std::io::Write as _;
            // A reset a ring receive took is this write's to report.
            if let Some(e) = self.io.take_stream_error() {
                return Err(e);
            }
            if !self.io.writes_idle() {
                return Err(std::io::ErrorKind::WouldBlock.into());
            }
            self.io
                .registration()
                .try_io(crate::io::Interest::WRITABLE, || {
                    (&*self.io).write_vectored(bufs)
                })
                .map_err(|e| self.io.write_error(e))
        }
    };
}
pub(crate) use stream_methods;

/// One `recv(2)` (or, with `peek`, `MSG_PEEK`) into `buf`'s unfilled,
/// possibly uninitialised part, advancing it by what arrived.
pub(crate) fn recv_into_read_buf(
    socket: socket2::SockRef<'_>,
    buf: &mut crate::io::ReadBuf<'_>,
    peek: bool,
) -> std::io::Result<()> {
    // SAFETY: recv(2) only writes bytes, never de-initialises any.
    let unfilled = unsafe { buf.unfilled_mut() };
    let n = if peek {
        socket.peek(unfilled)?
    } else {
        socket.recv(unfilled)?
    };
    // SAFETY: recv(2) initialised the first `n` unfilled bytes.
    unsafe { buf.assume_init(n) };
    buf.advance(n);
    Ok(())
}

/// As [`recv_into_read_buf`], returning the sender (`as_addr` turns
/// socket2's address into the socket type's; `None` is an error).
pub(crate) fn recv_from_into_read_buf<A>(
    socket: socket2::SockRef<'_>,
    buf: &mut crate::io::ReadBuf<'_>,
    peek: bool,
    as_addr: impl FnOnce(&socket2::SockAddr) -> Option<A>,
) -> std::io::Result<A> {
    // SAFETY: as in `recv_into_read_buf`.
    let unfilled = unsafe { buf.unfilled_mut() };
    let (n, from) = if peek {
        socket.peek_from(unfilled)?
    } else {
        socket.recv_from(unfilled)?
    };
    // SAFETY: recv(2) initialised the first `n` unfilled bytes.
    unsafe { buf.assume_init(n) };
    buf.advance(n);
    as_addr(&from).ok_or_else(|| std::io::Error::other("sender address of an unexpected family"))
}

/// One `recv(2)` into `buf`'s spare capacity (uninitialised memory is fine:
/// socket2 takes `MaybeUninit` bytes), advancing `buf` by what arrived.
pub(crate) fn recv_into_buf_mut<B: bytes::BufMut>(
    socket: socket2::SockRef<'_>,
    buf: &mut B,
) -> std::io::Result<usize> {
    let spare = buf.chunk_mut();
    // SAFETY: `UninitSlice` is a view of `len` writable bytes; recv(2)
    // only writes them, so viewing them as `MaybeUninit<u8>` is sound.
    let spare = unsafe { spare.as_uninit_slice_mut() };
    let n = socket.recv(spare)?;
    // SAFETY: recv(2) initialised the first `n` bytes of the chunk.
    unsafe { buf.advance_mut(n) };
    Ok(n)
}

/// As [`recv_into_buf_mut`], with the sender's address (`as_addr` turns
/// socket2's into the socket type's; `None` is an error).
pub(crate) fn recv_from_into_buf_mut<B: bytes::BufMut, A>(
    socket: socket2::SockRef<'_>,
    buf: &mut B,
    as_addr: impl FnOnce(&socket2::SockAddr) -> Option<A>,
) -> std::io::Result<(usize, A)> {
    let spare = buf.chunk_mut();
    // SAFETY: as in `recv_into_buf_mut`.
    let spare = unsafe { spare.as_uninit_slice_mut() };
    let (n, from) = socket.recv_from(spare)?;
    // SAFETY: recv(2) initialised the first `n` bytes of the chunk.
    unsafe { buf.advance_mut(n) };
    let from = as_addr(&from)
        .ok_or_else(|| std::io::Error::other("sender address of an unexpected family"))?;
    Ok((n, from))
}
pub(crate) mod halves;
pub mod tcp;
mod udp;
pub mod unix;

pub use addr::{lookup_host, ToSocketAddrs};
pub use tcp::{TcpListener, TcpSocket, TcpStream};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixSocket, UnixStream};
