//! Asynchronous I/O: the runtime-neutral traits, readiness types and
//! [`AsyncFd`].
//!
//! The traits are `futures_io`'s ([`AsyncRead`], [`AsyncWrite`],
//! [`AsyncBufRead`]), so weft's sockets work with any library written
//! against them.

mod async_fd;
pub(crate) mod poll_evented;

pub use crate::runtime::io::ready::{Interest, Ready};
pub use async_fd::{AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, TryIoError};
pub use futures_io::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite};
pub use std::io::{Error, ErrorKind, Result, SeekFrom};
