//! Random scripts over one or two `AsyncFd`-wrapped descriptors (a Unix
//! socketpair end, a TCP end, a connected UDP socket, a pipe's read end),
//! each with a peer the script drives by plain syscalls; their generator;
//! and the model both interpreters (`interp.rs`) keep.
//!
//! Determinism. Every byte a step moves is known, so the model keeps, per
//! descriptor, the bytes on their way to it (`inq`: written by the peer)
//! and to its peer (`outq`), and what the peer did (shut down, closed,
//! reset). Buffers stay far from full (`CAP`), so a write is whole and a
//! socket is always writable. Ops then log only what cannot depend on
//! timing:
//! - bytes as wholes: a read is repeated (wait, `try_io`) until it has
//!   `min(len, queued)` bytes (TCP chunks are not behaviour), or EOF, or
//!   an error;
//! - a read with nothing queued and no EOF is an `AsyncFd::try_io`, which
//!   must say `WouldBlock` whether or not the readiness was stale;
//! - a wait is awaited only where it must resolve (something to read, an
//!   EOF; writable on a descriptor registered for writes);
//! - readiness bits only where they are certain ([`Fd::r`]): `READABLE` is
//!   surely in a guard once a guard showed it and nothing cleared it, and
//!   surely out (current_thread only: on multi_thread the driver may
//!   deliver an older event on another worker meanwhile) once a
//!   `WouldBlock` cleared it and no byte or hang-up came since;
//!   `READ_CLOSED` is logged once a settle loop saw it (`SettleClosed`);
//! - a wait that must stay pending is logged `Pending` only where the
//!   readiness is surely clear (above); a waker that must be woken is
//!   waited for, with a time limit (a hang on one crate logs `TIMEOUT`);
//! - how much a full socket took (`Fill`) is the kernel's business and not
//!   logged: the peer reads it all and checks it against the pattern,
//!   which then goes on from where it was;
//! - an error (a reset, a refused datagram) is waited for with
//!   `Interest::ERROR` only while it is surely pending, and `PRIORITY`
//!   only after the peer's urgent byte.
//!
//! The model is computed from the script and from logged (so compared)
//! results, so it is the same on both crates; an op it rules out is
//! skipped by both and logged as `skip`.

use crate::harness::{cut, Rng, Shrink};
use std::collections::VecDeque;

/// At most this many bytes queued towards either side.
pub const CAP: usize = 16 * 1024;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `UnixStream::pair`.
    Unix,
    /// A loopback TCP connection.
    Tcp,
    /// Two UDP sockets connected to each other.
    Udp,
    /// A pipe: the `AsyncFd` holds the read end, the peer the write end.
    Pipe,
}

/// How the `AsyncFd` is made, and for what.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Make {
    New,
    TryNew,
    /// `register` (unsafe; the same call behind the safe ones).
    Register,
    /// `with_interest`, `try_with_interest` or `register_with_interest`
    /// (0, 1, 2) with `Reg`.
    WithInterest(u8, Reg),
}

/// The interest an `AsyncFd` is registered with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reg {
    Read,
    Write,
    Both,
    BothError,
    /// `READABLE | WRITABLE | PRIORITY` (TCP only).
    BothPriority,
}

impl Make {
    pub fn reg(self) -> Reg {
        match self {
            Make::WithInterest(_, r) => r,
            _ => Reg::Both,
        }
    }
}

impl Reg {
    pub fn reads(self) -> bool {
        self != Reg::Write
    }
    pub fn writes(self) -> bool {
        self != Reg::Read
    }
}

