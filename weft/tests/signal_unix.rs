//! `weft::signal::unix` (a slice of issue #14): a listener sees a signal
//! raised after it was created, even before it calls `recv`; several
//! listeners of one signal each see it; uncatchable signals are refused;
//! a listener whose runtime is gone ends.
//! One test function, since signals are process-wide.

use std::time::Duration;
use weft::signal::unix::{signal, SignalKind};

#[test]
fn signals_reach_every_listener() {
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut first = signal(SignalKind::user_defined2()).unwrap();
        let mut second = signal(SignalKind::user_defined2()).unwrap();
        // Delivered before anyone waits: kept for the next recv.
        // SAFETY: raising a signal that has listeners (the actions above).
        assert_eq!(unsafe { libc::raise(libc::SIGUSR2) }, 0);
        let limit = Duration::from_secs(10);
        assert_eq!(
            weft::time::timeout(limit, first.recv()).await.unwrap(),
            Some(())
        );
        assert_eq!(
            weft::time::timeout(limit, second.recv()).await.unwrap(),
            Some(())
        );
        // Nothing more is pending.
        let extra = weft::time::timeout(Duration::from_millis(20), first.recv()).await;
        assert!(extra.is_err(), "a single delivery was seen twice");

        // A waiting listener is woken by a later delivery.
        let waiter = weft::spawn(async move { first.recv().await });
        weft::time::sleep(Duration::from_millis(10)).await;
        // SAFETY: as above.
        assert_eq!(unsafe { libc::raise(libc::SIGUSR2) }, 0);
        assert_eq!(
            weft::time::timeout(limit, waiter).await.unwrap().unwrap(),
            Some(())
        );

        assert!(signal(SignalKind::from_raw(libc::SIGKILL)).is_err());
        assert_eq!(SignalKind::terminate().as_raw_value(), libc::SIGTERM);
    });
}

/// SIGUSR1 raised by the process itself reaches several listeners on every
/// flavour (issue 14's bar). The flavours run one after another: signals
/// are process-wide.
#[test]
fn sigusr1_raised_by_the_process_reaches_several_listeners_on_every_flavour() {
    let flavours: [fn() -> weft::runtime::Runtime; 3] = [
        || {
            weft::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
        },
        || {
            weft::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap()
        },
        || {
            weft::runtime::Builder::new_multi_thread()
                .worker_threads(4)
                .enable_all()
                .build()
                .unwrap()
        },
    ];
    for build in flavours {
        build().block_on(async {
            let mut listeners: Vec<_> = (0..3)
                .map(|_| signal(SignalKind::user_defined1()).unwrap())
                .collect();
            let waits: Vec<_> = listeners
                .drain(..)
                .map(|mut l| weft::spawn(async move { l.recv().await }))
                .collect();
            weft::time::sleep(Duration::from_millis(20)).await;
            // SAFETY: raising a signal that has listeners (installed above).
            assert_eq!(unsafe { libc::raise(libc::SIGUSR1) }, 0);
            for wait in waits {
                let got = weft::time::timeout(Duration::from_secs(10), wait)
                    .await
                    .expect("a listener never saw SIGUSR1")
                    .unwrap();
                assert_eq!(got, Some(()));
            }
        });
    }
}

/// A listener whose runtime is gone can receive nothing more: `recv`
/// ends with `None` (what Tokio documents; Tokio's own stays pending),
/// not with a delivery that never happened. SIGWINCH: ignored by default,
/// and no other test here uses it.
#[test]
fn a_listener_whose_runtime_is_gone_ends_with_none() {
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut winch = rt.block_on(async { signal(SignalKind::window_change()).unwrap() });
    drop(rt);
    let other = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let got =
        other.block_on(async { weft::time::timeout(Duration::from_secs(10), winch.recv()).await });
    assert_eq!(got, Ok(None));
}

/// A delivery that comes while no listener exists (the last one was just
/// dropped) goes to the next listener of that signal, as on Tokio, where
/// the runtime keeps it until it hands it on: dropping a listener and
/// making a new one loses no signal.
#[test]
fn a_delivery_between_two_listeners_reaches_the_second() {
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // A real-time signal no other test here uses (they run at once).
        let kind = SignalKind::from_raw(libc::SIGRTMIN() + 3);
        let first = signal(kind).unwrap();
        drop(first);
        // SAFETY: raising a signal whose action weft installed above.
        assert_eq!(unsafe { libc::raise(kind.as_raw_value()) }, 0);
        let mut second = signal(kind).unwrap();
        let got = weft::time::timeout(std::time::Duration::from_secs(10), second.recv()).await;
        assert_eq!(
            got,
            Ok(Some(())),
            "the delivery between the listeners was lost"
        );
    });
}
