//! The four I/O traits, with Tokio's exact shapes, defined by weft (see
//! DESIGN.md, "I/O traits": code written for Tokio implements and calls
//! these signatures, and the `tokio` shim must not depend on Tokio).
//!
//! Owns: [`AsyncRead`] (reads into a [`ReadBuf`](super::ReadBuf)),
//! [`AsyncWrite`] (with `poll_shutdown` and vectored writes),
//! [`AsyncBufRead`] and [`AsyncSeek`], and their impls for std's pointer,
//! slice, `Vec` and `Cursor` types, as Tokio provides them. One file per
//! trait.

mod async_buf_read;
mod async_read;
mod async_seek;
mod async_write;

pub use async_buf_read::AsyncBufRead;
pub use async_read::AsyncRead;
pub use async_seek::AsyncSeek;
pub use async_write::AsyncWrite;
