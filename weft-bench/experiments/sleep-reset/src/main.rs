//! Timer costs, built against weft or against Tokio (run.sh renames the
//! crate), on a current_thread runtime. Two patterns, picked by the first
//! argument; the second is the count N (default 100,000):
//! - `reset`: a sleep that a task has polled, reset N times to deadlines
//!   that move later, and earlier once in 64, never due: a timeout
//!   extended on every event (hyper's timers, tokio-util's DelayQueue);
//! - `arm`: N sleeps made, polled once (arming a timer) and dropped
//!   (cancelling it): a `timeout` around work that finishes first;
//! - `poll`: a pending sleep polled N times by the same task: a `select!`
//!   or `timeout` whose other branch wakes the task again and again.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};
use std::time::Duration;

use rt::time::{sleep, Instant};

fn main() {
    let mode = std::env::args().nth(1).expect("reset, arm or poll");
    let n: u32 = std::env::args()
        .nth(2)
        .map_or(100_000, |s| s.parse().expect("a count"));
    let runtime = rt::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut cx = Context::from_waker(Waker::noop());
        match mode.as_str() {
            "reset" => {
                let start = Instant::now();
                let mut sleep = pin!(sleep(Duration::from_secs(60)));
                assert!(sleep.as_mut().poll(&mut cx).is_pending());
                for i in 0..n {
                    let at = start + Duration::from_secs(30 + u64::from(i % 64));
                    sleep.as_mut().reset(at);
                }
                assert!(sleep.as_mut().poll(&mut cx).is_pending());
            }
            "arm" => {
                for i in 0..n {
                    let d = Duration::from_millis(1000 + u64::from(i % 4096));
                    let mut sleep = Box::pin(sleep(d));
                    assert!(sleep.as_mut().poll(&mut cx).is_pending());
                }
            }
            "poll" => {
                // Outside the coop budget, which would otherwise run out
                // after 128 polls and answer for the timer.
                rt::task::unconstrained(async {
                    let mut sleep = pin!(sleep(Duration::from_secs(60)));
                    for _ in 0..n {
                        assert!(sleep.as_mut().poll(&mut cx).is_pending());
                    }
                })
                .await;
            }
            other => panic!("unknown mode {other}: reset, arm or poll"),
        }
    });
}
