//! Loom models of the op table's handshake (ops.rs): the thread reaping a
//! ring's completions against the op's owner polling, abandoning, or
//! cancelling it, each under the ring's mutex as `Ring` does; and tasks
//! sharing an op joining its waiter list against a completion
//! (waiters.rs).

use super::ops::{Abandoned, Completed, Leave, OpKey, OpTable, Polled, SlotKind};
use crate::loom::{lock, thread, Arc, AtomicBool, Mutex, Ordering};
use std::task::{Wake, Waker};

struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// A completion racing the owner's poll: either the poll takes the result,
/// or it leaves a waker that the completion calls. Never both, never
/// neither, and the slot is free afterwards.
#[test]
fn loom_completion_and_poll_never_lose_the_result() {
    loom::model(|| {
        let table = Arc::new(Mutex::new(OpTable::default()));
        let key = lock(&table).insert(vec![0; 8], None);
        let reaper = {
            let table = table.clone();
            thread::spawn(move || {
                let completed = lock(&table).complete(key.user_data(), 5);
                if let Completed::Wake(Some(w)) = completed {
                    w.wake();
                }
            })
        };
        let flag = std::sync::Arc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(flag.clone());
        let first = lock(&table).poll(key, &waker);
        reaper.join().unwrap();
        match first {
            Polled::Done { result, .. } => assert_eq!(result, 5),
            Polled::Pending => {
                assert!(
                    flag.0.load(Ordering::Acquire),
                    "the completion came after the poll but did not wake it"
                );
                match lock(&table).poll(key, &waker) {
                    Polled::Done { result, .. } => assert_eq!(result, 5),
                    Polled::Pending => panic!("woken, yet the result is not there"),
                }
            }
        }
        let mut table = lock(&table);
        assert_eq!(table.in_flight(), 0);
        let reused = table.insert(Vec::new(), None);
        assert_ne!(reused, key, "a reused slot must carry a new generation");
    });
}

/// A completion racing the owner's abandon (a stream dropped mid-read): the
/// buffer stays in the table until the completion, and the slot is freed
/// exactly once, by whichever side comes second.
#[test]
fn loom_abandon_and_completion_free_the_slot_once() {
    loom::model(|| {
        let table = Arc::new(Mutex::new(OpTable::default()));
        let key = lock(&table).insert(vec![0; 8], None);
        let reaper = {
            let table = table.clone();
            thread::spawn(move || {
                let completed = lock(&table).complete(key.user_data(), 3);
                assert!(matches!(completed, Completed::Wake(None)));
            })
        };
        let (abandoned, _) = lock(&table).abandon(key, Leave::Cancel);
        {
            let table = lock(&table);
            if abandoned == Abandoned::CancelInKernel {
                // Until the completion arrives the kernel may write the
                // buffer: the slot must still count as in flight then.
                assert!(table.in_flight() <= 1);
            }
        }
        reaper.join().unwrap();
        let mut table = lock(&table);
        assert_eq!(table.in_flight(), 0);
        assert_eq!(table.cancellable_user_data().count(), 0);
        // Exactly one free slot: the next insert takes it, the one after
        // needs a new slot.
        let a = table.insert(Vec::new(), None);
        let b = table.insert(Vec::new(), None);
        assert_ne!(a.user_data() as u32, b.user_data() as u32);
    });
}

/// What a waiter's look at a shared op found.
#[derive(Debug, PartialEq)]
enum Looked {
    /// It took the result.
    Took(i32),
    /// Another took it first: no op in flight; it would start one (so it
    /// does not sleep).
    WouldStartAnother,
    /// The op is still in the kernel: it sleeps.
    Sleeps,
}

/// Two tasks waiting on one shared op while the reaper posts its
/// completion: each joins the waiter list (waiters.rs), then looks at the
/// op under its owner's state lock (and the op under the ring's), as a
/// stream's writer and its `writable()` waiters do with the send in
/// flight (send.rs). A task that sleeps is always woken, whichever way
/// the three interleave, and the result goes to one. (Written for a
/// listener's accept on the ring, and kept for a datagram socket's
/// receive, both readiness-based now.)
#[test]
fn loom_a_waiter_that_sleeps_is_always_woken() {
    use super::waiters::Waiters;
    loom::model(|| {
        let waiters = std::sync::Arc::new(Waiters::default());
        let table = Arc::new(Mutex::new(OpTable::default()));
        let op_waker = Waker::from(waiters.clone());
        let key = lock(&table).insert_op(vec![0; 8], Some(op_waker), SlotKind::Plain);
        // The owner's state: its op in flight.
        let state = Arc::new(Mutex::new(Some(key)));
        let reaper = {
            let table = table.clone();
            thread::spawn(move || {
                let completed = lock(&table).complete(key.user_data(), 42);
                // Woken after the lock is released, as `Ring` does.
                if let Completed::Wake(Some(w)) = completed {
                    w.wake();
                }
            })
        };
        let look = move |waiters: std::sync::Arc<Waiters>,
                         state: Arc<Mutex<Option<OpKey>>>,
                         table: Arc<Mutex<OpTable>>| {
            let flag = std::sync::Arc::new(Flag(AtomicBool::new(false)));
            waiters.join(&Waker::from(flag.clone()));
            let mut state = lock(&state);
            let looked = match *state {
                None => Looked::WouldStartAnother,
                Some(key) => match lock(&table).try_take(key) {
                    Some((result, _)) => {
                        *state = None;
                        Looked::Took(result)
                    }
                    None => Looked::Sleeps,
                },
            };
            (looked, flag)
        };
        let other = {
            let (waiters, state, table) = (waiters.clone(), state.clone(), table.clone());
            thread::spawn(move || look(waiters, state, table))
        };
        let mine = look(waiters, state, table);
        reaper.join().unwrap();
        let theirs = other.join().unwrap();
        let took = [&mine, &theirs]
            .iter()
            .filter(|(looked, _)| matches!(looked, Looked::Took(42)))
            .count();
        assert!(took <= 1, "one result, taken twice");
        for (looked, flag) in [mine, theirs] {
            if looked == Looked::Sleeps {
                assert!(
                    flag.0.load(Ordering::Acquire),
                    "a waiter went to sleep and was never woken"
                );
            }
        }
    });
}
