//! Asynchronous I/O: Tokio's traits, the utilities built on them,
//! readiness types and [`AsyncFd`].
//!
//! Owns: the public face of `weft::io`. The four traits [`AsyncRead`] (which
//! reads into a [`ReadBuf`], so a socket read can fill uninitialised
//! memory), [`AsyncWrite`] (with `poll_shutdown` and vectored writes),
//! [`AsyncBufRead`] and [`AsyncSeek`] have Tokio's exact signatures and are
//! defined here (DESIGN.md, "I/O traits"), so code written for Tokio's
//! traits compiles against weft unchanged. The futures-io world is one
//! adapter away ([`crate::compat`]).
//!
//! On top of the traits this module provides Tokio's utility layer under
//! Tokio's names:
//!
//! - extension traits with `async` methods: [`AsyncReadExt`] (`read`,
//!   `read_buf`, `read_exact`, `read_to_end`, `read_to_string`, `read_u8` ...
//!   `read_f64_le`, `take`, `chain`), [`AsyncWriteExt`] (`write`,
//!   `write_vectored`, `write_buf`, `write_all`, `write_all_buf`, `write_u8`
//!   ... `write_f64_le`, `flush`, `shutdown`), [`AsyncBufReadExt`]
//!   (`fill_buf`, `consume`, `read_until`, `read_line`, `lines`, `split`) and
//!   [`AsyncSeekExt`] (`seek`, `rewind`, `stream_position`); the futures
//!   they return are named types in [`util`];
//! - buffering adapters: [`BufReader`], [`BufWriter`] and [`BufStream`];
//! - whole-stream helpers: [`copy`], [`copy_buf`], [`copy_bidirectional`] and
//!   [`copy_bidirectional_with_sizes`];
//! - [`split`], which divides one read-write object into a [`ReadHalf`] and a
//!   [`WriteHalf`] that can move to different tasks, and [`join`], which does
//!   the opposite;
//! - in-memory streams: [`duplex`] (a bounded pipe pair, handy in tests),
//!   [`simplex`] (one way), [`empty`], [`sink`] and [`repeat`].
//!
//! ```
//! use weft::io::{AsyncReadExt, AsyncWriteExt};
//!
//! # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let (mut client, mut server) = weft::io::duplex(64);
//! client.write_all(b"ping").await?;
//! let mut buf = [0u8; 4];
//! server.read_exact(&mut buf).await?;
//! assert_eq!(&buf, b"ping");
//! # weft::io::Result::Ok(())
//! # }).unwrap();
//! ```

/// Inside an adapter's write-trait impl, the three methods every adapter
/// forwards unchanged to its `pin_inner()` (`poll_write`,
/// `poll_write_vectored`, `poll_flush`), whichever write trait the inner
/// type has: `compat::TokioIo` and `hyper::WeftIo`, both directions each.
/// Each impl still writes its own close and `is_write_vectored`.
#[cfg(any(feature = "hyper", feature = "tokio-io"))]
macro_rules! forward_writes_to_inner {
    () => {
        fn poll_write(
            self: ::std::pin::Pin<&mut Self>,
            cx: &mut ::std::task::Context<'_>,
            buf: &[u8],
        ) -> ::std::task::Poll<::std::io::Result<usize>> {
            self.pin_inner().poll_write(cx, buf)
        }

        fn poll_write_vectored(
            self: ::std::pin::Pin<&mut Self>,
            cx: &mut ::std::task::Context<'_>,
            bufs: &[::std::io::IoSlice<'_>],
        ) -> ::std::task::Poll<::std::io::Result<usize>> {
            self.pin_inner().poll_write_vectored(cx, bufs)
        }

        fn poll_flush(
            self: ::std::pin::Pin<&mut Self>,
            cx: &mut ::std::task::Context<'_>,
        ) -> ::std::task::Poll<::std::io::Result<()>> {
            self.pin_inner().poll_flush(cx)
        }
    };
}
#[cfg(any(feature = "hyper", feature = "tokio-io"))]
pub(crate) use forward_writes_to_inner;

mod async_fd;
pub(crate) mod poll_evented;
mod read_buf;
mod stdio;
mod traits;
pub mod util;

pub use crate::runtime::io::ready::{Interest, Ready};
#[allow(deprecated)]
#[doc(hidden)]
pub use async_fd::AsyncFdTryNewError;
pub use async_fd::{
    AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, AsyncFdRegisterError, TryIoError,
};

/// Unix-only I/O, at Tokio's path (`tokio::io::unix`): [`AsyncFd`] and its
/// guards. (They are also re-exported from `weft::io` itself.)
pub mod unix {
    #[allow(deprecated)]
    #[doc(hidden)]
    pub use super::async_fd::AsyncFdTryNewError;
    pub use super::async_fd::{
        AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, AsyncFdRegisterError, TryIoError,
    };
}
pub use read_buf::ReadBuf;
pub use std::io::{Error, ErrorKind, IoSlice, IoSliceMut, Result, SeekFrom};
pub use stdio::{stderr, stdin, stdout, Stderr, Stdin, Stdout};
pub use traits::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite};

pub use util::{
    copy, copy_bidirectional, copy_bidirectional_with_sizes, copy_buf, duplex, empty, join, repeat,
    simplex, sink, split, AsyncBufReadExt, AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufReader,
    BufStream, BufWriter, Chain, DuplexStream, Empty, Join, Lines, ReadHalf, Repeat, SimplexStream,
    Sink, Split, Take, WriteHalf,
};
