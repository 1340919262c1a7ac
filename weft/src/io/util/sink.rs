//! `sink`: a writer that accepts and discards everything.
//!
//! Owns: nothing but the trivial trait impl.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::coop::poll_proceed_and_make_progress;
use crate::io::AsyncWrite;

/// A writer that accepts and discards all data. Created by [`sink`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Sink {
    _private: (),
}

/// Creates a writer that discards everything written to it.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut reader: &[u8] = b"into the void";
/// let n = weft::io::copy(&mut reader, &mut weft::io::sink()).await?;
/// assert_eq!(n, 13);
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub fn sink() -> Sink {
    Sink { _private: () }
}

impl AsyncWrite for Sink {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(poll_proceed_and_make_progress(cx));
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
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
