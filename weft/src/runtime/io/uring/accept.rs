//! A listener's accepts through io_uring (TCP and Unix-domain stream
//! listeners; the caller turns the peer's raw address into its own type).
//!
//! Owns: the listener's one accept in flight (which ring, which op, and
//! its address buffer), the tasks waiting for a connection, and the
//! driver handle that keeps the rings alive.
//!
//! Invariants:
//! - **At most one accept is in flight per listener, and it belongs to the
//!   listener**, not to the future that started it: an `accept()` dropped
//!   mid-way (a `select!` timeout) loses no connection; the next `accept`
//!   takes it.
//! - **Every waiting task hears of a completion**: the op's waker wakes
//!   the whole waiter list, and a task joins the list *before* it looks at
//!   the op, so a completion between its look and its sleep still wakes
//!   it. One of the woken takes the connection; the others start the next
//!   accept or wait for it.
//! - A listener's drop ends its accept before the listening socket
//!   closes (the request holds it open), and closes a connection the
//!   accept took that nobody will.

use super::ops::{interrupted, OpKey, Polled};
use crate::runtime::driver;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{ready, Context, Poll, Wake, Waker};

/// Bytes of an accept's buffer: a `sockaddr_storage`, then the
/// `socklen_t` the kernel reads (its size) and writes (the address's).
const ADDR_LEN: usize = std::mem::size_of::<libc::sockaddr_storage>();
const BUF_LEN: usize = ADDR_LEN + std::mem::size_of::<libc::socklen_t>();

pub(crate) struct UringAccept {
    driver: driver::Handle,
    fd: RawFd,
    state: Mutex<AcceptState>,
    waiters: Arc<Waiters>,
    /// `waiters` as a waker: what the op wakes.
    waker: Waker,
}

#[derive(Default)]
struct AcceptState {
    /// (ring index, op) of the accept in flight.
    op: Option<(usize, OpKey)>,
    /// The address buffer between accepts.
    spare: Vec<u8>,
}

/// The tasks waiting for this listener's next connection (a loom mutex
/// under `--cfg loom`: `loom_ops.rs` models joining against a completion).
#[derive(Default)]
pub(super) struct Waiters(crate::loom::Mutex<Vec<Waker>>);

impl Waiters {
    fn lock(&self) -> crate::loom::MutexGuard<'_, Vec<Waker>> {
        crate::loom::lock(&self.0)
    }

    /// Add `waker` (once) to the tasks woken by the next completion. A
    /// task joins before it looks at the op (module doc).
    pub(super) fn join(&self, waker: &Waker) {
        let mut waiting = self.lock();
        if !waiting.iter().any(|w| w.will_wake(waker)) {
            waiting.push(waker.clone());
        }
    }
}

impl Wake for Waiters {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let waiting = std::mem::take(&mut *self.lock());
        for waker in waiting {
            waker.wake();
        }
    }
}

impl UringAccept {
    /// Accepts on `fd` through `driver`'s rings; `None` if it has none.
    pub(crate) fn new(driver: &driver::Handle, fd: RawFd) -> Option<UringAccept> {
        driver.io()?.rings()?;
        let waiters = Arc::new(Waiters::default());
        Some(UringAccept {
            driver: driver.clone(),
            fd,
            state: Mutex::new(AcceptState::default()),
            waker: Waker::from(waiters.clone()),
            waiters,
        })
    }

    /// What a listener that accepts through `ring` (if any) asks the
    /// poller for. On the rings, accepts do not need the poller: read
    /// interest would only wake the driver for every connection the ring
    /// takes anyway. (A listening socket is never writable, so the write
    /// interest asks for nothing.)
    pub(crate) fn listener_interest(ring: Option<&UringAccept>) -> crate::io::Interest {
        if ring.is_some() {
            crate::io::Interest::WRITABLE
        } else {
            crate::io::Interest::READABLE
        }
    }

