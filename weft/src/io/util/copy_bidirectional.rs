//! `copy_bidirectional`: pump two streams into each other until both
//! directions have ended.
//!
//! Owns: the per-direction lifecycle `Running -> ShuttingDown -> Done`. A
//! direction shuts down its writer as soon as its reader ends, so the peer
//! sees end of stream while the other direction may still be running.
//! Each direction's reading and writing (and its retry of `Interrupted`) is
//! `CopyBuffer`'s, in `copy.rs`.

use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::io::{AsyncRead, AsyncWrite};

use super::copy::CopyBuffer;

/// Where one direction of the copy is.
#[derive(Debug)]
enum Transfer {
    Running(CopyBuffer),
    /// The reader ended; the writer is being shut down. Holds the count.
    ShuttingDown(u64),
    Done(u64),
}

impl Transfer {
    fn poll_transfer<R, W>(
        &mut self,
        cx: &mut Context<'_>,
        mut reader: Pin<&mut R>,
        mut writer: Pin<&mut W>,
    ) -> Poll<io::Result<u64>>
    where
        R: AsyncRead + ?Sized,
        W: AsyncWrite + ?Sized,
    {
        loop {
            match self {
                Transfer::Running(buf) => {
                    let amt = ready!(buf.poll_copy(cx, reader.as_mut(), writer.as_mut()))?;
                    *self = Transfer::ShuttingDown(amt);
                }
                Transfer::ShuttingDown(amt) => {
                    ready!(writer.as_mut().poll_shutdown(cx))?;
                    *self = Transfer::Done(*amt);
                }
                Transfer::Done(amt) => return Poll::Ready(Ok(*amt)),
            }
        }
    }
}

/// Copies data both ways between `a` and `b` until both directions have
/// reached end of stream; returns `(bytes a→b, bytes b→a)`.
///
/// When one side's read half ends, the other side's write half is shut down
/// (see [`AsyncWriteExt::shutdown`](super::AsyncWriteExt::shutdown)), and
/// the opposite direction keeps running until it ends too. Reads and writes
/// that fail with [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) are
/// retried; the first other read or write error, or any flush or shutdown
/// error, in either direction ends the whole copy with that error.
///
/// This is the core of a proxy: accept a connection, open one upstream, and
/// `copy_bidirectional(&mut inbound, &mut outbound)`.
///
/// # Cancel safety
///
/// Not cancel safe: data read but not yet written in either direction is
/// lost when the future is dropped.
///
/// ```
/// use weft::io::{AsyncReadExt, AsyncWriteExt};
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (mut client, mut proxy_in) = weft::io::duplex(64);
/// let (mut proxy_out, mut server) = weft::io::duplex(64);
///
/// client.write_all(b"request").await?;
/// client.shutdown().await?;
/// server.write_all(b"response").await?;
/// server.shutdown().await?;
///
/// let (up, down) = weft::io::copy_bidirectional(&mut proxy_in, &mut proxy_out).await?;
/// assert_eq!((up, down), (7, 8));
///
/// let mut got = Vec::new();
/// server.read_to_end(&mut got).await?;
/// assert_eq!(got, b"request");
/// got.clear();
/// client.read_to_end(&mut got).await?;
/// assert_eq!(got, b"response");
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub async fn copy_bidirectional<A, B>(a: &mut A, b: &mut B) -> io::Result<(u64, u64)>
where
    A: AsyncRead + AsyncWrite + Unpin + ?Sized,
    B: AsyncRead + AsyncWrite + Unpin + ?Sized,
{
    copy_both(a, b, CopyBuffer::new(), CopyBuffer::new()).await
}

/// [`copy_bidirectional`] with a buffer of `a_to_b` bytes for the a→b
/// direction and `b_to_a` bytes for the other (the default is 8 KiB each).
///
/// # Panics
///
/// When first polled, as Tokio's does, if either size is 0: a direction
/// needs room for at least one byte. The message names the line that
/// made the future.
#[track_caller]
pub fn copy_bidirectional_with_sizes<'a, A, B>(
    a: &'a mut A,
    b: &'a mut B,
    a_to_b: usize,
    b_to_a: usize,
) -> impl Future<Output = io::Result<(u64, u64)>> + 'a
where
    A: AsyncRead + AsyncWrite + Unpin + ?Sized,
    B: AsyncRead + AsyncWrite + Unpin + ?Sized,
{
    let called_at = std::panic::Location::caller();
    async move {
        for (name, size) in [("a_to_b_buf_size", a_to_b), ("b_to_a_buf_size", b_to_a)] {
            assert!(
                size > 0,
                "copy_bidirectional_with_sizes (called at {called_at}): `{name}` must be greater \
                 than 0 (each buffer needs room for at least one byte); pass a size of 1 or more"
            );
        }
        copy_both(
            a,
            b,
            CopyBuffer::with_capacity(a_to_b),
            CopyBuffer::with_capacity(b_to_a),
        )
        .await
    }
}

async fn copy_both<A, B>(
    a: &mut A,
    b: &mut B,
    a_to_b: CopyBuffer,
    b_to_a: CopyBuffer,
) -> io::Result<(u64, u64)>
where
    A: AsyncRead + AsyncWrite + Unpin + ?Sized,
    B: AsyncRead + AsyncWrite + Unpin + ?Sized,
{
    let mut a_to_b = Transfer::Running(a_to_b);
    let mut b_to_a = Transfer::Running(b_to_a);
    poll_fn(|cx| {
        let ab = a_to_b.poll_transfer(cx, Pin::new(&mut *a), Pin::new(&mut *b))?;
        let ba = b_to_a.poll_transfer(cx, Pin::new(&mut *b), Pin::new(&mut *a))?;
        match (ab, ba) {
            (Poll::Ready(ab), Poll::Ready(ba)) => Poll::Ready(Ok((ab, ba))),
            _ => Poll::Pending,
        }
    })
    .await
}
