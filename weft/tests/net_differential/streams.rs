//! Stream scripts: random op sequences on the two ends of one connected
//! stream (TCP over IPv4 or IPv6 loopback, or a Unix stream), their
//! generator, and the model both interpreters (`stream_interp.rs`) keep.
//!
//! Determinism. The two ends live in one process, so every byte a step
//! writes is known; the model keeps, per end, the bytes on their way to it
//! (writes are small and buffers kept far from full, so a write is whole),
//! and whether its peer shut down, was dropped, or reset it. Ops are then
//! run so that what they log does not depend on timing:
//! - a read that may return a chunk is repeated until it has
//!   `min(len, queued)` bytes (TCP chunk boundaries are not behaviour; the
//!   bytes, EOF and errors are), and only the whole is logged;
//! - a `try_*` read on an end with bytes queued first waits with
//!   `readable()` (otherwise Tokio's answer depends on whether its driver
//!   has seen the edge yet), and with nothing queued and no EOF is made
//!   without waiting and must say `WouldBlock`;
//! - a read that would wait (nothing queued, no EOF) is polled once and
//!   dropped; readiness with nothing queued is not logged (a spurious
//!   "ready" is allowed by both crates' docs);
//! - writes to a dropped peer are repeated until they fail, and
//!   `BrokenPipe` and `ConnectionReset` are logged as one (which one a
//!   program sees depends on when the peer's reset arrived).
//!
//! The model is the same on both crates (it is computed from the script
//! and from results that are compared), so an op it rules out is skipped
//! by both and logged as `skip`.

use crate::harness::{cut, Rng, Shrink};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Tcp4,
    Tcp6,
    Unix,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Setup {
    /// `TcpStream::connect` / `UnixStream::connect` and `accept`.
    Connect,
    /// `TcpSocket` / `UnixSocket` with options, then `connect`.
    Socket { reuse: bool, sndbuf: Option<u32> },
    /// A blocking std connect, then `from_std`.
    FromStd,
    /// `UnixStream::pair` (Unix only).
    Pair,
}

/// How a read is made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rd {
    Read,
    Exact,
    Buf,
    Try,
    TryVec,
    TryBuf,
    /// `poll_read` through `poll_fn`.
    PollRead,
    /// TCP only.
    Peek,
}

/// How a write is made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wr {
    All,
    Once,
    Vectored,
    Try,
    TryVec,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Write(usize, Wr, usize),
    Read(usize, Rd, usize),
    Readable(usize),
    /// Interest: 1 readable, 2 writable, 3 both.
    Ready(usize, u8),
    Writable(usize),
    /// `poll_read_ready` until ready (only with something to read).
    PollReadReady(usize),
    Shutdown(usize),
    Drop(usize),
    /// An option: see `stream_interp.rs`.
    Opt(usize, u8),
    Addrs(usize),
    TakeError(usize),
    Split(usize),
    Reunite(usize),
    /// Reunite end 0's read half with end 1's write half.
    ReuniteWrong,
    DropWriteHalf(usize),
    ForgetWriteHalf(usize),
    /// `split()` (borrowed halves): a write and a read at once.
    Borrowed(usize, usize),
    /// `into_std`, a non-blocking std read, `from_std`.
    StdRoundTrip(usize),
    /// `try_write` until `WouldBlock`, the peer drains it all, then
    /// `writable` and a one-byte `try_write`.
    Fill(usize),
}

#[derive(Clone, Debug)]
pub struct StreamScript {
    pub kind: Kind,
    pub setup: Setup,
    pub multi: bool,
    pub ops: Vec<Op>,
}

impl Shrink for StreamScript {
    fn ops(&self) -> usize {
        self.ops.len()
    }

    fn without(&self, at: usize, n: usize) -> Self {
        StreamScript {
            ops: cut(&self.ops, at, n),
            ..self.clone()
        }
    }
}

