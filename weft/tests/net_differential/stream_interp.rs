//! The stream scripts' interpreter (`streams.rs` has the script, the
//! generator and the model), written once and expanded for both crates.
//!
//! Each end is a whole stream, a pair of owned halves, a read half alone
//! (its write half dropped or forgotten) or gone. The dispatch macros pick
//! the read or write side whatever the end's shape, so every op runs
//! through streams and halves alike. Every op has a time limit (3 s): an
//! op that hangs on one crate logs `TIMEOUT` and ends the script.

use std::future::Future;

/// Runs `$e` with `$x` bound to the end's read side (stream or read half).
macro_rules! rd {
    ($end:expr, $x:ident => $e:expr) => {
        match $end {
            End::Whole(Stream::Tcp($x)) => $e,
            End::Whole(Stream::Unix($x)) => $e,
            End::Halves(Rh::Tcp($x), _) | End::ReadOnly(Rh::Tcp($x)) => $e,
            End::Halves(Rh::Unix($x), _) | End::ReadOnly(Rh::Unix($x)) => $e,
            End::Gone => unreachable!("guarded"),
        }
    };
}

/// Runs `$e` with `$x` bound to the end's write side.
macro_rules! wr {
    ($end:expr, $x:ident => $e:expr) => {
        match $end {
            End::Whole(Stream::Tcp($x)) => $e,
            End::Whole(Stream::Unix($x)) => $e,
            End::Halves(_, Wh::Tcp($x)) => $e,
            End::Halves(_, Wh::Unix($x)) => $e,
            End::ReadOnly(_) | End::Gone => unreachable!("guarded"),
        }
    };
}

/// Polls `f` once with a waker that does nothing: `None` if `Pending`.
pub fn poll_once<F: Future>(f: F) -> Option<F::Output> {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Some(v),
        std::task::Poll::Pending => None,
    }
}

/// At most this many bytes queued towards an end (buffers stay far from
/// full, so every write is whole).
pub const CAP: usize = 16 * 1024;

