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
//!   got through.

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
    /// An earlier attempt was interrupted: `EISCONN` is success.
    retried: bool,
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
            retried: false,
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
                let addr = me
                    .addr
                    .take()
                    .expect("the address is ours while no op runs");
                match rings.get(index).start_connect(fd, addr, cx.waker(), !owned) {
                    Ok(key) => me.op = Some((index, key)),
                    Err(e) => {
                        restore.made_progress();
                        return Poll::Ready(Err(e));
                    }
                }
                continue;
            };
            let (result, addr) = match rings.get(index).poll(key, cx.waker()) {
                Polled::Done { result, buf } => (result, buf),
                Polled::Pending if io.is_shutdown() => {
                    me.op = None;
                    rings.get(index).abandon(key, super::ops::Leave::Cancel);
                    return Poll::Ready(Err(super::super::shutdown_error()));
                }
                Polled::Pending => return Poll::Pending,
            };
            me.op = None;
            if interrupted(result) {
                me.addr = Some(addr);
                me.retried = true;
                continue;
            }
            match -result {
                libc::EISCONN if me.retried => {}
                0 => {}
                errno => {
                    restore.made_progress();
                    return Poll::Ready(Err(io::Error::from_raw_os_error(errno)));
                }
            }
            restore.made_progress();
            return Poll::Ready(Ok(me.socket.take().expect("checked above")));
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
