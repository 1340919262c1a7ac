//! Splitting a `TcpStream` into read and write halves.
//!
//! Owns: the borrowed halves (`split`, no allocation) and the owned halves
//! (`into_split`, one `Arc`). A stream's read and write directions are
//! independent in the kernel and in the registration (separate waker slots),
//! so the halves need no lock.

use super::TcpStream;
use crate::io::{AsyncRead, AsyncWrite};
use std::error::Error;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The read half of [`TcpStream::split`].
#[derive(Debug)]
pub struct ReadHalf<'a>(&'a TcpStream);

/// The write half of [`TcpStream::split`]. `poll_close` shuts down the
/// write direction.
#[derive(Debug)]
pub struct WriteHalf<'a>(&'a TcpStream);

pub(crate) fn split(stream: &mut TcpStream) -> (ReadHalf<'_>, WriteHalf<'_>) {
    (ReadHalf(stream), WriteHalf(stream))
}

/// The owned read half of [`TcpStream::into_split`].
#[derive(Debug)]
pub struct OwnedReadHalf {
    inner: Arc<TcpStream>,
}

/// The owned write half of [`TcpStream::into_split`]. Dropping it shuts
/// down the write direction (the peer reads EOF), unless it was reunited.
#[derive(Debug)]
pub struct OwnedWriteHalf {
    inner: Arc<TcpStream>,
    shutdown_on_drop: bool,
}

pub(crate) fn into_split(stream: TcpStream) -> (OwnedReadHalf, OwnedWriteHalf) {
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

/// [`OwnedReadHalf::reunite`] was given halves of two different streams.
#[derive(Debug)]
pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

impl fmt::Display for ReuniteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tried to reunite halves that are not from the same socket")
    }
}

impl Error for ReuniteError {}

impl OwnedReadHalf {
    /// Put the stream back together. Fails (handing both halves back) if
    /// they come from different streams.
    pub fn reunite(self, other: OwnedWriteHalf) -> Result<TcpStream, ReuniteError> {
        if !Arc::ptr_eq(&self.inner, &other.inner) {
            return Err(ReuniteError(self, other));
        }
        let mut other = other;
        other.shutdown_on_drop = false;
        let inner = other.inner.clone();
        drop(other);
        drop(self);
        Ok(Arc::try_unwrap(inner).expect("both halves were just dropped"))
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.peer_addr()
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// Wait until readable. Cancel-safe.
    pub async fn readable(&self) -> io::Result<()> {
        self.inner.readable().await
    }

    /// See [`TcpStream::try_read`].
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.try_read(buf)
    }

    /// See [`TcpStream::peek`].
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.peek(buf).await
    }
}

impl OwnedWriteHalf {
    /// Put the stream back together (see [`OwnedReadHalf::reunite`]).
    pub fn reunite(self, other: OwnedReadHalf) -> Result<TcpStream, ReuniteError> {
        other.reunite(self)
    }

    /// Drop this half without shutting down the write direction.
    pub fn forget(mut self) {
        self.shutdown_on_drop = false;
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.peer_addr()
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// Wait until writable. Cancel-safe.
    pub async fn writable(&self) -> io::Result<()> {
        self.inner.writable().await
    }

    /// See [`TcpStream::try_write`].
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.inner.try_write(buf)
    }
}

impl Drop for OwnedWriteHalf {
    fn drop(&mut self) {
        if self.shutdown_on_drop {
            let _ = self.inner.shutdown_write();
        }
    }
}

macro_rules! read_impl {
    ($t:ty, $($field:tt)+) => {
        impl AsyncRead for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut [u8],
            ) -> Poll<io::Result<usize>> {
                self.$($field)+.poll_read_priv(cx, buf)
            }
        }
    };
}

macro_rules! write_impl {
    ($t:ty, $($field:tt)+) => {
        impl AsyncWrite for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.$($field)+.poll_write_priv(cx, buf)
            }

            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[io::IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                self.$($field)+.poll_write_vectored_priv(cx, bufs)
            }

            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }

            fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.$($field)+.shutdown_write())
            }
        }
    };
}

read_impl!(ReadHalf<'_>, 0);
write_impl!(WriteHalf<'_>, 0);
read_impl!(OwnedReadHalf, inner);
write_impl!(OwnedWriteHalf, inner);
