//! `WeftIo`: hyper's I/O traits on top of weft's streams, and the reverse.

use crate::io::{AsyncRead, AsyncWrite, ReadBuf};
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Adapts an I/O object between weft's traits ([`AsyncRead`] /
/// [`AsyncWrite`], which all of weft's streams implement) and hyper's
/// ([`hyper::rt::Read`] / [`hyper::rt::Write`]).
///
/// Both directions are implemented:
///
/// - wrap a weft stream (a [`TcpStream`](crate::net::TcpStream), a
///   [`DuplexStream`](crate::io::DuplexStream), ...) to hand it to hyper's
///   `serve_connection` or `handshake`;
/// - wrap an object that only speaks hyper's traits (such as
///   `hyper::upgrade::Upgraded`) to use it with [`crate::io`]'s utilities.
///
/// Reads go straight into the other side's uninitialised buffer (both
/// sides read through a buffer that tracks initialisation), and vectored
/// writes are passed through: [`is_write_vectored`](hyper::rt::Write::is_write_vectored)
/// reports the inner object's answer, which on a
/// [`TcpStream`](crate::net::TcpStream) lets hyper send a response's head
/// and body with one `writev`.
#[derive(Debug, Default, Clone, Copy)]
pub struct WeftIo<T> {
    inner: T,
}

impl<T> WeftIo<T> {
    /// Wrap `inner`.
    pub fn new(inner: T) -> Self {
        WeftIo { inner }
    }

    /// The wrapped object.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// The wrapped object, mutably.
    pub fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Unwrap.
    pub fn into_inner(self) -> T {
        self.inner
    }

    fn pin_inner(self: Pin<&mut Self>) -> Pin<&mut T> {
        // SAFETY: `inner` is structurally pinned: `WeftIo` has no `Drop`
        // impl, is not `#[repr(packed)]`, is `Unpin` only when `T` is (the
        // auto impl), and never moves `inner` out of a pinned `WeftIo` (the
        // `&mut T` accessors need an unpinned `&mut self`).
        unsafe { self.map_unchecked_mut(|io| &mut io.inner) }
    }
}

// Reads from a weft stream into hyper's buffer.
impl<T: AsyncRead> hyper::rt::Read for WeftIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let n = {
            // SAFETY: `as_mut` requires that no initialised byte is
            // de-initialised through the slice; weft's `ReadBuf` only ever
            // writes initialised bytes into it.
            let unfilled = unsafe { buf.as_mut() };
            let mut read_buf = ReadBuf::uninit(unfilled);
            ready!(self.pin_inner().poll_read(cx, &mut read_buf))?;
            read_buf.filled().len()
        };
        // SAFETY: the reader filled (so initialised) the first `n` bytes
        // after hyper's cursor.
        unsafe { buf.advance(n) };
        Poll::Ready(Ok(()))
    }
}

// Writes from hyper to a weft stream.
impl<T: AsyncWrite> hyper::rt::Write for WeftIo<T> {
    crate::io::forward_writes_to_inner!();

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_shutdown(cx)
    }
}

// The reverse: an object with hyper's traits used as a weft stream.
impl<T: hyper::rt::Read> AsyncRead for WeftIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = {
            // SAFETY: hyper's `ReadBuf` only writes initialised bytes into
            // the slice and never de-initialises any.
            let unfilled = unsafe { buf.unfilled_mut() };
            let mut hyper_buf = hyper::rt::ReadBuf::uninit(unfilled);
            ready!(self.pin_inner().poll_read(cx, hyper_buf.unfilled()))?;
            hyper_buf.filled().len()
        };
        // SAFETY: hyper's reader filled (so initialised) those `n` bytes.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl<T: hyper::rt::Write> AsyncWrite for WeftIo<T> {
    crate::io::forward_writes_to_inner!();

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_shutdown(cx)
    }
}
