//! `sink`: a writer that accepts and discards everything.
//!
//! Owns: nothing but the trivial trait impl.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_io::AsyncWrite;

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
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
