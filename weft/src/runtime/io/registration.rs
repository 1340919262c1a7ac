//! A resource's link to its runtime's I/O driver.
//!
//! Owns: the resource's slab key and [`ScheduledIo`], and the driver handle
//! that keeps the registry alive. Every readiness wait goes through here,
//! and every wait that completes spends one unit of the task's coop budget
//! (so a socket that is always ready cannot monopolise a worker).
//!
//! An `AsyncFd`'s registration ([`Registration::new_fd`]) is with epoll on
//! both drivers, so its readiness is Tokio's: edges the poller reports,
//! kept until a wait clears them. One made with
//! [`Registration::new_fd_on_rings`] on a driver with io_uring rings (the
//! Ruby selector's) learns its readiness from poll requests on the rings
//! instead (`uring/poll.rs`): a wait that finds none arms them, and the
//! epoll registration stays quiet (errors and hang-ups, and priority if
//! asked for). Not a datagram socket or a socket without a peer
//! ([`waits_on_epoll`]: UDP, a listener), which waits on epoll.

use super::lazy_interest::LazyInterest;
use super::ready::{Interest, Ready};
use super::scheduled_io::{Direction, ReadyEvent, ScheduledIo};
use super::uring::{DriverRings, UringPoll};
use super::{shutdown_error, Key};
use crate::coop;
use crate::runtime::{context, driver};
use std::future::poll_fn;
use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::task::{ready, Context, Poll, Waker};

pub(crate) struct Registration {
    driver: driver::Handle,
    key: Key,
    io: Arc<ScheduledIo>,
    /// Poll requests on the rings, for a descriptor polled there.
    ring_poll: Option<Arc<UringPoll<DriverRings>>>,
    /// The descriptor, if it was registered quietly (`new_quiet`) or
    /// not at all (`new_unpolled`): mio never saw it, so it leaves epoll
    /// as a bare descriptor (a mio source would refuse, in debug builds,
    /// to deregister a registration it did not make).
    quiet_fd: Option<RawFd>,
    /// A ring-backed stream's interest, added to the poller as waits and
    /// `try_io` need it (lazy_interest.rs). Boxed: most registrations
    /// have none.
    lazy: Option<Box<LazyInterest>>,
}

/// The handle of the current runtime's I/O driver, or a panic that says
/// what is missing.
#[track_caller]
pub(crate) fn current_driver() -> driver::Handle {
    // A `match`, not `unwrap_or_else`: a panic inside a closure would name
    // the closure's line, not the caller's.
    let Some(handle) = context::with_current(|h| h.driver().clone()) else {
        panic!(
            "there is no reactor running, must be called from the context of a Tokio 1.x \
             runtime: there is no weft runtime on this thread, and weft I/O resources need one: create \
             sockets inside Runtime::block_on or a spawned task, or call Runtime::enter first"
        )
    };
    if handle.io().is_none() {
        panic!(
            "A Tokio 1.x context was found, but IO is disabled. Call `enable_io` on the runtime \
             builder to enable IO. This weft runtime was built without the I/O driver: add .enable_io() (or \
             .enable_all()) to its Builder to use sockets and AsyncFd"
        );
    }
    handle
}

