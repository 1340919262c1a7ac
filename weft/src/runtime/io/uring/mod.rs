//! The io_uring side of the I/O driver: which driver a runtime uses, the
//! probe that decides it, and the per-worker rings.
//!
//! Owns: [`IoDriver`] (the user's choice), [`choose`] (builder setting,
//! then `WEFT_IO_DRIVER`, then a probe), and [`Rings`]: one [`Ring`] per
//! worker plus one for threads that are not workers (`block_on` of a
//! multi_thread runtime, the blocking pool, other runtimes' threads).
//!
//! How it fits the readiness driver (the idea of tokio PR #8249, with
//! batching it lacks): epoll stays the thing a parked worker blocks in,
//! and the rings' descriptors are registered in it, so a completion on a
//! ring whose owner will not reap it wakes the driver's holder, which
//! reaps that ring: the shared ring's always; a worker ring's only while
//! its owner is away (asleep on its condvar, or stuck in a poll), through
//! a one-shot registration its departure arms (`watch.rs`); never the
//! worker ring of a one-worker runtime ([`Rings::unwatched`]), whose
//! completions only ever need to reach its owner. A task starts an
//! operation on the ring of the worker it runs on; the owning worker
//! submits its ring's entries in one `io_uring_enter` per maintenance tick
//! and before it parks, and reaps its completions there too. An op never
//! moves between rings: a stolen task still polls (under that ring's
//! mutex) the ring it started on, so stealing keeps working. The rings use
//! no `SINGLE_ISSUER`/`DEFER_TASKRUN` (a stolen task's cancel may come from
//! another thread); they use `COOP_TASKRUN` (ring/mod.rs says why: a worker
//! asleep is still woken to post its completions, a busy one is not
//! interrupted for each).
//!
//! What runs on the rings: stream receives and sends (`recv.rs`,
//! `send.rs`), file reads, writes and syncs (`file.rs`), opens and other
//! calls on paths (`path.rs`) and TCP connects (`connect.rs`); each file
//! says who owns its op and what happens when its owner goes away.
//! Datagram sends and Unix connects stay plain syscalls on readiness:
//! both complete inside the call (an `AF_UNIX` connect either connects or
//! fails at once), so the ring would only add a wait for the worker's
//! flush. Listeners' accepts and datagram receives are readiness-based
//! too: a request in flight on a ring holds its socket, and a killed
//! process's ring is torn down asynchronously, so its ports stayed in use
//! for milliseconds after the process was gone (a restart on the same
//! port failed with `AddrInUse`); neither cost less CPU on the ring
//! (BENCHMARKS.md, "io_uring driver"). An `AsyncFd` waits on epoll, as
//! on the epoll driver (its readiness is then Tokio's); one registered
//! for the rings (`AsyncFd::with_interest_on_rings`, the Ruby selector's)
//! learns its readiness from poll requests on them (`poll.rs`), armed by
//! the waits that need it, unless it is a datagram socket or a socket
//! without a peer (a listener: epoll, for the same reason).
//!
//! Invariants:
//! - A ring's token in the poller is `RING_TOKEN_BASE - index`, above any
//!   resource token's range of use.
//! - **A running owner's completions are its own.** A worker ring's
//!   descriptor reports to epoll only while armed, and it is armed only
//!   while its owner is away (`watch.rs` states the rules and why no
//!   completion is then left unreaped). A busy owner takes its ring's
//!   completions at its next batch point, as it submits there; a stolen
//!   task waiting on an op of that ring waits for it too.
//! - **Only the owner blocks on an unwatched ring.** With one worker
//!   (current_thread, or multi_thread with one worker thread), the worker
//!   is the only thread that parks in the driver with a timeout (a
//!   `block_on` thread of a multi_thread runtime sleeps on its own parker,
//!   a current_thread `block_on` without the core waits for it, the
//!   monitor's rescue thread only polls without waiting), and it parks in
//!   its own ring, where a completion wakes it directly. So that ring's
//!   descriptor is left out of epoll, and every turn that goes through
//!   epoll reaps it explicitly. In the epoll set it made every completion
//!   fire the parked owner's poll on the epoll descriptor too, for an
//!   `epoll_wait` that found only the ring: one syscall in three of a
//!   one-connection echo round trip (BENCHMARKS.md, "io_uring driver").
//! - **An owner whose ring holds nothing waits in epoll.** A worker's ring
//!   gets new requests only from its owner (the thread holding that
//!   worker's core: `current_ring`); other threads only poll, cancel or
//!   submit requests already in it. So once the owner has seen, under the
//!   ring's lock, no request in flight, none queued and no poll on the
//!   epoll descriptor armed, no completion can reach the ring until the
//!   owner starts something after its wait, and it waits in `epoll_wait`
//!   alone (`Ring::is_empty`, a flag each release of the ring's lock
//!   sets, which the owner reads without the lock), watched ring or not;
//!   its batch points and the reap of an unwatched ring after an epoll
//!   turn skip an empty ring too. That saves the poll
//!   request on the epoll descriptor and a second syscall on every park
//!   of a worker whose I/O is all readiness-based (datagrams, listeners,
//!   pipes) or which only waits for timers and wake-ups: 8–12% of the
//!   server's CPU per UDP echo round trip (BENCHMARKS.md, "io_uring
//!   driver").
//! - Ops whose completion reports `ECANCELED` that their owner did not ask
//!   for (the kernel cancels a request when the thread that submitted it
//!   exits, e.g. a `block_in_place` thread retiring) are retried by the
//!   owner, never reported.

