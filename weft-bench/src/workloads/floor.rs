//! Floor rows: what spawning would cost if the runtime were free.
//!
//! A spawned task needs at least one heap allocation holding its future, so
//! `NUM_SPAWN` × (allocate + free) is a lower bound for `spawn_many_local`
//! that no runtime can beat. Two floors, both without any runtime:
//!
//! - `floor_box_task_future`: exactly spawn_many_local's per-task work minus
//!   scheduling — clone the `Arc` and the `SyncSender`, build the task's
//!   future (same captures, hence same type layout as the spawned one),
//!   `Box::new` it, drop it (which drops the clones);
//! - `floor_alloc_only`: allocate and free a block of that future's size and
//!   alignment, nothing else.
//!
//! `black_box` keeps the optimiser from eliding the allocation, which it may
//! legally do for a `Box` that never escapes.

use super::NUM_SPAWN;
use crate::harness::Side;
use std::hint::black_box;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{mpsc, Arc};

/// The spawn_many_local task body. An `async fn` keeps its arguments in its
/// state exactly as the spawned `async move` block keeps its captures, so the
/// two futures have the same size (checked by a test below).
async fn task_future(tx: mpsc::SyncSender<()>, rem: Arc<AtomicUsize>) {
    if 1 == rem.fetch_sub(1, Relaxed) {
        tx.send(()).unwrap();
    }
}

/// Size of the spawn_many_local task future in bytes (reported in the notes).
pub fn task_future_size() -> usize {
    let (tx, _rx) = mpsc::sync_channel(1);
    std::mem::size_of_val(&task_future(tx, Arc::new(AtomicUsize::new(0))))
}

struct BoxTaskFuture {
    tx: mpsc::SyncSender<()>,
    rem: Arc<AtomicUsize>,
    // Keeps the channel open, like the bench's receiver.
    _rx: mpsc::Receiver<()>,
}

/// Build the `floor_box_task_future` side.
pub fn box_task_future() -> Box<dyn Side> {
    let (tx, rx) = mpsc::sync_channel(1000);
    Box::new(BoxTaskFuture {
        tx,
        rem: Arc::new(AtomicUsize::new(0)),
        _rx: rx,
    })
}

impl Side for BoxTaskFuture {
    fn run(&mut self) {
        for _ in 0..NUM_SPAWN {
            let fut = task_future(self.tx.clone(), self.rem.clone());
            drop(black_box(Box::new(fut)));
        }
    }
}

struct AllocOnly {
    /// Elements of `u64` (8-byte aligned, like the future) per block.
    words: usize,
}

/// Build the `floor_alloc_only` side.
pub fn alloc_only() -> Box<dyn Side> {
    Box::new(AllocOnly {
        words: task_future_size().div_ceil(8),
    })
}

impl Side for AllocOnly {
    fn run(&mut self) {
        for _ in 0..NUM_SPAWN {
            drop(black_box(Vec::<u64>::with_capacity(black_box(self.words))));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_future_matches_spawned_future_size() {
        let (tx, _rx) = mpsc::sync_channel::<()>(1);
        let rem = Arc::new(AtomicUsize::new(0));
        // The block spawn_many_local hands to `spawn`, verbatim.
        let spawned = async move {
            if 1 == rem.fetch_sub(1, Relaxed) {
                tx.send(()).unwrap();
            }
        };
        assert_eq!(std::mem::size_of_val(&spawned), task_future_size());
    }
}
