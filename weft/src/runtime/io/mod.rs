//! The I/O driver: mio's poller, and the table of registered resources.
//!
//! Owns: the `mio::Poll` and its event buffers ([`Driver`], held by
//! whichever thread parks in it), and the shared side ([`Handle`]): the registry, the
//! waker that interrupts a blocked poll, and the slab that maps an event's
//! token to its resource's [`ScheduledIo`].
//!
//! Invariants:
//! - A resource is registered once, when it is created, and deregistered
//!   when it is dropped (edge-triggered, so no re-arming per wait).
//! - A token is `index | generation << 32` of the resource's slab slot. An
//!   event for a slot that was freed (and maybe reused) in the meantime is
//!   dropped by the generation check, so a stale event never marks a new
//!   resource ready.
//! - Wakers run after the slab lock is released. Lock order: slab, then a
//!   resource's waiters (registration takes only the slab lock, waiting
//!   only the waiters lock).
//! - One turn takes at most `max_io_events_per_tick` events from the kernel
//!   (the buffer's capacity is `epoll_wait`'s `maxevents`), and a turn that
//!   does not wait (a busy worker's poll) at most
//!   `max_io_events_per_busy_tick`. What is left stays ready in the kernel
//!   for the next turn: edge-triggered readiness is reported once, whenever
//!   it is fetched.
//! - With the io_uring driver (`uring/`), each ring's descriptor is one more
//!   source in the poller; an event on it means "reap that ring" (a worker
//!   ring's registration is one-shot, armed again after the reap while its
//!   owner is away: `uring/watch.rs`). The one ring left out (a one-worker
//!   runtime's, `Rings::unwatched`) is reaped by every turn that polls
//!   epoll.

mod lazy_interest;
#[cfg(all(test, loom))]
mod loom_scheduled_io;
pub(crate) mod ready;
pub(crate) mod registration;
pub(crate) mod scheduled_io;
pub(crate) mod uring;

use self::ready::{Interest, Ready};
use self::scheduled_io::ScheduledIo;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The token of the driver's own waker.
const WAKE_TOKEN: mio::Token = mio::Token(usize::MAX);

/// The part only the parking thread touches.
pub(crate) struct Driver {
    poll: mio::Poll,
    events: mio::Events,
    /// The smaller buffer for turns that do not wait, when
    /// `max_io_events_per_busy_tick` is below `max_io_events_per_tick`.
    busy_events: Option<mio::Events>,
    /// Wakers of the resources with a pending event, reused across turns.
    wakers: Vec<std::task::Waker>,
    /// Rings whose descriptor reported ready this turn.
    ready_rings: Vec<usize>,
}

/// The part every thread shares.
pub(crate) struct Handle {
    registry: mio::Registry,
    waker: mio::Waker,
    slab: Mutex<Slab>,
    is_shutdown: AtomicBool,
    registered: AtomicU64,
    deregistered: AtomicU64,
    /// The io_uring rings (`None`: the epoll driver).
    rings: Option<uring::Rings>,
}

#[derive(Default)]
struct Slab {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

struct Slot {
    generation: u32,
    io: Option<Arc<ScheduledIo>>,
}

/// Where a resource lives in the slab (its mio token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    index: u32,
    generation: u32,
}

impl Key {
    fn token(self) -> mio::Token {
        mio::Token(self.index as usize | (self.generation as usize) << 32)
    }

    fn from_token(token: mio::Token) -> Key {
        Key {
            index: token.0 as u32,
            generation: (token.0 >> 32) as u32,
        }
    }
}

impl Driver {
    /// A driver taking at most `max_events` events a turn, and at most
    /// `max_busy_events` in a turn that does not wait; `rings`: the io_uring
    /// rings to poll alongside (see `uring/`).
    pub(crate) fn new(
        max_events: usize,
        max_busy_events: usize,
        rings: Option<uring::Rings>,
    ) -> io::Result<(Driver, Handle)> {
        let poll = mio::Poll::new()?;
        let registry = poll.registry().try_clone()?;
        let waker = mio::Waker::new(&registry, WAKE_TOKEN)?;
        let mut rings = rings;
        if let Some(rings) = &mut rings {
            use std::os::fd::AsRawFd;
            rings.register(registry.as_raw_fd(), |fd, token| {
                registry.register(
                    &mut mio::unix::SourceFd(&fd),
                    mio::Token(token),
                    mio::Interest::READABLE,
                )
            })?;
        }
        let driver = Driver {
            poll,
            events: mio::Events::with_capacity(max_events),
            busy_events: (max_busy_events < max_events)
                .then(|| mio::Events::with_capacity(max_busy_events)),
            wakers: Vec::with_capacity(64),
            ready_rings: Vec::new(),
        };
        let handle = Handle {
            registry,
            waker,
            slab: Mutex::new(Slab::default()),
            is_shutdown: AtomicBool::new(false),
            registered: AtomicU64::new(0),
            deregistered: AtomicU64::new(0),
            rings,
        };
        Ok((driver, handle))
    }

