//! `OwnedTasks`: the list through which a scheduler owns its live tasks.
//!
//! Owns: one reference to every task bound to the runtime and not yet
//! completed. That reference is what run-queue entries borrow (state.rs), so
//! a task is unlinked only (a) by the thread completing it, or (b) by
//! [`OwnedTasks::close_and_shutdown_all`], which claims idle tasks under the
//! shard lock and leaves running ones for their runner to release.
//!
//! The list is sharded by task id; each shard is an intrusive doubly linked
//! list through the tasks' trailers, behind its own mutex, with a `closed`
//! flag checked under that mutex so no task can be bound after shutdown
//! began. A task's `owner_id` is this list's id while linked and 0 once
//! unlinked (both written under the shard lock).

use super::core::{Header, Links};
use super::raw::RawTask;
use super::{Notified, Schedule, Task};
use crate::loom::{lock, Mutex};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_LIST_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) struct OwnedTasks<S: 'static> {
    shards: Box<[Mutex<Shard>]>,
    mask: usize,
    id: u64,
    _scheduler: PhantomData<S>,
}

struct Shard {
    head: Option<NonNull<Header>>,
    len: usize,
    spawned: u64,
    closed: bool,
}

// SAFETY: the raw pointers in a shard are only followed under its mutex.
unsafe impl Send for Shard {}

impl<S: Schedule> OwnedTasks<S> {
    /// `shards` is rounded up to a power of two.
    pub(crate) fn new(shards: usize) -> OwnedTasks<S> {
        let n = shards.max(1).next_power_of_two();
        let shards = (0..n)
            .map(|_| {
                Mutex::new(Shard {
                    head: None,
                    len: 0,
                    spawned: 0,
                    closed: false,
                })
            })
            .collect::<Vec<_>>()
            .into_boxed_slice();
        OwnedTasks {
            shards,
            mask: n - 1,
            id: NEXT_LIST_ID.fetch_add(1, Ordering::Relaxed),
            _scheduler: PhantomData,
        }
    }

    fn shard_of(&self, header: &Header) -> &Mutex<Shard> {
        &self.shards[header.id().as_u64() as usize & self.mask]
    }

