//! Splitting a `UnixStream` into read and write halves.
//!
//! Owns: the Unix names of the generic halves in `net::halves`.

use super::{SocketAddr, UnixStream};
use crate::net::halves;

/// The read half of [`UnixStream::split`].
pub type ReadHalf<'a> = halves::ReadHalf<'a, UnixStream>;

/// The write half of [`UnixStream::split`]. `poll_close` shuts down the
/// write direction.
pub type WriteHalf<'a> = halves::WriteHalf<'a, UnixStream>;

/// The owned read half of [`UnixStream::into_split`].
pub type OwnedReadHalf = halves::OwnedReadHalf<UnixStream>;

/// The owned write half of [`UnixStream::into_split`]. Dropping it shuts
/// down the write direction (the peer reads EOF), unless it was reunited.
pub type OwnedWriteHalf = halves::OwnedWriteHalf<UnixStream>;

halves::reunite_error!();

halves::stream_socket_impls!(UnixStream, SocketAddr);
