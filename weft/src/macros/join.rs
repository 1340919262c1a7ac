//! `join!` and `try_join!`: wait for several futures at once, in one task.
//!
//! Owns: the macros and their support: each future is wrapped in a
//! [`MaybeDone`], and the wrappers are chained into a nested tuple
//! `(MaybeDone<A>, (MaybeDone<B>, ()))` so that any number of futures of
//! different types can be polled by index ([`Join::poll_nth`]) and their
//! outputs taken in order.
//!
//! Invariants: every future is polled only while not done, and its output
//! is taken once, after all are done (`join!`) or as soon as one fails
//! (`try_join!`, which returns that error without polling the futures
//! after it in that poll, and then drops the others). By default the first
//! future polled rotates from one poll to the next, so none is always last
//! (as in Tokio); `biased;` polls in order. As in Tokio, neither macro
//! looks at the task's budget itself: its futures do (a `join!` loop over
//! futures that spend no budget never yields, on either).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A future, then its output, then nothing.
///
/// `repr(C)` keeps the variant tag out of the future's bytes: with a niche
/// layout, reading the tag would read memory a self-referential future may
/// hold a unique borrow of (the aliasing question of
/// rust-lang/miri#3780, which Tokio's `MaybeDone` answers the same way).
#[doc(hidden)]
#[repr(C)]
pub enum MaybeDone<F: Future> {
    Future(F),
    Done(F::Output),
    Gone,
}

impl<F: Future> std::fmt::Debug for MaybeDone<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MaybeDone::Future(_) => "MaybeDone::Future",
            MaybeDone::Done(_) => "MaybeDone::Done",
            MaybeDone::Gone => "MaybeDone::Gone",
        })
    }
}

#[doc(hidden)]
pub fn maybe_done<F: std::future::IntoFuture>(f: F) -> MaybeDone<F::IntoFuture> {
    MaybeDone::Future(f.into_future())
}

impl<F: Future> MaybeDone<F> {
    /// Poll the future if not done; true once done.
    fn poll_done(self: Pin<&mut Self>, cx: &mut Context<'_>) -> bool {
        // SAFETY: the future is structurally pinned: it is only replaced
        // (dropped in place by the assignment below) once done, never moved.
        let this = unsafe { self.get_unchecked_mut() };
        match this {
            MaybeDone::Future(f) => {
                // SAFETY: as above.
                match unsafe { Pin::new_unchecked(f) }.poll(cx) {
                    Poll::Ready(out) => {
                        *this = MaybeDone::Done(out);
                        true
                    }
                    Poll::Pending => false,
                }
            }
            MaybeDone::Done(_) => true,
            MaybeDone::Gone => true,
        }
    }

    fn take(self: Pin<&mut Self>) -> F::Output {
        // SAFETY: a done `MaybeDone` holds no future; moving the output out
        // moves nothing pinned.
        let this = unsafe { self.get_unchecked_mut() };
        match std::mem::replace(this, MaybeDone::Gone) {
            MaybeDone::Done(out) => out,
            _ => panic!("join!: an output was taken twice or before its future was done"),
        }
    }
}

/// The nested tuple of [`MaybeDone`]s.
#[doc(hidden)]
pub trait Join {
    const LEN: usize;
    type Output;
    /// Poll element `n` (if not done); true when it is done.
    fn poll_nth(self: Pin<&mut Self>, n: usize, cx: &mut Context<'_>) -> bool;
    /// Take every output (all must be done).
    fn take_all(self: Pin<&mut Self>) -> Self::Output;
}

impl Join for () {
    const LEN: usize = 0;
    type Output = ();
    fn poll_nth(self: Pin<&mut Self>, _: usize, _: &mut Context<'_>) -> bool {
        true
    }
    fn take_all(self: Pin<&mut Self>) {}
}

impl<F: Future, R: Join> Join for (MaybeDone<F>, R) {
    const LEN: usize = 1 + R::LEN;
    type Output = (F::Output, R::Output);

    fn poll_nth(self: Pin<&mut Self>, n: usize, cx: &mut Context<'_>) -> bool {
        // SAFETY: both halves are structurally pinned (the tuple lives in
        // the pinned join future and is never moved).
        let (head, rest) = unsafe {
            let this = self.get_unchecked_mut();
            (
                Pin::new_unchecked(&mut this.0),
                Pin::new_unchecked(&mut this.1),
            )
        };
        if n == 0 {
            head.poll_done(cx)
        } else {
            rest.poll_nth(n - 1, cx)
        }
    }

