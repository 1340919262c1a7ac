//! `copy` and `copy_buf`: move a whole stream from a reader into a writer.
//!
//! Owns: `CopyBuffer`, the resumable read-then-write state machine that
//! `copy` and `copy_bidirectional` drive, and `copy_buf`'s loop over the
//! reader's own buffer. Invariant: `buf[pos..cap]` has been read and not yet
//! written; a new read happens only once it is empty.
//!
//! Both loops share two rules with Tokio's: a read or write that fails with
//! `Interrupted` is simply made again (it means "nothing happened, try
//! again", and the caller could only restart the whole copy), while flush
//! errors are returned as they are; and the writer is flushed before the
//! copy waits on a reader that has nothing ready, so written data does not
//! sit in a buffered writer while the other end may be waiting for it.
//!
//! Both also spend the task's coop budget, one unit per poll that moved
//! bytes, as Tokio's do: a copy between resources that are always ready
//! (in-memory readers and writers) would otherwise never return `Pending`,
//! and a loop of such copies would hold its worker for ever.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::{poll_read_slice, write_zero};
use crate::io::{AsyncBufRead, AsyncRead, AsyncWrite};

/// Size of the intermediate buffer of [`copy`] and [`copy_bidirectional`](super::copy_bidirectional).
const COPY_BUF_SIZE: usize = 8 * 1024;

/// One direction of a copy: a buffer between a reader and a writer.
#[derive(Debug)]
pub(super) struct CopyBuffer {
    buf: Box<[u8]>,
    pos: usize,
    cap: usize,
    /// Bytes written so far.
    amt: u64,
    /// The reader has reported end of stream.
    read_done: bool,
    /// Data was written since the last flush.
    need_flush: bool,
}

impl CopyBuffer {
    pub(super) fn new() -> CopyBuffer {
        CopyBuffer::with_capacity(COPY_BUF_SIZE)
    }

    /// A copy state with a buffer of `size` bytes. `size` must not be 0 (a
    /// read into an empty buffer looks like end of stream); the public
    /// constructors check it with a message for the caller.
    pub(super) fn with_capacity(size: usize) -> CopyBuffer {
        debug_assert!(size > 0, "a copy buffer needs room for one byte");
        CopyBuffer {
            buf: vec![0; size].into_boxed_slice(),
            pos: 0,
            cap: 0,
            amt: 0,
            read_done: false,
            need_flush: false,
        }
    }

    /// Copies until the reader ends and everything read has been written and
    /// flushed; returns the number of bytes copied.
    ///
    /// When the reader has nothing for now, the writer is flushed before
    /// returning `Pending`, so data written so far is not left sitting in a
    /// buffered writer while the copy waits.
    pub(super) fn poll_copy<R, W>(
        &mut self,
        cx: &mut Context<'_>,
        mut reader: Pin<&mut R>,
        mut writer: Pin<&mut W>,
    ) -> Poll<io::Result<u64>>
    where
        R: AsyncRead + ?Sized,
        W: AsyncWrite + ?Sized,
    {
        let coop = ready!(crate::coop::poll_proceed(cx));
        loop {
            if self.pos == self.cap && !self.read_done {
                match poll_read_slice(reader.as_mut(), cx, &mut self.buf) {
                    Poll::Ready(Ok(0)) => self.read_done = true,
                    Poll::Ready(Ok(n)) => {
                        self.pos = 0;
                        self.cap = n.min(self.buf.len());
                    }
                    Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => {
                        if self.need_flush {
                            ready!(writer.as_mut().poll_flush(cx))?;
                            self.need_flush = false;
                        }
                        return Poll::Pending;
                    }
                }
                coop.made_progress();
            }

            while self.pos < self.cap {
                let write = writer
                    .as_mut()
                    .poll_write(cx, &self.buf[self.pos..self.cap]);
                let n = match ready!(write) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    res => res?,
                };
                if n == 0 {
                    return Poll::Ready(Err(write_zero()));
                }
                let n = n.min(self.cap - self.pos);
                self.pos += n;
                self.amt += n as u64;
                self.need_flush = true;
            }

            if self.read_done {
                ready!(writer.as_mut().poll_flush(cx))?;
                self.need_flush = false;
                return Poll::Ready(Ok(self.amt));
            }
        }
    }
}

/// Copies everything from `reader` into `writer`, then flushes `writer`;
/// returns the number of bytes copied.
///
/// Data moves through an 8 KiB buffer. The writer is also flushed whenever
/// the reader has nothing ready, and it is not shut down at the end.
///
/// Reads and writes that fail with
/// [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) are retried. Fails
/// with the first other read or write error, with any flush error (flushes
/// are not retried), or with
/// [`ErrorKind::WriteZero`](io::ErrorKind::WriteZero) if the writer accepts
/// no bytes.
///
/// # Cancel safety
///
/// Not cancel safe: data read but not yet written when the future is dropped
/// is lost.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut reader: &[u8] = b"some bytes";
/// let mut writer: Vec<u8> = Vec::new();
/// let n = weft::io::copy(&mut reader, &mut writer).await?;
/// assert_eq!((n, writer.as_slice()), (10, &b"some bytes"[..]));
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub async fn copy<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    let mut state = CopyBuffer::new();
    poll_fn(|cx| state.poll_copy(cx, Pin::new(&mut *reader), Pin::new(&mut *writer))).await
}

/// Copies everything from the buffered `reader` into `writer`, using the
/// reader's own buffer instead of an intermediate one, then flushes
/// `writer`; returns the number of bytes copied.
///
/// Like [`copy`], the writer is also flushed whenever the reader has nothing
/// ready, and it is not shut down at the end.
///
/// Fails like [`copy`]: `poll_fill_buf` and `poll_write` calls that fail
/// with [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) are retried;
/// the first other error, or any flush error, is returned.
///
/// # Cancel safety
///
/// Cancel safe in the sense that nothing is lost: bytes are consumed from
/// the reader only once the writer has accepted them.
pub async fn copy_buf<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncBufRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    let mut amt = 0u64;
    // Data was written since the last flush.
    let mut need_flush = false;
    poll_fn(|cx| {
        let mut reader = Pin::new(&mut *reader);
        let mut writer = Pin::new(&mut *writer);
        // One unit of the task's budget per poll (module doc).
        let coop = ready!(crate::coop::poll_proceed(cx));
        loop {
            let available = match reader.as_mut().poll_fill_buf(cx) {
                Poll::Ready(Ok(available)) => available,
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {
                    // As in `CopyBuffer::poll_copy`: don't wait with data
                    // held in a buffered writer.
                    if need_flush {
                        ready!(writer.as_mut().poll_flush(cx))?;
                        need_flush = false;
                    }
                    return Poll::Pending;
                }
            };
            if available.is_empty() {
                ready!(writer.as_mut().poll_flush(cx))?;
                return Poll::Ready(Ok(amt));
            }
            let n = match ready!(writer.as_mut().poll_write(cx, available)) {
                // Nothing was consumed: the same bytes are offered again.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                res => res?,
            };
            if n == 0 {
                return Poll::Ready(Err(write_zero()));
            }
            let n = n.min(available.len());
            reader.as_mut().consume(n);
            coop.made_progress();
            amt += n as u64;
            need_flush = true;
        }
    })
    .await
}
