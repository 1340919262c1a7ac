//! Single cases, run on both crates and compared like the scripts: what
//! needs no random sequence. Here: the harness side (the case list, its
//! runner), the helpers every case uses, and the cases about making and
//! unmaking an `AsyncFd` (every `Interest` and constructor, the errors
//! and the object they hand back, a descriptor epoll refuses, one
//! registered twice, a bad one, outside a runtime and without the I/O
//! driver: whether it panics and the gist of the message; a runtime
//! dropped under one; one waited for from another runtime and from a
//! plain executor). `cases_readiness.rs` has the cases about readiness
//! and waits. A "script" is a list of case numbers, so the harness can
//! shrink a mismatch to one case.
//!
//! Only what is certain is logged: a readiness bit that depends on which
//! event the driver has taken so far is not (a hang-up's `READABLE` on
//! io_uring comes with the next read poll, not with epoll's hang-up), and
//! a case that clears readiness and then looks at it runs on a
//! current_thread runtime of its own (`NO_RUNTIME`), where no driver takes
//! an event in between.

use crate::harness::{block_on, for_both, Log, Rng, Step};
use crate::peers::{kind, pair, peer_read, peer_write, poll_counting, Count, LIMIT};
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

pub use crate::harness::CaseScript;

/// Every case, on one flavour of runtime (seed 0: current_thread).
pub fn gen(rng: &mut Rng) -> CaseScript {
    CaseScript::every(CASES, rng)
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
        crate::cases_readiness::readiness_cases!();

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
                _ => readiness_case(n).await,
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
                                    let r = g.try_io(|f| crate::peers::rd(f.get_ref(), &mut [0u8; 4]));
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
                                        let r = g.try_io(|f| crate::peers::rd(f.get_ref(), &mut [0u8; 4]));
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
