//! `Pipe`: one bounded, in-memory direction of bytes, shared by
//! [`duplex`](super::duplex) and [`simplex`](super::simplex).
//!
//! Owns: the buffered bytes and the two wakers of one direction.
//! Invariants: the buffer never holds more than `max` bytes (a writer
//! facing a full pipe waits: back-pressure); once closed, writes fail with
//! `BrokenPipe` and reads drain what is left, then report end of stream.
//! Every method that wakes someone *returns* the waker instead of waking
//! it, so callers wake after releasing the pipe's lock (a waker may run
//! code that comes back to this pipe).
//!
//! The pipe is a weft resource that can always be ready, so the stream
//! types spend one unit of the task's cooperative budget per read or write.

use crate::io::ReadBuf;
use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

pub(super) struct Pipe {
    buf: VecDeque<u8>,
    max: usize,
    /// Set by the writing end's shutdown or drop, or by the reading end's
    /// drop.
    closed: bool,
    /// The reading end, waiting for data or close.
    read_waker: Option<Waker>,
    /// The writing end, waiting for room.
    write_waker: Option<Waker>,
}

/// Wakers to wake once the pipe's lock is released.
#[must_use = "wake these after unlocking the pipe"]
#[derive(Default)]
pub(super) struct ToWake(Option<Waker>, Option<Waker>);

impl ToWake {
    pub(super) fn wake(self) {
        if let Some(w) = self.0 {
            w.wake();
        }
        if let Some(w) = self.1 {
            w.wake();
        }
    }
}

impl Pipe {
    pub(super) fn new(max: usize) -> Mutex<Pipe> {
        Mutex::new(Pipe {
            buf: VecDeque::with_capacity(max.min(64 * 1024)),
            max,
            closed: false,
            read_waker: None,
            write_waker: None,
        })
    }

    pub(super) fn unread(&self) -> usize {
        self.buf.len()
    }

    pub(super) fn close(&mut self) -> ToWake {
        self.closed = true;
        ToWake(self.read_waker.take(), self.write_waker.take())
    }

    pub(super) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> (Poll<io::Result<()>>, ToWake) {
        if out.remaining() == 0 {
            return (Poll::Ready(Ok(())), ToWake::default());
        }
        if self.buf.is_empty() {
            if self.closed {
                return (Poll::Ready(Ok(())), ToWake::default());
            }
            let replaced = store_waker(&mut self.read_waker, cx);
            return (Poll::Pending, ToWake(replaced, None));
        }
        let n = out.remaining().min(self.buf.len());
        let (front, back) = self.buf.as_slices();
        let from_front = n.min(front.len());
        out.put_slice(&front[..from_front]);
        out.put_slice(&back[..n - from_front]);
        self.buf.drain(..n);
        (Poll::Ready(Ok(())), ToWake(self.write_waker.take(), None))
    }

    /// Writes as much of `bufs`, in order, as fits.
    pub(super) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> (Poll<io::Result<usize>>, ToWake) {
        if self.closed {
            return (
                Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
                ToWake::default(),
            );
        }
        if bufs.iter().all(|b| b.is_empty()) {
            return (Poll::Ready(Ok(0)), ToWake::default());
        }
        let mut room = self.max - self.buf.len();
        if room == 0 {
            let replaced = store_waker(&mut self.write_waker, cx);
            return (Poll::Pending, ToWake(replaced, None));
        }
        let mut written = 0;
        for b in bufs {
            let n = room.min(b.len());
            self.buf.extend(&b[..n]);
            written += n;
            room -= n;
            if room == 0 {
                break;
            }
        }
        (
            Poll::Ready(Ok(written)),
            ToWake(self.read_waker.take(), None),
        )
    }
}

/// Store the task's waker; returns a replaced one, to drop after unlocking.
fn store_waker(slot: &mut Option<Waker>, cx: &Context<'_>) -> Option<Waker> {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => None,
        _ => slot.replace(cx.waker().clone()),
    }
}

pub(super) fn lock(pipe: &Mutex<Pipe>) -> MutexGuard<'_, Pipe> {
    // Pipe operations cannot panic half-way through an update.
    pipe.lock().unwrap_or_else(|e| e.into_inner())
}

/// The stream side of a pipe read: one budget unit, the read under the
/// lock, the wake-up after it (`duplex` and `simplex` both read this way).
pub(super) fn poll_read_locked(
    pipe: &Mutex<Pipe>,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    let coop = std::task::ready!(crate::coop::poll_proceed(cx));
    let (res, to_wake) = lock(pipe).poll_read(cx, buf);
    to_wake.wake();
    let res = std::task::ready!(res);
    coop.made_progress();
    Poll::Ready(res)
}

/// The stream side of a pipe write, as [`poll_read_locked`].
pub(super) fn poll_write_locked(
    pipe: &Mutex<Pipe>,
    cx: &mut Context<'_>,
    bufs: &[IoSlice<'_>],
) -> Poll<io::Result<usize>> {
    let coop = std::task::ready!(crate::coop::poll_proceed(cx));
    let (res, to_wake) = lock(pipe).poll_write(cx, bufs);
    to_wake.wake();
    let res = std::task::ready!(res);
    coop.made_progress();
    Poll::Ready(res)
}

/// Close the pipe (the reader drains what is left, then sees the end).
pub(super) fn close_locked(pipe: &Mutex<Pipe>) {
    let to_wake = lock(pipe).close();
    to_wake.wake();
}
