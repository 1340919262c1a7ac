//! The differences from Tokio this test found, each as a minimal script,
//! all fixed in weft. Each test pins Tokio's behaviour down for that case;
//! its doc says what Tokio does and what weft did before the fix. All
//! were on the io_uring driver (epoll matched Tokio already), so on
//! `WEFT_IO_DRIVER=epoll` these pass without exercising the fixes.

use crate::datagrams::{DOp, DgramScript, Fam, Rv, Sd};
use crate::harness::assert_same;
use crate::streams::{Kind, Op, Rd, Setup, StreamScript, Wr};
use crate::{DATAGRAMS, STREAMS};

fn stream(kind: Kind, ops: Vec<Op>) -> StreamScript {
    let setup = if kind == Kind::Unix {
        Setup::Pair
    } else {
        Setup::Connect
    };
    StreamScript {
        kind,
        setup,
        multi: false,
        ops,
    }
}

/// A write after our own `shutdown()`: Tokio `Err(BrokenPipe)` at once;
/// weft (io_uring) `Ok(3)`, queueing a ring send whose `EPIPE` only the
/// next operation would report, so the bytes were silently lost.
#[test]
fn write_after_own_shutdown_fails_at_once() {
    for kind in [Kind::Tcp4, Kind::Unix] {
        let ops = vec![
            Op::Shutdown(0),
            Op::Write(0, Wr::All, 3),
            Op::Write(0, Wr::Vectored, 2),
        ];
        assert_same(&STREAMS, stream(kind, ops));
    }
}

/// A read dropped while waiting leaves a ring receive in flight; the peer
/// then resets the connection (it closed with our bytes unread), and that
/// receive takes `ECONNRESET` off the socket. The next read: Tokio
/// `Err(ConnectionReset)`; weft (io_uring) `Ok(0)`, a clean EOF, because
/// `settle` dropped the receive's error and the socket reports it only
/// once.
#[test]
fn reset_taken_by_an_abandoned_receive_is_reported() {
    for (kind, how) in [
        (Kind::Tcp4, Rd::TryVec),
        (Kind::Tcp6, Rd::Try),
        (Kind::Tcp4, Rd::Peek),
    ] {
        let ops = vec![
            Op::Read(0, Rd::PollRead, 60),
            Op::Write(0, Wr::Once, 41),
            Op::Drop(1),
            Op::Read(0, how, 2),
        ];
        assert_same(&STREAMS, stream(kind, ops));
    }
}

/// A stream dropped with bytes it never read resets the connection, even
/// when a ring receive (left by a dropped read) had taken those bytes off
/// the socket. The peer's next read: Tokio `Err(ConnectionReset)`; weft
/// (io_uring) `Ok(0)` (the kernel saw no unread bytes and sent a FIN).
#[test]
fn drop_with_unread_bytes_a_receive_took_resets() {
    for kind in [Kind::Tcp4, Kind::Tcp6] {
        let ops = vec![
            Op::Read(0, Rd::Buf, 43),
            Op::Write(1, Wr::Vectored, 2),
            Op::Drop(0),
            Op::Read(1, Rd::Exact, 7),
        ];
        assert_same(&STREAMS, stream(kind, ops));
    }
}

/// As above, but the next call after the reset is a write: a TCP socket
/// hands its reset to whichever call comes first. Tokio: the write fails
/// (`ConnectionReset`, logged as a dead peer) and the read after it says
/// `Ok(0)`; weft (io_uring): the write failed (`EPIPE`) and the read then
/// said `Err(ConnectionReset)`, the reset reported twice. A Unix stream's
/// kernel hands the reset to reads only: there the write fails (`EPIPE`)
/// and the read still says `ConnectionReset`, on both.
#[test]
fn reset_taken_by_an_abandoned_receive_goes_to_the_next_write() {
    for (kind, how) in [
        (Kind::Tcp4, Wr::Try),
        (Kind::Tcp4, Wr::All),
        (Kind::Tcp4, Wr::TryVec),
        (Kind::Unix, Wr::Vectored),
        (Kind::Unix, Wr::Try),
    ] {
        let ops = vec![
            Op::Read(1, Rd::Buf, 1),
            Op::Write(1, Wr::Vectored, 14),
            Op::Drop(0),
            Op::Write(1, how, 36),
            Op::Read(1, Rd::PollRead, 5),
        ];
        assert_same(&STREAMS, stream(kind, ops));
    }
}

/// A UDP socket connected to a port nobody listens on, with a
/// `recv_from` dropped mid-way, sends: the ICMP error comes back.
/// `take_error`: Tokio `Some(ConnectionRefused)`; weft on io_uring once
/// said `None`, when its ring receive left in flight by the dropped
/// `recv_from` took the error off the socket (datagram receives are
/// readiness-based since).
#[test]
fn udp_take_error_sees_the_error_a_receive_took() {
    let ops = vec![
        DOp::Connect(0, 3),
        DOp::Recv(0, Rv::RecvFrom, 10),
        DOp::Send(0, Sd::Send, 3, 2),
        DOp::Send(0, Sd::Send, 3, 2),
    ];
    let s = DgramScript {
        fam: Fam::Udp4,
        multi: false,
        ops,
    };
    assert_same(&DATAGRAMS, s);
}
