//! The drivers a runtime parks in: I/O (mio) and time (the timer wheel).
//!
//! Owns: [`Driver`], the thing a parked thread blocks in (mio's poller when
//! I/O is on, otherwise a condvar with a timeout), and [`Handle`], the
//! shared side resources and timers talk to.
//!
//! One park = compute the timeout from the next timer, block in the poller
//! (or the condvar), dispatch I/O events, then fire every expired timer.
//! [`Handle::unpark`] interrupts a blocked park from any thread: mio's
//! waker when I/O is on, the condvar otherwise.
//!
//! With a paused clock (`start_paused`, `time::pause`), a park that would
//! sleep until the next timer instead moves the clock to that timer and
//! returns at once: nothing else can happen while every task waits on
//! time, so the test runs without real sleeping.

use super::io;
use crate::loom::{lock, AtomicBool, Condvar, Mutex, Ordering};
use crate::time::driver as time;
use std::io as stdio;
use std::sync::Arc;
use std::time::Duration;

/// What the parking thread owns.
pub(crate) struct Driver {
    io: Option<io::Driver>,
}

/// The shared side, cloned into every resource and timer.
#[derive(Clone)]
pub(crate) struct Handle {
    inner: Arc<Inner>,
}

struct Inner {
    io: Option<io::Handle>,
    time: Option<time::Handle>,
    /// Used instead of the poller when I/O is off.
    thread: ThreadWait,
    /// Set by every `unpark`, cleared when a paused clock's auto-advance
    /// asks (`time::Handle::park_timeout`): an unpark since the last such
    /// decision means the runtime may have work it has not seen, so it looks
    /// again before time moves (a stale flag costs one extra look).
    woken: AtomicBool,
    /// The order of this runtime's background `File` writes
    /// (fs/write_order.rs), made at the first write.
    write_order: std::sync::OnceLock<crate::loom::Arc<crate::fs::write_order::WriteOrder>>,
}

/// Which drivers to build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DriverConfig {
    pub(crate) enable_io: bool,
    pub(crate) enable_time: bool,
    pub(crate) start_paused: bool,
    /// The I/O driver's event caps (see `runtime/io`).
    pub(crate) max_io_events: usize,
    pub(crate) max_io_events_busy: usize,
    /// The I/O driver asked for (`None`: the environment's choice, else
    /// `Auto`; see `runtime/io/uring`).
    pub(crate) io_driver: Option<io::uring::IoDriver>,
    /// Workers that get a ring of their own with io_uring.
    pub(crate) workers: usize,
}

impl Default for DriverConfig {
    /// No driver enabled; Tokio's default event caps.
    fn default() -> Self {
        DriverConfig {
            enable_io: false,
            enable_time: false,
            start_paused: false,
            max_io_events: 1024,
            max_io_events_busy: 1024,
            io_driver: None,
            workers: 1,
        }
    }
}

impl Driver {
    pub(crate) fn new(config: DriverConfig) -> stdio::Result<(Driver, Handle)> {
        let (io, io_handle) = if config.enable_io {
            let rings = match io::uring::choose(config.io_driver)? {
                io::uring::IoDriver::Uring => match io::uring::Rings::new(config.workers) {
                    Ok(rings) => Some(rings),
                    // The probe passed but the rings could not be made
                    // (memory, descriptors): only an explicit request fails.
                    Err(_) if config.io_driver != Some(io::uring::IoDriver::Uring) => None,
                    Err(e) => return Err(e),
                },
                _ => None,
            };
            let (d, h) = io::Driver::new(config.max_io_events, config.max_io_events_busy, rings)?;
            (Some(d), Some(h))
        } else {
            (None, None)
        };
        let time = config
            .enable_time
            .then(|| time::Handle::new(config.start_paused));
        let handle = Handle {
            inner: Arc::new(Inner {
                io: io_handle,
                time,
                thread: ThreadWait::default(),
                woken: AtomicBool::new(false),
                write_order: std::sync::OnceLock::new(),
            }),
        };
        Ok((Driver { io }, handle))
    }

    /// Block until an I/O event, the next timer, `timeout` (forever if
    /// `None`), or [`Handle::unpark`]; then dispatch what happened.
    pub(crate) fn park(&mut self, handle: &Handle, timeout: Option<Duration>) {
        let inner = &handle.inner;
        // A paused clock is about to jump to the next timer: first deliver
        // what the poller already holds, without waiting, and keep the
        // clock where it is if that woke a task (as Tokio's driver does).
        // Otherwise a datagram already sent would be seen only after the
        // jump, and a task would find time passed while it waited on I/O.
        if let (Some(time), Some(driver), Some(io)) = (&inner.time, &mut self.io, &inner.io) {
            if time.would_auto_advance(timeout) && driver.turn(io, Some(Duration::ZERO)) {
                time.process();
                return;
            }
        }
        let timeout = match &inner.time {
            Some(time) => time.park_timeout(timeout, || inner.woken.swap(false, Ordering::AcqRel)),
            None => timeout,
        };
        match (&mut self.io, &inner.io) {
            (Some(driver), Some(io)) => {
                driver.turn(io, timeout);
            }
            _ => inner.thread.wait(timeout),
        }
        if let Some(time) = &inner.time {
            time.process();
        }
    }
}

impl Handle {
    /// Interrupt a thread blocked in [`Driver::park`].
    pub(crate) fn unpark(&self) {
        // Before the wake-up itself, so a park that sees the wake-up (or
        // anything published before this call) also sees the flag.
        self.inner.woken.store(true, Ordering::Release);
        match &self.inner.io {
            Some(io) => io.unpark(),
            None => self.inner.thread.notify(),
        }
    }

    /// The order of this runtime's background `File` writes.
    pub(crate) fn write_order(&self) -> &crate::loom::Arc<crate::fs::write_order::WriteOrder> {
        self.inner
            .write_order
            .get_or_init(|| crate::loom::Arc::new(crate::fs::write_order::WriteOrder::new()))
    }

    pub(crate) fn io(&self) -> Option<&io::Handle> {
        self.inner.io.as_ref()
    }

    pub(crate) fn time(&self) -> Option<&time::Handle> {
        self.inner.time.as_ref()
    }

    /// After the tasks are gone: fail every I/O wait and fire every timer,
    /// so nothing outside the runtime waits on it forever.
    pub(crate) fn shutdown(&self) {
        if let Some(io) = &self.inner.io {
            io.shutdown();
        }
        if let Some(time) = &self.inner.time {
            time.shutdown();
        }
    }
}

/// A condvar wait with a timeout and a sticky notification (a `notify`
/// before `wait` makes the wait return at once). Built on `crate::loom`'s
/// types, so the parker's driver path can be loom-modelled with it
/// (`scheduler/loom_park.rs`).
struct ThreadWait {
    notified: Mutex<bool>,
    condvar: Condvar,
}

impl Default for ThreadWait {
    fn default() -> Self {
        ThreadWait {
            notified: Mutex::new(false),
            condvar: Condvar::new(),
        }
    }
}

impl ThreadWait {
    fn wait(&self, timeout: Option<Duration>) {
        let mut notified = lock(&self.notified);
        if !*notified {
            match timeout {
                Some(t) if t.is_zero() => {}
                Some(t) => {
                    notified = self
                        .condvar
                        .wait_timeout(notified, t)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                None => {
                    while !*notified {
                        notified = self
                            .condvar
                            .wait(notified)
                            .unwrap_or_else(|e| e.into_inner());
                    }
                }
            }
        }
        *notified = false;
    }

    fn notify(&self) {
        *lock(&self.notified) = true;
        self.condvar.notify_one();
    }
}
