//! The per-worker local run queue of the multi-thread scheduler.
//!
//! Each worker owns one fixed-size ring of `LOCAL_QUEUE_CAPACITY` slots. The
//! owning worker is the only producer and also consumes from the front with
//! [`Local::pop`]; any number of other workers hold a [`Steal`] handle and may
//! move half of the queue into their own ring with [`Steal::steal_into`]. When
//! the ring is full, [`Local::push_back_or_overflow`] moves half of it to the
//! global inject queue (an [`Overflow`]) in one batch.
//!
//! # Invariants
//!
//! * **Single producer.** Only the [`Local`] handle writes `tail`, and only it
//!   writes slots. Stealers never write to the ring they steal from; they
//!   write into their *own* ring, of which they are the producer.
//! * **Two words.** `tail: u32` is stored by the owner alone (with `Release`,
//!   publishing the slot it just wrote). `head: u64` packs two `u32`
//!   positions, `steal` in the high half and `real` in the low half, and is
//!   changed by the owner and the stealers alike, only through CAS.
//! * **Positions.** Positions count up forever with wrapping arithmetic; a
//!   slot is `position & MASK`. The invariant `steal <= real <= tail` holds in
//!   wrapping terms, and `tail - steal <= LOCAL_QUEUE_CAPACITY`. Positions are
//!   `u32` rather than slot indices so that a CAS cannot succeed against a
//!   head that has moved all the way round the ring and back (ABA): that
//!   would take 2^32 operations between one thread's load and its CAS. Two
//!   `u32`s are packed into one `u64` so that both halves change atomically.
//! * **Ownership of slots.** Slots in `real..tail` hold tasks that belong to
//!   the queue. Slots in `steal..real` have been claimed by one stealer that
//!   is still copying them out; the owner must not overwrite them, which is
//!   why fullness is measured from `steal`, not `real`. All other slots are
//!   free and only the owner may write them.
//! * **Claim protocol.** A stealer (1) requires `steal == real`, so at most
//!   one steal is in progress per victim, (2) CASes `real` forward by the
//!   number of tasks it takes while leaving `steal` behind, (3) moves those
//!   tasks into its own ring, and (4) CASes `steal` up to the current `real`
//!   to hand the slots back. Meanwhile the owner may keep popping (it only
//!   moves `real`) but will not take the overflow path, which needs both
//!   halves equal so it can claim a contiguous half of the ring.

use crate::loom::{Arc, AtomicU32, AtomicU64, Ordering, UnsafeCell};

use std::fmt;
use std::iter;
use std::mem::MaybeUninit;

/// Number of slots in each worker's ring. Kept tiny under loom so that the
/// full and overflow paths are reached in a handful of operations.
#[cfg(not(loom))]
pub(crate) const LOCAL_QUEUE_CAPACITY: usize = 256;
#[cfg(loom)]
pub(crate) const LOCAL_QUEUE_CAPACITY: usize = 4;

const MASK: usize = LOCAL_QUEUE_CAPACITY - 1;

// Masking positions into slots needs a power of two, and positions are u32.
const _: () = assert!(LOCAL_QUEUE_CAPACITY.is_power_of_two());
const _: () = assert!(LOCAL_QUEUE_CAPACITY >= 2 && LOCAL_QUEUE_CAPACITY <= (1 << 31));

const CAPACITY: u32 = LOCAL_QUEUE_CAPACITY as u32;
const HALF: u32 = CAPACITY / 2;

/// Where overflow goes (the global inject queue).
pub(crate) trait Overflow<T> {
    /// Takes the whole batch in one call, so that the receiving queue can
    /// link it in under a single lock acquisition. Items the implementation
    /// does not consume from `iter` are dropped.
    fn push_batch<I: Iterator<Item = T>>(&self, iter: I);
}