    fn lock(&self) -> MutexGuard<'_, AcceptState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next connection of a TCP listener: its socket (non-blocking,
    /// close-on-exec) and the peer's address.
    pub(crate) fn poll_accept(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<(OwnedFd, SocketAddr)>> {
        self.poll_accept_with(cx, peer_address)
    }

    /// The next connection: its socket (non-blocking, close-on-exec) and
    /// `address` of the `sockaddr` bytes the kernel wrote for the peer.
    /// Spends one unit of coop budget when it returns one, as a
    /// readiness-based accept does.
    pub(crate) fn poll_accept_with<A>(
        &self,
        cx: &mut Context<'_>,
        address: fn(&[u8]) -> io::Result<A>,
    ) -> Poll<io::Result<(OwnedFd, A)>> {
        let restore = ready!(crate::coop::poll_proceed(cx));
        let io = self.driver.io().expect("checked by new");
        let rings = io.rings().expect("checked by new");
        // Join the waiters before looking (see the module doc).
        self.waiters.join(cx.waker());
        let mut state = self.lock();
        loop {
            let Some((index, key)) = state.op else {
                if io.is_shutdown() {
                    return Poll::Ready(Err(super::super::shutdown_error()));
                }
                let (index, owned) = io.current_ring(rings);
                let mut buf = std::mem::take(&mut state.spare);
                buf.clear();
                buf.resize(BUF_LEN, 0);
                let key =
                    rings
                        .get(index)
                        .start_accept(self.fd, buf, ADDR_LEN, &self.waker, !owned)?;
                state.op = Some((index, key));
                continue;
            };
            let (result, buf) = match rings.get(index).poll(key, &self.waker) {
                Polled::Done { result, buf } => (result, buf),
                Polled::Pending if io.is_shutdown() => {
                    return Poll::Ready(Err(super::super::shutdown_error()))
                }
                Polled::Pending => return Poll::Pending,
            };
            state.op = None;
            if result < 0 {
                state.spare = buf;
                if interrupted(result) {
                    continue;
                }
                restore.made_progress();
                return Poll::Ready(Err(io::Error::from_raw_os_error(-result)));
            }
            // SAFETY: the kernel made `result` for this accept, and the
            // table handed it to us alone (ops.rs): we own it now.
            let socket = unsafe { OwnedFd::from_raw_fd(result) };
            let addr = address(written_address(&buf));
            state.spare = buf;
            restore.made_progress();
            return Poll::Ready(addr.map(|addr| (socket, addr)));
        }
    }
}

/// The `sockaddr` bytes the kernel wrote at the start of an accept's
/// buffer: as many as the length it wrote after the address room says
/// (at most that room: a longer length means the address was truncated).
fn written_address(buf: &[u8]) -> &[u8] {
    let mut len = [0; std::mem::size_of::<libc::socklen_t>()];
    len.copy_from_slice(&buf[ADDR_LEN..BUF_LEN]);
    let len = libc::socklen_t::from_ne_bytes(len) as usize;
    &buf[..len.min(ADDR_LEN)]
}

/// An IPv4 or IPv6 peer address from the bytes an accept wrote.
fn peer_address(buf: &[u8]) -> io::Result<SocketAddr> {
    if buf.len() < std::mem::size_of::<libc::sa_family_t>() {
        return Err(io::Error::other("accept returned no peer address"));
    }
    let family = u16::from_ne_bytes([buf[0], buf[1]]);
    match i32::from(family) {
        libc::AF_INET if buf.len() >= std::mem::size_of::<libc::sockaddr_in>() => {
            // SAFETY: the kernel wrote a whole `sockaddr_in` (family
            // AF_INET, length checked) at the start of the buffer; read
            // unaligned, as a `Vec<u8>` promises no alignment.
            let sin = unsafe { std::ptr::read_unaligned(buf.as_ptr().cast::<libc::sockaddr_in>()) };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Ok(SocketAddrV4::new(ip, u16::from_be(sin.sin_port)).into())
        }
        libc::AF_INET6 if buf.len() >= std::mem::size_of::<libc::sockaddr_in6>() => {
            // SAFETY: as above, a whole `sockaddr_in6` (family AF_INET6).
            let sin6 =
                unsafe { std::ptr::read_unaligned(buf.as_ptr().cast::<libc::sockaddr_in6>()) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Ok(SocketAddrV6::new(
                ip,
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )
            .into())
        }
        other => Err(io::Error::other(format!(
            "accept returned {} bytes of an address of family {other}, not a whole IPv4 or IPv6 one",
            buf.len()
        ))),
    }
}

impl Drop for UringAccept {
    /// Before the listener closes: the accept in flight is cancelled, and
    /// its end waited for, up to the kernel's release of the request
    /// (`Ring::cancel_before_close`). Until then it holds the listening
    /// socket open in the kernel, which would go on taking connections
    /// after the listener is gone (Tokio's stops at the drop). A drop on a
    /// thread other than the one that submitted the accept saw that: the
    /// cancel completes on the submitter's thread, later. The wait is one
    /// cancel of a request parked in the kernel. A connection the accept
    /// took anyway is closed here.
    fn drop(&mut self) {
        if let Some((index, key)) = self.lock().op.take() {
            if let Some(rings) = self.driver.io().and_then(|io| io.rings()) {
                let result = rings.get(index).cancel_before_close(key);
                if result >= 0 {
                    // SAFETY: a completed accept's result is a descriptor
                    // the kernel made for this op alone; nobody else has it.
                    drop(unsafe { OwnedFd::from_raw_fd(result) });
                }
            }
        }
    }
}
