//! Read and write halves of a stream socket, shared by TCP and Unix streams.
//!
//! Owns: the borrowed halves (`split`, no allocation) and the owned halves
//! (`into_split`, one `Arc`), generic over the stream type. `tcp` and
//! `unix` name them with type aliases (`tcp::OwnedReadHalf` is
//! `OwnedReadHalf<TcpStream>`), and each defines its own `ReuniteError`
//! ([`reunite_error!`]).
//!
//! Invariant: a stream's read and write directions are independent in the
//! kernel and in the registration (separate waker slots), so the halves need
//! no lock. Only the owned write half shuts the write direction down on drop,
//! and not when it is being reunited.

use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

/// What a stream type provides so its halves can be built on it. Public
/// in a private module (sealed): it appears in the halves' bounds, but no
/// one outside the crate can name or implement it.
pub trait SplitStream: ReadUninit {
    /// The stream's address type.
    type Addr;
    fn local_addr(&self) -> io::Result<Self::Addr>;
    fn peer_addr(&self) -> io::Result<Self::Addr>;
    /// Wait for `interest` (any number of waiters; cancel-safe).
    fn ready(&self, interest: Interest) -> impl Future<Output = io::Result<Ready>> + Send + '_;
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize>;
    fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize>;
    fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize>;
    fn try_write(&self, buf: &[u8]) -> io::Result<usize>;
    fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize>;
    fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>>;
    fn poll_write_vectored(
        &self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>>;
    /// Shut down the write direction now (already closed counts as
    /// success); with io_uring sends in flight, after them (a dropped
    /// owned write half).
    fn shutdown_write(&self) -> io::Result<()>;
    /// `AsyncWrite::poll_flush`: nothing buffered to wait for, but a ring
    /// send's late error is reported here.
    fn poll_flush_writes(&self) -> Poll<io::Result<()>>;
    /// `AsyncWrite::poll_shutdown`: every byte written goes out first.
    fn poll_shutdown_write(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    /// The error `reunite` gives: a tuple struct of the stream's own module
    /// (`tcp::ReuniteError(read, write)`, as Tokio's, so that callers can
    /// build and match it), made by [`reunite_error!`].
    type ReuniteError;
    fn reunite_error(read: OwnedReadHalf<Self>, write: OwnedWriteHalf<Self>) -> Self::ReuniteError
    where
        Self: Sized;
}

/// The read half of a stream's `split`: borrows the stream.
#[derive(Debug)]
pub struct ReadHalf<'a, S>(&'a S);

/// The write half of a stream's `split`: borrows the stream.
/// `poll_shutdown` shuts down the write direction.
#[derive(Debug)]
pub struct WriteHalf<'a, S>(&'a S);

pub(crate) fn split<S>(stream: &mut S) -> (ReadHalf<'_, S>, WriteHalf<'_, S>) {
    (ReadHalf(stream), WriteHalf(stream))
}

/// The owned read half of a stream's `into_split`: can move to another
/// task.
#[derive(Debug)]
pub struct OwnedReadHalf<S> {
    inner: Arc<S>,
}

/// The owned write half of a stream's `into_split`. Dropping it shuts down
/// the write direction (the peer reads EOF), unless it was reunited or
/// [`forget`](OwnedWriteHalf::forget)-ed.
#[derive(Debug)]
pub struct OwnedWriteHalf<S: SplitStream> {
    inner: Arc<S>,
    shutdown_on_drop: bool,
}

pub(crate) fn into_split<S: SplitStream>(stream: S) -> (OwnedReadHalf<S>, OwnedWriteHalf<S>) {
    let inner = Arc::new(stream);
    (
        OwnedReadHalf {
            inner: inner.clone(),
        },
        OwnedWriteHalf {
            inner,
            shutdown_on_drop: true,
        },
    )
}

