//! How fast can any echo server be on this machine? The io suite's TCP echo
//! (100-byte messages, 1/10/100 connections, the shared Tokio client) run
//! against four servers, interleaved round by round:
//!
//! - `tokio` and `weft`: the io suite's server (`echo_server!`), one worker;
//! - `mio`: a runtime-free loop on one thread straight on mio (epoll):
//!   read → write, no tasks, no wakers, no budget: the floor of any
//!   readiness-based runtime;
//! - `uring` (Linux): a runtime-free io_uring loop on one thread that posts
//!   the echo's send and the next receive together and waits for them in one
//!   `io_uring_enter`: one syscall per round trip instead of three.
//!
//! If the runtime-free servers are no faster than Tokio, the benchmark is
//! bounded by the client and the kernel, not by the server (BENCHMARKS.md,
//! "End-to-end: TCP echo"). Each table is run twice: with the io suite's
//! client (a Tokio current_thread runtime) and with a runtime-free mio
//! client, whose lower cost leaves more of each round trip to the server.
//!
//! `cargo run --release -p weft-bench --bin echo_ceiling -- [ROUNDS] [SAMPLES]`
//! (defaults 5 and 30): each round starts every server afresh, warms up 5
//! iterations and times SAMPLES iterations of 1,000 round trips; a server's
//! figure is the median over rounds of its per-round medians.

#[path = "../echo.rs"]
#[macro_use]
mod echo;

use echo::{EchoClient, ECHO_MSG, ECHO_ROUND_TRIPS};
use std::net::SocketAddr;
use std::thread;
use std::time::{Duration, Instant};

const WARMUP: usize = 5;

/// The two load clients: the io suite's (a Tokio current_thread runtime,
/// `echo::EchoClient`), and a runtime-free one on mio, whose lower cost per
/// round trip leaves more of the time to the server.
enum Client {
    Tokio(EchoClient),
    Raw(RawClient),
}

impl Client {
    fn connect(kind: &str, addr: SocketAddr, conns: usize) -> Client {
        match kind {
            "tokio" => Client::Tokio(EchoClient::connect(addr, conns)),
            _ => Client::Raw(RawClient::connect(addr, conns)),
        }
    }

    fn round(&self) {
        match self {
            Client::Tokio(c) => c.round(),
            Client::Raw(c) => c.round(),
        }
    }
}

/// A runtime-free echo client on one thread: every connection sends its
/// message, and sends the next as soon as the echo is back, until each has
/// done its share of `ECHO_ROUND_TRIPS`.
struct RawClient {
    go: Option<std::sync::mpsc::Sender<()>>,
    done: std::sync::mpsc::Receiver<()>,
    thread: Option<thread::JoinHandle<()>>,
}