/// How a read waits and reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rd {
    /// `readable()`, `guard.try_io`.
    Guard,
    /// `readable()`, a read through `guard.get_inner()`, `clear_ready` on
    /// `WouldBlock`.
    GuardManual,
    /// `readable_mut()`, the mut guard's `try_io`.
    MutGuard,
    /// `ready(READABLE)`.
    Ready,
    /// `ready_mut(READABLE)`, a read through `get_inner_mut`,
    /// `clear_ready_matching(READABLE)` on `WouldBlock`.
    ReadyMut,
    /// `async_io(READABLE, ..)`.
    AsyncIo,
    /// `async_io_mut(READABLE, ..)`.
    AsyncIoMut,
    /// `poll_read_ready` through `poll_fn`.
    PollReady,
    /// `poll_read_ready_mut` through `poll_fn`.
    PollReadyMut,
    /// `readable()` (guard dropped, readiness kept), then
    /// `AsyncFd::try_io(READABLE, ..)`.
    TryIo,
}

/// How a write waits and writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wr {
    Guard,
    MutGuard,
    Ready,
    AsyncIo,
    AsyncIoMut,
    PollReady,
    PollReadyMut,
    TryIo,
    TryIoMut,
}

/// What a `ReadyBoth` op does with its guard.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum G {
    Drop,
    Retain,
    /// `clear_ready_matching(READABLE)` (only with nothing to read).
    ClearReadable,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    PeerWrite(usize, usize),
    PeerRead(usize, usize),
    PeerShutdown(usize),
    /// The peer reads what is on its way to it, then closes.
    PeerClose(usize),
    /// TCP: the peer closes with a zero linger (a reset).
    PeerReset(usize),
    Read(usize, Rd, usize),
    Write(usize, Wr, usize),
    /// Our end shuts its writing side down.
    Shutdown(usize),
    /// Poll `readable()` once: `Pending` where certain.
    PollRead(usize),
    /// Poll `readable()` once with a counting waker (pending), the peer
    /// writes `len` bytes (from another thread if set), the waker must be
    /// woken and the wait then resolve.
    WaitWake(usize, usize, bool),
    /// `ready(READABLE | WRITABLE)`, then `G`.
    ReadyBoth(usize, G),
    /// With nothing to read: poll `readable()` (or `readable_mut()`) once
    /// and clear what it found (0 `clear_ready`, 1
    /// `clear_ready_matching(READABLE)`, 2 a `try_io` that would block).
    ClearRead(usize, u8, bool),
    /// After a hang-up or EOF: wait until a guard shows `READ_CLOSED`.
    SettleClosed(usize),
    /// `n` tasks wait `readable()` at once; the peer writes one byte; all
    /// must wake.
    Waiters(usize, usize),
    /// `into_inner`, then wrap the object again as it was made.
    Rewrap(usize),
    /// `as_raw_fd`, `get_ref`, `get_mut`, `AsFd` agree.
    Refs(usize),
    /// With an error pending (a reset, or a refused datagram), wait for
    /// `Interest::ERROR` (and on UDP, read the error).
    WaitError(usize),
    /// TCP: the peer sends one byte of urgent data; a wait for
    /// `PRIORITY` (polled once before, pending where certain) must see it.
    Urgent(usize),
    /// Stream: write until a write would block (clearing `WRITABLE`), poll
    /// `writable()` once (pending where certain), the peer reads all
    /// (checked against the pattern, not logged: how much fits depends
    /// on the kernel), then the wait (`poll_write_ready` if set) must end.
    Fill(usize, bool),
}

impl Op {
    pub fn fd(self) -> usize {
        match self {
            Op::PeerWrite(p, _)
            | Op::PeerRead(p, _)
            | Op::PeerShutdown(p)
            | Op::PeerClose(p)
            | Op::PeerReset(p)
            | Op::Read(p, ..)
            | Op::Write(p, ..)
            | Op::Shutdown(p)
            | Op::PollRead(p)
            | Op::WaitWake(p, ..)
            | Op::ReadyBoth(p, _)
            | Op::ClearRead(p, ..)
            | Op::SettleClosed(p)
            | Op::Waiters(p, _)
            | Op::Rewrap(p)
            | Op::Refs(p)
            | Op::WaitError(p)
            | Op::Urgent(p)
            | Op::Fill(p, _) => p,
        }
    }
}

