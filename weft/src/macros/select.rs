//! `select!`: wait on several branches, run the handler of the first one
//! whose future completes with a value that matches its pattern.
//!
//! Owns: the macro and its support. A token muncher normalises each
//! branch into `[(index) (output variant) (pattern) (future) (precondition)
//! (handler)]`, taking the index literal and the name of the branch's
//! variant of [`SelectOut`] from two fixed lists of 64 (so no expansion
//! recurses deeper than one level per branch). The futures sit in one flat
//! pinned tuple, polled by index; the wait returns the winner's value in
//! its variant, the futures are dropped, then its handler runs. The poll
//! closure owns the disabled-branch mask and the pinned reference, so a
//! `select!` future is as large as Tokio's.
//!
//! Semantics, as Tokio documents them:
//! - every precondition is evaluated first; then every future expression,
//!   disabled branches included (their futures are never polled); then
//!   each one's `IntoFuture::into_future`;
//! - each poll visits the branches in declaration order from a start drawn
//!   at random for that poll, or from the first with `biased;`;
//! - a completed branch whose value does not match its pattern is disabled
//!   and the others keep going; the check borrows the value, so a pattern
//!   may bind by value with `mut` (Tokio strips `mut` and `ref` for it);
//! - all futures are dropped before the chosen handler runs, so the
//!   handler may use what they borrowed;
//! - with every branch disabled, the `else` branch runs, or, without one,
//!   `select!` panics; a `select!` of an `else` alone is its expression;
//! - at most 64 branches (a `u64` mask);
//! - with the task's budget spent, it yields before polling (as Tokio's
//!   does), so a `select!` loop over always-ready branches lets others run.

use std::cell::Cell;
use std::task::{Context, Poll};

/// `IntoFuture`, as a function the macro can call.
#[doc(hidden)]
pub fn into_future<F: std::future::IntoFuture>(f: F) -> F::IntoFuture {
    f.into_future()
}

thread_local! {
    static RNG: Cell<u64> = const { Cell::new(0) };
}

