//! The ceiling reference of `http_bench.sh`: a "hello world" HTTP/1 server
//! with no runtime and no HTTP library, one thread straight on mio (epoll).
//! It only finds the end of each request head (`\r\n\r\n`) and writes a
//! canned keep-alive response of the same shape as hyper's (status line,
//! `content-length`, `date`, body). Whatever wrk measures against it is the
//! most this machine's load generator can show; no real server reaches it.
//!
//! `PORT` (default 3000): `cargo run --release -p weft-bench --bin
//! hello_http_raw`, then `curl http://127.0.0.1:3000/`.
//!
//! With `RAW_SEED=keepalive` or `RAW_SEED=close` it is instead the floor of
//! weft-ruby's benchmark (`weft-ruby/bench/http_bench.sh`): the response of
//! the Ruby seed server (`weft-ruby/examples/http_server.rb`), its listen
//! backlog (`Socket::SOMAXCONN`), no `TCP_NODELAY` (Ruby sets none), and in
//! `close` mode the connection closed after each answer. A new connection
//! is read before it is registered with epoll, as the Ruby servers do, so a
//! request that is already there costs `accept4`, `recvfrom`, `sendto` and
//! `close` alone. No Ruby server makes fewer syscalls per request, and each
//! runs Ruby besides.

#[path = "../http_hello.rs"]
#[allow(dead_code, unused_macros)] // only `port` is used here
mod http_hello;

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;

const LISTENER: Token = Token(usize::MAX);
/// hyper's response to the hello handler, byte for byte apart from the date.
const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 13\r\ndate: Sun, 22 Nov 2026 00:00:00 GMT\r\n\r\nHello, World!";

/// The Ruby seed server's responses (`RAW_SEED`).
const SEED_KEEPALIVE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World\n";
const SEED_CLOSE: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\n\r\nHello World\n";

/// What to answer and how (`RAW_SEED`, module doc).
#[derive(Clone, Copy)]
struct Style {
    response: &'static [u8],
    /// Close the connection after each answer.
    close: bool,
    /// The Ruby servers' floor: their backlog, no `TCP_NODELAY`, and a
    /// read before the registration.
    seed: bool,
}

impl Style {
    fn from_env() -> Style {
        let seed = std::env::var("RAW_SEED").ok();
        match seed.as_deref() {
            None | Some("") => Style {
                response: RESPONSE,
                close: false,
                seed: false,
            },
            Some("keepalive") => Style {
                response: SEED_KEEPALIVE,
                close: false,
                seed: true,
            },
            Some("close") => Style {
                response: SEED_CLOSE,
                close: true,
                seed: true,
            },
            Some(other) => {
                panic!("RAW_SEED={other:?}: expected `keepalive` or `close` (or unset)")
            }
        }
    }
}

/// One connection: its socket and the bytes of an unfinished request head.
struct Conn {
    stream: mio::net::TcpStream,
    pending: Vec<u8>,
}

impl Conn {
    /// Reads what is there and answers every complete request head.
    /// Returns false once the connection is closed or failed.
    fn serve(&mut self, buf: &mut [u8], style: Style) -> bool {
        loop {
            let n = match self.stream.read(buf) {
                Ok(0) => return false,
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(_) => return false,
            };
            self.pending.extend_from_slice(&buf[..n]);
            let mut heads = 0;
            while let Some(end) = self.pending.windows(4).position(|w| w == b"\r\n\r\n") {
                self.pending.drain(..end + 4);
                heads += 1;
                if style.close {
                    break;
                }
            }
            // One write for all the answers; the usual one needs no copy.
            let written = match heads {
                0 => Ok(()),
                1 => self.stream.write_all(style.response),
                n => self.stream.write_all(&style.response.repeat(n)),
            };
            if written.is_err() || (style.close && heads > 0) {
                return false;
            }
            // Edge-triggered: a short read drained the socket.
            if n < buf.len() {
                return true;
            }
        }
    }
}

/// Ruby's `Socket::SOMAXCONN` on Linux, the backlog the Ruby servers ask
/// for (mio's `bind` asks for 128).
const RUBY_BACKLOG: i32 = 4096;

fn main() -> std::io::Result<()> {
    let addr = ([127, 0, 0, 1], http_hello::port()).into();
    let style = Style::from_env();
    let mut listener = TcpListener::bind(addr)?;
    if style.seed {
        // SAFETY: `listen` on the listener's own open fd; no memory is
        // passed. Listening again only changes the backlog.
        if unsafe { libc::listen(listener.as_raw_fd(), RUBY_BACKLOG) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    println!("raw: listening on http://{}", listener.local_addr()?);
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut conns: Vec<Option<Conn>> = Vec::new();
    // Slots of `conns` free for the next connection.
    let mut free: Vec<usize> = Vec::new();
    let mut events = Events::with_capacity(1024);
    let mut buf = vec![0u8; 8192];
    loop {
        match poll.poll(&mut events, None) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            r => r?,
        }
        for ev in events.iter() {
            if ev.token() == LISTENER {
                while let Ok((stream, _)) = listener.accept() {
                    if !style.seed {
                        stream.set_nodelay(true)?;
                    }
                    let mut conn = Conn {
                        stream,
                        pending: Vec::new(),
                    };
                    // The Ruby servers read a new connection first.
                    if style.seed && !conn.serve(&mut buf, style) {
                        continue;
                    }
                    let slot = free.pop().unwrap_or_else(|| {
                        conns.push(None);
                        conns.len() - 1
                    });
                    poll.registry()
                        .register(&mut conn.stream, Token(slot), Interest::READABLE)?;
                    conns[slot] = Some(conn);
                }
                continue;
            }
            let slot = ev.token().0;
            if let Some(conn) = &mut conns[slot] {
                if !conn.serve(&mut buf, style) {
                    // Dropping the stream closes it and deregisters it.
                    conns[slot] = None;
                    free.push(slot);
                }
            }
        }
    }
}