/// Whether `fd` is a datagram socket or a socket without a peer (a
/// listener): such an `AsyncFd` waits on epoll on the io_uring driver
/// too. A poll request in flight on a ring holds its socket, and a killed
/// process's rings are torn down by the kernel only after it is gone, so
/// its port stayed bound for milliseconds and a supervisor restarting it
/// at once got `AddrInUse` (the same reason listeners and datagram
/// sockets are readiness-based: BENCHMARKS.md, "A connection per
/// request"). A connected datagram socket holds its local port just as
/// an unconnected one does. One `getsockopt(2)` per registration, and a
/// `getpeername(2)` for a stream socket. (A stream still connecting has
/// no peer yet and waits on epoll, as on the epoll driver.)
fn waits_on_epoll(fd: RawFd) -> bool {
    let mut kind: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `kind` and `len` are valid out-pointers, `len` holding
    // `kind`'s size; a descriptor that is not a socket only makes the
    // call fail.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut kind as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return false; // not a socket: a pipe, an eventfd, a terminal...
    }
    if kind == libc::SOCK_DGRAM {
        return true;
    }
    // SAFETY: `sockaddr_storage` is plain integers, for which all zeros is
    // a valid value.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `addr` and `len` are valid out-pointers, `len` holding
    // `addr`'s size; a socket that is not connected only makes the call
    // fail.
    let r = unsafe {
        libc::getpeername(
            fd,
            (&mut addr as *mut libc::sockaddr_storage).cast(),
            &mut len,
        )
    };
    r != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOTCONN)
}

impl Registration {
    /// Register `source` with the current runtime's driver.
    ///
    /// # Panics
    /// Outside a runtime, or on a runtime without the I/O driver.
    #[track_caller]
    pub(crate) fn new(
        source: &mut impl mio::event::Source,
        interest: Interest,
    ) -> io::Result<Registration> {
        Registration::new_with(current_driver(), source, interest)
    }

    pub(crate) fn new_with(
        driver: driver::Handle,
        source: &mut impl mio::event::Source,
        interest: Interest,
    ) -> io::Result<Registration> {
        let io_handle = driver.io().expect("checked by current_driver");
        let (key, io) = io_handle.register(source, interest)?;
        Ok(Registration {
            driver,
            key,
            io,
            ring_poll: None,
            quiet_fd: None,
            lazy: None,
        })
    }

    /// A ring-backed stream's registration: a slot, and `fd` out of the
    /// poller until a readiness operation asks for some interest
    /// (lazy_interest.rs).
    pub(crate) fn new_unpolled(driver: driver::Handle, fd: RawFd) -> io::Result<Registration> {
        let slot = driver
            .io()
            .expect("checked by current_driver")
            .register_unpolled()?;
        Ok(Registration::bare(driver, slot, fd, Some(Box::default())))
    }

    /// A registration of the bare descriptor `fd` (not a mio source) in
    /// `slot`.
    fn bare(
        driver: driver::Handle,
        (key, io): (super::Key, Arc<ScheduledIo>),
        fd: RawFd,
        lazy: Option<Box<LazyInterest>>,
    ) -> Registration {
        Registration {
            driver,
            key,
            io,
            ring_poll: None,
            quiet_fd: Some(fd),
            lazy,
        }
    }

    /// Register the descriptor `fd` for `interest` with the current
    /// runtime's poller (epoll), on either driver.
    ///
    /// # Panics
    /// Outside a runtime, or on a runtime without the I/O driver.
    #[track_caller]
    pub(crate) fn new_fd(fd: RawFd, interest: Interest) -> io::Result<Registration> {
        Registration::new_with(current_driver(), &mut mio::unix::SourceFd(&fd), interest)
    }

    /// Register the descriptor `fd` for `interest` with the current
    /// runtime's driver: through poll requests on its io_uring rings if it
    /// has them (the module doc), through epoll otherwise.
    ///
    /// # Panics
    /// Outside a runtime, or on a runtime without the I/O driver.
    #[track_caller]
    pub(crate) fn new_fd_on_rings(fd: RawFd, interest: Interest) -> io::Result<Registration> {
        let driver = current_driver();
        let on_rings = driver.io().is_some_and(|io| io.rings().is_some());
        if !on_rings || waits_on_epoll(fd) {
            return Registration::new_with(driver, &mut mio::unix::SourceFd(&fd), interest);
        }
        // Still registered with epoll, quietly: the registration keeps
        // epoll's checks (a regular file is refused with `EPERM`, a
        // descriptor registered twice with `EEXIST`), as on the epoll
        // driver. Priority readiness is epoll's (uring/poll.rs says why).
        let mut registration = if interest.is_priority() {
            Registration::new_with(
                driver.clone(),
                &mut mio::unix::SourceFd(&fd),
                Interest::PRIORITY,
            )?
        } else {
            Registration::new_quiet(driver.clone(), fd)?
        };
        let rings = DriverRings {
            driver,
            key: registration.key,
        };
        registration.ring_poll = Some(UringPoll::new(rings, fd, interest, registration.io.clone()));
        Ok(registration)
    }

