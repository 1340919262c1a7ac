//! The utility layer of `weft::io`: everything here depends only on the
//! I/O traits (`io/traits/`), never on the reactor.
//!
//! Owns: the extension traits, the named futures they return, the buffering
//! adapters, the copy helpers, `split` and the in-memory streams. Each file
//! holds one idea; this module only wires them together and re-exports them.
//! The most used items are re-exported again from [`weft::io`](crate::io);
//! the future types (`ReadExact`, `WriteAll`, ...) are reachable only here,
//! so that `weft::io::Read` / `weft::io::Write` are not mistaken for the
//! `std::io` traits.
//!
//! The combinators do not spend the cooperative budget: the resources they
//! drive (sockets, [`DuplexStream`]) spend it themselves. The in-memory
//! streams ([`empty`], [`repeat`], [`sink`], [`duplex`], [`simplex`]) are
//! such resources, since they can always be ready.

mod buf_read_ext;
mod buf_reader;
mod buf_stream;
mod buf_writer;
mod chain;
mod copy;
mod copy_bidirectional;
mod duplex;
mod empty;
mod join;
mod lines;
mod pipe;
mod read_ext;
pub(crate) mod read_num;
mod repeat;
mod seek_ext;
mod simplex;
mod sink;
mod split;
mod string_append;
mod take;
mod write_ext;
pub(crate) mod write_num;

pub use buf_read_ext::{AsyncBufReadExt, FillBuf, ReadLine, ReadUntil};
pub use buf_reader::BufReader;
pub use buf_stream::BufStream;
pub use buf_writer::BufWriter;
pub use chain::Chain;
pub use copy::{copy, copy_buf};
pub use copy_bidirectional::{copy_bidirectional, copy_bidirectional_with_sizes};
pub use duplex::{duplex, DuplexStream};
pub use empty::{empty, Empty};
pub use join::{join, Join};
pub use lines::{Lines, Split};
pub use read_ext::{AsyncReadExt, Read, ReadExact, ReadIntoBuf, ReadToEnd, ReadToString};
pub use read_num::ReadNum;
pub use repeat::{repeat, Repeat};
pub use seek_ext::{AsyncSeekExt, Seek};
pub use simplex::{simplex, SimplexStream};
pub use sink::{sink, Sink};
pub use split::{split, ReadHalf, WriteHalf};
pub use take::Take;
pub use write_ext::{
    AsyncWriteExt, Flush, Shutdown, Write, WriteAll, WriteAllFromBuf, WriteFromBuf, WriteVectored,
};
pub use write_num::WriteNum;

/// The index of the first `byte` in `haystack`. libc's `memchr` looks at a
/// word or a vector at a time; a `position` loop went byte by byte, and
/// made `read_until` and `read_line` cost 2.3× Tokio's instructions (Tokio
/// calls libc's too).
pub(crate) fn memchr(byte: u8, haystack: &[u8]) -> Option<usize> {
    if haystack.is_empty() {
        return None;
    }
    #[cfg(unix)]
    {
        // SAFETY: the pointer and length are those of `haystack`, borrowed
        // for the call, and `memchr` reads only within them.
        let found = unsafe {
            libc::memchr(
                haystack.as_ptr().cast(),
                libc::c_int::from(byte),
                haystack.len(),
            )
        };
        (!found.is_null()).then(|| found as usize - haystack.as_ptr() as usize)
    }
    #[cfg(not(unix))]
    haystack.iter().position(|&b| b == byte)
}

/// Read into a plain slice through a [`ReadBuf`](crate::io::ReadBuf),
/// returning how many bytes arrived (0 at end of stream).
pub(crate) fn poll_read_slice<R: crate::io::AsyncRead + ?Sized>(
    reader: std::pin::Pin<&mut R>,
    cx: &mut std::task::Context<'_>,
    buf: &mut [u8],
) -> std::task::Poll<std::io::Result<usize>> {
    let mut read_buf = crate::io::ReadBuf::new(buf);
    std::task::ready!(reader.poll_read(cx, &mut read_buf))?;
    std::task::Poll::Ready(Ok(read_buf.filled().len()))
}

/// The `std::io::Error` every short-read helper reports.
pub(crate) fn unexpected_eof() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "early end of stream")
}

/// The `std::io::Error` every write loop reports when a write accepts nothing.
pub(crate) fn write_zero() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::WriteZero, "write returned 0 bytes")
}

/// The `std::io::Error` reported when bytes read to be appended to
/// `prefix` (a `String` the caller passed) are not UTF-8. As Tokio's, it
/// wraps the `Utf8Error` of the whole string the caller would have had
/// (`valid_up_to` counts `prefix` too); `prefix` itself is left as it was.
pub(crate) fn invalid_utf8_after(prefix: &str, appended: &[u8]) -> std::io::Error {
    let mut whole = Vec::with_capacity(prefix.len() + appended.len());
    whole.extend_from_slice(prefix.as_bytes());
    whole.extend_from_slice(appended);
    match std::str::from_utf8(&whole) {
        Err(e) => std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        Ok(_) => std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ),
    }
}