mod connect;
mod empty_flag;
mod file;
pub(crate) mod ops;
mod park_poll;
mod path;
mod poll;
mod recv;
mod ring;
mod send;
mod waiters;
mod watch;

#[cfg(all(test, loom))]
mod loom_empty_flag;
#[cfg(all(test, loom))]
mod loom_ops;
#[cfg(all(test, loom))]
mod loom_park_poll;
#[cfg(all(test, loom))]
mod loom_poll;
#[cfg(all(test, loom))]
mod loom_read_wait;
#[cfg(all(test, loom))]
mod loom_watch;

pub(crate) use self::connect::ConnectOp;
pub(crate) use self::file::FileOp;
pub(crate) use self::path::{PathCall, PathOp};
pub(crate) use self::poll::{ready_from_poll, DriverRings, UringPoll};
pub(crate) use self::recv::{RingRead, UringRead};
pub(crate) use self::ring::Ring;
pub(crate) use self::send::UringWrite;

use std::fmt;
use std::io;
use std::task::Waker;
use std::time::{Duration, Instant};

/// Which I/O driver a runtime uses (`Builder::io_driver`).
///
/// ```
/// use weft::runtime::{Builder, IoDriver};
///
/// // Epoll is always available on Linux.
/// let rt = Builder::new_current_thread()
///     .enable_all()
///     .io_driver(IoDriver::Epoll)
///     .build()
///     .unwrap();
/// assert_eq!(rt.metrics().io_driver(), Some(IoDriver::Epoll));
///
/// // Auto uses io_uring where the kernel allows it, epoll elsewhere.
/// let rt = Builder::new_current_thread().enable_all().build().unwrap();
/// assert!(rt.metrics().io_driver().is_some());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum IoDriver {
    /// io_uring if a probe at build time finds it usable, else epoll,
    /// silently. The default; `WEFT_IO_DRIVER` overrides it.
    #[default]
    Auto,
    /// Readiness through epoll (mio) only.
    Epoll,
    /// io_uring for stream receives, on per-worker rings; `build()` fails,
    /// saying why, where the kernel refuses it.
    Uring,
}

/// The environment variable that picks the driver of runtimes whose
/// builder did not: `auto`, `epoll` or `uring`.
pub const IO_DRIVER_ENV: &str = "WEFT_IO_DRIVER";

/// Hidden test hook: an errno that the probe's ring setup fails with
/// instead of calling the kernel, to exercise the refused-setup path on a
/// machine that allows io_uring.
const FAIL_SETUP_ENV: &str = "WEFT_IO_URING_FAIL_SETUP";

