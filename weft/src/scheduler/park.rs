//! Parking a scheduler thread until there is work.
//!
//! Owns: the sleep/wake handshake of one thread. `unpark` before `park`
//! makes the next `park` return at once (a token, like
//! `std::thread::park`), so a wake between "no work found" and "go to sleep"
//! is never lost. The parking thread may drop a token before it looks for
//! work ([`Parker::discard_token`]): every `unpark` publishes its work
//! before its token, so a look after the drop sees the work of any token
//! dropped.
//!
//! Drivers: all parkers of a runtime share one [`SharedDriver`]. A thread
//! that parks first tries to take the driver; if it gets it, it blocks in
//! the driver (the poller, with the next timer as its timeout) and `unpark`
//! interrupts it through the driver's own waker. Otherwise it sleeps on its
//! condvar. So one idle worker waits for I/O and timers while the others
//! sleep, and no thread ever waits for the driver lock. Whoever parks in
//! the driver sets `has_parker` while it holds it; the flag is a hint for
//! the long-poll monitor (nobody in the driver: wake a sleeper into it),
//! never a synchronisation.
//!
//! Why a wake cannot be lost on the driver path (loom-modelled in
//! `loom_park.rs` with the condvar driver, the one used without I/O; mio's
//! poller cannot run under loom): `unpark` swaps in NOTIFIED first, and only a thread that
//! saw PARKED_DRIVER calls the driver's unpark. The driver's wake-up is
//! sticky (an eventfd, or a flag under the condvar's mutex without I/O), so
//! if it lands before the parker blocks, the block returns at once. After
//! the driver returns, the parker swaps the state back to EMPTY whatever it
//! was: an unpark that came before that swap has nothing more to do (the
//! parker is awake and goes looking for work); one that comes after leaves
//! NOTIFIED for the next `park`. A stale driver wake-up only costs one
//! spurious return.
//!
//! An unpark from the parking thread itself, while it is inside the
//! driver, skips the driver's wake-up: the driver calls wakers only after
//! its blocking wait (it collects them during the poll and calls them at
//! the end, and fires timers after the poll), so such an unpark comes from
//! the dispatch of what woke the driver, and the park is about to return
//! anyway. The wake-up would have cost a `write(2)` to the eventfd and, at
//! the next park, a spurious return from the poll. (A `block_on` future
//! woken by I/O is the usual case: its waker unparks the thread that is
//! dispatching the I/O.) Other threads cannot see this thread's flag, so
//! nothing changes for them.

use crate::loom::{lock, Arc, AtomicBool, AtomicUsize, Condvar, Mutex, Ordering};
use crate::runtime::driver::{self, Driver};
use std::cell::Cell;
use std::time::Duration;

const EMPTY: usize = 0;
const PARKED_CONDVAR: usize = 1;
const PARKED_DRIVER: usize = 2;
const NOTIFIED: usize = 3;

#[cfg(not(loom))]
std::thread_local! {
    /// The parker whose `park_driver` this thread is inside (as an
    /// address: only compared, never dereferenced), or 0.
    static IN_DRIVER: Cell<usize> = const { Cell::new(0) };
}

// The same for loom's threads, which share one OS thread (loom's
// `thread_local!` takes no `const` block).
#[cfg(loom)]
loom::thread_local! {
    static IN_DRIVER: Cell<usize> = Cell::new(0);
}

/// Marks this thread as inside `inner`'s driver park until dropped (also
/// on a panic out of the driver).
struct InDriver;

impl InDriver {
    fn enter(inner: &Inner) -> InDriver {
        IN_DRIVER.with(|c| c.set(inner as *const Inner as usize));
        InDriver
    }
}

impl Drop for InDriver {
    fn drop(&mut self) {
        IN_DRIVER.with(|c| c.set(0));
    }
}

#[derive(Clone)]
pub(crate) struct Parker {
    inner: Arc<Inner>,
}

#[derive(Clone)]
pub(crate) struct Unparker {
    inner: Arc<Inner>,
}

