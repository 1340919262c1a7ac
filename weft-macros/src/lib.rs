//! Procedural macros for [weft]: the `#[weft::main]` and `#[weft::test]`
//! attributes.
//!
//! Do not depend on this crate directly. Enable the `macros` feature of
//! `weft` (on by default) and use the re-exports `weft::main` and
//! `weft::test`.
//!
//! Both attributes turn an `async fn` into an ordinary `fn` that builds a
//! weft runtime and blocks on the original body. They accept the same
//! arguments, and expand to the same shape, as `#[tokio::main]` and
//! `#[tokio::test]`, so porting a Tokio program is a matter of renaming.
//!
//! # Arguments
//!
//! | argument | value | default | notes |
//! | --- | --- | --- | --- |
//! | `flavor` | `"current_thread"`, `"multi_thread"` or `"local"` | `multi_thread` for `main`, `current_thread` for `test` | picks `Builder::new_current_thread` or `Builder::new_multi_thread`; `local` builds a current-thread `LocalRuntime` (`Builder::build_local`), where `task::spawn_local` works |
//! | `worker_threads` | integer literal, greater than 0 | the runtime's own default | only with the `multi_thread` flavor |
//! | `start_paused` | `true` or `false` | not set | only with the `current_thread` and `local` flavors |
//! | `name` | string literal | no name | the runtime's name (`Builder::name`, `Handle::name`) |
//! | `crate` | string literal holding a path | weft under the name the calling package's Cargo.toml gives it (`::weft`, or `::tokio` with `tokio = { package = "weft", .. }`) | where to find the weft crate, for re-exports |
//!
//! # Expansion
//!
//! ```ignore
//! #[weft::main(worker_threads = 2)]
//! async fn main() -> Result<(), Error> {
//!     run().await
//! }
//! ```
//!
//! becomes, roughly,
//!
//! ```ignore
//! fn main() -> Result<(), Error> {
//!     let body = async {
//!         // Checks the body against the declared return type where the
//!         // body is written, so a wrong tail expression is reported there.
//!         let output: Result<(), Error> = {
//!             run().await
//!         };
//!         return output;
//!     };
//!     return ::weft::runtime::Builder::new_multi_thread()
//!         .worker_threads(2)
//!         .enable_all()
//!         .build()
//!         .expect("Failed building the Runtime")
//!         .block_on(body);
//! }
//! ```
//!
//! `#[weft::test]` expands the same way, adds `#[::core::prelude::v1::test]`
//! in front of the function's own attributes (so `#[should_panic]` and
//! `#[ignore]` keep working), and pins the body as a
//! `dyn Future<Output = R>` so that many tests do not each instantiate the
//! runtime's `block_on` for their own future type.
//!
//! The user's body keeps its own tokens and spans, so errors inside it
//! point at the user's code. The macro's own locals are hygienic: the body
//! cannot see or shadow them.
//!
//! When the arguments or the function are wrong, the macro reports a
//! compile error at the offending token and still emits the function
//! (expanded with the flavor and `crate` path it could read, or untouched
//! if it could not be parsed as a function at all), so that one mistake
//! does not cascade into unrelated errors in an IDE.
//!
//! The examples in this crate are marked `ignore`: a proc-macro crate cannot
//! use its own macros, and it does not depend on `weft`, so they cannot be
//! doctested here. They are exercised by `weft`'s own `tests/macros.rs`.
//!
//! [weft]: https://docs.rs/weft

use proc_macro::TokenStream;

mod entry;

/// Marks an `async fn` as the entry point of a program run on a weft
/// runtime.
///
/// The function becomes a plain `fn` with the same name, attributes,
/// visibility and return type; its body runs with
/// `Runtime::block_on` on a runtime built from
/// `weft::runtime::Builder`. The return type is kept, so `main` may return
/// `Result<(), E>`.
///
/// The default flavor is `multi_thread`. Arguments (see the crate docs):
/// `flavor = "current_thread" | "multi_thread" | "local"`,
/// `worker_threads = N` (multi-thread only, `N > 0`), `start_paused = bool`
/// (not multi-thread), `name = "runtime name"` and
/// `crate = "path::to::weft"`.
///
/// A function named `main` may not take arguments. Other functions may
/// (the body captures them as a non-`move` `async` block would: those it
/// does not consume are dropped when the function returns, after its
/// runtime), which is handy for library entry points that should block on
/// a fresh runtime.
///
/// (These examples are `ignore`d: this proc-macro crate cannot doctest
/// `weft::main`, which lives in the `weft` crate.)
///
/// # Examples
///
/// The default multi-thread runtime:
///
/// ```ignore
/// #[weft::main]
/// async fn main() {
///     println!("Hello from weft");
/// }
/// ```
///
/// Returning an error from `main`:
///
/// ```ignore
/// #[weft::main]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let n: u32 = "42".parse()?;
///     println!("{n}");
///     Ok(())
/// }
/// ```
///
/// Choosing the runtime:
///
/// ```ignore
/// #[weft::main(flavor = "multi_thread", worker_threads = 4)]
/// async fn main() {}
/// ```
///
/// ```ignore
/// #[weft::main(flavor = "current_thread")]
/// async fn main() {}
/// ```
///
/// A `LocalRuntime`, where `!Send` tasks can be spawned:
///
/// ```ignore
/// #[weft::main(flavor = "local")]
/// async fn main() {
///     let shared = std::rc::Rc::new(3);
///     let n = weft::task::spawn_local(async move { *shared }).await.unwrap();
///     assert_eq!(n, 3);
/// }
/// ```
///
/// Using weft through a re-export:
///
/// ```ignore
/// use my_framework::weft as rt;
///
/// #[rt::main(crate = "my_framework::weft")]
/// async fn main() {}
/// ```
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    entry::expand(entry::Kind::Main, args.into(), item.into()).into()
}

/// Marks an `async fn` as a test run on a weft runtime.
///
/// The function becomes a `#[test]` function whose body runs on a fresh
/// runtime. Other attributes such as `#[should_panic]` and `#[ignore]` keep
/// working, and the test may return `Result<(), E>`.
///
/// The default flavor is `current_thread`. Arguments are the same as for
/// [`macro@main`]: `flavor` (`local` too), `worker_threads` (multi-thread
/// only), `start_paused` (not multi-thread), `name` and `crate`. A test function cannot
/// take arguments, and must not also carry a plain `#[test]` attribute.
///
/// (These examples are `ignore`d: this proc-macro crate cannot doctest
/// `weft::test`, which lives in the `weft` crate.)
///
/// # Examples
///
/// ```ignore
/// #[weft::test]
/// async fn runs_on_current_thread() {
///     assert!(weft::runtime::Handle::try_current().is_ok());
/// }
/// ```
///
/// ```ignore
/// #[weft::test(flavor = "multi_thread", worker_threads = 2)]
/// async fn runs_on_two_workers() {
///     let metrics = weft::runtime::Handle::current().metrics();
///     assert_eq!(metrics.num_workers(), 2);
/// }
/// ```
///
/// ```ignore
/// #[weft::test]
/// async fn may_fail() -> Result<(), std::num::ParseIntError> {
///     let n: u32 = "7".parse()?;
///     assert_eq!(n, 7);
///     Ok(())
/// }
/// ```
///
/// ```ignore
/// #[weft::test]
/// #[should_panic(expected = "boom")]
/// async fn panics() {
///     panic!("boom");
/// }
/// ```
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    entry::expand(entry::Kind::Test, args.into(), item.into()).into()
}
