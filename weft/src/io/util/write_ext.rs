//! `AsyncWriteExt`: `async` methods for every [`AsyncWrite`], and the named
//! futures they return.
//!
//! Owns: `write`, `write_vectored`, `write_buf`, `write_all`,
//! `write_all_buf`, `flush` and `shutdown` (the number writers are in
//! `write_num.rs`). Every future borrows its writer and data, so it is
//! `Unpin`.
//!
//! The looping futures (`write_all`, `write_all_buf`) write again after an
//! [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted), as Tokio's do:
//! it means "nothing happened, try again", and the caller of a
//! whole-buffer write could only retry from the start. The single-call
//! futures (`write`, `write_vectored`, `write_buf`, `flush`, `shutdown`)
//! return it, as one poll of the writer would.

use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::Buf;

use super::write_zero;
use crate::io::AsyncWrite;

/// `async` methods for [`AsyncWrite`] types, with Tokio's names and
/// behaviour. Implemented for every `AsyncWrite`.
///
/// The methods borrow the writer mutably and need it to be `Unpin`; pin a
/// `!Unpin` writer first (`Box::pin` or `std::pin::pin!`).
pub trait AsyncWriteExt: AsyncWrite {
    /// Writes some of `buf`, returning how many bytes were accepted.
    ///
    /// `Ok(0)` usually means the writer can no longer accept data.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, no data
    /// has been written.
    fn write<'a>(&'a mut self, buf: &'a [u8]) -> Write<'a, Self>
    where
        Self: Unpin,
    {
        Write { writer: self, buf }
    }

    /// Writes some of the data in `bufs`, taken in order, returning how many
    /// bytes were accepted. Writers without a vectored path write only the
    /// first non-empty buffer.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, like [`write`](AsyncWriteExt::write).
    fn write_vectored<'a, 'b>(&'a mut self, bufs: &'a [IoSlice<'b>]) -> WriteVectored<'a, 'b, Self>
    where
        Self: Unpin,
    {
        WriteVectored { writer: self, bufs }
    }

    /// Writes all of `buf`, calling `poll_write` as many times as needed.
    ///
    /// Writes that fail with
    /// [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) are retried;
    /// the first other error is returned. Fails with
    /// [`ErrorKind::WriteZero`](io::ErrorKind::WriteZero) if a write accepts
    /// no bytes before `buf` is exhausted.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: if the future is dropped, part of `buf` may have been
    /// written, and a new call starts again from the beginning of `buf`.
    ///
    /// ```
    /// use weft::io::AsyncWriteExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut out: Vec<u8> = Vec::new();
    /// out.write_all(b"hello ").await?;
    /// out.write_all(b"world").await?;
    /// assert_eq!(out, b"hello world");
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn write_all<'a>(&'a mut self, buf: &'a [u8]) -> WriteAll<'a, Self>
    where
        Self: Unpin,
    {
        WriteAll { writer: self, buf }
    }

    /// Writes some of `buf`'s remaining bytes (a `bytes::Buf`), advancing it
    /// past them; returns how many.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped, nothing was written and `buf`
    /// did not advance.
    fn write_buf<'a, B>(&'a mut self, buf: &'a mut B) -> WriteFromBuf<'a, Self, B>
    where
        Self: Unpin,
        B: Buf,
    {
        WriteFromBuf { writer: self, buf }
    }

    /// Writes all of `buf`'s remaining bytes, advancing it as they go.
    ///
    /// Writes that fail with
    /// [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) are retried;
    /// the first other error is returned, with `buf` advanced past exactly
    /// the bytes written before it. Fails with
    /// [`ErrorKind::WriteZero`](io::ErrorKind::WriteZero) if a write accepts
    /// no bytes.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe in that `buf` has advanced past exactly what was written,
    /// so a new call continues where the dropped one stopped.
    ///
    /// ```
    /// use weft::io::AsyncWriteExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut out: Vec<u8> = Vec::new();
    /// let mut src: &[u8] = b"chunked";
    /// out.write_all_buf(&mut src).await?;
    /// assert_eq!((out.as_slice(), src.len()), (&b"chunked"[..], 0));
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn write_all_buf<'a, B>(&'a mut self, buf: &'a mut B) -> WriteAllFromBuf<'a, Self, B>
    where
        Self: Unpin,
        B: Buf,
    {
        WriteAllFromBuf { writer: self, buf }
    }

    /// Flushes buffered data to its destination.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future loses no data: whatever was not yet flushed stays
    /// buffered in the writer, and flushing again continues from there.
    fn flush(&mut self) -> Flush<'_, Self>
    where
        Self: Unpin,
    {
        Flush { writer: self }
    }

    /// Shuts down the write side: flushes, then closes, so the peer sees end
    /// of stream ([`AsyncWrite::poll_shutdown`]).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future loses no data; calling `shutdown` again resumes
    /// the shutdown.
    ///
    /// ```
    /// use weft::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let (mut client, mut server) = weft::io::duplex(64);
    /// client.write_all(b"bye").await?;
    /// client.shutdown().await?;
    /// let mut got = Vec::new();
    /// server.read_to_end(&mut got).await?; // ends: the client shut down
    /// assert_eq!(got, b"bye");
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn shutdown(&mut self) -> Shutdown<'_, Self>
    where
        Self: Unpin,
    {
        Shutdown { writer: self }
    }

    super::write_num::write_num_methods!();
}

impl<W: AsyncWrite + ?Sized> AsyncWriteExt for W {}

/// Future returned by [`AsyncWriteExt::write_buf`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct WriteFromBuf<'a, W: ?Sized, B> {
    writer: &'a mut W,
    buf: &'a mut B,
}

impl<W: AsyncWrite + Unpin + ?Sized, B: Buf> Future for WriteFromBuf<'_, W, B> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if !this.buf.has_remaining() {
            return Poll::Ready(Ok(0));
        }
        let n = ready!(poll_write_chunks(
            Pin::new(&mut *this.writer),
            cx,
            &*this.buf
        ))?;
        this.buf.advance(n);
        Poll::Ready(Ok(n))
    }
}