#[derive(Clone, Debug)]
pub struct FdScript {
    pub fds: Vec<(Kind, Make)>,
    pub multi: bool,
    pub ops: Vec<Op>,
}

impl Shrink for FdScript {
    fn ops(&self) -> usize {
        self.ops.len()
    }

    fn without(&self, at: usize, n: usize) -> Self {
        FdScript {
            ops: cut(&self.ops, at, n),
            ..self.clone()
        }
    }
}

pub fn gen(rng: &mut Rng) -> FdScript {
    let n = if rng.chance(30) { 2 } else { 1 };
    let fds = (0..n)
        .map(|_| {
            let kind = [Kind::Unix, Kind::Tcp, Kind::Udp, Kind::Pipe][rng.pick(&[5, 4, 2, 2])];
            let make = if kind == Kind::Pipe {
                Make::WithInterest(rng.below(3) as u8, Reg::Read)
            } else if kind == Kind::Tcp && rng.chance(25) {
                Make::WithInterest(rng.below(3) as u8, Reg::BothPriority)
            } else {
                match rng.pick(&[3, 2, 2, 4]) {
                    0 => Make::New,
                    1 => Make::TryNew,
                    2 => Make::Register,
                    _ => {
                        let reg = [Reg::Read, Reg::Write, Reg::Both, Reg::BothError]
                            [rng.pick(&[3, 1, 2, 2])];
                        Make::WithInterest(rng.below(3) as u8, reg)
                    }
                }
            };
            (kind, make)
        })
        .collect::<Vec<_>>();
    let len = rng.range(1, 28);
    let ops = (0..len).map(|_| gen_op(rng, fds.len())).collect();
    FdScript {
        fds,
        multi: rng.chance(30),
        ops,
    }
}

fn gen_op(rng: &mut Rng, fds: usize) -> Op {
    let p = rng.below(fds as u64) as usize;
    let len = |rng: &mut Rng| match rng.pick(&[6, 3, 1]) {
        0 => rng.range(1, 8),
        1 => rng.range(1, 64),
        _ => rng.range(1, 3000),
    };
    let rd = [
        Rd::Guard,
        Rd::GuardManual,
        Rd::MutGuard,
        Rd::Ready,
        Rd::ReadyMut,
        Rd::AsyncIo,
        Rd::AsyncIoMut,
        Rd::PollReady,
        Rd::PollReadyMut,
        Rd::TryIo,
    ];
    let wr = [
        Wr::Guard,
        Wr::MutGuard,
        Wr::Ready,
        Wr::AsyncIo,
        Wr::AsyncIoMut,
        Wr::PollReady,
        Wr::PollReadyMut,
        Wr::TryIo,
        Wr::TryIoMut,
    ];
    match rng.pick(&[30, 10, 3, 3, 1, 24, 14, 2, 5, 4, 4, 4, 3, 2, 2, 1, 3, 3, 3]) {
        0 => Op::PeerWrite(p, len(rng)),
        1 => Op::PeerRead(p, len(rng)),
        2 => Op::PeerShutdown(p),
        3 => Op::PeerClose(p),
        4 => Op::PeerReset(p),
        5 => Op::Read(p, rd[rng.below(rd.len() as u64) as usize], len(rng)),
        6 => Op::Write(p, wr[rng.below(wr.len() as u64) as usize], len(rng)),
        7 => Op::Shutdown(p),
        8 => Op::PollRead(p),
        9 => Op::WaitWake(p, rng.range(1, 40), rng.coin()),
        10 => Op::ReadyBoth(
            p,
            [G::Drop, G::Retain, G::ClearReadable][rng.below(3) as usize],
        ),
        11 => Op::ClearRead(p, rng.below(3) as u8, rng.coin()),
        12 => Op::SettleClosed(p),
        13 => Op::Waiters(p, rng.range(1, 5)),
        14 => Op::Rewrap(p),
        15 => Op::Refs(p),
        16 => Op::WaitError(p),
        17 => Op::Urgent(p),
        _ => Op::Fill(p, rng.coin()),
    }
}

