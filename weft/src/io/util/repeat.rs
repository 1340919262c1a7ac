//! `repeat`: a reader that yields one byte forever.
//!
//! Owns: nothing but the trivial trait impl.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::coop::poll_proceed_and_make_progress;
use crate::io::{AsyncRead, ReadBuf};

/// A reader that fills every buffer with the same byte and never ends.
/// Created by [`repeat`].
#[derive(Debug, Clone, Copy)]
pub struct Repeat {
    byte: u8,
}

/// Creates a reader that yields `byte` endlessly; combine it with
/// [`AsyncReadExt::take`](super::AsyncReadExt::take) to bound it.
///
/// ```
/// use weft::io::AsyncReadExt;
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut out = Vec::new();
/// weft::io::repeat(b'z').take(3).read_to_end(&mut out).await?;
/// assert_eq!(out, b"zzz");
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub fn repeat(byte: u8) -> Repeat {
    Repeat { byte }
}

impl AsyncRead for Repeat {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        ready!(poll_proceed_and_make_progress(cx));
        buf.fill_remaining_with(self.byte);
        Poll::Ready(Ok(()))
    }
}
