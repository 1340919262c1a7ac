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

/// Poll `future` on this thread until it completes, sleeping in between.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let notify = Arc::new(ThreadNotify {
        thread: thread::current(),
        notified: AtomicBool::new(true),
    });
    let waker = Waker::from(notify.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if notify.notified.swap(false, Ordering::AcqRel) {
            if let Poll::Ready(v) = coop::budget(|| future.as_mut().poll(&mut cx)) {
                return v;
            }
        }
        while !notify.notified.load(Ordering::Acquire) {
            thread::park();
        }
    }
}
