//! `select!` (issue #11, item 2): fair random order, `biased;`,
//! preconditions, `else`, pattern fall-through, dropping the losing
//! branches, budget-aware loops, `&mut` pinned futures reused in a loop, and
//! 64 branches.

#[macro_use]
mod support;

use std::future::ready;

rt_test! {
    use std::future::ready;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn default_order_is_fair() {
        rt().block_on(async {
            let mut wins = [0u32; 3];
            for _ in 0..10_000 {
                let i = weft::select! {
                    v = ready(0) => v,
                    v = ready(1) => v,
                    v = ready(2) => v,
                };
                wins[i] += 1;
                // Keep the budget topped up: this test is about order.
                weft::task::yield_now().await;
            }
            for (i, w) in wins.iter().enumerate() {
                let share = f64::from(*w) / 10_000.0;
                assert!(
                    (share - 1.0 / 3.0).abs() < 0.1 / 3.0,
                    "branch {i} won {w} of 10,000 rounds: {wins:?}"
                );
            }
        });
    }

    #[test]
    fn biased_takes_the_first_ready_branch() {
        rt().block_on(async {
            for _ in 0..100 {
                let i = weft::select! {
                    biased;
                    v = ready(0) => v,
                    v = ready(1) => v,
                };
                assert_eq!(i, 0);
            }
        });
    }

    #[test]
    fn preconditions_and_else() {
        rt().block_on(async {
            let evaluated = AtomicUsize::new(0);
            let make = |v: u32| {
                evaluated.fetch_add(1, Ordering::SeqCst);
                ready(v)
            };
            let got = weft::select! {
                v = make(1), if false => v,
                v = make(2), if 1 + 1 == 2 => v,
            };
            assert_eq!(got, 2);
            // Every future expression is evaluated, disabled ones too (as
            // Tokio documents); the disabled one is never polled.
            assert_eq!(evaluated.load(Ordering::SeqCst), 2);
            let got = weft::select! {
                v = ready(1), if false => v,
                else => 99,
            };
            assert_eq!(got, 99);
        });
    }

    #[test]
    fn a_mismatched_pattern_falls_through_to_the_others() {
        rt().block_on(async {
            let (tx, mut rx) = weft::sync::mpsc::channel::<u8>(1);
            drop(tx); // recv() completes with None at once
            let got = weft::select! {
                biased;
                Some(v) = rx.recv() => u32::from(v),
                v = async {
                    weft::time::sleep(Duration::from_millis(1)).await;
                    7u32
                } => v,
            };
            assert_eq!(got, 7);
            let got = weft::select! {
                Some(v) = ready(None::<u8>) => u32::from(v),
                else => 5,
            };
            assert_eq!(got, 5);
        });
    }

    #[test]
    fn losing_branches_are_dropped_before_the_handler() {
        rt().block_on(async {
            struct DropFlag(Arc<AtomicBool>);
            impl Drop for DropFlag {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::SeqCst);
                }
            }
            let dropped = Arc::new(AtomicBool::new(false));
            let flag = DropFlag(dropped.clone());
            let loser = async move {
                let _flag = flag;
                std::future::pending::<()>().await;
            };
            let mut borrowed = String::from("x");
            weft::select! {
                _ = loser => unreachable!(),
                n = async { borrowed.len() } => {
                    // The futures (and their borrows) are gone already.
                    assert!(dropped.load(Ordering::SeqCst));
                    borrowed.push('y');
                    assert_eq!(n, 1);
                }
            }
            assert_eq!(borrowed, "xy");
        });
    }

    #[test]
    fn pinned_futures_are_reused_in_a_loop() {
        rt().block_on(async {
            let (tx, mut rx) = weft::sync::mpsc::channel::<u32>(8);
            let deadline = weft::time::sleep(Duration::from_millis(50));
            weft::pin!(deadline);
            weft::spawn(async move {
                for i in 0..3 {
                    tx.send(i).await.unwrap();
                }
                // Keep the channel open until the deadline.
                weft::time::sleep(Duration::from_secs(5)).await;
            });
            let mut got = Vec::new();
            loop {
                weft::select! {
                    Some(v) = rx.recv() => got.push(v),
                    _ = &mut deadline => break,
                }
            }
            assert_eq!(got, vec![0, 1, 2]);
        });
    }

    #[test]
    fn a_select_loop_over_ready_resources_yields() {
        rt().block_on(async {
            use weft::io::AsyncReadExt;
            let ticked = Arc::new(AtomicBool::new(false));
            let ticker = {
                let ticked = ticked.clone();
                weft::spawn(async move { ticked.store(true, Ordering::SeqCst) })
            };
            let mut a = weft::io::empty();
            let mut b = weft::io::repeat(1);
            let (mut ba, mut bb) = ([0u8; 1], [0u8; 1]);
            let mut rounds = 0u64;
            while !ticked.load(Ordering::SeqCst) {
                weft::select! {
                    r = a.read(&mut ba) => { r.unwrap(); }
                    r = b.read(&mut bb) => { r.unwrap(); }
                }
                rounds += 1;
                assert!(rounds < 10_000_000, "select! never yielded");
            }
            ticker.await.unwrap();
        });
    }
}

