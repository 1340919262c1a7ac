//! The random scripts' interpreter (`scripts.rs` has the script, the
//! generator and the model), written once and expanded for both crates:
//! setup, dispatch, the peers' ops and the reads and writes (`waits.rs`
//! has the ways to wait, `readiness_ops.rs` the ops about readiness,
//! `peers.rs` the peers' syscalls).
//!
//! Every wait has a time limit (`LIMIT`): a wait that hangs on one crate
//! logs `TIMEOUT` and ends the script.

use crate::harness::{block_on, for_both, show, Log, Step};
use crate::peers::*;
use crate::scripts::{Fd, FdScript, Kind, Make, Op, Peer, Rd, Reg, Tri, Wr, CAP, G};
use std::fs::File;
use std::future::poll_fn;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

macro_rules! interp_group {
    () => {
        use k::io::unix::AsyncFd;
        use k::io::{Interest, Ready};

        type Afd = AsyncFd<File>;

        fn interest(reg: Reg) -> Interest {
            match reg {
                Reg::Read => Interest::READABLE,
                Reg::Write => Interest::WRITABLE,
                Reg::Both => Interest::READABLE | Interest::WRITABLE,
                Reg::BothError => Interest::READABLE | Interest::WRITABLE | Interest::ERROR,
                Reg::BothPriority => Interest::READABLE | Interest::WRITABLE | Interest::PRIORITY,
            }
        }

        /// Registers `file` as `how` says.
        #[allow(deprecated)] // Tokio 1.54 deprecates the safe constructors
        fn make(file: File, how: Make) -> io::Result<Afd> {
            let i = interest(how.reg());
            match how {
                Make::New => AsyncFd::new(file),
                Make::TryNew => AsyncFd::try_new(file).map_err(io::Error::from),
                // SAFETY: `file` owns its descriptor, which stays open
                // while the AsyncFd holds it.
                Make::Register => unsafe { AsyncFd::register(file) }.map_err(io::Error::from),
                Make::WithInterest(0, _) => AsyncFd::with_interest(file, i),
                Make::WithInterest(1, _) => {
                    AsyncFd::try_with_interest(file, i).map_err(io::Error::from)
                }
                // SAFETY: as above.
                Make::WithInterest(..) => {
                    unsafe { AsyncFd::register_with_interest(file, i) }.map_err(io::Error::from)
                }
            }
        }

        crate::waits::waits!();

        struct Slot {
            fd: Option<Arc<Afd>>,
            peer: Option<File>,
            make: Make,
        }

        struct I {
            slots: Vec<Slot>,
            m: Vec<Fd>,
            multi: bool,
        }

        /// `r` ("R" or "-") where the model is sure of `READABLE`'s state.
        fn bit(ready: Ready, sure: bool) -> &'static str {
            match (sure, ready.is_readable()) {
                (false, _) => "?",
                (true, true) => "R",
                (true, false) => "-",
            }
        }

        impl I {
            fn fd(&mut self, p: usize) -> &mut Arc<Afd> {
                self.slots[p].fd.as_mut().expect("present")
            }

            /// Whether the model is sure `READABLE` is not in the
            /// readiness (and cannot arrive from an older event).
            fn surely_clear(&self, p: usize) -> bool {
                !self.multi
                    && self.m[p].r == Tri::Clear
                    && !self.m[p].readable()
                    && !self.m[p].hangup()
            }

            async fn op(&mut self, op: Op) -> Result<String, Stop> {
                let p = op.fd();
                let m = &mut self.m[p];
                let skip = Ok("skip".to_string());
                if m.err && m.kind == Kind::Udp && !matches!(op, Op::WaitError(_) | Op::Refs(_)) {
                    return skip;
                }
                match op {
                    Op::Fill(_, poll) => self.fill(p, poll).await,
                    Op::WaitError(_) => self.wait_error(p).await,
                    Op::Urgent(_) => self.urgent(p).await,
                    Op::PeerWrite(_, n) => {
                        let alive = matches!(m.peer, Peer::Open);
                        if !alive || Fd::queued(&m.inq) + n > CAP {
                            return skip;
                        }
                        let data = m.pattern(0, n);
                        let peer = self.slots[p].peer.as_ref().expect("open");
                        let r = peer_write(peer, &data);
                        if r.is_ok() {
                            let m = &mut self.m[p];
                            m.inq.push_back(data);
                            m.read_edge();
                        }
                        Ok(format!("{:?}", r.map_err(|e| kind(&e))))
                    }
                    Op::PeerRead(_, n) => {
                        if m.kind == Kind::Pipe || matches!(m.peer, Peer::Closed | Peer::Reset) {
                            return skip;
                        }
                        let dgram = m.kind == Kind::Udp;
                        let want = if dgram {
                            m.outq.front().map_or(0, |d| d.len().min(n))
                        } else {
                            Fd::queued(&m.outq).min(n)
                        };
                        let eof = want == 0 && m.shut && m.stream();
                        if want == 0 && !eof && m.kind == Kind::Tcp {
                            // Nothing on its way: a read would block (not
                            // compared on TCP, where nothing is certain
                            // about an ACK in flight; only the model moves).
                            return skip;
                        }
                        let peer = self.slots[p].peer.as_ref().expect("open");
                        let r = peer_read(peer, want, dgram, eof);
                        let m = &mut self.m[p];
                        if let Ok(b) = &r {
                            if dgram {
                                if want > 0 {
                                    m.outq.pop_front();
                                }
                            } else {
                                let mut left = b.len();
                                while left > 0 {
                                    let front = m.outq.front_mut().expect("model");
                                    let take = left.min(front.len());
                                    front.drain(..take);
                                    if front.is_empty() {
                                        m.outq.pop_front();
                                    }
                                    left -= take;
                                }
                            }
                        }
                        Ok(match r {
                            Ok(b) => format!("Ok({})", show(&b)),
                            Err(e) => format!("Err({})", kind(&e)),
                        })
                    }
                    Op::PeerShutdown(_) => {
                        if !m.stream() || m.peer != Peer::Open {
                            return skip;
                        }
                        m.peer = Peer::Shut;
                        m.read_edge();
                        let peer = self.slots[p].peer.as_ref().expect("open");
                        Ok(format!("{:?}", shutdown_write(peer).map_err(|e| kind(&e))))
                    }
                    Op::PeerClose(_) => {
                        if matches!(m.peer, Peer::Closed | Peer::Reset) {
                            return skip;
                        }
                        // Read what is on its way first, so the close is
                        // clean (not a reset).
                        let dgram = m.kind == Kind::Udp;
                        let mut drained = 0;
                        let want = Fd::queued(&m.outq);
                        if m.kind != Kind::Pipe && !dgram && want > 0 {
                            let peer = self.slots[p].peer.as_ref().expect("open");
                            match peer_read(peer, want, false, false) {
                                Ok(b) => drained = b.len(),
                                Err(e) => return Ok(format!("drain Err({})", kind(&e))),
                            }
                        }
                        let m = &mut self.m[p];
                        m.outq.clear();
                        m.peer = Peer::Closed;
                        m.read_edge();
                        self.slots[p].peer = None;
                        Ok(format!("drained {drained}"))
                    }
                    Op::PeerReset(_) => {
                        if m.kind != Kind::Tcp
                            || !matches!(m.peer, Peer::Open | Peer::Shut)
                            || !m.inq.is_empty()
                        {
                            return skip;
                        }
                        m.peer = Peer::Reset;
                        m.err = true;
                        m.outq.clear();
                        m.read_edge();
                        let peer = self.slots[p].peer.take().expect("open");
                        linger0(&peer);
                        drop(peer);
                        Ok("reset".into())
                    }
                    Op::Shutdown(_) => {
                        if !m.stream() || m.shut || m.peer == Peer::Reset {
                            return skip;
                        }
                        m.shut = true;
                        let r = shutdown_write(self.fd(p).get_ref());
                        Ok(format!("{:?}", r.map_err(|e| kind(&e))))
                    }
                    Op::Read(_, how, n) => self.read(p, how, n).await,
                    Op::Write(_, how, n) => self.write(p, how, n).await,
                    Op::PollRead(_) => self.poll_read(p).await,
                    Op::WaitWake(_, n, thread) => self.wait_wake(p, n, thread).await,
                    Op::ReadyBoth(_, g) => self.ready_both(p, g).await,
                    Op::ClearRead(_, how, mutable) => self.clear_read(p, how, mutable).await,
                    Op::SettleClosed(_) => self.settle_closed(p).await,
                    Op::Waiters(_, n) => self.waiters(p, n).await,
                    Op::Rewrap(_) => {
                        let fd = self.slots[p].fd.take().expect("present");
                        let fd = Arc::into_inner(fd).expect("sole owner");
                        let raw = fd.as_raw_fd();
                        let file = fd.into_inner();
                        let same = file.as_raw_fd() == raw;
                        let made = make(file, self.slots[p].make);
                        let out = format!(
                            "same fd {same}, again {:?}",
                            made.as_ref().map(|_| ()).map_err(|e| kind(e))
                        );
                        match made {
                            Ok(fd) => self.slots[p].fd = Some(Arc::new(fd)),
                            Err(_) => return Err(Stop),
                        }
                        let m = &mut self.m[p];
                        m.r = Tri::Unknown;
                        m.w = false;
                        m.rc = false;
                        m.pri = false;
                        Ok(out)
                    }
                    Op::Refs(_) => {
                        let fd = sole(self.fd(p));
                        let raw = fd.as_raw_fd();
                        let a = fd.get_ref().as_raw_fd() == raw;
                        let b = fd.get_mut().as_raw_fd() == raw;
                        let c = std::os::fd::AsFd::as_fd(&*fd).as_raw_fd() == raw;
                        Ok(format!("{a} {b} {c}"))
                    }
                }
            }

            async fn read(&mut self, p: usize, how: Rd, n: usize) -> Result<String, Stop> {
                let m = &self.m[p];
                if !m.reg.reads() {
                    return Ok("skip".into());
                }
                let dgram = m.kind == Kind::Udp;
                let reset = m.peer == Peer::Reset && !m.reset_read;
                let want = if dgram {
                    m.inq.front().map_or(0, |d| d.len().min(n))
                } else {
                    Fd::queued(&m.inq).min(n)
                };
                let eof = m.eof() && Fd::queued(&m.inq) <= n;
                if want == 0 && !eof && !reset {
                    // Nothing to read: `try_io` says `WouldBlock` whether
                    // or not the readiness was stale, and either way
                    // leaves it clear.
                    let mut buf = vec![0u8; n];
                    let r = self.fd(p).try_io(Interest::READABLE, |f| rd(f, &mut buf));
                    self.m[p].r = Tri::Clear;
                    return Ok(match r {
                        Ok(k) => format!("Ok({k})"),
                        Err(e) => format!("Err({})", kind(&e)),
                    });
                }
                let sure_r = !self.m[p].hangup();
                let rc = self.m[p].rc;
                let mut got = Vec::new();
                let mut end = String::new();
                let mut seen = None;
                let mut buf = vec![0u8; n];
                for _ in 0..200 {
                    let room = if dgram { n } else { want - got.len() };
                    let fd = self.fd(p);
                    match read_once(fd, how, &mut buf[..room.max(1)], &mut seen).await? {
                        None => continue,
                        Some(Ok(0)) => {
                            end = "EOF".into();
                            break;
                        }
                        Some(Ok(k)) => {
                            got.extend_from_slice(&buf[..k]);
                            if dgram || got.len() == want {
                                break;
                            }
                        }
                        Some(Err(e)) => {
                            end = format!("Err({})", kind(&e));
                            break;
                        }
                    }
                }
                let m = &mut self.m[p];
                if end.starts_with("Err") && reset {
                    m.reset_read = true;
                    m.err = false;
                }
                if dgram {
                    if !got.is_empty() {
                        m.inq.pop_front();
                    }
                } else {
                    let mut left = got.len();
                    while left > 0 {
                        let front = m.inq.front_mut().expect("model");
                        let take = left.min(front.len());
                        front.drain(..take);
                        if front.is_empty() {
                            m.inq.pop_front();
                        }
                        left -= take;
                    }
                }
                m.r = Tri::Set;
                let ready = seen.map_or("".into(), |s: Ready| {
                    let rc = if rc {
                        if s.is_read_closed() {
                            " RC"
                        } else {
                            " no RC"
                        }
                    } else {
                        ""
                    };
                    format!(" [{}{rc}]", bit(s, sure_r))
                });
                Ok(format!("{} {end}{ready}", show(&got)))
            }

            async fn write(&mut self, p: usize, how: Wr, n: usize) -> Result<String, Stop> {
                let m = &mut self.m[p];
                if !m.reg.writes() {
                    return Ok("skip".into());
                }
                let gone = matches!(m.peer, Peer::Closed | Peer::Reset);
                // A datagram to a closed peer is sent, and refused after
                // (`err`): only with nothing queued, whose reads would
                // otherwise race the refusal.
                let refused = m.kind == Kind::Udp && m.peer == Peer::Closed && m.inq.is_empty();
                if (gone && m.kind != Kind::Unix && !refused)
                    || m.peer == Peer::Reset
                    || Fd::queued(&m.outq) + n > CAP
                {
                    return Ok("skip".into());
                }
                let sure_w = m.peer == Peer::Open;
                let data = m.pattern(1, n);
                let mut seen = None;
                let mut out = "gave up".to_string();
                let mut wrote = None;
                for _ in 0..200 {
                    let fd = self.fd(p);
                    match write_once(fd, how, &data, &mut seen).await? {
                        None => continue,
                        Some(Ok(k)) => {
                            out = format!("Ok({k})");
                            wrote = Some(k);
                            break;
                        }
                        Some(Err(e)) => {
                            out = format!("Err({})", kind(&e));
                            break;
                        }
                    }
                }
                let m = &mut self.m[p];
                if let Some(k) = wrote {
                    if refused {
                        m.err = true;
                    } else {
                        m.outq.push_back(data[..k].to_vec());
                    }
                }
                let ready = seen.map_or("".into(), |s: Ready| match (sure_w, s.is_writable()) {
                    (false, _) => "".to_string(),
                    (true, w) => format!(" [{}]", if w { "W" } else { "-" }),
                });
                if sure_w && seen.is_some_and(|s| s.is_writable()) {
                    m.w = true;
                }
                Ok(format!("{out}{ready}"))
            }
        }

        crate::readiness_ops::readiness_ops!();

        pub fn run(s: &FdScript) -> Vec<Step> {
            let mut log = Log::default();
            block_on!(s.multi, async {
                let mut i = I {
                    slots: Vec::new(),
                    m: Vec::new(),
                    multi: s.multi,
                };
                for &(kind, how) in &s.fds {
                    let (ours, peer) = pair(kind);
                    let made = make(ours, how);
                    log.push(
                        ("make", kind, how),
                        format!("{:?}", made.as_ref().map(|_| ()).map_err(kind_of)),
                    );
                    let Ok(fd) = made else { return };
                    i.slots.push(Slot {
                        fd: Some(Arc::new(fd)),
                        peer: Some(peer),
                        make: how,
                    });
                    i.m.push(Fd::new(kind, how.reg()));
                }
                for &op in &s.ops {
                    match i.op(op).await {
                        Ok(out) => log.push(op, out),
                        Err(Stop) => {
                            log.push(op, "TIMEOUT");
                            return;
                        }
                    }
                }
            });
            log.steps
        }

        fn kind_of(e: &io::Error) -> String {
            kind(e)
        }
    };
}

for_both!(interp_group);
