//! The poller under the Ruby scheduler: weft's own reactor. A
//! current_thread weft runtime (its I/O driver over mio — epoll on Linux,
//! kqueue on the BSDs and macOS — and its timer wheel) is driven by the
//! Ruby thread's loop; no second event loop exists.
//!
//! Owns: [`Poller`] (the runtime, one [`AsyncFd`] registration per fd that
//! fibers waited on, and the list of fds whose readiness changed; only the
//! scheduler's thread touches it). `wake.rs` holds [`Shared`] (the fibers
//! `unblock`ed from any thread, and the eventfd that ends a blocked wait)
//! and the queue the registrations' wakers fill; `registration.rs` one
//! fd's registration and how a wait gets it; `trust.rs` says when a wait
//! may skip the check of its fd's registration, and audits those.
//!
//! How a wait maps onto weft's driver: an fd is registered once, for
//! reading and writing, edge-triggered (as every weft socket is), so its
//! interest never changes whatever its waiters want; each registration's
//! waker queues the fd number on `Woken`. The driver keeps a readiness
//! bit per direction that an edge sets and only a wait clears: a fiber that
//! starts waiting on a direction whose bit is set clears it and asks the
//! kernel with a zero-timeout `poll(2)` whether the fd is still ready (the
//! bit may be left over from data already read). So a `read` → `EAGAIN` →
//! `io_wait` costs no syscall besides the final `epoll_wait`. The `read`
//! itself is skipped when one that came up short on the same stream
//! socket, in the same turn, drained it ([`Poller::read_would_fail`]): a
//! keep-alive server's read after each response.
//!
//! On io_uring (with `WEFT_IO_DRIVER=uring` or `auto`, see [`runtime_builder`];
//! `Weft::Scheduler.backend` says which runs), the same calls wait through one-shot
//! poll requests on the runtime's ring instead of epoll: a wait that finds
//! no readiness arms one for its direction, and the loop blocks in the
//! ring. Two differences follow. Only directions a waiter wants are armed
//! ([`Poller::readiness`]). And a request in the kernel holds its file
//! open, so a registration whose last waiter left it armed is dropped
//! ([`Poller::release`]), cancelling the request: otherwise closing the IO
//! would not close the socket until the request ended. Priority waits
//! re-register the fd with `PRIORITY`, which epoll reports (weft's
//! `AsyncFd` leaves priority to epoll on io_uring). The requests are armed
//! inside the runtime's `block_on` (`on_loop`), on the ring the loop
//! owns: one `io_uring_enter` per loop turn.
//!
//! Invariants:
//! - [`Poller::wait`] with a non-zero timeout turns the driver **without
//!   the GVL** (`rb_thread_call_without_gvl`). Only Rust runs then: the
//!   driver, the registrations' wakers (which touch `Woken` alone) and
//!   the blocked future. Other Ruby threads reach the scheduler through
//!   [`Shared`] alone (a `Mutex`), and the GC's mark function never touches
//!   the poller.
//! - Every wake of the loop from outside it is one `write(2)` to the
//!   poller's eventfd, registered in the driver like any fd; a write with
//!   nobody blocked stays in the eventfd and ends the next wait at once.
//!   Other threads (`unblock`, `wakeup`) write it through
//!   [`Shared::wake`], under the lock [`Shared::close`] takes to release
//!   it. The unblock function passed to Ruby writes it by number, no lock
//!   and no memory touched (the poller holds it open for the whole
//!   blocking call), which is async-signal-safe: so Ruby may call it from
//!   its signal handler (`RB_NOGVL_UBF_ASYNC_SAFE`), and `Thread#raise`,
//!   `Thread#kill` and signals reach a thread parked in the driver.
//!   (Without that flag, Ruby 3.1 starts and kills a helper Ruby thread
//!   around every blocking wait of the main thread, to call a possibly
//!   unsafe unblock function outside the handler; that cost 25% of the CPU
//!   per request of a connection-per-request server.)
//! - `blocked` is set (with the GVL held) before the GVL is released and
//!   cleared after it is re-acquired; `unblock` wakes the loop only when
//!   it is set, so a wake is never lost and never paid for while the loop
//!   runs Ruby code.
//! - Wakers carry fd numbers, never a fiber: a stale wake (an fd closed and
//!   its number reused) can only wake that fd's current waiters, who
//!   re-check.
//! - A registration is trusted without a check by a wait on the IO its
//!   fd's current waiters wait on, and by a wait of the IO object whose
//!   wait checked it last (same address and object id: `trust.rs`). Any
//!   other wait checks the registration, because the number may have been
//!   closed and reused, and closing the old file took it out of the
//!   kernel's interest list: one `EPOLL_CTL_ADD`, which epoll accepts for
//!   a file new to the number (now registered; the old registration is
//!   given up), and refuses for a file registered already, when `fstat`
//!   settles whether the registration is this socket's (else it is made
//!   afresh). `registration.rs` says why that is sound. The same object
//!   can name another file too (`IO#reopen`, or a close by another IO
//!   object on the same fd, swaps the file behind the same object and
//!   number), and a wait trusting that would never be woken: so an audit
//!   checks a trust that has lasted [`AUDIT_EVERY`] with no bytes moved
//!   (`trust.rs`), and such a wait ends late instead of never.
//! - The driver takes edges only in [`Poller::wait`] (`turns` counts its
//!   calls): an edge raised after a read is still there for the next wait
//!   if no turn came between. That is what the hooks' hints lean on: an
//!   `EAGAIN` ([`Poller::note_eagain`]) and a short read
//!   ([`Poller::note_short_read`]) count only within the turn they were
//!   noted in.
//! - In a process forked from the owner the registrations belong to the
//!   parent's epoll instance: dropping them would deregister the parent's
//!   fds, so a forked child's `Poller` is leaked, never dropped.