/// Where the default (unbiased) order starts: a thread-local xorshift,
/// seeded from the thread's stack address and the clock.
#[doc(hidden)]
pub fn random_start(n: usize) -> usize {
    RNG.try_with(|rng| {
        let mut x = rng.get();
        if x == 0 {
            let seed = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            x = (seed ^ (&x as *const u64 as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rng.set(x);
        (((x >> 32) * n as u64) >> 32) as usize
    })
    .unwrap_or(0)
}

/// `Pending` (and a deferred wake) when the task's budget is spent: a
/// select loop over always-ready branches yields like any resource.
#[doc(hidden)]
pub fn poll_budget(cx: &mut Context<'_>) -> Poll<()> {
    if crate::coop::has_remaining() {
        Poll::Ready(())
    } else {
        crate::runtime::context::defer(cx.waker());
        Poll::Pending
    }
}

/// What a `select!`'s wait ended with: the winning branch's value (the
/// variant named by the branch's output identifier), or every branch
/// disabled. Type arguments past the last branch stay `()`; the variants
/// they type are never built.
#[doc(hidden)]
#[allow(non_camel_case_types)]
pub enum SelectOut<
    T0 = (),
    T1 = (),
    T2 = (),
    T3 = (),
    T4 = (),
    T5 = (),
    T6 = (),
    T7 = (),
    T8 = (),
    T9 = (),
    T10 = (),
    T11 = (),
    T12 = (),
    T13 = (),
    T14 = (),
    T15 = (),
    T16 = (),
    T17 = (),
    T18 = (),
    T19 = (),
    T20 = (),
    T21 = (),
    T22 = (),
    T23 = (),
    T24 = (),
    T25 = (),
    T26 = (),
    T27 = (),
    T28 = (),
    T29 = (),
    T30 = (),
    T31 = (),
    T32 = (),
    T33 = (),
    T34 = (),
    T35 = (),
    T36 = (),
    T37 = (),
    T38 = (),
    T39 = (),
    T40 = (),
    T41 = (),
    T42 = (),
    T43 = (),
    T44 = (),
    T45 = (),
    T46 = (),
    T47 = (),
    T48 = (),
    T49 = (),
    T50 = (),
    T51 = (),
    T52 = (),
    T53 = (),
    T54 = (),
    T55 = (),
    T56 = (),
    T57 = (),
    T58 = (),
    T59 = (),
    T60 = (),
    T61 = (),
    T62 = (),
    T63 = (),
> {
    __o0(T0),
    __o1(T1),
    __o2(T2),
    __o3(T3),
    __o4(T4),
    __o5(T5),
    __o6(T6),
    __o7(T7),
    __o8(T8),
    __o9(T9),
    __o10(T10),
    __o11(T11),
    __o12(T12),
    __o13(T13),
    __o14(T14),
    __o15(T15),
    __o16(T16),
    __o17(T17),
    __o18(T18),
    __o19(T19),
    __o20(T20),
    __o21(T21),
    __o22(T22),
    __o23(T23),
    __o24(T24),
    __o25(T25),
    __o26(T26),
    __o27(T27),
    __o28(T28),
    __o29(T29),
    __o30(T30),
    __o31(T31),
    __o32(T32),
    __o33(T33),
    __o34(T34),
    __o35(T35),
    __o36(T36),
    __o37(T37),
    __o38(T38),
    __o39(T39),
    __o40(T40),
    __o41(T41),
    __o42(T42),
    __o43(T43),
    __o44(T44),
    __o45(T45),
    __o46(T46),
    __o47(T47),
    __o48(T48),
    __o49(T49),
    __o50(T50),
    __o51(T51),
    __o52(T52),
    __o53(T53),
    __o54(T54),
    __o55(T55),
    __o56(T56),
    __o57(T57),
    __o58(T58),
    __o59(T59),
    __o60(T60),
    __o61(T61),
    __o62(T62),
    __o63(T63),
    Disabled,
}

impl std::fmt::Debug for SelectOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SelectOut")
    }
}

/// Waits on several branches and runs the handler of the first whose
/// future completes with a value matching its pattern; Tokio's syntax and
/// semantics (see the module doc): `biased;`, `, if precondition`, pattern
/// fall-through, `else`, at most 64 branches.
///
/// ```
/// use std::time::Duration;
///
/// # weft::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (tx, mut rx) = weft::sync::mpsc::channel(1);
/// tx.send(3).await.unwrap();
/// let got = weft::select! {
///     Some(v) = rx.recv() => v * 2,
///     _ = weft::time::sleep(Duration::from_secs(5)) => 0,
/// };
/// assert_eq!(got, 6);
/// # });
/// ```
#[macro_export]
macro_rules! select {
    ($(biased;)?) => {
        ::core::compile_error!(
            "select! needs at least one branch: `pattern = future => handler`, or `else => expr`"
        )
    };
    // Only an `else`: there is nothing to wait for, the `else` runs.
    ($(biased;)? else => $e:expr $(,)?) => {{
        $e
    }};
    (biased; $($t:tt)*) => {
        $crate::__select_with_slots!(true; $($t)*)
    };
    ($($t:tt)*) => {
        $crate::__select_with_slots!(false; $($t)*)
    };
}

/// Hands the parser the 64 branch indices and output-variant names.
#[doc(hidden)]
#[macro_export]
macro_rules! __select_with_slots {
    ($b:tt; $($t:tt)*) => {
        $crate::__select_parse!($b; [
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
            31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58
            59 60 61 62 63
        ]; [
            __o0 __o1 __o2 __o3 __o4 __o5 __o6 __o7 __o8 __o9 __o10 __o11 __o12 __o13 __o14
            __o15 __o16 __o17 __o18 __o19 __o20 __o21 __o22 __o23 __o24 __o25 __o26 __o27 __o28
            __o29 __o30 __o31 __o32 __o33 __o34 __o35 __o36 __o37 __o38 __o39 __o40 __o41 __o42
            __o43 __o44 __o45 __o46 __o47 __o48 __o49 __o50 __o51 __o52 __o53 __o54 __o55 __o56
            __o57 __o58 __o59 __o60 __o61 __o62 __o63
        ]; []; $($t)*)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __select_parse {
    // A separating comma after a block handler.
    ($b:tt; $is:tt; $os:tt; [$($br:tt)*]; , $($rest:tt)*) => {
        $crate::__select_parse!($b; $is; $os; [$($br)*]; $($rest)*)
    };
    ($b:tt; $is:tt; $os:tt; [$($br:tt)*]; else => $e:expr $(,)?) => {
        $crate::__select_gen!($b; [$($br)*]; { $e })
    };
    ($b:tt; $is:tt; $os:tt; [$($br:tt)*];) => {
        $crate::__select_gen!($b; [$($br)*]; {
            ::core::panic!("all branches are disabled and there is no else branch (select!: add an `else => ..` arm, or leave a branch enabled)")
        })
    };
    ($b:tt; [$i:tt $($is:tt)*]; [$o:ident $($os:tt)*]; [$($br:tt)*];
        $p:pat = $f:expr, if $c:expr => $h:block $($rest:tt)*) => {
        $crate::__select_parse!($b; [$($is)*]; [$($os)*];
            [$($br)* [($i) ($o) ($p) ($f) ($c) ($h)]]; $($rest)*)
    };
    ($b:tt; [$i:tt $($is:tt)*]; [$o:ident $($os:tt)*]; [$($br:tt)*];
        $p:pat = $f:expr, if $c:expr => $h:expr $(, $($rest:tt)*)?) => {
        $crate::__select_parse!($b; [$($is)*]; [$($os)*];
            [$($br)* [($i) ($o) ($p) ($f) ($c) ($h)]]; $($($rest)*)?)
    };
    ($b:tt; [$i:tt $($is:tt)*]; [$o:ident $($os:tt)*]; [$($br:tt)*];
        $p:pat = $f:expr => $h:block $($rest:tt)*) => {
        $crate::__select_parse!($b; [$($is)*]; [$($os)*];
            [$($br)* [($i) ($o) ($p) ($f) (true) ($h)]]; $($rest)*)
    };
    ($b:tt; [$i:tt $($is:tt)*]; [$o:ident $($os:tt)*]; [$($br:tt)*];
        $p:pat = $f:expr => $h:expr $(, $($rest:tt)*)?) => {
        $crate::__select_parse!($b; [$($is)*]; [$($os)*];
            [$($br)* [($i) ($o) ($p) ($f) (true) ($h)]]; $($($rest)*)?)
    };
    ($b:tt; []; []; $($rest:tt)+) => {
        ::core::compile_error!("select! takes at most 64 branches")
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __select_gen {
    ($b:tt; [$([($i:tt) ($o:ident) ($p:pat) ($f:expr) ($c:expr) ($h:expr)])+]; $else:block) => {{
        const __WEFT_BRANCHES: usize = 0 $(+ $crate::__select_one!($i))+;
        let mut __weft_mask: u64 = 0;
        // Every precondition first, then every future (disabled ones too).
        $(
            if !$c {
                __weft_mask |= 1u64 << $i;
            }
        )+
        // The futures live in this block only: they are dropped before a
        // handler runs. The poll closure owns the mask and the pinned
        // reference, so the future holds nothing else across its wait
        // (Tokio's size for the same `select!`).
        #[allow(unused_variables, unused_mut, unreachable_patterns, clippy::modulo_one)]
        let mut __weft_out: $crate::macros_support::SelectOut<$($crate::__select_infer!($i)),+> = {
            // Every expression, then each one's `into_future`.
            let __weft_init = ($($f,)+);
            let mut __weft_futs = ::core::pin::pin!((
                $($crate::macros_support::into_future(__weft_init.$i),)+
            ));
            ::core::future::poll_fn(move |cx| {
                if $crate::macros_support::select_poll_budget(cx).is_pending() {
                    return ::core::task::Poll::Pending;
                }
                let __weft_start = if $b {
                    0
                } else {
                    $crate::macros_support::random_start(__WEFT_BRANCHES)
                };
                let mut __weft_pending = false;
                for __weft_k in 0..__WEFT_BRANCHES {
                    let __weft_i = (__weft_start + __weft_k) % __WEFT_BRANCHES;
                    if __weft_mask & (1u64 << __weft_i) != 0 {
                        continue;
                    }
                    $(
                        if __weft_i == $i {
                            // SAFETY: the tuple is pinned on the stack and
                            // never moved; each field is a structurally
                            // pinned future.
                            let __weft_fut = unsafe {
                                __weft_futs.as_mut().map_unchecked_mut(|t| &mut t.$i)
                            };
                            // A `let` of a `match` whose other arm
                            // diverges, as Tokio's macro binds it: a
                            // future whose output type nothing else fixes
                            // (`poll_fn(|_| panic!())` in a disabled
                            // branch) then falls back to `()` there too.
                            let mut __weft_v = match ::core::future::Future::poll(__weft_fut, cx) {
                                ::core::task::Poll::Ready(__weft_v) => __weft_v,
                                ::core::task::Poll::Pending => {
                                    __weft_pending = true;
                                    continue;
                                }
                            };
                            // A completed future is never polled again.
                            __weft_mask |= 1u64 << $i;
                            // Whether it matches, without moving it: the
                            // guard sees the bindings borrowed and refuses
                            // the arm (whose move the borrow checker sees
                            // only on a path that diverges), so `mut`,
                            // `ref` and `ref mut` bindings work as written.
                            let mut __weft_matches = false;
                            match __weft_v {
                                $p if {
                                    __weft_matches = true;
                                    false
                                } => ::core::unreachable!(),
                                _ => {}
                            }
                            if __weft_matches {
                                return ::core::task::Poll::Ready(
                                    $crate::macros_support::SelectOut::$o(__weft_v),
                                );
                            }
                        }
                    )+
                }
                if __weft_pending {
                    ::core::task::Poll::Pending
                } else {
                    ::core::task::Poll::Ready($crate::macros_support::SelectOut::Disabled)
                }
            })
            .await
        };
        #[allow(unreachable_patterns, unreachable_code)]
        let __weft_result = match __weft_out {
            $(
                $crate::macros_support::SelectOut::$o($p) => $h,
            )+
            $crate::macros_support::SelectOut::Disabled => $else,
            _ => ::core::unreachable!("select!: the winner's value did not match"),
        };
        __weft_result
    }};
}

/// `_`, once per branch: the output enum's type arguments are inferred for
/// the branches there are, and the rest default to `()`.
#[doc(hidden)]
#[macro_export]
macro_rules! __select_infer {
    ($i:tt) => {
        _
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __select_one {
    ($i:tt) => {
        1
    };
}