impl RawClient {
    fn connect(addr: SocketAddr, conns: usize) -> RawClient {
        use mio::net::TcpStream;
        use mio::{Events, Interest, Poll, Token};
        use std::io::{ErrorKind, Read, Write};
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            let mut poll = Poll::new().unwrap();
            let mut streams: Vec<TcpStream> = (0..conns)
                .map(|i| {
                    let std = std::net::TcpStream::connect(addr).unwrap();
                    std.set_nodelay(true).unwrap();
                    std.set_nonblocking(true).unwrap();
                    let mut s = TcpStream::from_std(std);
                    poll.registry()
                        .register(&mut s, Token(i), Interest::READABLE)
                        .unwrap();
                    s
                })
                .collect();
            ready_tx.send(()).unwrap();
            let per_conn = ECHO_ROUND_TRIPS / conns;
            let msg = [7u8; ECHO_MSG];
            let mut buf = [0u8; 4 * ECHO_MSG];
            let mut events = Events::with_capacity(1024);
            let send = |s: &mut TcpStream| {
                // 100 bytes into an empty send buffer: never short in
                // practice, but loop rather than assume.
                let mut sent = 0;
                while sent < ECHO_MSG {
                    match s.write(&msg[sent..]) {
                        Ok(n) => sent += n,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => thread::yield_now(),
                        Err(e) => panic!("echo client write: {e}"),
                    }
                }
            };
            while go_rx.recv().is_ok() {
                // Bytes still expected back, and trips left, per connection.
                let mut pending = vec![ECHO_MSG; conns];
                let mut left = vec![per_conn; conns];
                let mut running = conns;
                for s in streams.iter_mut() {
                    send(s);
                }
                while running > 0 {
                    poll.poll(&mut events, None).unwrap();
                    for ev in events.iter() {
                        let i = ev.token().0;
                        loop {
                            match streams[i].read(&mut buf) {
                                Ok(0) => panic!("echo server closed the connection"),
                                Ok(n) => {
                                    pending[i] -= n;
                                    if pending[i] == 0 {
                                        left[i] -= 1;
                                        if left[i] == 0 {
                                            running -= 1;
                                        } else {
                                            pending[i] = ECHO_MSG;
                                            send(&mut streams[i]);
                                        }
                                    }
                                }
                                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                                Err(e) => panic!("echo client read: {e}"),
                            }
                        }
                    }
                }
                done_tx.send(()).unwrap();
            }
        });
        ready_rx.recv().expect("raw echo client failed to connect");
        RawClient {
            go: Some(go_tx),
            done: done_rx,
            thread: Some(thread),
        }
    }

    fn round(&self) {
        self.go.as_ref().unwrap().send(()).unwrap();
        self.done.recv().unwrap();
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        drop(self.go.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A running server: whatever keeps it alive (a runtime), or nothing for the
/// runtime-free loops, which exit once their connections close.
type Keep = Option<Box<dyn std::any::Any>>;

fn start(server: &str, conns: usize) -> (SocketAddr, Keep) {
    match server {
        "tokio" => {
            let (addr, rt) = echo_server!(tokio);
            (addr, Some(Box::new(rt)))
        }
        "weft" => {
            let (addr, rt) = echo_server!(weft);
            (addr, Some(Box::new(rt)))
        }
        "mio" => (mio_server(conns), None),
        #[cfg(target_os = "linux")]
        "uring" => (uring_server(conns), None),
        _ => unreachable!("unknown server {server}"),
    }
}

/// read → write on every readable connection, on one thread, until all
/// `conns` connections have closed.
fn mio_server(conns: usize) -> SocketAddr {
    use mio::net::TcpListener;
    use mio::{Events, Interest, Poll, Token};
    use std::io::{ErrorKind, Read, Write};
    const LISTENER: Token = Token(usize::MAX);
    let mut listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let mut poll = Poll::new().unwrap();
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)
            .unwrap();
        let mut streams = Vec::with_capacity(conns);
        let (mut open, mut accepted) = (0, 0);
        let mut events = Events::with_capacity(1024);
        let mut buf = [0u8; 4 * ECHO_MSG];
        while accepted < conns || open > 0 {
            poll.poll(&mut events, None).unwrap();
            for ev in events.iter() {
                if ev.token() == LISTENER {
                    while let Ok((mut s, _)) = listener.accept() {
                        s.set_nodelay(true).unwrap();
                        let token = Token(streams.len());
                        poll.registry()
                            .register(&mut s, token, Interest::READABLE)
                            .unwrap();
                        streams.push(Some(s));
                        (open, accepted) = (open + 1, accepted + 1);
                    }
                    continue;
                }
                let slot = &mut streams[ev.token().0];
                let Some(s) = slot.as_mut() else { continue };
                // Edge-triggered: drain until a short read or WouldBlock.
                let closed = loop {
                    match s.read(&mut buf) {
                        Ok(0) => break true,
                        Ok(n) => {
                            if s.write_all(&buf[..n]).is_err() {
                                break true;
                            }
                            if n < buf.len() {
                                break false;
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
                        Err(_) => break true,
                    }
                };
                if closed {
                    *slot = None;
                    open -= 1;
                }
            }
        }
    });
    addr
}

/// One io_uring on one thread: every received message is answered by a
/// send posted together with the connection's next receive (into its other
/// buffer), and one `submit_and_wait` both submits them and waits.
#[cfg(target_os = "linux")]
fn uring_server(conns: usize) -> SocketAddr {
    use io_uring::{opcode, squeue, types, IoUring};
    use std::os::fd::AsRawFd;
    const SEND: u64 = 1;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let mut ring = IoUring::new(2 * conns.next_power_of_two() as u32 + 8).unwrap();
        let socks: Vec<_> = (0..conns)
            .map(|_| {
                let (s, _) = listener.accept().unwrap();
                s.set_nodelay(true).unwrap();
                s
            })
            .collect();
        // Two buffers per connection, never moved or freed while the ring
        // runs: the one being sent and the one receiving.
        let mut bufs = vec![[0u8; 4 * ECHO_MSG]; 2 * conns];
        let mut receiving = vec![0usize; conns];
        let recv = |i: usize, buf: &mut [u8]| {
            opcode::Recv::new(
                types::Fd(socks[i].as_raw_fd()),
                buf.as_mut_ptr(),
                buf.len() as u32,
            )
            .build()
            .user_data((i as u64) << 1)
        };
        let push = |ring: &mut IoUring, e: &squeue::Entry| {
            // SAFETY: every entry points into `bufs` (and at sockets in
            // `socks`), which outlive the ring: this thread returns, and drops
            // the ring first, only when a receive ends; and a buffer is
            // reused for a receive only after the send from it completed
            // (the peer answers only after receiving it).
            unsafe {
                ring.submission()
                    .push(e)
                    .expect("ring sized for 2 ops per connection")
            }
        };
        for i in 0..conns {
            let e = recv(i, &mut bufs[2 * i]);
            push(&mut ring, &e);
        }
        loop {
            ring.submit_and_wait(1).unwrap();
            let done: Vec<(u64, i32)> = ring
                .completion()
                .map(|c| (c.user_data(), c.result()))
                .collect();
            for (data, res) in done {
                if data & SEND != 0 {
                    continue;
                }
                if res <= 0 {
                    return;
                }
                let i = (data >> 1) as usize;
                let full = &bufs[2 * i + receiving[i]];
                let send =
                    opcode::Send::new(types::Fd(socks[i].as_raw_fd()), full.as_ptr(), res as u32)
                        .build()
                        .user_data(((i as u64) << 1) | SEND);
                receiving[i] ^= 1;
                let next = recv(i, &mut bufs[2 * i + receiving[i]]);
                push(&mut ring, &send);
                push(&mut ring, &next);
            }
        }
    });
    addr
}

