//! `#[main]` and `#[test]`: pairs of small functions, one with each crate's
//! attribute, called directly and compared by what their body sees: the
//! runtime's flavor (`local` too), worker count and name, whether time
//! starts paused, the thread it runs on, a spawned task, `block_in_place`,
//! the value it returns (an `Err` too) and a panic. The `#[test]` ones are
//! items inside their scenario, which calls them: the harness cannot see
//! them (`unnameable_test_items` is allowed for that).

#![allow(unnameable_test_items)]

use crate::harness::Rec;
use std::cell::RefCell;
use std::time::Duration;

thread_local! {
    /// The record of the scenario running on this thread: the annotated
    /// functions take no arguments, and their body runs on the caller's
    /// thread (inside `block_on`), so they find it here.
    static REC: RefCell<Option<Rec>> = const { RefCell::new(None) };
}

/// The current scenario's record.
fn current_rec() -> Rec {
    REC.with(|r| {
        r.borrow()
            .clone()
            .expect("no scenario record on this thread")
    })
}

/// Runs `f` with `rec` as the current scenario's record.
fn with_rec<T>(rec: &Rec, f: impl FnOnce() -> T) -> T {
    REC.with(|r| *r.borrow_mut() = Some(rec.clone()));
    let out = f();
    REC.with(|r| *r.borrow_mut() = None);
    out
}