use crate::fd_map::FdMap;
use crate::fd_query::{byte_stream_socket, ready_now};
use crate::held::OwnerPid;
use crate::state::{PRIORITY, READABLE, WRITABLE};
use registration::{Fd, Got, Registration};
use std::collections::VecDeque;
use std::ffi::c_void;
use std::future::{poll_fn, Future};
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use trust::Audit;
pub use trust::{WaitingIo, AUDIT_EVERY};
pub use wake::Shared;
use wake::{write_eventfd, Woken};
use weft::io::unix::AsyncFd;
use weft::io::Interest;

/// A read that moved fewer bytes than it asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
struct ShortRead {
    fd: RawFd,
    /// [`Poller`]'s driver turn it happened in.
    turn: u64,
    /// Who read (an opaque key: the Ruby IO).
    reader: u64,
}

/// The poll side, owned by the scheduler's thread.
pub struct Poller {
    /// `ManuallyDrop` so a forked child can leak it (module invariant).
    inner: ManuallyDrop<PollerInner>,
    owner: OwnerPid,
    /// Driver turns so far ([`Poller::wait`] calls).
    turns: u64,
    /// The last read/write that gave up on `EAGAIN` without waiting: fd,
    /// direction, and the turn it happened in (see [`Poller::note_eagain`]).
    eagain: Option<(RawFd, u8, u64)>,
    /// The last read that moved fewer bytes than asked (see
    /// [`Poller::read_would_fail`]).
    drained: Option<ShortRead>,
    /// The fds the driver woke, reused from turn to turn.
    woken: Vec<RawFd>,
    /// Woken fds not reported yet (past [`FDS_PER_TURN`]), in the order
    /// they were woken, each once: what `queued` marks on its
    /// registration.
    pending: VecDeque<RawFd>,
    /// Where the registrations' wakers queue their fds.
    wakes: Arc<Woken>,
    /// Registrations trusted unchecked, awaiting an audit (`trust.rs`).
    audit: Audit,
}

struct PollerInner {
    // Field order: the registrations deregister from the runtime's driver
    // before the runtime goes.
    fds: FdMap<Registration>,
    /// The registration of [`Shared`]'s eventfd (module invariants).
    interrupt: AsyncFd<Fd>,
    /// That eventfd, kept open while registered (whichever of this and
    /// [`Shared::close`] comes last closes it).
    _interrupt_fd: Arc<OwnedFd>,
    rt: weft::runtime::Runtime,
    /// The runtime's driver is io_uring.
    ring: bool,
}

/// What watching an fd found.
pub enum Watch {
    /// The fd is ready now for these of the asked events.
    Ready(u8),
    /// Not ready: the registration's waker will report the next edge.
    Pending,
}