    /// Wait up to `timeout` (forever if `None`) for events and dispatch
    /// them. Returns early when [`Handle::unpark`] is called. Returns
    /// whether the turn woke any task.
    pub(crate) fn turn(&mut self, handle: &Handle, mut timeout: Option<Duration>) -> bool {
        // The ring this thread owns, if any.
        let mut own_ring = None;
        if let Some(rings) = &handle.rings {
            let (index, owned) = handle.current_ring(rings);
            own_ring = owned.then_some(index);
            // A ring holding nothing has nothing to wake its owner for:
            // wait in epoll alone (uring/mod.rs).
            if owned && timeout != Some(Duration::ZERO) && !rings.get(index).is_empty() {
                // Wait in this worker's own ring (uring/ring/mod.rs, `park`);
                // look at epoll, without waiting, only if it fired.
                use std::os::fd::AsRawFd;
                let fired = rings
                    .get(index)
                    .park(self.poll.as_raw_fd(), timeout, &mut self.wakers);
                if !fired {
                    return self.wake_collected();
                }
                timeout = Some(Duration::ZERO);
            }
        }
        let events = match &mut self.busy_events {
            Some(busy) if timeout.is_some_and(|t| t.is_zero()) => busy,
            _ => &mut self.events,
        };
        match self.poll.poll(events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                return self.wake_collected();
            }
            Err(e) => panic!("the I/O driver's poll failed unexpectedly: {e}"),
        }
        if let Some(rings) = &handle.rings {
            if let Some(index) = rings.unwatched() {
                // An empty ring has nothing to reap; only its owner may
                // trust the flag (ring/mod.rs, `is_empty`). The owner's park
                // comes here when its ring is empty.
                if own_ring != Some(index) || !rings.get(index).is_empty() {
                    rings.get(index).reap(&mut self.wakers);
                }
            }
        }
        if events.is_empty() {
            return self.wake_collected();
        }
        // Readiness is recorded under the slab lock (no reference count per
        // event); the wakers are collected and called after it is released.
        {
            let slab = handle.lock();
            for event in events.iter() {
                if event.token() == WAKE_TOKEN {
                    continue;
                }
                if let Some(ring) = handle.ring_of_token(event.token()) {
                    self.ready_rings.push(ring);
                    continue;
                }
                let key = Key::from_token(event.token());
                if let Some(io) = slab.get(key) {
                    io.set_readiness(Ready::from_mio(event), &mut self.wakers);
                }
            }
        }
        if let Some(rings) = &handle.rings {
            for index in self.ready_rings.drain(..) {
                rings.reap_fired(index, &mut self.wakers);
            }
        }
        self.wake_collected()
    }
}

impl Driver {
    /// Call the wakers a turn collected (after every lock is released).
    /// Returns whether there were any.
    fn wake_collected(&mut self) -> bool {
        let any = !self.wakers.is_empty();
        for waker in self.wakers.drain(..) {
            waker.wake();
        }
        any
    }
}

impl Handle {
    fn lock(&self) -> MutexGuard<'_, Slab> {
        self.slab.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The io_uring rings, if this driver uses them.
    pub(crate) fn rings(&self) -> Option<&uring::Rings> {
        self.rings.as_ref()
    }

    fn ring_of_token(&self, token: mio::Token) -> Option<usize> {
        self.rings.as_ref()?.ring_of_token(token.0)
    }

    /// The ring a task on this thread starts operations on, and whether
    /// this thread owns it (is that ring's worker, so its submissions may
    /// wait for the worker's flush).
    pub(crate) fn current_ring(&self, rings: &uring::Rings) -> (usize, bool) {
        let worker = crate::runtime::context::with_scheduler(|cx| {
            let cx = cx?;
            let same = cx.driver().io().is_some_and(|io| std::ptr::eq(io, self));
            if same {
                cx.worker_index()
            } else {
                None
            }
        });
        rings.for_worker(worker)
    }

