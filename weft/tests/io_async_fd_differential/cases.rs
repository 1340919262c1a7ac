//! Single cases, run on both crates and compared like the scripts: what
//! needs no random sequence. Construction (every `Interest`, every
//! constructor's error and the object it hands back, a descriptor epoll
//! refuses, one registered twice, a bad one, outside a runtime and without
//! the I/O driver: whether it panics and the gist of the message), error,
//! hang-up and priority readiness, an `ERROR` interest's reads, an eventfd
//! written from another thread, a timerfd, a listening socket, an
//! `AsyncFd` dropped after a task waited on it, a runtime dropped under
//! one, one waited for from another runtime and from a plain executor,
//! the one-waker slots of `poll_read_ready`, two waits woken by one event,
//! `try_io` and the guards' `clear_ready_matching`/`retain_ready` and what
//! they leave, the coop budget, and the `Debug`/`Display` shapes of the
//! errors, guards, `Ready` and `Interest`. A "script" is a list of case
//! numbers, so the harness can shrink a mismatch to one case.
//!
//! Only what is certain is logged: a readiness bit that depends on which
//! event the driver has taken so far is not (a hang-up's `READABLE` on
//! io_uring comes with the next read poll, not with epoll's hang-up), and
//! a case that clears readiness and then looks at it runs on a
//! current_thread runtime of its own (`NO_RUNTIME`), where no driver takes
//! an event in between.

use crate::harness::{block_on, cut, for_both, Log, Rng, Shrink, Step};
use crate::interp::{kind, pair, peer_read, peer_write, poll_counting, Count, LIMIT};
use crate::scripts::Kind;
use std::fs::File;
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

/// How many cases there are.
pub const CASES: usize = 25;

/// The cases that run outside any runtime of their own making.
const NO_RUNTIME: [usize; 7] = [14, 15, 16, 17, 18, 19, 21];

#[derive(Clone, Debug)]
pub struct CaseScript {
    pub cases: Vec<usize>,
    pub multi: bool,
}

impl Shrink for CaseScript {
    fn ops(&self) -> usize {
        self.cases.len()
    }

    fn without(&self, at: usize, n: usize) -> Self {
        CaseScript {
            cases: cut(&self.cases, at, n),
            ..self.clone()
        }
    }
}

/// Every case, on one flavour of runtime (seed 0: current_thread).
pub fn gen(rng: &mut Rng) -> CaseScript {
    CaseScript {
        cases: (0..CASES).collect(),
        multi: rng.chance(50),
    }
}

/// A bare descriptor number, as a C library hands one out.
#[derive(Debug)]
pub struct Num(pub RawFd);

