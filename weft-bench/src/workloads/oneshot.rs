//! The oneshot family: request/reply between two long-lived tasks.
//!
//! Tokio's benches would use an mpsc for the requests; weft has no mpsc yet,
//! so both sides use oneshots only and do identical work. The exact shape:
//!
//! - a multi_thread runtime with **1 worker**, so both tasks share a worker
//!   and every hand-off is a same-thread wake (what the LIFO slot is for);
//! - per iteration, `block_on` spawns a *responder* and a *requester* task
//!   and awaits both; the bench thread does nothing else;
//! - the requester owns the sender of the current request channel. Each of
//!   the 1,000 rounds it creates two oneshots — `(reply_tx, reply_rx)` and
//!   `(next_tx, next_rx)` — sends `Request { value, reply: reply_tx, next:
//!   next_rx }`, awaits `reply_rx`, and keeps `next_tx` for the next round;
//! - the responder awaits the current request receiver, sends `value + 1` on
//!   `reply`, and continues with `next`. When the requester finishes, it drops
//!   the last `next_tx`, the responder's await fails, and it returns.
//!
//! So one iteration = 2 spawns, 2,001 oneshot channels (2 per round plus the
//! first request channel), 2,000 sends, 2,000 cross-task wakes, and no other
//! allocation besides the channels.

macro_rules! oneshot_family {
    ($rt:ident) => {
        use crate::harness::Side;
        use std::hint::black_box;
        use $rt::runtime::{self, Runtime};
        use $rt::sync::oneshot;

        const ROUNDS: u64 = 1_000;

        fn rt() -> Runtime {
            runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap()
        }

        /// One request: the payload, where to reply, and where the next
        /// request will arrive (a oneshot can carry only one message).
        struct Request {
            value: u64,
            reply: oneshot::Sender<u64>,
            next: oneshot::Receiver<Request>,
        }

        async fn responder(mut requests: oneshot::Receiver<Request>) {
            while let Ok(Request { value, reply, next }) = requests.await {
                // The requester awaits every reply, so it is still there.
                reply.send(value + 1).unwrap();
                requests = next;
            }
        }

        async fn requester(mut requests: oneshot::Sender<Request>) -> u64 {
            let mut sum = 0;
            for value in 0..ROUNDS {
                let (reply_tx, reply_rx) = oneshot::channel();
                let (next_tx, next_rx) = oneshot::channel();
                let request = Request {
                    value,
                    reply: reply_tx,
                    next: next_rx,
                };
                assert!(requests.send(request).is_ok(), "responder gone");
                sum += reply_rx.await.unwrap();
                requests = next_tx;
            }
            sum
        }

        pub struct RequestReply {
            rt: Runtime,
        }

        pub fn request_reply() -> Box<dyn Side> {
            Box::new(RequestReply { rt: rt() })
        }

        impl Side for RequestReply {
            fn run(&mut self) {
                let (tx, rx) = oneshot::channel();

                let sum = self.rt.block_on(async {
                    let responder = $rt::spawn(responder(rx));
                    let sum = $rt::spawn(requester(tx)).await.unwrap();
                    responder.await.unwrap();
                    sum
                });

                // Sum of value + 1 over 0..ROUNDS: proves every round ran.
                assert_eq!(black_box(sum), ROUNDS * (ROUNDS + 1) / 2);
            }
        }
    };
}

/// The family on Tokio.
pub mod tokio_side {
    oneshot_family!(tokio);
}

/// The family on weft.
pub mod weft_side {
    oneshot_family!(weft);
}
