//! Datagram scripts: random op sequences on three UDP sockets (IPv4 or
//! IPv6 loopback) or three Unix datagram sockets (two bound to paths, or a
//! `pair`, and one unbound), plus a "dead" target (a socket bound, then
//! dropped), their generator and model. The interpreter is in
//! `datagram_interp.rs`.
//!
//! Determinism. Loopback and Unix datagrams are queued (or refused) before
//! the send returns, so the model knows each socket's queue: for Unix a
//! datagram is queued exactly when its send succeeded; for UDP when the
//! target is alive and not connected to another socket. A UDP socket
//! connected to the dead target gets its ICMP error before the send
//! returns too, so the model knows when an error is pending. Ops use the
//! model as the stream scripts do: a receive with nothing queued is a
//! `try_*` that must say `WouldBlock`, or a future polled once and
//! dropped; with something queued, `try_*` ops wait with `readable()`
//! first (Tokio's answer would otherwise depend on its driver's turn).

use crate::harness::{cut, Rng, Shrink};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fam {
    Udp4,
    Udp6,
    /// Unix, sockets 0 and 1 bound to paths.
    Unix,
    /// Unix, sockets 0 and 1 a `pair`.
    UnixPair,
}

/// How a datagram is received.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rv {
    Recv,
    RecvFrom,
    TryRecv,
    TryRecvFrom,
    RecvBuf,
    RecvBufFrom,
    TryRecvBuf,
    TryRecvBufFrom,
    PollRecv,
    PollRecvFrom,
    // UDP only:
    Peek,
    PeekFrom,
    TryPeek,
    TryPeekFrom,
    PeekSender,
    TryPeekSender,
}

impl Rv {
    pub fn is_try(self) -> bool {
        matches!(
            self,
            Rv::TryRecv
                | Rv::TryRecvFrom
                | Rv::TryRecvBuf
                | Rv::TryRecvBufFrom
                | Rv::TryPeek
                | Rv::TryPeekFrom
                | Rv::TryPeekSender
        )
    }

    /// The `async` receives and peeks, which on UDP also wait for an
    /// error alone (`READABLE | ERROR`, on both runtimes), so they return
    /// a pending error deterministically.
    pub fn waits_for_errors(self) -> bool {
        matches!(
            self,
            Rv::Recv
                | Rv::RecvFrom
                | Rv::RecvBuf
                | Rv::RecvBufFrom
                | Rv::Peek
                | Rv::PeekFrom
                | Rv::PeekSender
        )
    }

    pub fn is_peek(self) -> bool {
        matches!(
            self,
            Rv::Peek
                | Rv::PeekFrom
                | Rv::TryPeek
                | Rv::TryPeekFrom
                | Rv::PeekSender
                | Rv::TryPeekSender
        )
    }
}

/// How a datagram is sent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sd {
    Send,
    TrySend,
    PollSend,
    SendTo,
    TrySendTo,
    PollSendTo,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DOp {
    /// From socket, how, target (0..=2, 3: the dead one), length.
    Send(usize, Sd, usize, usize),
    Connect(usize, usize),
    Recv(usize, Rv, usize),
    Readable(usize),
    Writable(usize),
    Opt(usize, u8),
    Addrs(usize),
    TakeError(usize),
    /// Unix only: 0 read, 1 write, 2 both.
    Shutdown(usize, u8),
    StdRoundTrip(usize),
    Drop(usize),
}

#[derive(Clone, Debug)]
pub struct DgramScript {
    pub fam: Fam,
    pub multi: bool,
    pub ops: Vec<DOp>,
}

impl Shrink for DgramScript {
    fn ops(&self) -> usize {
        self.ops.len()
    }

    fn without(&self, at: usize, n: usize) -> Self {
        DgramScript {
            ops: cut(&self.ops, at, n),
            ..self.clone()
        }
    }
}

pub fn gen(rng: &mut Rng) -> DgramScript {
    let fam = [Fam::Udp4, Fam::Udp6, Fam::Unix, Fam::UnixPair][rng.pick(&[5, 2, 3, 2])];
    let n = rng.range(1, 24);
    let ops = (0..n).map(|_| gen_op(rng)).collect();
    DgramScript {
        fam,
        multi: rng.chance(15),
        ops,
    }
}

fn gen_op(rng: &mut Rng) -> DOp {
    let s = rng.below(3) as usize;
    let to = rng.pick(&[6, 6, 3, 2]);
    let len = if rng.chance(5) {
        0
    } else {
        rng.len().min(1500)
    };
    let sd = [
        Sd::Send,
        Sd::TrySend,
        Sd::PollSend,
        Sd::SendTo,
        Sd::TrySendTo,
        Sd::PollSendTo,
    ];
    let rv = [
        Rv::Recv,
        Rv::RecvFrom,
        Rv::TryRecv,
        Rv::TryRecvFrom,
        Rv::RecvBuf,
        Rv::RecvBufFrom,
        Rv::TryRecvBuf,
        Rv::TryRecvBufFrom,
        Rv::PollRecv,
        Rv::PollRecvFrom,
        Rv::Peek,
        Rv::PeekFrom,
        Rv::TryPeek,
        Rv::TryPeekFrom,
        Rv::PeekSender,
        Rv::TryPeekSender,
    ];
    let buf = match rng.pick(&[1, 6, 2]) {
        0 => 0,
        1 => rng.range(1, 16),
        _ => rng.range(16, 2000),
    };
    match rng.pick(&[30, 6, 30, 3, 3, 5, 3, 3, 2, 2, 2]) {
        0 => DOp::Send(s, sd[rng.below(6) as usize], to, len),
        1 => DOp::Connect(s, to),
        2 => DOp::Recv(s, rv[rng.below(16) as usize], buf),
        3 => DOp::Readable(s),
        4 => DOp::Writable(s),
        5 => DOp::Opt(s, rng.below(10) as u8),
        6 => DOp::Addrs(s),
        7 => DOp::TakeError(s),
        8 => DOp::Shutdown(s, rng.below(3) as u8),
        9 => DOp::StdRoundTrip(s),
        _ => DOp::Drop(s),
    }
}

/// What both interpreters know about the sockets (crate-independent).
#[derive(Default)]
pub struct DModel {
    /// Datagrams queued at socket `i` (their bytes).
    pub q: [std::collections::VecDeque<Vec<u8>>; 3],
    /// Socket `i` is connected to target `j`.
    pub conn: [Option<usize>; 3],
    /// An error (ICMP port unreachable) waits on socket `i`.
    pub err: [bool; 3],
    pub gone: [bool; 3],
    /// Socket `i`'s read direction is shut down (Unix).
    pub rd_shut: [bool; 3],
    /// Bytes sent so far (for the pattern).
    pub sent: usize,
}

impl DModel {
    /// A receive on `s` will not wait.
    pub fn ready(&self, s: usize) -> bool {
        !self.q[s].is_empty()
    }

    /// Only an error is pending on `s`: `EPOLLERR` without `EPOLLIN`.
    /// Tokio's `readable()` does not wake for it, and whether a `poll_*`
    /// or `try_*` receive sees the error then depends on readiness Tokio
    /// saw for earlier datagrams (not behaviour a program can rely on).
    /// `take_error`, sends and UDP's `async` receives (which wait for the
    /// error too) show it deterministically; the other receives are
    /// skipped.
    pub fn only_error(&self, s: usize) -> bool {
        self.q[s].is_empty() && self.err[s]
    }

    pub fn pattern(&mut self, len: usize) -> Vec<u8> {
        let v = (self.sent..self.sent + len)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        self.sent += len;
        v
    }
}
