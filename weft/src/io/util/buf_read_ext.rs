//! `AsyncBufReadExt`: `async` methods for every [`AsyncBufRead`], and the
//! named futures they return.
//!
//! Owns: `fill_buf`, `consume`, `read_until`, `read_line` and the constructors of the
//! delimiter-driven streams `lines` / `split`, plus `poll_read_until`, the one
//! scanning loop all of them share.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::io::AsyncBufRead;

use super::string_append::{Keep, StringAppend};
use super::{Lines, Split};

/// `async` methods for [`AsyncBufRead`] types, with Tokio's names and
/// behaviour. Implemented for every `AsyncBufRead`; wrap a plain reader in a
/// [`BufReader`](super::BufReader) to get one.
pub trait AsyncBufReadExt: AsyncBufRead {
    /// Reads until `byte` (included) or end of stream, appending to `buf`;
    /// returns how many bytes were appended (0 at end of stream).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) is retried,
    /// not returned; any other error of the reader is. On an error, the
    /// bytes read before it stay appended to `buf`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: bytes read before the future is dropped have already been
    /// appended to `buf`, and calling again continues the same line.
    ///
    /// ```
    /// use weft::io::AsyncBufReadExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut reader: &[u8] = b"a,b";
    /// let mut field = Vec::new();
    /// assert_eq!(reader.read_until(b',', &mut field).await?, 2);
    /// assert_eq!(field, b"a,");
    /// field.clear();
    /// assert_eq!(reader.read_until(b',', &mut field).await?, 1);
    /// assert_eq!(field, b"b");
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn read_until<'a>(&'a mut self, byte: u8, buf: &'a mut Vec<u8>) -> ReadUntil<'a, Self>
    where
        Self: Unpin,
    {
        ReadUntil {
            reader: self,
            delim: byte,
            buf,
            read: 0,
        }
    }

    /// Reads one line, including its `\n` if there is one, and appends it to
    /// `buf`; returns how many bytes were appended (0 at end of stream).
    ///
    /// # Errors
    ///
    /// As [`read_until`](AsyncBufReadExt::read_until) (`Interrupted` is
    /// retried), and [`ErrorKind::InvalidData`](io::ErrorKind::InvalidData)
    /// if the line is not UTF-8; `buf` is then left as it was. On an I/O
    /// error, the part of the line read before it is appended to `buf` if it
    /// is valid UTF-8 (so those bytes are not lost), and `buf` is left as it
    /// was if not (a multi-byte character cut by the error, say).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: the line is held inside the future until it is
    /// complete, so dropping the future loses the part already read. (`buf`
    /// is unchanged in that case; Tokio only promises nothing about it.) Use
    /// [`lines`](AsyncBufReadExt::lines), whose `next_line` is cancel safe,
    /// in a `select!` loop.
    fn read_line<'a>(&'a mut self, buf: &'a mut String) -> ReadLine<'a, Self>
    where
        Self: Unpin,
    {
        ReadLine {
            reader: self,
            buf: StringAppend::new(buf),
            read: 0,
        }
    }

    /// The lines of this reader, without their `\n` or `\r\n` endings, read
    /// with [`Lines::next_line`].
    ///
    /// ```
    /// use weft::io::AsyncBufReadExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let reader: &[u8] = b"one\r\ntwo\nthree";
    /// let mut lines = reader.lines();
    /// let mut all = Vec::new();
    /// while let Some(line) = lines.next_line().await? {
    ///     all.push(line);
    /// }
    /// assert_eq!(all, ["one", "two", "three"]);
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn lines(self) -> Lines<Self>
    where
        Self: Sized,
    {
        Lines::new(self)
    }

    /// The segments of this reader separated by `byte`, without the
    /// separator, read with [`Split::next_segment`].
    fn split(self, byte: u8) -> Split<Self>
    where
        Self: Sized,
    {
        Split::new(self, byte)
    }

    /// The buffered data, filling the buffer first if it is empty (empty
    /// at end of stream). Pair it with [`consume`](AsyncBufReadExt::consume).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is consumed until `consume` is called.
    ///
    /// ```
    /// use weft::io::AsyncBufReadExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut reader: &[u8] = b"abc";
    /// assert_eq!(reader.fill_buf().await?, b"abc");
    /// reader.consume(2);
    /// assert_eq!(reader.fill_buf().await?, b"c");
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    fn fill_buf(&mut self) -> FillBuf<'_, Self>
    where
        Self: Unpin,
    {
        FillBuf { reader: Some(self) }
    }

