//! `duplex`: an in-memory, bounded, bidirectional byte stream.
//!
//! Owns: the two one-way `Pipe`s of a pair and their wake-ups. Each
//! `DuplexStream` reads from one pipe and writes to the other. Invariants:
//! a pipe never holds more than `max` bytes (a writer facing a full pipe
//! waits: back-pressure); once a pipe is closed, writes to it fail with
//! `BrokenPipe` and reads drain what is left, then report end of stream.
//!
//! A duplex stream is a weft resource that can always be ready, so each
//! `poll_read` / `poll_write` spends one unit of the task's cooperative
//! budget (see `crate::coop`).

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{ready, Context, Poll, Waker};

use futures_io::{AsyncRead, AsyncWrite};

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
pub fn duplex(max_buf_size: usize) -> (DuplexStream, DuplexStream) {
    assert!(
        max_buf_size > 0,
        "duplex buffer size must be greater than 0"
    );
    let one = Arc::new(Mutex::new(Pipe::new(max_buf_size)));
    let two = Arc::new(Mutex::new(Pipe::new(max_buf_size)));
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

/// One direction of a pair.
struct Pipe {
    buf: VecDeque<u8>,
    max: usize,
    /// Set by the writing end's shutdown or drop, or by the reading end's
    /// drop.
    closed: bool,
    /// The reading end, waiting for data or close.
    read_waker: Option<Waker>,
    /// The writing end, waiting for room.
    write_waker: Option<Waker>,
}

impl Pipe {
    fn new(max: usize) -> Pipe {
        Pipe {
            buf: VecDeque::with_capacity(max.min(64 * 1024)),
            max,
            closed: false,
            read_waker: None,
            write_waker: None,
        }
    }

    fn close(&mut self) {
        self.closed = true;
        if let Some(w) = self.read_waker.take() {
            w.wake();
        }
        if let Some(w) = self.write_waker.take() {
            w.wake();
        }
    }

    fn poll_read(&mut self, cx: &mut Context<'_>, out: &mut [u8]) -> Poll<io::Result<usize>> {
        if out.is_empty() {
            return Poll::Ready(Ok(0));
        }
        if self.buf.is_empty() {
            if self.closed {
                return Poll::Ready(Ok(0));
            }
            store_waker(&mut self.read_waker, cx);
            return Poll::Pending;
        }
        let n = out.len().min(self.buf.len());
        let (front, back) = self.buf.as_slices();
        let from_front = n.min(front.len());
        out[..from_front].copy_from_slice(&front[..from_front]);
        out[from_front..n].copy_from_slice(&back[..n - from_front]);
        self.buf.drain(..n);
        if let Some(w) = self.write_waker.take() {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }

    fn poll_write(&mut self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        if self.closed {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let room = self.max - self.buf.len();
        if room == 0 {
            store_waker(&mut self.write_waker, cx);
            return Poll::Pending;
        }
        let n = room.min(data.len());
        self.buf.extend(&data[..n]);
        if let Some(w) = self.read_waker.take() {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }
}

/// Replaces `slot` with the task's waker unless it already wakes that task.
fn store_waker(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => {}
        _ => *slot = Some(cx.waker().clone()),
    }
}

fn lock(pipe: &Mutex<Pipe>) -> MutexGuard<'_, Pipe> {
    // Pipe operations cannot panic half-way through an update.
    pipe.lock().unwrap_or_else(|e| e.into_inner())
}

impl AsyncRead for DuplexStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let coop = ready!(crate::coop::poll_proceed(cx));
        let res = ready!(lock(&self.read).poll_read(cx, buf));
        coop.made_progress();
        Poll::Ready(res)
    }
}

impl AsyncWrite for DuplexStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let coop = ready!(crate::coop::poll_proceed(cx));
        let res = ready!(lock(&self.write).poll_write(cx, buf));
        coop.made_progress();
        Poll::Ready(res)
    }

    /// Nothing is buffered on the writing side: always ready.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Closes this side's write direction: the other side reads what is
    /// left, then end of stream. Reading on this side is unaffected.
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        lock(&self.write).close();
        Poll::Ready(Ok(()))
    }
}

impl Drop for DuplexStream {
    fn drop(&mut self) {
        // The peer reads end of stream after the data already sent, and its
        // writes fail from now on.
        lock(&self.write).close();
        lock(&self.read).close();
    }
}

impl fmt::Debug for DuplexStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One lock at a time: the peer takes the same two in the other order.
        let unread = lock(&self.read).buf.len();
        let unread_by_peer = lock(&self.write).buf.len();
        f.debug_struct("DuplexStream")
            .field("unread", &unread)
            .field("unread_by_peer", &unread_by_peer)
            .finish()
    }
}
