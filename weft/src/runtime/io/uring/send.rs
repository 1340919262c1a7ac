//! A stream socket's writes through io_uring.
//!
//! Owns: the stream's one send in flight (which ring, which op, how much
//! of its buffer went out), the spare buffer for the next one, and an
//! error a send reported after its write had already returned.
//!
//! A write copies the caller's bytes into a runtime-owned buffer, starts a
//! send, and returns at once: the bytes are accepted, as the kernel's
//! socket buffer would accept them. This is the trade-off Tokio's own
//! io_uring plan makes for writes. What it changes, on purpose:
//! - **Errors arrive late.** A send that fails (the peer reset the
//!   connection) reports on the next write, flush or shutdown of the
//!   stream. With epoll the error also surfaces only once the kernel knows,
//!   which for TCP is already after some writes succeeded.
//! - `poll_flush` does not wait for the send: like a socket's, it reports
//!   an error if one is known and returns. `poll_shutdown` waits for it, so
//!   the peer's end-of-stream always comes after the bytes.
//!
//! Invariants:
//! - **At most one send is in flight per stream, and bytes go out in
//!   write order**: a write waits while a send is in flight; a short send
//!   is continued from where it stopped before anything newer is taken.
//!   Readiness-based writes (`try_write`, `try_io`) return `WouldBlock`
//!   while a send is in flight, and `writable()` waits for it to end.
//! - A dropped stream's send is not cancelled: the ring submits it before
//!   the socket closes and frees its buffer when it completes.
//! - **A send goes out whole with nobody polling it**: the writer may
//!   wait for something else once its write returned (the reply to what
//!   it sent), so a send the kernel ends short is continued by the ring
//!   itself (`ops.rs`, `LiveSend`); this module sees its end, with the
//!   bytes sent in all.

use super::ops::Polled;
use super::waiters::Waiters;
use super::Rings;
use std::io;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// The most one write takes (a larger write is accepted in parts).
const MAX_SEND: usize = 256 * 1024;

pub(crate) struct UringWrite {
    state: Mutex<WriteState>,
    /// The tasks waiting for the send in flight: a writer, and others
    /// waiting for writability (`writable()`, a read half's `ready`).
    /// Each joins before it looks at the op, and the op wakes them all
    /// (waiters.rs): with one waker per op, the last to look would
    /// take the others' place, and the one woken could take the
    /// completion and leave them waiting on an op that is gone.
    waiters: Arc<Waiters>,
    /// `waiters` as a waker: what the op wakes.
    waker: Waker,
}

impl Default for UringWrite {
    fn default() -> UringWrite {
        let waiters = Arc::new(Waiters::default());
        UringWrite {
            state: Mutex::default(),
            waker: Waker::from(waiters.clone()),
            waiters,
        }
    }
}

#[derive(Default)]
struct WriteState {
    /// (ring index, op, bytes of the op's buffer already sent before it).
    op: Option<InFlight>,
    spare: Vec<u8>,
    /// A send's failure, for the next operation to report.
    error: Option<io::Error>,
    /// What a short send left (the buffer, and where the rest starts),
    /// seen where no send could be started: it goes out before anything.
    rest: Option<(Vec<u8>, usize)>,
}

#[derive(Clone, Copy)]
struct InFlight {
    ring: usize,
    key: super::ops::OpKey,
    /// Where in the op's buffer this send started.
    from: usize,
}

/// What to do with a send's completion.
#[must_use]
enum Sent {
    /// Everything went out (or it failed, recorded in `error`).
    Finished,
    /// `from` bytes went out so far, or the kernel interrupted it: send
    /// the rest.
    Continue { buf: Vec<u8>, from: usize },
}

impl WriteState {
    fn sent(&mut self, op: InFlight, result: i32, buf: Vec<u8>) -> Sent {
        self.op = None;
        if result >= 0 {
            let from = op.from + result as usize;
            if from < buf.len() && result > 0 {
                return Sent::Continue { buf, from };
            }
            self.spare = buf;
            return Sent::Finished;
        }
        if super::ops::interrupted(result) {
            return Sent::Continue { buf, from: op.from };
        }
        self.spare = buf;
        self.error = Some(io::Error::from_raw_os_error(-result));
        Sent::Finished
    }
}

