//! `join!` and `try_join!`: the order in which each poll visits the
//! futures (rotating by default, in order with `biased;`), when each is
//! dropped, which error `try_join!` returns and what it still polls after
//! it, many branches, the empty forms, and the task budget; and `pin!`'s
//! two forms and its drop order.

use crate::harness::Rec;
use crate::support::{block_on_plain, eval, poll_once, Later, Noisy, Script};

scenarios! {
    common {
        /// As in `select.rs`: spends the budget without yielding.
        async fn spend_budget(rec: &Rec) {
            let mut units = 0;
            while k::task::coop::has_budget_remaining() && units < 100_000 {
                k::task::consume_budget().await;
                units += 1;
            }
            rec.log(format!("spent {units} units of budget"));
        }

        fn spawn_marker(rec: &Rec) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
            let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (rec, flag) = (rec.clone(), ran.clone());
            k::spawn(async move {
                rec.log("other task runs");
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            ran
        }
    }

    fn join_rotates_the_first_future_polled(rec) {
        let got = current().block_on(async {
            k::join!(
                Script::after(rec, "a", 3, 'a'),
                Script::after(rec, "b", 1, 'b'),
                Script::after(rec, "c", 4, 'c'),
                Script::after(rec, "d", 2, 'd'),
            )
        });
        rec.log(format!("value {got:?}"));
    }

    fn expressions_and_into_future_in_order(rec) {
        let got = current().block_on(async {
            let joined = k::join!(
                eval(rec, "a", Later { name: "a", rec: rec.clone(), value: 1 }),
                eval(rec, "b", Later { name: "b", rec: rec.clone(), value: 2 }),
            );
            let tried = k::try_join!(
                eval(rec, "c", async { Ok::<u8, ()>(3) }),
                eval(rec, "d", async { Ok::<u8, ()>(4) }),
            );
            (joined, tried)
        });
        rec.log(format!("value {got:?}"));
    }

    fn join_biased_polls_in_order(rec) {
        let got = current().block_on(async {
            k::join!(
                biased;
                Script::after(rec, "a", 3, 'a'),
                Script::after(rec, "b", 1, 'b'),
                Script::after(rec, "c", 2, 'c'),
            )
        });
        rec.log(format!("value {got:?}"));
    }

    fn join_of_many_futures(rec) {
        let got = current().block_on(async {
            k::join!(
                Script::after(rec, "0", 0, 0), Script::after(rec, "1", 1, 1),
                Script::after(rec, "2", 2, 2), Script::after(rec, "3", 0, 3),
                Script::after(rec, "4", 1, 4), Script::after(rec, "5", 2, 5),
                Script::after(rec, "6", 0, 6), Script::after(rec, "7", 1, 7),
                Script::after(rec, "8", 2, 8), Script::after(rec, "9", 0, 9),
                Script::after(rec, "10", 1, 10), Script::after(rec, "11", 2, 11),
                Script::after(rec, "12", 0, 12), Script::after(rec, "13", 1, 13),
                Script::after(rec, "14", 2, 14), Script::after(rec, "15", 0, 15),
                Script::after(rec, "16", 1, 16), Script::after(rec, "17", 2, 17),
                Script::after(rec, "18", 0, 18), Script::after(rec, "19", 1, 19),
                Script::after(rec, "20", 2, 20), Script::after(rec, "21", 0, 21),
            )
        });
        // (Debug stops at 12-tuples.)
        rec.log(format!(
            "values {:?} {:?}",
            (got.0, got.1, got.2, got.3, got.4, got.5, got.6, got.7, got.8, got.9, got.10),
            (got.11, got.12, got.13, got.14, got.15, got.16, got.17, got.18, got.19, got.20, got.21),
        ));
        let got: Result<_, ()> = current().block_on(async {
            k::try_join!(
                async { Ok(0) }, async { Ok(1) }, async { Ok(2) }, async { Ok(3) },
                async { Ok(4) }, async { Ok(5) }, async { Ok(6) }, async { Ok(7) },
                async { Ok(8) }, async { Ok(9) }, async { Ok(10) }, async { Ok(11) },
                async { Ok(12) }, async { Ok(13) }, async { Ok(14) }, async { Ok(15) },
                async { Ok(16) }, async { Ok(17) }, async { Ok(18) }, async { Ok(19) },
                async { Ok(20) },
            )
        });
        let got = got.map(|v| (v.0, v.10, v.20));
        rec.log(format!("first, middle, last {got:?}"));
    }

    fn one_future(rec) {
        let got = current().block_on(async {
            let one = k::join!(Script::after(rec, "a", 1, 'a'));
            let biased = k::join!(biased; Script::ready(rec, "b", 'b'),);
            (one, biased)
        });
        rec.log(format!("value {got:?}"));
    }

    fn the_empty_forms(rec) {
        let rt = current();
        // (Their value is `()`, whose type the `let`s below check.)
        let got: ((), ()) = rt.block_on(async { (k::join!(), k::join!(biased;)) });
        rec.log(format!("join!() and join!(biased;): {got:?}"));
        let got: Result<(), u8> = rt.block_on(async { k::try_join!() });
        rec.log(format!("try_join!(): {got:?}"));
        let got: Result<(), u8> = rt.block_on(async { k::try_join!(biased;) });
        rec.log(format!("try_join!(biased;): {got:?}"));
    }

    fn try_join_returns_at_the_first_error(rec) {
        let got = current().block_on(async {
            k::try_join!(
                Script::after(rec, "a", 3, Ok::<char, String>('a')),
                Script::after(rec, "b", 1, Err::<char, String>("b failed".into())),
                Script::after(rec, "c", 4, Ok::<char, String>('c')),
            )
        });
        rec.log(format!("value {got:?}"));
        let got = current().block_on(async {
            k::try_join!(
                biased;
                Script::after(rec, "d", 0, Ok::<char, String>('d')),
                Script::after(rec, "e", 1, Err::<char, String>("e failed".into())),
                Script::after(rec, "f", 3, Ok::<char, String>('f')),
            )
        });
        rec.log(format!("value {got:?}"));
    }

    fn try_join_returns_the_error_polled_first(rec) {
        // Both fail at their second poll, which starts at the second
        // future: its error is the one returned.
        let got = current().block_on(async {
            k::try_join!(
                Script::after(rec, "a", 1, Err::<(), &str>("a failed")),
                Script::after(rec, "b", 1, Err::<(), &str>("b failed")),
                Script::after(rec, "c", 1, Ok::<(), &str>(())),
            )
        });
        rec.log(format!("value {got:?}"));
    }

    fn try_join_drops_done_outputs_with_the_rest(rec) {
        let got = current().block_on(async {
            k::try_join!(
                Script::ready(rec, "a", Ok::<Noisy, u8>(Noisy("a's value", rec.clone()))),
                Script::after(rec, "b", 1, Err::<Noisy, u8>(7)),
                Script::<Result<(), u8>>::never(rec, "c"),
            )
        });
        rec.log(format!("value {:?}", got.map(|_| ())));
    }

    fn a_panicking_future_drops_the_others(rec) {
        rec.catch_where("join with a panicking future", || {
            current().block_on(async {
                k::join!(
                    Script::after(rec, "a", 1, ()),
                    async {
                        let _guard = Noisy("b's guard", rec.clone());
                        Script::<()>::after(rec, "b", 1, ()).await;
                        panic!("future b panics");
                    },
                    Script::ready(rec, "c", Noisy("c's value", rec.clone())),
                )
            });
        });
    }

    fn try_join_all_ok(rec) {
        let got = current().block_on(async {
            k::try_join!(
                Script::after(rec, "a", 2, Ok::<u8, ()>(1)),
                Script::after(rec, "b", 0, Ok::<u8, ()>(2)),
            )
        });
        rec.log(format!("value {got:?}"));
    }

    fn join_with_a_spent_budget(rec) {
        current().block_on(async {
            let other = spawn_marker(rec);
            spend_budget(rec).await;
            let v = k::join!(Script::ready(rec, "a", 1u8), Script::ready(rec, "b", 2u8));
            rec.log(format!(
                "join value {v:?}; the other task had run: {}",
                other.load(std::sync::atomic::Ordering::SeqCst)
            ));
        });
        current().block_on(async {
            let other = spawn_marker(rec);
            spend_budget(rec).await;
            let v = k::try_join!(Script::ready(rec, "c", Ok::<u8, ()>(3)));
            rec.log(format!(
                "try_join value {v:?}; the other task had run: {}",
                other.load(std::sync::atomic::Ordering::SeqCst)
            ));
        });
    }

    fn a_join_loop_yields_once_the_budget_is_spent(rec) {
        current().block_on(async {
            let other = spawn_marker(rec);
            let mut rounds = 0u32;
            while !other.load(std::sync::atomic::Ordering::SeqCst) && rounds < 100_000 {
                k::join!(k::task::consume_budget(), async {});
                rounds += 1;
            }
            rec.log(format!("join rounds before the other task ran: {rounds}"));
        });
    }

    fn dropped_while_pending(rec) {
        let mut joined = Box::pin(async {
            k::join!(
                Script::<()>::never(rec, "a"),
                Script::ready(rec, "b", Noisy("b's output", rec.clone())),
                Script::<()>::never(rec, "c"),
            )
        });
        rec.log(format!("join ready at the first poll: {}", poll_once(joined.as_mut())));
        drop(joined);
        rec.log("join dropped");
        let mut tried = Box::pin(async {
            k::try_join!(
                Script::<Result<(), ()>>::never(rec, "d"),
                Script::ready(rec, "e", Ok::<_, ()>(Noisy("e's output", rec.clone()))),
            )
        });
        rec.log(format!("try_join ready at the first poll: {}", poll_once(tried.as_mut())));
        drop(tried);
        rec.log("try_join dropped");
    }

    fn outside_any_runtime(rec) {
        // Polled by a plain executor: no budget, no runtime context.
        let got = block_on_plain(async {
            let joined = k::join!(Script::after(rec, "a", 2, 1u8), Script::ready(rec, "b", 2u8));
            let tried = k::try_join!(Script::after(rec, "c", 1, Ok::<u8, ()>(3)));
            let selected = k::select! {
                v = Script::after(rec, "d", 1, 4u8) => v,
            };
            (joined, tried, selected)
        });
        rec.log(format!("value {got:?}"));
    }

    fn pin_binds_several_and_lets(rec) {
        current().block_on(async {
            {
                let a = Script::after(rec, "a", 1, 1u8);
                let b = Script::ready(rec, "b", 2u8);
                k::pin!(a, b);
                let (x, y) = ((&mut a).await, b.as_mut().await);
                rec.log(format!("pinned values {x} {y}"));
                k::pin! {
                    let c = Script::ready(rec, "c", 3u8);
                    let d = Script::ready(rec, "d", 4u8);
                }
                rec.log(format!("let values {} {}", c.as_mut().await, (&mut d).await));
                rec.log("end of scope");
            }
            rec.log("after the scope");
        });
    }
}