struct Inner {
    state: AtomicUsize,
    mutex: Mutex<()>,
    condvar: Condvar,
    driver: Option<std::sync::Arc<SharedDriver>>,
    /// The io_uring ring this parker's worker owns (its index), which
    /// another thread must watch while the worker sleeps on the condvar
    /// (runtime/io/uring/watch.rs).
    ring: Option<usize>,
}

/// The driver of one runtime, taken by whichever parker gets it first.
pub(crate) struct SharedDriver {
    /// Only ever `try_lock`ed: no thread waits for the driver.
    driver: Mutex<Driver>,
    handle: driver::Handle,
    /// A parker is blocked in the driver (not a `poll_now`). Read only as a
    /// hint, by the long-poll monitor: a worker that left the driver to run
    /// a task that then blocks leaves the driver unmanned, with the other
    /// parkers asleep on their condvars; the monitor wakes one of them,
    /// which takes the driver (monitor.rs, "What the monitor moves").
    has_parker: AtomicBool,
}

impl SharedDriver {
    pub(crate) fn new(driver: Driver, handle: driver::Handle) -> std::sync::Arc<SharedDriver> {
        std::sync::Arc::new(SharedDriver {
            driver: Mutex::new(driver),
            handle,
            has_parker: AtomicBool::new(false),
        })
    }

    /// The driver's handle, to wake it directly as timers and I/O do.
    #[cfg(loom)]
    pub(crate) fn handle(&self) -> &driver::Handle {
        &self.handle
    }

    /// Whether a parker is blocked in the driver right now (a hint: the
    /// answer may be stale by the time the caller acts on it).
    pub(crate) fn has_parker(&self) -> bool {
        self.has_parker.load(Ordering::Relaxed)
    }

    /// Poll the driver without blocking, if no other thread holds it.
    ///
    /// A parker that finds the driver held here sleeps on its condvar, out
    /// of reach of I/O and timers, trusting that the holder parks in the
    /// driver itself later. A worker calling this does; a thread that never
    /// parks (the monitor's rescue thread) must wake the parkers once it
    /// stops polling, or nobody polls the driver again.
    pub(crate) fn poll_now(&self) {
        if let Ok(mut driver) = self.driver.try_lock() {
            driver.park(&self.handle, Some(Duration::ZERO));
        }
    }
}

impl Parker {
    #[cfg(loom)]
    pub(crate) fn new() -> Parker {
        Parker::with_driver(None)
    }

    pub(crate) fn with_driver(driver: Option<std::sync::Arc<SharedDriver>>) -> Parker {
        Parker::for_worker(driver, None)
    }

    /// The parker of the worker that owns ring `ring` (its index) on
    /// `driver`'s io_uring rings, if it has any.
    pub(crate) fn for_worker(
        driver: Option<std::sync::Arc<SharedDriver>>,
        ring: Option<usize>,
    ) -> Parker {
        Parker {
            inner: Arc::new(Inner {
                state: AtomicUsize::new(EMPTY),
                mutex: Mutex::new(()),
                condvar: Condvar::new(),
                driver,
                ring,
            }),
        }
    }

    pub(crate) fn unparker(&self) -> Unparker {
        Unparker {
            inner: self.inner.clone(),
        }
    }

    /// Block until unparked (returns at once if a token is pending).
    pub(crate) fn park(&self) -> Parked {
        self.inner.park()
    }

    /// Drop a pending token, if any (only the parking thread may call
    /// this: the state is then EMPTY or NOTIFIED). For a caller about to
    /// look for work before it parks: a token left by a wake that came
    /// while it ran would make the park return at once for nothing. The
    /// caller must look for work after this call, not before: an unpark
    /// whose token this drops published its work before the token
    /// (`loom_park.rs` models it).
    pub(crate) fn discard_token(&self) {
        let _ = self.inner.state.compare_exchange(
            NOTIFIED,
            EMPTY,
            Ordering::Acquire,
            Ordering::Acquire,
        );
    }
}

impl Unparker {
    pub(crate) fn unpark(&self) {
        self.inner.unpark();
    }
}

/// How a [`Parker::park`] ended.
#[must_use = "the caller may need to poll the drivers itself"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parked {
    /// It blocked in the driver, which dispatched what was ready.
    InDriver,
    /// It consumed a pending token or slept on the condvar: the drivers
    /// were not polled by this thread.
    Elsewhere,
}

