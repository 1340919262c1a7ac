//! A stream socket's reads through io_uring.
//!
//! Owns: the stream's one receive in flight (which ring, which op), its
//! spare buffer, and the bytes a receive brought that no reader has taken
//! yet (`leftover`).
//!
//! Invariants:
//! - **At most one receive is in flight per stream**, and bytes reach
//!   readers in the order the kernel delivered them: `leftover` is always
//!   read first, and a readiness-based read (`try_read`, `peek`, a custom
//!   `try_io`) first [`settle`](UringRead::settle)s, which cancels the
//!   receive in flight and keeps what it brought as `leftover`.
//! - A receive belongs to the stream, not to the future that started it:
//!   a reader that gives up (a `select!` that drops it) loses nothing; the
//!   data lands in `leftover` for the next read.
//! - The receive asks for at most what the reader's buffer can hold (and
//!   64 KiB), so `leftover` stays empty while readers keep their buffer.
//!
//! Readiness waiters: a receive takes bytes off the socket, so the poller
//! sees no readiness for them, and a task waiting for read readiness
//! (`readable()`, `peek`, `poll_read_ready`) would sleep on. Hence no
//! receive starts while one waits: [`UringRead::poll_read`] asks, under
//! the state's lock, whether one does, and if so the reader reads on
//! readiness instead ([`RingRead::OnReadiness`]). A waiter registers,
//! asks the poller for reads (`Registration::arm`), and only then settles
//! (`PollEvented::ring_took_bytes`). Both the reader's check and the
//! settle take the state's lock, so either the check comes after the
//! settle and sees the waiter (and the reads asked for), or its receive
//! started before the settle, which ends it (a receive that had already
//! brought bytes leaves them as `leftover`, which the waiter counts as
//! readable). `loom_read_wait.rs` models this handshake.

use super::ops::Polled;
use super::Rings;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use std::sync::{Mutex, MutexGuard};
use std::task::Context;

/// The most one receive asks for.
const MAX_RECV: usize = 64 * 1024;

#[derive(Default)]
pub(crate) struct UringRead {
    state: Mutex<ReadState>,
}

#[derive(Default)]
struct ReadState {
    /// (ring index, op) of the receive in flight.
    op: Option<(usize, super::ops::OpKey)>,
    /// A buffer for the next receive, kept between receives.
    spare: Vec<u8>,
    /// Received bytes not yet read: `leftover[pos..]`.
    leftover: Vec<u8>,
    pos: usize,
    /// What the receive in flight asked for.
    asked: usize,
    /// The last receive brought less than it asked for: the socket was
    /// drained, so the next receive will probably wait.
    drained: bool,
    /// The error a receive ended with after its reader had gone (found by
    /// `settle`): the kernel handed it over once (`ECONNRESET` clears the
    /// socket's `SO_ERROR`), so the next read returns it, after any
    /// leftover bytes, as a read of the socket would have.
    error: Option<io::Error>,
}

/// What a ring read came to.
#[must_use]
pub(crate) enum RingRead {
    /// `n` bytes read. `more`: the socket probably holds more (the
    /// receive filled all it asked for and nothing is kept here), so the
    /// caller may read it directly until a read comes back short.
    Read {
        n: usize,
        more: bool,
    },
    Failed(io::Error),
    /// The receive in flight holds the reader's waker.
    Pending,
    /// A task waits for read readiness and no bytes or receive are
    /// pending here: read the socket on readiness (module doc).
    OnReadiness,
}

/// What to do with a receive's completion.
#[must_use]
enum Received {
    /// Bytes (0: end of stream), now in `leftover`.
    Data,
    /// Interrupted or cancelled by the kernel, not by us: receive again.
    Retry,
    Failed(io::Error),
}

impl ReadState {
    /// See [`UringRead::is_idle`].
    fn is_idle(&self) -> bool {
        self.op.is_none() && !self.has_pending()
    }

    /// Hand kept bytes to the reader: how many, and whether the socket
    /// probably holds more (the receive that brought them filled all it
    /// asked for, and nothing of the ring's is left here).
    fn read_out(&mut self, dst: &mut [MaybeUninit<u8>]) -> RingRead {
        let n = self.read_leftover(dst);
        RingRead::Read {
            n,
            more: n > 0 && !self.drained && self.is_idle(),
        }
    }

    fn has_leftover(&self) -> bool {
        self.pos < self.leftover.len()
    }