pub fn gen(rng: &mut Rng) -> StreamScript {
    let kind = [Kind::Tcp4, Kind::Tcp6, Kind::Unix][rng.pick(&[5, 2, 4])];
    let setup = match rng.pick(&[4, 2, 2, 3]) {
        0 => Setup::Connect,
        1 => Setup::Socket {
            reuse: rng.coin(),
            sndbuf: rng.chance(50).then(|| rng.range(4096, 65536) as u32),
        },
        2 => Setup::FromStd,
        _ if kind == Kind::Unix => Setup::Pair,
        _ => Setup::Connect,
    };
    let n = rng.range(1, 24);
    let ops = (0..n).map(|_| gen_op(rng)).collect();
    StreamScript {
        kind,
        setup,
        multi: rng.chance(15),
        ops,
    }
}

fn gen_op(rng: &mut Rng) -> Op {
    let e = rng.below(2) as usize;
    let rd = [
        Rd::Read,
        Rd::Exact,
        Rd::Buf,
        Rd::Try,
        Rd::TryVec,
        Rd::TryBuf,
        Rd::PollRead,
        Rd::Peek,
    ];
    let wr = [Wr::All, Wr::Once, Wr::Vectored, Wr::Try, Wr::TryVec];
    match rng.pick(&[30, 30, 4, 4, 3, 3, 5, 3, 6, 3, 2, 4, 3, 1, 2, 1, 2, 2, 1]) {
        0 => Op::Write(e, wr[rng.below(5) as usize], rng.len()),
        1 => Op::Read(e, rd[rng.below(8) as usize], rng.len()),
        2 => Op::Readable(e),
        3 => Op::Ready(e, rng.range(1, 3) as u8),
        4 => Op::Writable(e),
        5 => Op::PollReadReady(e),
        6 => Op::Shutdown(e),
        7 => Op::Drop(e),
        8 => Op::Opt(e, rng.below(8) as u8),
        9 => Op::Addrs(e),
        10 => Op::TakeError(e),
        11 => Op::Split(e),
        12 => Op::Reunite(e),
        13 => Op::ReuniteWrong,
        14 => Op::DropWriteHalf(e),
        15 => Op::ForgetWriteHalf(e),
        16 => Op::Borrowed(e, rng.len()),
        17 => Op::StdRoundTrip(e),
        _ => Op::Fill(e),
    }
}

/// What both interpreters know about the connection (crate-independent).
#[derive(Default)]
pub struct Model {
    /// Bytes on their way to end `i`, not read yet.
    pub inq: [Vec<u8>; 2],
    /// How many bytes end `i` has written (for its pattern).
    pub written: [usize; 2],
    /// End `i` shut its write direction down (its peer reads EOF).
    pub shut: [bool; 2],
    /// End `i` was dropped.
    pub gone: [bool; 2],
    /// End `i` may be reset by its peer: reads are logged to the end.
    pub reset: [bool; 2],
    /// A read on end `i` was polled and dropped (on io_uring a receive may
    /// stay in flight; `into_std` then documents losing its bytes).
    pub cancelled: [bool; 2],
    /// End `i` set a zero linger (its drop resets the connection).
    pub linger0: [bool; 2],
    /// End `i`'s Unix peer was dropped after a read on it was cancelled:
    /// on io_uring the receive that read left may have taken the bytes
    /// that would have made the close report `ConnectionReset` (README:
    /// documented), so a reset and an EOF are one outcome here.
    pub blur_reset: [bool; 2],
}

impl Model {
    /// The next `len` bytes end `e` writes: lower-case letters from end 0,
    /// upper-case from end 1, cycling, so a misplaced byte shows.
    pub fn pattern(&self, e: usize, len: usize) -> Vec<u8> {
        let base = if e == 0 { b'a' } else { b'A' };
        (self.written[e]..self.written[e] + len)
            .map(|i| base + (i % 26) as u8)
            .collect()
    }

    /// End `e` may read EOF (or a reset) once its queue is drained.
    pub fn eof(&self, e: usize) -> bool {
        self.shut[1 - e] || self.gone[1 - e] || self.reset[e]
    }
}