/// Create a new local queue and the handle other workers steal from it with.
pub(crate) fn local<T>() -> (Steal<T>, Local<T>) {
    let buffer = (0..LOCAL_QUEUE_CAPACITY)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let inner = Arc::new(Inner {
        head: AtomicU64::new(0),
        tail: AtomicU32::new(0),
        buffer,
    });
    (
        Steal {
            inner: inner.clone(),
        },
        Local { inner },
    )
}

/// The producer / owner end of a worker's queue.
pub(crate) struct Local<T> {
    inner: Arc<Inner<T>>,
}

/// A handle that other workers use to steal from a queue.
pub(crate) struct Steal<T> {
    inner: Arc<Inner<T>>,
}

struct Inner<T> {
    /// `steal` in the high 32 bits, `real` in the low 32 bits.
    head: AtomicU64,
    /// Written only by the owning `Local`.
    tail: AtomicU32,
    buffer: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

// SAFETY: slots are only accessed by whichever thread currently owns them under
// the claim protocol (module docs), and every hand-over of a slot between
// threads goes through a Release store / Acquire load (or AcqRel CAS) of
// `head` or `tail`. Tasks move between threads, hence `T: Send`; a task is
// never shared, so `T: Sync` is not needed.
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: as above; `&Inner` only gives access to slots through that protocol.
unsafe impl<T: Send> Sync for Inner<T> {}

#[inline]
fn unpack(head: u64) -> (u32, u32) {
    let real = head as u32;
    let steal = (head >> 32) as u32;
    (steal, real)
}

#[inline]
fn pack(steal: u32, real: u32) -> u64 {
    (u64::from(steal) << 32) | u64::from(real)
}

impl<T> Inner<T> {
    /// Move the task out of the slot for `pos`.
    ///
    /// # Safety
    ///
    /// The caller must own the slot under the claim protocol, the slot must
    /// hold a task, and the write of that task must happen-before this call.
    /// Afterwards the slot counts as empty.
    #[inline]
    unsafe fn take(&self, pos: u32) -> T {
        self.buffer[pos as usize & MASK].with(|ptr| {
            // SAFETY: guaranteed by this function's contract: we own the slot
            // and it is initialised and visible to us.
            unsafe { (*ptr).assume_init_read() }
        })
    }

    /// Write `task` into the (empty) slot for `pos`.
    ///
    /// # Safety
    ///
    /// The caller must be the owner of this ring and `pos` must lie outside
    /// `steal..tail`, so no other thread may be reading the slot. Any task
    /// previously in the slot has already been moved out.
    #[inline]
    unsafe fn put(&self, pos: u32, task: T) {
        self.buffer[pos as usize & MASK].with_mut(|ptr| {
            // SAFETY: by this function's contract the slot is free and only we
            // can touch it; writing a `MaybeUninit` never drops the old value.
            unsafe { ptr.write(MaybeUninit::new(task)) }
        });
    }

    /// Tasks in `real..tail`, as seen by a thread that is not the owner.
    fn len(&self) -> usize {
        let (_, real) = unpack(self.head.load(Ordering::Acquire));
        let tail = self.tail.load(Ordering::Acquire);
        // Head and tail are read at different moments, so the difference can
        // briefly exceed what the ring could hold; clamp it for callers.
        (tail.wrapping_sub(real) as usize).min(LOCAL_QUEUE_CAPACITY)
    }
}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // Every handle is gone, so no steal can be in flight and whatever is
        // left in `real..tail` is ours to drop. The scheduler drains queues at
        // shutdown; this only runs with tasks left after a panic.
        let (steal, real) = unpack(self.head.load(Ordering::Acquire));
        debug_assert_eq!(steal, real);
        let tail = self.tail.load(Ordering::Acquire);
        let mut pos = real;
        while pos != tail {
            // SAFETY: no other handle exists, slots in `real..tail` hold tasks
            // (ownership of slots invariant) and Arc's final drop synchronises
            // with every earlier use.
            drop(unsafe { self.take(pos) });
            pos = pos.wrapping_add(1);
        }
    }
}