impl Poller {
    pub fn new() -> io::Result<(Poller, Shared)> {
        let rt = runtime_builder().enable_all().build()?;
        let ring = rt.metrics().io_driver() == Some(weft::runtime::IoDriver::Uring);
        // SAFETY: eventfd(2) takes no pointers; a result >= 0 is a new fd
        // that nothing else owns.
        let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above, `raw` is ours alone.
        let interrupt_fd = Arc::new(unsafe { OwnedFd::from_raw_fd(raw) });
        let interrupt = {
            let _guard = rt.enter();
            AsyncFd::with_interest_on_rings(Fd(raw), Interest::READABLE)?
        };
        let poller = Poller {
            inner: ManuallyDrop::new(PollerInner {
                fds: FdMap::default(),
                interrupt,
                _interrupt_fd: interrupt_fd.clone(),
                rt,
                ring,
            }),
            owner: {
                let owner = OwnerPid::default();
                owner.claim();
                owner
            },
            turns: 0,
            eagain: None,
            drained: None,
            woken: Vec::new(),
            pending: VecDeque::new(),
            wakes: Arc::new(Woken::default()),
            audit: Audit::default(),
        };
        let shared = Shared::new(interrupt_fd);
        Ok((poller, shared))
    }

    /// A read or write on `fd` (for `events`) just got `EAGAIN` and its
    /// caller gave up instead of waiting: Ruby 3.1 reads through `io_read`
    /// with a zero length, then calls `io_wait` itself. That `io_wait` is
    /// then as good as `just_failed`, if it comes before the driver turns
    /// (only a turn can consume an edge).
    pub fn note_eagain(&mut self, fd: RawFd, events: u8) {
        self.eagain = Some((fd, events, self.turns));
    }

    /// A read on `fd` by `reader` (an opaque key: the Ruby IO) just moved
    /// fewer bytes than it asked for: on a byte-stream socket, its receive
    /// queue was empty then.
    pub fn note_short_read(&mut self, fd: RawFd, reader: u64) {
        self.drained = Some(ShortRead {
            fd,
            turn: self.turns,
            reader,
        });
    }

    /// A read or write on `fd` moved bytes: if no fiber waits on it
    /// (`nobody_waits`, asked only when a wait trusts the registration),
    /// the waits that trusted it since it was last checked ended well
    /// (`trust.rs`).
    pub fn note_moved(&mut self, fd: RawFd, nobody_waits: impl FnOnce() -> bool) {
        if let Some(reg) = self.inner.fds.get_mut(&fd) {
            reg.verified.progressed(nobody_waits);
        }
    }

    /// Forget a short read noted on `fd`: its fiber is asking whether the
    /// fd is ready, and a read after a "readable" must not get `EAGAIN`.
    pub fn forget_short_read(&mut self, fd: RawFd) {
        if self.drained.is_some_and(|s| s.fd == fd) {
            self.drained = None;
        }
    }

    /// Is a read on `fd` by `reader` sure to get `EAGAIN` now, so that the
    /// caller may skip it and wait as if it had? Uses the noted short read
    /// up, whatever the answer. True when the last read was by the same
    /// reader on `fd`, came up short, and happened in this turn of the
    /// driver, and `fd` is a registered byte-stream socket. A short read
    /// drained a byte stream (a datagram or an SCTP socket returns one
    /// message however many are queued), and bytes that came since raised
    /// an edge the driver has not taken yet (module invariants), which the
    /// wait that follows sees: as good as [`note_eagain`](Poller::note_eagain)'s
    /// `EAGAIN`, minus the `recv`. So are the end of the stream and a
    /// reset or error that came with the bytes: the wait reports what the
    /// driver holds beyond readability ([`Poller::watch`]).
    ///
    /// The reader must match because the fd number may have been closed
    /// and reused since (a connection closed and the next accepted in the
    /// same turn): the new socket's first read is made. If the same IO
    /// names another file by then (`IO#reopen`), a skipped read's wait
    /// finds the new file's bytes when it checks the registration: at
    /// once if the IO's wait did not check the registration last, else
    /// when an audit does (`trust.rs`); never if other fibers wait on the
    /// IO (`known`, which is never checked), so the caller asks only when
    /// none does.
    ///
    /// Where a byte stream stops a read short with bytes left behind, the
    /// skipped read's fiber waits for the next bytes instead (weft's own
    /// sockets and Tokio's `poll_read` share this): TCP's urgent data
    /// (`MSG_OOB`), and on AF_UNIX a chunk carrying file descriptors, a
    /// change of the writer's credentials under `SO_PASSCRED`, or its
    /// `MSG_OOB`.
    ///
    /// `others_wait` says whether other fibers wait on `fd`; asked only
    /// when the hint matches (a lookup saved on every other read). The
    /// read is made then: the wait after a skipped read would trust the
    /// registration without checking its identity (`known`).
    pub fn read_would_fail(
        &mut self,
        fd: RawFd,
        reader: u64,
        others_wait: impl FnOnce() -> bool,
    ) -> bool {
        let this_read = ShortRead {
            fd,
            turn: self.turns,
            reader,
        };
        if self.drained.take() != Some(this_read) || others_wait() {
            return false;
        }
        let Some(reg) = self.inner.fds.get_mut(&fd) else {
            return false;
        };
        *reg.stream.get_or_insert_with(|| byte_stream_socket(fd))
    }