impl UringWrite {
    fn lock(&self) -> MutexGuard<'_, WriteState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait until no send is in flight (continuing short sends on `ring`).
    /// With the runtime shut down (`is_shutdown`), a send still in the
    /// kernel is the shutdown error: no thread of that runtime reaps its
    /// completion any more.
    fn poll_idle(
        &self,
        state: &mut WriteState,
        rings: &Rings,
        (ring, owned): (usize, bool),
        is_shutdown: bool,
        fd: RawFd,
        waker: &Waker,
    ) -> Poll<io::Result<()>> {
        if is_shutdown {
            Self::take_if_done(state, rings);
            if state.op.is_some() || state.rest.is_some() {
                return Poll::Ready(Err(super::super::shutdown_error()));
            }
        }
        loop {
            if state.op.is_none() && state.rest.is_none() {
                return Poll::Ready(Ok(()));
            }
            // Join before looking (the field's doc).
            self.waiters.join(waker);
            if let Some((buf, from)) = state.rest.take() {
                let key = rings
                    .get(ring)
                    .start_send(fd, buf, from, Some(&self.waker), !owned)?;
                state.op = Some(InFlight { ring, key, from });
            }
            let Some(op) = state.op else {
                unreachable!("a send is in flight or was just started")
            };
            let (result, buf) = match rings.get(op.ring).poll(op.key, &self.waker) {
                Polled::Pending => return Poll::Pending,
                Polled::Done { result, buf } => (result, buf),
            };
            if let Sent::Continue { buf, from } = state.sent(op, result, buf) {
                state.rest = Some((buf, from));
            }
        }
    }

    /// Take the send's completion if it is there, without a waker (a
    /// short send's rest is kept for the next operation that has one).
    fn take_if_done(state: &mut WriteState, rings: &Rings) {
        let Some(op) = state.op else { return };
        if let Some((result, buf)) = rings.get(op.ring).try_take(op.key) {
            if let Sent::Continue { buf, from } = state.sent(op, result, buf) {
                state.rest = Some((buf, from));
            }
        }
    }

    /// `poll_write_vectored` through the ring: wait for the send in
    /// flight, report its error if it failed, else copy `bufs` (up to
    /// 256 KiB) and start sending them. `Ready(Ok(n))`: `n` bytes accepted.
    pub(crate) fn poll_write(
        &self,
        rings: &Rings,
        ring: (usize, bool),
        is_shutdown: bool,
        fd: RawFd,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.lock();
        std::task::ready!(self.poll_idle(&mut state, rings, ring, is_shutdown, fd, cx.waker()))?;
        if let Some(e) = state.error.take() {
            return Poll::Ready(Err(e));
        }
        if is_shutdown {
            return Poll::Ready(Err(super::super::shutdown_error()));
        }
        let mut buf = std::mem::take(&mut state.spare);
        buf.clear();
        for b in bufs {
            let room = MAX_SEND - buf.len();
            if room == 0 {
                break;
            }
            buf.extend_from_slice(&b[..b.len().min(room)]);
        }
        let n = buf.len();
        if n == 0 {
            state.spare = buf;
            return Poll::Ready(Ok(0));
        }
        // No waker: the write returns now, and the task is likely to wait
        // for something else next (a reply); waking it when the send ends
        // would be a poll for nothing. Whoever waits for this send polls
        // it and leaves a waker then.
        //
        // Submitted at once when the caller is not the ring's owner, or is
        // a `block_on` future rather than a task (no task id): such a
        // future is where programs block their thread right after a write
        // (a std call, a `thread::join`, a blocking read of the peer), and
        // on a current_thread runtime the worker's batch point would then
        // never come. Spawned tasks, a server's connections, keep the
        // batch.
        let submit_now = !ring.1 || crate::task::try_id().is_none();
        let key = rings.get(ring.0).start_send(fd, buf, 0, None, submit_now)?;
        state.op = Some(InFlight {
            ring: ring.0,
            key,
            from: 0,
        });
        Poll::Ready(Ok(n))
    }

