//! `BufReader`: adds an in-memory read buffer to any reader, which makes it
//! an [`AsyncBufRead`].
//!
//! Owns: the read buffer and its `pos..filled` window. Invariant:
//! `pos <= filled <= buf.len()`, `buf.len() > 0`, and `buf[pos..filled]`
//! are bytes read from the inner reader and not yet handed out. Reads at
//! least as large as the buffer, made while it is empty, go straight to the
//! inner reader. The buffer outlives a seek until the seek succeeds: a
//! failed seek leaves the inner reader where it was, so the buffered bytes
//! are still the next ones.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::poll_read_slice;
use crate::io::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};
use std::io::SeekFrom;

/// Default buffer size, as in Tokio.
pub(super) const DEFAULT_BUF_SIZE: usize = 8 * 1024;

/// Adds buffering to a reader, so that many small reads cost few reads of
/// the inner reader, and implements [`AsyncBufRead`] for it.
///
/// Writes, if the inner type is also a writer, pass straight through.
///
/// ```
/// use weft::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (mut client, server) = weft::io::duplex(64);
/// client.write_all(b"first\nsecond\n").await?;
/// drop(client);
///
/// let mut lines = BufReader::new(server).lines();
/// assert_eq!(lines.next_line().await?.as_deref(), Some("first"));
/// assert_eq!(lines.next_line().await?.as_deref(), Some("second"));
/// assert_eq!(lines.next_line().await?, None);
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct BufReader<R> {
    inner: R,
    state: ReadBuffer,
}

/// The unpinned part of a [`BufReader`].
#[derive(Debug)]
pub(super) struct ReadBuffer {
    buf: Box<[u8]>,
    pos: usize,
    filled: usize,
    /// The seek in progress on the inner reader, if any.
    seeking: Seeking,
}

/// A `BufReader`'s seek between `start_seek` and `poll_complete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seeking {
    No,
    /// Started on the inner reader: its success discards the buffer, its
    /// failure keeps it.
    Started,
    /// A `SeekFrom::Current(n)` whose offset, less the buffered bytes,
    /// overflows `i64`: the inner reader first steps back over the buffered
    /// bytes (started), then moves by `n` itself (as `std`'s `BufReader`
    /// does).
    BackThen(i64),
}

impl ReadBuffer {
    fn unread(&self) -> &[u8] {
        &self.buf[self.pos..self.filled]
    }

    fn discard(&mut self) {
        self.pos = 0;
        self.filled = 0;
    }

    /// Refills the buffer if it is empty, then returns the unread bytes.
    fn poll_fill<R: AsyncRead + ?Sized>(
        &mut self,
        inner: Pin<&mut R>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<&[u8]>> {
        if self.pos >= self.filled {
            let n = ready!(poll_read_slice(inner, cx, &mut self.buf))?;
            self.pos = 0;
            self.filled = n.min(self.buf.len());
        }
        Poll::Ready(Ok(self.unread()))
    }
}

impl<R> BufReader<R> {
    /// The stream and the buffer state, apart (`BufStream`'s `From`
    /// swaps a writer-over-reader stack into its reader-over-writer one).
    pub(super) fn into_raw(self) -> (R, ReadBuffer) {
        (self.inner, self.state)
    }

    /// [`into_raw`](Self::into_raw) undone, around another stream.
    pub(super) fn from_raw<U>(inner: U, state: ReadBuffer) -> BufReader<U> {
        BufReader { inner, state }
    }

    /// Wraps `inner` with a buffer of the default capacity (8 KiB).
    pub fn new(inner: R) -> BufReader<R> {
        BufReader::with_capacity(DEFAULT_BUF_SIZE, inner)
    }

    /// Wraps `inner` with a buffer of `capacity` bytes.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0, as Tokio's: an empty buffer could never be
    /// filled, so `fill_buf` would report end of stream on a reader that
    /// has data.
    #[track_caller]
    pub fn with_capacity(capacity: usize, inner: R) -> BufReader<R> {
        assert!(
            capacity > 0,
            "BufReader::with_capacity: capacity must be greater than zero (a read buffer needs \
             room for at least one byte); pass a capacity of 1 or more (BufReader::new uses \
             8 KiB)"
        );
        BufReader {
            inner,
            state: ReadBuffer {
                buf: vec![0; capacity].into_boxed_slice(),
                pos: 0,
                filled: 0,
                seeking: Seeking::No,
            },
        }
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The inner reader, mutably. Reading from it directly skips the
    /// buffered bytes.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The pinned inner reader.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut R> {
        self.project().0
    }

