//! Splitting a `TcpStream` into read and write halves.
//!
//! Owns: the TCP names of the generic halves in `net::halves` and the
//! TCP-only `peek` on the read halves.

use super::TcpStream;
use crate::io::ReadBuf;
use crate::net::halves;
use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};

/// The read half of [`TcpStream::split`].
pub type ReadHalf<'a> = halves::ReadHalf<'a, TcpStream>;

/// The write half of [`TcpStream::split`]. `poll_close` shuts down the
/// write direction.
pub type WriteHalf<'a> = halves::WriteHalf<'a, TcpStream>;

/// The owned read half of [`TcpStream::into_split`].
pub type OwnedReadHalf = halves::OwnedReadHalf<TcpStream>;

/// The owned write half of [`TcpStream::into_split`]. Dropping it shuts
/// down the write direction (the peer reads EOF), unless it was reunited.
pub type OwnedWriteHalf = halves::OwnedWriteHalf<TcpStream>;

halves::reunite_error!();

/// `peek` and `poll_peek` on a TCP read half, as on the stream. Both take
/// `&self` (Tokio's take `&mut self`; `&self` accepts every caller of those).
macro_rules! peek_methods {
    () => {
        /// See [`TcpStream::peek`].
        pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
            self.stream().peek(buf).await
        }

        /// See [`TcpStream::poll_peek`].
        pub fn poll_peek(
            &self,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<usize>> {
            self.stream().poll_peek(cx, buf)
        }
    };
}

impl ReadHalf<'_> {
    peek_methods!();
}

impl OwnedReadHalf {
    peek_methods!();
}

halves::stream_socket_impls!(TcpStream, SocketAddr);
