//! Loom models of the op table's handshake (ops.rs): the thread reaping a
//! ring's completions against the op's owner polling, abandoning, or
//! cancelling it, each under the ring's mutex as `Ring` does.

use super::ops::{Abandoned, Completed, OpTable, Polled};
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
        let (abandoned, _) = lock(&table).abandon(key, None);
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