/// Whether this kernel lets us make an io_uring (it may be disabled by
/// `kernel.io_uring_disabled` or a seccomp filter): checked up front, since
/// a server thread that failed to make one would leave its client waiting.
fn uring_available() -> bool {
    #[cfg(target_os = "linux")]
    match io_uring::IoUring::new(8) {
        Ok(_) => return true,
        Err(e) => eprintln!("io_uring unavailable ({e}): no uring column"),
    }
    false
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args
        .next()
        .map_or(5, |a| a.parse().expect("ROUNDS: a number"));
    let samples: usize = args
        .next()
        .map_or(30, |a| a.parse().expect("SAMPLES: a number"));
    let mut servers = vec!["tokio", "weft", "mio"];
    if uring_available() {
        servers.push("uring");
    }
    println!("TCP echo, {ECHO_MSG}-byte messages, time per {ECHO_ROUND_TRIPS} round trips");
    println!("(median of {rounds} rounds × median of {samples} samples; ratio = Tokio / server)");
    for client in ["tokio", "raw"] {
        println!(
            "\nclient: {}\n",
            match client {
                "tokio" => "the io suite's (a Tokio current_thread runtime)",
                _ => "runtime-free (mio, one thread)",
            }
        );
        println!("| connections | {} |", servers.join(" | "));
        println!("|---:|{}", "---:|".repeat(servers.len()));
        for conns in [1, 10, 100] {
            let mut per_server = vec![Vec::new(); servers.len()];
            for _ in 0..rounds {
                for (i, server) in servers.iter().enumerate() {
                    let (addr, keep) = start(server, conns);
                    let load = Client::connect(client, addr, conns);
                    let mut times: Vec<Duration> = (0..WARMUP + samples)
                        .map(|_| {
                            let t = Instant::now();
                            load.round();
                            t.elapsed()
                        })
                        .skip(WARMUP)
                        .collect();
                    per_server[i].push(median(&mut times));
                    drop(load);
                    drop(keep);
                }
            }
            let medians: Vec<Duration> = per_server.iter_mut().map(|v| median(v)).collect();
            let cells: Vec<String> = medians
                .iter()
                .map(|m| {
                    format!(
                        "{:.2} ms ({:.2})",
                        m.as_secs_f64() * 1e3,
                        medians[0].as_secs_f64() / m.as_secs_f64()
                    )
                })
                .collect();
            println!("| {conns} | {} |", cells.join(" | "));
        }
    }
}