impl<T> Local<T> {
    /// Our own `tail`. Only this handle writes it, so a relaxed load always
    /// sees the latest value.
    #[inline]
    fn tail(&self) -> u32 {
        self.inner.tail.load(Ordering::Relaxed)
    }

    /// Number of tasks in the queue.
    pub(crate) fn len(&self) -> usize {
        let (_, real) = unpack(self.inner.head.load(Ordering::Acquire));
        self.tail().wrapping_sub(real) as usize
    }

    /// Whether there are tasks in the queue.
    pub(crate) fn has_tasks(&self) -> bool {
        self.len() != 0
    }

    /// Number of tasks that can be pushed without overflowing. Slots still
    /// being copied out by a stealer are not free yet, so this may be briefly
    /// smaller than `max_capacity() - len()`; it never over-reports, because
    /// stealers only ever free slots.
    pub(crate) fn remaining_slots(&self) -> usize {
        let (steal, _) = unpack(self.inner.head.load(Ordering::Acquire));
        LOCAL_QUEUE_CAPACITY - self.tail().wrapping_sub(steal) as usize
    }

    /// Capacity of the ring.
    pub(crate) fn max_capacity(&self) -> usize {
        LOCAL_QUEUE_CAPACITY
    }

    /// Push a batch that the caller has checked fits (see
    /// [`remaining_slots`](Self::remaining_slots)).
    ///
    /// # Panics
    ///
    /// If the batch does not fit. Writing past the free slots would overwrite
    /// tasks, so this is checked in release builds too.
    pub(crate) fn push_back(&mut self, tasks: impl ExactSizeIterator<Item = T>) {
        let len = tasks.len();
        if len == 0 {
            return;
        }
        let (steal, _) = unpack(self.inner.head.load(Ordering::Acquire));
        let tail = self.tail();
        let free = LOCAL_QUEUE_CAPACITY - tail.wrapping_sub(steal) as usize;
        assert!(
            len <= free,
            "local queue: batch of {len} does not fit in {free} free slots"
        );

        let mut pos = tail;
        // `take` guards against an iterator that reports a short length.
        for task in tasks.take(len) {
            // SAFETY: `pos` is in `tail..tail + len`, which lies outside
            // `steal..tail` because `len <= CAPACITY - (tail - steal)`;
            // stealers only ever move `steal` forward, so those slots stay
            // free. We are the owner.
            unsafe { self.inner.put(pos, task) };
            pos = pos.wrapping_add(1);
        }
        // Publish the new slots to stealers.
        self.inner.tail.store(pos, Ordering::Release);
    }

    /// Push to the back; if the ring is full, move half of it plus `task` to
    /// `overflow` in one `push_batch` call.
    ///
    /// Returns `true` if anything went to `overflow` (for the
    /// `worker_overflow_count` metric).
    pub(crate) fn push_back_or_overflow<O: Overflow<T>>(
        &mut self,
        mut task: T,
        overflow: &O,
    ) -> bool {
        let tail = self.tail();
        loop {
            // Acquire pairs with a stealer's release of `steal`: after
            // seeing the slots handed back we may overwrite them.
            let head = self.inner.head.load(Ordering::Acquire);
            let (steal, real) = unpack(head);

            if tail.wrapping_sub(steal) < CAPACITY {
                // SAFETY: `tail` is outside `steal..tail` and, since
                // `tail - steal < CAPACITY`, does not alias a slot in it. We
                // are the owner.
                unsafe { self.inner.put(tail, task) };
                self.inner
                    .tail
                    .store(tail.wrapping_add(1), Ordering::Release);
                return false;
            }

            if steal != real {
                // A stealer is about to free slots, but we cannot claim a
                // contiguous half while it holds some of them. Only this one
                // task goes to the global queue.
                overflow.push_batch(iter::once(task));
                return true;
            }

            match self.push_overflow(task, real, tail, overflow) {
                Ok(()) => return true,
                // A stealer claimed tasks after our load, so there may be
                // room now: try again from the top.
                Err(t) => task = t,
            }
        }
    }

