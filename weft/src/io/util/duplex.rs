//! `duplex`: an in-memory, bounded, bidirectional byte stream.
//!
//! Owns: the pairing of two one-way [`Pipe`](super::pipe)s: each
//! `DuplexStream` reads from one and writes to the other (the pipe's
//! invariants are in pipe.rs). Each `poll_read` / `poll_write` spends one
//! unit of the task's cooperative budget: the stream can always be ready.

use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use super::pipe::{close_locked, lock, poll_read_locked, poll_write_locked, Pipe};
use crate::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Creates a connected pair of in-memory streams: bytes written to one can
/// be read from the other, in both directions.
///
/// Each direction buffers at most `max_buf_size` bytes; a writer that finds
/// the buffer full waits until the other side reads. Shutting down one
/// side's write half ([`AsyncWriteExt::shutdown`](super::AsyncWriteExt::shutdown))
/// gives the other side end of stream once it has read everything; dropping
/// a side does that and also makes the other side's writes fail with
/// [`ErrorKind::BrokenPipe`](io::ErrorKind::BrokenPipe).
///
/// Handy for testing code written against the I/O traits without sockets.
///
/// # Panics
///
/// If `max_buf_size` is 0 (no write could ever complete).
///
/// ```
/// use weft::io::{AsyncReadExt, AsyncWriteExt};
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (mut a, mut b) = weft::io::duplex(4);
/// // Only 4 bytes fit: the write is partial.
/// assert_eq!(a.write(b"abcdef").await?, 4);
/// let mut buf = [0u8; 8];
/// assert_eq!(b.read(&mut buf).await?, 4);
/// assert_eq!(&buf[..4], b"abcd");
///
/// drop(a);
/// assert_eq!(b.read(&mut buf).await?, 0); // end of stream
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
#[track_caller]
pub fn duplex(max_buf_size: usize) -> (DuplexStream, DuplexStream) {
    assert!(
        max_buf_size > 0,
        "duplex: `max_buf_size` must be greater than 0 (a pipe that holds no byte could never \
         move one); pass 1 or more"
    );
    let one = Arc::new(Pipe::new(max_buf_size));
    let two = Arc::new(Pipe::new(max_buf_size));
    (
        DuplexStream {
            read: Arc::clone(&one),
            write: Arc::clone(&two),
        },
        DuplexStream {
            read: two,
            write: one,
        },
    )
}

/// One end of an in-memory stream pair created by [`duplex`].
///
/// Implements [`AsyncRead`] and [`AsyncWrite`]; dropping it closes both
/// directions as seen from the other end.
pub struct DuplexStream {
    read: Arc<Mutex<Pipe>>,
    write: Arc<Mutex<Pipe>>,
}

impl AsyncRead for DuplexStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        poll_read_locked(&self.read, cx, buf)
    }
}

impl AsyncWrite for DuplexStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    /// Writes as much of all the buffers as fits, not just the first.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        poll_write_locked(&self.write, cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        close_locked(&self.write);
        Poll::Ready(Ok(()))
    }
}

impl Drop for DuplexStream {
    fn drop(&mut self) {
        // The peer reads end of stream after the data already sent, and its
        // writes fail from now on.
        close_locked(&self.write);
        close_locked(&self.read);
    }
}

impl fmt::Debug for DuplexStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One lock at a time: the peer takes the same two in the other order.
        let unread = lock(&self.read).unread();
        let unread_by_peer = lock(&self.write).unread();
        f.debug_struct("DuplexStream")
            .field("unread", &unread)
            .field("unread_by_peer", &unread_by_peer)
            .finish()
    }
}