/// Defines `ReuniteError` in a stream's module, of the `OwnedReadHalf` and
/// `OwnedWriteHalf` named there (one per stream type, each a tuple struct
/// with public fields, as Tokio's: a type alias of a generic struct could
/// not be built or matched as `ReuniteError(read, write)`).
macro_rules! reunite_error {
    () => {
        /// `reunite` was given halves of two different streams; `.0` and
        /// `.1` hand them back.
        #[derive(Debug)]
        pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

        impl ::std::fmt::Display for ReuniteError {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str("tried to reunite halves that are not from the same socket")
            }
        }

        impl ::std::error::Error for ReuniteError {}
    };
}
pub(crate) use reunite_error;

/// The methods every half has (addresses and `ready`), on the stream
/// `self.stream()` reaches.
macro_rules! half_methods {
    ($direction:literal) => {
        /// The peer's address.
        pub fn peer_addr(&self) -> io::Result<S::Addr> {
            self.stream().peer_addr()
        }

        /// The local address.
        pub fn local_addr(&self) -> io::Result<S::Addr> {
            self.stream().local_addr()
        }

        /// Wait until the stream is ready for any of `interest`, as the
        #[doc = concat!("stream's own `ready` (a ", $direction, " half may ask for either")]
        /// direction). The result may be empty or a false positive: check it
        /// and retry on `WouldBlock`. Cancel-safe.
        pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
            self.stream().ready(interest).await
        }
    };
}

/// The read methods both read halves have.
macro_rules! read_half_methods {
    () => {
        half_methods!("read");

        /// Wait until readable. Cancel-safe.
        pub async fn readable(&self) -> io::Result<()> {
            self.ready(Interest::READABLE).await.map(drop)
        }

        /// Read once without waiting: `WouldBlock` if no data is there.
        pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
            self.stream().try_read(buf)
        }

        /// [`try_read`](Self::try_read) into `buf`'s spare capacity (not
        /// zeroed first), advancing it by what arrived.
        pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
            self.stream().try_read_buf(buf)
        }

        /// Vectored [`try_read`](Self::try_read): fills `bufs` in order.
        pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
            self.stream().try_read_vectored(bufs)
        }
    };
}

/// The write methods both write halves have.
macro_rules! write_half_methods {
    () => {
        half_methods!("write");

        /// Wait until writable. Cancel-safe.
        pub async fn writable(&self) -> io::Result<()> {
            self.ready(Interest::WRITABLE).await.map(drop)
        }

        /// Write once without waiting: `WouldBlock` if the send buffer is
        /// full.
        pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
            self.stream().try_write(buf)
        }

        /// Vectored [`try_write`](Self::try_write): sends `bufs` in order.
        pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
            self.stream().try_write_vectored(bufs)
        }
    };
}

impl<'a, S: SplitStream> ReadHalf<'a, S> {
    pub(crate) fn stream(&self) -> &'a S {
        self.0
    }

    read_half_methods!();
}

impl<S: SplitStream> WriteHalf<'_, S> {
    fn stream(&self) -> &S {
        self.0
    }

    write_half_methods!();
}

impl<S: SplitStream> OwnedReadHalf<S> {
    /// Put the stream back together. Fails (handing both halves back) if
    /// they come from different streams.
    pub fn reunite(self, other: OwnedWriteHalf<S>) -> Result<S, S::ReuniteError> {
        if !Arc::ptr_eq(&self.inner, &other.inner) {
            return Err(S::reunite_error(self, other));
        }
        let mut other = other;
        other.shutdown_on_drop = false;
        drop(self);
        let inner = other.inner.clone();
        drop(other);
        match Arc::try_unwrap(inner) {
            Ok(stream) => Ok(stream),
            Err(_) => unreachable!("both halves were just dropped"),
        }
    }

    pub(crate) fn stream(&self) -> &S {
        &self.inner
    }

    read_half_methods!();
}

impl<S: SplitStream> OwnedWriteHalf<S> {
    /// Put the stream back together (see [`OwnedReadHalf::reunite`]).
    pub fn reunite(self, other: OwnedReadHalf<S>) -> Result<S, S::ReuniteError> {
        other.reunite(self)
    }

    /// Drop this half without shutting down the write direction.
    pub fn forget(mut self) {
        self.shutdown_on_drop = false;
    }

    fn stream(&self) -> &S {
        &self.inner
    }

    write_half_methods!();
}

