//! `Take`: a reader adapter that stops after a byte limit.
//!
//! Owns: the limit bookkeeping for both `AsyncRead` and `AsyncBufRead`; the
//! inner reader is pinned structurally.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::io::{AsyncBufRead, AsyncRead, ReadBuf};

/// Reader adapter that reads at most a fixed number of bytes from its inner
/// reader, then reports end of stream. Created by
/// [`AsyncReadExt::take`](super::AsyncReadExt::take).
#[derive(Debug)]
#[must_use = "readers do nothing unless you read from them"]
pub struct Take<R> {
    inner: R,
    limit: u64,
}

impl<R> Take<R> {
    pub(super) fn new(inner: R, limit: u64) -> Take<R> {
        Take { inner, limit }
    }

    /// How many more bytes may be read before end of stream is reported.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Sets the number of bytes that may still be read.
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The inner reader, mutably. Reading from it directly bypasses the limit.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The pinned inner reader.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut R> {
        self.project().0
    }

    /// The inner reader, consuming the adapter.
    pub fn into_inner(self) -> R {
        self.inner
    }

    fn project(self: Pin<&mut Self>) -> (Pin<&mut R>, &mut u64) {
        // SAFETY: `inner` is structurally pinned: it is only ever reached
        // through `Pin` while `self` is pinned, `Take` has no `Drop` impl, and
        // `Take` is `Unpin` only when `R` is (auto trait), so `get_mut` /
        // `into_inner` cannot move a pinned `!Unpin` reader. `limit` is plain
        // data and is never treated as pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above; `this.inner` never moves while `self` is pinned.
        let inner = unsafe { Pin::new_unchecked(&mut this.inner) };
        (inner, &mut this.limit)
    }
}

impl<R: AsyncRead> AsyncRead for Take<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let (inner, limit) = self.project();
        if *limit == 0 {
            return Poll::Ready(Ok(()));
        }
        let max = usize::try_from(*limit).map_or(buf.remaining(), |l| l.min(buf.remaining()));
        let mut limited = buf.take(max);
        let start = limited.filled().as_ptr();
        ready!(inner.poll_read(cx, &mut limited))?;
        assert_eq!(
            start,
            limited.filled().as_ptr(),
            "an AsyncRead implementation replaced the ReadBuf it was given"
        );
        let n = limited.filled().len();
        // SAFETY: the inner reader initialised the `n` bytes it filled in
        // the sub-buffer, which are the next `n` unfilled bytes of `buf`.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        *limit -= n as u64;
        Poll::Ready(Ok(()))
    }
}

impl<R: AsyncBufRead> AsyncBufRead for Take<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let (inner, limit) = self.project();
        if *limit == 0 {
            return Poll::Ready(Ok(&[]));
        }
        let available = ready!(inner.poll_fill_buf(cx))?;
        let max = usize::try_from(*limit).map_or(available.len(), |l| l.min(available.len()));
        Poll::Ready(Ok(&available[..max]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let (inner, limit) = self.project();
        let amt = usize::try_from(*limit).map_or(amt, |l| l.min(amt));
        *limit -= amt as u64;
        inner.consume(amt);
    }
}
