//! `empty`: a reader that is always at end of stream (and a writer that
//! discards everything, and a seeker that is always at position 0).
//!
//! Owns: nothing but the trivial trait impls.

use std::io::{self, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::coop::poll_proceed_and_make_progress;
use crate::io::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};

/// A reader that is always at end of stream, a writer that accepts and
/// discards everything (vectored writes whole), and a seeker whose every
/// seek lands on position 0, as Tokio's. Created by [`empty`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Empty {
    _private: (),
}

/// Creates a reader that reports end of stream at once.
///
/// ```
/// use weft::io::AsyncReadExt;
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut out = Vec::new();
/// assert_eq!(weft::io::empty().read_to_end(&mut out).await?, 0);
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub fn empty() -> Empty {
    Empty { _private: () }
}

impl AsyncRead for Empty {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        ready!(poll_proceed_and_make_progress(cx));
        Poll::Ready(Ok(()))
    }
}

impl AsyncBufRead for Empty {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        ready!(poll_proceed_and_make_progress(cx));
        Poll::Ready(Ok(&[]))
    }

    fn consume(self: Pin<&mut Self>, _: usize) {}
}

impl AsyncWrite for Empty {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(poll_proceed_and_make_progress(cx));
        Poll::Ready(Ok(buf.len()))
    }

    /// Takes every slice: discarding them all costs no more than one.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(poll_proceed_and_make_progress(cx));
        Poll::Ready(Ok(bufs.iter().map(|b| b.len()).sum()))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(poll_proceed_and_make_progress(cx));
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(poll_proceed_and_make_progress(cx));
        Poll::Ready(Ok(()))
    }
}

/// There is nothing to move through: every seek succeeds and the position
/// is always 0 (as with Tokio's, and std's `io::Empty`).
impl AsyncSeek for Empty {
    fn start_seek(self: Pin<&mut Self>, _: SeekFrom) -> io::Result<()> {
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        // Always ready, so it takes budget like the other ops: a loop of
        // seeks still yields to the scheduler.
        ready!(poll_proceed_and_make_progress(cx));
        Poll::Ready(Ok(0))
    }
}
