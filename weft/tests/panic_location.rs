//! Misuse panics name the caller's line (issue #10, item 21): every public
//! function that panics on misuse is `#[track_caller]` all the way down, as
//! Tokio's are, so the message points at the user's code instead of at
//! weft's internals.
//!
//! A panic hook records each panic's location per thread; each test makes
//! one misuse call inside `catch_unwind` and checks that the recorded file
//! is this one.

// The closures clippy calls redundant are what make the test work: see
// the note above `panic_site`.
#![allow(clippy::redundant_closure)]

use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, Once, OnceLock};
use std::thread::{self, ThreadId};
use std::time::Duration;

fn locations() -> &'static Mutex<HashMap<ThreadId, String>> {
    static LOCATIONS: OnceLock<Mutex<HashMap<ThreadId, String>>> = OnceLock::new();
    LOCATIONS.get_or_init(Default::default)
}

fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        panic::set_hook(Box::new(|info| {
            let file = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            eprintln!("panic at {file}: {info}");
            locations()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(thread::current().id(), file);
        }));
    });
}

// A `#[track_caller]` function passed as a function pointer reports its own
// definition as the caller, so every call below is made from a closure.

/// Run `f`, which must panic, and return where the panic says it happened.
#[track_caller]
fn panic_site<R>(f: impl FnOnce() -> R) -> String {
    install_hook();
    let res = panic::catch_unwind(AssertUnwindSafe(f));
    assert!(res.is_err(), "the call did not panic");
    locations()
        .lock()
        .unwrap()
        .remove(&thread::current().id())
        .expect("the hook saw no panic")
}

#[track_caller]
fn assert_points_here(site: String) {
    assert!(
        site.contains("tests/panic_location.rs"),
        "the panic points at {site}, not at the caller"
    );
}

fn current_thread() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn multi_thread() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn spawn_outside_a_runtime() {
    assert_points_here(panic_site(|| weft::spawn(async {})));
    assert_points_here(panic_site(|| weft::task::spawn(async {})));
    assert_points_here(panic_site(|| weft::task::spawn_blocking(|| {})));
    assert_points_here(panic_site(|| {
        let mut set = weft::task::JoinSet::new();
        set.spawn(async {});
    }));
}

#[test]
fn handle_current_outside_a_runtime() {
    assert_points_here(panic_site(|| weft::runtime::Handle::current()));
}

#[test]
fn block_on_inside_a_runtime() {
    let rt = current_thread();
    let inner = multi_thread();
    let site = rt.block_on(async { panic_site(|| inner.block_on(async {})) });
    assert_points_here(site);
    let handle = inner.handle().clone();
    let site = rt.block_on(async { panic_site(|| handle.block_on(async {})) });
    assert_points_here(site);
}

#[test]
fn block_in_place_on_current_thread() {
    let rt = current_thread();
    let site = rt.block_on(async { panic_site(|| weft::task::block_in_place(|| {})) });
    assert_points_here(site);
}

#[test]
fn task_id_outside_a_task() {
    assert_points_here(panic_site(|| weft::task::id()));
}

#[test]
fn timers_without_a_runtime_or_with_bad_arguments() {
    assert_points_here(panic_site(|| weft::time::sleep(Duration::from_millis(1))));
    assert_points_here(panic_site(|| {
        weft::time::timeout(Duration::from_millis(1), async {})
    }));
    assert_points_here(panic_site(|| weft::time::interval(Duration::ZERO)));
    assert_points_here(panic_site(|| weft::time::pause()));
}

#[test]
fn sockets_without_a_runtime() {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    assert_points_here(panic_site(move || {
        weft::net::TcpListener::from_std(std_listener)
    }));
    let std_udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    assert_points_here(panic_site(move || weft::net::UdpSocket::from_std(std_udp)));
    assert_points_here(panic_site(|| weft::net::UnixStream::pair()));
    let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    assert_points_here(panic_site(move || weft::io::AsyncFd::new(a)));
}

#[test]
fn sockets_on_a_runtime_without_io() {
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let site = rt.block_on(async { panic_site(|| weft::net::UnixStream::pair()) });
    assert_points_here(site);
}

#[test]
fn timers_on_a_runtime_without_time() {
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let site = rt.block_on(async { panic_site(|| weft::time::sleep(Duration::from_millis(1))) });
    assert_points_here(site);
}

#[test]
fn builder_arguments() {
    assert_points_here(panic_site(|| {
        weft::runtime::Builder::new_multi_thread().worker_threads(0);
    }));
    assert_points_here(panic_site(|| {
        weft::runtime::Builder::new_multi_thread().max_blocking_threads(0);
    }));
}

#[test]
fn blocking_sync_calls_inside_a_runtime() {
    let rt = current_thread();
    rt.block_on(async {
        let (_tx, mut rx) = weft::sync::mpsc::channel::<()>(1);
        assert_points_here(panic_site(|| rx.blocking_recv()));
        let (tx, _rx) = weft::sync::mpsc::channel::<()>(1);
        assert_points_here(panic_site(|| tx.blocking_send(())));
        let (_tx, mut rx) = weft::sync::mpsc::unbounded_channel::<()>();
        assert_points_here(panic_site(|| rx.blocking_recv()));
        let (_tx, rx) = weft::sync::oneshot::channel::<()>();
        assert_points_here(panic_site(|| rx.blocking_recv()));
        let mutex = weft::sync::Mutex::new(());
        assert_points_here(panic_site(|| drop(mutex.blocking_lock())));
        let lock = weft::sync::RwLock::new(());
        assert_points_here(panic_site(|| drop(lock.blocking_read())));
        assert_points_here(panic_site(|| drop(lock.blocking_write())));
    });
}

#[test]
fn sync_constructors_with_bad_arguments() {
    assert_points_here(panic_site(|| weft::sync::mpsc::channel::<()>(0)));
    assert_points_here(panic_site(|| weft::sync::broadcast::channel::<()>(0)));
    assert_points_here(panic_site(|| weft::sync::Semaphore::new(usize::MAX)));
}

#[test]
fn local_tasks_misuse() {
    let rt = current_thread();
    let site = rt.block_on(async { panic_site(|| weft::task::spawn_local(async {})) });
    assert_points_here(site);
    assert_points_here(panic_site(|| {
        weft::runtime::Builder::new_multi_thread().build_local(Default::default())
    }));
}

#[test]
fn io_utilities_with_bad_arguments() {
    assert_points_here(panic_site(|| weft::io::duplex(0)));
    assert_points_here(panic_site(|| weft::io::simplex(0)));
    let mut storage = [0u8; 2];
    let mut buf = weft::io::ReadBuf::new(&mut storage);
    assert_points_here(panic_site(move || buf.put_slice(b"too long")));
    let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    assert_points_here(panic_site(move || weft::io::unix::AsyncFd::try_new(a)));
}