    /// Start a wait for `events` on `fd`. `known`: the IO is the one the
    /// fd's current waiters wait on, so its registration is trusted without
    /// a check. `just_failed`: the caller's read or write on the fd has
    /// just got `EAGAIN` (no edge can have been consumed since: the driver
    /// only turns in [`Poller::wait`]), so left-over readiness is cleared
    /// without asking the kernel. `Ok(None)`: the fd can't be polled (a
    /// regular file), so it is always ready.
    pub fn watch(
        &mut self,
        fd: RawFd,
        events: u8,
        known: bool,
        just_failed: bool,
    ) -> io::Result<Option<Watch>> {
        self.watch_by(fd, events, known, just_failed, None)
    }

    /// [`watch`](Poller::watch) by `io`: if its wait checked the
    /// registration last, the wait trusts it unchecked (`trust.rs`).
    pub fn watch_by(
        &mut self,
        fd: RawFd,
        events: u8,
        known: bool,
        just_failed: bool,
        io: Option<WaitingIo<'_>>,
    ) -> io::Result<Option<Watch>> {
        self.forget_short_read(fd);
        let noted = self.eagain.take();
        let just_failed = just_failed
            || noted.is_some_and(|(nfd, nev, turn)| {
                nfd == fd && events & !nev == 0 && turn == self.turns
            });
        let inner = &mut *self.inner;
        // On io_uring nothing is armed for a wait that is over at once: ask
        // the kernel first (epoll's registration made once costs nothing
        // to leave armed; a poll request would be cancelled by `release`).
        if inner.ring && !just_failed {
            let now = ready_now(fd, events);
            if now != 0 {
                return Ok(Some(Watch::Ready(now)));
            }
        }
        let Some(Got {
            fresh,
            carried,
            trusted,
        }) = self.registration_for(fd, events, known, io)?
        else {
            // epoll refuses regular files: they are always ready.
            return Ok(None);
        };
        let inner = &mut *self.inner;
        let reg = inner.fds.get_mut(&fd).expect("registered above");
        if trusted {
            self.audit.note_trusted(fd, &mut reg.verified);
        } else if !known {
            reg.verified.checked_by(io);
        }
        // Clear a direction's left-over readiness and arm its waker; a set
        // bit means the kernel must be asked (see the module doc).
        let mut ask = fresh || events & PRIORITY != 0;
        // What the driver holds beyond plain readiness is real whatever
        // `just_failed` says (a read skipped after a short read,
        // `read_would_fail`, would have found it, not `EAGAIN`): "the peer
        // closed", which a clear can't take away, and a pending error,
        // which it can. The waits end on an error alone (`_or_error`), as
        // Ruby's own `IO#wait` (poll(2)) does on `POLLERR`.
        let mut kept = false;
        on_loop(&inner.rt, inner.ring, || {
            let mut cx = Context::from_waker(&reg.waker);
            if events & (READABLE | PRIORITY) != 0 {
                if let Poll::Ready(Ok(mut guard)) = reg.fd.poll_read_ready_or_error(&mut cx) {
                    kept |= guard.ready().is_error();
                    guard.clear_ready();
                    ask = true;
                    kept |= reg.fd.poll_read_ready_or_error(&mut cx).is_ready();
                }
                reg.armed |= READABLE;
            }
            if events & WRITABLE != 0 {
                if let Poll::Ready(Ok(mut guard)) = reg.fd.poll_write_ready_or_error(&mut cx) {
                    kept |= guard.ready().is_error();
                    guard.clear_ready();
                    ask = true;
                    kept |= reg.fd.poll_write_ready_or_error(&mut cx).is_ready();
                }
                reg.armed |= WRITABLE;
            }
            if carried & READABLE != 0 && events & (READABLE | PRIORITY) == 0 {
                let _ = reg.fd.poll_read_ready_or_error(&mut cx);
                reg.armed |= READABLE;
            }
            if carried & WRITABLE != 0 && events & WRITABLE == 0 {
                let _ = reg.fd.poll_write_ready_or_error(&mut cx);
                reg.armed |= WRITABLE;
            }
        });
        // A fresh registration needs no question either when the caller
        // just failed: adding an fd to epoll reports its current readiness
        // at the next poll, edge-triggered or not. On io_uring the kernel
        // was asked above.
        if kept || (ask && !just_failed && !inner.ring) {
            let now = ready_now(fd, events);
            if now != 0 {
                return Ok(Some(Watch::Ready(now)));
            }
        }
        Ok(Some(Watch::Pending))
    }