    /// Register `fd` with `driver`'s poller for no readiness (a resource
    /// whose readiness comes from the rings: `Handle::register_quiet`).
    pub(crate) fn new_quiet(driver: driver::Handle, fd: RawFd) -> io::Result<Registration> {
        let slot = driver
            .io()
            .expect("checked by current_driver")
            .register_quiet(fd)?;
        Ok(Registration::bare(driver, slot, fd, None))
    }

    /// The I/O driver's shared side.
    pub(crate) fn io_handle(&self) -> &super::Handle {
        self.driver
            .io()
            .expect("a registration exists only with an I/O driver")
    }

    /// The driver's io_uring rings, if it has them.
    pub(crate) fn rings(&self) -> Option<&super::uring::Rings> {
        self.io_handle().rings()
    }

    /// Stop events for `source` (call before closing it). Poll requests
    /// on the rings are cancelled first.
    pub(crate) fn deregister(&self, source: &mut impl mio::event::Source) -> io::Result<()> {
        if let Some(polls) = &self.ring_poll {
            polls.abandon();
        }
        let io = self
            .driver
            .io()
            .expect("a registration exists only with an I/O driver");
        if self.lazy.as_ref().is_some_and(|lazy| !lazy.is_polled()) {
            io.forget(self.key);
            return Ok(());
        }
        match self.quiet_fd {
            Some(fd) => io.deregister(&mut mio::unix::SourceFd(&fd), self.key),
            None => io.deregister(source, self.key),
        }
    }

    /// Free the registration without taking the descriptor out of the
    /// poller (`AsyncFd::into_inner_stale`: it no longer names the
    /// registered file). Poll requests on the rings are cancelled.
    pub(crate) fn forget(&self) {
        if let Some(polls) = &self.ring_poll {
            polls.abandon();
        }
        self.io_handle().forget(self.key);
    }

