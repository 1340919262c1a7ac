//! An intrusive FIFO queue of waiters whose nodes live inside the (pinned)
//! futures that wait, used by [`Notify`](super::Notify) and
//! [`Semaphore`](super::Semaphore).
//!
//! # What this file owns
//!
//! `Node<T>`: one waiter, embedded in its future. It has three parts:
//! links (`prev`/`next`), the lock-protected `data` (a waker, counters), and
//! an atomic `state` that tells the waiter it was served without a lock.
//!
//! `List<T>`: the queue itself, a doubly linked list of raw node pointers.
//! It is not synchronised: its user keeps it behind a mutex ("the lock").
//!
//! Compared with the slab-based `WaitList`, a served waiter learns that it
//! was served by reading one atomic, and the server frees nothing: there is
//! no slot, so a woken future completes without taking the lock.
//!
//! # Invariants
//!
//! Every `unsafe` block in this file and in its users relies on these:
//!
//! 1. **Pinned while linked.** A node is pushed only from a pinned future
//!    (`Node` is `!Unpin`), is linked in at most one list, and its future
//!    unlinks it under the lock before the node is dropped, unless whoever
//!    served it unlinked it first. So a linked node's memory is valid.
//! 2. **Lock-protected parts.** A node's links and `data` are read or
//!    written only while holding the lock of the list it was pushed to,
//!    or by the owning future when no one else can reach the node: before
//!    it is first pushed, or after it observed (invariant 3) that it was
//!    served.
//! 3. **Served means untouched.** Whoever serves a waiter (under the lock)
//!    unlinks it, does everything it needs with the node (takes the waker,
//!    updates counters), and *last* stores the outcome into `state` with
//!    `Release`. It never touches the node again. So once the owner loads a
//!    served outcome with `Acquire`, it owns the whole node again and may
//!    drop it without the lock. Under the lock, `state` still holding its
//!    initial ("waiting") value means the node is linked, if it was pushed.

use std::fmt;
use std::marker::PhantomPinned;
use std::ptr::NonNull;

use crate::loom::{AtomicUsize, UnsafeCell};

/// One waiter, embedded in its future (see the module doc).
pub(crate) struct Node<T> {
    /// Queue links; invariant 2.
    links: std::cell::UnsafeCell<Links<T>>,
    /// Lock-protected waiter data; invariant 2.
    data: UnsafeCell<T>,
    /// The outcome, stored last by the server; invariant 3.
    state: AtomicUsize,
    /// Pointers to the node are kept while it is linked (invariant 1).
    _pin: PhantomPinned,
}

struct Links<T> {
    prev: Option<NonNull<Node<T>>>,
    next: Option<NonNull<Node<T>>>,
}

// SAFETY: the links and data are only accessed under the lock or by the
// sole owner (invariant 2), so moving the node (while unlinked) or sharing
// it between threads is as safe as doing so with `T`; `state` is atomic.
unsafe impl<T: Send> Send for Node<T> {}
// SAFETY: as above; `&Node` gives no unsynchronised access to `T`.
unsafe impl<T: Send> Sync for Node<T> {}

impl<T> Node<T> {
    /// A node not in any list, with `data` and an initial `state`.
    pub(crate) fn new(data: T, state: usize) -> Node<T> {
        Node {
            links: std::cell::UnsafeCell::new(Links {
                prev: None,
                next: None,
            }),
            data: UnsafeCell::new(data),
            state: AtomicUsize::new(state),
            _pin: PhantomPinned,
        }
    }

    /// The outcome word (invariant 3).
    pub(crate) fn state(&self) -> &AtomicUsize {
        &self.state
    }

    /// Runs `f` on the waiter data.
    ///
    /// # Safety
    ///
    /// The caller holds the lock of the list the node was pushed to, or no
    /// one else can reach the node (invariant 2).
    pub(crate) unsafe fn with_data<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: the caller guarantees exclusive access (invariant 2).
        self.data.with_mut(|p| f(unsafe { &mut *p }))
    }

    /// The links; dereferenced only under the lock (invariant 2).
    fn links(&self) -> *mut Links<T> {
        self.links.get()
    }
}

impl<T> fmt::Debug for Node<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node").finish_non_exhaustive()
    }
}

/// A FIFO queue of node pointers (see the module doc).
pub(crate) struct List<T> {
    head: Option<NonNull<Node<T>>>,
    tail: Option<NonNull<Node<T>>>,
}