macro_rules! stream_group {
    () => {
        use k::io::{AsyncReadExt, AsyncWriteExt, Interest};
        use k::net::{tcp, unix, TcpListener, TcpSocket, TcpStream};
        use k::net::{UnixListener, UnixSocket, UnixStream};
        use std::io::{IoSlice, IoSliceMut};

        enum Stream {
            Tcp(TcpStream),
            Unix(UnixStream),
        }
        enum Rh {
            Tcp(tcp::OwnedReadHalf),
            Unix(unix::OwnedReadHalf),
        }
        enum Wh {
            Tcp(tcp::OwnedWriteHalf),
            Unix(unix::OwnedWriteHalf),
        }
        enum End {
            Whole(Stream),
            Halves(Rh, Wh),
            ReadOnly(Rh),
            Gone,
        }

        impl End {
            fn reads(&self) -> bool {
                !matches!(self, End::Gone)
            }
            fn writes(&self) -> bool {
                matches!(self, End::Whole(_) | End::Halves(..))
            }
        }

        fn uaddr(a: io::Result<unix::SocketAddr>) -> String {
            res(a, |a| match a.as_pathname() {
                Some(p) => p.display().to_string(),
                None if a.is_unnamed() => "unnamed".into(),
                None => "abstract".into(),
            })
        }

        /// One read of kind `how` into `n` bytes (`wait`: `readable()`
        /// first for the `try_*` kinds); the bytes it gave.
        async fn read_once(end: &mut End, how: Rd, n: usize, wait: bool) -> io::Result<Vec<u8>> {
            let mut buf = vec![0u8; n];
            if wait && matches!(how, Rd::Try | Rd::TryVec | Rd::TryBuf) {
                rd!(end, s => s.readable().await)?;
            }
            let got = match how {
                Rd::Read => rd!(end, s => s.read(&mut buf).await)?,
                Rd::Exact => rd!(end, s => s.read_exact(&mut buf).await)?,
                Rd::Buf => {
                    let mut b = &mut buf[..];
                    rd!(end, s => s.read_buf(&mut b).await)?
                }
                Rd::Try => rd!(end, s => s.try_read(&mut buf))?,
                Rd::TryVec => {
                    let (a, b) = buf.split_at_mut(n / 2);
                    let mut v = [IoSliceMut::new(a), IoSliceMut::new(b)];
                    rd!(end, s => s.try_read_vectored(&mut v))?
                }
                Rd::TryBuf => {
                    let mut b = &mut buf[..];
                    rd!(end, s => s.try_read_buf(&mut b))?
                }
                Rd::PollRead => {
                    let mut rb = k::io::ReadBuf::new(&mut buf);
                    std::future::poll_fn(|cx| {
                        rd!(&mut *end, s => k::io::AsyncRead::poll_read(
                            std::pin::Pin::new(s), cx, &mut rb))
                    })
                    .await?;
                    rb.filled().len()
                }
                Rd::Peek => match end {
                    End::Whole(Stream::Tcp(s)) => s.peek(&mut buf).await?,
                    End::Halves(Rh::Tcp(s), _) | End::ReadOnly(Rh::Tcp(s)) => {
                        s.peek(&mut buf).await?
                    }
                    _ => unreachable!("guarded"),
                },
            };
            buf.truncate(got);
            Ok(buf)
        }

        async fn write_once(end: &mut End, how: Wr, data: &[u8]) -> io::Result<usize> {
            let (a, b) = data.split_at(data.len() / 2);
            let v = [IoSlice::new(a), IoSlice::new(b)];
            match how {
                Wr::All => wr!(end, s => s.write_all(data).await).map(|()| data.len()),
                Wr::Once => wr!(end, s => s.write(data).await),
                Wr::Vectored => wr!(end, s => s.write_vectored(&v).await),
                Wr::Try => {
                    wr!(end, s => s.writable().await)?;
                    wr!(end, s => s.try_write(data))
                }
                Wr::TryVec => {
                    wr!(end, s => s.writable().await)?;
                    wr!(end, s => s.try_write_vectored(&v))
                }
            }
        }

        struct I {
            ends: [End; 2],
            m: Model,
            kind: Kind,
        }

        impl I {
            fn two(&mut self, e: usize) -> (&mut End, &mut End) {
                let [a, b] = &mut self.ends;
                if e == 0 {
                    (a, b)
                } else {
                    (b, a)
                }
            }

            /// Reads until EOF or an error (a dropped or resetting peer):
            /// the bytes and how it ended.
            async fn read_to_end(&mut self, e: usize, how: Rd) -> String {
                let how = match how {
                    Rd::Exact | Rd::Peek => Rd::Read,
                    h => h,
                };
                let mut got = Vec::new();
                let mut end = "gave up".to_string();
                for _ in 0..200 {
                    match read_once(&mut self.ends[e], how, 4096, true).await {
                        Ok(b) if b.is_empty() => {
                            end = "Ok(0)".into();
                            break;
                        }
                        Ok(b) => got.extend(b),
                        Err(x) if x.kind() == io::ErrorKind::WouldBlock => {}
                        Err(x) if self.m.blur_reset[e]
                            && x.kind() == io::ErrorKind::ConnectionReset =>
                        {
                            end = "Ok(0)".into();
                            break;
                        }
                        Err(x) => {
                            end = format!("Err({:?})", x.kind());
                            break;
                        }
                    }
                }
                let n = got.len().min(self.m.inq[e].len());
                self.m.inq[e].drain(..n);
                self.m.reset[e] = true;
                format!("{} then {end}", show(&got))
            }

            async fn read(&mut self, e: usize, how: Rd, n: usize) -> String {
                if how == Rd::Peek && self.kind == Kind::Unix {
                    return "skip".into();
                }
                if self.m.gone[1 - e] || self.m.reset[e] {
                    return self.read_to_end(e, how).await;
                }
                let (avail, eof) = (self.m.inq[e].len(), self.m.eof(e));
                let end = &mut self.ends[e];
                let tries = matches!(how, Rd::Try | Rd::TryVec | Rd::TryBuf);
                if avail == 0 && !eof {
                    if tries {
                        return res(read_once(end, how, n, false).await, |b| show(&b));
                    }
                    self.m.cancelled[e] = true;
                    return match poll_once(read_once(end, how, n, false)) {
                        None => "Pending".into(),
                        Some(r) => res(r, |b| show(&b)),
                    };
                }
                if how == Rd::Peek {
                    return match read_once(end, how, n, true).await {
                        Ok(b) if !b.is_empty() && self.m.inq[e].starts_with(&b) => {
                            "Ok(a prefix of the queued bytes)".into()
                        }
                        r => res(r, |b| show(&b)),
                    };
                }
                if how == Rd::Exact && (n > avail && eof || avail == 0) {
                    let r = read_once(end, how, n, true).await;
                    self.m.inq[e].clear();
                    return res(r, |b| show(&b));
                }
                // Chunks are not behaviour: read until `want` bytes came.
                let want = n.min(avail);
                let mut got = Vec::new();
                let mut odd = None;
                while got.len() < want && odd.is_none() {
                    match read_once(end, how, want - got.len(), true).await {
                        Ok(b) if b.is_empty() => odd = Some("Ok(0) early".to_string()),
                        Ok(b) => got.extend(b),
                        Err(x) if tries && x.kind() == io::ErrorKind::WouldBlock => {}
                        Err(x) => odd = Some(format!("Err({:?})", x.kind())),
                    }
                }
                self.m.inq[e].drain(..got.len());
                format!("{}{}", show(&got), odd.map(|o| format!(" then {o}")).unwrap_or_default())
            }

            async fn write(&mut self, e: usize, how: Wr, n: usize) -> String {
                let p = 1 - e;
                if !self.ends[e].writes() || self.m.inq[p].len() + n > CAP {
                    return "skip".into();
                }
                let data = self.m.pattern(e, n);
                if self.m.gone[p] || self.m.reset[e] {
                    // A dead peer: which error, and when, depends on when its
                    // reset arrived; both kinds are one outcome here.
                    for _ in 0..50 {
                        match write_once(&mut self.ends[e], how, &data).await {
                            Ok(_) => k::time::sleep(Duration::from_millis(1)).await,
                            Err(x) => {
                                self.m.reset[e] = true;
                                return match x.kind() {
                                    io::ErrorKind::BrokenPipe
                                    | io::ErrorKind::ConnectionReset => "Err(dead peer)".into(),
                                    k => format!("Err({k:?})"),
                                };
                            }
                        }
                    }
                    return "writes to a dropped peer kept succeeding".into();
                }
                let r = write_once(&mut self.ends[e], how, &data).await;
                if let Ok(k) = r {
                    self.m.inq[p].extend_from_slice(&data[..k]);
                    self.m.written[e] += k;
                    // On io_uring the bytes go out at the runtime's next
                    // batch point (README: documented), so a peer dropped
                    // right after could close before they arrive (a FIN,
                    // not a reset); `writable` waits until they are sent.
                    if let Err(x) = wr!(&mut self.ends[e], s => s.writable().await) {
                        return format!("Ok({k}) then writable: Err({:?})", x.kind());
                    }
                }
                res(r, |k| k.to_string())
            }

            fn has_input(&self, e: usize) -> bool {
                !self.m.inq[e].is_empty() || self.m.eof(e)
            }

            #[allow(deprecated)] // Tokio deprecates `set_linger`; weft keeps it.
            fn opt(&mut self, e: usize, which: u8) -> String {
                let s = match &self.ends[e] {
                    End::Whole(Stream::Tcp(s)) => s,
                    End::Whole(Stream::Unix(s)) => {
                        return res(s.peer_cred(), |c| {
                            // SAFETY: getuid/getgid/getpid cannot fail.
                            let (uid, gid, pid) =
                                unsafe { (libc::getuid(), libc::getgid(), libc::getpid()) };
                            format!(
                                "uid ours {}, gid ours {}, pid ours {}",
                                c.uid() == uid,
                                c.gid() == gid,
                                c.pid() == Some(pid)
                            )
                        });
                    }
                    _ => return "skip".into(),
                };
                let dur = |d: Option<Duration>| format!("{d:?}");
                match which {
                    0 => format!("{:?} {:?}", s.set_nodelay(true).is_ok(), s.nodelay().ok()),
                    1 => res(s.ttl(), |t| t.to_string()),
                    2 => format!("{} {}", res(s.set_ttl(7 + e as u32), |_| "".into()),
                                 res(s.ttl(), |t| t.to_string())),
                    3 => res(s.set_ttl(0), |_| "".into()),
                    4 => res(s.linger(), dur),
                    5 => {
                        self.m.linger0[e] = true;
                        format!("{} {}", res(s.set_linger(Some(Duration::ZERO)), |_| "".into()),
                                res(s.linger(), dur))
                    }
                    6 => {
                        self.m.linger0[e] = false;
                        format!("{} {}", res(s.set_linger(None), |_| "".into()),
                                res(s.linger(), dur))
                    }
                    _ => format!("{} {}", res(s.set_quickack(true), |_| "".into()),
                                 res(s.quickack(), |q| q.to_string())),
                }
            }

            async fn fill(&mut self, e: usize) -> String {
                let p = 1 - e;
                if !self.ends[e].writes() || !self.ends[p].reads() || self.m.shut[e]
                    || self.m.reset[e] || !self.m.inq[p].is_empty()
                {
                    return "skip".into();
                }
                self.m.written[e] = 0;
                let chunk = self.m.pattern(e, 26 * 2000);
                // After the fill the pattern starts over (how much fit
                // differs): one more byte, then the counter says 1.
                let one = self.m.pattern(e, 1);
                let (a, b) = self.two(e);
                if let Err(x) = wr!(&mut *a, s => s.writable().await) {
                    return format!("writable: Err({:?})", x.kind());
                }
                // How much fits differs between runs and crates: only the
                // `WouldBlock` and the drained bytes are logged.
                let mut total = 0;
                let mut full = false;
                for _ in 0..400 {
                    match wr!(&mut *a, s => s.try_write(&chunk)) {
                        Ok(k) => total += k,
                        Err(x) if x.kind() == io::ErrorKind::WouldBlock => {
                            full = true;
                            break;
                        }
                        Err(x) => return format!("try_write: Err({:?})", x.kind()),
                    }
                }
                let again = res(wr!(&mut *a, s => s.try_write(&chunk)), |_| "Ok".into());
                let mut buf = vec![0u8; total];
                let drained = res(rd!(&mut *b, s => s.read_exact(&mut buf).await), |_| "".into());
                let same = buf.iter().enumerate().all(|(i, &c)| c == chunk[i % chunk.len()]);
                let w = res(wr!(&mut *a, s => s.writable().await), |_| "".into());
                let t = wr!(&mut *a, s => s.try_write(&one));
                if let Ok(1) = t {
                    self.m.inq[p].push(one[0]);
                    self.m.written[e] = 1;
                }
                format!("full {full}, again {again}, drained {drained} same {same}, \
                         writable {w}, try_write {}", res(t, |k| k.to_string()))
            }

            async fn step(&mut self, op: Op, log: &mut Log) -> String {
                match op {
                    Op::Write(e, how, n) => self.write(e, how, n).await,
                    Op::Read(e, how, n) if self.ends[e].reads() => self.read(e, how, n).await,
                    Op::Readable(e) | Op::Ready(e, 1) | Op::PollReadReady(e)
                        if self.ends[e].reads() =>
                    {
                        let ready = self.has_input(e);
                        let end = &mut self.ends[e];
                        let r: io::Result<String> = match op {
                            Op::Readable(_) if ready => {
                                rd!(end, s => s.readable().await).map(|()| "".into())
                            }
                            Op::Ready(..) if ready => rd!(end, s => s.ready(Interest::READABLE).await)
                                .map(|r| format!("readable {}", r.is_readable())),
                            Op::PollReadReady(_) if ready => match end {
                                End::Whole(Stream::Tcp(s)) =>
                                    std::future::poll_fn(|cx| s.poll_read_ready(cx)).await,
                                End::Whole(Stream::Unix(s)) =>
                                    std::future::poll_fn(|cx| s.poll_read_ready(cx)).await,
                                _ => return "skip".into(),
                            }
                            .map(|()| "".into()),
                            // Nothing to read: a spurious "ready" is allowed,
                            // only an error would be a difference.
                            _ => {
                                let r = match end {
                                    End::Whole(Stream::Tcp(s)) => poll_once(s.readable()),
                                    End::Whole(Stream::Unix(s)) => poll_once(s.readable()),
                                    _ => return "skip".into(),
                                };
                                return match r {
                                    Some(Err(x)) => format!("Err({:?})", x.kind()),
                                    _ => "no error".into(),
                                };
                            }
                        };
                        res(r, |s| s)
                    }
                    Op::Ready(e, i) if self.ends[e].writes() => {
                        let want = if i == 2 { Interest::WRITABLE } else {
                            Interest::READABLE | Interest::WRITABLE };
                        res(wr!(&mut self.ends[e], s => s.ready(want).await),
                            |r| format!("writable {}", r.is_writable() || i == 3))
                    }
                    Op::Writable(e) if self.ends[e].writes() => {
                        res(wr!(&mut self.ends[e], s => s.writable().await), |()| "".into())
                    }
                    Op::Shutdown(e) if self.ends[e].writes() => {
                        let r = wr!(&mut self.ends[e], s => s.shutdown().await);
                        self.m.shut[e] |= r.is_ok();
                        res(r, |()| "".into())
                    }
                    Op::Drop(e) if self.ends[e].reads() => {
                        self.ends[e] = End::Gone;
                        self.m.gone[e] = true;
                        self.m.blur_reset[1 - e] |= self.kind == Kind::Unix && self.m.cancelled[e];
                        "".into()
                    }
                    Op::Opt(e, w) => self.opt(e, w),
                    Op::Addrs(e) if self.ends[e].reads() => match &self.ends[e] {
                        End::Whole(Stream::Unix(s)) =>
                            format!("{} {}", uaddr(s.local_addr()), uaddr(s.peer_addr())),
                        End::Halves(Rh::Unix(s), _) | End::ReadOnly(Rh::Unix(s)) =>
                            format!("{} {}", uaddr(s.local_addr()), uaddr(s.peer_addr())),
                        End::Whole(Stream::Tcp(s)) => {
                            let (l, p) = (s.local_addr(), s.peer_addr());
                            format!("{} {}", log.addr_res(l), log.addr_res(p))
                        }
                        End::Halves(Rh::Tcp(s), _) | End::ReadOnly(Rh::Tcp(s)) => {
                            let (l, p) = (s.local_addr(), s.peer_addr());
                            format!("{} {}", log.addr_res(l), log.addr_res(p))
                        }
                        End::Gone => unreachable!(),
                    },
                    Op::TakeError(e) => match &self.ends[e] {
                        End::Whole(Stream::Tcp(s)) => res(s.take_error(), |x| format!("{:?}", x.map(|x| x.kind()))),
                        End::Whole(Stream::Unix(s)) => res(s.take_error(), |x| format!("{:?}", x.map(|x| x.kind()))),
                        _ => "skip".into(),
                    },
                    Op::Split(e) => match std::mem::replace(&mut self.ends[e], End::Gone) {
                        End::Whole(Stream::Tcp(s)) => {
                            let (r, w) = s.into_split();
                            self.ends[e] = End::Halves(Rh::Tcp(r), Wh::Tcp(w));
                            "".into()
                        }
                        End::Whole(Stream::Unix(s)) => {
                            let (r, w) = s.into_split();
                            self.ends[e] = End::Halves(Rh::Unix(r), Wh::Unix(w));
                            "".into()
                        }
                        other => {
                            self.ends[e] = other;
                            "skip".into()
                        }
                    },
                    Op::Reunite(e) => match std::mem::replace(&mut self.ends[e], End::Gone) {
                        End::Halves(Rh::Tcp(r), Wh::Tcp(w)) => {
                            self.ends[e] = End::Whole(Stream::Tcp(r.reunite(w).expect("same")));
                            "".into()
                        }
                        End::Halves(Rh::Unix(r), Wh::Unix(w)) => {
                            self.ends[e] = End::Whole(Stream::Unix(w.reunite(r).expect("same")));
                            "".into()
                        }
                        other => {
                            self.ends[e] = other;
                            "skip".into()
                        }
                    },
                    Op::ReuniteWrong => {
                        let a = std::mem::replace(&mut self.ends[0], End::Gone);
                        let b = std::mem::replace(&mut self.ends[1], End::Gone);
                        let (a, b, out) = match (a, b) {
                            (End::Halves(Rh::Tcp(r0), w0), End::Halves(r1, Wh::Tcp(w1))) => {
                                let err = r0.reunite(w1).err().expect("halves of two streams");
                                let msg = err.to_string();
                                let (r0, w1) = (err.0, err.1);
                                (End::Halves(Rh::Tcp(r0), w0), End::Halves(r1, Wh::Tcp(w1)), msg)
                            }
                            (End::Halves(Rh::Unix(r0), w0), End::Halves(r1, Wh::Unix(w1))) => {
                                let err = w1.reunite(r0).err().expect("halves of two streams");
                                let msg = err.to_string();
                                let (r0, w1) = (err.0, err.1);
                                (End::Halves(Rh::Unix(r0), w0), End::Halves(r1, Wh::Unix(w1)), msg)
                            }
                            (a, b) => (a, b, "skip".into()),
                        };
                        self.ends = [a, b];
                        out
                    }
                    Op::DropWriteHalf(e) | Op::ForgetWriteHalf(e) => {
                        match std::mem::replace(&mut self.ends[e], End::Gone) {
                            End::Halves(r, w) => {
                                if let Op::ForgetWriteHalf(_) = op {
                                    match w {
                                        Wh::Tcp(w) => w.forget(),
                                        Wh::Unix(w) => w.forget(),
                                    }
                                } else {
                                    drop(w);
                                    self.m.shut[e] = true;
                                }
                                self.ends[e] = End::ReadOnly(r);
                                "".into()
                            }
                            other => {
                                self.ends[e] = other;
                                "skip".into()
                            }
                        }
                    }
                    Op::Borrowed(e, n) => self.borrowed(e, n).await,
                    Op::StdRoundTrip(e) => self.std_round_trip(e),
                    Op::Fill(e) => self.fill(e).await,
                    _ => "skip".into(),
                }
            }
        }
    };
}
pub(crate) use {rd, stream_group, wr};
