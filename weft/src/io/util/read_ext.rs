//! `AsyncReadExt`: `async` methods for every [`AsyncRead`], and the named
//! futures they return.
//!
//! Owns: `read`, `read_buf`, `read_exact`, `read_to_end`, `read_to_string`
//! (and the adapter constructors `take` / `chain`; the number readers are in
//! `read_num.rs`). Every future borrows its reader and
//! buffer, so it is `Unpin` and keeps all progress either in the caller's
//! buffer or in its own fields; which of those it is decides the cancel
//! safety stated on each method.
//!
//! The looping futures (`read_exact`, `read_to_end`, `read_to_string`) read
//! again after an [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted), as
//! Tokio's do: it means "nothing happened, try again", and a caller of a
//! whole-buffer operation has no better retry point than the loop itself.
//! The single-read futures (`read`, `read_buf`) return it, as one
//! `poll_read` would.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::BufMut;

use super::string_append::{Keep, StringAppend};
use super::{poll_read_slice, unexpected_eof, Chain, Take};
use crate::io::{AsyncRead, ReadBuf};

/// `async` methods for [`AsyncRead`] types, with Tokio's names and
/// behaviour. Implemented for every `AsyncRead`.
///
/// The methods borrow the reader mutably and need it to be `Unpin`; pin a
/// `!Unpin` reader first (`Box::pin` or `std::pin::pin!`).
pub trait AsyncReadExt: AsyncRead {
    /// Reads some bytes into `buf`, returning how many were read.
    ///
    /// `Ok(0)` means end of stream (or that `buf` was empty).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, no data
    /// has been read.
    ///
    /// ```
    /// use weft::io::AsyncReadExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut reader: &[u8] = b"hello";
    /// let mut buf = [0u8; 3];
    /// let n = reader.read(&mut buf).await?;
    /// assert_eq!(&buf[..n], b"hel");
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn read<'a>(&'a mut self, buf: &'a mut [u8]) -> Read<'a, Self>
    where
        Self: Unpin,
    {
        Read { reader: self, buf }
    }

    /// Reads some bytes into `buf`'s spare capacity (a `bytes::BufMut`, such
    /// as `BytesMut` or `Vec<u8>`), advancing it; returns how many were read.
    /// The bytes land straight in uninitialised memory.
    ///
    /// `Ok(0)` means end of stream, or that `buf` has no room left.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, no data
    /// has been read.
    ///
    /// ```
    /// use weft::io::AsyncReadExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut reader: &[u8] = b"hello";
    /// let mut buf = Vec::with_capacity(16);
    /// let n = reader.read_buf(&mut buf).await?;
    /// assert_eq!((n, &buf[..]), (5, &b"hello"[..]));
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn read_buf<'a, B>(&'a mut self, buf: &'a mut B) -> ReadIntoBuf<'a, Self, B>
    where
        Self: Unpin,
        B: BufMut + ?Sized,
    {
        ReadIntoBuf { reader: self, buf }
    }

    /// Reads exactly `buf.len()` bytes, returning that length.
    ///
    /// Fails with [`ErrorKind::UnexpectedEof`](io::ErrorKind::UnexpectedEof)
    /// if the stream ends first; the contents of `buf` are then unspecified.
    /// Reads that fail with
    /// [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) are retried;
    /// any other read error is returned at once (`buf` is then unspecified
    /// too).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: bytes already read into `buf` when the future is
    /// dropped are lost to the caller (how many is not reported).
    ///
    /// ```
    /// use weft::io::{AsyncReadExt, ErrorKind};
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut reader: &[u8] = b"abc";
    /// let mut two = [0u8; 2];
    /// reader.read_exact(&mut two).await?;
    /// assert_eq!(&two, b"ab");
    /// let err = reader.read_exact(&mut two).await.unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn read_exact<'a>(&'a mut self, buf: &'a mut [u8]) -> ReadExact<'a, Self>
    where
        Self: Unpin,
    {
        ReadExact {
            reader: self,
            buf,
            filled: 0,
        }
    }

    /// Reads until end of stream, appending to `buf`; returns how many bytes
    /// were appended.
    ///
    /// Reads that fail with
    /// [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) are retried.
    /// Any other read error ends the call with that error; the bytes read
    /// before it are already appended to `buf`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe in the sense that nothing is lost: every byte read so far
    /// has already been appended to `buf` when the future is dropped, and a
    /// new call continues from there.
    fn read_to_end<'a>(&'a mut self, buf: &'a mut Vec<u8>) -> ReadToEnd<'a, Self>
    where
        Self: Unpin,
    {
        let start_len = buf.len();
        let state = ToEnd::new(buf, buf.capacity());
        ReadToEnd {
            reader: self,
            buf,
            start_len,
            state,
        }
    }