    /// Wait until the resource is ready in `direction`, spending budget.
    pub(crate) fn poll_ready(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<io::Result<ReadyEvent>> {
        self.poll_direction(cx, direction, false)
    }

    /// [`poll_ready`](Self::poll_ready) that an error alone also ends
    /// (`ScheduledIo::poll_direction` with `on_error`).
    pub(crate) fn poll_ready_or_error(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<io::Result<ReadyEvent>> {
        self.poll_direction(cx, direction, true)
    }

    fn poll_direction(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        on_error: bool,
    ) -> Poll<io::Result<ReadyEvent>> {
        let restore = ready!(coop::poll_proceed(cx));
        let ev = match self.io.poll_direction(cx, direction, on_error) {
            Poll::Ready(ev) => ev,
            Poll::Pending => {
                let interest = match direction {
                    Direction::Read => Interest::READABLE,
                    Direction::Write => Interest::WRITABLE,
                };
                self.arm(interest)?;
                return Poll::Pending;
            }
        };
        if ev.is_shutdown {
            return Poll::Ready(Err(shutdown_error()));
        }
        restore.made_progress();
        Poll::Ready(Ok(ev))
    }

    /// [`poll_ready`](Self::poll_ready) that also ends, as readable, when
    /// `readable_now` says so once the wait is registered (as
    /// [`readiness_or`](Self::readiness_or)).
    pub(crate) fn poll_ready_or(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        readable_now: impl FnOnce() -> bool,
    ) -> Poll<io::Result<ReadyEvent>> {
        match self.poll_ready(cx, direction) {
            Poll::Pending if readable_now() => Poll::Ready(Ok(self.readable_event())),
            polled => polled,
        }
    }

    /// The readiness now, readable: what a wait that `readable_now` ended
    /// reports (its tick clears nothing newer).
    fn readable_event(&self) -> ReadyEvent {
        let mut ev = self.io.ready_now(Interest::READABLE);
        ev.ready |= Ready::READABLE;
        ev
    }

    pub(crate) fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<ReadyEvent>> {
        self.poll_ready(cx, Direction::Read)
    }

    pub(crate) fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<ReadyEvent>> {
        self.poll_ready(cx, Direction::Write)
    }

    /// A wait for `interest` found no readiness (its waker is stored):
    /// make sure it will be reported: a ring-backed stream asks the poller
    /// for it, if it has not yet (lazy_interest.rs); an `AsyncFd` on the
    /// rings arms poll requests; any other registration has its interest.
    fn arm(&self, interest: Interest) -> io::Result<()> {
        self.want(interest)?;
        match &self.ring_poll {
            Some(polls) => polls.arm(interest),
            None => Ok(()),
        }
    }

    /// A ring-backed stream: have the poller report `interest` (once
    /// asked, one load). Every other registration has its interest.
    fn want(&self, interest: Interest) -> io::Result<()> {
        let (Some(lazy), Some(fd)) = (&self.lazy, self.quiet_fd) else {
            return Ok(());
        };
        if let Some(added) = lazy.want(self.io_handle(), self.key, fd, interest)? {
            self.set_ready_now(fd, added);
        }
        Ok(())
    }

    /// Set the readiness `poll(2)` finds now for `interest` (the poller's
    /// report of it comes on its next turn: lazy_interest.rs).
    fn set_ready_now(&self, fd: RawFd, interest: Interest) {
        let mut events = libc::POLLRDHUP;
        if interest.is_readable() {
            events |= libc::POLLIN;
        }
        if interest.is_writable() {
            events |= libc::POLLOUT;
        }
        if interest.is_priority() {
            events |= libc::POLLPRI;
        }
        let mut pollfd = libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        // SAFETY: one valid `pollfd` for the call, which does not wait
        // (timeout 0); a descriptor that is gone only shows as `POLLNVAL`.
        if unsafe { libc::poll(&mut pollfd, 1, 0) } != 1 {
            return;
        }
        let ready = super::uring::ready_from_poll(pollfd.revents as u16 as u32);
        if !ready.is_empty() {
            let mut wakers = Vec::new();
            self.io.set_readiness(ready, &mut wakers);
            wakers.into_iter().for_each(Waker::wake);
        }
    }

    /// Take `ready` as the resource's readiness before any event says so
    /// (an accepted stream: see `PollEvented::new_accepted_stream`). The
    /// first operation that would block clears it, as a stale edge.
    pub(crate) fn assume_ready(&self, ready: Ready) {
        let mut wakers = Vec::new();
        self.io.set_readiness(ready, &mut wakers);
        wakers.into_iter().for_each(Waker::wake);
    }

    /// The readiness known now for `interest`, without waiting.
    pub(crate) fn ready_now(&self, interest: Interest) -> ReadyEvent {
        self.io.ready_now(interest)
    }

    /// Forget readiness that turned out stale (the operation would block).
    pub(crate) fn clear_readiness(&self, event: ReadyEvent) {
        self.io.clear_readiness(event);
    }

    /// Run `op` when ready in `direction`; on `WouldBlock`, clear the
    /// readiness it consumed and wait again.
    pub(crate) fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        op: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.poll_io_or(cx, direction, || false, op)
    }

    /// [`poll_io`](Self::poll_io) over
    /// [`poll_ready_or`](Self::poll_ready_or).
    pub(crate) fn poll_io_or<R>(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        mut readable_now: impl FnMut() -> bool,
        mut op: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        loop {
            let ev = ready!(self.poll_ready_or(cx, direction, &mut readable_now))?;
            match op() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.clear_readiness(ev),
                result => return Poll::Ready(result),
            }
        }
    }

