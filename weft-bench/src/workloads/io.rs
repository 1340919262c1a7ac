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

use std::sync::mpsc as std_mpsc;
use std::thread;

/// Round trips per iteration, over all connections.
pub const ECHO_ROUND_TRIPS: usize = 1_000;
/// Bytes per echo message.
pub const ECHO_MSG: usize = 100;
/// Sleeps per `io_timers_arm_cancel` iteration.
pub const TIMERS: u64 = 100_000;

/// The load generator shared by both sides: a Tokio current_thread
/// runtime on its own thread, holding `conns` connections to `addr`.
pub struct EchoClient {
    go: Option<std_mpsc::Sender<()>>,
    done: std_mpsc::Receiver<()>,
    thread: Option<thread::JoinHandle<()>>,
}

impl EchoClient {
    pub fn connect(addr: std::net::SocketAddr, conns: usize) -> EchoClient {
        let (go_tx, go_rx) = std_mpsc::channel::<()>();
        let (done_tx, done_rx) = std_mpsc::channel::<()>();
        let (ready_tx, ready_rx) = std_mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let mut streams = Vec::with_capacity(conns);
                for _ in 0..conns {
                    let s = tokio::net::TcpStream::connect(addr).await.unwrap();
                    s.set_nodelay(true).unwrap();
                    streams.push(s);
                }
                ready_tx.send(()).unwrap();
                let per_conn = ECHO_ROUND_TRIPS / conns;
                // Each `go` runs one iteration; the sender's drop ends us.
                while go_rx.recv().is_ok() {
                    let mut tasks = Vec::with_capacity(conns);
                    for mut s in streams.drain(..) {
                        tasks.push(tokio::spawn(async move {
                            let msg = [7u8; ECHO_MSG];
                            let mut buf = [0u8; ECHO_MSG];
                            for _ in 0..per_conn {
                                s.write_all(&msg).await.unwrap();
                                s.read_exact(&mut buf).await.unwrap();
                            }
                            s
                        }));
                    }
                    for t in tasks {
                        streams.push(t.await.unwrap());
                    }
                    done_tx.send(()).unwrap();
                }
            });
        });
        ready_rx.recv().expect("echo client failed to connect");
        EchoClient {
            go: Some(go_tx),
            done: done_rx,
            thread: Some(thread),
        }
    }

    pub fn round(&self) {
        self.go.as_ref().unwrap().send(()).unwrap();
        self.done.recv().unwrap();
    }
}

impl Drop for EchoClient {
    fn drop(&mut self) {
        drop(self.go.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

macro_rules! io_family {
    ($rt:ident) => {
        use super::{EchoClient, ECHO_MSG, TIMERS};
        use crate::harness::Side;
        use std::future::Future;
        use std::pin::Pin;
        use std::task::Poll;
        use std::time::Duration;
        use $rt::io::{AsyncReadExt, AsyncWriteExt};
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
            let rt = Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            let listener =
                rt.block_on(async { $rt::net::TcpListener::bind("127.0.0.1:0").await.unwrap() });
            let addr = listener.local_addr().unwrap();
            rt.spawn(async move {
                loop {
                    let Ok((mut s, _)) = listener.accept().await else {
                        return;
                    };
                    s.set_nodelay(true).unwrap();
                    $rt::spawn(async move {
                        let mut buf = [0u8; 4 * ECHO_MSG];
                        loop {
                            match s.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => {
                                    if s.write_all(&buf[..n]).await.is_err() {
                                        return;
                                    }
                                }
                            }
                        }
                    });
                }
            });
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
