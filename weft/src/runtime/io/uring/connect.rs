//! A TCP connect through io_uring: what `TcpStream::connect` and
//! `TcpSocket::connect` run, instead of a non-blocking `connect(2)` and a
//! wait for writability, when the runtime's driver has rings.
//!
//! Owns: the socket while it connects, the connect in flight, and the
//! driver handle that keeps its ring alive.
//!
//! Invariants:
//! - The socket is closed only after the op is given up (the future owns
//!   both; `Drop` abandons the op first), so the request never reaches a
//!   reused descriptor number; the address buffer is the ring's until the
//!   completion (ops.rs).
//! - A connect the kernel interrupted (`EINTR`, `EAGAIN`, an `ECANCELED`
//!   nobody asked for) is issued again; `EISCONN` then means the first one
//!   got through, and `EALREADY` that it is still under way: the kernel
//!   cancels a request when the thread that submitted it exits, but not
//!   the handshake the socket started, and `connect(2)` on a socket
//!   still connecting answers `EALREADY`. The op then waits for the
//!   socket to turn writable (a ring poll) and reads the handshake's
//!   outcome from `SO_ERROR`, as a non-blocking `connect(2)`'s caller
//!   does. (Linux 6.18's ring instead waits for the handshake in the
//!   re-issued connect and returns 0: test
//!   `a_connect_whose_submitting_thread_exits_mid_handshake_still_connects`
//!   passes either way; the unit tests below cover the wait.)

use super::ops::{interrupted, OpKey, Polled};
use crate::runtime::driver;
use std::future::Future;
use std::io;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// A `connect(2)` the ring runs; resolves to the connected socket.
pub(crate) struct ConnectOp {
    driver: driver::Handle,
    socket: Option<socket2::Socket>,
    /// The peer's `sockaddr`, while no op holds it.
    addr: Option<Vec<u8>>,
    /// (ring index, op) while the kernel has it.
    op: Option<(usize, OpKey)>,
    progress: Progress,
}

/// Where a [`ConnectOp`] is.
struct Progress {
    /// What the op in flight, or the next one, is.
    step: Step,
    /// An earlier attempt was interrupted: `EISCONN` is success, and
    /// `EALREADY` a handshake still under way.
    retried: bool,
}

/// The op a [`ConnectOp`] runs (module doc).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Connect,
    /// An interrupted connect's handshake goes on: wait for writability.
    AwaitHandshake,
}

/// What a finished op means for the connect.
#[must_use]
enum Outcome {
    /// Run the (new) step's op.
    Again,
    Connected,
    Failed(io::Error),
}

impl ConnectOp {
    /// Connect `socket` (non-blocking) to `addr` through `driver`'s rings;
    /// gives the socket back if the driver has none.
    #[allow(clippy::result_large_err)]
    pub(crate) fn new(
        driver: &driver::Handle,
        socket: socket2::Socket,
        addr: &socket2::SockAddr,
    ) -> Result<ConnectOp, socket2::Socket> {
        if driver.io().and_then(|io| io.rings()).is_none() {
            return Err(socket);
        }
        // SAFETY: `as_ptr` points at `len` initialised bytes of the
        // address, which live as long as `addr`.
        let bytes =
            unsafe { std::slice::from_raw_parts(addr.as_ptr().cast::<u8>(), addr.len() as usize) };
        Ok(ConnectOp {
            driver: driver.clone(),
            socket: Some(socket),
            addr: Some(bytes.to_vec()),
            op: None,
            progress: Progress {
                step: Step::Connect,
                retried: false,
            },
        })
    }
}

