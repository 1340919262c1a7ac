//! The op table's unit tests: each transition, and every order of up to
//! five steps checked against a model (`loom_ops.rs` has the races).

use super::*;
use std::task::Waker;

#[test]
fn a_completion_reaches_its_poller_once_then_the_slot_is_reused() {
    let mut table = OpTable::default();
    let key = table.insert(vec![0; 4], None);
    assert!(matches!(table.poll(key, Waker::noop()), Polled::Pending));
    // The poll left its waker: the completion hands it back to call.
    assert!(matches!(
        table.complete(key.user_data(), 3),
        Completed::Wake(Some(_))
    ));
    assert_eq!(table.in_flight(), 0);
    match table.poll(key, Waker::noop()) {
        Polled::Done { result, buf } => assert_eq!((result, buf.len()), (3, 4)),
        Polled::Pending => panic!("completed op still pending"),
    }
    // A stale completion for the old generation touches nothing.
    let next = table.insert(Vec::new(), None);
    assert_eq!(next.index, key.index);
    assert_ne!(next.generation, key.generation);
    assert!(matches!(
        table.complete(key.user_data(), 9),
        Completed::Wake(None)
    ));
    assert!(matches!(table.poll(next, Waker::noop()), Polled::Pending));
}

#[test]
fn take_done_leaves_the_owners_waker_for_the_completion() {
    let mut table = OpTable::default();
    let key = table.insert(Vec::new(), None);
    let woken = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    struct Flag(std::sync::Arc<std::sync::atomic::AtomicBool>);
    impl std::task::Wake for Flag {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let owner = Waker::from(std::sync::Arc::new(Flag(woken.clone())));
    assert!(matches!(table.poll(key, &owner), Polled::Pending));
    // Another caller waits on the op's end in the ring: its looks at the
    // slot must not take the owner's waker.
    assert!(matches!(table.take_done(key), Polled::Pending));
    let Completed::Wake(Some(waker)) = table.complete(key.user_data(), 5) else {
        panic!("the completion lost the owner's waker")
    };
    waker.wake();
    assert!(woken.load(std::sync::atomic::Ordering::SeqCst));
    match table.take_done(key) {
        Polled::Done { result, .. } => assert_eq!(result, 5),
        Polled::Pending => panic!("completed op still pending"),
    }
}

#[test]
fn a_live_send_that_ends_short_is_continued_and_its_owner_sees_the_total() {
    let mut table = OpTable::default();
    // A send of buf[100..1000] on fd 7: the owner's write already returned.
    let key = table.insert_op(vec![0; 1000], None, SlotKind::Send(LiveSend::new(7, 100)));
    // 300 bytes out: the table sends the rest itself, from 400.
    let Completed::Resend {
        key: again,
        fd,
        len,
        ..
    } = table.complete(key.user_data(), 300)
    else {
        panic!("a short live send was not continued")
    };
    assert_eq!((again, fd, len), (key, 7, 600));
    assert_eq!(table.in_flight(), 1, "still the kernel's");
    // Interrupted: the same rest again.
    let Completed::Resend { len, .. } = table.complete(key.user_data(), -libc::EINTR) else {
        panic!("an interrupted live send was not continued")
    };
    assert_eq!(len, 600);
    // The rest goes out: the owner, looking later, sees all 900 bytes.
    assert!(matches!(
        table.complete(key.user_data(), 600),
        Completed::Wake(None)
    ));
    match table.poll(key, Waker::noop()) {
        Polled::Done { result, .. } => assert_eq!(result, 900),
        Polled::Pending => panic!("finished send still pending"),
    }
}

#[test]
fn a_live_send_that_fails_after_progress_reports_the_progress() {
    let mut table = OpTable::default();
    let key = table.insert_op(vec![0; 1000], None, SlotKind::Send(LiveSend::new(7, 0)));
    assert!(matches!(
        table.complete(key.user_data(), 250),
        Completed::Resend { .. }
    ));
    // The peer is gone: the owner sees the 250 bytes (a short send), and
    // meets the error when it sends the rest, as with a socket's send.
    assert!(matches!(
        table.complete(key.user_data(), -libc::EPIPE),
        Completed::Wake(None)
    ));
    match table.poll(key, Waker::noop()) {
        Polled::Done { result, .. } => assert_eq!(result, 250),
        Polled::Pending => panic!("failed send still pending"),
    }
    // Failing with nothing sent is the error itself.
    let key = table.insert_op(vec![0; 10], None, SlotKind::Send(LiveSend::new(7, 0)));
    let _ = table.complete(key.user_data(), -libc::EPIPE);
    match table.poll(key, Waker::noop()) {
        Polled::Done { result, .. } => assert_eq!(result, -libc::EPIPE),
        Polled::Pending => panic!("failed send still pending"),
    }
}

#[test]
fn a_live_send_abandoned_mid_way_goes_on_from_where_the_table_got_to() {
    let mut table = OpTable::default();
    let key = table.insert_op(vec![0; 1000], None, SlotKind::Send(LiveSend::new(7, 0)));
    assert!(matches!(
        table.complete(key.user_data(), 400),
        Completed::Resend { .. }
    ));
    // The stream is dropped: its send becomes an orphan on a duplicate,
    // which the owner names with where *it* thinks the send began (0).
    let orphan = OrphanSend {
        fd: 9,
        from: 0,
        shutdown: false,
    };
    assert_eq!(
        table.abandon(key, Leave::Send(orphan)),
        (Abandoned::CancelInKernel, None)
    );
    // The next short completion continues from 400 + 100 on the duplicate.
    let Completed::Resend { fd, len, .. } = table.complete(key.user_data(), 100) else {
        panic!("the orphan was not continued")
    };
    assert_eq!((fd, len), (9, 500));
}

#[test]
fn an_abandoned_op_keeps_its_buffer_until_its_completion() {
    let mut table = OpTable::default();
    let key = table.insert(vec![7; 8], None);
    assert_eq!(
        table.abandon(key, Leave::Cancel),
        (Abandoned::CancelInKernel, None)
    );
    assert_eq!(table.in_flight(), 1);
    assert_eq!(
        table.cancellable_user_data().collect::<Vec<_>>(),
        [key.user_data()]
    );
    // The slot is not reused while the kernel may write the buffer.
    let other = table.insert(Vec::new(), None);
    assert_ne!(other.index, key.index);
    assert!(matches!(
        table.complete(key.user_data(), -125),
        Completed::Wake(None)
    ));
    assert_eq!(table.in_flight(), 1);
    let reused = table.insert(Vec::new(), None);
    assert_eq!(reused.index, key.index);
}

#[test]
fn an_orphaned_send_continues_to_its_last_byte_then_hands_back_its_descriptor() {
    let mut table = OpTable::default();
    let key = table.insert(vec![1; 10], None);
    let send = OrphanSend {
        fd: 42,
        from: 0,
        shutdown: true,
    };
    assert_eq!(
        table.abandon(key, Leave::Send(send)),
        (Abandoned::CancelInKernel, None)
    );
    match table.complete(key.user_data(), 4) {
        Completed::Resend {
            key: k, fd, len, ..
        } => assert_eq!((k, fd, len), (key, 42, 6)),
        other => panic!("a short orphaned send must continue: {other:?}"),
    }
    // Interrupted by the kernel: the same rest again.
    match table.complete(key.user_data(), -libc::ECANCELED) {
        Completed::Resend { len, .. } => assert_eq!(len, 6),
        other => panic!("{other:?}"),
    }
    match table.complete(key.user_data(), 6) {
        Completed::Finished(s) => assert_eq!(s, OrphanSend { from: 4, ..send }),
        other => panic!("a complete orphaned send must finish: {other:?}"),
    }
    assert_eq!(table.in_flight(), 0);
    // While the ring closes, an orphaned send ends at once.
    let key = table.insert(vec![1; 10], None);
    let _ = table.abandon(key, Leave::Send(send));
    table.close();
    assert!(matches!(
        table.complete(key.user_data(), 4),
        Completed::Finished(_)
    ));
}

#[test]
fn a_detached_op_is_never_offered_for_cancelling_and_frees_on_completion() {
    let mut table = OpTable::default();
    let cancelled = table.insert(Vec::new(), None);
    let kept = table.insert(vec![5; 16], None);
    let _ = table.abandon(cancelled, Leave::Cancel);
    let _ = table.abandon(kept, Leave::Detach);
    assert_eq!(
        table.cancellable_user_data().collect::<Vec<_>>(),
        [cancelled.user_data()]
    );
    assert_eq!(table.in_flight(), 2);
    // Even while the ring closes, a detached op just ends.
    table.close();
    assert!(matches!(
        table.complete(kept.user_data(), 16),
        Completed::Wake(None)
    ));
    assert_eq!(table.in_flight(), 1);
    // A detached op that had completed is freed at once.
    let done = table.insert(Vec::new(), None);
    let _ = table.complete(done.user_data(), 0);
    let _ = table.abandon(done, Leave::Detach);
    assert_eq!(table.in_flight(), 1);
    assert_eq!(table.insert(Vec::new(), None).index, done.index);
}

/// One step in an op's life, for the order matrix below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    /// The kernel's completion arrives (whole: a send sent all).
    Complete,
    /// The owner polls (takes the result if it is there).
    Poll,
    /// The owner looks without a waker (`try_take`).
    TryTake,
    /// The owner is dropped: a receive (cancelled in the kernel).
    Abandon,
    /// The owner is dropped: a send the table finishes.
    AbandonSend,
    /// The owner leaves a file write to run to its end.
    Detach,
    /// The ring shuts down.
    Close,
}

