//! The TCP echo workload's two halves, shared by the io suite
//! (`workloads/io.rs`) and the `echo_ceiling` binary: the load client, and
//! the echo server written once as a macro over the runtime crate.
//! Included by `main.rs` as a module and by `src/bin/echo_ceiling.rs` with
//! `#[path]`.

use std::sync::mpsc as std_mpsc;
use std::thread;

/// Round trips per iteration, over all connections.
pub const ECHO_ROUND_TRIPS: usize = 1_000;
/// Bytes per echo message.
pub const ECHO_MSG: usize = 100;
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

/// The echo servers' runtime (one worker, or `ECHO_SERVER_WORKERS`) and
/// their listener on a free loopback port: `(runtime, listener, address)`.
#[macro_export]
macro_rules! echo_listener {
    ($rt:ident) => {{
        let workers = std::env::var("ECHO_SERVER_WORKERS")
            .ok()
            .and_then(|w| w.parse().ok())
            .unwrap_or(1);
        let rt = $rt::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .unwrap();
        let listener =
            rt.block_on(async { $rt::net::TcpListener::bind("127.0.0.1:0").await.unwrap() });
        let addr = listener.local_addr().unwrap();
        (rt, listener, addr)
    }};
}

/// Starts the echo server on a fresh `$rt` runtime (multi_thread, 1 worker,
/// `enable_all`): one task per connection doing read → `write_all`.
/// Evaluates to the listening address and the runtime (which owns the
/// server; dropping it stops the server).
#[macro_export]
macro_rules! echo_server {
    ($rt:ident) => {{
        use $rt::io::{AsyncReadExt, AsyncWriteExt};
        let (rt, listener, addr) = echo_listener!($rt);
        rt.spawn(async move {
            loop {
                let Ok((mut s, _)) = listener.accept().await else {
                    return;
                };
                s.set_nodelay(true).unwrap();
                $rt::spawn(async move {
                    let mut buf = [0u8; 4 * $crate::echo::ECHO_MSG];
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
        (addr, rt)
    }};
}

/// The echo server of `echo_server!`, with each connection a std socket
/// under `AsyncFd` (readiness waits and plain `read(2)`/`write(2)`): what
/// a program driving its own descriptors costs (`echo_cpu.sh`, `SERVER=fd`).
#[allow(unused_macros)] // used by the echo_server binary only
macro_rules! echo_server_fd {
    ($rt:ident) => {{
        use std::io::{Read, Write};
        use $rt::io::unix::AsyncFd;
        use $rt::io::Interest;
        let (rt, listener, addr) = echo_listener!($rt);
        rt.spawn(async move {
            loop {
                let Ok((s, _)) = listener.accept().await else {
                    return;
                };
                s.set_nodelay(true).unwrap();
                // Non-blocking, as the runtime's socket was.
                let s = s.into_std().unwrap();
                $rt::spawn(async move {
                    // SAFETY: the AsyncFd owns `s`, whose descriptor stays
                    // open (and the same) until the AsyncFd drops it.
                    let fd = unsafe { AsyncFd::register(s) }.unwrap();
                    let mut buf = [0u8; 4 * $crate::echo::ECHO_MSG];
                    loop {
                        let n = match fd
                            .async_io(Interest::READABLE, |s| (&*s).read(&mut buf))
                            .await
                        {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        let mut sent = 0;
                        while sent < n {
                            match fd
                                .async_io(Interest::WRITABLE, |s| (&*s).write(&buf[sent..n]))
                                .await
                            {
                                Ok(m) => sent += m,
                                Err(_) => return,
                            }
                        }
                    }
                });
            }
        });
        (addr, rt)
    }};
}
