//! The number writers of [`AsyncWriteExt`](super::AsyncWriteExt):
//! `write_u8` ... `write_f64_le`, Tokio's set.
//!
//! Owns: [`WriteNum`], one future for all of them: it encodes the number
//! into its own array up front and writes all of it. Not cancel safe: part
//! of the number may have been written when the future is dropped. Like
//! `write_all` (and Tokio's number writers), it writes again after an
//! `Interrupted` error: failing would leave part of the number written with
//! no way for the caller to resume.

use super::write_zero;
use crate::io::AsyncWrite;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Future returned by the number writers of
/// [`AsyncWriteExt`](super::AsyncWriteExt) (`write_u32`, `write_f64_le`, ...).
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct WriteNum<'a, W: ?Sized, const N: usize> {
    writer: &'a mut W,
    buf: [u8; N],
    written: usize,
}

impl<'a, W: ?Sized, const N: usize> WriteNum<'a, W, N> {
    #[inline]
    pub(crate) fn new(writer: &'a mut W, buf: [u8; N]) -> Self {
        WriteNum {
            writer,
            buf,
            written: 0,
        }
    }
}

impl<W: AsyncWrite + Unpin + ?Sized, const N: usize> Future for WriteNum<'_, W, N> {
    type Output = io::Result<()>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        while this.written < N {
            let write = Pin::new(&mut *this.writer).poll_write(cx, &this.buf[this.written..]);
            let n = match ready!(write) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                res => res?,
            };
            if n == 0 {
                return Poll::Ready(Err(write_zero()));
            }
            this.written += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<W: ?Sized, const N: usize> fmt::Debug for WriteNum<'_, W, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteNum")
            .field("bytes", &N)
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

/// The trait methods, expanded inside `AsyncWriteExt`.
macro_rules! write_num_methods {
    () => {
        $crate::io::util::write_num::write_num_methods! {
            write_u8 u8 1 to_be_bytes "an";
            write_i8 i8 1 to_be_bytes "an";
            write_u16 u16 2 to_be_bytes "a big-endian";
            write_i16 i16 2 to_be_bytes "a big-endian";
            write_u32 u32 4 to_be_bytes "a big-endian";
            write_i32 i32 4 to_be_bytes "a big-endian";
            write_u64 u64 8 to_be_bytes "a big-endian";
            write_i64 i64 8 to_be_bytes "a big-endian";
            write_u128 u128 16 to_be_bytes "a big-endian";
            write_i128 i128 16 to_be_bytes "a big-endian";
            write_f32 f32 4 to_be_bytes "a big-endian";
            write_f64 f64 8 to_be_bytes "a big-endian";
            write_u16_le u16 2 to_le_bytes "a little-endian";
            write_i16_le i16 2 to_le_bytes "a little-endian";
            write_u32_le u32 4 to_le_bytes "a little-endian";
            write_i32_le i32 4 to_le_bytes "a little-endian";
            write_u64_le u64 8 to_le_bytes "a little-endian";
            write_i64_le i64 8 to_le_bytes "a little-endian";
            write_u128_le u128 16 to_le_bytes "a little-endian";
            write_i128_le i128 16 to_le_bytes "a little-endian";
            write_f32_le f32 4 to_le_bytes "a little-endian";
            write_f64_le f64 8 to_le_bytes "a little-endian";
        }
    };
    ($($name:ident $ty:ident $n:literal $encode:ident $what:literal;)*) => {$(
        #[doc = concat!("Writes ", $what, " `", stringify!($ty), "` (", stringify!($n), " bytes).")]
        ///
        /// # Cancel safety
        ///
        /// Not cancel safe: part of the number may have been written when
        /// the future is dropped.
        fn $name(&mut self, n: $ty) -> $crate::io::util::WriteNum<'_, Self, $n>
        where
            Self: Unpin,
        {
            $crate::io::util::WriteNum::new(self, n.$encode())
        }
    )*};
}
pub(crate) use write_num_methods;
