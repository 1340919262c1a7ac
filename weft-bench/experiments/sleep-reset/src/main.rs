//! A sleep that a task has polled, reset N times (argument, default
//! 100,000) to deadlines that move later, and earlier once in 64, never due:
//! the pattern of a timeout extended on every event (hyper's timers,
//! tokio-util's DelayQueue). Built against weft or against Tokio (run.sh
//! renames the crate), on a current_thread runtime.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};
use std::time::Duration;

use rt::time::{sleep, Instant};

fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .map_or(100_000, |s| s.parse().expect("a count"));
    let runtime = rt::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut cx = Context::from_waker(Waker::noop());
        let start = Instant::now();
        let mut sleep = pin!(sleep(Duration::from_secs(60)));
        assert!(sleep.as_mut().poll(&mut cx).is_pending());
        for i in 0..n {
            let at = start + Duration::from_secs(30 + u64::from(i % 64));
            sleep.as_mut().reset(at);
        }
        assert!(sleep.as_mut().poll(&mut cx).is_pending());
    });
}
