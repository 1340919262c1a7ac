//! The real `tokio` crate's I/O traits on weft's types (feature `tokio-io`).
//!
//! Owns: [`TokioIo`], which adapts between weft's traits and Tokio's in both
//! directions, and the direct impls of Tokio's traits on weft's own I/O
//! types, for programs that use libraries built on crates.io Tokio (codecs,
//! TLS wrappers) without the `tokio` shim. Only Tokio's trait definitions
//! are used (Tokio is built without default features); no Tokio runtime is
//! involved. The traits have the same shapes, so every conversion is a
//! forward; reads pass the other side's uninitialised buffer through, with
//! no zeroing and no copy.
//!
//! A type implementing both trait families makes method calls ambiguous
//! when both `weft::io::AsyncReadExt` and `tokio::io::AsyncReadExt` are in
//! scope; import one per module, or call through the trait.
//!
//! ```
//! use weft::compat::TokioIo;
//! use weft::io::AsyncWriteExt;
//!
//! # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let (mut a, b) = weft::io::duplex(64);
//! a.write_all(b"hi").await?;
//! drop(a);
//! // `b` seen through Tokio's trait, wrapped or not.
//! fn tokio_reader(_: &impl tokio::io::AsyncRead) {}
//! tokio_reader(&b);
//! tokio_reader(&TokioIo::new(b));
//! # weft::io::Result::Ok(())
//! # }).unwrap();
//! ```

use crate::io::{AsyncBufRead, AsyncRead, AsyncWrite, ReadBuf};
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Adapts between weft's I/O traits and the `tokio` crate's, both ways:
/// `T` with weft's traits gives `TokioIo<T>` Tokio's, and `T` with Tokio's
/// gives `TokioIo<T>` weft's (so weft's `AsyncReadExt` and friends work on
/// it). Covers `AsyncRead`, `AsyncWrite` and `AsyncBufRead`.
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioIo<T> {
    inner: T,
}

impl<T> TokioIo<T> {
    /// Wrap `inner`.
    pub fn new(inner: T) -> Self {
        TokioIo { inner }
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
        // SAFETY: `inner` is structurally pinned: `TokioIo` has no `Drop`
        // impl, is not `#[repr(packed)]`, is `Unpin` only when `T` is (the
        // auto impl), and never moves `inner` out of a pinned `TokioIo`
        // (the `&mut T` accessors need an unpinned `&mut self`).
        unsafe { self.map_unchecked_mut(|io| &mut io.inner) }
    }
}

/// Tokio's `poll_read` on top of a weft reader: the weft `ReadBuf` borrows
/// Tokio's unfilled memory as it is.
fn read_into_tokio_buf<R: AsyncRead + ?Sized>(
    reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    buf: &mut tokio::io::ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    let n = {
        // SAFETY: weft's `ReadBuf` only writes initialised bytes into the
        // slice and never de-initialises any.
        let unfilled = unsafe { buf.unfilled_mut() };
        let mut weft_buf = ReadBuf::uninit(unfilled);
        ready!(reader.poll_read(cx, &mut weft_buf))?;
        weft_buf.filled().len()
    };
    // SAFETY: the reader filled (so initialised) the first `n` bytes.
    unsafe { buf.assume_init(n) };
    buf.advance(n);
    Poll::Ready(Ok(()))
}

/// weft's `poll_read` on top of a Tokio reader, the same way round.
fn read_from_tokio<R: tokio::io::AsyncRead + ?Sized>(
    reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    let n = {
        // SAFETY: Tokio's `ReadBuf` only writes initialised bytes into the
        // slice and never de-initialises any.
        let unfilled = unsafe { buf.unfilled_mut() };
        let mut tokio_buf = tokio::io::ReadBuf::uninit(unfilled);
        ready!(reader.poll_read(cx, &mut tokio_buf))?;
        tokio_buf.filled().len()
    };
    // SAFETY: the reader filled (so initialised) the first `n` bytes.
    unsafe { buf.assume_init(n) };
    buf.advance(n);
    Poll::Ready(Ok(()))
}

