//! `block_in_place`: a task blocks its thread, and the thread's worker
//! (its core: queue, LIFO slot, deferred wakers) moves to a new thread
//! first, so the tasks queued behind it keep running.
//!
//! Owns: the hand-over and the take-back. Invariant: the core is in
//! exactly one place, the worker's `core` mutex while a replacement thread
//! starts, a thread's context while it runs tasks; when the closure returns,
//! this thread takes the core back only if the replacement has not taken it
//! yet, and otherwise finishes its task without a core.

use super::super::stamp::HandedOff;
use super::{launch, Worker};
use crate::coop;
use crate::loom::lock;
use crate::runtime::context;
use std::sync::Arc;

/// This thread runs a multi_thread runtime's worker (Tokio's test in its
/// `block_in_place`: the scheduler context, not the entered flag).
fn on_multi_thread_worker() -> bool {
    context::with_scheduler(|cx| matches!(cx, Some(crate::scheduler::Context::MultiThread(_))))
}

/// See [`crate::task::block_in_place`].
#[track_caller]
pub(crate) fn block_in_place<F: FnOnce() -> R, R>(f: F) -> R {
    match context::entered() {
        context::Entered::No => return f(),
        // On a multi_thread worker (its scheduler context is this thread's,
        // core or not) it is allowed whatever the flag says, as in Tokio:
        // a `LocalSet` polled by a worker's task, or inside a
        // `Handle::block_on` in a `block_in_place` closure, clears the flag
        // but its tasks stay on this thread, which goes on polling them.
        context::Entered::Yes {
            allow_block_in_place: false,
        } if !on_multi_thread_worker() => panic!(
            "can call blocking only when running on the multi-threaded runtime: \
             block_in_place can only be called from a multi_thread runtime's worker: this \
             thread is driving a current_thread runtime (or a block_on), which has no other \
             worker to hand its tasks to, or a LocalSet, whose tasks cannot move to another \
             thread. Use weft::task::spawn_blocking instead, or build the runtime with \
             Builder::new_multi_thread()."
        ),
        context::Entered::Yes { .. } => {}
    }
    let moved = context::with_scheduler(|cx| {
        let Some(crate::scheduler::Context::MultiThread(cx)) = cx else {
            return None;
        };
        let core = cx.core.borrow_mut().take()?;
        // Tasks that yielded are woken now (into the queue that moves with
        // the core), not when the new thread gets to its next driver poll:
        // the closure may wait for one of them, and that thread may be slow
        // to start (Tokio's fix for tokio#7877).
        let mut core = cx.wake_deferred(core);
        // The new thread stamps its polls from now on (stamp.rs).
        let poll = cx.worker.handle.remotes[core.index].stamp.hand_off();
        // Move the slot's task to the queue, where sleepers can take it at
        // once (the monitor would only steal it a sampling period later).
        if let Some(task) = core.take_lifo() {
            let overflowed = core
                .run_queue
                .push_back_or_overflow(task, &cx.worker.handle.inject);
            core.stats.overflow_count += u64::from(overflowed);
        }
        if core.is_searching {
            core.transition_from_searching(&cx.worker.handle, super::Found::Elsewhere);
        }
        // The replacement thread may be slow to start (the blocking pool
        // may even be full): let a sleeper take the queued work meanwhile.
        core.notify_after_poll = false;
        if core.run_queue.has_tasks() {
            cx.worker.handle.notify_parked();
        }
        // Nobody reaps the core's ring until the new thread reaches its
        // first batch point (the pool may be slow to start it): the
        // driver's holder takes its completions meanwhile
        // (runtime/io/uring/watch.rs).
        cx.worker.handle.drivers.ring_owner_leaves(core.index);
        let stamp_back = poll.map(|poll| (core.index, poll));
        *lock(&cx.worker.core) = Some(core);
        launch(cx.worker.clone());
        Some((cx.worker.clone(), stamp_back))
    });
    let Some((worker, stamp_back)) = moved else {
        // Nested block_in_place, or no core (a `block_on` thread): just
        // block, without the budget, as with a core below (and as in
        // Tokio): `f` may drive futures itself, and a budget spent there
        // would defer their wake-ups to a runtime this thread is not
        // running.
        struct RestoreBudget(coop::Budget);
        impl Drop for RestoreBudget {
            fn drop(&mut self) {
                coop::restore(self.0);
            }
        }
        let _budget = RestoreBudget(coop::stop());
        return context::exit_runtime(f);
    };

    // When `f` returns, take the core back if the replacement thread has not
    // started yet; otherwise this thread finishes its task without a core
    // and stops being a worker (run_task sees the core gone).
    struct Reclaim {
        worker: Arc<Worker>,
        budget: coop::Budget,
        /// The worker's index and the poll `hand_off` ended, to stamp the
        /// rest of it if this thread takes the core back.
        stamp_back: Option<(usize, HandedOff)>,
    }
    impl Drop for Reclaim {
        fn drop(&mut self) {
            coop::restore(self.budget);
            let core = lock(&self.worker.core).take();
            if let Some(core) = core {
                // The rest of this poll is the worker's again.
                if let Some((index, poll)) = self.stamp_back.take() {
                    self.worker.handle.remotes[index].stamp.resume(poll);
                }
                context::with_scheduler(|cx| {
                    if let Some(crate::scheduler::Context::MultiThread(cx)) = cx {
                        *cx.core.borrow_mut() = Some(core);
                    }
                });
            }
        }
    }
    let _reclaim = Reclaim {
        worker,
        budget: coop::stop(),
        stamp_back,
    };
    context::exit_runtime(f)
}
