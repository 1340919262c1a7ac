//! Blocking the calling thread on one future, without driving a scheduler.
//!
//! Used by the multi-thread `block_on` (workers run the tasks), by
//! `Handle::block_on`, and by the blocking parts of weft's channels.

use crate::coop;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

struct ThreadNotify {
    thread: Thread,
    /// Set by a wake, cleared before each poll: guards against the thread's
    /// park token being consumed by unrelated code inside the future.
    notified: AtomicBool,
}

impl Wake for ThreadNotify {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.notified.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// Parks the current thread until a waker it handed out is woken.
pub(crate) struct ThreadParker {
    notify: Arc<ThreadNotify>,
}

impl ThreadParker {
    /// A parker for the calling thread, initially notified so that the first
    /// check polls at once.
    pub(crate) fn new() -> ThreadParker {
        ThreadParker {
            notify: Arc::new(ThreadNotify {
                thread: thread::current(),
                notified: AtomicBool::new(true),
            }),
        }
    }

    /// A waker that unparks this thread.
    pub(crate) fn waker(&self) -> Waker {
        Waker::from(self.notify.clone())
    }

    /// Consume a pending notification; true if there was one.
    pub(crate) fn take_notification(&self) -> bool {
        self.notify.notified.swap(false, Ordering::AcqRel)
    }

    /// Sleep until notified (returns at once if a notification is pending;
    /// does not consume it).
    pub(crate) fn park(&self) {
        while !self.notify.notified.load(Ordering::Acquire) {
            thread::park();
        }
    }
}

/// Poll `future` on this thread until it completes, sleeping in between.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let parker = ThreadParker::new();
    let waker = parker.waker();
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if parker.take_notification() {
            if let Poll::Ready(v) = coop::budget(|| future.as_mut().poll(&mut cx)) {
                return v;
            }
        }
        parker.park();
    }
}