impl Future for ConnectOp {
    type Output = io::Result<socket2::Socket>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<socket2::Socket>> {
        let me = self.get_mut();
        let restore = ready!(crate::coop::poll_proceed(cx));
        let io = me.driver.io().expect("checked by new");
        let rings = io.rings().expect("checked by new");
        let fd = me
            .socket
            .as_ref()
            .expect("a ConnectOp polled after it finished")
            .as_raw_fd();
        loop {
            let Some((index, key)) = me.op else {
                if io.is_shutdown() {
                    return Poll::Ready(Err(super::super::shutdown_error()));
                }
                let (index, owned) = io.current_ring(rings);
                let ring = rings.get(index);
                let started = match me.progress.step {
                    Step::Connect => {
                        let addr = me
                            .addr
                            .take()
                            .expect("the address is ours while no op runs");
                        ring.start_connect(fd, addr, cx.waker(), !owned)
                    }
                    Step::AwaitHandshake => ring.start_poll(
                        fd,
                        (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) as u32,
                        cx.waker(),
                        !owned,
                    ),
                };
                match started {
                    Ok(key) => me.op = Some((index, key)),
                    Err(e) => {
                        restore.made_progress();
                        return Poll::Ready(Err(e));
                    }
                }
                continue;
            };
            let (result, buf) = match rings.get(index).poll(key, cx.waker()) {
                Polled::Done { result, buf } => (result, buf),
                Polled::Pending if io.is_shutdown() => {
                    me.op = None;
                    rings.get(index).abandon(key, super::ops::Leave::Cancel);
                    return Poll::Ready(Err(super::super::shutdown_error()));
                }
                Polled::Pending => return Poll::Pending,
            };
            me.op = None;
            let outcome = match me.progress.step {
                Step::Connect => {
                    // A connect's buffer is the address, for a retry.
                    me.addr = Some(buf);
                    me.progress.connect_done(result)
                }
                Step::AwaitHandshake => {
                    let socket = me.socket.as_ref().expect("checked above");
                    me.progress.handshake_done(result, socket)
                }
            };
            let done = match outcome {
                Outcome::Again => continue,
                Outcome::Connected => Ok(me.socket.take().expect("checked above")),
                Outcome::Failed(e) => Err(e),
            };
            restore.made_progress();
            return Poll::Ready(done);
        }
    }
}

impl Progress {
    /// A connect op ended with `result` (module doc).
    fn connect_done(&mut self, result: i32) -> Outcome {
        if interrupted(result) {
            self.retried = true;
            return Outcome::Again;
        }
        match -result {
            0 => Outcome::Connected,
            libc::EISCONN if self.retried => Outcome::Connected,
            libc::EALREADY if self.retried => {
                self.step = Step::AwaitHandshake;
                Outcome::Again
            }
            errno => Outcome::Failed(io::Error::from_raw_os_error(errno)),
        }
    }

    /// The wait for an interrupted connect's handshake ended with
    /// `result` (the ready events): its outcome is the socket's.
    fn handshake_done(&self, result: i32, socket: &socket2::Socket) -> Outcome {
        if interrupted(result) {
            return Outcome::Again;
        }
        if result < 0 {
            return Outcome::Failed(io::Error::from_raw_os_error(-result));
        }
        match socket.take_error() {
            Ok(Some(e)) | Err(e) => Outcome::Failed(e),
            // Writable without an error: connected, unless the socket
            // says otherwise.
            Ok(None) => match socket.peer_addr() {
                Ok(_) => Outcome::Connected,
                Err(e) => Outcome::Failed(e),
            },
        }
    }
}

