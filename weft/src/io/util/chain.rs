//! `Chain`: a reader adapter that reads one reader to its end, then another.
//!
//! Owns: the switch-over on the first reader's end of stream, for both
//! `AsyncRead` and `AsyncBufRead`; both readers are pinned structurally.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::io::{AsyncBufRead, AsyncRead, ReadBuf};

/// Reader adapter that yields everything from `first`, then everything from
/// `second`. Created by [`AsyncReadExt::chain`](super::AsyncReadExt::chain).
#[derive(Debug)]
#[must_use = "readers do nothing unless you read from them"]
pub struct Chain<T, U> {
    first: T,
    second: U,
    /// `first` has reported end of stream.
    done_first: bool,
}

impl<T, U> Chain<T, U> {
    pub(super) fn new(first: T, second: U) -> Chain<T, U> {
        Chain {
            first,
            second,
            done_first: false,
        }
    }

    /// Both readers.
    pub fn get_ref(&self) -> (&T, &U) {
        (&self.first, &self.second)
    }

    /// Both readers, mutably. Reading from them directly may confuse the
    /// adapter.
    pub fn get_mut(&mut self) -> (&mut T, &mut U) {
        (&mut self.first, &mut self.second)
    }

    /// Both readers, pinned.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> (Pin<&mut T>, Pin<&mut U>) {
        let (first, second, _) = self.project();
        (first, second)
    }

    /// Both readers, consuming the adapter.
    pub fn into_inner(self) -> (T, U) {
        (self.first, self.second)
    }

    fn project(self: Pin<&mut Self>) -> (Pin<&mut T>, Pin<&mut U>, &mut bool) {
        // SAFETY: `first` and `second` are structurally pinned: only reached
        // through `Pin` while `self` is pinned, `Chain` has no `Drop` impl, and
        // it is `Unpin` only when both readers are (auto trait). `done_first`
        // is plain data and never treated as pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above; neither field moves while `self` is pinned.
        let first = unsafe { Pin::new_unchecked(&mut this.first) };
        // SAFETY: as above.
        let second = unsafe { Pin::new_unchecked(&mut this.second) };
        (first, second, &mut this.done_first)
    }
}

impl<T: AsyncRead, U: AsyncRead> AsyncRead for Chain<T, U> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let (first, second, done_first) = self.project();
        if !*done_first {
            // A full `buf` would read nothing without meaning end of stream.
            if buf.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            let before = buf.filled().len();
            ready!(first.poll_read(cx, buf))?;
            if buf.filled().len() > before {
                return Poll::Ready(Ok(()));
            }
            *done_first = true;
        }
        second.poll_read(cx, buf)
    }
}

impl<T: AsyncBufRead, U: AsyncBufRead> AsyncBufRead for Chain<T, U> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let (first, second, done_first) = self.project();
        if !*done_first {
            let available = ready!(first.poll_fill_buf(cx))?;
            if !available.is_empty() {
                return Poll::Ready(Ok(available));
            }
            *done_first = true;
        }
        second.poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let (first, second, done_first) = self.project();
        if *done_first {
            second.consume(amt);
        } else {
            first.consume(amt);
        }
    }
}