    /// Mark `amt` buffered bytes as consumed.
    fn consume(&mut self, amt: usize)
    where
        Self: Unpin,
    {
        Pin::new(self).consume(amt)
    }
}

impl<R: AsyncBufRead + ?Sized> AsyncBufReadExt for R {}

/// Future returned by [`AsyncBufReadExt::read_until`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct ReadUntil<'a, R: ?Sized> {
    reader: &'a mut R,
    delim: u8,
    buf: &'a mut Vec<u8>,
    /// Bytes appended by this call so far.
    read: usize,
}

impl<R: AsyncBufRead + Unpin + ?Sized> Future for ReadUntil<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        poll_read_until(
            Pin::new(&mut *this.reader),
            cx,
            this.delim,
            this.buf,
            &mut this.read,
        )
    }
}

/// Future returned by [`AsyncBufReadExt::fill_buf`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct FillBuf<'a, R: ?Sized> {
    /// Taken when the future completes: the returned slice borrows it.
    reader: Option<&'a mut R>,
}

impl<'a, R: AsyncBufRead + Unpin + ?Sized> Future for FillBuf<'a, R> {
    type Output = io::Result<&'a [u8]>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let reader = this
            .reader
            .take()
            .expect("FillBuf polled after it completed");
        match Pin::new(&mut *reader).poll_fill_buf(cx) {
            Poll::Pending => {
                this.reader = Some(reader);
                Poll::Pending
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Ready(Ok(slice)) => {
                // SAFETY: `slice` borrows `*reader`, which lives for `'a`;
                // the future gave up its `&'a mut` (taken above) and never
                // touches the reader again, so this is the only borrow. Only
                // the borrow checker's reborrow rules need the help.
                let slice: &'a [u8] =
                    unsafe { std::slice::from_raw_parts(slice.as_ptr(), slice.len()) };
                Poll::Ready(Ok(slice))
            }
        }
    }
}

/// Future returned by [`AsyncBufReadExt::read_line`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct ReadLine<'a, R: ?Sized> {
    reader: &'a mut R,
    /// The caller's string, which the line is read into in place.
    buf: StringAppend<'a>,
    read: usize,
}

impl<R: AsyncBufRead + Unpin + ?Sized> Future for ReadLine<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let res = ready!(poll_read_until(
            Pin::new(&mut *this.reader),
            cx,
            b'\n',
            this.buf.bytes(),
            &mut this.read,
        ));
        // `poll_read_until` resets the count only on success.
        this.read = 0;
        match res {
            Ok(n) => {
                this.buf.finish(Keep::Appended)?;
                Poll::Ready(Ok(n))
            }
            // The bytes are out of the reader; the string is the only place
            // the program can still find them (Tokio documents the same), if
            // they are UTF-8.
            Err(e) => {
                let _not_utf8 = this.buf.finish(Keep::Appended);
                Poll::Ready(Err(e))
            }
        }
    }
}

/// Appends to `buf` from `reader` up to and including `delim`, or up to end
/// of stream. `read` counts the bytes appended across `Pending` returns; it
/// is returned, and reset to 0, on success. On an error the bytes appended
/// so far stay in `buf` (and in `read`): the caller decides what they mean.
pub(super) fn poll_read_until<R: AsyncBufRead + ?Sized>(
    mut reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    delim: u8,
    buf: &mut Vec<u8>,
    read: &mut usize,
) -> Poll<io::Result<usize>> {
    loop {
        let (found, used) = {
            let available = match ready!(reader.as_mut().poll_fill_buf(cx)) {
                Ok(available) => available,
                // "Try again", not a failure: a signal cut the read short.
                // std's `read_until` retries it too, and returning it would
                // make every caller write the same retry loop.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Poll::Ready(Err(e)),
            };
            match super::memchr(delim, available) {
                Some(i) => {
                    buf.extend_from_slice(&available[..=i]);
                    (true, i + 1)
                }
                None => {
                    buf.extend_from_slice(available);
                    (false, available.len())
                }
            }
        };
        reader.as_mut().consume(used);
        *read += used;
        if found || used == 0 {
            return Poll::Ready(Ok(std::mem::take(read)));
        }
    }
}
