//! `tokio`, played by weft: every module, function, type and macro of
//! weft at the same path as in Tokio, so that a dependency graph patched
//! with `[patch.crates-io] tokio = { path = ".../weft-tokio" }` runs on
//! weft. This crate adds nothing of its own; what Tokio has and weft lacks
//! is a gap in weft (see `API.md`).
//!
//! ```
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() {
//!     let (tx, rx) = tokio::sync::oneshot::channel();
//!     tokio::spawn(async move { tx.send(7).unwrap() });
//!     assert_eq!(rx.await.unwrap(), 7);
//! }
//! ```

pub use weft::*;

/// Tokio's hidden `tokio::macros::support`, which Tokio's macros expand
/// to and a few crates (and Tokio's own tests) name: the std items it
/// re-exports.
#[doc(hidden)]
pub mod macros {
    pub mod support {
        pub use std::future::{poll_fn, Future, IntoFuture};
        pub use std::pin::Pin;
        pub use std::task::{Context, Poll};
    }
}
