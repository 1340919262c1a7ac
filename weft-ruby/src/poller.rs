//! The poller under the Ruby scheduler: mio's `Poll` (epoll on Linux,
//! kqueue on the BSDs and macOS), the same technology as weft's I/O driver,
//! plus the cross-thread wake side.
//!
//! Owns: [`Poller`] (the `Poll` and its event buffer; only the scheduler's
//! thread touches it) and [`Shared`] (the queue of fibers `unblock`ed from
//! any thread and the waker that interrupts a blocked poll).
//!
//! Invariants:
//! - [`Poller::wait`] with a non-zero timeout runs the poll **without the
//!   GVL** (`rb_thread_call_without_gvl`). During that call the poller is
//!   borrowed by the blocked thread only; other Ruby threads reach the
//!   scheduler through [`Shared`] alone (a `Mutex`), and the GC's mark
//!   function never touches the poller.
//! - The unblock function passed to Ruby only calls [`Shared::wake`], which
//!   is safe from any thread, so `Thread#raise`, `Thread#kill` and signals
//!   reach a thread parked in the poller.
//! - `blocked` is set (with the GVL held) before the GVL is released for
//!   the poll and cleared after it is re-acquired; `unblock` (which needs
//!   the GVL) writes the waker only when it is set, so a wake is never lost
//!   and never paid for when the loop is running Ruby code.
//! - Tokens are fds ([`WAKE_TOKEN`] is the waker's); an event never carries
//!   a pointer to a fiber, so a stale event can only wake an fd's current
//!   waiters, who re-check.

use crate::state::{Obj, PRIORITY, READABLE, WRITABLE};
use mio::unix::SourceFd;
use mio::{Interest, Token};
use std::ffi::c_void;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The waker's token (no fd is this large).
pub const WAKE_TOKEN: Token = Token(usize::MAX);

/// The poll side, owned by the scheduler's thread.
pub struct Poller {
    poll: mio::Poll,
    events: mio::Events,
}

/// The side other threads may touch.
pub struct Shared {
    inner: Mutex<SharedInner>,
    blocked: AtomicBool,
}

struct SharedInner {
    /// Fibers `unblock`ed and not yet seen by the loop (raw VALUEs, marked
    /// by the scheduler's mark function).
    unblocked: Vec<Obj>,
    /// `None` once the scheduler is closed (its eventfd is closed then).
    waker: Option<mio::Waker>,
}

/// How arming an fd went.
pub enum Armed {
    Ok,
    /// The fd can't be polled (a regular file): it is always ready.
    AlwaysReady,
}

