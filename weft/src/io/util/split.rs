//! `split`: divide one read-write object into a read half and a write half
//! that can be owned, and driven, by different tasks.
//!
//! Owns: the shared cell both halves point to. The stream sits in an `Arc`
//! behind a `std::sync::Mutex` that is held only for the length of one
//! `poll_*` call; polls never block, so the lock is never held across an
//! await and contention is just two short critical sections meeting.
//!
//! Invariant: a shared reference to a half reaches neither the stream nor
//! the `Arc` (every operation on the stream takes `&mut self` or `self`;
//! `&self` methods read the two halves' pointers and a `bool` copied at
//! the split), so the halves are `Sync` whatever `T` is.
//!
//! The lock is std's, not `crate::loom`'s: this is plain I/O plumbing that
//! the loom models do not cover.

use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use crate::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Splits `stream` into a read half and a write half.
///
/// Each half can be moved to its own task. The halves share the stream
/// through an `Arc` and take turns on it: a poll of one half briefly locks
/// out the other. Use [`ReadHalf::unsplit`] to get the stream back.
///
/// ```
/// use weft::io::{AsyncReadExt, AsyncWriteExt};
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (client, mut server) = weft::io::duplex(64);
/// let (mut rd, mut wr) = weft::io::split(client);
///
/// let writer = weft::spawn(async move {
///     wr.write_all(b"from the write half").await?;
///     weft::io::Result::Ok(wr)
/// });
/// let mut got = vec![0u8; 19];
/// server.read_exact(&mut got).await?;
/// assert_eq!(got, b"from the write half");
///
/// server.write_all(b"back").await?;
/// let mut back = [0u8; 4];
/// rd.read_exact(&mut back).await?;
/// assert_eq!(&back, b"back");
///
/// let wr = writer.await.unwrap()?;
/// let _client = rd.unsplit(wr);
/// # weft::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub fn split<T>(stream: T) -> (ReadHalf<T>, WriteHalf<T>)
where
    T: AsyncRead + AsyncWrite,
{
    let shared = Arc::new(Shared {
        write_vectored: stream.is_write_vectored(),
        stream: Mutex::new(stream),
    });
    (
        ReadHalf {
            shared: Arc::clone(&shared),
        },
        WriteHalf { shared },
    )
}

/// The read half of a stream divided by [`split`].
pub struct ReadHalf<T> {
    shared: Arc<Shared<T>>,
}

/// The write half of a stream divided by [`split`].
pub struct WriteHalf<T> {
    shared: Arc<Shared<T>>,
}

// SAFETY: sharing a half shares nothing of `T` (module invariant). Tokio's
// asks `T: Sync`; a stream that is `Send` but not `Sync` keeps the `Sync`
// halves it had here.
unsafe impl<T> Sync for ReadHalf<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for WriteHalf<T> {}

struct Shared<T> {
    stream: Mutex<T>,
    /// The stream's `is_write_vectored`, read once (it takes `&self`, and
    /// the write half should not lock for it).
    write_vectored: bool,
}

/// A locked stream, pinned in place.
struct Locked<'a, T>(MutexGuard<'a, T>);

impl<T> Locked<'_, T> {
    fn pin(&mut self) -> Pin<&mut T> {
        // SAFETY: the stream lives inside the `Arc` allocation, which never
        // moves, and it is never moved out of it while any half exists: the
        // only way out is `ReadHalf::unsplit`, which needs `T: Unpin` and
        // both halves (so no pinned reference can remain). So once pinned
        // here, it stays where it is until dropped.
        unsafe { Pin::new_unchecked(&mut *self.0) }
    }
}

impl<T> Shared<T> {
    fn lock(&self) -> Locked<'_, T> {
        // A panic inside a poll cannot leave the stream half-moved; treat a
        // poisoned lock as usable, like the rest of weft.
        Locked(self.stream.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl<T> ReadHalf<T> {
    /// Whether `other` is the write half split off the same stream.
    pub fn is_pair_of(&self, other: &WriteHalf<T>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Puts the halves back together and returns the stream.
    ///
    /// # Panics
    ///
    /// If `other` is not this half's pair (see [`is_pair_of`](Self::is_pair_of)).
    #[track_caller]
    pub fn unsplit(self, other: WriteHalf<T>) -> T
    where
        T: Unpin,
    {
        assert!(
            self.is_pair_of(&other),
            "ReadHalf::unsplit called with the write half of a different stream"
        );
        drop(other);
        let shared = Arc::try_unwrap(self.shared)
            .ok()
            .expect("a pair of halves holds the only two references");
        shared
            .stream
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
    }
}

impl<T> WriteHalf<T> {
    /// Whether `other` is the read half split off the same stream.
    pub fn is_pair_of(&self, other: &ReadHalf<T>) -> bool {
        other.is_pair_of(self)
    }
}

impl<T: AsyncRead> AsyncRead for ReadHalf<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.shared.lock().pin().poll_read(cx, buf)
    }
}

impl<T: AsyncWrite> AsyncWrite for WriteHalf<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.shared.lock().pin().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.shared.lock().pin().poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shared.lock().pin().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shared.lock().pin().poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.shared.write_vectored
    }
}

impl<T> fmt::Debug for ReadHalf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadHalf").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for WriteHalf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteHalf").finish_non_exhaustive()
    }
}
