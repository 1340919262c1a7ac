//! Thousands of short-lived children (issue 14's bar): every one reaped, no
//! zombie and no leaked fd afterwards, on every flavour. One test function
//! that runs the flavours one after another, so that no other test of this
//! binary spawns children or opens fds while the counts are taken.

#[path = "support/process_cases.rs"]
#[allow(dead_code)]
mod process_cases;

use process_cases::process_exists;
use std::time::Duration;
use weft::process::Command;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

async fn spawn_and_reap(total: usize, at_once: usize) -> Vec<u32> {
    let mut pids = Vec::with_capacity(total);
    let mut batch = Vec::new();
    for i in 0..total {
        let mut child = Command::new("true").spawn().unwrap();
        pids.push(child.id().unwrap());
        batch.push(weft::spawn(async move { child.wait().await.unwrap() }));
        if batch.len() == at_once || i + 1 == total {
            for wait in batch.drain(..) {
                let status = weft::time::timeout(Duration::from_secs(30), wait)
                    .await
                    .expect("a child's exit was never noticed")
                    .unwrap();
                assert!(status.success());
            }
        }
    }
    pids
}

/// A flavour's name and how to build its runtime.
type Flavour = (&'static str, fn() -> weft::runtime::Runtime);

#[test]
fn two_thousand_children_per_flavour_leave_no_zombie_and_no_fd() {
    let flavours: [Flavour; 3] = [
        ("current_thread", || {
            weft::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
        }),
        ("multi_thread(1)", || {
            weft::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap()
        }),
        ("multi_thread(4)", || {
            weft::runtime::Builder::new_multi_thread()
                .worker_threads(4)
                .enable_all()
                .build()
                .unwrap()
        }),
    ];
    for (name, build) in flavours {
        let rt = build();
        // Warm up (the driver's and pool's own fds), then count.
        rt.block_on(spawn_and_reap(4, 4));
        let before = open_fds();
        let pids = rt.block_on(spawn_and_reap(2_000, 100));
        let zombies: Vec<u32> = pids.into_iter().filter(|p| process_exists(*p)).collect();
        assert!(
            zombies.is_empty(),
            "{name}: {} children were not reaped (first: {:?})",
            zombies.len(),
            zombies.first()
        );
        let after = open_fds();
        assert!(
            after <= before,
            "{name}: {} fds before 2,000 children, {after} after",
            before
        );
        drop(rt);
    }
}