    /// The inner reader, consuming `self`. Buffered bytes not yet read are
    /// lost.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// The bytes read from the inner reader but not yet consumed. Does not
    /// read anything.
    pub fn buffer(&self) -> &[u8] {
        self.state.unread()
    }

    fn project(self: Pin<&mut Self>) -> (Pin<&mut R>, &mut ReadBuffer) {
        // SAFETY: `inner` is structurally pinned: only reached through `Pin`
        // while `self` is pinned, `BufReader` has no `Drop` impl and is
        // `Unpin` only when `R` is (auto trait), so `get_mut` / `into_inner`
        // cannot move a pinned `!Unpin` reader. `state` is never pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above; `this.inner` never moves while `self` is pinned.
        let inner = unsafe { Pin::new_unchecked(&mut this.inner) };
        (inner, &mut this.state)
    }
}

impl<R: AsyncRead> AsyncRead for BufReader<R> {
    // Small reads served from the buffer are its point: inlined, one costs
    // a bounds check and a copy (`io-util` experiment, `read_exact`).
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let (inner, state) = self.project();
        if state.pos >= state.filled && out.remaining() >= state.buf.len() {
            // Buffering would only add a copy.
            state.discard();
            return inner.poll_read(cx, out);
        }
        let available = ready!(state.poll_fill(inner, cx))?;
        let n = available.len().min(out.remaining());
        out.put_slice(&available[..n]);
        state.pos += n;
        Poll::Ready(Ok(()))
    }
}

impl<R: AsyncRead> AsyncBufRead for BufReader<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let (inner, state) = self.project();
        state.poll_fill(inner, cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let state = self.project().1;
        state.pos = (state.pos + amt).min(state.filled);
    }
}

impl<R: AsyncWrite> AsyncWrite for BufReader<R> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_pin_mut().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_pin_mut().poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_pin_mut().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_pin_mut().poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.get_ref().is_write_vectored()
    }
}

/// A seek that succeeds discards the buffer; one that fails keeps it (as
/// Tokio's), so no byte already read from the inner reader is lost. A
/// `SeekFrom::Current` offset counts from the logical position (what the
/// caller has consumed), not from where the inner reader is, which is ahead
/// by the buffered bytes.
impl<R: AsyncRead + AsyncSeek> AsyncSeek for BufReader<R> {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let (inner, state) = self.project();
        let buffered = (state.filled - state.pos) as i64;
        let (position, seeking) = match position {
            SeekFrom::Current(n) => match n.checked_sub(buffered) {
                Some(offset) => (SeekFrom::Current(offset), Seeking::Started),
                None => (SeekFrom::Current(-buffered), Seeking::BackThen(n)),
            },
            other => (other, Seeking::Started),
        };
        inner.start_seek(position)?;
        // Not discarded yet: the inner seek may still fail in
        // `poll_complete` (a `BufWriter` below seeks only there).
        state.seeking = seeking;
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let (mut inner, state) = self.project();
        loop {
            let res = ready!(inner.as_mut().poll_complete(cx));
            match std::mem::replace(&mut state.seeking, Seeking::No) {
                // A completion with no seek in flight reports the inner
                // position, which is ahead of the caller's by what is
                // still buffered. Saturating: AsyncSeek does not promise a
                // true position here, and some readers do not give one
                // (a `File` reports where it last seeked, 0 if never).
                Seeking::No => {
                    let buffered = (state.filled - state.pos) as u64;
                    return Poll::Ready(res.map(|pos| pos.saturating_sub(buffered)));
                }
                // The seek is over either way. Only a success moved the
                // inner reader away from the buffered bytes.
                Seeking::Started => {
                    let pos = res?;
                    state.discard();
                    return Poll::Ready(Ok(pos));
                }
                // Back at the caller's position: the buffer is behind us.
                Seeking::BackThen(n) => {
                    res?;
                    state.discard();
                    inner.as_mut().start_seek(SeekFrom::Current(n))?;
                    state.seeking = Seeking::Started;
                }
            }
        }
    }
}
