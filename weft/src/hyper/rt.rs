//! `WeftExecutor` and `WeftTimer`: hyper's executor and timer traits on
//! weft's scheduler and timer wheel.

use crate::runtime::Handle;
use crate::time::{self, Instant};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// A [`hyper::rt::Executor`] that spawns hyper's background tasks (HTTP/2
/// streams and the connection's ping/keep-alive work) as weft tasks.
///
/// [`WeftExecutor::new`] spawns on the runtime current at the time of each
/// spawn (hyper spawns from inside the connection future, so that is the
/// runtime driving the connection); [`WeftExecutor::with_handle`] pins a
/// runtime.
#[derive(Clone, Default)]
pub struct WeftExecutor {
    handle: Option<Handle>,
}

impl WeftExecutor {
    /// Spawn with [`crate::spawn`] on the current runtime.
    pub fn new() -> Self {
        WeftExecutor { handle: None }
    }

    /// Spawn on the runtime behind `handle`, wherever `execute` is called.
    pub fn with_handle(handle: Handle) -> Self {
        WeftExecutor {
            handle: Some(handle),
        }
    }
}

impl<F> hyper::rt::Executor<F> for WeftExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        // Detached: hyper's tasks report through the connection, not
        // through a join handle.
        match &self.handle {
            Some(handle) => drop(handle.spawn(fut)),
            None => drop(crate::spawn(fut)),
        }
    }
}

impl fmt::Debug for WeftExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeftExecutor")
            .field("pinned_runtime", &self.handle.is_some())
            .finish()
    }
}

/// A [`hyper::rt::Timer`] on weft's timer wheel, for hyper's timeouts
/// (HTTP/1 `header_read_timeout`, HTTP/2 keep-alive pings, ...).
///
/// Its sleeps are [`WeftSleep`]s (a boxed [`time::Sleep`]); `reset`
/// downcasts the boxed sleep back to a `WeftSleep` and moves its deadline in
/// place instead of allocating a new one. `now` reads weft's clock, so a
/// paused test clock ([`time::pause`]) is seen by hyper too.
///
/// # Panics
/// `sleep` and `sleep_until` panic outside a weft runtime with the time
/// driver enabled, like [`time::sleep`]. hyper calls them while polling
/// the connection, so this holds whenever the connection runs on weft.
#[derive(Debug, Default, Clone, Copy)]
pub struct WeftTimer {
    _private: (),
}

impl WeftTimer {
    /// A timer on the current runtime's clock.
    pub fn new() -> Self {
        WeftTimer { _private: () }
    }
}

impl hyper::rt::Timer for WeftTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(WeftSleep {
            inner: time::sleep(duration),
        })
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(WeftSleep {
            inner: time::sleep_until(Instant::from_std(deadline)),
        })
    }

    fn now(&self) -> std::time::Instant {
        Instant::now().into_std()
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, new_deadline: std::time::Instant) {
        match sleep.as_mut().downcast_mut_pin::<WeftSleep>() {
            Some(ours) => ours.reset(new_deadline),
            // Made by some other timer: replace it.
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

/// The [`hyper::rt::Sleep`] made by [`WeftTimer`]: a [`time::Sleep`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct WeftSleep {
    inner: time::Sleep,
}

impl WeftSleep {
    /// When the sleep completes.
    pub fn deadline(&self) -> std::time::Instant {
        self.inner.deadline().into_std()
    }

    /// Move the deadline (see [`time::Sleep::reset`]).
    pub fn reset(self: Pin<&mut Self>, deadline: std::time::Instant) {
        Pin::new(&mut self.get_mut().inner).reset(Instant::from_std(deadline));
    }
}

impl Future for WeftSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.get_mut().inner).poll(cx)
    }
}

impl hyper::rt::Sleep for WeftSleep {}
