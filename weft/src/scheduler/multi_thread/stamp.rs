//! Where each worker of the multi-thread scheduler is: in a poll of which
//! task, or not ([`PollStamp`]), read by the long-poll monitor
//! (monitor.rs) without the worker's help.
//!
//! Owns: one stamp per worker (in its `Remote`): its poll number, the
//! task of its current poll, and the count of spawns it put in its LIFO
//! slot (the worker bumps it, the monitor reads it: monitor.rs, "Slow
//! unless a task was spawned"). A rescue thread (rescue.rs) has a stamp
//! too, in its `Rescuer`, written only by that thread (it has no core,
//! and never hands its polls to another thread).
//!
//! Invariant: **the hot path only stamps.** A worker writes its stamp at
//! the start and end of every poll: plain stores to a cache line only it
//! writes. `seq` is odd while a poll runs. The stamp is a seqlock with
//! one writer: the task's id and spawn location are stored before `seq`
//! turns odd (`Release`), after a `Release` fence that orders them after
//! the previous poll's closing `seq`; a reader that saw an odd `seq`
//! (`Acquire`), reads them, and after an `Acquire` fence sees the same
//! `seq` again has read that poll's and not the next one's (the fences
//! pair up whenever the reader read a newer poll's value). Both fences
//! cost nothing on x86 and ARM's `dmb ishst`/`ishld` elsewhere. Modelled
//! in `loom_stamp` below.
//!
//! **One writer: the thread that holds the worker's core.** When
//! `block_in_place` hands the core to a new thread mid-poll, the old
//! thread ends its poll on the stamp first ([`PollStamp::hand_off`]) and
//! never writes it again unless it takes the core back (then it stamps
//! the rest of its poll as a new one, [`PollStamp::resume`]). Before,
//! the old thread's end of its poll marked the new thread's poll ended
//! too (same `seq`), and the monitor never saw that poll stuck.

use super::Handle;
use crate::loom::{fence, AtomicPtr, AtomicU64, Ordering};
use crate::task::Notified;
use std::panic::Location;
use std::sync::Arc;

/// The poll a [`PollStamp::hand_off`] ended, for [`PollStamp::resume`].
pub(super) struct HandedOff {
    task_id: u64,
    spawned_at: &'static Location<'static>,
}

/// Where one worker is: in a poll (odd `seq`) of which task, or not. On a
/// cache line of its own: only its worker writes it.
#[repr(align(64))]
pub(crate) struct PollStamp {
    seq: AtomicU64,
    task_id: AtomicU64,
    spawned_at: AtomicPtr<Location<'static>>,
    /// Spawns this worker put in its LIFO slot (monitor.rs, "Slow unless
    /// a task was spawned").
    lifo_spawns: AtomicU64,
}

impl PollStamp {
    pub(crate) fn new() -> PollStamp {
        PollStamp {
            seq: AtomicU64::new(0),
            task_id: AtomicU64::new(0),
            spawned_at: AtomicPtr::new(std::ptr::null_mut()),
            lifo_spawns: AtomicU64::new(0),
        }
    }

    /// The worker starts polling `task` (only its worker calls this).
    #[inline]
    pub(crate) fn begin(&self, task: &Notified<Arc<Handle>>) {
        let header = task.header();
        self.begin_raw(header.id().as_u64(), header.spawned_at());
    }

