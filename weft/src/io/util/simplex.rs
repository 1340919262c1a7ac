//! `simplex`: an in-memory, bounded, one-way byte stream.
//!
//! Owns: one [`Pipe`](super::pipe) that a `SimplexStream` both writes to
//! and reads from (the pipe's invariants are in pipe.rs). [`simplex`] splits
//! it into a read half and a write half, which is how it is usually used.
//! Reads and writes spend the cooperative budget, as `duplex`'s do.

use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use super::pipe::{close_locked, lock, poll_read_locked, poll_write_locked, Pipe};
use super::{split, ReadHalf, WriteHalf};
use crate::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A one-way in-memory pipe: bytes written to it are read back from it.
/// Writes wait while `max_buf_size` bytes are unread; after shutdown, reads
/// drain what is left and then report end of stream.
///
/// ```
/// use weft::io::{AsyncReadExt, AsyncWriteExt};
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (mut rx, mut tx) = weft::io::simplex(16);
/// tx.write_all(b"one way").await?;
/// tx.shutdown().await?;
/// let mut got = String::new();
/// rx.read_to_string(&mut got).await?;
/// assert_eq!(got, "one way");
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub struct SimplexStream {
    pipe: Mutex<Pipe>,
}

/// A [`SimplexStream`] split into its read half and its write half.
///
/// # Panics
/// If `max_buf_size` is 0.
#[track_caller]
pub fn simplex(max_buf_size: usize) -> (ReadHalf<SimplexStream>, WriteHalf<SimplexStream>) {
    split(SimplexStream::new_unsplit(max_buf_size))
}

impl SimplexStream {
    /// A simplex stream not yet split: it reads what it wrote.
    ///
    /// # Panics
    /// If `max_buf_size` is 0.
    #[track_caller]
    pub fn new_unsplit(max_buf_size: usize) -> SimplexStream {
        assert!(
            max_buf_size > 0,
            "simplex: `max_buf_size` must be greater than 0 (a pipe that holds no byte could never \
             move one); pass 1 or more"
        );
        SimplexStream {
            pipe: Pipe::new(max_buf_size),
        }
    }
}

impl AsyncRead for SimplexStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        poll_read_locked(&self.pipe, cx, buf)
    }
}

impl AsyncWrite for SimplexStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        poll_write_locked(&self.pipe, cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        close_locked(&self.pipe);
        Poll::Ready(Ok(()))
    }
}

impl fmt::Debug for SimplexStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimplexStream")
            .field("unread", &lock(&self.pipe).unread())
            .finish()
    }
}