    /// Reads until end of stream and appends the bytes, which must be UTF-8,
    /// to `buf`; returns how many bytes were appended.
    ///
    /// If the data is not valid UTF-8 the result is
    /// [`ErrorKind::InvalidData`](io::ErrorKind::InvalidData) and `buf` is
    /// left as it was: none of the bytes read are kept. Reads that fail with
    /// [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) are retried,
    /// as in [`read_to_end`](AsyncReadExt::read_to_end); any other read
    /// error is returned at once.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: the bytes are held inside the future until the stream
    /// ends (they can only be checked as UTF-8 as a whole), so dropping it
    /// loses them. `buf` itself is unchanged in that case.
    ///
    /// ```
    /// use weft::io::AsyncReadExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut reader: &[u8] = "grüße".as_bytes();
    /// let mut text = String::from("> ");
    /// let n = reader.read_to_string(&mut text).await?;
    /// assert_eq!((n, text.as_str()), (7, "> grüße"));
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn read_to_string<'a>(&'a mut self, buf: &'a mut String) -> ReadToString<'a, Self>
    where
        Self: Unpin,
    {
        let mut buf = StringAppend::new(buf);
        let bytes = buf.bytes();
        let state = ToEnd::new(bytes, bytes.capacity());
        ReadToString {
            reader: self,
            buf,
            state,
        }
    }

    /// An adapter that reads at most `limit` bytes from this reader, then
    /// reports end of stream.
    ///
    /// ```
    /// use weft::io::AsyncReadExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let reader: &[u8] = b"hello world";
    /// let mut out = String::new();
    /// reader.take(5).read_to_string(&mut out).await?;
    /// assert_eq!(out, "hello");
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn take(self, limit: u64) -> Take<Self>
    where
        Self: Sized,
    {
        Take::new(self, limit)
    }

    /// An adapter that reads this reader to its end, then `next`.
    ///
    /// ```
    /// use weft::io::AsyncReadExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let (a, b): (&[u8], &[u8]) = (b"foo", b"bar");
    /// let mut out = Vec::new();
    /// a.chain(b).read_to_end(&mut out).await?;
    /// assert_eq!(out, b"foobar");
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn chain<R: AsyncRead>(self, next: R) -> Chain<Self, R>
    where
        Self: Sized,
    {
        Chain::new(self, next)
    }

    super::read_num::read_num_methods!();
}

impl<R: AsyncRead + ?Sized> AsyncReadExt for R {}

/// Future returned by [`AsyncReadExt::read`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct Read<'a, R: ?Sized> {
    reader: &'a mut R,
    buf: &'a mut [u8],
}

impl<R: AsyncRead + Unpin + ?Sized> Future for Read<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        poll_read_slice(Pin::new(&mut *this.reader), cx, this.buf)
    }
}

/// Future returned by [`AsyncReadExt::read_exact`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct ReadExact<'a, R: ?Sized> {
    reader: &'a mut R,
    buf: &'a mut [u8],
    /// Bytes of `buf` already read.
    filled: usize,
}

impl<R: AsyncRead + Unpin + ?Sized> Future for ReadExact<'_, R> {
    type Output = io::Result<usize>;

    // Small reads in a loop are its use (framing): inlined into the caller
    // it costs Tokio's instructions, and LLVM left it out of line once the
    // readers it calls grew (`io-util` experiment, 1.5× more per read).
    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        while this.filled < this.buf.len() {
            let read = poll_read_slice(
                Pin::new(&mut *this.reader),
                cx,
                &mut this.buf[this.filled..],
            );
            let n = match ready!(read) {
                // Nothing was read: ask again (see the module doc).
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                res => res?,
            };
            if n == 0 {
                return Poll::Ready(Err(unexpected_eof()));
            }
            this.filled += n;
        }
        Poll::Ready(Ok(this.filled))
    }
}

/// Future returned by [`AsyncReadExt::read_to_end`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct ReadToEnd<'a, R: ?Sized> {
    reader: &'a mut R,
    buf: &'a mut Vec<u8>,
    start_len: usize,
    /// [`poll_read_to_end`]'s state.
    state: ToEnd,
}

impl<R: AsyncRead + Unpin + ?Sized> Future for ReadToEnd<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        ready!(poll_read_to_end(
            Pin::new(&mut *this.reader),
            cx,
            this.buf,
            &mut this.state
        ))?;
        Poll::Ready(Ok(this.buf.len() - this.start_len))
    }
}

/// Future returned by [`AsyncReadExt::read_to_string`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct ReadToString<'a, R: ?Sized> {
    reader: &'a mut R,
    /// The caller's string, read into in place; what is appended is
    /// checked as UTF-8 only at end of stream.
    buf: StringAppend<'a>,
    /// [`poll_read_to_end`]'s state.
    state: ToEnd,
}

impl<R: AsyncRead + Unpin + ?Sized> Future for ReadToString<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let res = ready!(poll_read_to_end(
            Pin::new(&mut *this.reader),
            cx,
            this.buf.bytes(),
            &mut this.state,
        ));
        match res {
            Ok(()) => {
                let n = this.buf.appended();
                this.buf.finish(Keep::Appended)?;
                Poll::Ready(Ok(n))
            }
            // The string goes back as it was (Tokio's does the same).
            Err(e) => {
                this.buf.finish(Keep::Nothing)?;
                Poll::Ready(Err(e))
            }
        }
    }
}

