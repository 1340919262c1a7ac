//! Bridges between weft's I/O traits and the other two trait families.
//!
//! weft's [`AsyncRead`](crate::io::AsyncRead) / [`AsyncWrite`](crate::io::AsyncWrite)
//! have Tokio's shapes (DESIGN.md, "I/O traits"). Two other worlds meet
//! them:
//!
//! - **futures-io** (smol, async-std, `futures`' combinators): [`Compat`]
//!   adapts in both directions, as tokio-util's `compat` module does.
//!   `.compat()` / `.compat_write()` from [`FuturesAsyncReadCompatExt`] /
//!   [`FuturesAsyncWriteCompatExt`] turn a futures-io object into a weft
//!   one; [`WeftAsyncReadCompatExt`] / [`WeftAsyncWriteCompatExt`] do the
//!   reverse. Always available.
//! - **the real `tokio` crate's traits** (feature `tokio-io`), for programs
//!   that mix weft with libraries built on crates.io Tokio without the
//!   `tokio` shim: weft's streams implement Tokio's traits directly, and
//!   [`TokioIo`] adapts any other object either way.
//!
//! ```
//! use weft::compat::{FuturesAsyncReadCompatExt, WeftAsyncWriteCompatExt};
//! use weft::io::AsyncReadExt;
//!
//! # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! // A futures-io reader read with weft's AsyncReadExt.
//! let futures_reader = futures_io_reader();
//! let mut text = String::new();
//! futures_reader.compat().read_to_string(&mut text).await?;
//! assert_eq!(text, "from futures-io");
//!
//! // A weft writer handed to code that wants futures-io.
//! fn wants_futures_io(_: impl futures_io::AsyncWrite) {}
//! wants_futures_io(Vec::<u8>::new().compat_write());
//! # weft::io::Result::Ok(())
//! # }).unwrap();
//! # fn futures_io_reader() -> impl futures_io::AsyncRead + Unpin {
//! #     struct R(&'static [u8]);
//! #     impl futures_io::AsyncRead for R {
//! #         fn poll_read(mut self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>, buf: &mut [u8]) -> std::task::Poll<std::io::Result<usize>> {
//! #             let n = self.0.len().min(buf.len());
//! #             buf[..n].copy_from_slice(&self.0[..n]);
//! #             self.0 = &self.0[n..];
//! #             std::task::Poll::Ready(Ok(n))
//! #         }
//! #     }
//! #     R(b"from futures-io")
//! # }
//! ```

mod futures_io_compat;
#[cfg(feature = "tokio-io")]
mod tokio_io;

pub use futures_io_compat::{
    Compat, FuturesAsyncReadCompatExt, FuturesAsyncWriteCompatExt, WeftAsyncReadCompatExt,
    WeftAsyncWriteCompatExt,
};
#[cfg(feature = "tokio-io")]
pub use tokio_io::TokioIo;