/// `AsRef<S>` for every half: the stream it belongs to (as Tokio's halves
/// give `AsRef<TcpStream>` / `AsRef<UnixStream>`).
macro_rules! as_ref_stream {
    ($($half:ty),*) => {$(
        impl<S: SplitStream> AsRef<S> for $half {
            fn as_ref(&self) -> &S {
                self.stream()
            }
        }
    )*};
}

as_ref_stream!(
    ReadHalf<'_, S>,
    WriteHalf<'_, S>,
    OwnedReadHalf<S>,
    OwnedWriteHalf<S>
);

impl<S: SplitStream> Drop for OwnedWriteHalf<S> {
    fn drop(&mut self) {
        if self.shutdown_on_drop {
            let _ = self.inner.shutdown_write();
        }
    }
}

impl<S: SplitStream> AsyncRead for ReadHalf<'_, S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        poll_read_buf(self.0, cx, buf)
    }
}

impl<S: SplitStream> AsyncRead for OwnedReadHalf<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        poll_read_buf(&*self.inner, cx, buf)
    }
}

/// A socket read straight into `buf`'s unfilled, possibly uninitialised,
/// memory: no zeroing, no copy.
pub(crate) fn poll_read_buf<R: ReadUninit + ?Sized>(
    reader: &R,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    // SAFETY: `poll_read_uninit` only writes bytes (read(2) through a raw
    // pointer) and never de-initialises any.
    let unfilled = unsafe { buf.unfilled_mut() };
    let n = ready!(reader.poll_read_uninit(cx, unfilled))?;
    // SAFETY: read(2) initialised the first `n` unfilled bytes.
    unsafe { buf.assume_init(n) };
    buf.advance(n);
    Poll::Ready(Ok(()))
}

/// Streams and read halves that can read into uninitialized memory, for
/// the adapters to hyper's and Tokio's read buffers (`hyper` and `tokio-io`
/// features). Every [`SplitStream`] is one, so its halves are too. Sealed
/// like `SplitStream`.
pub trait ReadUninit {
    /// `poll_read` into uninitialized memory (see
    /// `PollEvented::poll_read_uninit`).
    fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [std::mem::MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>>;
}

impl<S: SplitStream> ReadUninit for ReadHalf<'_, S> {
    fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [std::mem::MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        self.0.poll_read_uninit(cx, buf)
    }
}

impl<S: SplitStream> ReadUninit for OwnedReadHalf<S> {
    fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [std::mem::MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        self.inner.poll_read_uninit(cx, buf)
    }
}

/// `AsyncWrite` for both write halves, on the stream they reach.
macro_rules! write_impl {
    ($t:ty, $stream:ident => $get:expr) => {
        impl<S: SplitStream> AsyncWrite for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                let $stream = &*self;
                $get.poll_write(cx, buf)
            }

            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[io::IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                let $stream = &*self;
                $get.poll_write_vectored(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                true
            }

            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                let $stream = &*self;
                $get.poll_flush_writes()
            }

            /// Shuts down the write direction (the peer reads EOF).
            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                let $stream = &*self;
                $get.poll_shutdown_write(cx)
            }
        }
    };
}

