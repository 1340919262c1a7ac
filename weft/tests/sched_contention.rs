//! No task starves behind a task that keeps yielding, even when the OS
//! takes CPUs away from the workers (issue #13, "no starvation under
//! contention").
//!
//! The scenario: a task spends its budget in a loop, a million units at
//! most, until a flag is set; a second task, spawned just after it from
//! outside the runtime, sets the flag. Two threads spinning beside the
//! runtime (pinned to the machine's first two CPUs when possible) make the
//! OS preempt workers at random. The busy worker yields every 128 units;
//! a yield is deferred until the worker has looked at the drivers, so the
//! worker runs out of local work and searches: it reaches the global queue,
//! or steals the task from a worker that took it and was preempted, long
//! before a million units. 200 runs per flavour; a run that sees the flag
//! ends at once, so the whole test takes well under a second when it
//! passes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

const RUNS: usize = 200;
const MAX_UNITS: u32 = 1_000_000;

/// A thread spinning until `stop`, pinned to `cpu` if the OS allows it.
fn busy_loop(cpu: usize, stop: Arc<AtomicBool>) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        // SAFETY: `set` is a plain bit set on the stack; sched_setaffinity
        // reads `size_of_val(&set)` bytes of it, and pid 0 is this thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            // Best effort: pinning may be refused in a container.
            let _ = libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set);
        }
        while !stop.load(Ordering::Relaxed) {
            std::hint::spin_loop();
        }
    })
}

fn scenario(workers: usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..2).map(|cpu| busy_loop(cpu, stop.clone())).collect();
    let mut starved = Vec::new();
    for run in 0..RUNS {
        let rt = weft::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .unwrap();
        let saw_flag = rt.block_on(async {
            let flag = Arc::new(AtomicBool::new(false));
            let busy = {
                let flag = flag.clone();
                weft::spawn(async move {
                    for _ in 0..MAX_UNITS {
                        if flag.load(Ordering::Relaxed) {
                            return true;
                        }
                        weft::task::coop::consume_budget().await;
                    }
                    false
                })
            };
            weft::spawn(async move { flag.store(true, Ordering::Relaxed) });
            busy.await.unwrap()
        });
        if !saw_flag {
            starved.push(run);
        }
    }
    stop.store(true, Ordering::Relaxed);
    for s in spinners {
        s.join().unwrap();
    }
    assert!(
        starved.is_empty(),
        "{workers} workers: the flag-setting task had not run after {MAX_UNITS} budget units \
         in runs {starved:?} of {RUNS}"
    );
}

/// One test for the three worker counts, run one after another: the two
/// busy loops are then the only extra load this test adds (three tests in
/// parallel made it six, on a two-core machine).
#[test]
fn yielding_task_does_not_starve_a_new_task() {
    for workers in [1, 2, 4] {
        scenario(workers);
    }
}