// SAFETY: the list only holds pointers to nodes whose shared parts are
// accessed through it under the lock (invariant 2); it is `Send` when the
// data it reaches is.
unsafe impl<T: Send> Send for List<T> {}
// SAFETY: `&List` only reads the head and tail pointers.
unsafe impl<T: Send> Sync for List<T> {}

impl<T> List<T> {
    pub(crate) const fn new() -> List<T> {
        List {
            head: None,
            tail: None,
        }
    }

    /// Whether no node is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// Links `node` at the back.
    ///
    /// # Safety
    ///
    /// `node` is pinned, not linked in any list, and stays valid until it is
    /// unlinked (invariant 1); the caller holds this list's lock.
    pub(crate) unsafe fn push_back(&mut self, node: NonNull<Node<T>>) {
        // SAFETY: `node` is valid and we hold the lock (invariants 1, 2).
        unsafe {
            *node.as_ref().links() = Links {
                prev: self.tail,
                next: None,
            }
        };
        match self.tail {
            // SAFETY: the tail is linked, hence valid (invariant 1); we hold
            // the lock (invariant 2).
            Some(tail) => unsafe { (*tail.as_ref().links()).next = Some(node) },
            None => self.head = Some(node),
        }
        self.tail = Some(node);
    }

    /// The first queued node.
    pub(crate) fn front(&self) -> Option<NonNull<Node<T>>> {
        self.head
    }

    /// Unlinks and returns the first queued node.
    pub(crate) fn pop_front(&mut self) -> Option<NonNull<Node<T>>> {
        let node = self.head?;
        // SAFETY: `node` is linked in this list (it is the head).
        unsafe { self.remove(node) };
        Some(node)
    }

    /// Unlinks and returns the last queued node.
    pub(crate) fn pop_back(&mut self) -> Option<NonNull<Node<T>>> {
        let node = self.tail?;
        // SAFETY: `node` is linked in this list (it is the tail).
        unsafe { self.remove(node) };
        Some(node)
    }

    /// Unlinks `node`.
    ///
    /// # Safety
    ///
    /// `node` is linked in this list, and the caller holds its lock.
    pub(crate) unsafe fn remove(&mut self, node: NonNull<Node<T>>) {
        // SAFETY: a linked node is valid, and we hold the lock (1, 2).
        let links = unsafe { &mut *node.as_ref().links() };
        let (prev, next) = (links.prev.take(), links.next.take());
        debug_assert!(prev.is_some() || self.head == Some(node));
        match prev {
            // SAFETY: neighbours of a linked node are linked, hence valid.
            Some(p) => unsafe { (*p.as_ref().links()).next = next },
            None => self.head = next,
        }
        match next {
            // SAFETY: as above.
            Some(n) => unsafe { (*n.as_ref().links()).prev = prev },
            None => self.tail = prev,
        }
    }

    /// Number of queued nodes (O(n); for tests and `Debug`).
    pub(crate) fn len(&self) -> usize {
        let mut n = 0;
        let mut cur = self.head;
        while let Some(node) = cur {
            n += 1;
            // SAFETY: queued nodes are valid and `&self` means the lock is
            // held by our caller (invariants 1, 2).
            cur = unsafe { (*node.as_ref().links()).next };
        }
        n
    }
}

impl<T> fmt::Debug for List<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("List").field("queued", &self.len()).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::pin::pin;

    #[test]
    fn fifo_and_middle_removal() {
        let a = pin!(Node::new(1u32, 0));
        let b = pin!(Node::new(2u32, 0));
        let c = pin!(Node::new(3u32, 0));
        let (a, b, c) = (NonNull::from(&*a), NonNull::from(&*b), NonNull::from(&*c));
        let mut l = List::new();
        // SAFETY (test): every node handed to `value` is one of the three
        // pinned above, alive for the whole test.
        let value = |n: NonNull<Node<u32>>| unsafe { n.as_ref().with_data(|d| *d) };
        // SAFETY (test): the nodes are pinned above and outlive the list.
        unsafe {
            l.push_back(a);
            l.push_back(b);
            l.push_back(c);
        }
        assert_eq!(l.len(), 3);
        // SAFETY (test): `b` is linked.
        unsafe { l.remove(b) };
        assert_eq!(l.len(), 2);
        assert_eq!(l.pop_front().map(value), Some(1));
        assert_eq!(l.pop_back().map(value), Some(3));
        assert!(l.is_empty());
        // SAFETY (test): `b` was unlinked and may be pushed again.
        unsafe { l.push_back(b) };
        assert_eq!(l.front().map(value), Some(2));
        assert_eq!(l.pop_front().map(value), Some(2));
        assert!(l.pop_front().is_none());
    }
}