/// The outcome of [`Inner::announce_park`].
#[derive(PartialEq, Eq)]
enum Announced {
    /// The state says we sleep: go and block.
    Parked,
    /// An unpark came first; its token is consumed: return at once.
    Notified,
}

impl Inner {
    fn park(&self) -> Parked {
        // Fast path: consume a pending token without locking.
        if self
            .state
            .compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Acquire)
            .is_ok()
        {
            return Parked::Elsewhere;
        }
        if let Some(shared) = &self.driver {
            if let Ok(mut driver) = shared.driver.try_lock() {
                shared.has_parker.store(true, Ordering::Relaxed);
                let parked = self.park_driver(&mut driver, &shared.handle);
                shared.has_parker.store(false, Ordering::Relaxed);
                return parked;
            }
        }
        // Away from the driver, and so from our ring: the driver's holder
        // takes its completions meanwhile (runtime/io/uring/watch.rs).
        let rings = self.owned_rings();
        if let Some((rings, index)) = rings {
            rings.owner_leaves(index);
        }
        self.park_condvar();
        if let Some((rings, index)) = rings {
            rings.owner_back(index);
        }
        Parked::Elsewhere
    }

    /// The io_uring rings and the index of the one this parker's worker
    /// owns, if it owns one.
    #[cfg(not(loom))]
    fn owned_rings(&self) -> Option<(&crate::runtime::io::uring::Rings, usize)> {
        let index = self.ring?;
        let rings = self.driver.as_ref()?.handle.io()?.rings()?;
        Some((rings, index))
    }

    /// Loom's drivers have no rings.
    #[cfg(loom)]
    fn owned_rings(&self) -> Option<(&crate::runtime::io::uring::Rings, usize)> {
        None
    }

    /// EMPTY → `parked`, or consume a token that arrived meanwhile.
    #[must_use]
    fn announce_park(&self, parked: usize) -> Announced {
        match self
            .state
            .compare_exchange(EMPTY, parked, Ordering::Acquire, Ordering::Acquire)
        {
            Ok(_) => Announced::Parked,
            Err(NOTIFIED) => {
                self.state.store(EMPTY, Ordering::Release);
                Announced::Notified
            }
            Err(actual) => panic!("inconsistent park state {actual}: parked twice"),
        }
    }

    fn park_driver(&self, driver: &mut Driver, handle: &driver::Handle) -> Parked {
        if self.announce_park(PARKED_DRIVER) == Announced::Notified {
            return Parked::Elsewhere;
        }
        {
            let _inside = InDriver::enter(self);
            driver.park(handle, None);
        }
        // Either an unpark (NOTIFIED) or an event/timer woke us: both mean
        // "go and look for work".
        match self.state.swap(EMPTY, Ordering::AcqRel) {
            NOTIFIED | PARKED_DRIVER => {}
            actual => panic!("inconsistent park state {actual} after a driver park"),
        }
        Parked::InDriver
    }

    fn park_condvar(&self) {
        let mut guard = lock(&self.mutex);
        if self.announce_park(PARKED_CONDVAR) == Announced::Notified {
            return;
        }
        loop {
            guard = self.condvar.wait(guard).unwrap_or_else(|e| e.into_inner());
            if self
                .state
                .compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Acquire)
                .is_ok()
            {
                return;
            }
            // Spurious wakeup: keep waiting.
        }
    }

    fn unpark(&self) {
        match self.state.swap(NOTIFIED, Ordering::AcqRel) {
            EMPTY | NOTIFIED => {}
            PARKED_DRIVER => {
                let from_own_dispatch =
                    IN_DRIVER.with(|c| c.get() == self as *const Inner as usize);
                if let (Some(shared), false) = (&self.driver, from_own_dispatch) {
                    shared.handle.unpark();
                }
            }
            PARKED_CONDVAR => {
                // Taking the lock orders us after the parker's wait started,
                // so the notification cannot slip in before it sleeps.
                drop(lock(&self.mutex));
                self.condvar.notify_one();
            }
            actual => panic!("inconsistent park state {actual}"),
        }
    }
}
