//! The utility layer of `weft::io`: everything here depends only on the
//! futures-io traits, never on the reactor.
//!
//! Owns: the extension traits, the named futures they return, the buffering
//! adapters, the copy helpers, `split` and the in-memory streams. Each file
//! holds one idea; this module only wires them together and re-exports them.
//! The most used items are re-exported again from [`weft::io`](crate::io);
//! the future types (`ReadExact`, `WriteAll`, ...) are reachable only here,
//! so that `weft::io::Read` / `weft::io::Write` are not mistaken for the
//! `std::io` traits.
//!
//! None of these combinators spends the cooperative budget: the resources
//! they drive (sockets, [`DuplexStream`]) spend it themselves.

mod buf_read_ext;
mod buf_reader;
mod buf_writer;
mod chain;
mod copy;
mod copy_bidirectional;
mod duplex;
mod empty;
mod lines;
mod read_ext;
mod repeat;
mod sink;
mod split;
mod take;
mod write_ext;

pub use buf_read_ext::{AsyncBufReadExt, ReadLine, ReadUntil};
pub use buf_reader::BufReader;
pub use buf_writer::BufWriter;
pub use chain::Chain;
pub use copy::{copy, copy_buf};
pub use copy_bidirectional::copy_bidirectional;
pub use duplex::{duplex, DuplexStream};
pub use empty::{empty, Empty};
pub use lines::{Lines, Split};
pub use read_ext::{AsyncReadExt, Read, ReadExact, ReadToEnd, ReadToString};
pub use repeat::{repeat, Repeat};
pub use sink::{sink, Sink};
pub use split::{split, ReadHalf, WriteHalf};
pub use take::Take;
pub use write_ext::{AsyncWriteExt, Flush, Shutdown, Write, WriteAll, WriteVectored};

/// The `std::io::Error` every short-read helper reports.
pub(crate) fn unexpected_eof() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "early end of stream")
}

/// The `std::io::Error` every write loop reports when a write accepts nothing.
pub(crate) fn write_zero() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::WriteZero, "write returned 0 bytes")
}

/// The `std::io::Error` reported for bytes that are not UTF-8.
pub(crate) fn invalid_utf8() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "stream did not contain valid UTF-8",
    )
}