    /// Allocate a task owned by this list. Returns its join handle and its
    /// first run-queue entry (`None` if the list is closed: the task was
    /// cancelled at once).
    pub(crate) fn spawn<F>(
        &self,
        future: F,
        scheduler: S,
        id: super::Id,
        spawned_at: &'static std::panic::Location<'static>,
    ) -> (super::JoinHandle<F::Output>, Option<Notified<S>>)
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (task, notified, join) = super::new_task(future, scheduler, id, spawned_at);
        (join, self.bind(task, notified))
    }

    /// [`OwnedTasks::spawn`] for a future that need not be `Send`.
    ///
    /// # Safety
    /// Every task of this list is polled, cancelled (including by
    /// [`OwnedTasks::close_and_shutdown_all`]) and dropped on the calling
    /// thread only.
    pub(crate) unsafe fn spawn_local<F>(
        &self,
        future: F,
        scheduler: S,
        id: super::Id,
        spawned_at: &'static std::panic::Location<'static>,
    ) -> (super::JoinHandle<F::Output>, Option<Notified<S>>)
    where
        F: std::future::Future + 'static,
        F::Output: 'static,
    {
        // SAFETY: forwarded caller contract.
        let (task, notified, join) =
            unsafe { super::new_task_local(future, scheduler, id, spawned_at) };
        (join, self.bind(task, notified))
    }

    /// Link a new task. Returns its first run-queue entry, or `None` if the
    /// list is closed, in which case the task has been cancelled already.
    pub(crate) fn bind(&self, task: Task<S>, notified: Notified<S>) -> Option<Notified<S>> {
        let raw = task.into_raw();
        let header = raw.header();
        {
            let mut shard = lock(self.shard_of(header));
            if !shard.closed {
                // SAFETY: the task is not yet visible to other threads.
                unsafe { header.set_owner_id(self.id) };
                // SAFETY: shard lock held.
                unsafe { push_front(&mut shard, raw.header_ptr()) };
                shard.len += 1;
                shard.spawned += 1;
                return Some(notified);
            }
        }
        // Closed: cancel it now; its JoinHandle will report a cancellation.
        // SAFETY: we hold the owner reference of an unbound task.
        let cancelled = unsafe { raw.shutdown() };
        debug_assert!(cancelled, "a brand-new task is idle");
        // release() found it unbound, so the owner reference is still ours.
        // SAFETY: we own that reference.
        unsafe { raw.drop_reference() };
        None
    }

    /// Unlink a completing task, returning the list's reference.
    pub(crate) fn remove(&self, raw: RawTask) -> Option<Task<S>> {
        let header = raw.header();
        let mut shard = lock(self.shard_of(header));
        // SAFETY: shard lock held.
        if unsafe { header.owner_id() } != self.id {
            return None;
        }
        // SAFETY: shard lock held, and the task is linked in this shard.
        unsafe {
            unlink(&mut shard, raw.header_ptr());
            header.set_owner_id(0);
        }
        shard.len -= 1;
        // SAFETY: the reference the list held is handed to the caller.
        Some(unsafe { Task::from_raw(raw) })
    }

    /// Close the list and cancel every idle task. Tasks being polled right
    /// now are flagged and stay linked: their runner cancels and releases
    /// them at the end of the poll.
    ///
    /// Call only once no run-queue entry can be polled any more on the
    /// list's reference (a runner that holds a reference of its own,
    /// `ReferencedNotified`, may still poll: it finds the task complete).
    pub(crate) fn close_and_shutdown_all(&self) {
        for shard in self.shards.iter() {
            let claimed = {
                let mut shard = lock(shard);
                shard.closed = true;
                let mut claimed = Vec::new();
                let mut cur = shard.head;
                while let Some(ptr) = cur {
                    // SAFETY: shard lock held; linked tasks are alive.
                    let header = unsafe { ptr.as_ref() };
                    // SAFETY: as above.
                    cur = unsafe { Header::trailer(ptr).as_ref().links().next };
                    if header.state().transition_to_shutdown() == super::state::ToShutdown::Cancel {
                        // SAFETY: shard lock held, task linked here.
                        unsafe {
                            unlink(&mut shard, ptr);
                            header.set_owner_id(0);
                        }
                        shard.len -= 1;
                        claimed.push(ptr);
                    }
                }
                claimed
            };
            // Drop the futures outside the lock: a future's drop may spawn or
            // wake, which takes shard locks.
            for ptr in claimed {
                // SAFETY: unlinked by us, so we own the list's reference; the
                // shutdown transition gave us RUNNING.
                unsafe {
                    let raw = RawTask::from_raw(ptr);
                    raw.cancel_claimed();
                    raw.drop_reference();
                }
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).len).sum()
    }

    pub(crate) fn spawned_count(&self) -> u64 {
        self.shards.iter().map(|s| lock(s).spawned).sum()
    }
}

/// # Safety
/// Shard lock held; `ptr` is alive and not linked anywhere.
unsafe fn push_front(shard: &mut Shard, ptr: NonNull<Header>) {
    // SAFETY: forwarded contract; linked tasks are alive.
    unsafe {
        let trailer = Header::trailer(ptr).as_ref();
        trailer.set_links(Links {
            prev: None,
            next: shard.head,
        });
        if let Some(old) = shard.head {
            let t = Header::trailer(old).as_ref();
            let mut l = t.links();
            l.prev = Some(ptr);
            t.set_links(l);
        }
    }
    shard.head = Some(ptr);
}

/// # Safety
/// Shard lock held; `ptr` is linked in this shard.
unsafe fn unlink(shard: &mut Shard, ptr: NonNull<Header>) {
    // SAFETY: forwarded contract; neighbours are linked, hence alive.
    unsafe {
        let links = Header::trailer(ptr).as_ref().links();
        match links.prev {
            Some(p) => {
                let t = Header::trailer(p).as_ref();
                let mut l = t.links();
                l.next = links.next;
                t.set_links(l);
            }
            None => shard.head = links.next,
        }
        if let Some(n) = links.next {
            let t = Header::trailer(n).as_ref();
            let mut l = t.links();
            l.prev = links.prev;
            t.set_links(l);
        }
        Header::trailer(ptr).as_ref().set_links(Links::default());
    }
}

impl<S: 'static> Drop for OwnedTasks<S> {
    fn drop(&mut self) {
        // Tasks still linked here are being run by a thread that outlived
        // the runtime (block_in_place); they keep the scheduler handle, and
        // with it this list, alive, so reaching here means the list is empty.
        debug_assert!(
            self.shards.iter().all(|s| lock(s).len == 0) || std::thread::panicking(),
            "owned task list dropped while tasks are still linked"
        );
    }
}
