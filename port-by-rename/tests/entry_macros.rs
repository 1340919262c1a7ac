//! `#[tokio::main]` and `#[tokio::test]` with weft renamed to `tokio`: the
//! attributes must expand to `::tokio::...`, the name this package's
//! Cargo.toml gives weft.

use std::time::Duration;

#[tokio::test]
async fn test_default_flavor() {
    let metrics = tokio::runtime::Handle::current().metrics();
    assert_eq!(metrics.num_workers(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn test_current_thread() {
    tokio::time::sleep(Duration::from_millis(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_multi_thread() {
    assert_eq!(tokio::runtime::Handle::current().metrics().num_workers(), 2);
    let h = tokio::spawn(async { tokio::task::yield_now().await });
    h.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn test_start_paused() {
    let start = tokio::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert!(start.elapsed() >= Duration::from_secs(3600));
}

#[tokio::test]
async fn test_returning_result() -> Result<(), std::num::ParseIntError> {
    let n: u32 = "7".parse()?;
    assert_eq!(n, 7);
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn helper_main() -> u32 {
    tokio::spawn(async { 5 }).await.unwrap()
}

#[test]
fn main_attribute_on_a_helper() {
    assert_eq!(helper_main(), 5);
}
