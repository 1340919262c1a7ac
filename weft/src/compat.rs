//! Compatibility with Tokio's I/O traits (feature `tokio-io`).
//!
//! weft's I/O traits are futures-io's. Libraries written against
//! `tokio::io::AsyncRead` / `AsyncWrite` (codecs, TLS wrappers, Tokio's own
//! `io-util` helpers) take weft's streams in two ways:
//!
//! - directly: [`TcpStream`] and its split halves, [`DuplexStream`],
//!   [`BufReader`], [`BufWriter`] and the halves of
//!   [`io::split`](crate::io::split) implement Tokio's traits as well as
//!   futures-io's;
//! - through [`TokioIo`], which adapts any futures-io object to Tokio's
//!   traits, and any Tokio-trait object to futures-io's.
//!
//! Only Tokio's trait definitions are used (Tokio is built without default
//! features); no Tokio runtime is involved.
//!
//! A type implementing both trait families makes method calls ambiguous when
//! both `weft::io::AsyncReadExt` and `tokio::io::AsyncReadExt` are imported
//! in the same scope; import one of them per module, or call through the
//! trait (`tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut buf)`).
//!
//! ```
//! use weft::compat::TokioIo;
//! use weft::io::AsyncWriteExt;
//!
//! # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let (mut a, b) = weft::io::duplex(64);
//! a.write_all(b"hi").await?;
//! drop(a);
//! // `b` seen through Tokio's trait.
//! fn tokio_reader(_: &impl tokio::io::AsyncRead) {}
//! tokio_reader(&TokioIo::new(b));
//! # weft::io::Result::Ok(())
//! # }).unwrap();
//! ```

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Adapts between futures-io's and Tokio's I/O traits, in both directions.
///
/// - `T: futures_io::AsyncRead` (any weft stream) gives
///   `TokioIo<T>: tokio::io::AsyncRead`; likewise for `AsyncWrite` and
///   `AsyncBufRead`.
/// - `T: tokio::io::AsyncRead` gives `TokioIo<T>: futures_io::AsyncRead`
///   (so weft's [`AsyncReadExt`](crate::io::AsyncReadExt) and friends work
///   on it); likewise for `AsyncWrite` and `AsyncBufRead`.
///
/// `poll_shutdown` and `poll_close` map to each other.
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

/// Tokio's `poll_read` on top of a futures-io reader: read into the
/// initialized unfilled part of `buf`, then advance.
fn read_into_tokio_buf<R: futures_io::AsyncRead + ?Sized>(
    reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    buf: &mut tokio::io::ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    let n = ready!(reader.poll_read(cx, buf.initialize_unfilled()))?;
    if n > buf.remaining() {
        return Poll::Ready(Err(io::Error::other(
            "AsyncRead::poll_read reported more bytes than the buffer holds",
        )));
    }
    buf.advance(n);
    Poll::Ready(Ok(()))
}

/// futures-io's `poll_read` on top of a Tokio reader.
fn read_from_tokio<R: tokio::io::AsyncRead + ?Sized>(
    reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    buf: &mut [u8],
) -> Poll<io::Result<usize>> {
    let mut rb = tokio::io::ReadBuf::new(buf);
    ready!(reader.poll_read(cx, &mut rb))?;
    Poll::Ready(Ok(rb.filled().len()))
}

// ---- futures-io object seen through Tokio's traits ----

