//! The number readers of [`AsyncReadExt`](super::AsyncReadExt):
//! `read_u8` ... `read_f64_le`, Tokio's set.
//!
//! Owns: [`ReadNum`], one future for all of them: it reads exactly `N`
//! bytes into its own array and decodes them. Not cancel safe: bytes already
//! read sit in the dropped future. Like `read_exact` (and Tokio's number
//! readers), it reads again after an `Interrupted` error rather than losing
//! the bytes it holds to a "try again".

use super::{poll_read_slice, unexpected_eof};
use crate::io::AsyncRead;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Future returned by the number readers of
/// [`AsyncReadExt`](super::AsyncReadExt) (`read_u32`, `read_f64_le`, ...).
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct ReadNum<'a, R: ?Sized, T, const N: usize> {
    reader: &'a mut R,
    buf: [u8; N],
    filled: usize,
    decode: fn([u8; N]) -> T,
}

impl<'a, R: ?Sized, T, const N: usize> ReadNum<'a, R, T, N> {
    // `#[inline]` here and on `poll`: inlined where the future is made,
    // `decode` becomes a known function and the whole read a few moves
    // (a `read_u32` loop cost twice Tokio's instructions without).
    #[inline]
    pub(crate) fn new(reader: &'a mut R, decode: fn([u8; N]) -> T) -> Self {
        ReadNum {
            reader,
            buf: [0; N],
            filled: 0,
            decode,
        }
    }
}

impl<R: AsyncRead + Unpin + ?Sized, T, const N: usize> Future for ReadNum<'_, R, T, N> {
    type Output = io::Result<T>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        while this.filled < N {
            let read = poll_read_slice(
                Pin::new(&mut *this.reader),
                cx,
                &mut this.buf[this.filled..],
            );
            let n = match ready!(read) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                res => res?,
            };
            if n == 0 {
                return Poll::Ready(Err(unexpected_eof()));
            }
            this.filled += n;
        }
        Poll::Ready(Ok((this.decode)(this.buf)))
    }
}

impl<R: ?Sized, T, const N: usize> fmt::Debug for ReadNum<'_, R, T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadNum")
            .field("bytes", &N)
            .field("filled", &self.filled)
            .finish_non_exhaustive()
    }
}

/// The trait methods, expanded inside `AsyncReadExt`.
macro_rules! read_num_methods {
    () => {
        $crate::io::util::read_num::read_num_methods! {
            read_u8 u8 1 from_be_bytes "an";
            read_i8 i8 1 from_be_bytes "an";
            read_u16 u16 2 from_be_bytes "a big-endian";
            read_i16 i16 2 from_be_bytes "a big-endian";
            read_u32 u32 4 from_be_bytes "a big-endian";
            read_i32 i32 4 from_be_bytes "a big-endian";
            read_u64 u64 8 from_be_bytes "a big-endian";
            read_i64 i64 8 from_be_bytes "a big-endian";
            read_u128 u128 16 from_be_bytes "a big-endian";
            read_i128 i128 16 from_be_bytes "a big-endian";
            read_f32 f32 4 from_be_bytes "a big-endian";
            read_f64 f64 8 from_be_bytes "a big-endian";
            read_u16_le u16 2 from_le_bytes "a little-endian";
            read_i16_le i16 2 from_le_bytes "a little-endian";
            read_u32_le u32 4 from_le_bytes "a little-endian";
            read_i32_le i32 4 from_le_bytes "a little-endian";
            read_u64_le u64 8 from_le_bytes "a little-endian";
            read_i64_le i64 8 from_le_bytes "a little-endian";
            read_u128_le u128 16 from_le_bytes "a little-endian";
            read_i128_le i128 16 from_le_bytes "a little-endian";
            read_f32_le f32 4 from_le_bytes "a little-endian";
            read_f64_le f64 8 from_le_bytes "a little-endian";
        }
    };
    ($($name:ident $ty:ident $n:literal $decode:ident $what:literal;)*) => {$(
        #[doc = concat!("Reads ", $what, " `", stringify!($ty), "` (", stringify!($n), " bytes).")]
        ///
        /// Fails with `UnexpectedEof` if the stream ends first.
        ///
        /// # Cancel safety
        ///
        /// Not cancel safe: bytes already read are lost if the future is
        /// dropped.
        fn $name(&mut self) -> $crate::io::util::ReadNum<'_, Self, $ty, $n>
        where
            Self: Unpin,
        {
            $crate::io::util::ReadNum::new(self, $ty::$decode)
        }
    )*};
}
pub(crate) use read_num_methods;
