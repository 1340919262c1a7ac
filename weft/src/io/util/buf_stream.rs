//! `BufStream`: a read buffer and a write buffer around one stream.
//!
//! Owns: nothing of its own; it is `BufReader<BufWriter<S>>` under Tokio's
//! name, so reads are buffered on the way in and writes on the way out.

use super::{BufReader, BufWriter};
use crate::io::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};
use std::io::{self, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Buffers both directions of a stream. As with [`BufWriter`], flush or
/// shut down before dropping it, or buffered writes are lost.
///
/// ```
/// use weft::io::{AsyncBufReadExt, AsyncWriteExt, BufStream};
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (client, mut server) = weft::io::duplex(64);
/// let mut stream = BufStream::new(client);
/// stream.write_all(b"ping\n").await?;
/// stream.flush().await?;
/// let mut line = String::new();
/// weft::io::BufReader::new(&mut server).read_line(&mut line).await?;
/// assert_eq!(line, "ping\n");
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct BufStream<S> {
    inner: BufReader<BufWriter<S>>,
}

impl<S: AsyncRead + AsyncWrite> BufStream<S> {
    /// Buffers of the default size (8 KiB each way).
    pub fn new(stream: S) -> BufStream<S> {
        BufStream {
            inner: BufReader::new(BufWriter::new(stream)),
        }
    }

    /// Buffers of the given sizes.
    ///
    /// # Panics
    ///
    /// If `reader_capacity` is 0, as [`BufReader::with_capacity`].
    #[track_caller]
    pub fn with_capacity(
        reader_capacity: usize,
        writer_capacity: usize,
        stream: S,
    ) -> BufStream<S> {
        // Checked here too so the message names this call's parameter.
        assert!(
            reader_capacity > 0,
            "BufStream::with_capacity: reader_capacity must be greater than zero (a read buffer \
             needs room for at least one byte); pass a reader_capacity of 1 or more \
             (BufStream::new uses 8 KiB)"
        );
        BufStream {
            inner: BufReader::with_capacity(
                reader_capacity,
                BufWriter::with_capacity(writer_capacity, stream),
            ),
        }
    }
}

impl<S> BufStream<S> {
    /// The stream.
    pub fn get_ref(&self) -> &S {
        self.inner.get_ref().get_ref()
    }

    /// The stream, mutably (bypassing both buffers).
    pub fn get_mut(&mut self) -> &mut S {
        self.inner.get_mut().get_mut()
    }

    /// The pinned stream.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut S> {
        self.pin_inner().get_pin_mut().get_pin_mut()
    }

    /// The stream, dropping whatever is buffered either way.
    pub fn into_inner(self) -> S {
        self.inner.into_inner().into_inner()
    }

    fn pin_inner(self: Pin<&mut Self>) -> Pin<&mut BufReader<BufWriter<S>>> {
        // SAFETY: `inner` is structurally pinned: `BufStream` has no `Drop`
        // and never moves it out while pinned.
        unsafe { self.map_unchecked_mut(|s| &mut s.inner) }
    }
}

/// A `BufStream` is this stack: taking one over keeps both buffers and
/// whatever they hold.
/// A writer over a reader becomes a reader over a writer, both buffers
/// and their contents kept, as Tokio's does.
impl<S> From<BufWriter<BufReader<S>>> for BufStream<S> {
    fn from(outer: BufWriter<BufReader<S>>) -> BufStream<S> {
        let (reader, write_state) = outer.into_raw();
        let (stream, read_state) = reader.into_raw();
        let writer = BufWriter::<S>::from_raw(stream, write_state);
        BufStream {
            inner: BufReader::<BufWriter<S>>::from_raw(writer, read_state),
        }
    }
}

impl<S> From<BufReader<BufWriter<S>>> for BufStream<S> {
    fn from(inner: BufReader<BufWriter<S>>) -> BufStream<S> {
        BufStream { inner }
    }
}

impl<S: AsyncRead> AsyncRead for BufStream<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.pin_inner().poll_read(cx, buf)
    }
}

impl<S: AsyncRead> AsyncBufRead for BufStream<S> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.pin_inner().poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.pin_inner().consume(amt)
    }
}

impl<S: AsyncWrite> AsyncWrite for BufStream<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.pin_inner().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.pin_inner().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pin_inner().poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + AsyncSeek> AsyncSeek for BufStream<S> {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        self.pin_inner().start_seek(position)
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        self.pin_inner().poll_complete(cx)
    }
}