    /// Leftover bytes, or an error kept for the next read.
    fn has_pending(&self) -> bool {
        self.has_leftover() || self.error.is_some()
    }

    /// Move up to `dst.len()` leftover bytes into `dst`.
    fn read_leftover(&mut self, dst: &mut [MaybeUninit<u8>]) -> usize {
        let src = &self.leftover[self.pos..];
        let n = src.len().min(dst.len());
        // SAFETY: `MaybeUninit<u8>` has `u8`'s layout, and `src` and `dst`
        // are distinct allocations (dst is the caller's).
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<u8>(), n);
        }
        self.pos += n;
        n
    }

    /// A buffer for the next receive: the spare, or else the leftover
    /// buffer, all read by now. So a stream holds one buffer, not two,
    /// until its reads outpace its reader, and a connection that reads
    /// twice allocates once (a connection per request: the request, then
    /// the read that finds the peer's close).
    fn take_buffer(&mut self) -> Vec<u8> {
        debug_assert!(
            !self.has_leftover(),
            "a receive starts only once every byte was read"
        );
        if self.spare.capacity() > 0 {
            return std::mem::take(&mut self.spare);
        }
        self.pos = 0;
        std::mem::take(&mut self.leftover)
    }

    /// Take a completed receive: its bytes become `leftover`, its buffer
    /// the next spare.
    fn received(&mut self, result: i32, mut buf: Vec<u8>) -> Received {
        self.op = None;
        if result >= 0 {
            // SAFETY: the kernel wrote `result` bytes at the start of the
            // buffer's spare capacity (`Ring::start_recv` cleared it and
            // asked for at most its capacity).
            unsafe { buf.set_len(result as usize) };
            self.drained = (result as usize) < self.asked;
            let old = std::mem::replace(&mut self.leftover, buf);
            self.pos = 0;
            self.spare = old;
            return Received::Data;
        }
        self.spare = buf;
        if super::ops::interrupted(result) {
            Received::Retry
        } else {
            Received::Failed(io::Error::from_raw_os_error(-result))
        }
    }
}