/// What the table must show after each step, from a plain model.
#[derive(Debug, Default, Clone, Copy)]
struct Model {
    completed: bool,
    taken: bool,
    left: Option<Event>,
    closed: bool,
}

impl Model {
    /// Whether `event` can happen now (the owner acts only while it
    /// exists and has not taken the result; the kernel completes once).
    fn allows(&self, event: Event) -> bool {
        let owner = self.left.is_none() && !self.taken;
        match event {
            Event::Complete => !self.completed,
            Event::Close => !self.closed,
            Event::Poll | Event::TryTake | Event::Abandon | Event::Detach => owner,
            // A send's owner leaves before its result is taken.
            Event::AbandonSend => owner,
        }
    }

    fn in_kernel(&self) -> bool {
        !self.completed
    }
}

/// Every order of up to five steps among completion, poll, drop (of a
/// receive, a send, a file write) and shutdown: the buffer stays with
/// the table exactly while the kernel holds it, a result is handed out
/// at most once and only to an owner, a gone owner is never woken, and
/// teardown cancels exactly what is still in the kernel and not
/// detached.
#[test]
fn every_order_of_complete_poll_drop_and_shutdown_keeps_the_invariants() {
    use Event::*;
    const EVENTS: [Event; 7] = [Complete, Poll, TryTake, Abandon, AbandonSend, Detach, Close];
    let waker = Waker::noop();
    let mut checked = 0;
    let mut stack: Vec<Vec<Event>> = vec![Vec::new()];
    while let Some(prefix) = stack.pop() {
        // Replay the prefix on a fresh table against the model.
        let mut table = OpTable::default();
        let key = table.insert(vec![0; 8], Some(waker.clone()));
        let mut model = Model::default();
        for &event in &prefix {
            match event {
                Complete => {
                    let completed = table.complete(key.user_data(), 8);
                    match (model.left, completed) {
                        // The owner (even a gone one's slot) is woken
                        // only while the owner exists.
                        (None, Completed::Wake(_)) => {}
                        (Some(AbandonSend), Completed::Finished(send)) => {
                            assert_eq!(send.fd, -1, "{prefix:?}")
                        }
                        (Some(Abandon | Detach), Completed::Wake(None)) => {}
                        (left, other) => panic!("{prefix:?}: {left:?} got {other:?}"),
                    }
                    model.completed = true;
                }
                Poll => match table.poll(key, waker) {
                    Polled::Done { result, buf } => {
                        assert!(model.completed, "{prefix:?}: a result before completion");
                        assert_eq!((result, buf.len()), (8, 8), "{prefix:?}");
                        model.taken = true;
                    }
                    Polled::Pending => assert!(!model.completed, "{prefix:?}: lost result"),
                },
                TryTake => match table.try_take(key) {
                    Some(_) => {
                        assert!(model.completed, "{prefix:?}");
                        model.taken = true;
                    }
                    None => assert!(!model.completed, "{prefix:?}: lost result"),
                },
                Abandon => {
                    let (abandoned, send) = table.abandon(key, Leave::Cancel);
                    assert!(send.is_none());
                    let expect = if model.completed {
                        Abandoned::Freed
                    } else {
                        Abandoned::CancelInKernel
                    };
                    assert_eq!(abandoned, expect, "{prefix:?}");
                    model.left = Some(Abandon);
                }
                AbandonSend => {
                    let send = OrphanSend {
                        fd: -1,
                        from: 0,
                        shutdown: false,
                    };
                    match table.abandon(key, Leave::Send(send)) {
                        (Abandoned::CancelInKernel, None) => assert!(!model.completed),
                        (Abandoned::Replay(result), None) => {
                            assert!(model.completed, "{prefix:?}");
                            // What the ring does with a replay: the
                            // send is over, its descriptor handed back.
                            assert!(matches!(
                                table.complete(key.user_data(), result),
                                Completed::Finished(_)
                            ));
                        }
                        other => panic!("{prefix:?}: {other:?}"),
                    }
                    model.left = Some(AbandonSend);
                }
                Detach => {
                    let _ = table.abandon(key, Leave::Detach);
                    model.left = Some(Detach);
                }
                Close => {
                    table.close();
                    model.closed = true;
                }
            }
            // The table's view against the model after every step.
            let held = model.in_kernel();
            assert_eq!(table.in_flight(), usize::from(held), "{prefix:?}");
            let cancellable = table.cancellable_user_data().any(|u| u == key.user_data());
            // Detached writes never; orphaned sends only once the ring
            // gives its sends up.
            let spared = match model.left {
                Some(Detach) => true,
                Some(AbandonSend) => !model.closed,
                _ => false,
            };
            assert_eq!(cancellable, held && !spared, "{prefix:?}");
            // Free means reusable: free state, on the free list, and a
            // new generation (so a stale completion cannot name it).
            let slot = &table.slots[key.index as usize];
            let slot_free = matches!(slot.state, State::Free)
                && table.free.contains(&key.index)
                && slot.generation != key.generation;
            assert_eq!(
                slot_free,
                !held && (model.taken || model.left.is_some()),
                "{prefix:?}: the slot was freed too early or never"
            );
        }
        checked += 1;
        if prefix.len() < 5 {
            for event in EVENTS {
                let mut model = Model::default();
                for &e in &prefix {
                    match e {
                        Complete => model.completed = true,
                        Poll | TryTake if model.completed => model.taken = true,
                        Abandon | AbandonSend | Detach => model.left = Some(e),
                        Close => model.closed = true,
                        _ => {}
                    }
                }
                if model.allows(event) {
                    let mut next = prefix.clone();
                    next.push(event);
                    stack.push(next);
                }
            }
        }
    }
    // Not a vacuous walk: every event was reached in many orders.
    assert!(checked > 500, "only {checked} orders");
}

