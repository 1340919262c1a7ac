//! The inject queue: the global FIFO shared by all workers of a runtime.
//!
//! Owns: run-queue entries pushed from outside a worker (remote spawns and
//! wakes) and the overflow of full local queues. It is an intrusive singly
//! linked list through the tasks' `queue_next` headers, behind one mutex,
//! with an atomic length so that "is it empty?" costs no lock.
//!
//! Invariants:
//! - `len` is only written under the lock and always equals the list length.
//! - A task's `queue_next` is written only while its entry is owned by the
//!   pusher (before linking) or under the lock (after).
//! - Once closed, the queue accepts nothing and its contents are forgotten,
//!   not walked: entries hold no reference (task/state.rs), and the tasks
//!   they point to may be freed by the runtime's shutdown right after.

use crate::loom::{lock, AtomicUsize, Mutex, Ordering};
use crate::task::{Header, Notified};
use std::marker::PhantomData;
use std::ptr::NonNull;

pub(crate) struct Inject<S: 'static> {
    len: AtomicUsize,
    synced: Mutex<Synced>,
    _s: PhantomData<S>,
}

struct Synced {
    head: Option<NonNull<Header>>,
    tail: Option<NonNull<Header>>,
    closed: bool,
}

// SAFETY: the raw pointers are only followed under the mutex.
unsafe impl Send for Synced {}

impl<S: 'static> Inject<S> {
    pub(crate) fn new() -> Inject<S> {
        Inject {
            len: AtomicUsize::new(0),
            synced: Mutex::new(Synced {
                head: None,
                tail: None,
                closed: false,
            }),
            _s: PhantomData,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.synced).closed
    }

    /// Close the queue. Returns false if it was already closed.
    pub(crate) fn close(&self) -> bool {
        let mut s = lock(&self.synced);
        if s.closed {
            return false;
        }
        s.closed = true;
        s.head = None;
        s.tail = None;
        self.len.store(0, Ordering::Release);
        true
    }

    /// Push one entry. Returns false (and drops the entry) once closed.
    pub(crate) fn push(&self, task: Notified<S>) -> bool {
        let ptr = task.header_ptr();
        // SAFETY: we own the entry, so nobody else links this header.
        unsafe { ptr.as_ref().set_next(None) };
        self.link(ptr, ptr, 1)
    }

    /// Push many entries in one lock acquisition; they are linked to each
    /// other before the lock is taken. Returns false if there were none,
    /// or (dropping them) once closed.
    pub(crate) fn push_batch<I: Iterator<Item = Notified<S>>>(&self, mut iter: I) -> bool {
        let Some(first) = iter.next() else {
            return false;
        };
        let head = first.header_ptr();
        let mut tail = head;
        let mut count = 1;
        for task in iter {
            let ptr = task.header_ptr();
            // SAFETY: we own these entries; not yet visible to anyone.
            unsafe { tail.as_ref().set_next(Some(ptr)) };
            tail = ptr;
            count += 1;
        }
        // SAFETY: as above.
        unsafe { tail.as_ref().set_next(None) };
        self.link(head, tail, count)
    }

    fn link(&self, head: NonNull<Header>, tail: NonNull<Header>, count: usize) -> bool {
        let mut s = lock(&self.synced);
        if s.closed {
            return false;
        }
        match s.tail {
            // SAFETY: linked entries are alive and their links are ours
            // under the lock.
            Some(old) => unsafe { old.as_ref().set_next(Some(head)) },
            None => s.head = Some(head),
        }
        s.tail = Some(tail);
        self.len
            .store(self.len.load(Ordering::Relaxed) + count, Ordering::Release);
        true
    }

    pub(crate) fn pop(&self) -> Option<Notified<S>> {
        if self.is_empty() {
            return None;
        }
        let mut s = lock(&self.synced);
        self.pop_locked(&mut s)
    }

    fn pop_locked(&self, s: &mut Synced) -> Option<Notified<S>> {
        let head = s.head?;
        // SAFETY: under the lock; the entry is alive while linked.
        let next = unsafe { head.as_ref().get_next() };
        s.head = next;
        if next.is_none() {
            s.tail = None;
        }
        self.len
            .store(self.len.load(Ordering::Relaxed) - 1, Ordering::Release);
        // SAFETY: the entry leaves the queue and passes to the caller.
        Some(unsafe { Notified::from_header(head) })
    }

    /// Pop up to `n` entries under one lock acquisition and hand each to `f`.
    pub(crate) fn pop_n(&self, n: usize, mut f: impl FnMut(Notified<S>)) -> usize {
        if n == 0 || self.is_empty() {
            return 0;
        }
        let mut s = lock(&self.synced);
        let mut taken = 0;
        while taken < n {
            let Some(task) = self.pop_locked(&mut s) else {
                break;
            };
            f(task);
            taken += 1;
        }
        taken
    }
}
