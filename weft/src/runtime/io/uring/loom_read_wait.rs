//! Loom model of a read-readiness waiter against a reader of the same
//! io_uring stream (recv.rs, "Readiness waiters"): whatever the order, the
//! bytes that come next reach the waiter, as readiness or as bytes a
//! receive kept, never only a receive in flight that nobody polls.
//!
//! Real: the [`ScheduledIo`] (the waiter's registration, the reader's
//! `has_read_waiters`, the poller's `set_readiness`). Modelled: the
//! stream's read state under its lock (a receive in flight and whether it
//! took the bytes; bytes kept after a settle), the lazy read interest, and
//! the kernel, which hands arriving bytes to a receive in flight if there
//! is one (the poller then sees nothing) and otherwise reports readiness.

use crate::loom::{lock, thread, Arc, AtomicBool, Mutex, Ordering};
use crate::runtime::io::ready::{Interest, Ready};
use crate::runtime::io::scheduled_io::ScheduledIo;
use std::task::{Context, Waker};

#[derive(Default)]
struct ReadState {
    /// A receive in flight, and whether the bytes reached it.
    receive: Option<bool>,
    /// Bytes a settled receive had taken, kept for the next read.
    leftover: bool,
}

struct Stream {
    io: ScheduledIo,
    state: Mutex<ReadState>,
    reads_wanted: AtomicBool,
}

impl Stream {
    fn new() -> Stream {
        Stream {
            io: ScheduledIo::new(),
            state: Mutex::new(ReadState::default()),
            reads_wanted: AtomicBool::new(false),
        }
    }

    /// `UringRead::settle`: end the receive in flight, keeping its bytes.
    fn settle(&self) {
        let mut state = lock(&self.state);
        if let Some(took) = state.receive.take() {
            state.leftover |= took;
        }
    }

    /// A read wait (`readable()`): register, ask the poller for reads
    /// (`Registration::arm`), then settle. Whether it ends at once (bytes
    /// kept) or sleeps registered.
    fn wait(&self, key: &mut Option<usize>) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        if self
            .io
            .poll_interest(&mut cx, Interest::READABLE, key)
            .is_ready()
        {
            return true;
        }
        self.reads_wanted.store(true, Ordering::Release);
        self.settle();
        lock(&self.state).leftover
    }

    /// `UringRead::poll_read` finding nothing: start a receive unless a
    /// read waiter is registered (then it reads on readiness).
    fn read(&self) {
        let mut state = lock(&self.state);
        if state.leftover || state.receive.is_some() {
            return;
        }
        let waited = self.reads_wanted.load(Ordering::Acquire) && self.io.has_read_waiters();
        if !waited {
            state.receive = Some(false);
        }
    }

    /// The kernel: bytes arrive.
    fn bytes_arrive(&self) {
        let mut state = lock(&self.state);
        match &mut state.receive {
            Some(took) => *took = true,
            None => {
                drop(state);
                let mut wakers = Vec::new();
                self.io.set_readiness(Ready::READABLE, &mut wakers);
            }
        }
    }
}

/// The waiter, a reader that then drops its read, and the bytes, in any
/// order: the waiter ended at once (on readiness, or on bytes its settle
/// kept), or it sleeps and the poller reported the bytes, which wakes it
/// (`ScheduledIo`'s own invariant).
#[test]
fn a_read_waiter_always_learns_of_the_bytes() {
    loom::model(|| {
        let stream = Arc::new(Stream::new());
        let reader = {
            let stream = stream.clone();
            thread::spawn(move || stream.read())
        };
        let kernel = {
            let stream = stream.clone();
            thread::spawn(move || stream.bytes_arrive())
        };
        let mut key = None;
        let ended = stream.wait(&mut key);
        reader.join().unwrap();
        kernel.join().unwrap();
        if ended {
            return;
        }
        assert!(
            stream.io.ready_now(Interest::READABLE).ready.is_readable(),
            "the waiter sleeps on bytes only a receive nobody polls holds"
        );
        stream.io.drop_waiter(&mut key);
    });
}