    #[inline]
    fn begin_raw(&self, task_id: u64, spawned_at: &'static Location<'static>) {
        // Pairs with the fence in `task_of` (module doc).
        fence(Ordering::Release);
        self.task_id.store(task_id, Ordering::Relaxed);
        self.spawned_at
            .store(spawned_at as *const _ as *mut _, Ordering::Relaxed);
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq | 1, Ordering::Release);
    }

    /// `block_in_place` hands the worker to another thread in the middle
    /// of a poll: end it here, so the new thread is the stamp's only
    /// writer, and keep what [`PollStamp::resume`] needs if this thread
    /// takes the worker back before the new one starts. `None` outside a
    /// poll.
    pub(super) fn hand_off(&self) -> Option<HandedOff> {
        let seq = self.seq.load(Ordering::Relaxed);
        if seq & 1 == 0 {
            return None;
        }
        // Only this thread writes these: its own last stores.
        let task_id = self.task_id.load(Ordering::Relaxed);
        let at = self.spawned_at.load(Ordering::Relaxed);
        self.end();
        let spawned_at = location(at)?;
        Some(HandedOff {
            task_id,
            spawned_at,
        })
    }

    /// The thread that handed the worker off took it back: the poll it
    /// is in is stamped again, as a new poll.
    pub(super) fn resume(&self, handed_off: HandedOff) {
        self.begin_raw(handed_off.task_id, handed_off.spawned_at);
    }

    /// The poll ended.
    #[inline]
    pub(crate) fn end(&self) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store((seq | 1) + 1, Ordering::Release);
    }

    /// The worker's poll number: odd while a poll runs (`Acquire`: pairs
    /// with `begin_raw`'s store, for [`PollStamp::task_of`]).
    #[inline]
    pub(super) fn seq(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// Spawns this worker put in its LIFO slot so far.
    #[inline]
    pub(super) fn lifo_spawns(&self) -> u64 {
        self.lifo_spawns.load(Ordering::Relaxed)
    }

    /// One more spawn into the LIFO slot (only its worker calls this: a
    /// plain store, no read-modify-write).
    #[inline]
    pub(super) fn count_lifo_spawn(&self) {
        let spawns = self.lifo_spawns.load(Ordering::Relaxed);
        self.lifo_spawns.store(spawns + 1, Ordering::Relaxed);
    }

    /// The task of the poll numbered `seq` (read with `Acquire`), if that
    /// poll is still running.
    pub(super) fn task_of(&self, seq: u64) -> Option<(u64, &'static Location<'static>)> {
        let id = self.task_id.load(Ordering::Relaxed);
        let at = self.spawned_at.load(Ordering::Relaxed);
        // Pairs with the fence in `begin_raw` (module doc).
        fence(Ordering::Acquire);
        if self.seq.load(Ordering::Relaxed) != seq {
            return None;
        }
        Some((id, location(at)?))
    }
}

/// A stamp's `spawned_at`, if one was stored.
fn location(at: *mut Location<'static>) -> Option<&'static Location<'static>> {
    // SAFETY: the stamp stores only null or a `&'static Location`
    // (`begin_raw`), so a non-null value is one, valid for ever.
    unsafe { at.as_ref() }
}

#[cfg(all(test, loom))]
mod loom_stamp {
    //! The stamp's seqlock: a monitor that sampled an odd `seq` and then
    //! asks `task_of(seq)` gets that poll's task or `None`, never the task
    //! of the poll before or after it, whatever the worker does meanwhile.
    //! Removing either fence, or the re-read of `seq`, makes loom find a
    //! reader that pairs poll 1's `seq` with poll 2's task. The reader is a
    //! spawned thread: run on the model's main thread, its first load was
    //! never scheduled after the worker's stores, and the model passed
    //! without checking anything.

    use super::PollStamp;
    use crate::loom::Arc;
    use std::panic::Location;

    #[track_caller]
    fn here() -> &'static Location<'static> {
        Location::caller()
    }

    #[test]
    fn loom_poll_stamp_reader_never_mixes_two_polls() {
        loom::model(|| {
            let first = here();
            let second = here();
            let stamp = Arc::new(PollStamp::new());
            let worker = {
                let stamp = stamp.clone();
                loom::thread::spawn(move || {
                    stamp.begin_raw(1, first);
                    stamp.end();
                    stamp.begin_raw(2, second);
                })
            };
            let reader = loom::thread::spawn({
                let stamp = stamp.clone();
                move || {
                    let seq = stamp.seq();
                    if seq & 1 == 1 {
                        let expected = if seq == 1 { (1, first) } else { (2, second) };
                        if let Some((id, at)) = stamp.task_of(seq) {
                            assert_eq!(
                                (id, at),
                                expected,
                                "seq {seq} read with another poll's task"
                            );
                        }
                    }
                }
            });
            reader.join().unwrap();
            worker.join().unwrap();
            assert_eq!(stamp.task_of(3), Some((2, second)));
        });
    }
}
