//! A datagram socket's receives through io_uring (UDP and Unix-domain
//! datagram sockets).
//!
//! Owns: the socket's one `recvmsg` in flight (which ring, which op), the
//! datagram (or error) it brought that no receiver has taken yet
//! (`pending`), the tasks waiting for a datagram, and a spare buffer.
//!
//! Invariants:
//! - **At most one receive is in flight per socket, and it belongs to the
//!   socket**, not to the future that started it: a `recv_from` dropped
//!   mid-way (a `select!` that took another branch) loses no datagram; it
//!   waits in `pending` for the next receive, of whatever kind. Tokio's
//!   promise for a cancelled receive, "no data was received", becomes
//!   "none is lost".
//! - **Datagrams reach receivers whole, once, in the kernel's order**:
//!   the ring asks for [`MAX_DATAGRAM`] bytes, more than any UDP payload,
//!   so nothing is cut in the kernel; a receiver whose buffer is smaller
//!   gets the datagram truncated to it, the rest dropped, as `recv(2)`
//!   does. A readiness-based receive (`try_recv_from`, `peek_from`, a
//!   custom `try_io`) first [`settle`](UringDatagrams::settle)s, which
//!   cancels the receive in flight and keeps what it brought, and takes
//!   `pending` before the socket's queue.
//! - **Every waiting task hears of a completion** (waiters.rs: a task
//!   joins the waiters before it looks at the op).
//! - **Receive directly while datagrams wait.** A UDP server usually has
//!   one socket, so there is no batch for the ring to gather, and a
//!   receive handed to it costs a trip through the worker's flush and a
//!   task wake-up where a `recvmsg(2)` would have found the datagram at
//!   once (an echo server spent 14–17% more CPU per round trip that way
//!   than on epoll: BENCHMARKS.md, "UDP"). So after a receive that found
//!   a datagram (directly, or a ring receive that completed), the next
//!   one first tries `recvmsg(2)` with `MSG_DONTWAIT`; only when that
//!   finds nothing does it go to the ring, where the wait needs no epoll
//!   registration and the completion brings the datagram with it. Never
//!   while a receive is in flight or a datagram pending, which it would
//!   overtake.
//!
//! - **Quiet in the poller.** The socket is registered for nothing but
//!   errors and hang-ups (`Handle::register_quiet`; not even `PRIORITY`,
//!   which every arrival's wake-up carries): read readiness would wake the driver
//!   for every datagram the ring receives anyway, and write readiness for
//!   every datagram sent (a UDP socket's write-space callback wakes its
//!   waiters each time a sent datagram's buffer is freed: on a one-socket
//!   echo, two `io_uring_enter` and an `epoll_wait` per round trip, measured).
//!   A readiness-based receive adds read interest, a send that would block
//!   (or a wait for writability) write interest, a wait for priority
//!   priority interest (io/lazy_interest.rs).
//!
//! Sends stay `sendto(2)` calls: a datagram send completes inside the
//! call, and Tokio promises that a cancelled `send_to` sent nothing, which
//! a send handed to the ring could not keep. On these sockets a send is
//! tried first and waits for readiness only if it would block.

use super::ops::{interrupted, OpKey, Polled};
use super::waiters::Waiters;
use super::Rings;
use socket2::{SockAddr, SockAddrStorage};
use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// The most one receive takes: above the largest UDP payload (65,507
/// bytes over IPv4, 65,527 over IPv6 without jumbograms).
pub(crate) const MAX_DATAGRAM: usize = 64 * 1024;

// A receive's buffer: the `msghdr`, its one `iovec`, room for the
// sender's address, then the data. Nothing in it is aligned (a `Vec<u8>`
// promises no alignment): it is written and read unaligned, and the kernel
// copies the header in and out without caring.
const IOV_AT: usize = size_of::<libc::msghdr>();
const NAME_AT: usize = IOV_AT + size_of::<libc::iovec>();
const NAME_ROOM: usize = size_of::<libc::sockaddr_storage>();
const DATA_AT: usize = NAME_AT + NAME_ROOM;