    /// Claim the oldest half of a full ring and send it, followed by `task`,
    /// to `overflow`. Fails, giving `task` back, if `head` moved since it was
    /// read as `pack(head, head)`.
    #[must_use = "on failure the task is handed back and must be retried"]
    fn push_overflow<O: Overflow<T>>(
        &mut self,
        task: T,
        head: u32,
        tail: u32,
        overflow: &O,
    ) -> Result<(), T> {
        debug_assert_eq!(tail.wrapping_sub(head), CAPACITY, "queue is not full");

        let prev = pack(head, head);
        let end = head.wrapping_add(HALF);
        // Moving both halves keeps the claimed slots out of any stealer's
        // view; no stealer can be mid-copy because `steal == real`.
        if self
            .inner
            .head
            .compare_exchange(prev, pack(end, end), Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            return Err(task);
        }

        overflow.push_batch(Drain {
            inner: &self.inner,
            pos: head,
            end,
            last: Some(task),
        });
        Ok(())
    }

    /// Pop the task at the front of the queue.
    pub(crate) fn pop(&mut self) -> Option<T> {
        let mut head = self.inner.head.load(Ordering::Acquire);
        let tail = self.tail();

        let pos = loop {
            let (steal, real) = unpack(head);
            if real == tail {
                return None;
            }
            let next_real = real.wrapping_add(1);
            // With no steal in progress, `steal` tracks `real`; otherwise it
            // stays where the stealer left it until the stealer releases it.
            let next = if steal == real {
                pack(next_real, next_real)
            } else {
                pack(steal, next_real)
            };
            match self
                .inner
                .head
                .compare_exchange(head, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break real,
                Err(actual) => head = actual,
            }
        };

        // SAFETY: the CAS moved `real` past `pos`, so no stealer can claim it,
        // and we wrote the slot ourselves (program order makes it visible).
        Some(unsafe { self.inner.take(pos) })
    }
}

impl<T> Drop for Local<T> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            debug_assert!(
                self.len() == 0,
                "local queue dropped with {} tasks",
                self.len()
            );
        }
    }
}

impl<T> fmt::Debug for Local<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Local").field("len", &self.len()).finish()
    }
}

impl<T> Steal<T> {
    /// Approximate number of tasks in the queue.
    pub(crate) fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the queue looked empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Steal half of this queue (rounded up) into `dst` and return one of the
    /// stolen tasks directly, so the caller can run it without a pop.
    ///
    /// `*stolen` is set to the number of tasks taken, including the returned
    /// one (0 when `None` is returned).
    ///
    /// Returns `None` without stealing if `dst` is more than half full (the
    /// stolen half might not fit), if another steal from this queue is in
    /// progress, or if the queue is empty.
    pub(crate) fn steal_into(&self, dst: &mut Local<T>, stolen: &mut usize) -> Option<T> {
        *stolen = 0;
        debug_assert!(
            !Arc::ptr_eq(&self.inner, &dst.inner),
            "a worker must not steal from itself"
        );
        let dst_tail = dst.tail();
        let (dst_steal, _) = unpack(dst.inner.head.load(Ordering::Acquire));
        if dst_tail.wrapping_sub(dst_steal) > HALF {
            return None;
        }

        let n = self.steal_into_inner(dst, dst_tail);
        if n == 0 {
            return None;
        }
        *stolen = n as usize;

        // Hand the last stolen task to the caller instead of queueing it.
        let last = dst_tail.wrapping_add(n - 1);
        // SAFETY: `steal_into_inner` wrote this slot of our own ring from
        // this thread and has not published it through `dst.tail`, so no
        // other thread can see it.
        let task = unsafe { dst.inner.take(last) };
        if n > 1 {
            // Publish the rest to `dst`'s stealers.
            dst.inner.tail.store(last, Ordering::Release);
        }
        Some(task)
    }

