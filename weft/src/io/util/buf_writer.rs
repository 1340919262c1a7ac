//! `BufWriter`: adds an in-memory write buffer to any writer.
//!
//! Owns: the write buffer. Invariant: `buf.len() <= capacity`, and
//! `buf[written..]` is data accepted from the caller but not yet accepted by
//! the inner writer (`buf[..written]` has been, during a partial flush).
//! Writes that would not fit are preceded by a flush of the buffer; writes at
//! least as large as the buffer then go straight to the inner writer.
//! Writing out the buffer retries the inner writer's `Interrupted` errors,
//! as Tokio's `BufWriter` does; a write that passes straight through returns
//! them, as the inner writer would.

use std::io::{self, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::io::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};

use super::buf_reader::DEFAULT_BUF_SIZE;
use super::write_zero;

/// Adds buffering to a writer, so that many small writes cost few writes of
/// the inner writer.
///
/// The buffer is written out by [`poll_flush`](AsyncWrite::poll_flush) and
/// [`poll_shutdown`](AsyncWrite::poll_shutdown) (`flush().await`,
/// `shutdown().await`), or when it is full. Data still buffered when the
/// `BufWriter` is dropped is **lost**: there is no async drop, so flush or
/// shut down first.
///
/// Reads, if the inner type is also a reader, pass straight through.
///
/// ```
/// use weft::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (client, mut server) = weft::io::duplex(64);
/// let mut writer = BufWriter::new(client);
/// writer.write_all(b"buffered").await?;
/// assert_eq!(writer.buffer(), b"buffered"); // nothing sent yet
/// writer.shutdown().await?; // flushes, then closes
///
/// let mut got = String::new();
/// server.read_to_string(&mut got).await?;
/// assert_eq!(got, "buffered");
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct BufWriter<W> {
    inner: W,
    state: WriteBuffer,
}

/// The unpinned part of a [`BufWriter`].
#[derive(Debug)]
pub(super) struct WriteBuffer {
    buf: Vec<u8>,
    capacity: usize,
    /// Prefix of `buf` already written by an unfinished flush.
    written: usize,
    /// A seek waiting for the buffer to drain (`start_seek` cannot poll).
    pending_seek: Option<SeekFrom>,
}

impl WriteBuffer {
    /// A vectored write over an inner writer that takes one slice per
    /// write (as Tokio's `BufWriter` does it): drain first only if the
    /// first non-empty slice does not fit, pass it straight through if it
    /// is as large as the buffer, and otherwise buffer it and every slice
    /// after it that still fits. So a write the buffer has room for never
    /// touches the inner writer (nor meets its error).
    fn poll_write_slices<W: AsyncWrite>(
        &mut self,
        mut inner: Pin<&mut W>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let Some(start) = bufs.iter().position(|b| !b.is_empty()) else {
            return Poll::Ready(Ok(0));
        };
        let first = &bufs[start];
        if self.buf.len() + first.len() > self.capacity {
            ready!(self.poll_drain(inner.as_mut(), cx))?;
        }
        if first.len() >= self.capacity {
            return inner.poll_write(cx, first);
        }
        let mut taken = 0;
        for b in &bufs[start..] {
            if self.buf.len() + b.len() > self.capacity {
                break;
            }
            self.buf.extend_from_slice(b);
            taken += b.len();
        }
        Poll::Ready(Ok(taken))
    }

