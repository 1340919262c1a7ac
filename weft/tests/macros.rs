//! `#[weft::main]` and `#[weft::test]` against the real runtime: the
//! flavor and worker count the arguments ask for are the ones the body runs
//! on, `Result`-returning and `should_panic` tests behave as with `#[test]`,
//! and `#[weft::main]` works on functions other than `main`.
//!
//! The macros' argument checking and error messages are tested where the
//! macros live (`weft-macros`), since compile-fail tests need no runtime.

#![cfg(feature = "macros")]

use weft::runtime::Handle;

#[weft::test]
async fn current_thread_default() {
    assert!(Handle::try_current().is_ok());
    assert_eq!(Handle::current().metrics().num_workers(), 1);
}

#[weft::test(flavor = "current_thread")]
async fn current_thread_explicit() {
    assert_eq!(Handle::current().metrics().num_workers(), 1);
}

#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_thread_two_workers() {
    assert_eq!(Handle::current().metrics().num_workers(), 2);
}

#[weft::test(flavor = "multi_thread", worker_threads = 1)]
async fn multi_thread_one_worker() {
    assert_eq!(Handle::current().metrics().num_workers(), 1);
}

#[weft::test(flavor = "multi_thread")]
async fn multi_thread_default_workers() {
    assert!(Handle::current().metrics().num_workers() >= 1);
}

#[weft::test(crate = "weft")]
async fn explicit_crate_path() {
    assert!(Handle::try_current().is_ok());
}

#[weft::test]
async fn returns_ok() -> Result<(), std::num::ParseIntError> {
    let n: u32 = "42".parse()?;
    assert_eq!(n, 42);
    Ok(())
}

#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn returns_ok_with_boxed_error() -> Result<(), Box<dyn std::error::Error>> {
    let n: i32 = "-1".parse()?;
    if n >= 0 {
        return Err("expected a negative number".into());
    }
    Ok(())
}

#[weft::test]
#[should_panic(expected = "panicked inside the runtime")]
async fn should_panic_current_thread() {
    assert!(Handle::try_current().is_ok());
    panic!("panicked inside the runtime");
}

#[weft::test(flavor = "multi_thread", worker_threads = 2)]
#[should_panic(expected = "panicked inside the runtime")]
async fn should_panic_multi_thread() {
    panic!("panicked inside the runtime");
}

#[weft::test]
async fn spawned_task_runs() {
    let handle = weft::spawn(async { 6 * 7 });
    assert_eq!(handle.await.unwrap(), 42);
}

// `#[weft::main]` on a function that is not `main`: it keeps its arguments,
// return type and visibility, and blocks on a fresh runtime each call.
mod entry {
    #[weft::main(flavor = "current_thread")]
    pub async fn double(n: u32) -> u32 {
        assert!(weft::runtime::Handle::try_current().is_ok());
        n * 2
    }

    #[weft::main(worker_threads = 2)]
    pub async fn workers() -> usize {
        weft::runtime::Handle::current().metrics().num_workers()
    }
}

#[test]
fn main_on_other_functions() {
    assert!(Handle::try_current().is_err());
    assert_eq!(entry::double(21), 42);
    assert_eq!(entry::workers(), 2);
    assert!(Handle::try_current().is_err());
}
