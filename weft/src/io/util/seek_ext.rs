//! `AsyncSeekExt`: `async` methods for every [`AsyncSeek`].
//!
//! Owns: `seek`, `rewind` and `stream_position`, and [`Seek`], the one
//! future they share: it starts the seek on its first poll and then waits
//! for completion, so dropping it before the first poll does nothing.

use crate::io::AsyncSeek;
use std::future::Future;
use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// `async` methods for [`AsyncSeek`] types, with Tokio's names.
///
/// ```
/// use std::io::{Cursor, SeekFrom};
/// use weft::io::{AsyncReadExt, AsyncSeekExt};
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut cursor = Cursor::new(b"0123456789".to_vec());
/// assert_eq!(cursor.seek(SeekFrom::Start(7)).await?, 7);
/// let mut rest = String::new();
/// cursor.read_to_string(&mut rest).await?;
/// assert_eq!(rest, "789");
/// cursor.rewind().await?;
/// assert_eq!(cursor.stream_position().await?, 0);
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub trait AsyncSeekExt: AsyncSeek {
    /// Move to `position`; returns the new position from the start.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe once polled: the seek may have happened.
    fn seek(&mut self, position: SeekFrom) -> Seek<'_, Self>
    where
        Self: Unpin,
    {
        Seek {
            seeker: self,
            position: Some(position),
        }
    }

    /// Move to the start.
    fn rewind(&mut self) -> Seek<'_, Self>
    where
        Self: Unpin,
    {
        self.seek(SeekFrom::Start(0))
    }

    /// The current position from the start.
    fn stream_position(&mut self) -> Seek<'_, Self>
    where
        Self: Unpin,
    {
        self.seek(SeekFrom::Current(0))
    }
}

impl<S: AsyncSeek + ?Sized> AsyncSeekExt for S {}

/// Future returned by the methods of [`AsyncSeekExt`]; resolves to the new
/// position.
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct Seek<'a, S: ?Sized> {
    seeker: &'a mut S,
    /// Taken when the seek is started.
    position: Option<SeekFrom>,
}

impl<S: AsyncSeek + Unpin + ?Sized> Future for Seek<'_, S> {
    type Output = io::Result<u64>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(position) = this.position {
            // A seek left in flight by someone else must finish first.
            ready!(Pin::new(&mut *this.seeker).poll_complete(cx))?;
            Pin::new(&mut *this.seeker).start_seek(position)?;
            this.position = None;
        }
        Pin::new(&mut *this.seeker).poll_complete(cx)
    }
}