    /// The events of `wanted` (its waiters' union) that `fd`'s registration
    /// has seen since its waits began (`READABLE` also covers `PRIORITY`,
    /// which the driver reports with readability; the caller asks the
    /// kernel when it must tell them apart). Re-arms the registration's
    /// waker for wanted directions not ready; a direction nobody wants is
    /// left alone (on io_uring, arming it would put a poll request in the
    /// kernel for nobody).
    pub fn readiness(&mut self, fd: RawFd, wanted: u8) -> u8 {
        let inner = &mut *self.inner;
        let Some(reg) = inner.fds.get_mut(&fd) else {
            return 0;
        };
        on_loop(&inner.rt, inner.ring, || reg.readiness(wanted))
    }

    /// `fd`'s last waiter left. On io_uring, a wait it left armed (it
    /// timed out, was raised into, or wanted two directions and got one)
    /// is a poll request holding the file open in the kernel: if the IO is
    /// then closed, its peer would not see the close until the request
    /// ends. So such a registration is dropped, which cancels it (the next
    /// wait registers the fd afresh). On epoll nothing is held: a closed
    /// fd leaves epoll by itself.
    ///
    /// A registration for priority is dropped whatever `armed` says: epoll
    /// reports urgent data as readability there, which can clear the read
    /// bit while the ring's read request is still in the kernel.
    pub fn release(&mut self, fd: RawFd) {
        let inner = &mut *self.inner;
        let held = |reg: &Registration| reg.armed != 0 || reg.priority;
        if inner.ring && inner.fds.get(&fd).is_some_and(held) {
            inner.fds.remove(&fd);
        }
    }

