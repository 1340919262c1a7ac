//! `AsyncRead`: read bytes into a [`ReadBuf`], asynchronously.

use crate::io::ReadBuf;
use std::io;
use std::ops::DerefMut;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Reads bytes from a source, asynchronously. Tokio's trait, with its
/// signature: `poll_read` appends to `buf`'s filled part.
///
/// On `Poll::Ready(Ok(()))`, the bytes read are appended to the filled part
/// of `buf`; nothing appended means end of stream (unless `buf` had no room).
/// On `Poll::Pending`, nothing was read and the waker will be woken when the
/// source may be ready. Errors are as for `std::io::Read`.
///
/// ```
/// use std::pin::Pin;
/// use std::task::{Context, Poll};
/// use weft::io::{AsyncRead, AsyncReadExt, ReadBuf};
///
/// /// Endless `b'x'`s.
/// struct Xs;
///
/// impl AsyncRead for Xs {
///     fn poll_read(
///         self: Pin<&mut Self>,
///         _cx: &mut Context<'_>,
///         buf: &mut ReadBuf<'_>,
///     ) -> Poll<std::io::Result<()>> {
///         let n = buf.remaining();
///         buf.put_slice(&vec![b'x'; n]);
///         Poll::Ready(Ok(()))
///     }
/// }
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut three = [0u8; 3];
/// Xs.read_exact(&mut three).await.unwrap();
/// assert_eq!(&three, b"xxx");
/// # });
/// ```
pub trait AsyncRead {
    /// Try to read into `buf`.
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>>;
}

macro_rules! deref_async_read {
    () => {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Pin::new(&mut **self).poll_read(cx, buf)
        }
    };
}

impl<T: ?Sized + AsyncRead + Unpin> AsyncRead for Box<T> {
    deref_async_read!();
}

impl<T: ?Sized + AsyncRead + Unpin> AsyncRead for &mut T {
    deref_async_read!();
}

impl<P> AsyncRead for Pin<P>
where
    P: DerefMut,
    P::Target: AsyncRead,
{
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.as_deref_mut().poll_read(cx, buf)
    }
}

impl AsyncRead for &[u8] {
    #[inline]
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = self.len().min(buf.remaining());
        let (head, tail) = self.split_at(n);
        buf.put_slice(head);
        *self = tail;
        Poll::Ready(Ok(()))
    }
}

impl<T: AsRef<[u8]> + Unpin> AsyncRead for io::Cursor<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let pos = self.position();
        let n = {
            let data = self.get_ref().as_ref();
            let start = usize::try_from(pos).unwrap_or(usize::MAX).min(data.len());
            let n = (data.len() - start).min(buf.remaining());
            buf.put_slice(&data[start..start + n]);
            n
        };
        self.set_position(pos + n as u64);
        Poll::Ready(Ok(()))
    }
}
