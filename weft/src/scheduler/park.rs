//! Parking a scheduler thread until there is work.
//!
//! Owns: the sleep/wake handshake of one thread. `unpark` before `park`
//! makes the next `park` return at once (a token, like
//! `std::thread::park`), so a wake between "no work found" and "go to sleep"
//! is never lost. This is the seam where the I/O and timer drivers plug in
//! later: one parked worker will block in the reactor instead of the condvar
//! (with the next timer as its timeout), and `unpark` will use the reactor's
//! waker for it.

use crate::loom::{lock, Arc, AtomicUsize, Condvar, Mutex, Ordering};

const EMPTY: usize = 0;
const PARKED: usize = 1;
const NOTIFIED: usize = 2;

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
}

impl Parker {
    pub(crate) fn new() -> Parker {
        Parker {
            inner: Arc::new(Inner {
                state: AtomicUsize::new(EMPTY),
                mutex: Mutex::new(()),
                condvar: Condvar::new(),
            }),
        }
    }

    pub(crate) fn unparker(&self) -> Unparker {
        Unparker {
            inner: self.inner.clone(),
        }
    }

    /// Block until unparked (returns at once if a token is pending).
    pub(crate) fn park(&self) {
        self.inner.park();
    }
}

impl Unparker {
    pub(crate) fn unpark(&self) {
        self.inner.unpark();
    }
}

impl Inner {
    fn park(&self) {
        // Fast path: consume a pending token without locking.
        if self
            .state
            .compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Acquire)
            .is_ok()
        {
            return;
        }
        let mut guard = lock(&self.mutex);
        match self
            .state
            .compare_exchange(EMPTY, PARKED, Ordering::Acquire, Ordering::Acquire)
        {
            Ok(_) => {}
            Err(NOTIFIED) => {
                self.state.store(EMPTY, Ordering::Release);
                return;
            }
            Err(actual) => panic!("inconsistent park state {actual}: parked twice"),
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
            PARKED => {
                // Taking the lock orders us after the parker's wait started,
                // so the notification cannot slip in before it sleeps.
                drop(lock(&self.mutex));
                self.condvar.notify_one();
            }
            actual => panic!("inconsistent park state {actual}"),
        }
    }
}