    /// Whether the runtime shut down (every wait fails from then on).
    pub(crate) fn is_shutdown(&self) -> bool {
        self.is_shutdown.load(Ordering::Acquire)
    }

    /// Interrupt a thread blocked in [`Driver::turn`].
    pub(crate) fn unpark(&self) {
        // Failing to write to the eventfd only happens if it is already
        // full, in which case the poller is already going to wake.
        let _ = self.waker.wake();
    }

    /// Register `source` for `interest`; the returned state receives its
    /// events until [`deregister`](Self::deregister).
    pub(crate) fn register(
        &self,
        source: &mut impl mio::event::Source,
        interest: Interest,
    ) -> io::Result<(Key, Arc<ScheduledIo>)> {
        self.new_slot(|key| {
            self.registry
                .register(source, key.token(), interest.to_mio())
        })
    }

    /// A slot for a new resource, which `add` puts in the poller (the slot
    /// is freed again if it fails).
    fn new_slot(
        &self,
        add: impl FnOnce(Key) -> io::Result<()>,
    ) -> io::Result<(Key, Arc<ScheduledIo>)> {
        if self.is_shutdown.load(Ordering::Acquire) {
            return Err(shutdown_error());
        }
        let io = Arc::new(ScheduledIo::new());
        let key = self.lock().insert(io.clone());
        if let Err(e) = add(key) {
            let _ = self.lock().remove(key);
            return Err(e);
        }
        self.registered.fetch_add(1, Ordering::Relaxed);
        Ok((key, io))
    }

    /// A slot for a resource not (yet) in the poller: a ring-backed
    /// stream, which [`add_fd`](Self::add_fd)s itself when a readiness
    /// operation first needs it (lazy_interest.rs).
    pub(crate) fn register_unpolled(&self) -> io::Result<(Key, Arc<ScheduledIo>)> {
        self.new_slot(|_| Ok(()))
    }

    /// Put `fd`, whose slot is `key`, in the poller for `interest`.
    pub(crate) fn add_fd(
        &self,
        fd: std::os::fd::RawFd,
        key: Key,
        interest: Interest,
    ) -> io::Result<()> {
        self.registry.register(
            &mut mio::unix::SourceFd(&fd),
            key.token(),
            interest.to_mio(),
        )
    }

    /// Register the descriptor `fd` for nothing but what epoll always
    /// reports (errors and hang-ups): a resource whose readiness comes
    /// from elsewhere (the rings), kept in the poller for epoll's checks and
    /// for interest added later ([`reregister_fd`](Self::reregister_fd)).
    ///
    /// Not mio's `PRIORITY` (`EPOLLPRI`), which looked quiet: a socket's
    /// data-arrival callback wakes its waiters with `EPOLLPRI` in the key
    /// (`sock_def_readable`), so every arrival woke the driver's holder
    /// for an `epoll_wait` that found nothing to report (one per round trip
    /// of a UDP echo, BENCHMARKS.md).
    pub(crate) fn register_quiet(
        &self,
        fd: std::os::fd::RawFd,
    ) -> io::Result<(Key, Arc<ScheduledIo>)> {
        use std::os::fd::AsRawFd;
        self.new_slot(|key| {
            let mut event = libc::epoll_event {
                events: libc::EPOLLET as u32,
                u64: key.token().0 as u64,
            };
            // SAFETY: `event` is a valid epoll_event for the call, and the
            // epoll descriptor is the registry's own. Later changes go
            // through mio as a bare descriptor (`SourceFd`), which mio
            // tracks nothing for; the registration deregisters it the same
            // way (a mio source would refuse, in debug builds, one mio did
            // not register).
            let added = unsafe {
                libc::epoll_ctl(
                    self.registry.as_raw_fd(),
                    libc::EPOLL_CTL_ADD,
                    fd,
                    &mut event,
                )
            };
            if added < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })
    }

    /// Change what the poller reports for the descriptor registered under
    /// `key` (readiness already there is reported at once: epoll checks it
    /// when the interest changes, so no edge is lost).
    pub(crate) fn reregister_fd(
        &self,
        fd: std::os::fd::RawFd,
        key: Key,
        interest: Interest,
    ) -> io::Result<()> {
        self.registry.reregister(
            &mut mio::unix::SourceFd(&fd),
            key.token(),
            interest.to_mio(),
        )
    }

