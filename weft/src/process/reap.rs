//! Learning that a child exited, without a thread per child, and reaping
//! the children nobody waits for.
//!
//! Owns: [`ExitWatch`] (a spawned child plus what tells the driver it
//! exited) and the orphan list.
//!
//! - On Linux ≥ 5.3 a child's exit is a **pidfd** (`pidfd_open(2)`)
//!   turning readable, registered with the I/O driver like a socket.
//!   Elsewhere, or where pidfds are refused (old kernels, seccomp), it is a
//!   `SIGCHLD` listener on the signal driver (`signal::unix`), made per
//!   child: each delivery makes every waiting child re-check with
//!   `waitpid(WNOHANG)`.
//! - Invariant: the watch exists before the first `try_wait`, so an exit
//!   that happens in between is seen by that `try_wait`, and one after it
//!   makes the watch ready; no exit is missed.
//! - A child whose `Child` is dropped before it was reaped becomes an
//!   orphan. When a runtime is reachable, a task on it waits on the child's
//!   watch and reaps it; if that runtime shuts down first (the task is
//!   dropped), or there is none, the child goes on the orphan list, which
//!   every later spawn and every wake of a watch sweeps with
//!   `waitpid(WNOHANG)`, as Tokio's orphan queue does. So no zombie
//!   outlives the next process activity, and none ever holds a thread.

use crate::io::poll_evented::PollEvented;
use crate::io::Interest;
use crate::signal::unix::{signal, Signal, SignalKind};
use std::future::poll_fn;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::task::{ready, Context, Poll};

/// Children dropped before they were reaped, with no task waiting on them.
static ORPHANS: Mutex<Vec<std::process::Child>> = Mutex::new(Vec::new());

/// Cleared the first time `pidfd_open` is refused, so later spawns go
/// straight to `SIGCHLD` (and tests can force that path, see
/// [`WEFT_PROCESS_SIGCHLD`]).
static PIDFD_USABLE: AtomicBool = AtomicBool::new(true);

/// When this environment variable is set (to anything) at a process's
/// first spawn, children are watched through `SIGCHLD` even where pidfds
/// work: the fallback path, for tests.
const WEFT_PROCESS_SIGCHLD: &str = "WEFT_PROCESS_SIGCHLD";

/// How a child's exit reaches the driver.
enum Watch {
    PidFd(PollEvented<PidFd>),
    Sigchld(Signal),
}

impl Watch {
    /// A watch for child `pid` on the current runtime's I/O driver.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    fn on_current_runtime(pid: u32) -> io::Result<Watch> {
        Ok(match open_pidfd(pid) {
            Some(fd) => Watch::PidFd(PollEvented::new_with_interest(
                PidFd(fd),
                Interest::READABLE,
            )?),
            None => Watch::Sigchld(signal(SignalKind::child())?),
        })
    }
}

/// A spawned child and its exit watch.
pub(crate) struct ExitWatch {
    child: std::process::Child,
    watch: Watch,
}