impl Drop for ConnectOp {
    /// The connect in flight is cancelled before the socket (dropped after
    /// this) closes.
    fn drop(&mut self) {
        if let Some((index, key)) = self.op.take() {
            if let Some(rings) = self.driver.io().and_then(|io| io.rings()) {
                rings.get(index).abandon(key, super::ops::Leave::Cancel);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{Outcome, Progress, Step};
    use std::future::Future;
    use std::io;
    use std::net::SocketAddr;

    fn progress(retried: bool) -> Progress {
        Progress {
            step: Step::Connect,
            retried,
        }
    }

    fn failed_with(outcome: Outcome) -> Option<i32> {
        match outcome {
            Outcome::Failed(e) => e.raw_os_error(),
            _ => None,
        }
    }

    /// What each connect result means, first time and after an
    /// interruption (module doc).
    #[test]
    fn a_connect_result_is_read_by_whether_an_earlier_one_was_interrupted() {
        let mut p = progress(false);
        assert!(matches!(p.connect_done(-libc::ECANCELED), Outcome::Again));
        assert!(p.retried && p.step == Step::Connect);
        assert!(matches!(p.connect_done(-libc::EISCONN), Outcome::Connected));
        let mut p = progress(true);
        assert!(matches!(p.connect_done(-libc::EALREADY), Outcome::Again));
        assert!(
            p.step == Step::AwaitHandshake,
            "EALREADY after a retry waits"
        );
        // Not after a retry: somebody else's connect on the socket.
        assert_eq!(
            failed_with(progress(false).connect_done(-libc::EALREADY)),
            Some(libc::EALREADY)
        );
        assert_eq!(
            failed_with(progress(false).connect_done(-libc::EISCONN)),
            Some(libc::EISCONN)
        );
        assert_eq!(
            failed_with(progress(true).connect_done(-libc::ECONNREFUSED)),
            Some(libc::ECONNREFUSED)
        );
        assert!(matches!(
            progress(false).connect_done(0),
            Outcome::Connected
        ));
    }

    fn nonblocking_connect(addr: SocketAddr) -> socket2::Socket {
        let socket =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        socket.set_nonblocking(true).unwrap();
        match socket.connect(&addr.into()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => panic!("connect: {e}"),
        }
        socket
    }

    /// Wait (plain `poll(2)`) until `socket` is writable or failed.
    fn wait_writable(socket: &socket2::Socket) -> i32 {
        use std::os::fd::AsRawFd;
        let mut fd = libc::pollfd {
            fd: socket.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut fd, 1, 5_000) };
        assert_eq!(n, 1, "the handshake did not end in 5 s");
        i32::from(fd.revents)
    }

    /// The whole wait on a ring: a socket whose handshake is held up (the
    /// listener's accept queue is full, so its SYN is dropped and sent
    /// again a second later), given to a `ConnectOp` already waiting for
    /// the handshake, as after a re-issued connect's `EALREADY`, connects
    /// once the queue has room; one dropped while it waits leaves the
    /// runtime working.
    #[test]
    fn a_held_up_handshake_is_awaited_on_the_ring() {
        use crate::runtime::{Builder, IoDriver};
        let rt = Builder::new_current_thread()
            .enable_all()
            .io_driver(IoDriver::Uring)
            .build()
            .unwrap();
        let listener =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        listener
            .bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
            .unwrap();
        // One queued connection fills a backlog of 0.
        listener.listen(0).unwrap();
        let listener: std::net::TcpListener = listener.into();
        let addr = listener.local_addr().unwrap();
        let _queued = std::net::TcpStream::connect(addr).unwrap();
        let awaiting = |socket| {
            let driver = crate::runtime::io::registration::current_driver();
            let mut op = super::ConnectOp::new(&driver, socket, &addr.into())
                .unwrap_or_else(|_| panic!("no rings"));
            op.progress = Progress {
                step: Step::AwaitHandshake,
                retried: true,
            };
            op
        };
        rt.block_on(async {
            // Dropped mid-wait: the poll is cancelled before the socket
            // closes.
            let mut dropped = Box::pin(awaiting(nonblocking_connect(addr)));
            let ready = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(dropped.as_mut().poll(cx).is_ready())
            })
            .await;
            assert!(!ready, "the handshake was not held up");
        });
        let op = {
            let _inside = rt.enter();
            awaiting(nonblocking_connect(addr))
        };
        let (_first, _) = listener.accept().unwrap();
        let connected = rt
            .block_on(async { crate::time::timeout(std::time::Duration::from_secs(10), op).await });
        let socket = connected
            .expect("no connection in 10 s")
            .expect("the awaited handshake failed");
        let peer = socket.peer_addr().unwrap().as_socket().unwrap();
        assert_eq!(peer, addr);
    }

    /// The handshake's outcome is the socket's: connected, or its error.
    #[test]
    fn an_awaited_handshake_ends_as_the_socket_says() {
        let p = Progress {
            step: Step::AwaitHandshake,
            retried: true,
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let socket = nonblocking_connect(listener.local_addr().unwrap());
        let ready = wait_writable(&socket);
        assert!(matches!(
            p.handshake_done(ready, &socket),
            Outcome::Connected
        ));
        assert!(matches!(
            p.handshake_done(-libc::ECANCELED, &socket),
            Outcome::Again
        ));
        assert_eq!(
            failed_with(p.handshake_done(-libc::EBADF, &socket)),
            Some(libc::EBADF)
        );

        let closed = {
            // An address of its own: a port freed on 127.0.0.1 could be
            // bound by a concurrent test.
            let listener = std::net::TcpListener::bind("127.77.0.3:0").unwrap();
            listener.local_addr().unwrap()
        };
        let socket = nonblocking_connect(closed);
        let ready = wait_writable(&socket);
        match p.handshake_done(ready, &socket) {
            Outcome::Failed(e) => assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused),
            _ => panic!("a refused handshake was not reported"),
        }
    }
}