/// Implements Tokio's traits for weft types by forwarding to their
/// futures-io impls. `vectored` is what `is_write_vectored` reports.
macro_rules! futures_to_tokio {
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
    (read_uninit: [$($g:tt)*] $t:ty) => {
        impl<$($g)*> tokio::io::AsyncRead for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                read_uninit_into_tokio_buf(&*self, cx, buf)
            }
        }
    };
    (buf_read: [$($g:tt)*] $t:ty $(where $($w:tt)+)?) => {
        impl<$($g)*> tokio::io::AsyncBufRead for $t $(where $($w)+)? {
            fn poll_fill_buf(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<io::Result<&[u8]>> {
                futures_io::AsyncBufRead::poll_fill_buf(self, cx)
            }

            fn consume(self: Pin<&mut Self>, amt: usize) {
                futures_io::AsyncBufRead::consume(self, amt)
            }
        }
    };
    (write($vectored:expr): [$($g:tt)*] $t:ty $(where $($w:tt)+)?) => {
        impl<$($g)*> tokio::io::AsyncWrite for $t $(where $($w)+)? {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                futures_io::AsyncWrite::poll_write(self, cx, buf)
            }

            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[io::IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                futures_io::AsyncWrite::poll_write_vectored(self, cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                $vectored
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                futures_io::AsyncWrite::poll_flush(self, cx)
            }

            fn poll_shutdown(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<io::Result<()>> {
                futures_io::AsyncWrite::poll_close(self, cx)
            }
        }
    };
}

/// A socket read straight into the unfilled part of Tokio's buffer (no
/// zeroing: see `PollEvented::poll_read_uninit`).
fn read_uninit_into_tokio_buf(
    stream: &impl crate::net::halves::ReadUninit,
    cx: &mut Context<'_>,
    buf: &mut tokio::io::ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    // SAFETY: `unfilled_mut` requires that no initialized byte is
    // de-initialized through it; the reader only writes bytes read from the
    // socket.
    let unfilled = unsafe { buf.unfilled_mut() };
    let n = ready!(stream.poll_read_uninit(cx, unfilled))?;
    // SAFETY: the reader initialized the first `n` bytes of `unfilled`.
    unsafe { buf.assume_init(n) };
    buf.advance(n);
    Poll::Ready(Ok(()))
}

use crate::io::{BufReader, BufWriter, DuplexStream};
use crate::net::tcp::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
use crate::net::TcpStream;

// TCP: reads go straight into the unfilled buffer; a real `writev`
// underneath.
futures_to_tokio!(read_uninit: [] TcpStream);
futures_to_tokio!(write(true): [] TcpStream);
futures_to_tokio!(read_uninit: ['a] ReadHalf<'a>);
futures_to_tokio!(write(true): ['a] WriteHalf<'a>);
futures_to_tokio!(read_uninit: [] OwnedReadHalf);
futures_to_tokio!(write(true): [] OwnedWriteHalf);

// Unix streams: the same shape.
futures_to_tokio!(read_uninit: [] crate::net::UnixStream);
futures_to_tokio!(write(true): [] crate::net::UnixStream);
futures_to_tokio!(read_uninit: ['a] crate::net::unix::ReadHalf<'a>);
futures_to_tokio!(write(true): ['a] crate::net::unix::WriteHalf<'a>);
futures_to_tokio!(read_uninit: [] crate::net::unix::OwnedReadHalf);
futures_to_tokio!(write(true): [] crate::net::unix::OwnedWriteHalf);

futures_to_tokio!(read: [] DuplexStream);
futures_to_tokio!(write(false): [] DuplexStream);

futures_to_tokio!(read: [R] BufReader<R> where R: futures_io::AsyncRead);
futures_to_tokio!(buf_read: [R] BufReader<R> where R: futures_io::AsyncRead);
futures_to_tokio!(write(false): [R] BufReader<R> where R: futures_io::AsyncWrite);

futures_to_tokio!(write(false): [W] BufWriter<W> where W: futures_io::AsyncWrite);
futures_to_tokio!(read: [W] BufWriter<W> where W: futures_io::AsyncRead);
futures_to_tokio!(buf_read: [W] BufWriter<W> where W: futures_io::AsyncBufRead);

futures_to_tokio!(read: [T] crate::io::ReadHalf<T> where T: futures_io::AsyncRead);
futures_to_tokio!(write(false): [T] crate::io::WriteHalf<T> where T: futures_io::AsyncWrite);

// `TokioIo<T>`, futures-io → Tokio.
impl<T: futures_io::AsyncRead> tokio::io::AsyncRead for TokioIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        read_into_tokio_buf(self.pin_inner(), cx, buf)
    }
}

impl<T: futures_io::AsyncBufRead> tokio::io::AsyncBufRead for TokioIo<T> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.pin_inner().poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.pin_inner().consume(amt)
    }
}

impl<T: futures_io::AsyncWrite> tokio::io::AsyncWrite for TokioIo<T> {
    crate::io::forward_writes_to_inner!();

    fn is_write_vectored(&self) -> bool {
        // futures-io cannot say; its default vectored write (first
        // non-empty buffer) is correct either way, and weft's TCP types
        // write natively.
        true
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_close(cx)
    }
}

// `TokioIo<T>`, Tokio → futures-io.
impl<T: tokio::io::AsyncRead> futures_io::AsyncRead for TokioIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        read_from_tokio(self.pin_inner(), cx, buf)
    }
}

impl<T: tokio::io::AsyncBufRead> futures_io::AsyncBufRead for TokioIo<T> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.pin_inner().poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.pin_inner().consume(amt)
    }
}

impl<T: tokio::io::AsyncWrite> futures_io::AsyncWrite for TokioIo<T> {
    crate::io::forward_writes_to_inner!();

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_shutdown(cx)
    }
}
