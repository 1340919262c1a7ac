//! Signals: [`ctrl_c`] and [`unix::signal`].
//!
//! Owns: turning a Unix signal into readiness on the I/O driver. Each
//! waiting `ctrl_c` future, and each [`unix::Signal`], owns a socket pair
//! and a registered signal action that writes one byte to the pair's
//! sending end; the receiving end is registered with the reactor like any
//! socket. Writing to a socket is async-signal-safe, which is all the
//! handler does. The action is unregistered when the future completes or
//! the listener is dropped.

pub mod unix;

use crate::io::poll_evented::PollEvented;
use crate::io::Interest;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;

/// Wait for the next `SIGINT` (Ctrl-C) delivered to the process.
///
/// While any `ctrl_c` future is waiting, `SIGINT` no longer kills the
/// process; the default behaviour returns once none waits. Cancel-safe.
///
/// # Panics
/// Outside a runtime with the I/O driver.
///
/// ```no_run
/// #[weft::main]
/// async fn main() {
///     weft::signal::ctrl_c().await.expect("could not listen for SIGINT");
///     println!("shutting down");
/// }
/// ```
pub async fn ctrl_c() -> io::Result<()> {
    let (receiver, sender) = UnixStream::pair()?;
    receiver.set_nonblocking(true)?;
    sender.set_nonblocking(true)?;
    let receiver = PollEvented::new_with_interest(
        mio::net::UnixStream::from_std(receiver),
        Interest::READABLE,
    )?;
    let action = move || {
        // A full buffer means a wake-up is already pending.
        let _ = (&sender).write(&[1]);
    };
    // SAFETY: the action only calls `write(2)` on a socket it owns, which
    // is async-signal-safe; it allocates nothing and takes no lock.
    let id = unsafe { signal_hook_registry::register(libc::SIGINT, action) }?;
    struct Unregister(signal_hook_registry::SigId);
    impl Drop for Unregister {
        fn drop(&mut self) {
            signal_hook_registry::unregister(self.0);
        }
    }
    let _unregister = Unregister(id);
    let mut byte = [0u8; 1];
    receiver
        .registration()
        .async_io(Interest::READABLE, || (&*receiver).read(&mut byte))
        .await?;
    Ok(())
}

#[cfg(all(test, not(loom)))]
mod tests {
    #[test]
    fn ctrl_c_completes_on_sigint() {
        let rt = crate::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let waiter = crate::spawn(super::ctrl_c());
            // Let the waiter register its action before the signal.
            for _ in 0..10 {
                crate::task::yield_now().await;
            }
            // SAFETY: raising a signal for which an action is registered
            // (by the waiter above) is well-defined.
            assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
            crate::time::timeout(std::time::Duration::from_secs(10), waiter)
                .await
                .expect("ctrl_c did not see the SIGINT")
                .unwrap()
                .unwrap();
        });
    }
}
