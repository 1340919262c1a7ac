//! Asynchronous I/O: the runtime-neutral traits, the utilities built on
//! them, readiness types and [`AsyncFd`].
//!
//! Owns: the public face of `weft::io`. The four traits are
//! [`futures_io`]'s [`AsyncRead`], [`AsyncWrite`], [`AsyncBufRead`] and
//! [`AsyncSeek`], re-exported unchanged, so any type written for the
//! runtime-neutral ecosystem works with weft and weft's types work with it.
//!
//! On top of the traits this module provides Tokio's utility layer under
//! Tokio's names:
//!
//! - extension traits with `async` methods: [`AsyncReadExt`]
//!   (`read`, `read_exact`, `read_to_end`, `read_to_string`, `take`, `chain`),
//!   [`AsyncWriteExt`] (`write`, `write_vectored`, `write_all`, `flush`,
//!   `shutdown`) and [`AsyncBufReadExt`] (`read_until`, `read_line`, `lines`,
//!   `split`); the futures they return are named types in [`util`];
//! - buffering adapters: [`BufReader`] and [`BufWriter`];
//! - whole-stream helpers: [`copy`], [`copy_buf`] and [`copy_bidirectional`];
//! - [`split`], which divides one read-write object into a [`ReadHalf`] and a
//!   [`WriteHalf`] that can move to different tasks;
//! - in-memory streams: [`duplex`] (a bounded pipe pair, handy in tests),
//!   [`empty`], [`sink`] and [`repeat`].
//!
//! One naming difference from Tokio: futures-io calls Tokio's
//! `poll_shutdown` [`AsyncWrite::poll_close`]; [`AsyncWriteExt::shutdown`]
//! keeps Tokio's name and drives `poll_close`.
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
pub mod util;

pub use crate::runtime::io::ready::{Interest, Ready};
pub use async_fd::{AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, TryIoError};
pub use futures_io::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite};
pub use std::io::{Error, ErrorKind, IoSlice, IoSliceMut, Result, SeekFrom};

pub use util::{
    copy, copy_bidirectional, copy_buf, duplex, empty, repeat, sink, split, AsyncBufReadExt,
    AsyncReadExt, AsyncWriteExt, BufReader, BufWriter, Chain, DuplexStream, Empty, Lines, ReadHalf,
    Repeat, Sink, Split, Take, WriteHalf,
};
