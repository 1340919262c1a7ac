//! `WeftIo`: hyper's I/O traits on top of weft's (futures-io) streams, and
//! the reverse.

use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Adapts an I/O object between weft's traits (`futures_io::AsyncRead` /
/// `AsyncWrite`, which all of weft's streams implement) and hyper's
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
/// `poll_shutdown` maps to `poll_close`, and vectored writes are passed
/// through: [`is_write_vectored`](hyper::rt::Write::is_write_vectored) says
/// `true`, which lets hyper queue a response's head and body and send them
/// with one `writev` on a [`TcpStream`](crate::net::TcpStream). (A stream
/// without a native vectored write still works: futures-io's default
/// `poll_write_vectored` writes the first non-empty buffer, and hyper
/// writes the rest on the next call.)
///
/// Reading into hyper's uninitialized buffer zeroes the part handed to the
/// reader first, because a futures-io reader takes `&mut [u8]`.
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
impl<T: futures_io::AsyncRead> hyper::rt::Read for WeftIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: `as_mut` requires that no initialized byte is
        // de-initialized through the returned slice. The only thing written
        // through it is zeros (`fill` below), which are initialized.
        let unfilled: &mut [MaybeUninit<u8>] = unsafe { buf.as_mut() };
        unfilled.fill(MaybeUninit::new(0));
        let len = unfilled.len();
        // SAFETY: every one of the `len` bytes was initialized just above,
        // and `MaybeUninit<u8>` has the same layout as `u8`; the new slice
        // borrows `unfilled` exclusively for its lifetime.
        let dst: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(unfilled.as_mut_ptr().cast::<u8>(), len) };
        let n = ready!(self.pin_inner().poll_read(cx, dst))?;
        if n > len {
            return Poll::Ready(Err(io::Error::other(
                "AsyncRead::poll_read reported more bytes than the buffer holds",
            )));
        }
        // SAFETY: `n <= len`, and all `len` bytes after the filled cursor
        // are initialized (zeroed above, then possibly overwritten by the
        // reader).
        unsafe { buf.advance(n) };
        Poll::Ready(Ok(()))
    }
}

// Writes from hyper to a weft stream.
impl<T: futures_io::AsyncWrite> hyper::rt::Write for WeftIo<T> {
    crate::io::forward_writes_to_inner!();

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_close(cx)
    }
}

// The reverse: an object with hyper's traits used as a weft stream.
impl<T: hyper::rt::Read> futures_io::AsyncRead for WeftIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        // An initialized buffer: no unsafe needed on this side.
        let mut rb = hyper::rt::ReadBuf::new(buf);
        ready!(self.pin_inner().poll_read(cx, rb.unfilled()))?;
        Poll::Ready(Ok(rb.filled().len()))
    }
}

impl<T: hyper::rt::Write> futures_io::AsyncWrite for WeftIo<T> {
    crate::io::forward_writes_to_inner!();

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_shutdown(cx)
    }
}