fn to_interest(events: u8) -> Option<Interest> {
    let mut interest: Option<Interest> = None;
    let mut add = |i: Interest| interest = Some(interest.map_or(i, |x| x | i));
    if events & READABLE != 0 {
        add(Interest::READABLE);
    }
    if events & WRITABLE != 0 {
        add(Interest::WRITABLE);
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if events & PRIORITY != 0 {
        add(Interest::PRIORITY);
    }
    interest
}

impl Poller {
    pub fn new() -> io::Result<(Poller, Shared)> {
        let poll = mio::Poll::new()?;
        let waker = mio::Waker::new(poll.registry(), WAKE_TOKEN)?;
        let poller = Poller {
            poll,
            events: mio::Events::with_capacity(1024),
        };
        let shared = Shared {
            inner: Mutex::new(SharedInner {
                unblocked: Vec::new(),
                waker: Some(waker),
            }),
            blocked: AtomicBool::new(false),
        };
        Ok((poller, shared))
    }

    /// Give `fd` the interest `events`; `fresh`: it was never registered.
    pub fn arm(&self, fd: RawFd, events: u8, fresh: bool) -> io::Result<Armed> {
        let Some(interest) = to_interest(events) else {
            return Ok(Armed::Ok);
        };
        let registry = self.poll.registry();
        let token = Token(fd as usize);
        let mut source = SourceFd(&fd);
        let result = if fresh {
            match registry.register(&mut source, token, interest) {
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                    registry.reregister(&mut source, token, interest)
                }
                r => r,
            }
        } else {
            match registry.reregister(&mut source, token, interest) {
                // The file behind the fd number was closed (which removes it
                // from epoll) and the number reused.
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    registry.register(&mut source, token, interest)
                }
                r => r,
            }
        };
        match result {
            Ok(()) => Ok(Armed::Ok),
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => Ok(Armed::AlwaysReady),
            Err(e) => Err(e),
        }
    }

    /// Wait for events up to `timeout` (`None`: forever), then call `f`
    /// with each `(fd, ready events, error-or-hangup)`. A zero timeout polls
    /// with the GVL held; otherwise the GVL is released while blocked. The
    /// outer `Err` is a Ruby interrupt (Thread#raise/kill, a signal) that
    /// arrived while blocked; the inner one is the poller's error.
    pub fn wait(
        &mut self,
        shared: &Shared,
        timeout: Option<Duration>,
        mut f: impl FnMut(RawFd, u8, bool),
    ) -> Result<io::Result<()>, magnus::Error> {
        let result = if timeout == Some(Duration::ZERO) {
            self.poll.poll(&mut self.events, timeout)
        } else {
            shared.blocked.store(true, Ordering::SeqCst);
            let result = self.poll_without_gvl(shared, timeout);
            shared.blocked.store(false, Ordering::SeqCst);
            result?
        };
        match result {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(Ok(())),
            Err(e) => return Ok(Err(e)),
        }
        for event in self.events.iter() {
            if event.token() == WAKE_TOKEN {
                continue;
            }
            let mut ready = 0;
            if event.is_readable() || event.is_read_closed() {
                ready |= READABLE;
            }
            if event.is_writable() || event.is_write_closed() {
                ready |= WRITABLE;
            }
            if event.is_priority() {
                ready |= PRIORITY;
            }
            f(event.token().0 as RawFd, ready, event.is_error())
        }
        Ok(Ok(()))
    }

    fn poll_without_gvl(
        &mut self,
        shared: &Shared,
        timeout: Option<Duration>,
    ) -> Result<io::Result<()>, magnus::Error> {
        struct Call<'a> {
            poll: &'a mut mio::Poll,
            events: &'a mut mio::Events,
            timeout: Option<Duration>,
            result: Option<io::Result<()>>,
        }
        extern "C" fn run(data: *mut c_void) -> *mut c_void {
            // SAFETY: `data` is the `Call` on `poll_without_gvl`'s stack,
            // which outlives this call; only this thread touches it now.
            let call = unsafe { &mut *(data as *mut Call<'_>) };
            call.result = Some(call.poll.poll(call.events, call.timeout));
            std::ptr::null_mut()
        }
        extern "C" fn interrupt(data: *mut c_void) {
            // SAFETY: `data` is the `Shared` borrowed by `poll_without_gvl`
            // for the whole blocking call; `Shared::wake` is thread-safe.
            let shared = unsafe { &*(data as *const Shared) };
            shared.wake();
        }
        let mut call = Call {
            poll: &mut self.poll,
            events: &mut self.events,
            timeout,
            result: None,
        };
        let call_ptr = &mut call as *mut Call<'_> as *mut c_void;
        let shared_ptr = shared as *const Shared as *mut c_void;
        // `rb_thread_call_without_gvl` handles pending interrupts before and
        // after the poll, and an interrupt may raise (Thread#raise) or throw
        // (Thread#kill): `protect` turns that into an `Err` instead of a
        // longjmp over these Rust frames.
        let protected = magnus::rb_sys::protect(|| {
            // SAFETY: `run` touches only `call` (no Ruby object, no Ruby
            // API), as required without the GVL; `interrupt` only writes the
            // eventfd. Both pointers outlive the call (module invariants).
            unsafe {
                rb_sys::rb_thread_call_without_gvl(
                    Some(run),
                    call_ptr,
                    Some(interrupt),
                    shared_ptr,
                );
            }
            rb_sys::Qnil as rb_sys::VALUE
        });
        let result = call.result.take();
        if result.is_none() {
            // Interrupted before the poll ran: the buffer still holds the
            // previous turn's events, which must not be dispatched again.
            self.events.clear();
        }
        protected?;
        Ok(result.unwrap_or(Ok(())))
    }
}

