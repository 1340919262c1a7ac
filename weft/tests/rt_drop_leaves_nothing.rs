//! A runtime dropped from outside is gone when its drop returns, as
//! Tokio's is: every thread it started has exited and every descriptor it
//! opened is closed. (The monitor thread of a multi-thread runtime once
//! outlived the drop and closed its timerfd a moment later, under a
//! program that had just used every descriptor: net_emfile.rs saw its
//! `accept` succeed on the freed number about once in fifty runs.)
//!
//! A binary of its own with a single test: it counts the process's
//! threads and descriptors, which other tests would change meanwhile.

use std::time::Duration;
use weft::runtime::{Builder, Runtime};

/// A flavour's name and how to build it.
type Flavour = (&'static str, fn() -> Runtime);

fn count(dir: &str) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

#[test]
fn a_dropped_runtime_leaves_no_thread_and_no_descriptor() {
    let builders: [Flavour; 3] = [
        ("current_thread", || {
            Builder::new_current_thread().enable_all().build().unwrap()
        }),
        ("multi_thread(1)", || {
            Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap()
        }),
        ("multi_thread(4)", || {
            Builder::new_multi_thread()
                .worker_threads(4)
                .enable_all()
                .build()
                .unwrap()
        }),
    ];
    // The first multi-thread runtime of a process starts a one-off thread
    // of the process, not of the runtime (lifo.rs: the `membarrier`
    // registration), which exits on its own: let it come and go first.
    let before_any = count("/proc/self/task");
    drop(builders[2].1());
    let settled = std::time::Instant::now() + Duration::from_secs(5);
    while count("/proc/self/task") > before_any && std::time::Instant::now() < settled {
        std::thread::sleep(Duration::from_millis(10));
    }
    for round in 0..20 {
        for (name, build) in builders {
            let threads = count("/proc/self/task");
            let fds = count("/proc/self/fd");
            let rt = build();
            rt.block_on(async {
                // Some of everything: tasks, a blocking thread, a timer.
                let tasks: Vec<_> = (0..8).map(|i| weft::spawn(async move { i })).collect();
                for task in tasks {
                    task.await.unwrap();
                }
                weft::task::spawn_blocking(|| ()).await.unwrap();
                weft::time::sleep(Duration::from_millis(1)).await;
            });
            drop(rt);
            assert_eq!(
                count("/proc/self/fd"),
                fds,
                "{name}: round {round}: descriptors left after the drop"
            );
            // A joined thread can still be listed for a moment while the
            // kernel releases it: allow that, not a thread that runs on.
            let released = std::time::Instant::now() + Duration::from_secs(1);
            while count("/proc/self/task") > threads && std::time::Instant::now() < released {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert_eq!(
                count("/proc/self/task"),
                threads,
                "{name}: round {round}: threads left after the drop"
            );
        }
    }
}