    fn take_all(self: Pin<&mut Self>) -> Self::Output {
        // SAFETY: as in `poll_nth`.
        let (head, rest) = unsafe {
            let this = self.get_unchecked_mut();
            (
                Pin::new_unchecked(&mut this.0),
                Pin::new_unchecked(&mut this.1),
            )
        };
        (head.take(), rest.take_all())
    }
}

/// The nested tuple of `try_join!`, whose futures all output `Result`s
/// with one error type.
#[doc(hidden)]
pub trait TryJoin<E>: Join {
    /// The success values, nested like the tuple.
    type Oks;
    /// Element `n`'s error, taken out, if it is done and failed.
    fn take_err_nth(self: Pin<&mut Self>, n: usize) -> Option<E>;
    /// Every success value (all must be done and `Ok`).
    fn take_oks(self: Pin<&mut Self>) -> Self::Oks;
}

impl<E> TryJoin<E> for () {
    type Oks = ();
    fn take_err_nth(self: Pin<&mut Self>, _: usize) -> Option<E> {
        None
    }
    fn take_oks(self: Pin<&mut Self>) {}
}

impl<T, E, F: Future<Output = Result<T, E>>, R: TryJoin<E>> TryJoin<E> for (MaybeDone<F>, R) {
    type Oks = (T, R::Oks);

    fn take_oks(self: Pin<&mut Self>) -> Self::Oks {
        // SAFETY: as in `Join::poll_nth`.
        let (head, rest) = unsafe {
            let this = self.get_unchecked_mut();
            (
                Pin::new_unchecked(&mut this.0),
                Pin::new_unchecked(&mut this.1),
            )
        };
        let Ok(value) = head.take() else {
            unreachable!("try_join!: errors are taken before the values");
        };
        (value, rest.take_oks())
    }

