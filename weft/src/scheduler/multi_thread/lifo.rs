//! The LIFO slot: the task the running task woke (or spawned) last, run
//! next by its worker, and stealable by the monitor when that worker is
//! stuck in a poll, without costing the owner an atomic read-modify-write.
//!
//! Owns: one worker's slot ([`LifoSlot`]) and the process-wide asymmetric
//! fence the steal relies on.
//!
//! Invariants:
//! - **Exclusive access to the cell.** The task cell is touched only (a) by
//!   the owner inside [`LifoSlot::with_owner`] while `owner_busy` is set and
//!   it saw no `steal_request`, or (b) by whoever holds `steal_lock`: a
//!   thief, after it set `steal_request`, ran the heavy fence and saw
//!   `owner_busy` clear; or the owner on its slow path (it saw a request).
//! - **Why (a) and a thief never overlap.** The owner stores `owner_busy`,
//!   runs a compiler-only fence, then loads `steal_request`; the thief
//!   stores `steal_request`, runs `membarrier(PRIVATE_EXPEDITED)` (a full
//!   barrier on every CPU running one of our threads), then loads
//!   `owner_busy`. This is Dekker's handshake with the fence made
//!   asymmetric (the idea of Linux's `membarrier(2)` and of userspace
//!   RCU): the barrier lands on the owner's CPU either before its store
//!   (then its load sees the request and it takes the slow path) or after
//!   it (then the thief sees `owner_busy` and backs off). The owner pays
//!   three plain memory operations per slot access; the thief pays a
//!   system call, and only steals from a worker the monitor saw in one
//!   poll for a whole sampling period.
//! - `owner_busy` is cleared with `Release` and read with `Acquire`, so a
//!   thief that sees it clear also sees the cell as the owner left it; the
//!   thief clears `steal_request` with `Release` and the owner reads it with
//!   `Acquire`, so an owner back on the fast path sees what the thief took.
//! - `occupied` mirrors "the cell holds a task" for lock-free peeks (the
//!   monitor's "is anything stranded here", the owner's "do I hold work");
//!   it is written only by whoever has the cell, and a stale read only
//!   delays a steal or a park by one look.
//! - Where `membarrier` is unavailable (kernels before 4.14, seccomp),
//!   nothing is ever stolen: the slot is then the owner's alone, as before.
//!
//! Under loom both fences are `SeqCst` fences, the symmetric form of the
//! same handshake, which is what the model (`loom_lifo`) checks.

use crate::loom::{lock, AtomicBool, Mutex, Ordering, UnsafeCell};

/// One worker's LIFO slot. On cache lines of its own: the owner writes it
/// on every slot access, and nobody else but a rare thief does.
#[repr(align(128))]
pub(crate) struct LifoSlot<T> {
    task: UnsafeCell<Option<T>>,
    occupied: AtomicBool,
    owner_busy: AtomicBool,
    steal_request: AtomicBool,
    steal_lock: Mutex<()>,
}

// SAFETY: the cell is accessed by one thread at a time (module doc,
// "Exclusive access"), so sharing the slot only moves `T`s between
// threads, which `T: Send` allows.
unsafe impl<T: Send> Sync for LifoSlot<T> {}
// SAFETY: as above; the slot owns at most one `T`.
unsafe impl<T: Send> Send for LifoSlot<T> {}

impl<T> LifoSlot<T> {
    pub(crate) fn new() -> LifoSlot<T> {
        LifoSlot {
            task: UnsafeCell::new(None),
            occupied: AtomicBool::new(false),
            owner_busy: AtomicBool::new(false),
            steal_request: AtomicBool::new(false),
            steal_lock: Mutex::new(()),
        }
    }

    /// Run `f` on the slot's content. Only the slot's owner (the thread
    /// holding the worker's core) calls this.
    #[inline]
    pub(crate) fn with_owner<R>(&self, f: impl FnOnce(&mut Option<T>) -> R) -> R {
        self.owner_busy.store(true, Ordering::Relaxed);
        light_fence();
        if self.steal_request.load(Ordering::Acquire) {
            return self.with_owner_slow(f);
        }
        // SAFETY: case (a) of the module doc: `owner_busy` is set and no
        // steal was requested after the fence, so no thief touches the
        // cell until `owner_busy` is cleared below.
        let result = self.task.with_mut(|task| {
            let task = unsafe { &mut *task };
            let result = f(task);
            self.occupied.store(task.is_some(), Ordering::Relaxed);
            result
        });
        self.owner_busy.store(false, Ordering::Release);
        result
    }

    /// A thief is (or was just) at work: wait for it under the lock.
    #[cold]
    fn with_owner_slow<R>(&self, f: impl FnOnce(&mut Option<T>) -> R) -> R {
        self.owner_busy.store(false, Ordering::Release);
        let _steal = lock(&self.steal_lock);
        // SAFETY: case (b) of the module doc: we hold `steal_lock`.
        self.task.with_mut(|task| {
            let task = unsafe { &mut *task };
            let result = f(task);
            self.occupied.store(task.is_some(), Ordering::Relaxed);
            result
        })
    }

    /// Whether the slot looked occupied (a hint: see the module doc).
    #[inline]
    pub(crate) fn looks_occupied(&self) -> bool {
        self.occupied.load(Ordering::Relaxed)
    }