/// What the peer of a descriptor did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Peer {
    Open,
    /// Shut its writing side down (stream kinds).
    Shut,
    /// Closed (after reading what was on its way to it).
    Closed,
    /// TCP: closed with a reset.
    Reset,
}

/// What is certain about a readiness bit (module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tri {
    Set,
    Clear,
    Unknown,
}

/// What both interpreters know about one descriptor (crate-independent).
pub struct Fd {
    pub kind: Kind,
    pub reg: Reg,
    /// Bytes (stream) or datagrams on their way to the `AsyncFd`.
    pub inq: VecDeque<Vec<u8>>,
    /// Bytes or datagrams on their way to the peer.
    pub outq: VecDeque<Vec<u8>>,
    pub written: [usize; 2],
    pub peer: Peer,
    /// Our end shut its writing side down.
    pub shut: bool,
    /// The reset was read (reads give EOF from now on).
    pub reset_read: bool,
    /// `READABLE` in the registration's readiness.
    pub r: Tri,
    /// `WRITABLE` surely in the registration's readiness.
    pub w: bool,
    /// A guard showed `READ_CLOSED` (it is never cleared).
    pub rc: bool,
    /// An error is pending on the socket: a reset not read yet, or the
    /// refusal of a datagram sent after the peer closed (UDP: every op
    /// but `WaitError` is skipped until it reads the error).
    pub err: bool,
    /// The peer sent urgent data (the kernel may report `PRIORITY`).
    pub urgent: bool,
    /// `PRIORITY` is surely in the readiness (a guard showed it; nothing
    /// clears it).
    pub pri: bool,
}

impl Fd {
    pub fn new(kind: Kind, reg: Reg) -> Fd {
        Fd {
            kind,
            reg,
            inq: VecDeque::new(),
            outq: VecDeque::new(),
            written: [0; 2],
            peer: Peer::Open,
            shut: false,
            reset_read: false,
            r: Tri::Unknown,
            w: false,
            rc: false,
            err: false,
            urgent: false,
            pri: false,
        }
    }

    /// The next `len` bytes side `s` writes (0: the peer, lower-case; 1:
    /// the `AsyncFd`, upper-case), cycling, so a misplaced byte shows.
    pub fn pattern(&mut self, s: usize, len: usize) -> Vec<u8> {
        let base = if s == 0 { b'a' } else { b'A' };
        let out = (self.written[s]..self.written[s] + len)
            .map(|i| base + (i % 26) as u8)
            .collect();
        self.written[s] += len;
        out
    }

    pub fn stream(&self) -> bool {
        matches!(self.kind, Kind::Unix | Kind::Tcp)
    }

    pub fn queued(q: &VecDeque<Vec<u8>>) -> usize {
        q.iter().map(Vec::len).sum()
    }

    /// A read finds the end of the stream (once the queue is drained).
    pub fn eof(&self) -> bool {
        match self.kind {
            Kind::Udp => false,
            _ => self.peer != Peer::Open,
        }
    }

    /// Something a read will return without waiting for the peer.
    pub fn readable(&self) -> bool {
        !self.inq.is_empty() || self.eof()
    }

    /// `READ_CLOSED` (or a hang-up) may be in the readiness: a wait for
    /// `READABLE` may then resolve without `READABLE` (io_uring takes
    /// hang-ups from epoll and reads from the ring).
    pub fn hangup(&self) -> bool {
        self.eof()
    }

    /// A kernel event that makes the descriptor readable: cleared
    /// readiness is not certain any more.
    pub fn read_edge(&mut self) {
        if self.r == Tri::Clear {
            self.r = Tri::Unknown;
        }
    }
}