    /// Writes need no flush (see the module doc): report a known error.
    pub(crate) fn poll_flush(&self, rings: &Rings) -> Poll<io::Result<()>> {
        let mut state = self.lock();
        Self::take_if_done(&mut state, rings);
        Poll::Ready(state.error.take().map_or(Ok(()), Err))
    }

    /// Wait for the send in flight to end (before a shutdown, or a wait
    /// for writability). A send's error stays for the next operation, as
    /// does the shutdown error if the runtime is gone with a send in flight.
    pub(crate) fn poll_drained(
        &self,
        rings: &Rings,
        ring: (usize, bool),
        is_shutdown: bool,
        fd: RawFd,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        let mut state = self.lock();
        match self.poll_idle(&mut state, rings, ring, is_shutdown, fd, cx.waker()) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => Poll::Ready(()),
            Poll::Ready(Err(e)) => {
                state.error = Some(e);
                Poll::Ready(())
            }
        }
    }

    /// Whether a readiness-based write may go to the socket now: no send
    /// in flight (one that completed is taken here).
    pub(crate) fn is_idle(&self, rings: &Rings) -> bool {
        let mut state = self.lock();
        Self::take_if_done(&mut state, rings);
        state.op.is_none() && state.rest.is_none()
    }

    /// Whether a write may go to the socket itself, on readiness (a
    /// caller off the workers: io/poll_evented.rs): no send in flight,
    /// and no error one reported that the next write must return first.
    pub(crate) fn is_idle_and_clean(&self, rings: &Rings) -> bool {
        let mut state = self.lock();
        Self::take_if_done(&mut state, rings);
        state.op.is_none() && state.rest.is_none() && state.error.is_none()
    }

    /// Push the send in flight into the kernel now and take its completion
    /// if that ended it: a send the socket has room for completes inside
    /// the submission. Returns whether no send is in flight now. For a
    /// shutdown, which otherwise waits for the worker's batch point.
    pub(crate) fn settle_now(&self, rings: &Rings) -> bool {
        let mut state = self.lock();
        let mut wakers = Vec::new();
        if let Some(op) = state.op {
            let ring = rings.get(op.ring);
            ring.submit_now();
            ring.reap(&mut wakers);
            Self::take_if_done(&mut state, rings);
        }
        let idle = state.op.is_none() && state.rest.is_none();
        // Other ops' wakers, after our lock is released.
        drop(state);
        wakers.into_iter().for_each(Waker::wake);
        idle
    }

    /// The stream (or its write half) is going away: its send goes on to
    /// the last byte on a duplicate of `fd`, owned by the ring (see the
    /// module doc), and `shutdown` then shuts the write direction down.
    /// Returns false if no send was in flight (the caller shuts down
    /// itself, if it wants to).
    pub(crate) fn abandon(&self, rings: &Rings, fd: RawFd, shutdown: bool) -> bool {
        let mut state = self.lock();
        Self::take_if_done(&mut state, rings);
        if state.op.is_none() && state.rest.is_none() {
            return false;
        }
        // SAFETY: `fd` is the stream's open socket; F_DUPFD_CLOEXEC makes a
        // new descriptor for the ring to own.
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            // Out of descriptors: the send still completes on the
            // original (the kernel holds the socket), but nothing can
            // continue a short one.
            if let Some(op) = state.op.take() {
                rings
                    .get(op.ring)
                    .abandon(op.key, super::ops::Leave::Cancel);
            }
            return false;
        }
        if let Some((buf, from)) = state.rest.take() {
            let shared = rings.for_worker(None).0;
            match rings.get(shared).start_send(dup, buf, from, None, true) {
                Ok(key) => {
                    state.op = Some(InFlight {
                        ring: shared,
                        key,
                        from,
                    })
                }
                Err(_) => {
                    // SAFETY: `dup` is ours and nothing else holds it.
                    unsafe { libc::close(dup) };
                    return false;
                }
            }
        }
        let op = state
            .op
            .take()
            .expect("checked: a send or its rest was there");
        let send = super::ops::OrphanSend {
            fd: dup,
            from: op.from,
            shutdown,
        };
        rings
            .get(op.ring)
            .abandon(op.key, super::ops::Leave::Send(send));
        true
    }
}
