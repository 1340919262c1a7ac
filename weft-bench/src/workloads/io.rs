//! The I/O suite: weft's reactor, sockets and timers against Tokio's.
//!
//! - `io_tcp_echo_{1,10,100}`: an echo server on the runtime under test
//!   (multi_thread, 1 worker, `enable_all`), one task per connection doing
//!   read → `write_all`. The load comes from one client shared by both
//!   sides: a thread running a Tokio current_thread runtime with 1, 10 or
//!   100 persistent connections (`TCP_NODELAY` on both ends). One iteration
//!   = 1,000 round trips of a 100-byte message, split evenly over the
//!   connections, all connections running concurrently. So the client's
//!   cost is identical on both sides and the difference is the server's.
//!   With the server's worker and the client thread, both cores are busy.
//! - `io_timers_arm_cancel`: current_thread, inside `unconstrained` (so
//!   the budget does not stop the arming): 100,000 `sleep`s of 1–10 s are
//!   created, boxed, polled once (which arms each in the wheel) and kept;
//!   then all are dropped (which cancels each). Creation, arming and
//!   cancelling are timed.

pub use crate::echo::EchoClient;

/// Sleeps per `io_timers_arm_cancel` iteration.
pub const TIMERS: u64 = 100_000;

macro_rules! io_family {
    ($rt:ident) => {
        use super::{EchoClient, TIMERS};
        use crate::harness::Side;
        use std::future::Future;
        use std::pin::Pin;
        use std::task::Poll;
        use std::time::Duration;
        use $rt::runtime::{Builder, Runtime};

        pub struct Echo {
            // Field order: the client disconnects before the server stops.
            client: EchoClient,
            _rt: Runtime,
        }

        impl Side for Echo {
            fn run(&mut self) {
                self.client.round();
            }
        }

        fn echo(conns: usize) -> Box<dyn Side> {
            let (addr, rt) = echo_server!($rt);
            let client = EchoClient::connect(addr, conns);
            Box::new(Echo { client, _rt: rt })
        }

        pub fn tcp_echo_1() -> Box<dyn Side> {
            echo(1)
        }

        pub fn tcp_echo_10() -> Box<dyn Side> {
            echo(10)
        }

        pub fn tcp_echo_100() -> Box<dyn Side> {
            echo(100)
        }

        pub struct Timers {
            rt: Runtime,
        }

        impl Side for Timers {
            fn run(&mut self) {
                self.rt.block_on($rt::task::unconstrained(async {
                    let mut armed = Vec::with_capacity(TIMERS as usize);
                    for i in 0..TIMERS {
                        let d = Duration::from_millis(1_000 + i % 9_000);
                        let mut s = Box::pin($rt::time::sleep(d));
                        std::future::poll_fn(|cx| {
                            assert!(s.as_mut().poll(cx).is_pending());
                            Poll::Ready(())
                        })
                        .await;
                        armed.push(s);
                    }
                    drop::<Vec<Pin<Box<$rt::time::Sleep>>>>(armed);
                }));
            }
        }

        pub fn timers_arm_cancel() -> Box<dyn Side> {
            let rt = Builder::new_current_thread().enable_all().build().unwrap();
            Box::new(Timers { rt })
        }
    };
}

pub mod tokio_side {
    io_family!(tokio);
}

pub mod weft_side {
    io_family!(weft);
}
