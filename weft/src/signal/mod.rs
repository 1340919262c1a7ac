//! Signals: [`ctrl_c`] and [`unix::signal`].
//!
//! Owns: turning a Unix signal into readiness on the I/O driver. Each
//! listener ([`unix::Signal`], and the one inside a waiting `ctrl_c`
//! future) owns a socket pair and a registered signal action that writes
//! one byte to the pair's sending end; the receiving end is registered
//! with the reactor like any socket. Writing to a socket is
//! async-signal-safe, which is all the handler does. The action is
//! unregistered when the listener is dropped.

pub mod unix;

use std::io;

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
    unix::signal(unix::SignalKind::interrupt())?.recv().await;
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