    fn take_err_nth(self: Pin<&mut Self>, n: usize) -> Option<E> {
        // SAFETY: as in `Join::poll_nth`.
        let (head, rest) = unsafe {
            let this = self.get_unchecked_mut();
            (&mut this.0, Pin::new_unchecked(&mut this.1))
        };
        if n > 0 {
            return rest.take_err_nth(n - 1);
        }
        if let MaybeDone::Done(Err(_)) = head {
            // A done element holds no future: replacing it moves nothing pinned.
            if let MaybeDone::Done(Err(e)) = std::mem::replace(head, MaybeDone::Gone) {
                return Some(e);
            }
        }
        None
    }
}

/// Poll every element once, starting at `start`; true when all are done.
#[doc(hidden)]
pub fn poll_all<J: Join>(mut all: Pin<&mut J>, start: usize, cx: &mut Context<'_>) -> bool {
    let mut done = true;
    for i in 0..J::LEN {
        done &= all.as_mut().poll_nth((start + i) % J::LEN, cx);
    }
    done
}

/// As [`poll_all`] for `try_join!`, but an element that fails ends the
/// poll: the elements after it in this poll's order are not polled, and
/// its error is returned, taken out. `Ok(true)` when all are done.
#[doc(hidden)]
pub fn try_poll_all<E, J: TryJoin<E>>(
    mut all: Pin<&mut J>,
    start: usize,
    cx: &mut Context<'_>,
) -> Result<bool, E> {
    let mut done = true;
    for i in 0..J::LEN {
        let n = (start + i) % J::LEN;
        if !all.as_mut().poll_nth(n, cx) {
            done = false;
        } else if let Some(e) = all.as_mut().take_err_nth(n) {
            return Err(e);
        }
    }
    Ok(done)
}

/// Waits for every future and returns their outputs as a tuple, in order.
/// The futures run concurrently in the calling task (use `spawn` for
/// parallelism). `join!(biased; a, b)` polls them in order; by default the
/// first one polled rotates.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (a, b) = weft::join!(async { 1 }, async { "two" });
/// assert_eq!((a, b), (1, "two"));
/// # });
/// ```
#[macro_export]
macro_rules! join {
    (biased;) => {
        async {}.await
    };
    (biased; $($f:expr),+ $(,)?) => {
        $crate::__join_impl!($crate::macros_support::InOrder; $($f),+)
    };
    ($($f:expr),+ $(,)?) => {
        $crate::__join_impl!(
            <$crate::macros_support::Rotating as ::core::default::Default>::default();
            $($f),+
        )
    };
    () => {
        async {}.await
    };
}

/// Waits for every future, each returning `Result<_, E>`: `Ok` with the
/// tuple of values when all succeed, or the first `Err` at once (the
/// futures after it are not polled again, and all are dropped). `try_join!(biased; ..)` polls in order.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let ok: Result<(u8, u8), &str> = weft::try_join!(async { Ok(1) }, async { Ok(2) });
/// assert_eq!(ok, Ok((1, 2)));
/// let err: Result<(u8, u8), &str> =
///     weft::try_join!(async { Ok(1) }, async { Err("no") });
/// assert_eq!(err, Err("no"));
/// # });
/// ```
#[macro_export]
macro_rules! try_join {
    (biased;) => {
        async { ::core::result::Result::Ok(()) }.await
    };
    (biased; $($f:expr),+ $(,)?) => {
        $crate::__try_join_impl!($crate::macros_support::InOrder; $($f),+)
    };
    ($($f:expr),+ $(,)?) => {
        $crate::__try_join_impl!(
            <$crate::macros_support::Rotating as ::core::default::Default>::default();
            $($f),+
        )
    };
    () => {
        async { ::core::result::Result::Ok(()) }.await
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __join_nest {
    ($head:expr $(, $rest:expr)*) => {
        ($crate::macros_support::maybe_done($head), $crate::__join_nest!($($rest),*))
    };
    () => {
        ()
    };
}

/// Flattens the nested output `(a, (b, (c, ())))` into `(a, b, c)`.
#[doc(hidden)]
#[macro_export]
macro_rules! __join_flatten {
    ($nested:expr; $($f:expr),+) => {
        $crate::__join_flatten!(@bind $nested; []; $($f),+)
    };
    (@bind $nested:expr; [$($done:ident)*]; $_f:expr $(, $rest:expr)*) => {{
        let (__weft_out, __weft_rest) = $nested;
        $crate::__join_flatten!(@bind __weft_rest; [$($done)* __weft_out]; $($rest),*)
    }};
    (@bind $nested:expr; [$($done:ident)*];) => {{
        let () = $nested;
        ($($done,)*)
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __join_impl {
    ($order:expr; $($f:expr),+) => {{
        let mut __weft_all = ::core::pin::pin!($crate::__join_nest!($($f),+));
        let mut __weft_order = $order;
        let __weft_outputs = ::core::future::poll_fn(move |cx| {
            let __weft_first = $crate::macros_support::JoinOrder::next_start(
                &mut __weft_order,
                $crate::macros_support::join_len(&*__weft_all),
            );
            if $crate::macros_support::poll_all(__weft_all.as_mut(), __weft_first, cx) {
                ::core::task::Poll::Ready($crate::macros_support::take_all(__weft_all.as_mut()))
            } else {
                ::core::task::Poll::Pending
            }
        })
        .await;
        $crate::__join_flatten!(__weft_outputs; $($f),+)
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __try_join_impl {
    ($order:expr; $($f:expr),+) => {{
        let mut __weft_all = ::core::pin::pin!($crate::__join_nest!($($f),+));
        let mut __weft_order = $order;
        let __weft_result = ::core::future::poll_fn(move |cx| {
            let __weft_first = $crate::macros_support::JoinOrder::next_start(
                &mut __weft_order,
                $crate::macros_support::join_len(&*__weft_all),
            );
            let __weft_done =
                match $crate::macros_support::try_poll_all(__weft_all.as_mut(), __weft_first, cx) {
                    ::core::result::Result::Ok(done) => done,
                    ::core::result::Result::Err(e) => {
                        return ::core::task::Poll::Ready(::core::result::Result::Err(e));
                    }
                };
            if __weft_done {
                ::core::task::Poll::Ready(::core::result::Result::Ok(
                    $crate::macros_support::take_oks(__weft_all.as_mut()),
                ))
            } else {
                ::core::task::Poll::Pending
            }
        })
        .await;
        match __weft_result {
            ::core::result::Result::Ok(__weft_outputs) => ::core::result::Result::Ok(
                $crate::__join_flatten!(__weft_outputs; $($f),+),
            ),
            ::core::result::Result::Err(e) => ::core::result::Result::Err(e),
        }
    }};
}

/// Which element a join's poll starts with. The poll closure owns it, so
/// the join future holds only the futures, the closure and its state (the
/// size Tokio's `join!` has: 4 bytes of rotation, none when biased).
#[doc(hidden)]
pub trait JoinOrder {
    /// The start of this poll; the next poll starts one further on.
    fn next_start(&mut self, len: usize) -> usize;
}

/// `biased;`: every poll starts at the first element.
#[doc(hidden)]
#[derive(Debug)]
pub struct InOrder;

impl JoinOrder for InOrder {
    fn next_start(&mut self, _len: usize) -> usize {
        0
    }
}

/// The default: the start rotates through the elements.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Rotating {
    /// Always below the join's length (it starts at 0 and wraps there).
    next: u32,
}

impl JoinOrder for Rotating {
    fn next_start(&mut self, len: usize) -> usize {
        let start = self.next as usize;
        self.next = if start + 1 == len {
            0
        } else {
            start as u32 + 1
        };
        start
    }
}

/// `J::LEN` for a value (the macros cannot name `J`).
#[doc(hidden)]
pub fn join_len<J: Join>(_: &J) -> usize {
    J::LEN
}

#[doc(hidden)]
pub fn take_all<J: Join>(all: Pin<&mut J>) -> J::Output {
    all.take_all()
}

#[doc(hidden)]
pub fn take_oks<E, J: TryJoin<E>>(all: Pin<&mut J>) -> J::Oks {
    all.take_oks()
}