    /// Turn the driver: with a zero timeout, holding the GVL; otherwise
    /// without it, until an fd is woken, [`Shared::wake`] is called or
    /// `timeout` (`None`: forever) passes. Then `f` gets each woken fd with
    /// its [`readiness`](Poller::readiness) for what `wanted` says its
    /// waiters want: at most [`FDS_PER_TURN`] of them, the longest woken
    /// first; while more are left the next turn does not block.
    /// The outer `Err` is a Ruby interrupt (Thread#raise/kill, a signal)
    /// that arrived while blocked; the inner one is the driver's error.
    pub fn wait(
        &mut self,
        shared: &Shared,
        timeout: Option<Duration>,
        wanted: impl Fn(RawFd) -> u8,
        mut f: impl FnMut(RawFd, u8),
    ) -> Result<io::Result<()>, magnus::Error> {
        self.turns += 1;
        if timeout == Some(Duration::ZERO) || !self.pending.is_empty() {
            // A yield lets the driver poll once without blocking.
            self.inner.rt.block_on(weft::task::yield_now());
        } else {
            shared.blocked.store(true, Ordering::SeqCst);
            // An `unblock` that read `blocked` before the store above did
            // not wake us: it read it under the queue's lock, which this
            // takes after the store, so it sees this store or this sees
            // its fiber.
            let result = if shared.has_unblocked() {
                self.inner.rt.block_on(weft::task::yield_now());
                Ok(())
            } else {
                let timeout = self.audit_timeout(timeout);
                self.wait_without_gvl(timeout)
            };
            shared.blocked.store(false, Ordering::SeqCst);
            result?;
        }
        let mut fds = std::mem::take(&mut self.woken);
        self.wakes.take(&mut fds);
        let inner = &mut *self.inner;
        for fd in fds.drain(..) {
            // An fd without a registration is gone: nobody to tell.
            if let Some(reg) = inner.fds.get_mut(&fd).filter(|r| !r.queued) {
                reg.queued = true;
                self.pending.push_back(fd);
            }
        }
        self.woken = fds;
        let pending = &mut self.pending;
        on_loop(&inner.rt, inner.ring, || {
            let mut reported = 0;
            while reported < FDS_PER_TURN {
                let Some(fd) = pending.pop_front() else { break };
                // Released or replaced since it was queued: nothing to say.
                let Some(reg) = inner.fds.get_mut(&fd) else {
                    continue;
                };
                reg.queued = false;
                f(fd, reg.readiness(wanted(fd)));
                reported += 1;
            }
        });
        self.audit_if_due(&wanted, &mut f);
        Ok(Ok(()))
    }

    /// Ready when a registration was woken or [`Shared::wake`] was
    /// called (whose eventfd this drains); else `cx` is remembered by both.
    fn poll_wake(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.wakes.poll_any(cx).is_ready() {
            return Poll::Ready(());
        }
        match self.inner.interrupt.poll_read_ready(cx) {
            Poll::Ready(Ok(mut guard)) => {
                let mut count = [0u8; 8];
                // SAFETY: reads at most 8 bytes into `count`; the eventfd is
                // non-blocking.
                unsafe { libc::read(guard.get_ref().as_raw_fd(), count.as_mut_ptr().cast(), 8) };
                guard.clear_ready();
                Poll::Ready(())
            }
            // A failed registration ends the wait rather than hang it.
            Poll::Ready(Err(_)) => Poll::Ready(()),
            Poll::Pending => Poll::Pending,
        }
    }

