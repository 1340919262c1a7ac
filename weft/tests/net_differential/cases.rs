//! Single cases, run on both crates and compared like the scripts: the
//! failures and shapes that need no random sequence (binding an address in
//! use or not local, connecting to nobody, listener options and
//! `into_std` / `from_std`, Unix paths that exist or do not, abstract
//! names, and pipes and FIFOs). A "script" here is a list of case numbers,
//! so the harness can shrink a mismatch down to one case.

use crate::harness::{block_on, for_both, res, show, temp_dir, Log, Rng, Step};
use crate::stream_setup::nonblocking;
use std::io;
use std::time::Duration;

/// How many cases there are.
pub const CASES: usize = 12;

pub use crate::harness::CaseScript;

/// Every case, on one flavour of runtime (seed 0: current_thread).
pub fn gen(rng: &mut Rng) -> CaseScript {
    CaseScript::every(CASES, rng)
}

macro_rules! cases_group {
    () => {
        use k::io::{AsyncReadExt, AsyncWriteExt};
        use k::net::unix::pipe;
        use k::net::{
            TcpListener, TcpSocket, TcpStream, UdpSocket, UnixDatagram, UnixListener, UnixStream,
        };

        fn ok<T>(r: io::Result<T>) -> String {
            res(r, |_| "".into())
        }

        /// A port nobody listens on, below the ephemeral range: a connect
        /// to a free ephemeral port can pick that very port as its own
        /// and connect to itself (TCP simultaneous open), now and then.
        fn dead_port() -> u16 {
            let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
                .unwrap_or_default();
            let low: u16 = range
                .split_whitespace()
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(32768);
            (1..low)
                .rev()
                .find(|&p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok())
                .expect("a free port")
        }

        async fn case(n: usize, dir: &std::path::Path, log: &mut Log) -> String {
            match n {
                0 => {
                    // Address in use.
                    let a = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                    let addr = a.local_addr().expect("addr");
                    let again = ok(TcpListener::bind(addr).await);
                    let udp = UdpSocket::bind("127.0.0.1:0").await.expect("bind");
                    let uaddr = udp.local_addr().expect("addr");
                    let udp_again = ok(UdpSocket::bind(uaddr).await);
                    // (Binding `addr` again after the drop is not compared:
                    // a test running beside this one may be handed the
                    // freed port in between, on either crate.)
                    drop(a);
                    format!("tcp {again}, udp {udp_again}")
                }
                1 => {
                    // Not a local address; a host name that resolves to
                    // nothing usable; an empty list of addresses.
                    let tcp = ok(TcpListener::bind("192.0.2.1:0").await);
                    let udp = ok(UdpSocket::bind("192.0.2.1:0").await);
                    let none: &[std::net::SocketAddr] = &[];
                    let empty = ok(TcpListener::bind(none).await);
                    let bad = ok(TcpStream::connect("not an address").await);
                    format!("tcp {tcp}, udp {udp}, no addresses {empty}, unparsable {bad}")
                }
                2 => {
                    // Refused: plain connect, `TcpSocket::connect`.
                    let addr: std::net::SocketAddr = ([127, 0, 0, 1], dead_port()).into();
                    let a = ok(TcpStream::connect(addr).await);
                    let so = TcpSocket::new_v4().expect("socket");
                    let b = ok(so.connect(addr).await);
                    format!("{a} {b}")
                }
                3 => {
                    // `TcpSocket` options, bind, listen, accept.
                    let so = TcpSocket::new_v4().expect("socket");
                    let r = format!(
                        "{} {:?} {} {:?} {} {:?} {:?}",
                        ok(so.set_reuseaddr(true)),
                        so.reuseaddr().ok(),
                        ok(so.set_keepalive(true)),
                        so.keepalive().ok(),
                        ok(so.set_nodelay(true)),
                        so.nodelay().ok(),
                        so.linger().ok()
                    );
                    so.bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
                    let local = log.addr(so.local_addr().expect("addr"));
                    let l = so.listen(16).expect("listen");
                    let addr = l.local_addr().expect("addr");
                    let ttl = format!("{} {:?}", ok(l.set_ttl(33)), l.ttl().ok());
                    let (c, a) = k::join!(TcpStream::connect(addr), l.accept());
                    let (c, (s, from)) = (c.expect("connect"), a.expect("accept"));
                    let same =
                        c.local_addr().ok() == Some(from) && s.peer_addr().ok() == Some(from);
                    format!(
                        "{r} {local} {} ttl {ttl} accepted ttl {:?} {same}",
                        log.addr(addr),
                        s.ttl().ok()
                    )
                }
                4 => {
                    // Listener through std and back; a connection made while
                    // it was a std listener is accepted afterwards.
                    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                    let addr = l.local_addr().expect("addr");
                    let std = l.into_std().expect("into_std");
                    let nb = nonblocking(&std);
                    let c = std::net::TcpStream::connect(addr).expect("connect");
                    let l = TcpListener::from_std(std).expect("from_std");
                    let a = k::time::timeout(Duration::from_secs(3), l.accept()).await;
                    let same = a
                        .as_ref()
                        .ok()
                        .and_then(|a| a.as_ref().ok())
                        .map(|(_, from)| Some(*from) == c.local_addr().ok());
                    format!("nonblocking {nb}, accepted {same:?}")
                }
                5 => {
                    // Read after the peer's shutdown and its drop; write
                    // after our own shutdown; shutdown twice.
                    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                    let mut c = TcpStream::connect(l.local_addr().expect("addr"))
                        .await
                        .expect("connect");
                    let (mut s, _) = l.accept().await.expect("accept");
                    c.write_all(b"bye").await.expect("write");
                    let sd = ok(c.shutdown().await);
                    let sd2 = ok(c.shutdown().await);
                    let w = ok(c.write(b"x").await);
                    let mut v = Vec::new();
                    let r = res(s.read_to_end(&mut v).await, |n| n.to_string());
                    let again = res(s.read(&mut [0u8; 4]).await, |n| n.to_string());
                    format!("{sd} {sd2} write {w}, read {r} {} then {again}", show(&v))
                }
                6 => {
                    // Unix paths: bind over an existing socket file, connect
                    // to a missing path and to a socket file nobody listens
                    // on; the listener's and the peers' addresses.
                    let p = dir.join("l");
                    let l = UnixListener::bind(&p).expect("bind");
                    let again = ok(UnixListener::bind(&p));
                    let missing = ok(UnixStream::connect(dir.join("nope")).await);
                    let d = dir.join("d");
                    drop(UnixListener::bind(&d).expect("bind"));
                    let refused = ok(UnixStream::connect(&d).await);
                    let la = l.local_addr().expect("addr");
                    let (c, a) = k::join!(UnixStream::connect(&p), l.accept());
                    let (c, (s, from)) = (c.expect("connect"), a.expect("accept"));
                    let shape = |a: &k::net::unix::SocketAddr| {
                        format!("{:?} {}", a.as_pathname(), a.is_unnamed())
                    };
                    format!(
                        "again {again}, missing {missing}, refused {refused}, {} {} {} {}",
                        shape(&la),
                        shape(&from),
                        shape(&c.peer_addr().expect("peer")),
                        shape(&s.local_addr().expect("local"))
                    )
                }
                7 => {
                    // Abstract names (Linux).
                    use std::os::linux::net::SocketAddrExt;
                    let name = format!("weft-netdiff-{}-{}", std::process::id(), dir.display());
                    let sa = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
                        .expect("name");
                    let std = std::os::unix::net::UnixListener::bind_addr(&sa).expect("bind");
                    std.set_nonblocking(true).expect("nonblocking");
                    let l = UnixListener::from_std(std).expect("from_std");
                    let la = l.local_addr().expect("addr");
                    let c = std::os::unix::net::UnixStream::connect_addr(&sa).expect("connect");
                    let (s, _) = l.accept().await.expect("accept");
                    drop(c);
                    format!(
                        "{:?} {} {:?}",
                        la.as_pathname(),
                        la.is_unnamed(),
                        s.local_addr().map(|a| a.is_unnamed()).ok()
                    )
                }
                8 => {
                    // Unix datagrams: unbound sender, send to a missing
                    // path, connect to a missing path, recv_from on an
                    // unconnected socket; `send` unconnected.
                    let a = UnixDatagram::bind(dir.join("a")).expect("bind");
                    let u = UnixDatagram::unbound().expect("unbound");
                    let sent = res(u.send_to(b"hi", dir.join("a")).await, |n| n.to_string());
                    let mut buf = [0u8; 8];
                    let got = res(a.recv_from(&mut buf).await, |(n, from)| {
                        format!(
                            "{} {:?} {}",
                            show(&buf[..n]),
                            from.as_pathname(),
                            from.is_unnamed()
                        )
                    });
                    let missing = res(u.send_to(b"x", dir.join("nope")).await, |n| n.to_string());
                    let conn = ok(u.connect(dir.join("nope")));
                    let unconnected = res(u.send(b"x").await, |n| n.to_string());
                    let la = u.local_addr().map(|a| a.is_unnamed()).ok();
                    format!(
                        "{sent} {got} {missing} {conn} {unconnected} {la:?} peer {}",
                        ok(u.peer_addr())
                    )
                }
                9 => {
                    // Pipes: data, EOF after the sender's drop, `try_read`
                    // with nothing there, write after the reader's drop.
                    let (tx, rx) = pipe::pipe().expect("pipe");
                    let empty = res(rx.try_read(&mut [0u8; 4]), |n| n.to_string());
                    let mut tx = tx;
                    tx.write_all(b"pipe").await.expect("write");
                    drop(tx);
                    let mut rx = rx;
                    let mut v = Vec::new();
                    let r = res(rx.read_to_end(&mut v).await, |n| n.to_string());
                    let (mut tx, rx) = pipe::pipe().expect("pipe");
                    drop(rx);
                    let w = ok(tx.write(b"x").await);
                    format!("{empty} {r} {} write after reader dropped {w}", show(&v))
                }
                10 => {
                    // FIFOs: a receiver on a path that is not a FIFO, on a
                    // missing path; a sender with no reader (ENXIO), then
                    // with one.
                    let f = dir.join("fifo");
                    let c = std::ffi::CString::new(f.to_str().expect("utf-8")).expect("path");
                    // SAFETY: `c` is a valid NUL-terminated path.
                    unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
                    let file = dir.join("file");
                    std::fs::write(&file, b"x").expect("file");
                    let not_fifo = ok(pipe::OpenOptions::new().open_receiver(&file));
                    let missing = ok(pipe::OpenOptions::new().open_receiver(dir.join("nope")));
                    let no_reader = ok(pipe::OpenOptions::new().open_sender(&f));
                    let rx = pipe::OpenOptions::new().open_receiver(&f);
                    let with_reader = ok(pipe::OpenOptions::new().open_sender(&f));
                    format!("{not_fifo} {missing} {no_reader} {} {with_reader}", ok(rx))
                }
                _ => {
                    // `peek` sees bytes `read` then takes; `OwnedWriteHalf`
                    // drop is the peer's EOF; `reunite` of two streams.
                    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                    let addr = l.local_addr().expect("addr");
                    let c = TcpStream::connect(addr).await.expect("connect");
                    let (s, _) = l.accept().await.expect("accept");
                    let c2 = TcpStream::connect(addr).await.expect("connect");
                    let (r1, w1) = c.into_split();
                    let (r2, w2) = c2.into_split();
                    let err = r1.reunite(w2).err().expect("two streams");
                    let msg = err.to_string();
                    drop((err, r2, w1));
                    let mut s = s;
                    let mut v = Vec::new();
                    let r = res(s.read_to_end(&mut v).await, |n| n.to_string());
                    format!("{msg}, peer after both halves dropped: {r}")
                }
            }
        }

        pub fn run(s: &CaseScript) -> Vec<Step> {
            let dir = temp_dir();
            let mut log = Log::in_dir(&dir);
            block_on!(s.multi, async {
                for &n in &s.cases {
                    let step = k::time::timeout(Duration::from_secs(5), case(n, &dir, &mut log));
                    let out = step.await.unwrap_or_else(|_| "TIMEOUT".into());
                    log.push(n, out);
                }
            });
            let _ = std::fs::remove_dir_all(&dir);
            log.steps
        }
    };
}

for_both!(cases_group);
