//! Unix signals: which ones may be listened for, what a listener sees of
//! signals sent to the process (delivery, coalescing, several listeners),
//! and listeners outside or after their runtime.
//!
//! Both crates install process-wide handlers, so each side uses a signal
//! of its own (Tokio's expansion `SIGUSR1` and `SIGWINCH`, weft's
//! `SIGUSR2` and `SIGURG`) and neither can take the other's deliveries;
//! the two scenarios that may run at once use different ones; no other
//! test of this binary sends signals.

use crate::harness::Side;
use std::time::Duration;

scenarios! {
    common {
        /// This side's signal (see the module doc).
        fn mine(rec: &crate::harness::Rec) -> std::os::raw::c_int {
            match rec.side {
                Side::Tokio => libc::SIGUSR1,
                Side::Weft => libc::SIGUSR2,
            }
        }

        /// A second signal of this side's, for the scenario that runs
        /// beside the one using [`mine`] (ignored by default, so harmless
        /// whoever gets it).
        fn mine_too(rec: &crate::harness::Rec) -> std::os::raw::c_int {
            match rec.side {
                Side::Tokio => libc::SIGWINCH,
                Side::Weft => libc::SIGURG,
            }
        }

        /// Send `signum` to this process.
        fn raise(signum: std::os::raw::c_int) {
            // SAFETY: `kill` with this process's id and a valid signal.
            assert_eq!(unsafe { libc::kill(libc::getpid(), signum) }, 0);
        }

        /// Whether a signal arrives within `wait`.
        async fn arrives(s: &mut k::signal::unix::Signal, wait: Duration) -> Option<bool> {
            k::time::timeout(wait, s.recv()).await.ok().map(|got| got.is_some())
        }
    }

    fn which_signals_may_be_listened_for(rec) {
        use k::signal::unix::{signal, SignalKind};
        let rt = current();
        rt.block_on(async {
            for (name, signum) in [
                ("SIGKILL", libc::SIGKILL),
                ("SIGSTOP", libc::SIGSTOP),
                ("SIGSEGV", libc::SIGSEGV),
                ("SIGILL", libc::SIGILL),
                ("SIGFPE", libc::SIGFPE),
                ("SIGCHLD", libc::SIGCHLD),
                ("0", 0),
                ("-1", -1),
                ("1000", 1000),
            ] {
                let r = signal(SignalKind::from_raw(signum)).map(drop).map_err(|e| e.kind());
                rec.log(format!("{name}: {r:?}"));
            }
            rec.log(format!(
                "kinds: {} {} {}",
                SignalKind::user_defined1().as_raw_value() == libc::SIGUSR1,
                SignalKind::terminate().as_raw_value() == libc::SIGTERM,
                SignalKind::from(libc::SIGHUP) == SignalKind::hangup(),
            ));
        });
    }

    fn delivery_and_coalescing(rec) {
        use k::signal::unix::{signal, SignalKind};
        let signum = mine(rec);
        let rt = current();
        rt.block_on(async {
            let mut a = signal(SignalKind::from_raw(signum)).unwrap();
            let mut b = signal(SignalKind::from_raw(signum)).unwrap();
            rec.log(format!("nothing sent: {:?}", arrives(&mut a, Duration::from_millis(20)).await));
            raise(signum);
            rec.log(format!("one sent: a {:?}", arrives(&mut a, Duration::from_secs(10)).await));
            rec.log(format!("one sent: b {:?}", arrives(&mut b, Duration::from_secs(10)).await));
            rec.log(format!("then nothing: {:?}", arrives(&mut a, Duration::from_millis(20)).await));
            // Three before anyone looks: one notification.
            for _ in 0..3 {
                raise(signum);
            }
            k::time::sleep(Duration::from_millis(50)).await;
            rec.log(format!("three sent: {:?}", arrives(&mut a, Duration::from_secs(10)).await));
            rec.log(format!("then: {:?}", arrives(&mut a, Duration::from_millis(20)).await));
            // A listener made after the signal does not see it.
            drop(b);
            raise(signum);
            k::time::sleep(Duration::from_millis(50)).await;
            let mut late = signal(SignalKind::from_raw(signum)).unwrap();
            rec.log(format!("late listener: {:?}", arrives(&mut late, Duration::from_millis(20)).await));
            rec.log(format!("early listener: {:?}", arrives(&mut a, Duration::from_secs(10)).await));
        });
    }

    fn listeners_and_their_runtime(rec) {
        use k::signal::unix::{signal, SignalKind};
        let signum = mine_too(rec);
        rec.misuse("signal outside a runtime", || {
            signal(SignalKind::from_raw(signum)).map(drop).map_err(|e| e.kind())
        });
        let rt = current();
        let mut s = rt.block_on(async { signal(SignalKind::from_raw(signum)).unwrap() });
        drop(rt);
        let other = current();
        // No delivery can come: Tokio's `recv` stays pending, weft's
        // returns `None` (what Tokio documents for a stream that can
        // receive no more; README, differences). Both are "no delivery".
        rec.catch("recv after the runtime's drop", || {
            other.block_on(async {
                match k::time::timeout(Duration::from_millis(100), s.recv()).await {
                    Ok(Some(())) => "a delivery",
                    Ok(None) | Err(_) => "no delivery",
                }
            })
        });
        let bare = k::runtime::Builder::new_current_thread().build().unwrap();
        rec.misuse("signal without enable_io", || {
            bare.block_on(async { signal(SignalKind::from_raw(signum)).map(drop).map_err(|e| e.kind()) })
        });
    }
}