/// Is `fd` ready for `events` right now? (`poll(2)` with a zero timeout.)
pub fn ready_now(fd: RawFd, events: u8) -> u8 {
    poll_one(fd, events, 0)
}

/// `poll(2)` on one fd for up to `ms` milliseconds (-1: forever), holding
/// whatever lock the caller holds: the events ready, 0 if none.
pub fn poll_one(fd: RawFd, events: u8, ms: i32) -> u8 {
    let mut wanted = 0;
    if events & READABLE != 0 {
        wanted |= libc::POLLIN;
    }
    if events & WRITABLE != 0 {
        wanted |= libc::POLLOUT;
    }
    if events & PRIORITY != 0 {
        wanted |= libc::POLLPRI;
    }
    let mut pfd = libc::pollfd {
        fd,
        events: wanted,
        revents: 0,
    };
    // SAFETY: `pfd` is a valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&mut pfd, 1, ms) };
    if n <= 0 {
        return 0;
    }
    let r = pfd.revents;
    if r & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
        return events;
    }
    let mut ready = 0;
    if r & libc::POLLIN != 0 {
        ready |= READABLE;
    }
    if r & libc::POLLOUT != 0 {
        ready |= WRITABLE;
    }
    if r & libc::POLLPRI != 0 {
        ready |= PRIORITY;
    }
    ready & events
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, SharedInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Interrupt a blocked poll (from any thread).
    pub fn wake(&self) {
        if let Some(waker) = &self.lock().waker {
            // Fails only if the eventfd counter is full: a wake is pending.
            let _ = waker.wake();
        }
    }

    /// `unblock` from any thread: queue `fiber` and wake the loop if it is
    /// parked in the poller.
    pub fn unblock(&self, fiber: Obj) {
        let mut inner = self.lock();
        inner.unblocked.push(fiber);
        if self.blocked.load(Ordering::SeqCst) {
            if let Some(waker) = &inner.waker {
                let _ = waker.wake();
            }
        }
    }

    /// Take the fibers unblocked since the last call.
    pub fn take_unblocked(&self, into: &mut Vec<Obj>) {
        into.append(&mut self.lock().unblocked);
    }

    pub fn has_unblocked(&self) -> bool {
        !self.lock().unblocked.is_empty()
    }

    /// Close the waker's eventfd (the scheduler is closed).
    pub fn close(&self) {
        self.lock().waker = None;
    }

    /// Every object held, for the GC mark function.
    pub fn each_object(&self, f: impl FnMut(Obj)) {
        self.lock().unblocked.iter().copied().for_each(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_now_sees_a_pipe_become_readable() {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        assert_eq!(ready_now(fds[0], READABLE), 0);
        assert_eq!(ready_now(fds[1], WRITABLE), WRITABLE);
        // SAFETY: fds[1] is the open write end; the buffer is one byte.
        assert_eq!(unsafe { libc::write(fds[1], b"x".as_ptr().cast(), 1) }, 1);
        assert_eq!(ready_now(fds[0], READABLE | WRITABLE), READABLE);
        for fd in fds {
            // SAFETY: closing the two descriptors this test opened.
            unsafe { libc::close(fd) };
        }
    }

    #[test]
    fn zero_timeout_wait_reports_an_armed_fd() {
        let (mut poller, shared) = Poller::new().unwrap();
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        assert!(matches!(poller.arm(fds[0], READABLE, true), Ok(Armed::Ok)));
        // SAFETY: fds[1] is the open write end; the buffer is one byte.
        assert_eq!(unsafe { libc::write(fds[1], b"x".as_ptr().cast(), 1) }, 1);
        let mut seen = Vec::new();
        poller
            .wait(&shared, Some(Duration::ZERO), |fd, ev, _| {
                seen.push((fd, ev))
            })
            .unwrap()
            .unwrap();
        assert_eq!(seen, vec![(fds[0], READABLE)]);
        for fd in fds {
            // SAFETY: closing the two descriptors this test opened.
            unsafe { libc::close(fd) };
        }
    }
}
