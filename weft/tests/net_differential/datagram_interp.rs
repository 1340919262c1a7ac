//! The datagram scripts' interpreter (`datagrams.rs` has the script, the
//! generator and the model), written once and expanded for both crates:
//! setup (three sockets and a dead target), each op, and `run`, which plays
//! a script on a fresh runtime of either crate. Every op has a time limit
//! (3 s): an op that hangs logs `TIMEOUT` and ends the script.

use crate::datagrams::{DModel, DOp, DgramScript, Fam, Rv, Sd};
use crate::harness::{block_on, for_both, res, show, temp_dir, Log, Step};
use crate::stream_interp::poll_once;
use crate::stream_setup::nonblocking;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

macro_rules! dgram_group {
    () => {
        use k::net::{unix, UdpSocket, UnixDatagram};
        use std::future::poll_fn;

        enum Sock {
            Udp(UdpSocket),
            Unix(UnixDatagram),
        }

        fn uaddr(a: &unix::SocketAddr) -> String {
            match a.as_pathname() {
                Some(p) => p.display().to_string(),
                None if a.is_unnamed() => "unnamed".into(),
                None => "abstract".into(),
            }
        }

        struct D {
            socks: [Option<Sock>; 3],
            addrs: Vec<SocketAddr>,
            paths: Vec<PathBuf>,
            m: DModel,
            unix: bool,
        }

        async fn send_one(d: &D, s: usize, how: Sd, to: usize, data: &[u8]) -> io::Result<usize> {
            match d.socks[s].as_ref().expect("guarded") {
                Sock::Udp(u) => {
                    let addr = d.addrs[to];
                    match how {
                        Sd::Send => u.send(data).await,
                        Sd::TrySend => {
                            u.writable().await?;
                            u.try_send(data)
                        }
                        Sd::PollSend => poll_fn(|cx| u.poll_send(cx, data)).await,
                        Sd::SendTo => u.send_to(data, addr).await,
                        Sd::TrySendTo => {
                            u.writable().await?;
                            u.try_send_to(data, addr)
                        }
                        Sd::PollSendTo => poll_fn(|cx| u.poll_send_to(cx, data, addr)).await,
                    }
                }
                Sock::Unix(u) => {
                    let path = &d.paths[to];
                    match how {
                        Sd::Send => u.send(data).await,
                        Sd::TrySend => {
                            u.writable().await?;
                            u.try_send(data)
                        }
                        Sd::PollSend => poll_fn(|cx| u.poll_send(cx, data)).await,
                        Sd::SendTo => u.send_to(data, path).await,
                        Sd::TrySendTo => {
                            u.writable().await?;
                            u.try_send_to(data, path)
                        }
                        Sd::PollSendTo => poll_fn(|cx| u.poll_send_to(cx, data, path)).await,
                    }
                }
            }
        }

        /// One receive of kind `how` into `n` bytes (`wait`: `readable()`
        /// first): what it showed, and whether it took a datagram.
        async fn recv_one(
            sock: &Sock,
            how: Rv,
            n: usize,
            wait: bool,
            log: &mut Log,
        ) -> io::Result<(String, bool)> {
            let mut buf = vec![0u8; n];
            match sock {
                Sock::Udp(u) => {
                    if wait && how.is_try() {
                        u.readable().await?;
                    }
                    let mut rb = k::io::ReadBuf::new(&mut buf);
                    let mut v = Vec::with_capacity(n);
                    Ok(match how {
                        Rv::Recv => {
                            let k = u.recv(&mut buf).await?;
                            (show(&buf[..k]), true)
                        }
                        Rv::TryRecv => {
                            let k = u.try_recv(&mut buf)?;
                            (show(&buf[..k]), true)
                        }
                        Rv::Peek => {
                            let k = u.peek(&mut buf).await?;
                            (show(&buf[..k]), false)
                        }
                        Rv::TryPeek => {
                            let k = u.try_peek(&mut buf)?;
                            (show(&buf[..k]), false)
                        }
                        Rv::RecvFrom | Rv::TryRecvFrom | Rv::PeekFrom | Rv::TryPeekFrom => {
                            let (k, a) = match how {
                                Rv::RecvFrom => u.recv_from(&mut buf).await?,
                                Rv::TryRecvFrom => u.try_recv_from(&mut buf)?,
                                Rv::PeekFrom => u.peek_from(&mut buf).await?,
                                _ => u.try_peek_from(&mut buf)?,
                            };
                            (
                                format!("{} from {}", show(&buf[..k]), log.addr(a)),
                                !how.is_peek(),
                            )
                        }
                        Rv::RecvBuf => {
                            let k = u.recv_buf(&mut v).await?;
                            (format!("{k} {}", show(&v)), true)
                        }
                        Rv::TryRecvBuf => {
                            let k = u.try_recv_buf(&mut v)?;
                            (format!("{k} {}", show(&v)), true)
                        }
                        Rv::RecvBufFrom | Rv::TryRecvBufFrom => {
                            let (k, a) = if how == Rv::RecvBufFrom {
                                u.recv_buf_from(&mut v).await?
                            } else {
                                u.try_recv_buf_from(&mut v)?
                            };
                            (format!("{k} {} from {}", show(&v), log.addr(a)), true)
                        }
                        Rv::PollRecv => {
                            poll_fn(|cx| u.poll_recv(cx, &mut rb)).await?;
                            (show(rb.filled()), true)
                        }
                        Rv::PollRecvFrom => {
                            let a = poll_fn(|cx| u.poll_recv_from(cx, &mut rb)).await?;
                            (format!("{} from {}", show(rb.filled()), log.addr(a)), true)
                        }
                        Rv::PeekSender => (log.addr(u.peek_sender().await?), false),
                        Rv::TryPeekSender => (log.addr(u.try_peek_sender()?), false),
                    })
                }
                Sock::Unix(u) => {
                    if wait && how.is_try() {
                        u.readable().await?;
                    }
                    let mut rb = k::io::ReadBuf::new(&mut buf);
                    let mut v = Vec::with_capacity(n);
                    Ok(match how {
                        Rv::Recv => {
                            let k = u.recv(&mut buf).await?;
                            (show(&buf[..k]), true)
                        }
                        Rv::TryRecv => {
                            let k = u.try_recv(&mut buf)?;
                            (show(&buf[..k]), true)
                        }
                        Rv::RecvFrom | Rv::TryRecvFrom => {
                            let (k, a) = if how == Rv::RecvFrom {
                                u.recv_from(&mut buf).await?
                            } else {
                                u.try_recv_from(&mut buf)?
                            };
                            (format!("{} from {}", show(&buf[..k]), uaddr(&a)), true)
                        }
                        Rv::RecvBuf => {
                            let k = u.recv_buf(&mut v).await?;
                            (format!("{k} {}", show(&v)), true)
                        }
                        Rv::TryRecvBuf => {
                            let k = u.try_recv_buf(&mut v)?;
                            (format!("{k} {}", show(&v)), true)
                        }
                        Rv::RecvBufFrom | Rv::TryRecvBufFrom => {
                            let (k, a) = if how == Rv::RecvBufFrom {
                                u.recv_buf_from(&mut v).await?
                            } else {
                                u.try_recv_buf_from(&mut v)?
                            };
                            (format!("{k} {} from {}", show(&v), uaddr(&a)), true)
                        }
                        Rv::PollRecv => {
                            poll_fn(|cx| u.poll_recv(cx, &mut rb)).await?;
                            (show(rb.filled()), true)
                        }
                        Rv::PollRecvFrom => {
                            let a = poll_fn(|cx| u.poll_recv_from(cx, &mut rb)).await?;
                            (format!("{} from {}", show(rb.filled()), uaddr(&a)), true)
                        }
                        _ => unreachable!("guarded"),
                    })
                }
            }
        }

        impl D {
            async fn send(&mut self, s: usize, how: Sd, to: usize, len: usize) -> String {
                if self.socks[s].is_none() {
                    return "skip".into();
                }
                let data = self.m.pattern(len);
                let r = send_one(self, s, how, to, &data).await;
                let target = match how {
                    Sd::Send | Sd::TrySend | Sd::PollSend => self.m.conn[s],
                    _ => Some(to),
                };
                match (&r, target) {
                    // A Unix send to its connected peer that is gone
                    // disconnects the socket and drops what it had queued
                    // (the kernel's `unix_dgram_disconnected`). Only a
                    // send without an address reaches the dead peer: a
                    // `send_to` looks the path up and fails before
                    // (`ENOENT`, `ECONNREFUSED`), the queue untouched.
                    (Err(_), Some(t))
                        if self.unix
                            && matches!(how, Sd::Send | Sd::TrySend | Sd::PollSend)
                            && self.m.conn[s] == Some(t)
                            && (t == 3 || self.m.gone[t]) =>
                    {
                        self.m.q[s].clear();
                        self.m.conn[s] = None;
                    }
                    // A send reports (and clears) a pending error too.
                    (Err(_), _) => self.m.err[s] = false,
                    (Ok(_), Some(t)) if self.unix => {
                        // A Unix send fails when it cannot queue.
                        if t < 3 {
                            self.m.q[t].push_back(data.clone());
                        }
                    }
                    (Ok(_), Some(t)) => {
                        // Refused: nobody there, or a socket connected to
                        // someone else. The ICMP "port unreachable" comes
                        // back before the send returns, and only a sender
                        // connected to that target keeps it as an error.
                        let refused =
                            t == 3 || self.m.gone[t] || self.m.conn[t].is_some_and(|c| c != s);
                        if !refused {
                            self.m.q[t].push_back(data.clone());
                        } else if self.m.conn[s] == Some(t) {
                            self.m.err[s] = true;
                        }
                    }
                    (Ok(_), None) => {}
                }
                res(r, |k| k.to_string())
            }

            async fn recv(&mut self, s: usize, how: Rv, n: usize, log: &mut Log) -> String {
                let Some(sock) = &self.socks[s] else {
                    return "skip".into();
                };
                if self.unix && how.is_peek() {
                    return "skip".into();
                }
                let error_now = self.m.only_error(s) && !self.unix && how.waits_for_errors();
                if self.m.only_error(s) && !error_now {
                    return "skip".into();
                }
                if !self.m.ready(s) && !error_now {
                    // A Unix datagram socket shut for reading polls
                    // readable (`EPOLLIN | EPOLLRDHUP`) yet `recv` says
                    // `EAGAIN`: Tokio's `recv` then spins on its
                    // never-cleared read-closed readiness. Only the
                    // `try_*` receives are compared there.
                    if how.is_try() {
                        return res(recv_one(sock, how, n, false, log).await, |(x, _)| x);
                    }
                    if self.m.rd_shut[s] {
                        return "skip".into();
                    }
                    return match poll_once(recv_one(sock, how, n, false, log)) {
                        None => "Pending".into(),
                        Some(r) => res(r, |(x, _)| x),
                    };
                }
                let r = recv_one(sock, how, n, true, log).await;
                match &r {
                    Ok((_, true)) => {
                        self.m.q[s].pop_front();
                    }
                    Ok(_) => {}
                    Err(_) => self.m.err[s] = false,
                }
                res(r, |(x, _)| x)
            }

            fn opt(&self, s: usize, w: u8) -> String {
                let Some(Sock::Udp(u)) = &self.socks[s] else {
                    return "skip".into();
                };
                let g = |r: io::Result<bool>| res(r, |b| b.to_string());
                let n = |r: io::Result<u32>| res(r, |b| b.to_string());
                let u_ = |r: io::Result<()>| res(r, |()| "".into());
                let group = std::net::Ipv4Addr::new(224, 0, 0, 251);
                let any = std::net::Ipv4Addr::UNSPECIFIED;
                match w {
                    0 => g(u.broadcast()),
                    1 => format!("{} {}", u_(u.set_broadcast(true)), g(u.broadcast())),
                    2 => n(u.ttl()),
                    3 => format!("{} {}", u_(u.set_ttl(9)), n(u.ttl())),
                    4 => g(u.multicast_loop_v4()),
                    5 => format!(
                        "{} {}",
                        u_(u.set_multicast_loop_v4(false)),
                        g(u.multicast_loop_v4())
                    ),
                    6 => n(u.multicast_ttl_v4()),
                    7 => format!(
                        "{} {}",
                        u_(u.set_multicast_ttl_v4(3)),
                        n(u.multicast_ttl_v4())
                    ),
                    8 => format!(
                        "{} {}",
                        u_(u.set_multicast_loop_v6(false)),
                        g(u.multicast_loop_v6())
                    ),
                    _ => format!(
                        "{} {}",
                        u_(u.join_multicast_v4(group, any)),
                        u_(u.leave_multicast_v4(group, any))
                    ),
                }
            }

            async fn step(&mut self, op: DOp, log: &mut Log) -> String {
                match op {
                    DOp::Send(s, how, to, len) => self.send(s, how, to, len).await,
                    DOp::Recv(s, how, n) => self.recv(s, how, n, log).await,
                    DOp::Connect(s, to) => {
                        let r = match &self.socks[s] {
                            Some(Sock::Udp(u)) => u.connect(self.addrs[to]).await,
                            Some(Sock::Unix(u)) => u.connect(&self.paths[to]),
                            None => return "skip".into(),
                        };
                        if r.is_ok() {
                            // A Unix socket that changes peers drops what
                            // it had queued (`unix_dgram_disconnected`).
                            if self.unix && self.m.conn[s].is_some_and(|c| c != to) {
                                self.m.q[s].clear();
                            }
                            self.m.conn[s] = Some(to);
                        }
                        res(r, |()| "".into())
                    }
                    DOp::Readable(s) => {
                        let ready = self.m.ready(s);
                        let r = match &self.socks[s] {
                            Some(Sock::Udp(u)) if ready => u.readable().await,
                            Some(Sock::Unix(u)) if ready => u.readable().await,
                            // Nothing queued: a spurious "ready" is allowed.
                            Some(Sock::Udp(u)) => poll_once(u.readable()).unwrap_or(Ok(())),
                            Some(Sock::Unix(u)) => poll_once(u.readable()).unwrap_or(Ok(())),
                            None => return "skip".into(),
                        };
                        res(r, |()| "".into())
                    }
                    DOp::Writable(s) => match &self.socks[s] {
                        Some(Sock::Udp(u)) => res(u.writable().await, |()| "".into()),
                        Some(Sock::Unix(u)) => res(u.writable().await, |()| "".into()),
                        None => "skip".into(),
                    },
                    DOp::Opt(s, w) => self.opt(s, w),
                    DOp::Addrs(s) => match &self.socks[s] {
                        Some(Sock::Udp(u)) => {
                            let (l, p) = (u.local_addr(), u.peer_addr());
                            format!("{} {}", log.addr_res(l), log.addr_res(p))
                        }
                        Some(Sock::Unix(u)) => format!(
                            "{} {}",
                            res(u.local_addr(), |a| uaddr(&a)),
                            res(u.peer_addr(), |a| uaddr(&a))
                        ),
                        None => "skip".into(),
                    },
                    DOp::TakeError(s) => {
                        let r = match &self.socks[s] {
                            Some(Sock::Udp(u)) => u.take_error(),
                            Some(Sock::Unix(u)) => u.take_error(),
                            None => return "skip".into(),
                        };
                        self.m.err[s] = false;
                        res(r, |e| format!("{:?}", e.map(|e| e.kind())))
                    }
                    DOp::Shutdown(s, how) => {
                        let Some(Sock::Unix(u)) = &self.socks[s] else {
                            return "skip".into();
                        };
                        let how = [
                            std::net::Shutdown::Read,
                            std::net::Shutdown::Write,
                            std::net::Shutdown::Both,
                        ][how as usize];
                        let r = u.shutdown(how);
                        if r.is_ok() && how != std::net::Shutdown::Write {
                            self.m.rd_shut[s] = true;
                        }
                        res(r, |()| "".into())
                    }
                    DOp::StdRoundTrip(s) => match self.socks[s].take() {
                        Some(Sock::Udp(u)) => {
                            let std = u.into_std().expect("into_std");
                            let nb = nonblocking(&std);
                            self.socks[s] =
                                Some(Sock::Udp(UdpSocket::from_std(std).expect("from_std")));
                            format!("nonblocking {nb}")
                        }
                        Some(Sock::Unix(u)) => {
                            let std = u.into_std().expect("into_std");
                            let nb = nonblocking(&std);
                            self.socks[s] =
                                Some(Sock::Unix(UnixDatagram::from_std(std).expect("from_std")));
                            format!("nonblocking {nb}")
                        }
                        None => "skip".into(),
                    },
                    DOp::Drop(s) => {
                        self.m.gone[s] |= self.socks[s].take().is_some();
                        "".into()
                    }
                }
            }
        }

        async fn setup(s: &DgramScript, dir: &std::path::Path, log: &mut Log) -> io::Result<D> {
            let mut d = D {
                socks: [None, None, None],
                addrs: Vec::new(),
                paths: (0..4).map(|i| dir.join(i.to_string())).collect(),
                m: DModel::default(),
                unix: matches!(s.fam, Fam::Unix | Fam::UnixPair),
            };
            if d.unix {
                if s.fam == Fam::UnixPair {
                    let (a, b) = UnixDatagram::pair()?;
                    d.socks = [Some(Sock::Unix(a)), Some(Sock::Unix(b)), None];
                    d.m.conn = [Some(1), Some(0), None];
                } else {
                    d.socks[0] = Some(Sock::Unix(UnixDatagram::bind(&d.paths[0])?));
                    d.socks[1] = Some(Sock::Unix(UnixDatagram::bind(&d.paths[1])?));
                }
                d.socks[2] = Some(Sock::Unix(UnixDatagram::unbound()?));
                drop(UnixDatagram::bind(&d.paths[3])?);
                log.push("setup", "");
                return Ok(d);
            }
            let any = if s.fam == Fam::Udp4 {
                "127.0.0.1:0"
            } else {
                "[::1]:0"
            };
            let mut line = String::new();
            for i in 0..4 {
                let u = UdpSocket::bind(any).await?;
                let a = u.local_addr()?;
                line += &log.addr(a);
                line += " ";
                d.addrs.push(a);
                if i < 3 {
                    d.socks[i] = Some(Sock::Udp(u));
                }
            }
            log.push("setup", line);
            Ok(d)
        }

        pub fn run(s: &DgramScript) -> Vec<Step> {
            let dir = temp_dir();
            let mut log = Log::in_dir(&dir);
            block_on!(s.multi, async {
                let mut d = match setup(s, &dir, &mut log).await {
                    Ok(d) => d,
                    Err(x) => {
                        log.push("setup", format!("Err({:?})", x.kind()));
                        return;
                    }
                };
                for &op in &s.ops {
                    let step = k::time::timeout(Duration::from_secs(3), d.step(op, &mut log));
                    match step.await {
                        Ok(out) => log.push(op, out),
                        Err(_) => {
                            log.push(op, "TIMEOUT");
                            break;
                        }
                    }
                }
            });
            let _ = std::fs::remove_dir_all(&dir);
            log.steps
        }
    };
}

for_both!(dgram_group);
