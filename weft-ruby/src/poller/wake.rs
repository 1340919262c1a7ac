//! How the loop is woken: by its registrations ([`Woken`], the fds their
//! wakers queue, and the loop's own waker while it is blocked) and from
//! other threads ([`Shared`]: the fibers `unblock`ed, and the eventfd
//! whose one `write(2)` ends a blocked wait). The invariants (who writes
//! the eventfd, when `blocked` is set, why wakers carry fd numbers) are
//! the poller's module doc's.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

/// The fds whose registrations were woken, and the loop's waker while it is
/// blocked. Touched by the driver's wakers, on the loop's thread.
#[derive(Default)]
pub(super) struct Woken {
    inner: Mutex<WokenInner>,
}

#[derive(Default)]
struct WokenInner {
    fds: Vec<RawFd>,
    blocked_on: Option<Waker>,
}

impl Woken {
    fn lock(&self) -> MutexGuard<'_, WokenInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, fd: RawFd) {
        let mut inner = self.lock();
        inner.fds.push(fd);
        if let Some(w) = inner.blocked_on.take() {
            drop(inner);
            w.wake();
        }
    }

    /// Ready when an fd was woken; else remembers `cx`'s waker.
    pub(super) fn poll_any(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut inner = self.lock();
        if !inner.fds.is_empty() {
            inner.blocked_on = None;
            return Poll::Ready(());
        }
        inner.blocked_on = Some(cx.waker().clone());
        Poll::Pending
    }

    pub(super) fn take(&self, into: &mut Vec<RawFd>) {
        into.append(&mut self.lock().fds);
    }
}

/// A registration's waker: queues its fd.
pub(super) struct FdWaker {
    pub(super) fd: RawFd,
    pub(super) woken: Arc<Woken>,
}

impl Wake for FdWaker {
    fn wake(self: Arc<Self>) {
        self.woken.push(self.fd);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.push(self.fd);
    }
}

/// The side other threads may touch.
pub struct Shared {
    unblocked: Mutex<Vec<crate::state::Obj>>,
    /// The loop is blocked in the driver (the poller's module invariants).
    pub(super) blocked: AtomicBool,
    /// The eventfd [`Shared::wake`] writes (module invariants), until
    /// [`Shared::close`].
    wake_fd: Mutex<Option<Arc<OwnedFd>>>,
}

/// Make the eventfd `fd` readable: one `write(2)`, async-signal-safe. It
/// fails only if the counter would overflow, when a wake is pending anyway.
pub(super) fn write_eventfd(fd: RawFd) {
    let one = 1u64.to_ne_bytes();
    // SAFETY: 8 bytes from `one`; callers pass an open eventfd.
    unsafe { libc::write(fd, one.as_ptr().cast(), 8) };
}

impl Shared {
    /// The cross-thread side of a poller whose eventfd is `wake_fd`.
    pub(super) fn new(wake_fd: Arc<OwnedFd>) -> Shared {
        Shared {
            unblocked: Mutex::new(Vec::new()),
            blocked: AtomicBool::new(false),
            wake_fd: Mutex::new(Some(wake_fd)),
        }
    }

    fn unblocked(&self) -> MutexGuard<'_, Vec<crate::state::Obj>> {
        self.unblocked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Is the loop blocked in the driver (without the GVL) right now?
    pub fn is_blocked(&self) -> bool {
        self.blocked.load(Ordering::SeqCst)
    }

    /// End a blocked wait (from any thread), or the next one if none is:
    /// one write to the eventfd (nothing, once closed).
    pub fn wake(&self) {
        let fd = self.wake_fd.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fd) = fd.as_ref() {
            write_eventfd(fd.as_raw_fd());
        }
    }

    /// The selector was closed: release the eventfd (the poller, dropped
    /// first, has deregistered it).
    pub fn close(&self) {
        self.wake_fd
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }

    /// `unblock` from any thread: queue `fiber` and wake the loop if it is
    /// blocked in the driver.
    pub fn unblock(&self, fiber: crate::state::Obj) {
        // `blocked` is read under the queue's lock: the loop stores it and
        // then takes this lock to look at the queue ([`Poller::wait`]), so
        // either it sees this fiber or this sees it blocked.
        let mut queue = self.unblocked();
        queue.push(fiber);
        let blocked = self.blocked.load(Ordering::SeqCst);
        drop(queue);
        if blocked {
            self.wake();
        }
    }

    /// Take the fibers unblocked since the last call.
    pub fn take_unblocked(&self, into: &mut Vec<crate::state::Obj>) {
        into.append(&mut self.unblocked());
    }

    pub fn has_unblocked(&self) -> bool {
        !self.unblocked().is_empty()
    }

    /// Every object held, for the GC mark function.
    pub fn each_object(&self, f: impl FnMut(crate::state::Obj)) {
        self.unblocked().iter().copied().for_each(f);
    }
}