    /// Writes the whole buffer to `inner` (without flushing `inner`).
    ///
    /// `Interrupted` is retried: the drain is a loop on the caller's behalf,
    /// and its callers (flush, shutdown, a write that needs room, a seek)
    /// could only start it again.
    fn poll_drain<W: AsyncWrite + ?Sized>(
        &mut self,
        mut inner: Pin<&mut W>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        while self.written < self.buf.len() {
            let res = match ready!(inner.as_mut().poll_write(cx, &self.buf[self.written..])) {
                Ok(0) => Err(write_zero()),
                Ok(n) => {
                    self.written = (self.written + n).min(self.buf.len());
                    Ok(())
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
            if let Err(e) = res {
                // Keep only what is still unwritten, so a retry resumes there.
                self.buf.drain(..self.written);
                self.written = 0;
                return Poll::Ready(Err(e));
            }
        }
        self.buf.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<W> BufWriter<W> {
    /// The stream and the buffer state, apart (`BufStream`'s `From`
    /// swaps a writer-over-reader stack into its reader-over-writer one).
    pub(super) fn into_raw(self) -> (W, WriteBuffer) {
        (self.inner, self.state)
    }

    /// [`into_raw`](Self::into_raw) undone, around another stream.
    pub(super) fn from_raw<U>(inner: U, state: WriteBuffer) -> BufWriter<U> {
        BufWriter { inner, state }
    }

    /// Wraps `inner` with a buffer of the default capacity (8 KiB).
    pub fn new(inner: W) -> BufWriter<W> {
        BufWriter::with_capacity(DEFAULT_BUF_SIZE, inner)
    }

    /// Wraps `inner` with a buffer of `capacity` bytes.
    pub fn with_capacity(capacity: usize, inner: W) -> BufWriter<W> {
        BufWriter {
            inner,
            state: WriteBuffer {
                buf: Vec::with_capacity(capacity),
                capacity,
                written: 0,
                pending_seek: None,
            },
        }
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The inner writer, mutably. Writing to it directly overtakes the
    /// buffered data.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// The pinned inner writer.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut W> {
        self.project().0
    }

    /// The inner writer, consuming `self`. Buffered data not yet written is
    /// lost.
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// The data accepted but not yet written to the inner writer.
    pub fn buffer(&self) -> &[u8] {
        &self.state.buf[self.state.written..]
    }

    fn project(self: Pin<&mut Self>) -> (Pin<&mut W>, &mut WriteBuffer) {
        // SAFETY: `inner` is structurally pinned: only reached through `Pin`
        // while `self` is pinned, `BufWriter` has no `Drop` impl and is
        // `Unpin` only when `W` is (auto trait), so `get_mut` / `into_inner`
        // cannot move a pinned `!Unpin` writer. `state` is never pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above; `this.inner` never moves while `self` is pinned.
        let inner = unsafe { Pin::new_unchecked(&mut this.inner) };
        (inner, &mut this.state)
    }
}

impl<W: AsyncWrite> AsyncWrite for BufWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let (mut inner, state) = self.project();
        if state.buf.len() + data.len() > state.capacity {
            ready!(state.poll_drain(inner.as_mut(), cx))?;
        }
        if data.len() >= state.capacity {
            // Buffering would only add a copy.
            inner.poll_write(cx, data)
        } else {
            state.buf.extend_from_slice(data);
            Poll::Ready(Ok(data.len()))
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let (mut inner, state) = self.project();
        ready!(state.poll_drain(inner.as_mut(), cx))?;
        inner.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let (mut inner, state) = self.project();
        ready!(state.poll_drain(inner.as_mut(), cx))?;
        inner.poll_shutdown(cx)
    }

    /// Buffers all the slices when they fit (one copy each, no syscall);
    /// larger writes go to the inner writer's vectored path.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let (mut inner, state) = self.project();
        if !inner.is_write_vectored() {
            return state.poll_write_slices(inner, cx, bufs);
        }
        let total = bufs
            .iter()
            .fold(0usize, |sum, b| sum.saturating_add(b.len()));
        if state.buf.len() + total > state.capacity {
            ready!(state.poll_drain(inner.as_mut(), cx))?;
        }
        if total >= state.capacity {
            return inner.poll_write_vectored(cx, bufs);
        }
        for b in bufs {
            state.buf.extend_from_slice(b);
        }
        Poll::Ready(Ok(total))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }
}

/// Seeking first writes out the buffer, then seeks the inner writer.
impl<W: AsyncWrite + AsyncSeek> AsyncSeek for BufWriter<W> {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        self.project().1.pending_seek = Some(position);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let (mut inner, state) = self.project();
        if let Some(position) = state.pending_seek {
            ready!(state.poll_drain(inner.as_mut(), cx))?;
            state.pending_seek = None;
            inner.as_mut().start_seek(position)?;
        }
        inner.poll_complete(cx)
    }
}

impl<W: AsyncRead> AsyncRead for BufWriter<W> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.get_pin_mut().poll_read(cx, buf)
    }
}

impl<W: AsyncBufRead> AsyncBufRead for BufWriter<W> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.get_pin_mut().poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.get_pin_mut().consume(amt)
    }
}
