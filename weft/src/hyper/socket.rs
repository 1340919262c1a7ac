//! hyper's I/O traits implemented by weft's stream sockets themselves.
//!
//! Owns: `hyper::rt::Read` / `Write` for [`TcpStream`] and [`UnixStream`].
//! Unlike [`WeftIo`](super::WeftIo), which must zero hyper's buffer to
//! hand a futures-io reader a `&mut [u8]`, a socket reads straight into
//! hyper's uninitialized buffer (`read(2)` through a raw pointer), so a
//! server can pass accepted streams to hyper as they are.

use crate::net::halves::{ReadUninit, SplitStream};
use crate::net::{TcpStream, UnixStream};
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

macro_rules! hyper_socket {
    ($t:ty) => {
        impl hyper::rt::Read for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                mut buf: hyper::rt::ReadBufCursor<'_>,
            ) -> Poll<io::Result<()>> {
                // SAFETY: `as_mut` requires that no initialized byte is
                // de-initialized through the slice; the socket only writes
                // bytes it read.
                let unfilled = unsafe { buf.as_mut() };
                let n = ready!(ReadUninit::poll_read_uninit(&*self, cx, unfilled))?;
                // SAFETY: the read initialized the first `n` bytes of the
                // cursor's unfilled part.
                unsafe { buf.advance(n) };
                Poll::Ready(Ok(()))
            }
        }

        impl hyper::rt::Write for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                SplitStream::poll_write(&*self, cx, buf)
            }

            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[io::IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                SplitStream::poll_write_vectored(&*self, cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                true
            }

            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                SplitStream::poll_flush_writes(&*self)
            }

            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                SplitStream::poll_shutdown_write(&*self, cx)
            }
        }
    };
}

hyper_socket!(TcpStream);
hyper_socket!(UnixStream);