scenarios! {
    common {
        /// Logs what a body sees of the runtime it runs on.
        async fn describe(label: &str) {
            let rec = current_rec();
            let handle = k::runtime::Handle::current();
            rec.log(format!(
                "{label}: {:?}, {} worker(s), named {:?}, on the caller's thread {:?}",
                handle.runtime_flavor(),
                handle.metrics().num_workers(),
                handle.name(),
                std::thread::current().name(),
            ));
            let spawned = k::spawn(async { 7 }).await;
            rec.log(format!("{label}: a spawned task gives {spawned:?}"));
        }

        /// Logs whether time is paused: a paused clock lets an hour's sleep
        /// end at once (`Instant` moves an hour, the wall clock does not).
        async fn sleep_an_hour(label: &str) {
            let (virt, wall) = (k::time::Instant::now(), std::time::Instant::now());
            k::time::sleep(Duration::from_secs(3600)).await;
            current_rec().log(format!(
                "{label}: slept {} s of virtual time in under a minute: {}",
                virt.elapsed().as_secs(),
                wall.elapsed() < Duration::from_secs(60),
            ));
        }

        #[k::main]
        async fn main() {
            describe("main").await;
        }

        #[k::main(flavor = "current_thread")]
        async fn main_current_thread() {
            describe("main current_thread").await;
        }

        #[k::main(flavor = "multi_thread", worker_threads = 3)]
        async fn main_three_workers() {
            describe("main multi_thread 3").await;
        }

        #[k::main(worker_threads = 1)]
        async fn main_one_worker() {
            describe("main 1 worker").await;
        }

        #[k::main(flavor = "local")]
        async fn main_local() {
            describe("main local").await;
            let shared = std::rc::Rc::new(5);
            let local = k::task::spawn_local(async move { *shared + 1 }).await;
            current_rec().log(format!("main local: spawn_local of a !Send future gives {local:?}"));
        }

        #[k::main(flavor = "local", start_paused = true)]
        async fn main_local_paused() {
            sleep_an_hour("main local paused").await;
        }

        #[k::main(flavor = "current_thread", start_paused = true)]
        async fn main_paused() {
            sleep_an_hour("main paused").await;
        }

        /// The crate under another path, as a framework re-exporting it.
        mod renamed {
            pub(super) use super::k as rt;
        }

        #[k::main(crate = "renamed::rt")]
        async fn main_renamed_crate() {
            describe("main crate = renamed::rt").await;
        }

        #[k::main]
        async fn main_not_send() -> u32 {
            // The body need not be `Send`: it is only blocked on.
            let held = std::rc::Rc::new(40);
            k::task::yield_now().await;
            *held + 2
        }

        #[k::main(crate = "k")]
        async fn main_crate_path() {
            describe("main crate = k").await;
        }

        #[k::main(name = "macro-runtime")]
        async fn main_named() {
            describe("main named").await;
        }

        #[k::main(flavor = "current_thread", name = " ")]
        async fn main_blank_name() {
            current_rec().log("main_blank_name runs");
        }

        #[k::main]
        async fn main_err() -> Result<(), String> {
            current_rec().log("main_err runs");
            Err("main failed".to_string())
        }

        #[k::main]
        async fn main_question_mark(text: &str) -> Result<u32, Box<dyn std::error::Error>> {
            let n: u32 = text.parse()?;
            Ok(n * 2)
        }

        #[k::main(flavor = "current_thread")]
        async fn main_impl_trait() -> impl std::fmt::Debug {
            ("opaque", 1)
        }

        /// Logs, when dropped, whether it is dropped inside the runtime.
        struct Arg(&'static str);

        impl Drop for Arg {
            fn drop(&mut self) {
                current_rec().log(format!(
                    "{} drop, inside a runtime: {}",
                    self.0,
                    k::runtime::Handle::try_current().is_ok()
                ));
            }
        }

        #[k::main(flavor = "current_thread")]
        async fn main_arguments_dropped(used: Arg, read: Arg, _unused: Arg) -> usize {
            // A task that never ends: the runtime's shutdown drops it.
            let held = Arg("the task's value");
            k::spawn(async move {
                let _held = held;
                std::future::pending::<()>().await;
            });
            k::task::yield_now().await;
            let whole: &Arg = &read;
            let n = whole.0.len();
            drop(used);
            current_rec().log("body ends");
            n
        }

        #[k::main]
        async fn main_takes_arguments(a: u32, b: &str) -> String {
            format!("{b}{a}")
        }

        #[k::main(flavor = "current_thread")]
        async fn main_panics() {
            current_rec().log("main_panics runs");
            panic!("the body panics");
        }

        #[k::main(flavor = "current_thread")]
        async fn main_block_in_place_current() -> u8 {
            k::task::block_in_place(|| 1)
        }

        #[k::main]
        async fn main_block_in_place_multi() -> u8 {
            k::task::block_in_place(|| 2)
        }
    }

    fn main_attribute(rec) {
        with_rec(rec, || {
            main();
            main_current_thread();
            main_three_workers();
            main_one_worker();
            main_paused();
            main_local();
            main_local_paused();
            main_crate_path();
            main_renamed_crate();
            rec.log(format!("main_not_send: {}", main_not_send()));
            main_named();
            rec.misuse("a blank runtime name", main_blank_name);
            rec.log(format!("main_err: {:?}", main_err()));
            rec.log(format!("main_question_mark(21): {:?}", main_question_mark("21").ok()));
            rec.log(format!(
                "main_question_mark(x): {:?}",
                main_question_mark("x").map_err(|e| e.to_string())
            ));
            rec.log(format!("main_impl_trait: {:?}", main_impl_trait()));
            let n = main_arguments_dropped(Arg("used"), Arg("read"), Arg("unused"));
            rec.log(format!("main_arguments_dropped: {n}"));
            rec.log(format!("main_takes_arguments: {:?}", main_takes_arguments(4, "x")));
            rec.catch_where("main_panics", main_panics);
            rec.misuse("block_in_place on current_thread", main_block_in_place_current);
            rec.catch("block_in_place on multi_thread", main_block_in_place_multi);
        });
    }

    fn test_attribute(rec) {
        // Inner items, so the test harness does not also run them (one
        // returns `Err`, most need the record).
            #[k::test]
            async fn test_default() {
                describe("test").await;
            }

            #[k::test(flavor = "multi_thread", worker_threads = 2)]
            async fn test_two_workers() {
                describe("test multi_thread 2").await;
            }

            #[k::test(flavor = "local")]
            async fn test_local() {
                describe("test local").await;
                let local = k::task::spawn_local(async { std::rc::Rc::new(6) }).await;
                current_rec().log(format!("test local: spawn_local gives {local:?}"));
            }

            #[k::test(name = "test-runtime")]
            async fn test_named() {
                describe("test named").await;
            }

            #[k::test(flavor = "multi_thread")]
            async fn test_multi_thread() {
                let n = k::runtime::Handle::current().metrics().num_workers();
                let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
                current_rec().log(format!("test multi_thread: one worker per CPU: {}", n == cpus));
            }

            #[k::test(start_paused = true)]
            async fn test_paused() {
                sleep_an_hour("test paused").await;
            }

            #[k::test]
            async fn test_err() -> Result<(), String> {
                Err("test failed".to_string())
            }

            #[k::test]
            async fn test_ok() -> Result<(), String> {
                Ok(())
            }

            #[k::test]
            #[should_panic]
            async fn test_panics() {
                panic!("the test panics");
            }

        with_rec(rec, || {
            test_default();
            test_two_workers();
            test_named();
            test_local();
            test_multi_thread();
            test_paused();
            rec.log(format!("test_err: {:?}", test_err()));
            rec.log(format!("test_ok: {:?}", test_ok()));
            rec.catch_where("test_panics", test_panics);
        });
    }
}
