//! The script ops that look at readiness rather than move bytes: polls
//! that must stay pending, wake-ups that must come, guards whose bits are
//! certain, settling on `READ_CLOSED`, several waiters, errors, priority,
//! a full socket. Methods of the interpreter (`interp.rs`), written once
//! in a macro it expands for both crates.

/// The readiness ops' methods, for `interp_group!`'s `I`.
macro_rules! readiness_ops {
    () => {
        impl I {
            /// `Op::Fill`.
            async fn fill(&mut self, p: usize, poll: bool) -> Result<String, Stop> {
                let m = &mut self.m[p];
                let skip = Ok("skip".to_string());
                if !m.stream()
                    || !m.reg.writes()
                    || m.shut
                    || !matches!(m.peer, Peer::Open | Peer::Shut)
                {
                    return skip;
                }
                let sure = m.kind == Kind::Unix && !self.multi;
                // How much fits is the kernel's business (TCP's
                // varies from run to run): the pattern goes on
                // from where it was once the peer drained it all.
                let mark = m.written[1];
                let mut expect: Vec<u8> = m.outq.iter().flatten().copied().collect();
                let fd = self.slots[p].fd.as_ref().expect("present");
                let mut full = false;
                for _ in 0..1000 {
                    let mut g = match k::time::timeout(LIMIT, fd.writable()).await {
                        Err(_) => return Err(Stop),
                        Ok(Err(e)) => return Ok(format!("Err({})", kind(&e))),
                        Ok(Ok(g)) => g,
                    };
                    let m = &mut self.m[p];
                    let data = m.pattern(1, 16 * 1024);
                    match g.try_io(|f| wr(f.get_ref(), &data)) {
                        Ok(Ok(n)) => {
                            m.written[1] -= data.len() - n;
                            expect.extend_from_slice(&data[..n]);
                        }
                        Ok(Err(e)) => return Ok(format!("Err({})", kind(&e))),
                        Err(_would_block) => {
                            m.written[1] -= data.len();
                            full = true;
                            break;
                        }
                    }
                }
                if !full {
                    return Ok("never full".into());
                }
                let count = Arc::new(Count::default());
                let pending = {
                    let f = std::pin::pin!(fd.writable());
                    poll_counting(f, &count).is_pending()
                };
                let peer = self.slots[p]
                    .peer
                    .as_ref()
                    .expect("open")
                    .try_clone()
                    .expect("dup");
                let want = expect.len();
                let reader = std::thread::spawn(move || peer_read(&peer, want, false, false));
                let again = if poll {
                    let w = k::time::timeout(
                        LIMIT,
                        poll_fn(|cx| {
                            fd.poll_write_ready(cx)
                                .map(|r| r.map(|g| g.ready().is_writable()))
                        }),
                    )
                    .await;
                    match w {
                        Err(_) => return Err(Stop),
                        Ok(r) => r.map_err(|e| kind(&e)),
                    }
                } else {
                    match k::time::timeout(LIMIT, fd.writable()).await {
                        Err(_) => return Err(Stop),
                        Ok(r) => r.map(|g| g.ready().is_writable()).map_err(|e| kind(&e)),
                    }
                };
                let drained = reader.join().expect("reader").map(|b| b == expect);
                let m = &mut self.m[p];
                m.outq.clear();
                m.w = false;
                m.written[1] = mark;
                let pending = if sure {
                    format!("pending {pending}, ")
                } else {
                    String::new()
                };
                Ok(format!(
                    "full, {pending}writable again {again:?}, drained as written {:?}",
                    drained.map_err(|e| kind(&e))
                ))
            }

            /// `Op::WaitError`.
            async fn wait_error(&mut self, p: usize) -> Result<String, Stop> {
                let m = &mut self.m[p];
                let skip = Ok("skip".to_string());
                if !m.err {
                    return skip;
                }
                let udp = m.kind == Kind::Udp;
                let fd = self.fd(p);
                let e = match k::time::timeout(LIMIT, fd.ready(Interest::ERROR)).await {
                    Err(_) => return Err(Stop),
                    Ok(r) => format!(
                        "{:?}",
                        r.map(|g| g.ready().is_error()).map_err(|e| kind(&e))
                    ),
                };
                if !udp {
                    return Ok(e);
                }
                // The refusal, read off the socket.
                let r = rd(fd.get_ref(), &mut [0u8; 8]);
                self.m[p].err = false;
                Ok(format!("{e}, read {:?}", r.map_err(|e| kind(&e))))
            }

            /// `Op::Urgent`.
            async fn urgent(&mut self, p: usize) -> Result<String, Stop> {
                let m = &mut self.m[p];
                let skip = Ok("skip".to_string());
                if m.kind != Kind::Tcp || m.peer != Peer::Open || m.reg != Reg::BothPriority {
                    return skip;
                }
                // Pending before the first urgent byte (where
                // certain), ready once a guard showed PRIORITY.
                let sure = (!self.multi && !m.hangup() && !m.rc && !m.urgent) || m.pri;
                m.urgent = true;
                m.read_edge();
                let count = Arc::new(Count::default());
                let fd = self.slots[p].fd.as_ref().expect("present");
                let before = {
                    let f = std::pin::pin!(fd.ready(Interest::PRIORITY));
                    poll_counting(f, &count).is_pending()
                };
                let peer = self.slots[p].peer.as_ref().expect("open");
                crate::cases::send_oob(peer);
                let after = match k::time::timeout(LIMIT, fd.ready(Interest::PRIORITY)).await {
                    Err(_) => return Err(Stop),
                    Ok(r) => r.map(|g| g.ready().is_priority()).map_err(|e| kind(&e)),
                };
                if after == Ok(true) {
                    self.m[p].pri = true;
                }
                let before = if sure {
                    format!("pending before {before}, ")
                } else {
                    String::new()
                };
                Ok(format!("{before}priority {after:?}"))
            }

            /// `Op::PollRead`.
            async fn poll_read(&mut self, p: usize) -> Result<String, Stop> {
                let m = &self.m[p];
                let sure_pending = if m.reg.reads() {
                    self.surely_clear(p)
                } else {
                    !self.multi && !m.hangup() && m.peer != Peer::Reset
                };
                let sure_ready = m.reg.reads() && m.r == Tri::Set;
                let count = Arc::new(Count::default());
                let fd = self.fd(p);
                let mut f = std::pin::pin!(fd.readable());
                let out = match poll_counting(f.as_mut(), &count) {
                    Poll::Ready(r) => format!("Ready({})", r.is_ok()),
                    Poll::Pending => "Pending".into(),
                };
                Ok(if sure_pending || sure_ready {
                    out
                } else {
                    "-".into()
                })
            }

            /// `Op::ReadyBoth`.
            async fn ready_both(&mut self, p: usize, g: G) -> Result<String, Stop> {
                let m = &mut self.m[p];
                let skip = Ok("skip".to_string());
                if !m.reg.reads() || !m.reg.writes() {
                    return skip;
                }
                if m.peer == Peer::Reset || m.shut {
                    return skip;
                }
                let sure_r = m.r == Tri::Set || self.surely_clear(p);
                let m = &self.m[p];
                let quiet =
                    m.r == Tri::Clear && !m.readable() && !m.hangup() && m.peer == Peer::Open;
                let sure_w = m.w || (quiet && !self.multi);
                let clear = g == G::ClearReadable && !m.readable();
                let fd = self.fd(p);
                let mut guard = match k::time::timeout(
                    LIMIT,
                    fd.ready(Interest::READABLE | Interest::WRITABLE),
                )
                .await
                {
                    Err(_) => return Err(Stop),
                    Ok(Err(e)) => return Ok(format!("Err({})", kind(&e))),
                    Ok(Ok(g)) => g,
                };
                let ready = guard.ready();
                let w = match (sure_w, ready.is_writable()) {
                    (false, _) => "?",
                    (true, true) => "W",
                    (true, false) => "-",
                };
                let out = format!("{}{w}", bit(ready, sure_r));
                match g {
                    G::Drop => drop(guard),
                    G::Retain => guard.retain_ready(),
                    G::ClearReadable if clear => {
                        guard.clear_ready_matching(Ready::READABLE);
                        assert!(!guard.ready().is_readable(), "cleared from the guard");
                    }
                    G::ClearReadable => drop(guard),
                }
                let m = &mut self.m[p];
                if sure_w && ready.is_writable() {
                    m.w = true;
                }
                if clear {
                    m.r = Tri::Clear;
                } else if sure_r && ready.is_readable() {
                    m.r = Tri::Set;
                }
                Ok(out)
            }

            /// `Op::ClearRead`.
            async fn clear_read(
                &mut self,
                p: usize,
                how: u8,
                mutable: bool,
            ) -> Result<String, Stop> {
                let m = &mut self.m[p];
                let skip = Ok("skip".to_string());
                if !m.reg.reads() || m.readable() || m.peer == Peer::Reset {
                    return skip;
                }
                let sure = m.r == Tri::Set || self.surely_clear(p);
                let count = Arc::new(Count::default());
                let fd = self.fd(p);
                let out = if mutable {
                    let fd = sole(fd);
                    let mut f = std::pin::pin!(fd.readable_mut());
                    match poll_counting(f.as_mut(), &count) {
                        Poll::Pending => "Pending".to_string(),
                        Poll::Ready(Err(e)) => format!("Err({})", kind(&e)),
                        Poll::Ready(Ok(mut g)) => match how {
                            0 => {
                                g.clear_ready();
                                "cleared".into()
                            }
                            1 => {
                                g.clear_ready_matching(Ready::READABLE);
                                "cleared".into()
                            }
                            _ => format!(
                                "{:?}",
                                g.try_io(|_| -> io::Result<()> {
                                    Err(io::ErrorKind::WouldBlock.into())
                                })
                                .is_err()
                            ),
                        },
                    }
                } else {
                    let mut f = std::pin::pin!(fd.readable());
                    match poll_counting(f.as_mut(), &count) {
                        Poll::Pending => "Pending".to_string(),
                        Poll::Ready(Err(e)) => format!("Err({})", kind(&e)),
                        Poll::Ready(Ok(mut g)) => match how {
                            0 => {
                                g.clear_ready();
                                "cleared".into()
                            }
                            1 => {
                                g.clear_ready_matching(Ready::READABLE);
                                "cleared".into()
                            }
                            _ => format!(
                                "{:?}",
                                g.try_io(|_| -> io::Result<()> {
                                    Err(io::ErrorKind::WouldBlock.into())
                                })
                                .is_err()
                            ),
                        },
                    }
                };
                self.m[p].r = Tri::Clear;
                Ok(if sure { out } else { "-".into() })
            }

            /// `Op::SettleClosed`.
            async fn settle_closed(&mut self, p: usize) -> Result<String, Stop> {
                let m = &mut self.m[p];
                let skip = Ok("skip".to_string());
                if !m.reg.reads() || !m.eof() || m.peer == Peer::Reset {
                    return skip;
                }
                let fd = self.fd(p);
                let mut seen = false;
                for _ in 0..50 {
                    let mut g = match k::time::timeout(LIMIT, fd.readable()).await {
                        Err(_) => return Err(Stop),
                        Ok(Err(e)) => return Ok(format!("Err({})", kind(&e))),
                        Ok(Ok(g)) => g,
                    };
                    if g.ready().is_read_closed() {
                        seen = true;
                        break;
                    }
                    // READ_CLOSED has not come yet: the event that
                    // brings it is still to come on epoll, and on
                    // io_uring the next wait arms a poll that
                    // reports it.
                    g.clear_ready();
                }
                let m = &mut self.m[p];
                m.rc = seen;
                m.r = Tri::Unknown;
                Ok(format!("read_closed {seen}"))
            }

            /// `Op::Waiters`.
            async fn waiters(&mut self, p: usize, n: usize) -> Result<String, Stop> {
                let m = &mut self.m[p];
                let skip = Ok("skip".to_string());
                if !m.reg.reads() || m.peer != Peer::Open || Fd::queued(&m.inq) + 1 > CAP {
                    return skip;
                }
                let fd = self.fd(p).clone();
                let tasks: Vec<_> = (0..n)
                    .map(|_| {
                        let fd = fd.clone();
                        k::spawn(async move {
                            match k::time::timeout(LIMIT, fd.readable()).await {
                                Ok(Ok(g)) => g.ready().is_readable(),
                                _ => false,
                            }
                        })
                    })
                    .collect();
                drop(fd);
                k::task::yield_now().await;
                let m = &mut self.m[p];
                let data = m.pattern(0, 1);
                let peer = self.slots[p].peer.as_ref().expect("open");
                peer_write(peer, &data).expect("peer write");
                let m = &mut self.m[p];
                m.inq.push_back(data);
                m.read_edge();
                let mut woke = 0;
                for t in tasks {
                    if t.await.unwrap_or(false) {
                        woke += 1;
                    }
                }
                self.m[p].r = Tri::Set;
                Ok(format!("{woke} of {n} saw READABLE"))
            }

            async fn wait_wake(
                &mut self,
                p: usize,
                n: usize,
                thread: bool,
            ) -> Result<String, Stop> {
                let m = &self.m[p];
                if !m.reg.reads() || m.readable() || m.peer != Peer::Open || n > CAP {
                    return Ok("skip".into());
                }
                let sure = self.surely_clear(p);
                let m = &mut self.m[p];
                let data = m.pattern(0, n);
                m.inq.push_back(data.clone());
                m.read_edge();
                m.r = Tri::Set;
                let peer = self.slots[p]
                    .peer
                    .as_ref()
                    .expect("open")
                    .try_clone()
                    .expect("dup");
                let count = Arc::new(Count::default());
                let fd = self.fd(p);
                let mut f = std::pin::pin!(fd.readable());
                let first = poll_counting(f.as_mut(), &count);
                let first_ready = first.is_ready();
                drop(first);
                if thread {
                    std::thread::spawn(move || peer_write(&peer, &data))
                        .join()
                        .expect("writer thread")
                        .expect("peer write");
                } else {
                    peer_write(&peer, &data).expect("peer write");
                }
                // Where the model cannot say whether the first poll is
                // pending, both outcomes log alike when all went well.
                let fine = "woken, or ready at once";
                if first_ready {
                    return Ok(if sure { "Ready at once" } else { fine }.into());
                }
                // The waker must be called; the runtime runs its drivers
                // while this task sleeps.
                let deadline = std::time::Instant::now() + LIMIT;
                while count.get() == 0 && std::time::Instant::now() < deadline {
                    k::time::sleep(Duration::from_millis(1)).await;
                }
                let woken = count.get() > 0;
                let again = match poll_counting(f.as_mut(), &count) {
                    Poll::Ready(Ok(g)) => {
                        if g.ready().is_readable() {
                            "R"
                        } else {
                            "no R"
                        }
                    }
                    Poll::Ready(Err(_)) => "Err",
                    Poll::Pending => "Pending",
                };
                if !sure && woken && again == "R" {
                    return Ok(fine.into());
                }
                let first = if sure { "Pending, " } else { "" };
                Ok(format!("{first}woken {woken}, then {again}"))
            }
        }
    };
}
pub(crate) use readiness_ops;
