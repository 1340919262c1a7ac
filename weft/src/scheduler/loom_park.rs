//! Loom models of [`Parker`] with a shared driver: the handshake described
//! in `park.rs` ("Why a wake cannot be lost on the driver path").
//!
//! What is modelled: the real `Parker`, `Unparker` and `SharedDriver`, with
//! the real [`Driver`] built without I/O or time, so that parking in the
//! driver is `ThreadWait` (a condvar with a sticky flag, on loom's types).
//! With I/O on, the driver is mio's poller and its waker an eventfd, which
//! loom cannot run; both keep the property these models rely on: a wake-up
//! that lands before the block makes the block return at once.
//!
//! The checks: every `park` that is owed a wake returns (loom reports a
//! deadlock otherwise), whichever parker holds the driver and in whatever
//! order the unparks interleave with the parks; and a parker that drops a
//! stale token before it looks for work (current_thread's `park`) still
//! sees the work of an unpark whose token it dropped.

use super::park::{Parker, SharedDriver};
use crate::runtime::driver::{Driver, DriverConfig};
use loom::thread;

fn shared_driver() -> std::sync::Arc<SharedDriver> {
    let (driver, handle) = Driver::new(DriverConfig::default()).expect("a driver without I/O");
    SharedDriver::new(driver, handle)
}

#[test]
fn unpark_reaches_a_parker_in_the_driver() {
    loom::model(|| {
        let parker = Parker::with_driver(Some(shared_driver()));
        let unparker = parker.unparker();
        let t = thread::spawn(move || unparker.unpark());
        // The only parker: it takes the driver and blocks there.
        let _ = parker.park();
        t.join().unwrap();
    });
}

#[test]
fn two_parkers_share_one_driver() {
    loom::model(|| {
        let shared = shared_driver();
        let a = Parker::with_driver(Some(shared.clone()));
        let b = Parker::with_driver(Some(shared));
        let (ua, ub) = (a.unparker(), b.unparker());
        // One of them blocks in the driver, the other on its condvar; each
        // must be reached by its own unpark.
        let tb = thread::spawn(move || b.park());
        let t = thread::spawn(move || {
            ub.unpark();
            ua.unpark();
        });
        let _ = a.park();
        let _ = tb.join().unwrap();
        t.join().unwrap();
    });
}

#[test]
fn a_stray_driver_wake_costs_at_most_a_spurious_return() {
    loom::model(|| {
        let shared = shared_driver();
        let parker = Parker::with_driver(Some(shared.clone()));
        let unparker = parker.unparker();
        let sent = std::sync::Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let sent2 = sent.clone();
        // Something else wakes the driver directly (a timer armed earlier
        // than the parked driver's wake-up, an I/O event): the parker may
        // return without a token, or find the wake-up left over later.
        let stray = thread::spawn(move || shared.handle().unpark());
        let t = thread::spawn(move || {
            sent2.store(true, loom::sync::atomic::Ordering::Release);
            unparker.unpark();
        });
        // Spurious returns are allowed; a lost unpark (a park that never
        // returns although one is owed) or a panic of the state machine is
        // not.
        while !sent.load(loom::sync::atomic::Ordering::Acquire) {
            let _ = parker.park();
        }
        stray.join().unwrap();
        t.join().unwrap();
    });
}

#[test]
fn a_dropped_token_leaves_its_work_visible() {
    loom::model(|| {
        use loom::sync::atomic::{AtomicBool, Ordering};
        let parker = Parker::with_driver(Some(shared_driver()));
        // A token left over from this thread's own wake while it ran.
        parker.unparker().unpark();
        let unparker = parker.unparker();
        let work = std::sync::Arc::new(AtomicBool::new(false));
        let work2 = work.clone();
        let t = thread::spawn(move || {
            work2.store(true, Ordering::Release);
            unparker.unpark();
        });
        // current_thread's park: drop the token, look for work, and block
        // only if there is none. The other thread's token may be the one
        // dropped: its work must then be seen, or the park never returns.
        loop {
            parker.discard_token();
            if work.load(Ordering::Acquire) {
                break;
            }
            let _ = parker.park();
        }
        t.join().unwrap();
    });
}