/// Tokio's traits on weft types, forwarding to their weft impls.
macro_rules! tokio_traits_for {
    (read: [$($g:tt)*] $t:ty $(where $($w:tt)+)?) => {
        impl<$($g)*> tokio::io::AsyncRead for $t $(where $($w)+)? {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                read_into_tokio_buf(self, cx, buf)
            }
        }
    };
    (buf_read: [$($g:tt)*] $t:ty $(where $($w:tt)+)?) => {
        impl<$($g)*> tokio::io::AsyncBufRead for $t $(where $($w)+)? {
            fn poll_fill_buf(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<io::Result<&[u8]>> {
                AsyncBufRead::poll_fill_buf(self, cx)
            }

            fn consume(self: Pin<&mut Self>, amt: usize) {
                AsyncBufRead::consume(self, amt)
            }
        }
    };
    (write: [$($g:tt)*] $t:ty $(where $($w:tt)+)?) => {
        impl<$($g)*> tokio::io::AsyncWrite for $t $(where $($w)+)? {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                AsyncWrite::poll_write(self, cx, buf)
            }

            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[io::IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                AsyncWrite::poll_write_vectored(self, cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                AsyncWrite::is_write_vectored(self)
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                AsyncWrite::poll_flush(self, cx)
            }

            fn poll_shutdown(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<io::Result<()>> {
                AsyncWrite::poll_shutdown(self, cx)
            }
        }
    };
}

use crate::io::{BufReader, BufStream, BufWriter, DuplexStream, SimplexStream};
use crate::net::{tcp, unix, TcpStream, UnixStream};

tokio_traits_for!(read: [] TcpStream);
tokio_traits_for!(write: [] TcpStream);
tokio_traits_for!(read: ['a] tcp::ReadHalf<'a>);
tokio_traits_for!(write: ['a] tcp::WriteHalf<'a>);
tokio_traits_for!(read: [] tcp::OwnedReadHalf);
tokio_traits_for!(write: [] tcp::OwnedWriteHalf);

tokio_traits_for!(read: [] UnixStream);
tokio_traits_for!(write: [] UnixStream);
tokio_traits_for!(read: ['a] unix::ReadHalf<'a>);
tokio_traits_for!(write: ['a] unix::WriteHalf<'a>);
tokio_traits_for!(read: [] unix::OwnedReadHalf);
tokio_traits_for!(write: [] unix::OwnedWriteHalf);

tokio_traits_for!(read: [] DuplexStream);
tokio_traits_for!(write: [] DuplexStream);
tokio_traits_for!(read: [] SimplexStream);
tokio_traits_for!(write: [] SimplexStream);

tokio_traits_for!(read: [R] BufReader<R> where R: AsyncRead);
tokio_traits_for!(buf_read: [R] BufReader<R> where R: AsyncRead);
tokio_traits_for!(write: [R] BufReader<R> where R: AsyncWrite);

tokio_traits_for!(write: [W] BufWriter<W> where W: AsyncWrite);
tokio_traits_for!(read: [W] BufWriter<W> where W: AsyncRead);
tokio_traits_for!(buf_read: [W] BufWriter<W> where W: AsyncBufRead);

tokio_traits_for!(read: [S] BufStream<S> where S: AsyncRead);
tokio_traits_for!(buf_read: [S] BufStream<S> where S: AsyncRead);
tokio_traits_for!(write: [S] BufStream<S> where S: AsyncWrite);

tokio_traits_for!(read: [T] crate::io::ReadHalf<T> where T: AsyncRead);
tokio_traits_for!(write: [T] crate::io::WriteHalf<T> where T: AsyncWrite);

tokio_traits_for!(read: [] crate::fs::File);
tokio_traits_for!(write: [] crate::fs::File);
tokio_traits_for!(read: [] unix::pipe::Receiver);
tokio_traits_for!(write: [] unix::pipe::Sender);
tokio_traits_for!(write: [] crate::process::ChildStdin);
tokio_traits_for!(read: [] crate::process::ChildStdout);
tokio_traits_for!(read: [] crate::process::ChildStderr);

// `TokioIo<T>`, weft → Tokio.
impl<T: AsyncRead> tokio::io::AsyncRead for TokioIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        read_into_tokio_buf(self.pin_inner(), cx, buf)
    }
}

impl<T: AsyncBufRead> tokio::io::AsyncBufRead for TokioIo<T> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.pin_inner().poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.pin_inner().consume(amt)
    }
}

impl<T: AsyncWrite> tokio::io::AsyncWrite for TokioIo<T> {
    crate::io::forward_writes_to_inner!();

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_shutdown(cx)
    }
}

// `TokioIo<T>`, Tokio → weft.
impl<T: tokio::io::AsyncRead> AsyncRead for TokioIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        read_from_tokio(self.pin_inner(), cx, buf)
    }
}

impl<T: tokio::io::AsyncBufRead> AsyncBufRead for TokioIo<T> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.pin_inner().poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.pin_inner().consume(amt)
    }
}

impl<T: tokio::io::AsyncWrite> AsyncWrite for TokioIo<T> {
    crate::io::forward_writes_to_inner!();

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_shutdown(cx)
    }
}