/// Lay a receive of up to `max` data bytes out in `buf` (its old contents
/// are dropped) and return the header for `IORING_OP_RECVMSG`.
pub(super) fn prepare(buf: &mut Vec<u8>, max: usize) -> *mut libc::msghdr {
    buf.clear();
    buf.reserve(DATA_AT + max);
    buf.resize(DATA_AT, 0);
    let base = buf.as_mut_ptr();
    let room = (buf.capacity() - DATA_AT).min(max);
    // SAFETY: every offset is inside the `DATA_AT` initialised bytes, and
    // the data pointer is `room` bytes of the allocation's capacity;
    // unaligned writes, as the module's layout says.
    unsafe {
        let iov = libc::iovec {
            iov_base: base.add(DATA_AT).cast(),
            iov_len: room,
        };
        std::ptr::write_unaligned(base.add(IOV_AT).cast::<libc::iovec>(), iov);
        let mut header: libc::msghdr = std::mem::zeroed();
        header.msg_name = base.add(NAME_AT).cast();
        header.msg_namelen = NAME_ROOM as libc::socklen_t;
        header.msg_iov = base.add(IOV_AT).cast();
        header.msg_iovlen = 1;
        std::ptr::write_unaligned(base.cast::<libc::msghdr>(), header);
    }
    base.cast()
}

/// A datagram a receive brought: its buffer (the data from `DATA_AT`) and
/// its sender.
struct Datagram {
    buf: Vec<u8>,
    from: SockAddr,
}

impl Datagram {
    /// The completed receive of `len` bytes in `buf`.
    fn new(mut buf: Vec<u8>, len: usize) -> Datagram {
        // SAFETY: the kernel wrote `len` bytes at `DATA_AT`, inside the
        // room `prepare` gave it (the completion never reports more).
        unsafe { buf.set_len(DATA_AT + len) };
        // The sender's address length, which the kernel wrote back into
        // the header `prepare` put at the start.
        let at = offset_of!(libc::msghdr, msg_namelen);
        let name_len = libc::socklen_t::from_ne_bytes(
            buf[at..at + size_of::<libc::socklen_t>()]
                .try_into()
                .expect("a socklen_t's bytes"),
        );
        let name = &buf[NAME_AT..NAME_AT + (name_len as usize).min(NAME_ROOM)];
        let mut storage = SockAddrStorage::zeroed();
        // SAFETY: a `SockAddrStorage` is a `sockaddr_storage`, `NAME_ROOM`
        // bytes, and `name` is at most that long.
        unsafe {
            std::ptr::copy_nonoverlapping(
                name.as_ptr(),
                (&mut storage as *mut SockAddrStorage).cast::<u8>(),
                name.len(),
            );
        }
        // SAFETY: the storage holds the kernel's address of its family,
        // `name.len()` bytes long.
        let from = unsafe { SockAddr::new(storage, name.len() as libc::socklen_t) };
        Datagram { buf, from }
    }

    fn data(&self) -> &[u8] {
        &self.buf[DATA_AT..]
    }
}

pub(crate) struct UringDatagrams {
    fd: RawFd,
    state: Mutex<State>,
    waiters: Arc<Waiters>,
    /// `waiters` as a waker: what the op wakes.
    waker: Waker,
}

#[derive(Default)]
struct State {
    /// (ring index, op) of the receive in flight.
    op: Option<(usize, OpKey)>,
    /// The last receive found a datagram waiting, so the next one first
    /// tries `recvmsg(2)` itself (module doc, "Receive directly while
    /// datagrams wait").
    waiting_hint: bool,
    /// What a finished receive brought that nobody has taken: a datagram,
    /// or the error the kernel reported instead.
    pending: Option<io::Result<Datagram>>,
    spare: Vec<u8>,
}

impl State {
    /// Take a receive's completion: a datagram or a real error becomes
    /// `pending`; one the kernel interrupted leaves nothing (the next
    /// receive starts another).
    fn completed(&mut self, result: i32, buf: Vec<u8>) {
        self.op = None;
        if result >= 0 {
            self.pending = Some(Ok(Datagram::new(buf, result as usize)));
            // More may have come behind it.
            self.waiting_hint = true;
            return;
        }
        self.spare = buf;
        if !interrupted(result) {
            self.pending = Some(Err(io::Error::from_raw_os_error(-result)));
        }
    }

    /// One `recvmsg(2)` that does not wait, into a receive's buffer: the
    /// datagram becomes `pending`. Only with no receive in flight and
    /// nothing pending (it would overtake them).
    fn receive_now(&mut self, fd: RawFd) -> io::Result<()> {
        debug_assert!(self.op.is_none() && self.pending.is_none());
        let mut buf = std::mem::take(&mut self.spare);
        let header = prepare(&mut buf, MAX_DATAGRAM);
        // SAFETY: `prepare` laid out the header, its iovec and the address
        // room in `buf`, which outlives the call.
        let n = unsafe { libc::recvmsg(fd, header, libc::MSG_DONTWAIT) };
        if n < 0 {
            self.spare = buf;
            return Err(io::Error::last_os_error());
        }
        self.pending = Some(Ok(Datagram::new(buf, n as usize)));
        Ok(())
    }

