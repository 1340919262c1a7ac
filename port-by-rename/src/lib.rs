//! Code written for Tokio, compiled against weft renamed to `tokio` in
//! Cargo.toml (`tokio = { package = "weft", path = "../weft" }`) and
//! otherwise unchanged. The integration tests in `tests/` hold the bulk;
//! this file carries the doctest, since doctests see the renamed crate too.
//!
//! ```
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() {
//!     let answer = tokio::spawn(async { 6 * 7 }).await.unwrap();
//!     assert_eq!(answer, 42);
//! }
//! ```

/// Sum the numbers sent on a channel, as a Tokio program would.
///
/// ```
/// # #[tokio::main]
/// # async fn main() {
/// let (tx, rx) = tokio::sync::mpsc::channel(8);
/// tokio::spawn(async move {
///     for i in 1..=4 {
///         tx.send(i).await.unwrap();
///     }
/// });
/// assert_eq!(port_by_rename::sum(rx).await, 10);
/// # }
/// ```
pub async fn sum(mut rx: tokio::sync::mpsc::Receiver<u64>) -> u64 {
    let mut total = 0;
    while let Some(n) = rx.recv().await {
        total += n;
    }
    total
}