    /// Stop delivering events for `source` and free its slot.
    pub(crate) fn deregister(
        &self,
        source: &mut impl mio::event::Source,
        key: Key,
    ) -> io::Result<()> {
        let result = self.registry.deregister(source);
        self.forget(key);
        result
    }

    /// Free `key`'s slot, leaving the poller alone: events still reported
    /// under its token are dropped by the generation check.
    pub(crate) fn forget(&self, key: Key) {
        if self.lock().remove(key) {
            self.deregistered.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Resources registered so far (for metrics).
    pub(crate) fn registered_count(&self) -> u64 {
        self.registered.load(Ordering::Relaxed)
    }

    /// Resources deregistered so far (for metrics).
    pub(crate) fn deregistered_count(&self) -> u64 {
        self.deregistered.load(Ordering::Relaxed)
    }

    /// The runtime is shutting down: every pending and future wait on a
    /// resource ends with an error instead of hanging.
    pub(crate) fn shutdown(&self) {
        self.is_shutdown.store(true, Ordering::Release);
        let all: Vec<Arc<ScheduledIo>> = self
            .lock()
            .slots
            .iter()
            .filter_map(|s| s.io.clone())
            .collect();
        for io in all {
            io.shutdown();
        }
        if let Some(rings) = &self.rings {
            rings.shutdown();
        }
    }
}

impl Slab {
    fn insert(&mut self, io: Arc<ScheduledIo>) -> Key {
        match self.free.pop() {
            Some(index) => {
                let slot = &mut self.slots[index as usize];
                slot.io = Some(io);
                Key {
                    index,
                    generation: slot.generation,
                }
            }
            None => {
                let index = u32::try_from(self.slots.len())
                    .expect("more than 2^32 I/O resources registered at once");
                self.slots.push(Slot {
                    generation: 0,
                    io: Some(io),
                });
                Key {
                    index,
                    generation: 0,
                }
            }
        }
    }

    fn get(&self, key: Key) -> Option<&Arc<ScheduledIo>> {
        let slot = self.slots.get(key.index as usize)?;
        if slot.generation != key.generation {
            return None;
        }
        slot.io.as_ref()
    }

    /// Free `key`'s slot; false if it was already free.
    fn remove(&mut self, key: Key) -> bool {
        let Some(slot) = self.slots.get_mut(key.index as usize) else {
            return false;
        };
        if slot.generation != key.generation || slot.io.is_none() {
            return false;
        }
        slot.io = None;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(key.index);
        true
    }
}

/// What an I/O resource's operations fail with once its runtime has shut
/// down (`runtime::is_rt_shutdown_err` recognises it by this text).
pub(crate) const SHUTDOWN_MESSAGE: &str =
    "the weft runtime that owns this I/O resource has shut down; create the resource on a \
     runtime that is still running";

pub(crate) fn shutdown_error() -> io::Error {
    io::Error::other(SHUTDOWN_MESSAGE)
}

/// Whether `err` is the error an I/O resource's operation fails with
/// because the runtime it was created on has shut down (not one from the
/// operating system, nor one a user built with another message).
///
/// ```
/// let rt1 = weft::runtime::Runtime::new().unwrap();
/// let listener = rt1.block_on(weft::net::TcpListener::bind("127.0.0.1:0")).unwrap();
/// drop(rt1);
/// let rt2 = weft::runtime::Runtime::new().unwrap();
/// let err = rt2.block_on(listener.accept()).unwrap_err();
/// assert!(weft::runtime::is_rt_shutdown_err(&err));
/// assert!(!weft::runtime::is_rt_shutdown_err(&std::io::Error::other("other")));
/// ```
pub fn is_rt_shutdown_err(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::Other
        && err
            .get_ref()
            .is_some_and(|inner| inner.source().is_none() && inner.to_string() == SHUTDOWN_MESSAGE)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn stale_token_does_not_reach_a_reused_slot() {
        let mut slab = Slab::default();
        let a = slab.insert(Arc::new(ScheduledIo::new()));
        assert!(slab.remove(a));
        assert!(!slab.remove(a));
        let b = slab.insert(Arc::new(ScheduledIo::new()));
        assert_eq!(a.index, b.index);
        assert!(slab.get(a).is_none());
        assert!(slab.get(b).is_some());
        assert_eq!(Key::from_token(b.token()), b);
    }
}
