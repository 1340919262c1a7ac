//! The declarative macros Tokio exports at its crate root, under weft:
//! `pin!`, `join!`, `try_join!`, `select!` (and `task_local!`, with its types in
//! `task/task_local.rs`). They refer to weft through `$crate`, so they work
//! when weft is renamed (`tokio = { package = "weft" }`).

pub(crate) mod join;
pub(crate) mod select;

/// Pins values on the stack: `pin!(a, b)` shadows local variables with
/// pinned references to them, and `pin! { let x = expr; }` pins new ones.
///
/// ```
/// use std::future::Future;
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let fut = async { 3 };
/// weft::pin!(fut);
/// // `fut` is now `Pin<&mut impl Future>`: it can be polled repeatedly.
/// assert_eq!((&mut fut).await, 3);
/// # });
/// ```
#[macro_export]
macro_rules! pin {
    ($($x:ident),* $(,)?) => { $(
        #[allow(unused_mut)]
        let mut $x = ::core::pin::pin!($x);
    )* };
    ($(let $x:ident = $init:expr;)*) => { $(
        #[allow(unused_mut)]
        let mut $x = ::core::pin::pin!($init);
    )* };
}