    /// Hand the pending datagram to `f`; it stays pending unless
    /// `consume`. An error is taken either way (as the socket's pending
    /// error is, by a peek too).
    fn take<T>(
        &mut self,
        consume: bool,
        f: impl FnOnce(&[u8], &SockAddr) -> io::Result<T>,
    ) -> Option<io::Result<T>> {
        match self.pending.take()? {
            Ok(datagram) => {
                let out = f(datagram.data(), &datagram.from);
                if consume {
                    self.spare = datagram.buf;
                } else {
                    self.pending = Some(Ok(datagram));
                }
                Some(out)
            }
            Err(e) => Some(Err(e)),
        }
    }
}

impl UringDatagrams {
    pub(crate) fn new(fd: RawFd) -> UringDatagrams {
        let waiters = Arc::new(Waiters::default());
        UringDatagrams {
            fd,
            state: Mutex::new(State::default()),
            waker: Waker::from(waiters.clone()),
            waiters,
        }
    }

    /// The socket's descriptor.
    pub(crate) fn fd(&self) -> RawFd {
        self.fd
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Receive one datagram through the ring, started on ring `ring`
    /// (`owned`: the caller is its worker): `take` gets its bytes and
    /// sender, and the datagram is consumed.
    pub(crate) fn poll_recv<T>(
        &self,
        rings: &Rings,
        (ring, owned): (usize, bool),
        is_shutdown: bool,
        cx: &mut Context<'_>,
        take: impl FnOnce(&[u8], &SockAddr) -> io::Result<T>,
    ) -> Poll<io::Result<T>> {
        // Join the waiters before looking (module doc).
        self.waiters.join(cx.waker());
        let mut state = self.lock();
        loop {
            if state.pending.is_some() {
                let taken = state.take(true, take).expect("checked: pending");
                return Poll::Ready(taken);
            }
            if is_shutdown {
                return Poll::Ready(Err(super::super::shutdown_error()));
            }
            if let Some((index, key)) = state.op {
                match rings.get(index).poll(key, &self.waker) {
                    Polled::Pending => return Poll::Pending,
                    Polled::Done { result, buf } => {
                        state.completed(result, buf);
                        continue;
                    }
                }
            }
            if state.waiting_hint {
                match state.receive_now(self.fd) {
                    Ok(()) => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => state.waiting_hint = false,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
            let buf = std::mem::take(&mut state.spare);
            let key =
                rings
                    .get(ring)
                    .start_recvmsg(self.fd, buf, MAX_DATAGRAM, &self.waker, !owned)?;
            state.op = Some((ring, key));
            return Poll::Pending;
        }
    }

    /// Before a readiness-based receive: end the receive in flight,
    /// keeping what it brought as pending.
    pub(crate) fn settle(&self, rings: &Rings) {
        let mut state = self.lock();
        if let Some((index, key)) = state.op {
            let (result, buf) = rings.get(index).cancel_and_wait(key);
            state.completed(result, buf);
        }
    }

    /// The pending datagram (or error), if any, handed to `f` (consumed
    /// if `consume`). The caller settled first.
    pub(crate) fn take_pending<T>(
        &self,
        consume: bool,
        f: impl FnOnce(&[u8], &SockAddr) -> io::Result<T>,
    ) -> Option<io::Result<T>> {
        self.lock().take(consume, f)
    }

    /// The error a finished receive brought instead of a datagram, taken.
    /// The kernel handed the socket's pending error (an ICMP "port
    /// unreachable" on a connected UDP socket) to that receive, so a send
    /// or `take_error`, which would have found it in the socket, takes it
    /// here instead.
    pub(crate) fn take_error(&self, rings: &Rings) -> Option<io::Error> {
        let mut state = self.lock();
        // A receive that has completed (without waiting for one that has
        // not: sends must not pay a cancel).
        if let Some((index, key)) = state.op {
            if let Some((result, buf)) = rings.get(index).try_take(key) {
                state.completed(result, buf);
            }
        }
        match state.pending.take() {
            Some(Err(e)) => Some(e),
            other => {
                state.pending = other;
                None
            }
        }
    }

    /// Whether a datagram (or error) waits to be taken.
    pub(crate) fn has_pending(&self) -> bool {
        self.lock().pending.is_some()
    }

    /// The socket is going away: give its receive up (the ring frees the
    /// buffer when the cancelled receive completes). Must run before the
    /// socket is closed.
    pub(crate) fn abandon(&self, rings: &Rings) {
        if let Some((index, key)) = self.lock().op.take() {
            rings.get(index).abandon(key, super::ops::Leave::Cancel);
        }
    }
}
