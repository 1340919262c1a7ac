//! The single cases about readiness and waits (the harness, helpers and
//! construction cases are in `cases.rs`): an eventfd, a timerfd and a
//! listener, errors, hang-ups and priority, an `ERROR` interest's reads,
//! an `AsyncFd` dropped after a task waited on it, the one-waker slots of
//! `poll_read_ready`, `try_io` with two interests, what the guards'
//! `clear_ready_matching` and `retain_ready` leave, two waits woken by one
//! event, `try_io` and errors, `Ready` and `Interest` as values, the coop
//! budget, and the guards' `Debug`. Written once in a macro that
//! `cases_group!` expands for both crates.

/// `readiness_case(n)`, for `cases_group!` (its helpers are in scope).
macro_rules! readiness_cases {
    () => {
        #[allow(deprecated)]
        async fn readiness_case(n: usize) -> String {
            match n {
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
                    let wrote = w.try_io(|f| crate::peers::wr(f.get_ref(), b"x"));
                    let wrote = format!("{:?}", wrote.map(|r| r.map_err(|e| kind(&e))));
                    drop(w);
                    let Some(r) = within(fd.readable()).await else {
                        return "TIMEOUT".into();
                    };
                    let mut r = r.expect("readable");
                    let rc = r.ready().is_read_closed();
                    let read = r.try_io(|f| crate::peers::rd(f.get_ref(), &mut [0u8; 4]));
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
                    let wrote = g.try_io(|f| crate::peers::wr(f.get_ref(), b"x"));
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
                            let got = g.try_io(|f| crate::peers::rd(f.get_ref(), &mut buf));
                            let again = g.try_io(|f| crate::peers::rd(f.get_ref(), &mut buf));
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
    };
}
pub(crate) use readiness_cases;