#[test]
#[should_panic(expected = "all branches are disabled and there is no else branch")]
fn all_disabled_without_else_panics() {
    weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(async {
            weft::select! {
                v = ready(1), if false => v,
            }
        });
}

/// Patterns bind as written: `ref mut` borrows the output mutably, `mut`
/// takes it by value into a mutable binding, `ref` borrows it.
#[test]
fn ref_mut_mut_and_ref_bindings() {
    weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(async {
            let got = weft::select! {
                Some(ref mut text) = async { Some(String::from("a")) } => {
                    text.push('b');
                    text.clone()
                }
            };
            assert_eq!(got, "ab");
            let got = weft::select! {
                (mut n, ref tail) = async { (1, [2, 3]) } => {
                    n += tail.iter().sum::<i32>();
                    n
                }
            };
            assert_eq!(got, 6);
        });
}

/// A disabled branch's future whose output type nothing fixes (a closure
/// that only panics) compiles, as on Tokio: its output falls back to `()`.
#[test]
fn a_disabled_branch_may_leave_its_output_type_open() {
    weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(async {
            let never = std::future::poll_fn(|_| panic!("a disabled branch was polled"));
            let got = weft::select! {
                _ = never, if false => 0,
                v = ready(7) => v,
            };
            assert_eq!(got, 7);
        });
}

#[test]
fn sixty_four_branches() {
    let got = weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(async {
            weft::select! {
                biased;
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v, v = std::future::pending::<u32>() => v,
                v = std::future::pending::<u32>() => v,
                v = ready(64u32) => v,
            }
        });
    assert_eq!(got, 64);
}

/// A `select!` future holds its futures, the poll closure (a pointer and
/// the 8-byte mask of disabled branches) and the async block's state:
/// nothing per branch beyond its future (no slot for its output), and
/// nothing that grows with the count.
#[cfg(target_pointer_width = "64")]
#[test]
fn select_futures_hold_only_their_futures_and_a_small_fixed_part() {
    use std::mem::size_of_val;
    let one = async {
        weft::select! { _ = ready(0u64) => {} }
    };
    let two = async {
        weft::select! { _ = ready(0u64) => {}, _ = ready(0u64) => {} }
    };
    let three = async {
        weft::select! { _ = ready(0u64) => {}, _ = ready(0u64) => {}, _ = ready(0u64) => {} }
    };
    let (one, two, three) = (size_of_val(&one), size_of_val(&two), size_of_val(&three));
    // One `Ready<u64>`: 16 bytes.
    assert_eq!(two - one, 16);
    assert_eq!(three - two, 16);
    assert_eq!(one, 16 + 16 + 8, "one branch");
    // Handlers bind values without making the future larger.
    let bound = async {
        weft::select! { v = ready(7u64) => v, w = ready(8u64) => w }
    };
    assert_eq!(size_of_val(&bound), two);
}
