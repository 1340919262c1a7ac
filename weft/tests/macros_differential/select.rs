//! `select!`: which branch futures are polled, in what order, when they
//! are evaluated and dropped, which handler runs and what the expression
//! gives; preconditions, pattern fall-through, `else`, the panic without
//! one, control flow out of handlers, `&mut` futures reused in a loop, the
//! task budget, and the random start of an unbiased `select!` (compared
//! only where the outcome does not depend on it, or loosely over many
//! runs).

use crate::harness::Rec;
use crate::support::{eval, poll_once, Later, Noisy, Script};

scenarios! {
    common {
        /// Spends the task's budget without yielding: `consume_budget`
        /// yields only once the budget is already spent. Logs how many
        /// units it took (bounded, in case a runtime gave no budget).
        async fn spend_budget(rec: &Rec) {
            let mut units = 0;
            while k::task::coop::has_budget_remaining() && units < 100_000 {
                k::task::consume_budget().await;
                units += 1;
            }
            rec.log(format!("spent {units} units of budget"));
        }

        /// A task that logs when it runs, and a flag saying it has.
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

    fn biased_polls_in_declaration_order(rec) {
        let got = current().block_on(async {
            k::select! {
                biased;
                v = Script::after(rec, "a", 2, 1u32) => { rec.log("handler a"); v }
                v = Script::after(rec, "b", 1, 2u32) => { rec.log("handler b"); v }
                v = Script::never(rec, "c") => { rec.log("handler c"); v }
            }
        });
        rec.log(format!("value {got}"));
    }

    fn forty_branches(rec) {
        let got = current().block_on(async {
            k::select! {
                biased;
                v = Script::never(rec, "0") => v,
                v = Script::never(rec, "1") => v,
                v = Script::never(rec, "2") => v,
                v = Script::never(rec, "3") => v,
                v = Script::never(rec, "4") => v,
                v = Script::never(rec, "5") => v,
                v = Script::never(rec, "6") => v,
                v = Script::never(rec, "7") => v,
                v = Script::never(rec, "8") => v,
                v = Script::never(rec, "9") => v,
                v = Script::never(rec, "10") => v,
                v = Script::never(rec, "11") => v,
                v = Script::never(rec, "12") => v,
                v = Script::never(rec, "13") => v,
                v = Script::never(rec, "14") => v,
                v = Script::never(rec, "15") => v,
                v = Script::never(rec, "16") => v,
                v = Script::never(rec, "17") => v,
                v = Script::never(rec, "18") => v,
                v = Script::never(rec, "19") => v,
                v = Script::never(rec, "20") => v,
                v = Script::never(rec, "21") => v,
                v = Script::never(rec, "22") => v,
                v = Script::never(rec, "23") => v,
                v = Script::never(rec, "24") => v,
                v = Script::never(rec, "25") => v,
                v = Script::never(rec, "26") => v,
                v = Script::never(rec, "27") => v,
                v = Script::never(rec, "28") => v,
                v = Script::never(rec, "29") => v,
                v = Script::never(rec, "30") => v,
                v = Script::never(rec, "31") => v,
                v = Script::never(rec, "32") => v,
                v = Script::never(rec, "33") => v,
                v = Script::never(rec, "34") => v,
                v = Script::never(rec, "35") => v,
                v = Script::never(rec, "36") => v,
                v = Script::never(rec, "37") => v,
                v = Script::never(rec, "38") => v,
                v = Script::after(rec, "39", 1, 39u8) => v,
            }
        });
        rec.log(format!("value {got}"));
    }

    fn preconditions_then_futures_are_evaluated(rec) {
        let got = current().block_on(async {
            k::select! {
                biased;
                v = eval(rec, "future a", Script::ready(rec, "a", 1u32)),
                    if eval(rec, "condition a", false) => v,
                v = eval(rec, "future b", Script::after(rec, "b", 1, 2u32)),
                    if eval(rec, "condition b", true) => v,
                v = eval(rec, "future c", Script::ready(rec, "c", 3u32)),
                    if eval(rec, "condition c", false) => v,
            }
        });
        rec.log(format!("value {got}"));
    }

    fn into_future_is_called_after_every_expression(rec) {
        let got = current().block_on(async {
            k::select! {
                biased;
                v = eval(rec, "a", Later { name: "a", rec: rec.clone(), value: 1 }) => v,
                v = eval(rec, "b", Later { name: "b", rec: rec.clone(), value: 2 }) => v,
            }
        });
        rec.log(format!("value {got}"));
    }

    fn a_mismatched_pattern_disables_its_branch(rec) {
        let got = current().block_on(async {
            k::select! {
                biased;
                Ok(n) = Script::ready(rec, "a", Err::<Noisy, _>(Noisy("a's output", rec.clone()))) => {
                    rec.log("handler a");
                    n.0
                }
                Some(v) = Script::after(rec, "b", 1, None::<&'static str>) => {
                    rec.log("handler b");
                    v
                }
                Some(v) = Script::after(rec, "c", 2, Some("c")) => {
                    rec.log("handler c");
                    v
                }
            }
        });
        rec.log(format!("value {got}"));
    }

    fn patterns_with_mut_and_ref_bindings(rec) {
        let got = current().block_on(async {
            let a = k::select! {
                (mut s, n) = Script::ready(rec, "a", (String::from("a"), 1u8)) => {
                    s.push('!');
                    format!("{s}{n}")
                }
            };
            let b = k::select! {
                biased;
                Some(mut s) = Script::ready(rec, "b", None::<String>) => {
                    s.push('?');
                    s
                }
                Some(ref s) = Script::after(rec, "c", 1, Some(String::from("c"))) => s.clone(),
            };
            (a, b)
        });
        rec.log(format!("value {got:?}"));
    }

    fn handlers_use_what_the_futures_borrowed(rec) {
        let got = current().block_on(async {
            let mut n = 1u32;
            let mut s = String::from("s");
            k::select! {
                _ = async { n += 1 } => {
                    n *= 10;
                    s.push('!');
                }
                _ = async { s.push('?') }, if false => {}
            }
            (n, s)
        });
        rec.log(format!("value {got:?}"));
    }

    fn a_panicking_branch_drops_the_others(rec) {
        rec.catch_where("select with a panicking branch", || {
            current().block_on(async {
                k::select! {
                    biased;
                    _ = Script::<()>::after(rec, "a", 1, ()) => rec.log("handler a"),
                    _ = async {
                        let _guard = Noisy("b's guard", rec.clone());
                        Script::<()>::after(rec, "b", 1, ()).await;
                        panic!("branch b panics");
                    } => rec.log("handler b"),
                    _ = Script::<()>::never(rec, "c") => rec.log("handler c"),
                }
            })
        });
    }

    fn else_runs_when_every_branch_is_disabled(rec) {
        let rt = current();
        let got = rt.block_on(async {
            k::select! {
                v = Script::ready(rec, "a", 1u32), if false => v,
                v = Script::ready(rec, "b", 2u32), if 1 > 2 => v,
                else => { rec.log("else by preconditions"); 0 }
            }
        });
        rec.log(format!("value {got}"));
        let got = rt.block_on(async {
            k::select! {
                biased;
                Some(v) = Script::after(rec, "a", 1, None::<u32>) => v,
                Some(v) = Script::ready(rec, "b", None::<u32>) => v,
                else => { rec.log("else by patterns"); 0 }
            }
        });
        rec.log(format!("value {got}"));
    }

    fn else_alone(rec) {
        let rt = current();
        let got = rt.block_on(async { k::select! { else => eval(rec, "else", 5) } });
        rec.log(format!("value {got}"));
        let got = rt.block_on(async { k::select! { biased; else => eval(rec, "else", 6), } });
        rec.log(format!("value {got}"));
    }

    fn every_branch_disabled_without_else_panics(rec) {
        let rt = current();
        rec.catch_where("preconditions", || {
            rt.block_on(async {
                k::select! {
                    v = Script::ready(rec, "a", 1u32), if false => v,
                }
            })
        });
        rec.catch_where("patterns", || {
            rt.block_on(async {
                k::select! {
                    biased;
                    Some(v) = Script::ready(rec, "a", None::<u32>) => v,
                    Ok(v) = Script::after(rec, "b", 1, Err::<u32, ()>(())) => v,
                }
            })
        });
    }

    fn handlers_break_continue_return_and_question_mark(rec) {
        async fn early(rec: &Rec, leave: bool) -> &'static str {
            let v = k::select! {
                biased;
                v = Script::ready(rec, "r", leave) => if v { return "returned" } else { "kept" },
                _ = Script::<()>::never(rec, "n") => "never",
            };
            rec.log(format!("after select: {v}"));
            "fell through"
        }
        async fn question(rec: &Rec, fail: bool) -> Result<u32, String> {
            let out = if fail { Err("bad".to_string()) } else { Ok(5u32) };
            let v = k::select! {
                r = Script::ready(rec, "q", out) => r?,
            };
            rec.log("after ?");
            Ok(v + 1)
        }
        current().block_on(async {
            let mut round = 0u32;
            let v = loop {
                round += 1;
                k::select! {
                    biased;
                    v = Script::ready(rec, "x", round) => {
                        if v < 3 {
                            continue;
                        }
                        break v * 10;
                    }
                    _ = Script::<()>::never(rec, "y") => {}
                }
                rec.log("unreachable: every round continues or breaks");
            };
            rec.log(format!("loop gave {v} after {round} rounds"));
            rec.log(format!("early(true): {}", early(rec, true).await));
            rec.log(format!("early(false): {}", early(rec, false).await));
            rec.log(format!("question(false): {:?}", question(rec, false).await));
            rec.log(format!("question(true): {:?}", question(rec, true).await));
        });
    }

    fn futures_are_dropped_before_the_handler(rec) {
        current().block_on(async {
            // The winner's output bound by value lives until the handler
            // ends; bound to `_` it is not moved, and goes with the
            // select! expression.
            k::select! {
                biased;
                _ = Script::<()>::never(rec, "a") => {}
                n = Script::after(rec, "b", 1, Noisy("b's output", rec.clone())) => {
                    rec.log(format!("handler b has {}", n.0));
                }
                _ = Script::<()>::never(rec, "c") => {}
            }
            rec.log("after the first select");
            k::select! {
                biased;
                _ = Script::ready(rec, "d", Noisy("d's output", rec.clone())) => {
                    rec.log("handler d");
                }
                _ = Script::<()>::never(rec, "e") => {}
            }
            rec.log("after the second select");
        });
    }

    fn dropped_while_pending(rec) {
        let mut selected = Box::pin(async {
            k::select! {
                biased;
                _ = Script::<()>::never(rec, "a") => 1,
                Some(n) = Script::ready(rec, "b", None::<u8>) => n,
                _ = Script::<()>::never(rec, "c"), if false => 3,
                _ = Script::<()>::never(rec, "d") => 4,
            }
        });
        rec.log(format!("ready at the first poll: {}", poll_once(selected.as_mut())));
        drop(selected);
        rec.log("select dropped");
    }

    fn a_pinned_future_reused_across_a_loop(rec) {
        current().block_on(async {
            let slow = Script::after(rec, "slow", 3, "done");
            k::pin!(slow);
            let mut ticks = 0;
            loop {
                k::select! {
                    biased;
                    v = &mut slow => {
                        rec.log(format!("slow gave {v} after {ticks} ticks"));
                        break;
                    }
                    _ = Script::after(rec, "tick", 1, ()) => ticks += 1,
                }
            }
            // The pinned future is still there (done), until the scope ends.
            rec.log("loop over");
        });
    }

    fn a_spent_budget_makes_select_yield_first(rec) {
        current().block_on(async {
            let other = spawn_marker(rec);
            spend_budget(rec).await;
            let v = k::select! {
                biased;
                v = Script::ready(rec, "a", 1u32) => v,
            };
            rec.log(format!(
                "value {v}; the other task had run: {}",
                other.load(std::sync::atomic::Ordering::SeqCst)
            ));
        });
    }

    fn a_select_loop_yields_once_the_budget_is_spent(rec) {
        current().block_on(async {
            let other = spawn_marker(rec);
            let mut rounds = 0u32;
            while !other.load(std::sync::atomic::Ordering::SeqCst) && rounds < 100_000 {
                k::select! {
                    _ = k::task::consume_budget() => {}
                    _ = std::future::ready(()), if false => {}
                }
                rounds += 1;
            }
            rec.log(format!("select rounds before the other task ran: {rounds}"));
        });
    }

    fn a_select_loop_over_budgetless_futures_does_not_yield(rec) {
        current().block_on(async {
            let other = spawn_marker(rec);
            for _ in 0..1000 {
                k::select! {
                    _ = std::future::ready(1) => {}
                    _ = async { 2 } => {}
                }
            }
            rec.log(format!(
                "after 1000 rounds the other task had run: {}",
                other.load(std::sync::atomic::Ordering::SeqCst)
            ));
        });
    }

    fn unbiased_with_one_ready_branch(rec) {
        // Which of the pending ones are polled before the ready one
        // depends on the random start: only the outcome and the drops
        // are logged.
        let rt = current();
        for _ in 0..20 {
            let polls = Rec::new(rec.side);
            let got = rt.block_on(async {
                k::select! {
                    v = Script::never(&polls, "a") => v,
                    v = Script::ready(&polls, "b", 2u32) => v,
                    v = Script::never(&polls, "c") => v,
                }
            });
            let lines = polls.lines();
            let drops: Vec<_> = lines.iter().filter(|l| l.ends_with("drop")).collect();
            rec.log(format!(
                "value {got}, b polled {} time(s), drops {drops:?}",
                lines.iter().filter(|l| *l == "b poll").count()
            ));
        }
    }

    fn unbiased_order_is_a_rotation_drawn_at_each_poll(rec) {
        // Each poll visits every enabled branch once, in an order that is a
        // rotation of the declaration order. Over 200 runs: every branch
        // wins sometimes, and the start is drawn again at every poll (the
        // first branch polled at the second poll is not always the one
        // polled first at the first).
        let rt = current();
        let mut wins = [0u32; 3];
        let mut first_changed = false;
        let mut rotations = true;
        for _ in 0..200 {
            let polls = Rec::new(rec.side);
            let got = rt.block_on(async {
                k::select! {
                    v = Script::after(&polls, "0", 1, 0usize) => v,
                    v = Script::after(&polls, "1", 1, 1usize) => v,
                    v = Script::after(&polls, "2", 1, 2usize) => v,
                }
            });
            wins[got] += 1;
            let order: Vec<usize> = polls
                .lines()
                .iter()
                .filter_map(|l| l.strip_suffix(" poll"))
                .map(|n| n.parse().unwrap())
                .collect();
            // Three polls (all pending), then the winner's.
            rotations &= order.len() == 4
                && (0..3).all(|i| order[i] == (order[0] + i) % 3)
                && order[3] == got;
            first_changed |= order[3] != order[0];
        }
        rec.log(format!(
            "first poll a rotation: {rotations}; every branch won: {}; start drawn again: \
             {first_changed}",
            wins.iter().all(|&w| w > 0)
        ));
    }
}
