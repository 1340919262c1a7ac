//! `join`: one read-write object from a reader and a writer.
//!
//! Owns: [`Join`], which forwards reads to its reader and writes to its
//! writer. Both are structurally pinned; `Join` has no `Drop` and is
//! `Unpin` only when both are.

use crate::io::{AsyncBufRead, AsyncRead, AsyncWrite, ReadBuf};
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Joins a reader and a writer into one value that reads from the first and
/// writes to the second (the inverse of [`split`](super::split)).
///
/// ```
/// use weft::io::{AsyncReadExt, AsyncWriteExt};
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let input: &[u8] = b"in";
/// let mut joined = weft::io::join(input, Vec::new());
/// let mut buf = String::new();
/// joined.read_to_string(&mut buf).await?;
/// joined.write_all(b"out").await?;
/// let (_, written) = joined.into_inner();
/// assert_eq!((buf.as_str(), written.as_slice()), ("in", &b"out"[..]));
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub fn join<R, W>(reader: R, writer: W) -> Join<R, W>
where
    R: AsyncRead,
    W: AsyncWrite,
{
    Join { reader, writer }
}

/// A reader and a writer as one value; see [`join`].
#[derive(Debug)]
pub struct Join<R, W> {
    reader: R,
    writer: W,
}

impl<R, W> Join<R, W> {
    /// Split back into the reader and the writer.
    pub fn into_inner(self) -> (R, W) {
        (self.reader, self.writer)
    }

    /// The reader.
    pub fn reader(&self) -> &R {
        &self.reader
    }

    /// The writer.
    pub fn writer(&self) -> &W {
        &self.writer
    }

    /// The reader, mutably.
    pub fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The writer, mutably.
    pub fn writer_mut(&mut self) -> &mut W {
        &mut self.writer
    }

    /// The pinned reader.
    pub fn reader_pin_mut(self: Pin<&mut Self>) -> Pin<&mut R> {
        // SAFETY: module doc: the fields are structurally pinned.
        unsafe { self.map_unchecked_mut(|j| &mut j.reader) }
    }

    /// The pinned writer.
    pub fn writer_pin_mut(self: Pin<&mut Self>) -> Pin<&mut W> {
        // SAFETY: module doc: the fields are structurally pinned.
        unsafe { self.map_unchecked_mut(|j| &mut j.writer) }
    }
}

impl<R: AsyncRead, W> AsyncRead for Join<R, W> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.reader_pin_mut().poll_read(cx, buf)
    }
}

impl<R: AsyncBufRead, W> AsyncBufRead for Join<R, W> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.reader_pin_mut().poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.reader_pin_mut().consume(amt)
    }
}

impl<R, W: AsyncWrite> AsyncWrite for Join<R, W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.writer_pin_mut().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.writer_pin_mut().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.writer.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.writer_pin_mut().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.writer_pin_mut().poll_shutdown(cx)
    }
}