    /// Take the task unless the owner is using the slot right now. Only
    /// the monitor calls this, for a worker it saw stuck in one poll.
    pub(crate) fn steal(&self) -> Option<T> {
        if !self.looks_occupied() || !heavy_fence_available() {
            return None;
        }
        let _steal = lock(&self.steal_lock);
        self.steal_request.store(true, Ordering::Relaxed);
        heavy_fence();
        let stolen = if self.owner_busy.load(Ordering::Acquire) {
            None
        } else {
            // SAFETY: case (b) of the module doc: we hold `steal_lock`, set
            // the request and saw the owner outside the slot after the
            // heavy fence.
            self.task.with_mut(|task| {
                let stolen = unsafe { &mut *task }.take();
                self.occupied.store(false, Ordering::Relaxed);
                stolen
            })
        };
        self.steal_request.store(false, Ordering::Release);
        stolen
    }
}

/// The owner's half of the handshake: orders its `owner_busy` store
/// before its `steal_request` load against the thief's heavy fence. (The
/// monitor's spawn handshake uses the same pair: monitor.rs.)
#[inline(always)]
pub(super) fn light_fence() {
    #[cfg(not(loom))]
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    #[cfg(loom)]
    crate::loom::fence(Ordering::SeqCst);
}

/// Get the heavy fence ready in the background: registering with the
/// kernel waits for an RCU grace period (14 ms measured here), which must
/// neither delay `Runtime::new` nor the first steal. Called when a
/// multi_thread runtime is built; until the registration is done,
/// [`LifoSlot::steal`] steals nothing.
pub(crate) fn prepare_steals() {
    #[cfg(not(loom))]
    membarrier::register_in_background();
}

#[cfg(loom)]
pub(super) fn heavy_fence_available() -> bool {
    true
}

#[cfg(loom)]
pub(super) fn heavy_fence() {
    crate::loom::fence(Ordering::SeqCst);
}

#[cfg(not(loom))]
pub(super) use membarrier::{available as heavy_fence_available, fence as heavy_fence};

#[cfg(not(loom))]
mod membarrier {
    //! `membarrier(2)` with `MEMBARRIER_CMD_PRIVATE_EXPEDITED`: a full
    //! memory barrier on every CPU currently running a thread of this
    //! process (and, through the scheduler, on any that runs one later).

    use std::sync::atomic::{AtomicU8, Ordering};

    const CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

    /// 0: not asked yet, 1: registering, 2: registered, 3: refused.
    static STATE: AtomicU8 = AtomicU8::new(0);

    /// Start registering the process (the kernel requires it before the
    /// first expedited barrier) on a thread of its own, once.
    pub(super) fn register_in_background() {
        if STATE
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("weft-membarrier".into())
            .spawn(|| STATE.store(if register() { 2 } else { 3 }, Ordering::Release));
        if spawned.is_err() {
            STATE.store(3, Ordering::Release);
        }
    }

    fn register() -> bool {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            // SAFETY: membarrier takes a command and flags and touches no
            // memory of ours.
            let r = unsafe {
                libc::syscall(libc::SYS_membarrier, CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0)
            };
            r == 0
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            let _ = (CMD_PRIVATE_EXPEDITED, CMD_REGISTER_PRIVATE_EXPEDITED);
            false
        }
    }

    /// Whether the registration is done (and succeeded).
    pub(in crate::scheduler::multi_thread) fn available() -> bool {
        STATE.load(Ordering::Acquire) == 2
    }

    /// Only called after [`available`] returned true.
    pub(in crate::scheduler::multi_thread) fn fence() {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            // SAFETY: as in `register`; the process is registered.
            let r = unsafe { libc::syscall(libc::SYS_membarrier, CMD_PRIVATE_EXPEDITED, 0, 0) };
            // It cannot fail once registered; if it ever did, the steal
            // would be unsound, so stop here rather than race.
            assert_eq!(
                r, 0,
                "membarrier(PRIVATE_EXPEDITED) failed after registration"
            );
        }
    }
}

#[cfg(all(test, loom))]
mod loom_lifo {
    //! The steal handshake: the owner pushes and takes while the monitor
    //! steals. Every task ends up in exactly one place (taken by the owner,
    //! stolen, or still in the slot): none is lost, none is run twice, and
    //! loom sees no concurrent access to the cell. Each of these mutations
    //! makes loom fail: dropping the owner's fence, dropping the thief's
    //! fence, the thief not checking `owner_busy`, the owner not checking
    //! `steal_request`.

    use super::LifoSlot;
    use crate::loom::Arc;

    #[test]
    fn loom_lifo_steal_never_duplicates_or_loses_a_task() {
        loom::model(|| {
            let slot = Arc::new(LifoSlot::<u32>::new());
            let thief = {
                let slot = slot.clone();
                loom::thread::spawn(move || slot.steal())
            };
            let owner = {
                let slot = slot.clone();
                loom::thread::spawn(move || {
                    let mut taken = Vec::new();
                    // Push 1; push 2 (displacing 1, as a second wake does);
                    // then the run loop takes what is there.
                    assert_eq!(slot.with_owner(|s| s.replace(1)), None);
                    taken.extend(slot.with_owner(|s| s.replace(2)));
                    taken.extend(slot.with_owner(Option::take));
                    taken
                })
            };
            let mut seen = owner.join().unwrap();
            seen.extend(thief.join().unwrap());
            seen.extend(slot.with_owner(Option::take));
            seen.sort_unstable();
            assert_eq!(seen, [1, 2], "a task was lost or seen twice");
            assert!(!slot.looks_occupied());
        });
    }
}