    fn wait_without_gvl(&mut self, timeout: Option<Duration>) -> Result<(), magnus::Error> {
        struct Call<'a> {
            poller: &'a Poller,
            timeout: Option<Duration>,
        }
        extern "C" fn run(data: *mut c_void) -> *mut c_void {
            // SAFETY: `data` is the `Call` on `wait_without_gvl`'s stack,
            // which outlives this call; only this thread touches it now.
            let call = unsafe { &*(data as *const Call<'_>) };
            call.poller.inner.rt.block_on(async {
                let mut sleep = call.timeout.map(|t| Box::pin(weft::time::sleep(t)));
                poll_fn(|cx| {
                    if call.poller.poll_wake(cx).is_ready() {
                        return Poll::Ready(());
                    }
                    match sleep.as_mut() {
                        Some(s) => Pin::new(s).poll(cx),
                        None => Poll::Pending,
                    }
                })
                .await
            });
            std::ptr::null_mut()
        }
        extern "C" fn interrupt(data: *mut c_void) {
            // The eventfd's number travels as the pointer: no lock, no
            // memory touched (this may run in a signal handler).
            write_eventfd(data as usize as RawFd);
        }
        let call = Call {
            poller: self,
            timeout,
        };
        let call_ptr = &call as *const Call<'_> as *mut c_void;
        // The poller holds the eventfd open for the whole blocking call.
        let fd_ptr = self.inner.interrupt.as_raw_fd() as usize as *mut c_void;
        // `rb_nogvl` handles pending interrupts before and after the wait,
        // and an interrupt may raise (Thread#raise) or throw (Thread#kill):
        // `protect` turns that into an `Err` instead of a longjmp over
        // these Rust frames.
        let protected = magnus::rb_sys::protect(|| {
            // SAFETY: `run` touches only `call` (Rust values, no Ruby object
            // or API), as required without the GVL; `interrupt` only writes
            // the eventfd, which is async-signal-safe as the flag promises
            // (module invariants). `call` outlives the call.
            unsafe {
                rb_sys::rb_nogvl(
                    Some(run),
                    call_ptr,
                    Some(interrupt),
                    fd_ptr,
                    rb_sys::RB_NOGVL_UBF_ASYNC_SAFE as i32,
                );
            }
            rb_sys::Qnil as rb_sys::VALUE
        });
        protected.map(drop)
    }

    /// Registrations held (one per fd waited on, until re-registered; on
    /// io_uring also until [`release`](Poller::release)d).
    pub fn registrations(&self) -> usize {
        self.inner.fds.len()
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        if !self.owner.forked() {
            // SAFETY: `inner` is dropped once, here, and never used after.
            unsafe { ManuallyDrop::drop(&mut self.inner) };
        }
        // A forked child leaks it (module invariant).
    }
}

/// The most woken fds one turn of the loop reports ([`Poller::wait`]),
/// as io-event's selectors take at most 64 events (`EPOLL_MAX_EVENTS`)
/// from the kernel per `select`: the rest are reported by the next turns,
/// first come first reported. A selector's `io_wait` always goes through
/// the loop, so a fiber that waits on a ready fd (Ruby waits on a
/// listening socket before every `accept`) runs once per `select`; a
/// `select` that resumed a thousand fibers made it wait for all of them
/// (async 2.x on `Weft::Selector` at 1,000 keep-alive connections took 3 s
/// to accept them all, and wrk's requests timed out).
pub const FDS_PER_TURN: usize = 64;

/// A builder for the poller's runtime, with its I/O driver (what
/// `Weft::Scheduler.backend` reports): epoll unless `WEFT_IO_DRIVER` asks
/// for another (`uring`, or `auto`: io_uring where the kernel allows it),
/// which the builder then reads. Not weft's usual `Auto` default: the hooks
/// wait for readiness, which on io_uring costs a poll request per wait,
/// 4–12% more CPU per request of the seed article's HTTP server than epoll's
/// registration made once (BENCHMARKS.md, "Ruby").
pub fn runtime_builder() -> weft::runtime::Builder {
    let mut builder = weft::runtime::Builder::new_current_thread();
    let asked = std::env::var_os(weft::runtime::IO_DRIVER_ENV).is_some_and(|v| !v.is_empty());
    if !asked {
        builder.io_driver(weft::runtime::IoDriver::Epoll);
    }
    builder
}

/// Run `f`, which polls registrations (and so may arm poll requests), as
/// the runtime's own thread: on io_uring inside `block_on`, so the
/// requests go to the ring the loop owns and are submitted together at its
/// next turn, one `io_uring_enter` for the batch. Outside it they would go
/// to the runtime's shared ring one by one, an `io_uring_enter` per wait
/// (measured: one per request of the keep-alive HTTP server).
///
/// `unconstrained`: a turn polls up to [`FDS_PER_TURN`] woken fds, two
/// directions each, in one `block_on`, and the coop budget (128 polls)
/// would make the polls past it return `Pending` and re-wake their fd
/// instead of looking. When woken fds were taken in number order, that
/// starved the same high-numbered ones turn after turn (at 800 keep-alive
/// connections p99 went from 17 ms to 0.95 s).
fn on_loop<R>(rt: &weft::runtime::Runtime, ring: bool, f: impl FnOnce() -> R) -> R {
    if ring {
        rt.block_on(weft::task::unconstrained(async { f() }))
    } else {
        f()
    }
}

/// Start a waiter's wait on `fd` ([`Poller::watch`]) and say what is
/// ready for it now: 0 if it must wait, `events` if the fd can't be polled
/// (a regular file) or there is no poller (closed), so that it never
/// waits on nothing.
pub fn ready_or_watch(
    poller: Option<&mut Poller>,
    fd: RawFd,
    events: u8,
    known: bool,
    just_failed: bool,
    io: WaitingIo<'_>,
) -> io::Result<u8> {
    let Some(poller) = poller else {
        return Ok(events);
    };
    Ok(
        match poller.watch_by(fd, events, known, just_failed, Some(io))? {
            Some(Watch::Pending) => 0,
            Some(Watch::Ready(ready)) => ready,
            None => events,
        },
    )
}

mod registration;
#[cfg(test)]
mod tests;
mod trust;
mod wake;
