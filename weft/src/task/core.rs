//! The task cell: the one allocation behind every spawned task.
//!
//! Owns: the memory layout. A `#[repr(C)]` [`Cell`] is a [`Header`] (hot:
//! touched by every poll, wake and queue operation), a [`Core`] (the
//! scheduler handle and the future or its output) and a [`Trailer`] (cold:
//! owned-list links and the join waker). Because `Header` is the first field,
//! a pointer to the cell is a pointer to its header: that is the pointer the
//! waker, the queues and the handles carry.
//!
//! Field access rules (each `unsafe` access elsewhere cites one of these):
//! - **stage**: only the thread holding `RUNNING`, or, once `COMPLETE` is
//!   set, the owner of the output (the `JoinHandle` if `JOIN_INTEREST` was set
//!   at completion, else the completing thread).
//! - **queue_next**: only the run queue that currently holds the task's entry
//!   (under the inject queue's lock).
//! - **owned links**: only under the lock of the owned-list shard the task
//!   belongs to.
//! - **join waker**: the `JoinHandle` while `JOIN_WAKER` is clear and the task
//!   is not complete; the runtime while `JOIN_WAKER` is set. See `state.rs`.
//! - **owner_id**: written once when the task is bound to an owned list,
//!   before any other thread can see the task.

use super::id::Id;
use super::raw::Vtable;
use super::state::State;
use super::JoinError;
use crate::loom::UnsafeCell;
use std::future::Future;
use std::panic::Location;
use std::ptr::NonNull;
use std::task::Waker;

#[repr(C)]
pub(super) struct Cell<T: Future, S> {
    pub(super) header: Header,
    pub(super) core: Core<T, S>,
    pub(super) trailer: Trailer,
}

/// The hot part of a task. Kept to a few words so a poll or a wake touches
/// a single cache line.
#[repr(C)]
pub(crate) struct Header {
    pub(super) state: State,
    /// Intrusive link for the inject queue.
    pub(super) queue_next: UnsafeCell<Option<NonNull<Header>>>,
    pub(super) vtable: &'static Vtable,
    /// Which owned list holds the task (0 = none yet).
    pub(super) owner_id: UnsafeCell<u64>,
    pub(super) id: Id,
    /// Where the task was spawned (for the long-poll hook).
    pub(super) spawned_at: &'static Location<'static>,
}

// SAFETY: every field of the header is either atomic or accessed under the
// rules in the module doc, which serialise access across threads.
unsafe impl Send for Header {}
// SAFETY: as above.
unsafe impl Sync for Header {}

pub(super) struct Core<T: Future, S> {
    pub(super) scheduler: S,
    pub(super) stage: UnsafeCell<Stage<T>>,
}

pub(super) enum Stage<T: Future> {
    Running(T),
    Finished(Result<T::Output, JoinError>),
    Consumed,
}

pub(crate) struct Trailer {
    pub(super) owned: UnsafeCell<Links>,
    pub(super) waker: UnsafeCell<Option<Waker>>,
}

/// Owned-list links (doubly linked through the trailers).
#[derive(Default, Clone, Copy)]
pub(crate) struct Links {
    pub(crate) prev: Option<NonNull<Header>>,
    pub(crate) next: Option<NonNull<Header>>,
}

impl<T: Future, S> Cell<T, S> {
    pub(super) fn new(
        future: T,
        scheduler: S,
        id: Id,
        vtable: &'static Vtable,
        spawned_at: &'static Location<'static>,
    ) -> Box<Self> {
        Box::new(Cell {
            header: Header {
                state: State::new(),
                queue_next: UnsafeCell::new(None),
                vtable,
                owner_id: UnsafeCell::new(0),
                id,
                spawned_at,
            },
            core: Core {
                scheduler,
                stage: UnsafeCell::new(Stage::Running(future)),
            },
            trailer: Trailer {
                owned: UnsafeCell::new(Links::default()),
                waker: UnsafeCell::new(None),
            },
        })
    }
}

impl Header {
    pub(crate) fn id(&self) -> Id {
        self.id
    }

    /// Where the task was spawned: the caller of the public `spawn`
    /// function (they are `#[track_caller]` and pass it down).
    pub(crate) fn spawned_at(&self) -> &'static Location<'static> {
        self.spawned_at
    }

    pub(crate) fn state(&self) -> &State {
        &self.state
    }

    /// # Safety
    /// Caller is the run queue holding this task's entry (module doc).
    pub(crate) unsafe fn set_next(&self, next: Option<NonNull<Header>>) {
        // SAFETY: caller contract above; the pointer comes from the cell.
        self.queue_next.with_mut(|p| unsafe { *p = next });
    }

    /// # Safety
    /// As [`Header::set_next`].
    pub(crate) unsafe fn get_next(&self) -> Option<NonNull<Header>> {
        // SAFETY: caller contract above.
        self.queue_next.with(|p| unsafe { *p })
    }

    /// # Safety
    /// `me` points to a live task cell.
    pub(crate) unsafe fn trailer(me: NonNull<Header>) -> NonNull<Trailer> {
        // SAFETY: the vtable's offset was computed for this cell's layout.
        unsafe {
            let offset = me.as_ref().vtable.trailer_offset;
            NonNull::new_unchecked(me.as_ptr().cast::<u8>().add(offset).cast::<Trailer>())
        }
    }

    /// # Safety
    /// Caller holds the owned-list lock, or owns the task exclusively.
    pub(crate) unsafe fn owner_id(&self) -> u64 {
        // SAFETY: caller contract above.
        self.owner_id.with(|p| unsafe { *p })
    }

    /// # Safety
    /// Called once, before the task is visible to another thread.
    pub(crate) unsafe fn set_owner_id(&self, owner: u64) {
        // SAFETY: caller contract above.
        self.owner_id.with_mut(|p| unsafe { *p = owner });
    }
}

impl Trailer {
    /// # Safety
    /// Caller holds the owned-list lock of this task's shard.
    pub(crate) unsafe fn links(&self) -> Links {
        // SAFETY: caller contract above.
        self.owned.with(|p| unsafe { *p })
    }

    /// # Safety
    /// As [`Trailer::links`].
    pub(crate) unsafe fn set_links(&self, links: Links) {
        // SAFETY: caller contract above.
        self.owned.with_mut(|p| unsafe { *p = links });
    }
}