/// Bytes [`poll_read_to_end`] makes room for when the buffer is (nearly)
/// full, and the size of its probe for the end of the stream.
const PROBE: usize = 32;

/// What [`poll_read_to_end`] keeps between polls of one call.
#[derive(Debug)]
pub(super) struct ToEnd {
    /// `buf[..initialized]` is initialised memory: the bytes read, and
    /// spare capacity a reader initialised without filling it, which the
    /// next read is told about (so it need not zero it again).
    initialized: usize,
    /// `buf`'s capacity when the call began.
    starting_capacity: usize,
}

impl ToEnd {
    pub(super) fn new(buf: &[u8], capacity: usize) -> ToEnd {
        ToEnd {
            initialized: buf.len(),
            starting_capacity: capacity,
        }
    }
}

/// Reads into `buf` until end of stream, straight into its spare capacity
/// (no zeroing: the reader fills uninitialised memory through a
/// [`ReadBuf`]). Between polls `buf` only ever holds bytes actually read.
///
/// Growth follows Tokio's (and std's): each read gets all the spare
/// capacity; with less than [`PROBE`] bytes spare the buffer grows by
/// `Vec`'s amortised doubling; but a buffer still at the capacity the
/// caller gave it is not grown just to find the end: a [`PROBE`]-byte read
/// on the stack looks first, so a buffer sized exactly for the data is
/// never reallocated.
///
/// An `Interrupted` read is retried (see the module doc); other errors are
/// returned with `buf` holding every byte read before them.
fn poll_read_to_end<R: AsyncRead + ?Sized>(
    mut reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    buf: &mut Vec<u8>,
    state: &mut ToEnd,
) -> Poll<io::Result<()>> {
    loop {
        let spare = buf.capacity() - buf.len();
        let probe_first = spare < PROBE
            && buf.capacity() == state.starting_capacity
            && state.starting_capacity >= PROBE;
        let (res, got) = if probe_first {
            let mut probe = [std::mem::MaybeUninit::<u8>::uninit(); PROBE];
            let mut read_buf = ReadBuf::uninit(&mut probe);
            let res = reader.as_mut().poll_read(cx, &mut read_buf);
            let bytes = read_buf.filled();
            if bytes.len() > spare {
                // Reallocated: nothing past the length is initialised.
                state.initialized = buf.len();
                buf.reserve(PROBE.max(bytes.len()));
            }
            buf.extend_from_slice(bytes);
            state.initialized = state.initialized.max(buf.len());
            (res, bytes.len())
        } else {
            if spare < PROBE {
                state.initialized = buf.len();
                buf.reserve(PROBE);
            }
            let len = buf.len();
            let mut read_buf = ReadBuf::uninit(buf.spare_capacity_mut());
            // SAFETY: `buf[len..state.initialized]` was initialised by an
            // earlier read of this call, in this allocation (a reallocation
            // resets `initialized` to the length).
            unsafe { read_buf.assume_init(state.initialized - len) };
            let res = reader.as_mut().poll_read(cx, &mut read_buf);
            let got = read_buf.filled().len();
            let initialized = read_buf.initialized().len();
            // SAFETY: the reader filled (initialised) `got` bytes of the
            // spare capacity, right after the current length.
            unsafe { buf.set_len(len + got) };
            state.initialized = len + initialized;
            (res, got)
        };
        match res {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Ready(Ok(())) if got == 0 => return Poll::Ready(Ok(())),
            Poll::Ready(Ok(())) => {}
        }
    }
}

/// Future returned by [`AsyncReadExt::read_buf`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct ReadIntoBuf<'a, R: ?Sized, B: ?Sized> {
    reader: &'a mut R,
    buf: &'a mut B,
}

impl<R: AsyncRead + Unpin + ?Sized, B: BufMut + ?Sized> Future for ReadIntoBuf<'_, R, B> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if !this.buf.has_remaining_mut() {
            return Poll::Ready(Ok(0));
        }
        let n = {
            let chunk = this.buf.chunk_mut();
            // SAFETY: the `ReadBuf` only ever writes initialised bytes into
            // the chunk, and reports how many.
            let chunk = unsafe { chunk.as_uninit_slice_mut() };
            let mut read_buf = ReadBuf::uninit(chunk);
            let start = read_buf.filled().as_ptr();
            ready!(Pin::new(&mut *this.reader).poll_read(cx, &mut read_buf))?;
            // A reader that swapped the buffer out would make the count lie.
            assert_eq!(
                start,
                read_buf.filled().as_ptr(),
                "an AsyncRead implementation replaced the ReadBuf it was given"
            );
            read_buf.filled().len()
        };
        // SAFETY: `n` bytes of the chunk were initialised by the read above.
        unsafe { this.buf.advance_mut(n) };
        Poll::Ready(Ok(n))
    }
}
