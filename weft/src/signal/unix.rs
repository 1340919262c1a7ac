//! `signal::unix`: listen for any Unix signal, as `tokio::signal::unix`
//! does (part of issue #14).
//!
//! Owns: [`Signal`] (one listener: its socket pair, the registered action
//! and the registration of the receiving end) and [`SignalKind`]. A
//! listener sees every delivery from its creation on; deliveries that
//! arrive before a `recv` are kept (coalesced: several deliveries between
//! two `recv`s may be seen as one, as in Tokio). Several listeners of one
//! signal each see it.
//!
//! A delivery that finds no listener is kept for the next listener of that
//! signal (its first `recv` sees it), as Tokio's driver keeps a delivery
//! until it has handed it on: so a program that drops its listener and
//! makes a new one does not lose a signal that came in between. That takes
//! an action per signal that stays installed for the life of the process
//! (as Tokio's handler does): once a program has listened for, say,
//! `SIGTERM`, the signal no longer terminates it.

use crate::io::poll_evented::PollEvented;
use crate::io::Interest;
use crate::runtime::io::scheduled_io::Direction;
use std::fmt;
use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

/// Which signal to listen for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SignalKind(libc::c_int);

impl SignalKind {
    /// Any signal by number (`libc::SIGUSR1`, ...). Listening for `SIGKILL`,
    /// `SIGSTOP` or a fault signal (`SIGSEGV`, `SIGILL`, `SIGFPE`) fails.
    pub const fn from_raw(signum: std::os::raw::c_int) -> SignalKind {
        SignalKind(signum)
    }

    /// The signal's number.
    pub const fn as_raw_value(&self) -> std::os::raw::c_int {
        self.0
    }

    /// `SIGALRM`.
    pub const fn alarm() -> SignalKind {
        SignalKind(libc::SIGALRM)
    }

    /// `SIGCHLD`.
    pub const fn child() -> SignalKind {
        SignalKind(libc::SIGCHLD)
    }

    /// `SIGHUP`.
    pub const fn hangup() -> SignalKind {
        SignalKind(libc::SIGHUP)
    }

    /// `SIGINT`.
    pub const fn interrupt() -> SignalKind {
        SignalKind(libc::SIGINT)
    }

    /// `SIGIO`.
    pub const fn io() -> SignalKind {
        SignalKind(libc::SIGIO)
    }

    /// `SIGPIPE`.
    pub const fn pipe() -> SignalKind {
        SignalKind(libc::SIGPIPE)
    }

    /// `SIGQUIT`.
    pub const fn quit() -> SignalKind {
        SignalKind(libc::SIGQUIT)
    }

    /// `SIGTERM`.
    pub const fn terminate() -> SignalKind {
        SignalKind(libc::SIGTERM)
    }

    /// `SIGUSR1`.
    pub const fn user_defined1() -> SignalKind {
        SignalKind(libc::SIGUSR1)
    }

    /// `SIGUSR2`.
    pub const fn user_defined2() -> SignalKind {
        SignalKind(libc::SIGUSR2)
    }

    /// `SIGWINCH`.
    pub const fn window_change() -> SignalKind {
        SignalKind(libc::SIGWINCH)
    }
}

impl From<std::os::raw::c_int> for SignalKind {
    fn from(signum: std::os::raw::c_int) -> SignalKind {
        SignalKind::from_raw(signum)
    }
}

impl From<SignalKind> for std::os::raw::c_int {
    fn from(kind: SignalKind) -> std::os::raw::c_int {
        kind.as_raw_value()
    }
}

/// A listener for one kind of signal; see [`signal`].
pub struct Signal {
    receiver: PollEvented<mio::net::UnixStream>,
    id: signal_hook_registry::SigId,
    kind: SignalKind,
}