impl UringRead {
    fn lock(&self) -> MutexGuard<'_, ReadState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `poll_read` through the ring: leftover bytes first, then the
    /// receive in flight, else start one on ring `ring` (`owned`: the
    /// caller is its worker, so the submission may wait for its flush),
    /// unless `readiness_waited` says a task waits for read readiness
    /// (module doc). `Read { n: 0, .. }` with a non-empty `dst` is the end
    /// of the stream.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn poll_read(
        &self,
        rings: &Rings,
        (ring, owned): (usize, bool),
        is_shutdown: bool,
        fd: RawFd,
        cx: &mut Context<'_>,
        dst: &mut [MaybeUninit<u8>],
        mut readiness_waited: impl FnMut() -> bool,
    ) -> RingRead {
        let mut state = self.lock();
        loop {
            if state.has_leftover() || (dst.is_empty() && state.op.is_none()) {
                return state.read_out(dst);
            }
            if let Some(e) = state.error.take() {
                return RingRead::Failed(e);
            }
            if is_shutdown {
                return RingRead::Failed(super::super::shutdown_error());
            }
            if let Some((index, key)) = state.op {
                match rings.get(index).poll(key, cx.waker()) {
                    Polled::Pending => return RingRead::Pending,
                    Polled::Done { result, buf } => match state.received(result, buf) {
                        Received::Data => return state.read_out(dst),
                        Received::Retry => continue,
                        Received::Failed(e) => return RingRead::Failed(e),
                    },
                }
            }
            // No receive in flight and nothing kept.
            if readiness_waited() {
                return RingRead::OnReadiness;
            }
            let buf = state.take_buffer();
            let len = dst.len().clamp(1, MAX_RECV);
            let started =
                rings
                    .get(ring)
                    .start_recv(fd, buf, len, cx.waker(), !owned, state.drained);
            let key = match started {
                Ok(key) => key,
                Err(e) => return RingRead::Failed(e),
            };
            state.op = Some((ring, key));
            state.asked = len;
            return RingRead::Pending;
        }
    }

    /// Before a readiness-based read: end the receive in flight (keeping
    /// what it brought), so the reader sees bytes in order.
    pub(crate) fn settle(&self, rings: &Rings) {
        let mut state = self.lock();
        if let Some((index, key)) = state.op {
            let (result, buf) = rings.get(index).cancel_and_wait(key);
            // A cancelled receive brought nothing. A failed one took the
            // socket's error, which the socket will not report again: the
            // next read gets it.
            if let Received::Failed(e) = state.received(result, buf) {
                state.error = Some(e);
            }
        }
    }

    /// Whether nothing of the ring's is pending here: no receive in
    /// flight, and no bytes or error one brought. A read of the socket
    /// itself then keeps the stream's bytes in order.
    pub(crate) fn is_idle(&self) -> bool {
        self.lock().is_idle()
    }

    /// Whether received bytes (or a kept error) wait to be read.
    pub(crate) fn has_leftover(&self) -> bool {
        self.lock().has_pending()
    }

    /// Hand the leftover bytes to `f`, which returns how many it took
    /// (`consume`) or just looks (`!consume`, a peek); or the error kept
    /// for the next read (taken by a peek too, as `MSG_PEEK` takes a
    /// socket's error). `None` if there are neither.
    pub(crate) fn with_leftover(
        &self,
        consume: bool,
        f: impl FnOnce(&[u8]) -> usize,
    ) -> Option<io::Result<usize>> {
        let mut state = self.lock();
        if !state.has_leftover() {
            return state.error.take().map(Err);
        }
        let n = f(&state.leftover[state.pos..]);
        if consume {
            state.pos += n;
        }
        Some(Ok(n))
    }

    /// The error a receive took off the socket, for a write to report:
    /// one kept by `settle`, or one a receive that has completed ended
    /// with (not waited for). The kernel hands a socket's error (a reset)
    /// to whichever call comes first, read or write, and clears it; a
    /// receive on the ring came first, so the next write, which on the
    /// socket would have reported it, reports it instead (and the next
    /// read then reads on).
    pub(crate) fn take_error(&self, rings: &Rings) -> Option<io::Error> {
        let mut state = self.lock();
        if let Some((index, key)) = state.op {
            if let Some((result, buf)) = rings.get(index).try_take(key) {
                if let Received::Failed(e) = state.received(result, buf) {
                    state.error = Some(e);
                }
            }
        }
        state.error.take()
    }

    /// The stream is being dropped: whether bytes no reader took remain,
    /// in `leftover` or brought by its receive. The kernel resets a TCP
    /// connection closed with unread bytes; bytes the ring took off the
    /// socket no longer count there, so the caller resets it itself. A
    /// receive still in flight is cancelled and waited for only on the
    /// thread that owns its ring (`here`: `(ring, owned)` of the caller),
    /// where that is one `io_uring_enter`; elsewhere a drop does not wait
    /// for another thread's ring, only a completion already reaped counts,
    /// and bytes that reach the receive later are dropped unseen (a FIN).
    pub(crate) fn abandon_unread(&self, rings: &Rings, here: (usize, bool)) -> bool {
        let mut state = self.lock();
        if let Some((index, key)) = state.op {
            if here == (index, true) {
                state.op = None;
                if rings.get(index).cancel_before_close(key) > 0 {
                    return true;
                }
            } else if let Some((result, buf)) = rings.get(index).try_take(key) {
                let _ = state.received(result, buf);
            }
        }
        state.has_leftover()
    }

    /// The stream is going away: give its receive up (the ring frees the
    /// buffer when the cancelled receive completes). Must run before the
    /// socket is closed.
    pub(crate) fn abandon(&self, rings: &Rings) {
        if let Some((index, key)) = self.lock().op.take() {
            rings.get(index).abandon(key, super::ops::Leave::Cancel);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A stream that reads, hands every byte over and reads again starts
    /// its second receive in the first one's buffer: a connection per
    /// request allocates one receive buffer, not two.
    #[test]
    fn the_next_receive_reuses_the_buffer_its_reader_emptied() {
        let mut state = ReadState::default();
        let first = state.take_buffer();
        assert_eq!(first.capacity(), 0, "a new stream holds no buffer");
        let mut buf = Vec::with_capacity(8192);
        buf.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        let at = buf.as_ptr();
        let n = buf.len();
        buf.clear();
        state.asked = 8192;
        assert!(matches!(state.received(n as i32, buf), Received::Data));
        let mut dst = [MaybeUninit::new(0); 64];
        assert_eq!(state.read_leftover(&mut dst), n);
        let second = state.take_buffer();
        assert_eq!(
            second.as_ptr(),
            at,
            "a second allocation for the second receive"
        );
        assert!(second.capacity() >= 8192);
        assert!(!state.has_leftover());
    }
}
