//! `Lines` and `Split`: a buffered reader consumed as a sequence of
//! delimiter-terminated records.
//!
//! Owns: the per-record accumulator. It lives in the stream object, not in
//! the future of `next_line` / `next_segment`, which is what makes those
//! methods cancel safe: a dropped call leaves its partial record behind for
//! the next call. An I/O error leaves it behind too (as Tokio's do), so a
//! caller that retries after, say, `WouldBlock` loses no bytes.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::io::AsyncBufRead;

use super::buf_read_ext::poll_read_until;

/// The lines of a buffered reader. Created by
/// [`AsyncBufReadExt::lines`](super::AsyncBufReadExt::lines).
#[derive(Debug)]
#[must_use = "streams do nothing unless polled"]
pub struct Lines<R> {
    reader: R,
    /// The current line so far, including bytes read by cancelled or
    /// failed calls.
    bytes: Vec<u8>,
}

impl<R> Lines<R> {
    pub(super) fn new(reader: R) -> Lines<R> {
        Lines {
            reader,
            bytes: Vec::new(),
        }
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// The underlying reader, mutably. Reading from it directly skips data
    /// the lines never see.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The pinned underlying reader.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut R> {
        self.project().0
    }

    /// The underlying reader. A partially read line is discarded.
    pub fn into_inner(self) -> R {
        self.reader
    }

    fn project(self: Pin<&mut Self>) -> (Pin<&mut R>, &mut Vec<u8>) {
        // SAFETY: `reader` is structurally pinned: only reached through `Pin`
        // while `self` is pinned, `Lines` has no `Drop` impl and is `Unpin`
        // only when `R` is (auto trait). The other fields are plain data and
        // never treated as pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above; `this.reader` never moves while `self` is pinned.
        let reader = unsafe { Pin::new_unchecked(&mut this.reader) };
        (reader, &mut this.bytes)
    }
}

impl<R: AsyncBufRead> Lines<R> {
    /// The next line without its `\n` or `\r\n` ending, or `None` at end of
    /// stream. A last line without a newline is still returned.
    ///
    /// Fails with [`ErrorKind::InvalidData`](io::ErrorKind::InvalidData) if
    /// a line is not UTF-8; that line is dropped and the next call reads the
    /// following one. On an I/O error the part of the line read so far is
    /// kept, and the next call continues that line.
    /// [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) is retried.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the part of a line read before the future is dropped is
    /// kept in `self`, and the next call completes that line.
    pub async fn next_line(&mut self) -> io::Result<Option<String>>
    where
        R: Unpin,
    {
        poll_fn(|cx| Pin::new(&mut *self).poll_next_line(cx)).await
    }

    /// Polls for the next line; see [`next_line`](Lines::next_line).
    pub fn poll_next_line(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Option<String>>> {
        let (reader, bytes) = self.project();
        let Some(mut line) = ready!(poll_segment(reader, cx, b'\n', bytes))? else {
            return Poll::Ready(Ok(None));
        };
        if line.terminated && line.bytes.last() == Some(&b'\r') {
            line.bytes.pop();
        }
        match String::from_utf8(line.bytes) {
            Ok(text) => Poll::Ready(Ok(Some(text))),
            // As Tokio's: the error holds the line's bytes (a
            // `FromUtf8Error`), and the next call reads the next line.
            Err(e) => Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, e))),
        }
    }
}

/// The segments of a buffered reader between occurrences of one byte.
/// Created by [`AsyncBufReadExt::split`](super::AsyncBufReadExt::split).
#[derive(Debug)]
#[must_use = "streams do nothing unless polled"]
pub struct Split<R> {
    reader: R,
    delim: u8,
    /// The current segment so far, including bytes read by cancelled or
    /// failed calls.
    bytes: Vec<u8>,
}

impl<R> Split<R> {
    pub(super) fn new(reader: R, delim: u8) -> Split<R> {
        Split {
            reader,
            delim,
            bytes: Vec::new(),
        }
    }

    /// The underlying reader, consuming `self`. A partially read segment is
    /// discarded.
    pub fn into_inner(self) -> R {
        self.reader
    }

    fn project(self: Pin<&mut Self>) -> (Pin<&mut R>, u8, &mut Vec<u8>) {
        // SAFETY: as for `Lines::project`: `reader` is structurally pinned,
        // `Split` has no `Drop` impl and is `Unpin` only when `R` is.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above; `this.reader` never moves while `self` is pinned.
        let reader = unsafe { Pin::new_unchecked(&mut this.reader) };
        (reader, this.delim, &mut this.bytes)
    }
}

impl<R: AsyncBufRead> Split<R> {
    /// The next segment without its separator, or `None` at end of stream.
    /// A last segment without a separator is still returned.
    ///
    /// On an I/O error the part of the segment read so far is kept, and the
    /// next call continues that segment.
    /// [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) is retried.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a partially read segment is kept in `self`.
    ///
    /// ```
    /// use weft::io::AsyncBufReadExt;
    ///
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let reader: &[u8] = b"a\0bc\0";
    /// // (`AsyncBufReadExt::split` by path: slices have their own `split`.)
    /// let mut parts = AsyncBufReadExt::split(reader, 0);
    /// assert_eq!(parts.next_segment().await?, Some(b"a".to_vec()));
    /// assert_eq!(parts.next_segment().await?, Some(b"bc".to_vec()));
    /// assert_eq!(parts.next_segment().await?, None);
    /// # weft::io::Result::Ok(())
    /// # }).unwrap();
    /// ```
    pub async fn next_segment(&mut self) -> io::Result<Option<Vec<u8>>>
    where
        R: Unpin,
    {
        poll_fn(|cx| Pin::new(&mut *self).poll_next_segment(cx)).await
    }

    /// Polls for the next segment; see [`next_segment`](Split::next_segment).
    pub fn poll_next_segment(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Option<Vec<u8>>>> {
        let (reader, delim, bytes) = self.project();
        let segment = ready!(poll_segment(reader, cx, delim, bytes))?;
        Poll::Ready(Ok(segment.map(|s| s.bytes)))
    }
}

/// One record, its delimiter removed.
struct Segment {
    bytes: Vec<u8>,
    /// The record ended with the delimiter (rather than at end of stream).
    terminated: bool,
}

/// Completes the record accumulated in `bytes`; `None` at end of stream
/// with nothing accumulated. On an I/O error the partial record stays in
/// `bytes`, for the next call to complete.
fn poll_segment<R: AsyncBufRead + ?Sized>(
    reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    delim: u8,
    bytes: &mut Vec<u8>,
) -> Poll<io::Result<Option<Segment>>> {
    // The record is all of `bytes`, however many calls it took, so the
    // count of one call's bytes is not needed.
    let mut appended = 0;
    ready!(poll_read_until(reader, cx, delim, bytes, &mut appended))?;
    let mut record = std::mem::take(bytes);
    if record.is_empty() {
        return Poll::Ready(Ok(None));
    }
    let terminated = record.last() == Some(&delim);
    if terminated {
        record.pop();
    }
    Poll::Ready(Ok(Some(Segment {
        bytes: record,
        terminated,
    })))
}