impl fmt::Display for IoDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoDriver::Auto => "auto",
            IoDriver::Epoll => "epoll",
            IoDriver::Uring => "io_uring",
        })
    }
}

/// The driver to build: `requested` (the builder's setting, if any), else
/// the environment's, else `Auto`; `Auto` becomes `Uring` only if the
/// probe passes. An explicit `Uring` that the probe refuses is an error
/// naming the cause.
pub(crate) fn choose(requested: Option<IoDriver>) -> io::Result<IoDriver> {
    let wanted = match requested {
        Some(d) => d,
        None => from_env()?,
    };
    match wanted {
        IoDriver::Epoll => Ok(IoDriver::Epoll),
        IoDriver::Auto => Ok(if probe().is_ok() {
            IoDriver::Uring
        } else {
            IoDriver::Epoll
        }),
        IoDriver::Uring => probe().map(|()| IoDriver::Uring).map_err(|why| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "the io_uring driver was requested (Builder::io_driver(IoDriver::Uring) or \
                     {IO_DRIVER_ENV}=uring) but cannot run here: {why}. Use IoDriver::Auto to \
                     fall back to epoll"
                ),
            )
        }),
    }
}

fn from_env() -> io::Result<IoDriver> {
    match std::env::var(IO_DRIVER_ENV) {
        Err(_) => Ok(IoDriver::Auto),
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(IoDriver::Auto),
            "epoll" => Ok(IoDriver::Epoll),
            "uring" | "io_uring" | "io-uring" => Ok(IoDriver::Uring),
            other => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{IO_DRIVER_ENV}={other:?} is not a driver: use auto, epoll or uring"),
            )),
        },
    }
}

