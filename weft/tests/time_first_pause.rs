//! The first pause of any clock in a process.
//!
//! Until a runtime's clock is first paused, `Instant::now()` reads the
//! system's clock without looking up the current runtime (`time/clock.rs`).
//! This file is its own process, and its one test pauses the first clock,
//! so it sees that switch happen: reads before the pause took the fast
//! path, reads after it must see the frozen clock, on the pausing thread
//! and on a blocking-pool thread the runtime starts afterwards.

use std::time::Duration;
use weft::time::Instant;

#[test]
fn the_first_pause_in_the_process_freezes_instant_now_everywhere_in_its_runtime() {
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let before = Instant::now();
        std::thread::sleep(Duration::from_millis(3));
        assert!(
            Instant::now() >= before + Duration::from_millis(3),
            "an unpaused clock follows the system's"
        );

        weft::time::pause();
        let frozen = Instant::now();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(Instant::now(), frozen, "a paused clock stands still");

        // Another thread of this runtime, started after the pause.
        let on_blocking_thread = weft::task::spawn_blocking(|| {
            let a = Instant::now();
            std::thread::sleep(Duration::from_millis(5));
            (a, Instant::now())
        })
        .await
        .unwrap();
        assert_eq!(on_blocking_thread, (frozen, frozen));

        weft::time::advance(Duration::from_secs(60)).await;
        assert_eq!(Instant::now(), frozen + Duration::from_secs(60));

        weft::time::resume();
        let resumed = Instant::now();
        assert!(resumed >= frozen + Duration::from_secs(60));
        assert!(
            resumed < frozen + Duration::from_secs(61),
            "time carries on from where it was frozen"
        );
    });

    // A thread outside any runtime reads the system's clock, far behind
    // the advanced one.
    let outside = Instant::now();
    let inside = rt.block_on(async { Instant::now() });
    assert!(inside >= outside + Duration::from_secs(59));
}