/// Listen for `kind`: from now on, each delivery of the signal makes
/// [`Signal::recv`] complete.
///
/// # Errors
/// Of kind `Other`, as Tokio's: for a signal that cannot be caught
/// (`SIGKILL`, `SIGSTOP`, fault signals), or a number that is no signal.
///
/// # Panics
/// Outside a runtime with the I/O driver.
///
/// ```
/// use weft::signal::unix::{signal, SignalKind};
///
/// # weft::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let mut usr1 = signal(SignalKind::user_defined1())?;
/// // SAFETY (for the example): raising a signal someone listens for.
/// unsafe { libc::raise(libc::SIGUSR1) };
/// assert_eq!(usr1.recv().await, Some(()));
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
#[track_caller]
pub fn signal(kind: SignalKind) -> io::Result<Signal> {
    // A runtime with the I/O driver first, as Tokio checks: outside one
    // this panics (at the caller's line) whatever the kind.
    let _driver = crate::runtime::io::registration::current_driver();
    // These cannot be caught, or catching them could not be made safe.
    const FORBIDDEN: [libc::c_int; 5] = [
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGSEGV,
    ];
    // `Other`, as Tokio's refusals: a program may match on the kind.
    if kind.0 <= 0 || FORBIDDEN.contains(&kind.0) {
        return Err(io::Error::other(format!(
            "signal {} cannot be listened for (SIGKILL, SIGSTOP and the fault signals cannot \
             be caught, and signal numbers start at 1)",
            kind.0
        )));
    }
    if kind.0 > libc::SIGRTMAX() {
        return Err(io::Error::other(format!(
            "signal {} is too large: the largest is SIGRTMAX ({})",
            kind.0,
            libc::SIGRTMAX()
        )));
    }
    let (receiver, sender) = UnixStream::pair()?;
    receiver.set_nonblocking(true)?;
    sender.set_nonblocking(true)?;
    let receiver = PollEvented::new_with_interest(
        mio::net::UnixStream::from_std(receiver),
        Interest::READABLE,
    )?;
    let sender = std::sync::Arc::new(sender);
    let wake = sender.clone();
    let action = move || {
        // A full buffer means a wake-up is already pending.
        let _ = (&*sender).write(&[1]);
    };
    keep_unheard_deliveries(kind.0)?;
    // SAFETY: the action only calls `write(2)` on a socket it owns, which
    // is async-signal-safe; it allocates nothing and takes no lock.
    let id = unsafe { signal_hook_registry::register(kind.0, action) }?;
    let slot = kind.0 as usize;
    SLOTS_STATE.listeners[slot].fetch_add(1, Ordering::AcqRel);
    // A delivery that came while no one listened is this listener's first.
    if SLOTS_STATE.pending[slot].swap(false, Ordering::AcqRel) {
        let _ = (&*wake).write(&[1]);
    }
    Ok(Signal { receiver, id, kind })
}

/// Per signal number: whether the process-wide action is installed, how
/// many listeners exist, and whether a delivery came with none. Only
/// atomics: the action runs in a signal handler.
struct Slots {
    hooked: [AtomicBool; SLOTS],
    listeners: [AtomicUsize; SLOTS],
    pending: [AtomicBool; SLOTS],
}

/// Signal numbers go up to `SIGRTMAX` (64 on Linux).
const SLOTS: usize = 128;

static SLOTS_STATE: Slots = Slots {
    hooked: [const { AtomicBool::new(false) }; SLOTS],
    listeners: [const { AtomicUsize::new(0) }; SLOTS],
    pending: [const { AtomicBool::new(false) }; SLOTS],
};

/// Install (once per signal) the action that keeps a delivery no listener
/// saw, for the next listener.
fn keep_unheard_deliveries(signum: libc::c_int) -> io::Result<()> {
    let i = signum as usize;
    if SLOTS_STATE.hooked[i].swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    let action = move || {
        if SLOTS_STATE.listeners[i].load(Ordering::Acquire) == 0 {
            SLOTS_STATE.pending[i].store(true, Ordering::Release);
        }
    };
    // SAFETY: the action only loads and stores atomics, which is
    // async-signal-safe; it allocates nothing and takes no lock.
    match unsafe { signal_hook_registry::register(signum, action) } {
        Ok(_) => Ok(()),
        Err(e) => {
            SLOTS_STATE.hooked[i].store(false, Ordering::Release);
            Err(e)
        }
    }
}

impl Signal {
    /// Wait for the next delivery: `Some(())`, or `None` once the runtime
    /// the listener was made on is gone (no delivery can reach it then),
    /// as Tokio's. Cancel-safe.
    pub async fn recv(&mut self) -> Option<()> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Poll-style [`Signal::recv`].
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<()>> {
        let receiver = &self.receiver;
        let mut drain = [0u8; 64];
        match receiver
            .registration()
            .poll_io(cx, Direction::Read, || (&**receiver).read(&mut drain))
        {
            Poll::Ready(Err(e)) if crate::runtime::is_rt_shutdown_err(&e) => Poll::Ready(None),
            Poll::Ready(_) => Poll::Ready(Some(())),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        signal_hook_registry::unregister(self.id);
        SLOTS_STATE.listeners[self.kind.0 as usize].fetch_sub(1, Ordering::AcqRel);
    }
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signal").finish_non_exhaustive()
    }
}
