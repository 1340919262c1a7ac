//! [`Compat`]: weft's I/O traits and futures-io's, in both directions.
//!
//! Owns: the wrapper and its extension traits. The wrapped object is
//! structurally pinned (no `Drop`, never moved out while pinned). A
//! futures-io reader reads into `&mut [u8]`, so reading one through weft's
//! `ReadBuf` zeroes the part of the buffer not yet initialised first (once:
//! the buffer then remembers it is initialised); the other direction is
//! free.

use crate::io::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};
use std::io::{self, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// An I/O object seen through the other trait family: futures-io's traits
/// when `T` has weft's, weft's traits when `T` has futures-io's. Made by the
/// `compat` / `compat_write` methods of this module's extension traits.
///
/// `poll_close` and `poll_shutdown` map to each other. A seek through
/// `Compat` is a two-step weft seek (`start_seek`, then `poll_complete`) or
/// one futures-io `poll_seek`.
#[derive(Debug)]
pub struct Compat<T> {
    inner: T,
    /// A weft seek started on a futures-io object, not yet polled.
    pending_seek: Option<SeekFrom>,
}

impl<T> Compat<T> {
    fn new(inner: T) -> Self {
        Compat {
            inner,
            pending_seek: None,
        }
    }

    /// The wrapped object.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The wrapped object, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Unwrap.
    pub fn into_inner(self) -> T {
        self.inner
    }

    fn project(self: Pin<&mut Self>) -> (Pin<&mut T>, &mut Option<SeekFrom>) {
        // SAFETY: module invariant: `inner` is structurally pinned;
        // `pending_seek` is plain data and never pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above.
        (
            unsafe { Pin::new_unchecked(&mut this.inner) },
            &mut this.pending_seek,
        )
    }

    fn pin_inner(self: Pin<&mut Self>) -> Pin<&mut T> {
        self.project().0
    }
}

/// `.compat()` for futures-io readers: read them with weft's traits.
pub trait FuturesAsyncReadCompatExt: futures_io::AsyncRead {
    /// Wrap `self` so it implements weft's [`AsyncRead`].
    fn compat(self) -> Compat<Self>
    where
        Self: Sized,
    {
        Compat::new(self)
    }
}

impl<T: futures_io::AsyncRead> FuturesAsyncReadCompatExt for T {}

/// `.compat_write()` for futures-io writers: write them with weft's traits.
pub trait FuturesAsyncWriteCompatExt: futures_io::AsyncWrite {
    /// Wrap `self` so it implements weft's [`AsyncWrite`].
    fn compat_write(self) -> Compat<Self>
    where
        Self: Sized,
    {
        Compat::new(self)
    }
}

impl<T: futures_io::AsyncWrite> FuturesAsyncWriteCompatExt for T {}

/// `.compat()` for weft readers: hand them to futures-io code.
pub trait WeftAsyncReadCompatExt: AsyncRead {
    /// Wrap `self` so it implements futures-io's `AsyncRead`.
    fn compat(self) -> Compat<Self>
    where
        Self: Sized,
    {
        Compat::new(self)
    }
}

impl<T: AsyncRead> WeftAsyncReadCompatExt for T {}

/// `.compat_write()` for weft writers: hand them to futures-io code.
pub trait WeftAsyncWriteCompatExt: AsyncWrite {
    /// Wrap `self` so it implements futures-io's `AsyncWrite`.
    fn compat_write(self) -> Compat<Self>
    where
        Self: Sized,
    {
        Compat::new(self)
    }
}

impl<T: AsyncWrite> WeftAsyncWriteCompatExt for T {}

// ---- futures-io object, weft traits ----

impl<T: futures_io::AsyncRead> AsyncRead for Compat<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = ready!(self.pin_inner().poll_read(cx, buf.initialize_unfilled()))?;
        if n > buf.remaining() {
            return Poll::Ready(Err(io::Error::other(
                "futures_io::AsyncRead::poll_read reported more bytes than the buffer holds",
            )));
        }
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl<T: futures_io::AsyncBufRead> AsyncBufRead for Compat<T> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.pin_inner().poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.pin_inner().consume(amt)
    }
}

impl<T: futures_io::AsyncWrite> AsyncWrite for Compat<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.pin_inner().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.pin_inner().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        // futures-io cannot say; its default vectored write (the first
        // non-empty buffer) is correct either way.
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_close(cx)
    }
}

impl<T: futures_io::AsyncSeek> AsyncSeek for Compat<T> {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        *self.project().1 = Some(position);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let (inner, pending) = self.project();
        let position = pending.unwrap_or(SeekFrom::Current(0));
        let pos = ready!(inner.poll_seek(cx, position))?;
        *pending = None;
        Poll::Ready(Ok(pos))
    }
}

// ---- weft object, futures-io traits ----

impl<T: AsyncRead> futures_io::AsyncRead for Compat<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        crate::io::util::poll_read_slice(self.pin_inner(), cx, buf)
    }
}

impl<T: AsyncBufRead> futures_io::AsyncBufRead for Compat<T> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.pin_inner().poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.pin_inner().consume(amt)
    }
}

impl<T: AsyncWrite> futures_io::AsyncWrite for Compat<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.pin_inner().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.pin_inner().poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_shutdown(cx)
    }
}

impl<T: AsyncSeek> futures_io::AsyncSeek for Compat<T> {
    fn poll_seek(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        position: SeekFrom,
    ) -> Poll<io::Result<u64>> {
        let (mut inner, pending) = self.project();
        // `pending` marks a seek started by an earlier, unfinished call.
        if pending.is_none() {
            inner.as_mut().start_seek(position)?;
            *pending = Some(position);
        }
        let pos = ready!(inner.poll_complete(cx))?;
        *pending = None;
        Poll::Ready(Ok(pos))
    }
}