#[test]
fn a_descriptor_nobody_takes_is_handed_back_to_close() {
    let mut table = OpTable::default();
    // Orphaned before its completion: the new descriptor comes back.
    let key = table.insert_op(vec![0; 4], None, SlotKind::MakesFd);
    let _ = table.abandon(key, Leave::Cancel);
    assert!(matches!(
        table.complete(key.user_data(), 7),
        Completed::CloseFd(7)
    ));
    // Completed, then given up: the same, through `abandon`.
    let key = table.insert_op(Vec::new(), None, SlotKind::MakesFd);
    let _ = table.complete(key.user_data(), 8);
    assert_eq!(
        table.abandon(key, Leave::Cancel),
        (Abandoned::FreedClosing(8), None)
    );
    // A failed open made no descriptor.
    let key = table.insert_op(Vec::new(), None, SlotKind::MakesFd);
    let _ = table.abandon(key, Leave::Cancel);
    assert!(matches!(
        table.complete(key.user_data(), -libc::ENOENT),
        Completed::Wake(None)
    ));
    // Taken by its owner: nothing to close.
    let key = table.insert_op(Vec::new(), None, SlotKind::MakesFd);
    let _ = table.complete(key.user_data(), 9);
    assert_eq!(table.try_take(key).map(|(r, _)| r), Some(9));
    // A slot reused for an op whose result is a count closes nothing.
    let key = table.insert(Vec::new(), None);
    let _ = table.abandon(key, Leave::Cancel);
    assert!(matches!(
        table.complete(key.user_data(), 10),
        Completed::Wake(None)
    ));
    assert_eq!(table.in_flight(), 0);
}

#[test]
fn internal_user_data_names_no_slot() {
    let mut table = OpTable::default();
    let _ = table.insert(Vec::new(), None);
    assert!(matches!(
        table.complete(INTERNAL_USER_DATA, 0),
        Completed::Wake(None)
    ));
    assert_eq!(table.in_flight(), 1);
}