/// Whether this kernel lets weft run its rings: setup allowed (containers'
/// seccomp profiles and `kernel.io_uring_disabled` refuse it), the features
/// the rings rely on, and every opcode they submit. Checked on a throwaway
/// ring once per build (a few microseconds).
fn probe() -> Result<(), String> {
    if let Some(errno) = std::env::var(FAIL_SETUP_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    {
        return Err(format!(
            "io_uring_setup failed: {}",
            io::Error::from_raw_os_error(errno)
        ));
    }
    let ring = io_uring::IoUring::new(2).map_err(|e| format!("io_uring_setup failed: {e}"))?;
    let params = ring.params();
    if !params.is_feature_nodrop()
        || !params.is_feature_ext_arg()
        || !params.is_feature_rw_cur_pos()
    {
        return Err(
            "the kernel's io_uring lacks IORING_FEAT_NODROP, IORING_FEAT_EXT_ARG or \
             IORING_FEAT_RW_CUR_POS (Linux 5.11 or later has all three)"
                .into(),
        );
    }
    let mut probe = io_uring::Probe::new();
    ring.submitter()
        .register_probe(&mut probe)
        .map_err(|e| format!("IORING_REGISTER_PROBE failed: {e}"))?;
    for (code, name) in [
        (io_uring::opcode::Recv::CODE, "RECV"),
        (io_uring::opcode::AsyncCancel::CODE, "ASYNC_CANCEL"),
        (io_uring::opcode::Send::CODE, "SEND"),
        (io_uring::opcode::PollAdd::CODE, "POLL_ADD"),
        (io_uring::opcode::Read::CODE, "READ"),
        (io_uring::opcode::Fsync::CODE, "FSYNC"),
        (io_uring::opcode::Write::CODE, "WRITE"),
        (io_uring::opcode::OpenAt::CODE, "OPENAT"),
        (io_uring::opcode::Connect::CODE, "CONNECT"),
    ] {
        if !probe.is_supported(code) {
            return Err(format!("the kernel's io_uring lacks IORING_OP_{name}"));
        }
    }
    Ok(())
}

/// A runtime's rings: one per worker, then the shared one.
pub(crate) struct Rings {
    rings: Box<[Ring]>,
    /// The ring whose descriptor is not in epoll (module doc).
    unwatched: Option<usize>,
    /// Per worker ring in epoll with a one-shot registration, whether its
    /// owner is away (watch.rs); empty with one worker.
    watches: Box<[watch::RingWatch]>,
    /// The epoll instance the driver registered the rings in: the
    /// registry's descriptor, which `io::Handle` closes only after the
    /// last thread that could arm a ring is gone (no arm runs in the
    /// rings' teardown).
    epoll: Option<std::os::fd::RawFd>,
    /// Worker rings stay in epoll for good, as the shared ring
    /// ([`Rings::watch_always`]): `watches` are then ignored.
    always_watched: std::sync::atomic::AtomicBool,
    /// The kernel has `unlinkat`, `mkdirat` and `renameat` ops (5.15);
    /// without them those calls stay on the blocking pool.
    path_calls: bool,
}

/// How long a runtime's teardown lets its rings' orphaned sends run, all
/// rings together, before it cancels them (a peer that reads nothing).
const TEARDOWN_SEND_GRACE: Duration = Duration::from_secs(1);

impl Drop for Rings {
    /// Let the rings' orphaned sends finish (`Ring::finish_sends`), up to
    /// one deadline for all of them; each ring's own drop then gives up on
    /// the rest. Not from inside a runtime (a worker, a task dropping the
    /// last handle of another runtime's stream): that thread must not wait
    /// on a peer.
    fn drop(&mut self) {
        if matches!(
            crate::runtime::context::entered(),
            crate::runtime::context::Entered::Yes { .. }
        ) {
            return;
        }
        let deadline = Instant::now() + TEARDOWN_SEND_GRACE;
        for ring in self.rings.iter_mut() {
            ring.finish_sends(deadline);
        }
    }
}

/// Tokens `RING_TOKEN_BASE - i` name ring `i` in the poller (below the
/// driver's own waker, `usize::MAX`).
pub(crate) const RING_TOKEN_BASE: usize = usize::MAX - 1;

impl Rings {
    /// `workers` owned rings plus the shared one.
    pub(crate) fn new(workers: usize) -> io::Result<Rings> {
        let rings = (0..=workers)
            .map(|_| Ring::new())
            .collect::<io::Result<Vec<_>>>()?;
        let path_calls = rings[0].supports(&[
            io_uring::opcode::UnlinkAt::CODE,
            io_uring::opcode::MkDirAt::CODE,
            io_uring::opcode::RenameAt::CODE,
        ]);
        let one_shot = if workers == 1 { 0 } else { workers };
        Ok(Rings {
            rings: rings.into_boxed_slice(),
            unwatched: (workers == 1).then_some(0),
            watches: (0..one_shot).map(|_| Default::default()).collect(),
            epoll: None,
            always_watched: std::sync::atomic::AtomicBool::new(false),
            path_calls,
        })
    }

    /// Put the rings' descriptors in the driver's epoll instance `epoll`:
    /// the shared ring's for good (`register_shared` does it with its
    /// token), each worker ring's one-shot (watch.rs), but the unwatched
    /// one's (module doc).
    pub(crate) fn register(
        &mut self,
        epoll: std::os::fd::RawFd,
        register_shared: impl FnOnce(std::os::fd::RawFd, usize) -> io::Result<()>,
    ) -> io::Result<()> {
        self.epoll = Some(epoll);
        for index in 0..self.watches.len() {
            watch::register(epoll, self.rings[index].fd(), RING_TOKEN_BASE - index)?;
        }
        let shared = self.rings.len() - 1;
        register_shared(self.rings[shared].fd(), RING_TOKEN_BASE - shared)
    }

    /// Keep every worker ring's descriptor in epoll for good, as before
    /// one-shot registrations (watch.rs): for a runtime without the
    /// long-poll monitor, where nothing would mark a worker stuck in a
    /// poll as away. Called while the runtime is built, before any worker
    /// runs.
    pub(crate) fn watch_always(&self) {
        let Some(epoll) = self.epoll else { return };
        for index in 0..self.watches.len() {
            watch::watch_always(epoll, self.rings[index].fd(), RING_TOKEN_BASE - index);
        }
        self.always_watched
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Worker ring `index`'s watch, unless it has none (the shared ring,
    /// a one-worker runtime's, or all of them under `watch_always`).
    fn watch(&self, index: usize) -> Option<&watch::RingWatch> {
        if self
            .always_watched
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return None;
        }
        self.watches.get(index)
    }

    /// Arm worker ring `index`'s one-shot registration (watch.rs).
    fn arm(&self, index: usize) {
        if let Some(epoll) = self.epoll {
            watch::arm(epoll, self.rings[index].fd(), RING_TOKEN_BASE - index);
        }
    }

    /// Worker `index` goes to sleep away from its ring (on its parker's
    /// condvar): another thread must take its completions (watch.rs).
    /// Called by the owner, which may trust its ring's empty flag.
    pub(crate) fn owner_leaves(&self, index: usize) {
        let Some(watch) = self.watch(index) else {
            return;
        };
        watch.leave();
        if !self.rings[index].is_empty() {
            self.arm(index);
        }
    }

    /// Worker `index` reaps its ring itself again (watch.rs).
    #[inline]
    pub(crate) fn owner_back(&self, index: usize) {
        if let Some(watch) = self.watch(index) {
            watch.back();
        }
    }

    /// The long-poll monitor saw worker `index` stuck in one poll: submit
    /// and reap its ring on its behalf, as its batch point would, and
    /// leave its ring's later completions to another thread until it is
    /// back (watch.rs). Not the owner: the ring's state is read under its
    /// lock.
    pub(crate) fn flush_for_stuck_owner(&self, index: usize, wakers: &mut Vec<Waker>) {
        let Some(ring) = self.rings.get(index) else {
            return;
        };
        let watch = self.watch(index);
        if let Some(watch) = watch {
            watch.leave();
        }
        if ring.flush_and_holds(wakers) && watch.is_some() {
            self.arm(index);
        }
    }

    /// The driver saw ring `index`'s descriptor ready: reap it, and arm a
    /// worker ring's one-shot registration again while its owner is away
    /// and it holds something (watch.rs).
    pub(crate) fn reap_fired(&self, index: usize, wakers: &mut Vec<Waker>) {
        match self.watch(index) {
            Some(watch) => {
                if self.rings[index].reap_and_holds(wakers) && watch.is_away() {
                    self.arm(index);
                }
            }
            None => self.rings[index].reap(wakers),
        }
    }

    /// The worker ring left out of epoll, if any (module doc, "Only the
    /// owner blocks on an unwatched ring").
    pub(crate) fn unwatched(&self) -> Option<usize> {
        self.unwatched
    }

    /// Whether `unlinkat`, `mkdirat` and `renameat` run on the rings.
    pub(crate) fn path_calls(&self) -> bool {
        self.path_calls
    }

    pub(crate) fn get(&self, index: usize) -> &Ring {
        &self.rings[index]
    }

    /// The ring for `worker` (`None`: not a worker of this runtime), and
    /// whether the caller owns it (its entries may wait for a flush).
    pub(crate) fn for_worker(&self, worker: Option<usize>) -> (usize, bool) {
        match worker {
            Some(i) if i + 1 < self.rings.len() => (i, true),
            _ => (self.rings.len() - 1, false),
        }
    }

    /// The ring `token` names, if it names one.
    pub(crate) fn ring_of_token(&self, token: usize) -> Option<usize> {
        let index = RING_TOKEN_BASE.checked_sub(token)?;
        (index < self.rings.len()).then_some(index)
    }

    /// Worker `index`'s batch point (see the module doc).
    pub(crate) fn flush(&self, index: usize, wakers: &mut Vec<Waker>) {
        if let Some(ring) = self.rings.get(index) {
            ring.flush(wakers);
        }
    }

    /// Worker `index`'s pushes, submitted now (`Ring::submit_pending`).
    #[inline]
    pub(crate) fn submit_pending(&self, index: usize) {
        if let Some(ring) = self.rings.get(index) {
            ring.submit_pending();
        }
    }

    pub(crate) fn shutdown(&self) {
        for ring in self.rings.iter() {
            ring.wake_waiters();
        }
    }
}