/// One write of `buf`'s next bytes: several chunks at once where the
/// writer is vectored (as Tokio's `write_buf` and `write_all_buf` do), its
/// first chunk otherwise.
fn poll_write_chunks<W: AsyncWrite + ?Sized, B: Buf>(
    writer: Pin<&mut W>,
    cx: &mut Context<'_>,
    buf: &B,
) -> Poll<io::Result<usize>> {
    const MAX_VECTOR: usize = 64;
    if writer.is_write_vectored() {
        let mut slices = [IoSlice::new(&[]); MAX_VECTOR];
        let count = buf.chunks_vectored(&mut slices);
        writer.poll_write_vectored(cx, &slices[..count])
    } else {
        writer.poll_write(cx, buf.chunk())
    }
}

/// Future returned by [`AsyncWriteExt::write_all_buf`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct WriteAllFromBuf<'a, W: ?Sized, B> {
    writer: &'a mut W,
    buf: &'a mut B,
}

impl<W: AsyncWrite + Unpin + ?Sized, B: Buf> Future for WriteAllFromBuf<'_, W, B> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        while this.buf.has_remaining() {
            let write = poll_write_chunks(Pin::new(&mut *this.writer), cx, &*this.buf);
            let n = match ready!(write) {
                // Nothing was written: write again (see the module doc).
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                res => res?,
            };
            if n == 0 {
                return Poll::Ready(Err(write_zero()));
            }
            this.buf.advance(n);
        }
        Poll::Ready(Ok(()))
    }
}

/// Future returned by [`AsyncWriteExt::write`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct Write<'a, W: ?Sized> {
    writer: &'a mut W,
    buf: &'a [u8],
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for Write<'_, W> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        Pin::new(&mut *this.writer).poll_write(cx, this.buf)
    }
}

/// Future returned by [`AsyncWriteExt::write_vectored`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct WriteVectored<'a, 'b, W: ?Sized> {
    writer: &'a mut W,
    bufs: &'a [IoSlice<'b>],
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for WriteVectored<'_, '_, W> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        Pin::new(&mut *this.writer).poll_write_vectored(cx, this.bufs)
    }
}

/// Future returned by [`AsyncWriteExt::write_all`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct WriteAll<'a, W: ?Sized> {
    writer: &'a mut W,
    /// The part of the caller's buffer not yet written.
    buf: &'a [u8],
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for WriteAll<'_, W> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        while !this.buf.is_empty() {
            let n = match ready!(Pin::new(&mut *this.writer).poll_write(cx, this.buf)) {
                // Nothing was written: write again (see the module doc).
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                res => res?,
            };
            if n == 0 {
                return Poll::Ready(Err(write_zero()));
            }
            this.buf = &this.buf[n.min(this.buf.len())..];
        }
        Poll::Ready(Ok(()))
    }
}

/// Future returned by [`AsyncWriteExt::flush`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct Flush<'a, W: ?Sized> {
    writer: &'a mut W,
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for Flush<'_, W> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut *self.get_mut().writer).poll_flush(cx)
    }
}

/// Future returned by [`AsyncWriteExt::shutdown`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct Shutdown<'a, W: ?Sized> {
    writer: &'a mut W,
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for Shutdown<'_, W> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut *self.get_mut().writer).poll_shutdown(cx)
    }
}