impl AsRawFd for Num {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// What a caught panic said, reduced to what both crates' messages mean.
pub fn gist(p: &(dyn std::any::Any + Send)) -> String {
    let text = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    if text.contains("enable_io") {
        "panic: I/O disabled".into()
    } else if text.contains("runtime") {
        "panic: no runtime".into()
    } else {
        format!("panic: {text}")
    }
}

/// `s` with every run of digits shown as `#` (descriptor numbers).
pub fn no_digits(s: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// A UDP socket connected to a port nobody listens on (on an address no
/// other test binds, so nobody takes the port meanwhile).
pub fn refused_udp() -> std::net::UdpSocket {
    let closed = std::net::UdpSocket::bind("127.88.0.5:0").expect("bind");
    let port = closed.local_addr().expect("addr");
    drop(closed);
    let s = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    s.connect(port).expect("connect");
    s.set_nonblocking(true).expect("nonblocking");
    s
}

pub fn eventfd() -> File {
    // SAFETY: eventfd takes no pointers.
    let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    assert!(raw >= 0, "eventfd");
    // SAFETY: a fresh descriptor nobody else owns.
    File::from(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// One byte of TCP urgent data from `s`.
pub fn send_oob(s: &impl AsRawFd) {
    // SAFETY: a valid socket and a one-byte buffer.
    let n = unsafe { libc::send(s.as_raw_fd(), b"!".as_ptr().cast(), 1, libc::MSG_OOB) };
    assert_eq!(n, 1, "MSG_OOB");
}

macro_rules! cases_group {
    () => {
        use k::io::unix::{AsyncFd, AsyncFdRegisterError, TryIoError};
        use k::io::{Interest, Ready};

        fn res<T>(r: io::Result<T>) -> String {
            match r {
                Ok(_) => "Ok".into(),
                Err(e) => format!("Err({:?} {:?})", e.kind(), e.raw_os_error()),
            }
        }

        fn err<T>(r: &Result<T, AsyncFdRegisterError<File>>) -> String {
            match r {
                Ok(_) => "Ok".into(),
                Err(e) => format!("Err(display {:?}, debug {:?})", e.to_string(), format!("{e:?}")),
            }
        }

        /// Awaits `f` within the limit (`None`: it hung).
        async fn within<F: std::future::Future>(f: F) -> Option<F::Output> {
            k::time::timeout(LIMIT, f).await.ok()
        }

        /// Waits for `interest` until a guard shows what `seen` looks
        /// for, clearing each guard that does not (the event that brings
        /// it is still to come on epoll; on io_uring the next wait arms a
        /// poll that reports it); whether it came.
        async fn settle<T: AsRawFd>(fd: &AsyncFd<T>, interest: Interest, seen: fn(Ready) -> bool) -> bool {
            for _ in 0..50 {
                let Some(Ok(mut g)) = within(fd.ready(interest)).await else {
                    return false;
                };
                if seen(g.ready()) {
                    return true;
                }
                g.clear_ready();
            }
            false
        }

        fn bits(r: Ready) -> String {
            let mut s = String::new();
            for (on, c) in [
                (r.is_readable(), 'R'),
                (r.is_writable(), 'W'),
                (r.is_read_closed(), 'r'),
                (r.is_write_closed(), 'w'),
                (r.is_priority(), 'P'),
                (r.is_error(), 'E'),
            ] {
                if on {
                    s.push(c);
                }
            }
            s
        }

        /// `f` run with no runtime around, or panicking.
        #[allow(deprecated)]
        fn constructors() -> String {
            let mut out = Vec::new();
            for i in 0..4 {
                let (ours, _peer) = pair(Kind::Unix);
                let r = catch_unwind(AssertUnwindSafe(|| match i {
                    0 => res(AsyncFd::new(ours)),
                    1 => res(AsyncFd::with_interest(ours, Interest::READABLE)),
                    2 => res(AsyncFd::try_new(ours).map_err(io::Error::from)),
                    // SAFETY: `ours` owns its descriptor.
                    _ => res(unsafe { AsyncFd::register(ours) }.map_err(io::Error::from)),
                }));
                out.push(match r {
                    Ok(s) => s,
                    Err(p) => gist(&*p),
                });
            }
            out.join(", ")
        }

        #[allow(deprecated)]
        async fn case(n: usize) -> String {
            match n {
                0 => {
                    // Every interest, alone and combined.
                    let all = [
                        ("R", Interest::READABLE),
                        ("W", Interest::WRITABLE),
                        ("P", Interest::PRIORITY),
                        ("E", Interest::ERROR),
                        ("RW", Interest::READABLE | Interest::WRITABLE),
                        ("RP", Interest::READABLE.add(Interest::PRIORITY)),
                        ("RE", Interest::READABLE | Interest::ERROR),
                        ("WE", Interest::WRITABLE | Interest::ERROR),
                        (
                            "RWPE",
                            Interest::READABLE | Interest::WRITABLE | Interest::PRIORITY | Interest::ERROR,
                        ),
                        ("RW-W", (Interest::READABLE | Interest::WRITABLE).remove(Interest::WRITABLE).unwrap()),
                    ];
                    let mut out = Vec::new();
                    for (name, i) in all {
                        let (ours, _peer) = pair(Kind::Tcp);
                        let a = res(AsyncFd::with_interest(ours, i));
                        let (ours, _peer) = pair(Kind::Unix);
                        let b = res(AsyncFd::try_with_interest(ours, i).map_err(io::Error::from));
                        let (ours, _peer) = pair(Kind::Udp);
                        // SAFETY: `ours` owns its descriptor.
                        let c = res(unsafe { AsyncFd::register_with_interest(ours, i) }.map_err(io::Error::from));
                        out.push(format!("{name}: {a} {b} {c}"));
                    }
                    out.join("; ")
                }
                1 => {
                    // A regular file: epoll refuses it (EPERM); the
                    // fallible constructors hand it back.
                    let open = || File::open("/proc/self/exe").expect("open");
                    let a = res(AsyncFd::new(open()));
                    let b = res(AsyncFd::with_interest(open(), Interest::READABLE));
                    let f = open();
                    let raw = f.as_raw_fd();
                    let r = AsyncFd::try_new(f);
                    let shown = err(&r);
                    let source = r.as_ref().err().map(|e| std::error::Error::source(e).is_some());
                    let (back, cause) = r.err().expect("refused").into_parts();
                    let same = back.as_raw_fd() == raw && back.metadata().is_ok();
                    let c = res::<()>(Err(cause));
                    let d = res(AsyncFd::try_with_interest(open(), Interest::WRITABLE).map_err(io::Error::from));
                    // SAFETY: the file owns its descriptor.
                    let e = res(unsafe { AsyncFd::register(open()) }.map_err(io::Error::from));
                    format!("{a} {b} {c} {shown} source {source:?} back {same} {d} {e}")
                }
                2 => {
                    // One descriptor registered twice; again once the
                    // first is gone.
                    let (ours, _peer) = pair(Kind::Unix);
                    let raw = ours.as_raw_fd();
                    let first = AsyncFd::new(Num(raw)).expect("first");
                    let again = res(AsyncFd::new(Num(raw)));
                    let r = AsyncFd::try_with_interest(Num(raw), Interest::READABLE);
                    let back = match r {
                        Ok(_) => "registered twice".to_string(),
                        Err(e) => {
                            let (num, cause) = e.into_parts();
                            format!("back {} {}", num.0 == raw, res::<()>(Err(cause)))
                        }
                    };
                    drop(first);
                    let third = res(AsyncFd::new(Num(raw)));
                    format!("{again} {back}; after the drop {third}")
                }
                3 => {
                    // Not a descriptor.
                    let a = res(AsyncFd::new(Num(-1)));
                    let b = res(AsyncFd::try_new(Num(-1)).map_err(io::Error::from));
                    format!("{a} {b}")
                }
                4 => {
                    // An eventfd written from another thread, three rounds.
                    let fd = AsyncFd::with_interest(eventfd(), Interest::READABLE).expect("register");
                    let raw = fd.as_raw_fd();
                    let mut got = Vec::new();
                    for round in 1..=3u64 {
                        let t = std::thread::spawn(move || {
                            std::thread::sleep(Duration::from_millis(2));
                            // SAFETY: 8 bytes from a u64 to an open eventfd.
                            unsafe { libc::write(raw, (&round as *const u64).cast(), 8) }
                        });
                        let Some(g) = within(fd.readable()).await else {
                            return "TIMEOUT".into();
                        };
                        let mut g = g.expect("readable");
                        let r = g.try_io(|f| {
                            let mut v = [0u8; 8];
                            io::Read::read(&mut &*f.get_ref(), &mut v).map(|_| u64::from_ne_bytes(v))
                        });
                        let again = g.try_io(|f| {
                            let mut v = [0u8; 8];
                            io::Read::read(&mut &*f.get_ref(), &mut v)
                        });
                        got.push(format!(
                            "{:?} then {}",
                            r.map(|r| r.map_err(|e| kind(&e))),
                            if again.is_err() { "TryIoError" } else { "read" }
                        ));
                        t.join().expect("writer");
                    }
                    got.join(", ")
                }
                5 => {
                    // A refused datagram: an error is pending on the socket.
                    let mut out = Vec::new();
                    for i in [Interest::READABLE | Interest::WRITABLE, Interest::ERROR, Interest::READABLE | Interest::ERROR] {
                        let fd = AsyncFd::with_interest(refused_udp(), i).expect("register");
                        fd.get_ref().send(b"anyone?").expect("send");
                        let Some(g) = within(fd.ready(Interest::ERROR)).await else {
                            return "TIMEOUT".into();
                        };
                        let g = g.expect("ready");
                        let e = g.ready().is_error();
                        drop(g);
                        // The error is in the readiness now: what a read
                        // wait and a write wait make of it.
                        let count = Arc::new(Count::default());
                        let read = match poll_counting(std::pin::pin!(std::future::poll_fn(|cx| fd.poll_read_ready(cx).map(|r| r.map(|g| g.ready())))), &count) {
                            Poll::Pending => "Pending".to_string(),
                            Poll::Ready(r) => format!("Ready({:?})", r.map(bits).map_err(|e| kind(&e))),
                        };
                        let readable = match poll_counting(std::pin::pin!(fd.readable()), &count) {
                            Poll::Pending => "Pending".to_string(),
                            Poll::Ready(r) => format!("Ready({:?})", r.map(|g| bits(g.ready())).map_err(|e| kind(&e))),
                        };
                        let write = if i.is_writable() {
                            match within(std::future::poll_fn(|cx| fd.poll_write_ready(cx).map(|r| r.map(|g| g.ready())))).await {
                                None => "TIMEOUT".to_string(),
                                Some(r) => format!("{:?}", r.map(|r| (r.is_write_closed(), r.is_error())).map_err(|e| kind(&e))),
                            }
                        } else {
                            "-".into()
                        };
                        let taken = fd.get_ref().take_error().map(|e| e.map(|e| e.kind()));
                        out.push(format!("error {e}, poll_read_ready {read}, readable {readable}, poll_write_ready (closed, error) {write}, take_error {taken:?}"));
                    }
                    out.join("; ")
                }
                6 => {
                    // TCP urgent data is PRIORITY.
                    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
                    let client = std::net::TcpStream::connect(l.local_addr().expect("addr")).expect("connect");
                    let (server, _) = l.accept().expect("accept");
                    server.set_nonblocking(true).expect("nonblocking");
                    let fd = AsyncFd::with_interest(server, Interest::READABLE | Interest::PRIORITY).expect("register");
                    let count = Arc::new(Count::default());
                    let before = poll_counting(std::pin::pin!(fd.ready(Interest::PRIORITY)), &count).is_pending();
                    send_oob(&client);
                    let Some(g) = within(fd.ready(Interest::PRIORITY)).await else {
                        return "TIMEOUT".into();
                    };
                    let g = g.expect("ready");
                    let shown = (g.ready().is_priority(), g.ready().is_readable());
                    format!("pending before {before}, then (priority, readable) {shown:?}")
                }
                7 => {
                    // A hang-up: the peer of a Unix stream is gone.
                    let (ours, peer) = pair(Kind::Unix);
                    let fd = AsyncFd::new(ours).expect("register");
                    drop(peer);
                    // The first guard may show the writability registered
                    // before the hang-up (a worker's driver took that
                    // event at once).
                    let wc = settle(&fd, Interest::WRITABLE, Ready::is_write_closed).await;
                    let Some(w) = within(fd.writable()).await else {
                        return "TIMEOUT".into();
                    };
                    let mut w = w.expect("writable");
                    let wrote = w.try_io(|f| crate::interp::wr(f.get_ref(), b"x"));
                    let wrote = format!("{:?}", wrote.map(|r| r.map_err(|e| kind(&e))));
                    drop(w);
                    let Some(r) = within(fd.readable()).await else {
                        return "TIMEOUT".into();
                    };
                    let mut r = r.expect("readable");
                    let rc = r.ready().is_read_closed();
                    let read = r.try_io(|f| crate::interp::rd(f.get_ref(), &mut [0u8; 4]));
                    let read = format!("{:?}", read.map(|r| r.map_err(|e| kind(&e))));
                    format!("write_closed {wc}, write {wrote}, read_closed {rc}, read {read}")
                }
                8 => {
                    // A pipe's write end whose reader is gone: an error.
                    let (rd_end, wr_end) = pair(Kind::Pipe);
                    let fd = AsyncFd::with_interest(wr_end, Interest::WRITABLE).expect("register");
                    drop(rd_end);
                    let wc = settle(&fd, Interest::WRITABLE, Ready::is_write_closed).await;
                    let Some(g) = within(fd.ready(Interest::WRITABLE)).await else {
                        return "TIMEOUT".into();
                    };
                    let mut g = g.expect("ready");
                    let e = g.ready().is_error();
                    let wrote = g.try_io(|f| crate::interp::wr(f.get_ref(), b"x"));
                    let wrote = format!("{:?}", wrote.map(|r| r.map_err(|e| kind(&e))));
                    drop(g);
                    let polled = within(std::future::poll_fn(|cx| fd.poll_write_ready(cx).map(|r| r.map(|g| g.ready().is_write_closed())))).await;
                    format!("write_closed {wc}, error in a WRITABLE guard {e}, write {wrote}, poll_write_ready {:?}", polled.map(|r| r.map_err(|e| kind(&e))))
                }
                9 => {
                    // A task waits on the AsyncFd; it is aborted, the
                    // object taken back and closed: the peer sees the end.
                    let (ours, peer) = pair(Kind::Unix);
                    let fd = Arc::new(AsyncFd::new(ours).expect("register"));
                    let waiting = k::spawn({
                        let fd = fd.clone();
                        async move {
                            let _ = fd.readable().await;
                        }
                    });
                    k::time::sleep(Duration::from_millis(5)).await;
                    let before = waiting.is_finished();
                    waiting.abort();
                    let joined = waiting.await.map_err(|e| e.is_cancelled());
                    let Some(fd) = Arc::into_inner(fd) else {
                        return "still shared".into();
                    };
                    drop(fd.into_inner());
                    let end = peer_read(&peer, 0, false, true).map(|b| b.len());
                    format!("finished before abort {before}, join {joined:?}, peer reads {end:?}")
                }
                10 => {
                    // Two `poll_read_ready` callers: only the last waker
                    // is woken.
                    let (ours, peer) = pair(Kind::Unix);
                    let fd = AsyncFd::with_interest(ours, Interest::READABLE).expect("register");
                    let (one, two) = (Arc::new(Count::default()), Arc::new(Count::default()));
                    let mut f = std::future::poll_fn(|cx| fd.poll_read_ready(cx).map(|r| r.map(|g| g.ready().is_readable())));
                    let a = poll_counting(std::pin::Pin::new(&mut f), &one).is_pending();
                    let b = poll_counting(std::pin::Pin::new(&mut f), &two).is_pending();
                    peer_write(&peer, b"x").expect("write");
                    let deadline = std::time::Instant::now() + LIMIT;
                    while two.get() == 0 && std::time::Instant::now() < deadline {
                        k::time::sleep(Duration::from_millis(1)).await;
                    }
                    let then = poll_counting(std::pin::Pin::new(&mut f), &two);
                    format!(
                        "pending {a} {b}, first woken {}, last woken {}, then {:?}",
                        one.get() > 0,
                        two.get() > 0,
                        then.map(|r| r.map_err(|e| kind(&e)))
                    )
                }
                11 => {
                    // `try_io` with two interests, once both are surely in
                    // the readiness.
                    let (ours, peer) = pair(Kind::Unix);
                    let fd = AsyncFd::new(ours).expect("register");
                    peer_write(&peer, b"xy").expect("write");
                    loop {
                        let Some(g) = within(fd.ready(Interest::READABLE | Interest::WRITABLE)).await else {
                            return "TIMEOUT".into();
                        };
                        let mut g = g.expect("ready");
                        if g.ready().is_readable() && g.ready().is_writable() {
                            break;
                        }
                        g.clear_ready_matching(if g.ready().is_readable() { Ready::WRITABLE } else { Ready::READABLE });
                    }
                    // Not `READABLE | WRITABLE`: Tokio's `try_io` never
                    // runs the closure for two interests (its mask of a
                    // combined interest is empty; tokio#5214, documented
                    // there as unsupported), weft's runs it when either
                    // is ready (README, "Differences from Tokio").
                    let mut called = Vec::new();
                    for i in [Interest::READABLE, Interest::WRITABLE] {
                        let mut ran = false;
                        let r = fd.try_io(i, |_| {
                            ran = true;
                            Ok(())
                        });
                        called.push(format!("{ran} {}", res(r)));
                    }
                    called.join(", ")
                }
                12 => {
                    // Debug and Display shapes.
                    let (ours, peer) = pair(Kind::Unix);
                    let raw = ours.as_raw_fd();
                    let mut fd = AsyncFd::new(Num(raw)).expect("register");
                    peer_write(&peer, b"x").expect("write");
                    let a = format!("{fd:?}");
                    let Some(g) = within(fd.readable()).await else {
                        return "TIMEOUT".into();
                    };
                    let b = format!("{:?}", g.expect("readable"));
                    let Some(g) = within(fd.readable_mut()).await else {
                        return "TIMEOUT".into();
                    };
                    let c = format!("{:?}", g.expect("readable"));
                    let t: Option<TryIoError> = None;
                    let d = format!("{t:?}");
                    drop(fd);
                    drop(ours);
                    no_digits(&format!("{a} / {b} / {c} / {d}"))
                }
                13 => {
                    // A wait for an interest not registered: pending,
                    // until a hang-up.
                    let (ours, peer) = pair(Kind::Unix);
                    let fd = AsyncFd::with_interest(ours, Interest::READABLE).expect("register");
                    peer_write(&peer, b"x").expect("write");
                    let Some(g) = within(fd.readable()).await else {
                        return "TIMEOUT".into();
                    };
                    drop(g);
                    let count = Arc::new(Count::default());
                    let w = poll_counting(std::pin::pin!(fd.ready(Interest::WRITABLE)), &count).is_pending();
                    let w2 = poll_counting(std::pin::pin!(fd.writable()), &count).is_pending();
                    let w3 = poll_counting(std::pin::pin!(std::future::poll_fn(|cx| fd.poll_write_ready(cx).map(|r| r.is_ok()))), &count).is_pending();
                    drop(peer);
                    let Some(g) = within(fd.ready(Interest::WRITABLE)).await else {
                        return "TIMEOUT".into();
                    };
                    let g = g.expect("ready");
                    format!("pending {w} {w2} {w3}, after the hang-up write_closed {}", g.ready().is_write_closed())
                }
                16 => {
                    // A runtime dropped under an AsyncFd: waits fail, and
                    // the object can still be taken back.
                    let (ours, _peer) = pair(Kind::Unix);
                    let rt = k::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
                    let fd = rt.block_on(async { AsyncFd::new(ours) }).expect("register");
                    drop(rt);
                    let count = Arc::new(Count::default());
                    let wait = match poll_counting(std::pin::pin!(fd.readable()), &count) {
                        Poll::Pending => "Pending".to_string(),
                        Poll::Ready(r) => res(r),
                    };
                    let poll = match poll_counting(std::pin::pin!(std::future::poll_fn(|cx| fd.poll_write_ready(cx).map(|r| r.map(|_| ())))), &count) {
                        Poll::Pending => "Pending".to_string(),
                        Poll::Ready(r) => res(r),
                    };
                    let mut ran = false;
                    let r = fd.try_io(Interest::READABLE, |_| {
                        ran = true;
                        Ok(())
                    });
                    let back = fd.into_inner().as_raw_fd() >= 0;
                    format!("readable {wait}, poll_write_ready {poll}, try_io ran {ran} {}, into_inner {back}", res(r))
                }
                17 => {
                    // What a guard's `retain_ready` and
                    // `clear_ready_matching` leave, in the guard and in
                    // the registration (a current_thread runtime of its
                    // own: no driver may take an event between the guard
                    // and the clear, or the clear would not apply).
                    let (ours, peer) = pair(Kind::Unix);
                    let mut fd = AsyncFd::new(ours).expect("register");
                    peer_write(&peer, b"x").expect("write");
                    let both = |r: Ready| r.is_readable() && r.is_writable();
                    if !settle(&fd, Interest::READABLE | Interest::WRITABLE, both).await {
                        return "never both".into();
                    }
                    let count = Arc::new(Count::default());
                    let mut out = Vec::new();
                    // A readable guard clears WRITABLE, which it never saw.
                    let mut g = fd.readable().await.expect("readable");
                    g.clear_ready_matching(Ready::WRITABLE);
                    out.push(format!("guard {}", bits(g.ready())));
                    drop(g);
                    let w = poll_counting(std::pin::pin!(fd.writable()), &count).is_pending();
                    out.push(format!("writable pending {w}"));
                    // A kept readiness stays in the guard, and a clear
                    // after it still clears.
                    let mut g = fd.readable_mut().await.expect("readable");
                    g.retain_ready();
                    out.push(format!("kept {}", bits(g.ready())));
                    g.clear_ready();
                    out.push(format!("then cleared {}", bits(g.ready())));
                    drop(g);
                    let r = poll_counting(std::pin::pin!(fd.readable()), &count).is_pending();
                    out.push(format!("readable pending {r}"));
                    let either = fd.ready(Interest::ERROR | Interest::READABLE);
                    let e = poll_counting(std::pin::pin!(either), &count).is_pending();
                    out.push(format!("error or readable pending {e}"));
                    out.join(", ")
                }
                18 => {
                    // Two waits woken by one event; the first clears the
                    // readiness (its read would block) before the second
                    // is polled again (current_thread, so nothing else
                    // runs in between).
                    let (ours, peer) = pair(Kind::Unix);
                    let fd = AsyncFd::with_interest(ours, Interest::READABLE).expect("register");
                    let (one, two) = (Arc::new(Count::default()), Arc::new(Count::default()));
                    let mut a = std::pin::pin!(fd.readable());
                    let mut b = std::pin::pin!(fd.ready(Interest::READABLE));
                    let pending = (
                        poll_counting(a.as_mut(), &one).is_pending(),
                        poll_counting(b.as_mut(), &two).is_pending(),
                    );
                    peer_write(&peer, b"xy").expect("write");
                    let deadline = std::time::Instant::now() + LIMIT;
                    while (one.get() == 0 || two.get() == 0) && std::time::Instant::now() < deadline {
                        k::time::sleep(Duration::from_millis(1)).await;
                    }
                    let woken = (one.get() > 0, two.get() > 0);
                    let first = match poll_counting(a.as_mut(), &one) {
                        Poll::Ready(Ok(mut g)) => {
                            let mut buf = [0u8; 8];
                            let got = g.try_io(|f| crate::interp::rd(f.get_ref(), &mut buf));
                            let again = g.try_io(|f| crate::interp::rd(f.get_ref(), &mut buf));
                            format!("read {:?}, then would block {}", got.map(|r| r.map_err(|e| kind(&e))), again.is_err())
                        }
                        Poll::Ready(Err(e)) => format!("Err({})", kind(&e)),
                        Poll::Pending => "Pending".into(),
                    };
                    let second = match poll_counting(b.as_mut(), &two) {
                        Poll::Ready(Ok(g)) => format!("Ready({})", bits(g.ready())),
                        Poll::Ready(Err(e)) => format!("Err({})", kind(&e)),
                        Poll::Pending => "Pending".into(),
                    };
                    format!("pending {pending:?}, woken {woken:?}, first {first}, second {second}")
                }
                19 => {
                    // `try_io` keeps the readiness on an error other than
                    // `WouldBlock` and clears it on `WouldBlock`: the
                    // guard's, the mut guard's and the AsyncFd's own.
                    let (ours, peer) = pair(Kind::Unix);
                    let mut fd = AsyncFd::with_interest(ours, Interest::READABLE).expect("register");
                    peer_write(&peer, b"x").expect("write");
                    let count = Arc::new(Count::default());
                    let fail = |k: io::ErrorKind| -> io::Result<()> { Err(k.into()) };
                    let mut out = Vec::new();
                    for round in 0..3 {
                        let Some(g) = within(fd.readable()).await else {
                            return "TIMEOUT".into();
                        };
                        drop(g);
                        let other = match round {
                            0 => {
                                let mut g = fd.readable().await.expect("readable");
                                format!("{:?}", g.try_io(|_| fail(io::ErrorKind::Other)).map(|r| r.map_err(|e| e.kind())))
                            }
                            1 => {
                                let mut g = fd.readable_mut().await.expect("readable");
                                format!("{:?}", g.try_io(|_| fail(io::ErrorKind::Other)).map(|r| r.map_err(|e| e.kind())))
                            }
                            _ => format!("{:?}", fd.try_io(Interest::READABLE, |_| fail(io::ErrorKind::Other)).map_err(|e| e.kind())),
                        };
                        let kept = poll_counting(std::pin::pin!(fd.readable()), &count).is_ready();
                        let blocked = match round {
                            0 => {
                                let mut g = fd.readable().await.expect("readable");
                                g.try_io(|_| fail(io::ErrorKind::WouldBlock)).is_err()
                            }
                            1 => {
                                let mut g = fd.readable_mut().await.expect("readable");
                                g.try_io(|_| fail(io::ErrorKind::WouldBlock)).is_err()
                            }
                            _ => fd.try_io(Interest::READABLE, |_| fail(io::ErrorKind::WouldBlock)).is_err(),
                        };
                        let pending = poll_counting(std::pin::pin!(fd.readable()), &count).is_pending();
                        out.push(format!("{other}, kept {kept}, would block {blocked}, then pending {pending}"));
                        // A new edge for the next round.
                        peer_write(&peer, b"y").expect("write");
                    }
                    out.join("; ")
                }
                20 => {
                    // `Ready` and `Interest` as values: their `Debug`,
                    // order and operators (what a guard's `ready()` gives
                    // a program).
                    let all = [
                        Ready::EMPTY,
                        Ready::READABLE,
                        Ready::WRITABLE,
                        Ready::READ_CLOSED,
                        Ready::WRITE_CLOSED,
                        Ready::PRIORITY,
                        Ready::ERROR,
                        Ready::ALL,
                    ];
                    let mut acc = Ready::EMPTY;
                    let mut out = Vec::new();
                    for (i, r) in all.iter().enumerate() {
                        acc |= *r;
                        out.push(format!("{r:?} {} {:?}", bits(*r), all.iter().map(|o| r.cmp(o)).collect::<Vec<_>>()));
                        out.push(format!("{i}: {:?} {:?}", acc - Ready::READABLE, acc & Ready::WRITABLE));
                    }
                    let mut i = Interest::READABLE;
                    i |= Interest::ERROR;
                    for i in [
                        i,
                        Interest::PRIORITY.add(Interest::WRITABLE),
                        Interest::ERROR,
                        Interest::READABLE | Interest::WRITABLE | Interest::PRIORITY | Interest::ERROR,
                    ] {
                        out.push(format!(
                            "{i:?} {} {} {} {} {:?} {:?}",
                            i.is_readable(),
                            i.is_writable(),
                            i.is_priority(),
                            i.is_error(),
                            i.remove(Interest::READABLE),
                            i.remove(Interest::ERROR)
                        ));
                    }
                    out.join("; ")
                }
                22 => {
                    // The coop budget: how many waits on an always-ready
                    // descriptor complete within one poll of the task
                    // before one says `Pending` (the poll_* and async_io
                    // spend it; readable() and try_io do not).
                    let (ours, peer) = pair(Kind::Unix);
                    let fd = AsyncFd::new(ours).expect("register");
                    peer_write(&peer, b"x").expect("write");
                    let both = |r: Ready| r.is_readable() && r.is_writable();
                    if !settle(&fd, Interest::READABLE | Interest::WRITABLE, both).await {
                        return "never both".into();
                    }
                    k::task::yield_now().await;
                    let mut out = Vec::new();
                    for how in 0..5 {
                        k::task::yield_now().await;
                        let n = std::future::poll_fn(|cx| {
                            let mut n = 0;
                            while n < 300 {
                                let ready = match how {
                                    0 => fd.poll_read_ready(cx).is_ready(),
                                    1 => fd.poll_write_ready(cx).is_ready(),
                                    2 => std::pin::pin!(fd.readable()).poll(cx).is_ready(),
                                    3 => std::pin::pin!(fd.async_io(Interest::WRITABLE, |_| Ok(()))).poll(cx).is_ready(),
                                    _ => fd.try_io(Interest::READABLE, |_| Ok(())).is_ok(),
                                };
                                if !ready {
                                    break;
                                }
                                n += 1;
                            }
                            Poll::Ready(n)
                        })
                        .await;
                        out.push(n.to_string());
                    }
                    out.join(" ")
                }
                23 => {
                    // Registered for ERROR (with WRITABLE or PRIORITY or
                    // alone): Tokio's registration asks the poller for
                    // reads too (it needs some interest for an error-only
                    // one), so a wait for READABLE sees the peer's bytes.
                    let mut out = Vec::new();
                    for i in [
                        Interest::ERROR,
                        Interest::WRITABLE | Interest::ERROR,
                        Interest::PRIORITY | Interest::ERROR,
                    ] {
                        let (ours, peer) = pair(Kind::Tcp);
                        let fd = AsyncFd::with_interest(ours, i).expect("register");
                        peer_write(&peer, b"x").expect("write");
                        let r = match within(fd.readable()).await {
                            None => "TIMEOUT".to_string(),
                            Some(r) => format!("{:?}", r.map(|g| g.ready().is_readable()).map_err(|e| kind(&e))),
                        };
                        out.push(format!("{i:?}: readable {r}"));
                    }
                    out.join(", ")
                }
                24 => {
                    // Other descriptors: a listening socket (readable when
                    // a connection waits), a timerfd (readable once it
                    // fires), /dev/null (refused by epoll).
                    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
                    l.set_nonblocking(true).expect("nonblocking");
                    let addr = l.local_addr().expect("addr");
                    let fd = AsyncFd::with_interest(l, Interest::READABLE).expect("register");
                    let count = Arc::new(Count::default());
                    let before = poll_counting(std::pin::pin!(fd.readable()), &count).is_pending();
                    let client = std::net::TcpStream::connect(addr).expect("connect");
                    let mut accepted = "TIMEOUT".to_string();
                    for _ in 0..50 {
                        let Some(Ok(mut g)) = within(fd.readable()).await else {
                            break;
                        };
                        if let Ok(r) = g.try_io(|l| l.get_ref().accept()) {
                            let again = g.try_io(|l| l.get_ref().accept()).is_err();
                            accepted = format!("{:?}, then would block {again}", r.map(|(s, _)| s.peer_addr().ok() == client.local_addr().ok()).map_err(|e| kind(&e)));
                            break;
                        }
                    }
                    // SAFETY: timerfd_create takes no pointers.
                    let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
                    assert!(raw >= 0, "timerfd");
                    // SAFETY: a fresh descriptor nobody else owns.
                    let timer = File::from(unsafe { OwnedFd::from_raw_fd(raw) });
                    let tfd = AsyncFd::with_interest(timer, Interest::READABLE).expect("register");
                    let idle = poll_counting(std::pin::pin!(tfd.readable()), &count).is_pending();
                    let spec = libc::itimerspec {
                        it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
                        it_value: libc::timespec { tv_sec: 0, tv_nsec: 2_000_000 },
                    };
                    // SAFETY: a valid itimerspec; no old value asked for.
                    let set = unsafe { libc::timerfd_settime(raw, 0, &spec, std::ptr::null_mut()) };
                    assert_eq!(set, 0, "timerfd_settime");
                    let fired = match within(tfd.readable()).await {
                        None => "TIMEOUT".to_string(),
                        Some(Ok(mut g)) => {
                            let r = g.try_io(|f| {
                                let mut v = [0u8; 8];
                                io::Read::read(&mut &*f.get_ref(), &mut v).map(|_| u64::from_ne_bytes(v))
                            });
                            format!("{:?}", r.map(|r| r.map_err(|e| kind(&e))))
                        }
                        Some(Err(e)) => format!("Err({})", kind(&e)),
                    };
                    let null = File::open("/dev/null").expect("open");
                    let null = res(AsyncFd::new(null));
                    format!("listener pending {before}, accepted {accepted}; timer pending {idle}, fired {fired}; /dev/null {null}")
                }
                _ => unreachable!("case {n}"),
            }
        }

        /// Cases that make their own runtime, or none.
        #[allow(deprecated)]
        fn case_outside(n: usize) -> String {
            match n {
                14 => format!("outside a runtime: {}", constructors()),
                15 => {
                    let rt = k::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
                    let _enter = rt.enter();
                    format!("without the I/O driver: {}", constructors())
                }
                16 => block_on_plain(n),
                21 => {
                    // An AsyncFd registered on a multi_thread runtime,
                    // waited for on another runtime that has no I/O
                    // driver (and from a plain thread): the first
                    // runtime's driver serves it.
                    let (ours, peer) = pair(Kind::Unix);
                    let io = k::runtime::Builder::new_multi_thread()
                        .worker_threads(1)
                        .enable_all()
                        .build()
                        .expect("runtime");
                    let fd = Arc::new({
                        let _enter = io.enter();
                        AsyncFd::with_interest(ours, Interest::READABLE).expect("register")
                    });
                    let other = k::runtime::Builder::new_current_thread()
                        .enable_time()
                        .build()
                        .expect("runtime");
                    let mut out = Vec::new();
                    for round in 0..2 {
                        let writer = {
                            let peer = peer.try_clone().expect("dup");
                            std::thread::spawn(move || {
                                std::thread::sleep(Duration::from_millis(2));
                                peer_write(&peer, b"x")
                            })
                        };
                        let got = if round == 0 {
                            other.block_on(async {
                                loop {
                                    let Some(g) = within(fd.readable()).await else {
                                        return "TIMEOUT".to_string();
                                    };
                                    let mut g = g.expect("readable");
                                    let r = g.try_io(|f| crate::interp::rd(f.get_ref(), &mut [0u8; 4]));
                                    if let Ok(r) = r {
                                        return format!("{:?}", r.map_err(|e| kind(&e)));
                                    }
                                }
                            })
                        } else {
                            // No runtime at all: a plain executor, on a
                            // thread of its own (a hang there is left
                            // behind and logged as one).
                            let (tx, rx) = std::sync::mpsc::channel();
                            let fd = fd.clone();
                            std::thread::spawn(move || {
                                let got = futures::executor::block_on(async {
                                    loop {
                                        let mut g = fd.readable().await.expect("readable");
                                        let r = g.try_io(|f| crate::interp::rd(f.get_ref(), &mut [0u8; 4]));
                                        if let Ok(r) = r {
                                            return format!("{:?}", r.map_err(|e| kind(&e)));
                                        }
                                    }
                                });
                                let _ = tx.send(got);
                            });
                            rx.recv_timeout(LIMIT).unwrap_or_else(|_| "TIMEOUT".into())
                        };
                        writer.join().expect("writer").expect("write");
                        out.push(got);
                    }
                    drop(fd);
                    out.join(", ")
                }
                _ => block_on!(false, case(n)),
            }
        }

        /// Case 16 is async only for its helpers: it builds and drops a
        /// runtime of its own, then polls by hand.
        fn block_on_plain(n: usize) -> String {
            let mut f = std::pin::pin!(case(n));
            match poll_counting(f.as_mut(), &Arc::new(Count::default())) {
                Poll::Ready(s) => s,
                Poll::Pending => "Pending".into(),
            }
        }

        pub fn run(s: &CaseScript) -> Vec<Step> {
            let mut log = Log::default();
            for &n in &s.cases {
                let out = if NO_RUNTIME.contains(&n) {
                    case_outside(n)
                } else {
                    block_on!(s.multi, case(n))
                };
                log.push(n, out);
            }
            log.steps
        }
    };
}

for_both!(cases_group);
