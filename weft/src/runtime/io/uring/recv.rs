//! A stream socket's reads through io_uring.
//!
//! Owns: the stream's one receive in flight (which ring, which op), its
//! spare buffer, and the bytes a receive brought that no reader has taken
//! yet (`leftover`).
//!
//! Invariants:
//! - **At most one receive is in flight per stream**, and bytes reach
//!   readers in the order the kernel delivered them: `leftover` is always
//!   read first, and a readiness-based read (`try_read`, `peek`, a custom
//!   `try_io`) first [`settle`](UringRead::settle)s, which cancels the
//!   receive in flight and keeps what it brought as `leftover`.
//! - A receive belongs to the stream, not to the future that started it:
//!   a reader that gives up (a `select!` that drops it) loses nothing; the
//!   data lands in `leftover` for the next read.
//! - The receive asks for at most what the reader's buffer can hold (and
//!   64 KiB), so `leftover` stays empty while readers keep their buffer.

use super::ops::Polled;
use super::Rings;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll};

/// The most one receive asks for.
const MAX_RECV: usize = 64 * 1024;

#[derive(Default)]
pub(crate) struct UringRead {
    state: Mutex<ReadState>,
}

#[derive(Default)]
struct ReadState {
    /// (ring index, op) of the receive in flight.
    op: Option<(usize, super::ops::OpKey)>,
    /// A buffer for the next receive, kept between receives.
    spare: Vec<u8>,
    /// Received bytes not yet read: `leftover[pos..]`.
    leftover: Vec<u8>,
    pos: usize,
    /// What the receive in flight asked for.
    asked: usize,
    /// The last receive brought less than it asked for: the socket was
    /// drained, so the next receive will probably wait.
    drained: bool,
}

/// What to do with a receive's completion.
#[must_use]
enum Received {
    /// Bytes (0: end of stream), now in `leftover`.
    Data,
    /// Interrupted or cancelled by the kernel, not by us: receive again.
    Retry,
    Failed(io::Error),
}

impl ReadState {
    fn has_leftover(&self) -> bool {
        self.pos < self.leftover.len()
    }

    /// Move up to `dst.len()` leftover bytes into `dst`.
    fn read_leftover(&mut self, dst: &mut [MaybeUninit<u8>]) -> usize {
        let src = &self.leftover[self.pos..];
        let n = src.len().min(dst.len());
        // SAFETY: `MaybeUninit<u8>` has `u8`'s layout, and `src` and `dst`
        // are distinct allocations (dst is the caller's).
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<u8>(), n);
        }
        self.pos += n;
        n
    }

    /// Take a completed receive: its bytes become `leftover`, its buffer
    /// the next spare.
    fn received(&mut self, result: i32, mut buf: Vec<u8>) -> Received {
        self.op = None;
        if result >= 0 {
            // SAFETY: the kernel wrote `result` bytes at the start of the
            // buffer's spare capacity (`Ring::start_recv` cleared it and
            // asked for at most its capacity).
            unsafe { buf.set_len(result as usize) };
            self.drained = (result as usize) < self.asked;
            let old = std::mem::replace(&mut self.leftover, buf);
            self.pos = 0;
            self.spare = old;
            return Received::Data;
        }
        self.spare = buf;
        if super::ops::interrupted(result) {
            Received::Retry
        } else {
            Received::Failed(io::Error::from_raw_os_error(-result))
        }
    }
}

impl UringRead {
    fn lock(&self) -> MutexGuard<'_, ReadState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `poll_read` through the ring: leftover bytes first, then the
    /// receive in flight, else start one on ring `ring` (`owned`: the
    /// caller is its worker, so the submission may wait for its flush).
    /// `Ready(Ok(0))` with a non-empty `dst` is the end of the stream.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn poll_read(
        &self,
        rings: &Rings,
        (ring, owned): (usize, bool),
        is_shutdown: bool,
        fd: RawFd,
        cx: &mut Context<'_>,
        dst: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.lock();
        loop {
            if state.has_leftover() || (dst.is_empty() && state.op.is_none()) {
                return Poll::Ready(Ok(state.read_leftover(dst)));
            }
            if is_shutdown {
                return Poll::Ready(Err(super::super::shutdown_error()));
            }
            if let Some((index, key)) = state.op {
                match rings.get(index).poll(key, cx.waker()) {
                    Polled::Pending => return Poll::Pending,
                    Polled::Done { result, buf } => match state.received(result, buf) {
                        Received::Data => {
                            return Poll::Ready(Ok(state.read_leftover(dst)));
                        }
                        Received::Retry => continue,
                        Received::Failed(e) => return Poll::Ready(Err(e)),
                    },
                }
            }
            let buf = std::mem::take(&mut state.spare);
            let len = dst.len().clamp(1, MAX_RECV);
            let key =
                rings
                    .get(ring)
                    .start_recv(fd, buf, len, cx.waker(), !owned, state.drained)?;
            state.op = Some((ring, key));
            state.asked = len;
            return Poll::Pending;
        }
    }

    /// Before a readiness-based read: end the receive in flight (keeping
    /// what it brought), so the reader sees bytes in order.
    pub(crate) fn settle(&self, rings: &Rings) {
        let mut state = self.lock();
        if let Some((index, key)) = state.op {
            let (result, buf) = rings.get(index).cancel_and_wait(key);
            // A cancelled or failed receive brought nothing; the error, if
            // real, will come back from the socket itself.
            let _ = state.received(result, buf);
        }
    }

    /// Whether received bytes wait to be read.
    pub(crate) fn has_leftover(&self) -> bool {
        self.lock().has_leftover()
    }

    /// Hand the leftover bytes to `f`, which returns how many it took
    /// (`consume`) or just looks (`!consume`, a peek). `None` if there are
    /// none.
    pub(crate) fn with_leftover(
        &self,
        consume: bool,
        f: impl FnOnce(&[u8]) -> usize,
    ) -> Option<usize> {
        let mut state = self.lock();
        if !state.has_leftover() {
            return None;
        }
        let n = f(&state.leftover[state.pos..]);
        if consume {
            state.pos += n;
        }
        Some(n)
    }

    /// The stream is going away: give its receive up (the ring frees the
    /// buffer when the cancelled receive completes). Must run before the
    /// socket is closed.
    pub(crate) fn abandon(&self, rings: &Rings) {
        if let Some((index, key)) = self.lock().op.take() {
            rings.get(index).abandon(key, super::ops::Leave::Cancel);
        }
    }
}