    /// Move up to half (rounded up) of this queue into `dst`'s slots starting
    /// at `dst_tail`, without publishing them. Returns how many were moved.
    #[must_use = "the moved tasks are unpublished until the caller stores dst's tail"]
    fn steal_into_inner(&self, dst: &mut Local<T>, dst_tail: u32) -> u32 {
        let mut prev = self.inner.head.load(Ordering::Acquire);

        // Claim: move `real` forward, leave `steal` at the old position.
        let (first, n) = loop {
            let (steal, real) = unpack(prev);
            if steal != real {
                // Someone else is stealing from this queue; try another.
                return 0;
            }
            // Acquire pairs with the owner's Release of `tail`, making the
            // tasks in `real..tail` visible to us.
            let tail = self.inner.tail.load(Ordering::Acquire);
            let available = tail.wrapping_sub(real);
            let n = available - available / 2;
            if n == 0 {
                return 0;
            }
            let next = pack(steal, real.wrapping_add(n));
            match self
                .inner
                .head
                .compare_exchange(prev, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break (real, n),
                Err(actual) => prev = actual,
            }
        };
        // `tail` was read after `head`, and the successful CAS shows `head`
        // had not moved, so `available <= CAPACITY`.
        debug_assert!(n <= HALF, "stole {n} tasks, more than half the ring");

        for i in 0..n {
            // SAFETY: the claim gives us `first..first + n` of the source
            // ring until we release `steal`; the owner's tail Release / our
            // Acquire made their contents visible.
            let task = unsafe { self.inner.take(first.wrapping_add(i)) };
            // SAFETY: we own `dst` (`&mut`), and `steal_into` checked that at
            // most HALF of it is in use from `steal`, so the `n <= HALF`
            // slots from `dst_tail` are free.
            unsafe { dst.inner.put(dst_tail.wrapping_add(i), task) };
        }

        // Release the claim: bring `steal` up to `real`. The owner may have
        // popped meanwhile, moving `real`, so retry until the CAS lands.
        let mut prev = pack(first, first.wrapping_add(n));
        loop {
            let (steal, real) = unpack(prev);
            debug_assert_eq!(steal, first, "claim released by someone else");
            debug_assert_ne!(steal, real);
            // Release pairs with the owner's Acquire load of `head` before it
            // overwrites these slots: our reads happen-before its writes.
            match self.inner.head.compare_exchange(
                prev,
                pack(real, real),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return n,
                Err(actual) => prev = actual,
            }
        }
    }
}

impl<T> Clone for Steal<T> {
    fn clone(&self) -> Self {
        Steal {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for Steal<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Steal").field("len", &self.len()).finish()
    }
}

/// The batch handed to [`Overflow::push_batch`]: the claimed slots
/// `pos..end` in order, then the task whose push overflowed.
///
/// Dropping it drops whatever the receiver did not consume, so a receiver
/// that stops early (or panics) cannot leave tasks stranded in slots that
/// the owner will overwrite.
struct Drain<'a, T> {
    inner: &'a Inner<T>,
    pos: u32,
    end: u32,
    last: Option<T>,
}

impl<T> Iterator for Drain<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.pos == self.end {
            return self.last.take();
        }
        let pos = self.pos;
        self.pos = pos.wrapping_add(1);
        // SAFETY: `push_overflow` claimed `pos..end` by moving both halves
        // of `head` past them, and we (the owner) wrote those slots. Each is
        // taken once because `pos` advances first; the owner cannot push
        // into them while this borrow of `Local` is alive.
        Some(unsafe { self.inner.take(pos) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end.wrapping_sub(self.pos) as usize + usize::from(self.last.is_some());
        (n, Some(n))
    }
}

impl<T> ExactSizeIterator for Drain<'_, T> {}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        self.for_each(drop);
    }
}

#[cfg(all(test, not(loom)))]
// Items are boxed on purpose: a task taken twice or never becomes a double
// free or a leak that Miri and sanitizers report.
#[allow(clippy::vec_box)]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
