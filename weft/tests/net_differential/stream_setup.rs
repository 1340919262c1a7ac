//! The stream scripts' setup (listener and connect, `TcpSocket` /
//! `UnixSocket`, a std connect and `from_std`, or `UnixStream::pair`), the
//! ops that move a stream out and back (`into_std`, borrowed `split`), and
//! `run`, which plays a script on a fresh runtime of either crate.

use crate::harness::{block_on, for_both, res, show, temp_dir, Log, Step};
use crate::stream_interp::{poll_once, rd, wr, CAP};
use crate::streams::{Kind, Model, Op, Rd, Setup, StreamScript, Wr};
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

/// Whether `fd` is in non-blocking mode (what `into_std` hands back).
pub fn nonblocking(fd: &impl AsRawFd) -> bool {
    // SAFETY: F_GETFL only reads the descriptor's flags.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    flags & libc::O_NONBLOCK != 0
}

macro_rules! stream_all {
    () => {
        crate::stream_interp::stream_group!();

        /// The two ends, connected as the script says; logs the addresses.
        async fn setup(s: &StreamScript, dir: &Path, log: &mut Log) -> io::Result<[End; 2]> {
            if s.kind == Kind::Unix {
                let path = dir.join("s");
                let (a, b, from) = if s.setup == Setup::Pair {
                    let (a, b) = UnixStream::pair()?;
                    (a, b, "none".to_string())
                } else {
                    let l = UnixListener::bind(&path)?;
                    let a = match s.setup {
                        Setup::Socket { reuse, .. } => {
                            let so = UnixSocket::new_stream()?;
                            if reuse {
                                so.bind(dir.join("c"))?;
                            }
                            so.connect(&path).await?
                        }
                        Setup::FromStd => {
                            let std = std::os::unix::net::UnixStream::connect(&path)?;
                            std.set_nonblocking(true)?;
                            UnixStream::from_std(std)?
                        }
                        _ => UnixStream::connect(&path).await?,
                    };
                    let (b, from) = l.accept().await?;
                    (a, b, uaddr(Ok(from)))
                };
                let line = format!(
                    "a {} {}, b {} {}, accepted from {from}",
                    uaddr(a.local_addr()),
                    uaddr(a.peer_addr()),
                    uaddr(b.local_addr()),
                    uaddr(b.peer_addr())
                );
                log.push("setup", line);
                return Ok([End::Whole(Stream::Unix(a)), End::Whole(Stream::Unix(b))]);
            }
            let any = if s.kind == Kind::Tcp4 {
                "127.0.0.1:0"
            } else {
                "[::1]:0"
            };
            let l = TcpListener::bind(any).await?;
            let addr = l.local_addr()?;
            let mut line = format!("listener {}", log.addr(addr));
            let a = match s.setup {
                Setup::Socket { reuse, sndbuf } => {
                    let so = if s.kind == Kind::Tcp4 {
                        TcpSocket::new_v4()?
                    } else {
                        TcpSocket::new_v6()?
                    };
                    so.set_reuseaddr(reuse)?;
                    if let Some(n) = sndbuf {
                        so.set_send_buffer_size(n)?;
                    }
                    line += &format!(
                        ", socket reuseaddr {:?} sndbuf {:?} {}",
                        so.reuseaddr().ok(),
                        so.send_buffer_size().ok(),
                        log.addr_res(so.local_addr())
                    );
                    so.connect(addr).await?
                }
                Setup::FromStd => {
                    let std = std::net::TcpStream::connect(addr)?;
                    std.set_nonblocking(true)?;
                    TcpStream::from_std(std)?
                }
                _ => TcpStream::connect(addr).await?,
            };
            let (b, from) = l.accept().await?;
            line += &format!(
                ", a {} {}, b {} {}, accepted from {}",
                log.addr_res(a.local_addr()),
                log.addr_res(a.peer_addr()),
                log.addr_res(b.local_addr()),
                log.addr_res(b.peer_addr()),
                log.addr(from)
            );
            // Nagle plus delayed ACKs would stall small writes for 40 ms.
            a.set_nodelay(true)?;
            b.set_nodelay(true)?;
            log.push("setup", line);
            Ok([End::Whole(Stream::Tcp(a)), End::Whole(Stream::Tcp(b))])
        }

        impl I {
            /// `split()` (borrowed halves): a write and a read at once.
            async fn borrowed(&mut self, e: usize, n: usize) -> String {
                let p = 1 - e;
                if self.m.gone[p]
                    || self.m.reset[e]
                    || self.m.shut[e]
                    || self.m.inq[p].len() + n > CAP
                {
                    return "skip".into();
                }
                let data = self.m.pattern(e, n);
                let want = self.m.inq[e].len().min(n);
                let mut buf = vec![0u8; want];
                let (w, r) = match &mut self.ends[e] {
                    End::Whole(Stream::Tcp(s)) => {
                        let (mut r, mut w) = s.split();
                        k::join!(w.write_all(&data), r.read_exact(&mut buf))
                    }
                    End::Whole(Stream::Unix(s)) => {
                        let (mut r, mut w) = s.split();
                        k::join!(w.write_all(&data), r.read_exact(&mut buf))
                    }
                    _ => return "skip".into(),
                };
                if w.is_ok() {
                    self.m.inq[p].extend_from_slice(&data);
                    self.m.written[e] += n;
                    // As after `Write`: the bytes leave before the next op.
                    let _ = wr!(&mut self.ends[e], s => s.writable().await);
                }
                if r.is_ok() {
                    self.m.inq[e].drain(..want);
                }
                format!("{} {}", res(w, |()| "".into()), res(r, |_| show(&buf)))
            }

            /// `into_std`, then (with nothing to read) a read on the std
            /// stream, then `from_std`.
            fn std_round_trip(&mut self, e: usize) -> String {
                // On io_uring a receive a dropped read left in flight may
                // hold bytes `into_std` loses, and a stream made by
                // `from_std` does not know its write side was shut down,
                // so its next write reports `EPIPE` one write late (both
                // documented in README's differences).
                if self.m.cancelled[e] || self.m.shut[e] {
                    return "skip".into();
                }
                let quiet = self.m.inq[e].is_empty() && !self.m.eof(e);
                let mut buf = [0u8; 8];
                match std::mem::replace(&mut self.ends[e], End::Gone) {
                    End::Whole(Stream::Tcp(s)) => {
                        let std = match s.into_std() {
                            Ok(std) => std,
                            Err(x) => {
                                self.m.gone[e] = true;
                                return format!("into_std Err({:?})", x.kind());
                            }
                        };
                        let nb = nonblocking(&std);
                        let read = if quiet && nb {
                            res(io::Read::read(&mut &std, &mut buf), |n| n.to_string())
                        } else {
                            "-".into()
                        };
                        let back = TcpStream::from_std(std).map(|s| {
                            self.ends[e] = End::Whole(Stream::Tcp(s));
                        });
                        self.m.gone[e] |= back.is_err();
                        format!(
                            "nonblocking {nb}, read {read}, {}",
                            res(back, |()| "".into())
                        )
                    }
                    End::Whole(Stream::Unix(s)) => {
                        let std = match s.into_std() {
                            Ok(std) => std,
                            Err(x) => {
                                self.m.gone[e] = true;
                                return format!("into_std Err({:?})", x.kind());
                            }
                        };
                        let nb = nonblocking(&std);
                        let read = if quiet && nb {
                            res(io::Read::read(&mut &std, &mut buf), |n| n.to_string())
                        } else {
                            "-".into()
                        };
                        let back = UnixStream::from_std(std).map(|s| {
                            self.ends[e] = End::Whole(Stream::Unix(s));
                        });
                        self.m.gone[e] |= back.is_err();
                        format!(
                            "nonblocking {nb}, read {read}, {}",
                            res(back, |()| "".into())
                        )
                    }
                    other => {
                        self.ends[e] = other;
                        "skip".into()
                    }
                }
            }
        }

        pub fn run(s: &StreamScript) -> Vec<Step> {
            let dir = temp_dir();
            let mut log = Log::in_dir(&dir);
            block_on!(s.multi, async {
                let ends = match setup(s, &dir, &mut log).await {
                    Ok(ends) => ends,
                    Err(x) => {
                        log.push("setup", format!("Err({:?})", x.kind()));
                        return;
                    }
                };
                let mut i = I {
                    ends,
                    m: Model::default(),
                    kind: s.kind,
                };
                for &op in &s.ops {
                    let step = k::time::timeout(Duration::from_secs(3), i.step(op, &mut log));
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

for_both!(stream_all);