impl ExitWatch {
    /// Watch `child` (just spawned).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub(crate) fn new(child: std::process::Child) -> io::Result<ExitWatch> {
        let watch = Watch::on_current_runtime(child.id())?;
        Ok(ExitWatch { child, watch })
    }

    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn std_child(&mut self) -> &mut std::process::Child {
        &mut self.child
    }

    /// `waitpid(WNOHANG)`: the status if the child has exited.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Wait for the exit. Cancel-safe. A child spawned on a runtime that
    /// has since shut down is watched again on the runtime that waits (as
    /// Tokio re-registers its pidfd there).
    pub(crate) fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        // Watched again at most once per poll: a waiting runtime that has
        // shut down too gets the error, not a loop.
        let mut rewatched = false;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Poll::Ready(Ok(status));
            }
            match &mut self.watch {
                Watch::PidFd(fd) => {
                    let ev = match ready!(fd.registration().poll_read_ready(cx)) {
                        Ok(ev) => ev,
                        Err(e) if crate::runtime::is_rt_shutdown_err(&e) && !rewatched => {
                            self.watch = Watch::on_current_runtime(self.child.id())?;
                            rewatched = true;
                            continue;
                        }
                        Err(e) => return Poll::Ready(Err(e)),
                    };
                    // Readable means exited, so the loop's `try_wait`
                    // returns; should it not, the readiness was stale.
                    if let Some(status) = self.child.try_wait()? {
                        return Poll::Ready(Ok(status));
                    }
                    fd.registration().clear_readiness(ev);
                }
                Watch::Sigchld(sigchld) => {
                    if ready!(sigchld.poll_recv(cx)).is_none() {
                        // The listener's runtime is gone: it will hear no
                        // more signals.
                        if rewatched {
                            return Poll::Ready(Err(crate::runtime::io::shutdown_error()));
                        }
                        self.watch = Watch::on_current_runtime(self.child.id())?;
                        rewatched = true;
                        continue;
                    }
                    sweep_orphans();
                }
            }
        }
    }

    /// Give up the child without reaping it: a task on `handle`'s runtime
    /// (if any) waits for it; otherwise, or if that task is dropped first,
    /// it joins the orphan list.
    pub(crate) fn orphan(mut self, handle: Option<crate::runtime::Handle>) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let Some(handle) = handle else {
            push_orphan(self.child);
            return;
        };
        let mut waiter = OrphanWaiter(Some(self));
        drop(handle.spawn(async move {
            poll_fn(|cx| {
                if let Some(watch) = waiter.0.as_mut() {
                    // Reaped: nothing left for the drop. Failed: the drop
                    // puts it on the orphan list.
                    if ready!(watch.poll_wait(cx)).is_ok() {
                        waiter.0 = None;
                    }
                }
                Poll::Ready(())
            })
            .await;
        }));
    }
}

/// An orphan being waited on by a task; dropped unreaped (the runtime shut
/// down, or the wait failed), it joins the orphan list.
struct OrphanWaiter(Option<ExitWatch>);

impl Drop for OrphanWaiter {
    fn drop(&mut self) {
        if let Some(watch) = self.0.take() {
            push_orphan(watch.child);
        }
    }
}

fn push_orphan(mut child: std::process::Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    lock_orphans().push(child);
}

fn lock_orphans() -> std::sync::MutexGuard<'static, Vec<std::process::Child>> {
    // A panic cannot leave the list half-changed (push and retain are
    // complete or not run), so a poisoned lock is still consistent.
    ORPHANS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reap every orphan that has exited.
pub(crate) fn sweep_orphans() {
    let mut orphans = lock_orphans();
    // A child that cannot be waited on (ECHILD: someone else reaped it) is
    // dropped too.
    orphans.retain_mut(|child| matches!(child.try_wait(), Ok(None)));
}

/// A pidfd for `pid`, or `None` where pidfds are unavailable or refused.
fn open_pidfd(pid: u32) -> Option<OwnedFd> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        static CHECKED_ENV: std::sync::Once = std::sync::Once::new();
        CHECKED_ENV.call_once(|| {
            if std::env::var_os(WEFT_PROCESS_SIGCHLD).is_some() {
                PIDFD_USABLE.store(false, Ordering::Relaxed);
            }
        });
        if !PIDFD_USABLE.load(Ordering::Relaxed) {
            return None;
        }
        // SAFETY: pidfd_open takes a pid and a flags word and returns a new
        // descriptor or -1; it touches no memory of ours.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        if fd < 0 {
            // ENOSYS (kernel < 5.3), EPERM (seccomp) and the like: use
            // SIGCHLD from now on.
            PIDFD_USABLE.store(false, Ordering::Relaxed);
            return None;
        }
        // SAFETY: `fd` was just returned by pidfd_open, so it is an open
        // descriptor that nothing else owns.
        Some(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (pid, &PIDFD_USABLE, WEFT_PROCESS_SIGCHLD);
        None
    }
}

/// A pidfd as a mio source.
struct PidFd(OwnedFd);

impl mio::event::Source for PidFd {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        mio::unix::SourceFd(&self.0.as_raw_fd()).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        mio::unix::SourceFd(&self.0.as_raw_fd()).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        mio::unix::SourceFd(&self.0.as_raw_fd()).deregister(registry)
    }
}