    /// Run `op` once if the resource looks ready for `interest`; `WouldBlock`
    /// otherwise (and clears the readiness `op` found stale). A runtime
    /// that shut down leaves the readiness as it was, and this looks only
    /// at the readiness, as Tokio's `try_io` does: the next wait reports
    /// the shutdown.
    pub(crate) fn try_io<R>(
        &self,
        interest: Interest,
        op: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        // Readiness comes later, for the next try or wait.
        self.want(interest)?;
        let ev = self.io.ready_now(interest);
        if ev.ready.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let result = op();
        if matches!(&result, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
            self.clear_readiness(ev);
        }
        result
    }

    /// Wait until ready for any of `interest` (any number of tasks may wait
    /// at once). Cancel-safe: a dropped wait leaves no waker behind.
    ///
    /// Spends no coop budget, as in Tokio: it is a readiness check, and a
    /// `readable().await` / `try_read` loop must see a ready socket as ready
    /// however many times it asks in one poll. The operation that follows
    /// spends it (`async_io` below; the `poll_*` paths).
    pub(crate) async fn readiness(&self, interest: Interest) -> io::Result<ReadyEvent> {
        self.readiness_or(interest, || false).await
    }

    /// [`readiness`](Self::readiness) that also ends, as readable, when
    /// `readable_now` says so after the wait registered and found nothing
    /// (bytes an io_uring receive took, which the poller never reports:
    /// `PollEvented::ring_took_bytes`).
    pub(crate) async fn readiness_or(
        &self,
        interest: Interest,
        mut readable_now: impl FnMut() -> bool,
    ) -> io::Result<ReadyEvent> {
        struct Waiter<'a> {
            io: &'a ScheduledIo,
            key: Option<usize>,
        }
        impl Drop for Waiter<'_> {
            fn drop(&mut self) {
                self.io.drop_waiter(&mut self.key);
            }
        }
        let mut waiter = Waiter {
            io: &self.io,
            key: None,
        };
        poll_fn(|cx| {
            let ev = match waiter.io.poll_interest(cx, interest, &mut waiter.key) {
                Poll::Ready(ev) => ev,
                Poll::Pending => {
                    self.arm(interest)?;
                    if !readable_now() {
                        return Poll::Pending;
                    }
                    self.readable_event()
                }
            };
            if ev.is_shutdown {
                return Poll::Ready(Err(shutdown_error()));
            }
            Poll::Ready(Ok(ev))
        })
        .await
    }

    /// `readiness`, then `op`; loops on `WouldBlock`.
    pub(crate) async fn async_io<R>(
        &self,
        interest: Interest,
        op: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        self.async_io_or(interest, || false, op).await
    }

    /// [`async_io`](Self::async_io) over
    /// [`readiness_or`](Self::readiness_or).
    pub(crate) async fn async_io_or<R>(
        &self,
        interest: Interest,
        mut readable_now: impl FnMut() -> bool,
        mut op: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        loop {
            let ev = self.readiness_or(interest, &mut readable_now).await?;
            // The operation itself spends a unit (refunded if it would
            // block), so a loop of always-ready operations still yields.
            let restore = poll_fn(coop::poll_proceed).await;
            match op() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.clear_readiness(ev),
                result => {
                    restore.made_progress();
                    return result;
                }
            }
        }
    }

    /// Whether a task waits for read readiness
    /// (`ScheduledIo::has_read_waiters`). On a ring-backed stream only a
    /// wait that asked the poller for reads can (every read wait asks), so
    /// until one did this is one load, without the waiters' lock.
    pub(crate) fn has_read_waiters(&self) -> bool {
        self.lazy.as_ref().is_none_or(|lazy| lazy.has_reads()) && self.io.has_read_waiters()
    }
}