write_impl!(WriteHalf<'_, S>, half => half.0);
write_impl!(OwnedWriteHalf<S>, half => half.inner);

/// The impls a stream socket type with an `io: PollEvented<_>` field shares:
/// [`SplitStream`] (so the halves work on it), `AsyncRead` and
/// `AsyncWrite` (`poll_shutdown` shuts down the write direction).
macro_rules! stream_socket_impls {
    ($stream:ty, $addr:ty) => {
        impl $crate::net::halves::ReadUninit for $stream {
            fn poll_read_uninit(
                &self,
                cx: &mut ::std::task::Context<'_>,
                buf: &mut [::std::mem::MaybeUninit<u8>],
            ) -> ::std::task::Poll<::std::io::Result<usize>> {
                self.io.poll_read_uninit(cx, buf)
            }
        }

        impl $crate::net::halves::SplitStream for $stream {
            type Addr = $addr;

            fn local_addr(&self) -> ::std::io::Result<$addr> {
                <$stream>::local_addr(self)
            }

            fn peer_addr(&self) -> ::std::io::Result<$addr> {
                <$stream>::peer_addr(self)
            }

            fn ready(
                &self,
                interest: $crate::io::Interest,
            ) -> impl ::std::future::Future<Output = ::std::io::Result<$crate::io::Ready>> + Send + '_
            {
                <$stream>::ready(self, interest)
            }

            fn try_read(&self, buf: &mut [u8]) -> ::std::io::Result<usize> {
                <$stream>::try_read(self, buf)
            }

            fn try_read_buf<B: ::bytes::BufMut>(&self, buf: &mut B) -> ::std::io::Result<usize> {
                <$stream>::try_read_buf(self, buf)
            }

            fn try_read_vectored(
                &self,
                bufs: &mut [::std::io::IoSliceMut<'_>],
            ) -> ::std::io::Result<usize> {
                <$stream>::try_read_vectored(self, bufs)
            }

            fn try_write(&self, buf: &[u8]) -> ::std::io::Result<usize> {
                <$stream>::try_write(self, buf)
            }

            fn try_write_vectored(
                &self,
                bufs: &[::std::io::IoSlice<'_>],
            ) -> ::std::io::Result<usize> {
                <$stream>::try_write_vectored(self, bufs)
            }

            fn poll_write(
                &self,
                cx: &mut ::std::task::Context<'_>,
                buf: &[u8],
            ) -> ::std::task::Poll<::std::io::Result<usize>> {
                self.io.poll_write(cx, buf)
            }

            fn poll_write_vectored(
                &self,
                cx: &mut ::std::task::Context<'_>,
                bufs: &[::std::io::IoSlice<'_>],
            ) -> ::std::task::Poll<::std::io::Result<usize>> {
                self.io.poll_write_vectored(cx, bufs)
            }

            fn shutdown_write(&self) -> ::std::io::Result<()> {
                self.io.shutdown_write_now()
            }

            fn poll_flush_writes(&self) -> ::std::task::Poll<::std::io::Result<()>> {
                self.io.poll_flush()
            }

            fn poll_shutdown_write(
                &self,
                cx: &mut ::std::task::Context<'_>,
            ) -> ::std::task::Poll<::std::io::Result<()>> {
                self.io.poll_shutdown_write(cx)
            }

            type ReuniteError = ReuniteError;

            fn reunite_error(read: OwnedReadHalf, write: OwnedWriteHalf) -> ReuniteError {
                ReuniteError(read, write)
            }
        }

        impl $crate::io::AsyncRead for $stream {
            fn poll_read(
                self: ::std::pin::Pin<&mut Self>,
                cx: &mut ::std::task::Context<'_>,
                buf: &mut $crate::io::ReadBuf<'_>,
            ) -> ::std::task::Poll<::std::io::Result<()>> {
                $crate::net::halves::poll_read_buf(&*self, cx, buf)
            }
        }

        impl $crate::io::AsyncWrite for $stream {
            fn poll_write(
                self: ::std::pin::Pin<&mut Self>,
                cx: &mut ::std::task::Context<'_>,
                buf: &[u8],
            ) -> ::std::task::Poll<::std::io::Result<usize>> {
                self.io.poll_write(cx, buf)
            }

            fn poll_write_vectored(
                self: ::std::pin::Pin<&mut Self>,
                cx: &mut ::std::task::Context<'_>,
                bufs: &[::std::io::IoSlice<'_>],
            ) -> ::std::task::Poll<::std::io::Result<usize>> {
                self.io.poll_write_vectored(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                true
            }

            fn poll_flush(
                self: ::std::pin::Pin<&mut Self>,
                _cx: &mut ::std::task::Context<'_>,
            ) -> ::std::task::Poll<::std::io::Result<()>> {
                self.io.poll_flush()
            }

            /// Shuts down the write direction (the peer reads EOF) once
            /// every byte written is out.
            fn poll_shutdown(
                self: ::std::pin::Pin<&mut Self>,
                cx: &mut ::std::task::Context<'_>,
            ) -> ::std::task::Poll<::std::io::Result<()>> {
                self.io.poll_shutdown_write(cx)
            }
        }
    };
}

pub(crate) use stream_socket_impls;
