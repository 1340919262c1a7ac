use super::*;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize};
use std::sync::Mutex;

/// Records every batch separately so tests can count calls.
#[derive(Default)]
struct Sink<T>(RefCell<Vec<Vec<T>>>);

impl<T> Overflow<T> for Sink<T> {
    fn push_batch<I: Iterator<Item = T>>(&self, iter: I) {
        self.0.borrow_mut().push(iter.collect());
    }
}

impl<T> Sink<T> {
    fn batches(&self) -> Vec<Vec<T>> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

fn drain<T>(local: &mut Local<T>) -> Vec<T> {
    iter::from_fn(|| local.pop()).collect()
}

/// Move an empty queue's positions so that it wraps soon after `start`.
fn start_at<T>(local: &Local<T>, start: u32) {
    assert!(!local.has_tasks());
    local
        .inner
        .head
        .store(pack(start, start), Ordering::Relaxed);
    local.inner.tail.store(start, Ordering::Relaxed);
}

fn fill(local: &mut Local<Box<usize>>, range: std::ops::Range<usize>) {
    let sink = Sink::default();
    for i in range {
        assert!(!local.push_back_or_overflow(Box::new(i), &sink));
    }
}

fn unbox(v: Vec<Box<usize>>) -> Vec<usize> {
    v.into_iter().map(|b| *b).collect()
}

#[test]
fn push_pop_is_fifo() {
    let (steal, mut local) = local::<Box<usize>>();
    assert_eq!(local.max_capacity(), LOCAL_QUEUE_CAPACITY);
    assert!(local.pop().is_none());
    fill(&mut local, 0..10);
    assert_eq!(local.len(), 10);
    assert_eq!(steal.len(), 10);
    assert!(local.has_tasks());
    assert_eq!(local.remaining_slots(), LOCAL_QUEUE_CAPACITY - 10);
    assert_eq!(unbox(drain(&mut local)), (0..10).collect::<Vec<_>>());
    assert!(!local.has_tasks());
    assert!(steal.is_empty());
}

#[test]
fn push_back_batch() {
    let (_steal, mut local) = local::<Box<usize>>();
    local.push_back((0..3).map(Box::new));
    local.push_back(iter::empty());
    local.push_back((3..LOCAL_QUEUE_CAPACITY).map(Box::new));
    assert_eq!(local.remaining_slots(), 0);
    assert_eq!(
        unbox(drain(&mut local)),
        (0..LOCAL_QUEUE_CAPACITY).collect::<Vec<_>>()
    );
}

#[test]
#[should_panic(expected = "does not fit")]
fn push_back_batch_that_does_not_fit_panics() {
    let (_steal, mut local) = local::<Box<usize>>();
    local.push_back((0..3).map(Box::new));
    local.push_back((0..LOCAL_QUEUE_CAPACITY - 2).map(Box::new));
}

#[test]
fn overflow_moves_half_plus_one() {
    let (steal, mut local) = local::<Box<usize>>();
    fill(&mut local, 0..LOCAL_QUEUE_CAPACITY);
    let sink = Sink::default();
    assert!(local.push_back_or_overflow(Box::new(1000), &sink));

    let batches = sink.batches();
    assert_eq!(batches.len(), 1, "overflow must be one push_batch call");
    let mut expect: Vec<usize> = (0..LOCAL_QUEUE_CAPACITY / 2).collect();
    expect.push(1000);
    assert_eq!(
        unbox(batches.into_iter().next().expect("one batch")),
        expect
    );

    assert_eq!(local.len(), LOCAL_QUEUE_CAPACITY / 2);
    assert_eq!(steal.len(), LOCAL_QUEUE_CAPACITY / 2);
    // Room again: the next push stays local.
    assert!(!local.push_back_or_overflow(Box::new(1001), &sink));
    assert!(sink.batches().is_empty());
    let mut expect: Vec<usize> = (LOCAL_QUEUE_CAPACITY / 2..LOCAL_QUEUE_CAPACITY).collect();
    expect.push(1001);
    assert_eq!(unbox(drain(&mut local)), expect);
}

#[test]
fn overflow_receiver_may_stop_early() {
    struct TakeOne(RefCell<Vec<Box<usize>>>);
    impl Overflow<Box<usize>> for TakeOne {
        fn push_batch<I: Iterator<Item = Box<usize>>>(&self, mut iter: I) {
            let n = LOCAL_QUEUE_CAPACITY / 2 + 1;
            assert_eq!(iter.size_hint(), (n, Some(n)));
            self.0.borrow_mut().extend(iter.next());
        }
    }
    let (_steal, mut local) = local::<Box<usize>>();
    fill(&mut local, 0..LOCAL_QUEUE_CAPACITY);
    let sink = TakeOne(RefCell::new(Vec::new()));
    assert!(local.push_back_or_overflow(Box::new(1000), &sink));
    assert_eq!(unbox(sink.0.into_inner()), vec![0]);
    // The rest of the batch was dropped, not left in the ring.
    assert_eq!(local.len(), LOCAL_QUEUE_CAPACITY / 2);
    drain(&mut local);
}

#[test]
fn overflow_while_steal_in_progress_sends_only_the_task() {
    let (_steal, mut local) = local::<Box<usize>>();
    fill(&mut local, 0..LOCAL_QUEUE_CAPACITY);
    // Play a stealer that has claimed the first two tasks.
    let claimed = local.inner.head.compare_exchange(
        pack(0, 0),
        pack(0, 2),
        Ordering::AcqRel,
        Ordering::Acquire,
    );
    assert!(claimed.is_ok());

    let sink = Sink::default();
    assert!(local.push_back_or_overflow(Box::new(1000), &sink));
    assert_eq!(
        sink.batches().into_iter().map(unbox).collect::<Vec<_>>(),
        vec![vec![1000]]
    );

    // The owner can still pop past the claim.
    assert_eq!(local.pop().map(|b| *b), Some(2));
    // Finish the fake steal and release the claim.
    // SAFETY: slots 0 and 1 were claimed above and hold tasks.
    let taken = unsafe { [*local.inner.take(0), *local.inner.take(1)] };
    assert_eq!(taken, [0, 1]);
    local.inner.head.store(pack(3, 3), Ordering::Release);
    assert_eq!(
        unbox(drain(&mut local)),
        (3..LOCAL_QUEUE_CAPACITY).collect::<Vec<_>>()
    );
}

#[test]
fn steal_takes_half_rounded_up_and_returns_one() {
    for len in [1, 2, 5, 6, LOCAL_QUEUE_CAPACITY] {
        let (steal, mut victim) = local::<Box<usize>>();
        let (_s2, mut thief) = local::<Box<usize>>();
        fill(&mut victim, 0..len);
        let expect_n = len - len / 2;

        let mut stolen = 99;
        let task = steal.steal_into(&mut thief, &mut stolen);
        assert_eq!(stolen, expect_n, "len {len}");
        // The returned task is the last of the stolen run.
        assert_eq!(task.map(|b| *b), Some(expect_n - 1));
        assert_eq!(thief.len(), expect_n - 1);
        assert_eq!(victim.len(), len - expect_n);
        assert_eq!(
            unbox(drain(&mut thief)),
            (0..expect_n - 1).collect::<Vec<_>>()
        );
        assert_eq!(
            unbox(drain(&mut victim)),
            (expect_n..len).collect::<Vec<_>>()
        );
    }
}

#[test]
fn steal_from_empty_returns_none() {
    let (steal, _victim) = local::<Box<usize>>();
    let (_s2, mut thief) = local::<Box<usize>>();
    let mut stolen = 7;
    assert!(steal.steal_into(&mut thief, &mut stolen).is_none());
    assert_eq!(stolen, 0);
}

#[test]
fn steal_refused_when_dst_more_than_half_full() {
    let (steal, mut victim) = local::<Box<usize>>();
    let (_s2, mut thief) = local::<Box<usize>>();
    fill(&mut victim, 0..10);
    fill(&mut thief, 100..100 + LOCAL_QUEUE_CAPACITY / 2 + 1);

    let mut stolen = 0;
    assert!(steal.steal_into(&mut thief, &mut stolen).is_none());
    assert_eq!(stolen, 0);
    assert_eq!(victim.len(), 10);

    // Exactly half full is still allowed.
    assert!(thief.pop().is_some());
    assert!(steal.steal_into(&mut thief, &mut stolen).is_some());
    assert_eq!(stolen, 5);
    drain(&mut thief);
    drain(&mut victim);
}

#[test]
fn steal_refused_while_another_steal_in_progress() {
    let (steal, mut victim) = local::<Box<usize>>();
    let (_s2, mut thief) = local::<Box<usize>>();
    fill(&mut victim, 0..4);
    victim.inner.head.store(pack(0, 1), Ordering::Release);
    let mut stolen = 0;
    assert!(steal.steal_into(&mut thief, &mut stolen).is_none());
    // Undo the fake claim so the victim can be drained.
    victim.inner.head.store(pack(0, 0), Ordering::Release);
    drain(&mut victim);
}

#[test]
fn positions_wrap_around_u32() {
    let (steal, mut victim) = local::<Box<usize>>();
    let (_s2, mut thief) = local::<Box<usize>>();
    start_at(&victim, u32::MAX - 3);
    start_at(&thief, u32::MAX - 1);

    fill(&mut victim, 0..LOCAL_QUEUE_CAPACITY);
    assert_eq!(victim.len(), LOCAL_QUEUE_CAPACITY);
    let sink = Sink::default();
    assert!(victim.push_back_or_overflow(Box::new(1000), &sink));
    assert_eq!(sink.batches()[0].len(), LOCAL_QUEUE_CAPACITY / 2 + 1);

    let mut stolen = 0;
    assert!(steal.steal_into(&mut thief, &mut stolen).is_some());
    assert_eq!(stolen, LOCAL_QUEUE_CAPACITY / 4);
    assert_eq!(thief.len(), stolen - 1);
    let a = unbox(drain(&mut thief));
    let b = unbox(drain(&mut victim));
    assert_eq!(a.len() + b.len() + 1, LOCAL_QUEUE_CAPACITY / 2);
}

#[test]
fn leftover_tasks_are_dropped_with_the_last_handle() {
    let counter = std::sync::Arc::new(());
    let (steal, mut local) = local::<std::sync::Arc<()>>();
    local.push_back(iter::repeat_with(|| counter.clone()).take(3));
    // A worker that panics drops its Local without draining it.
    let worker = std::thread::spawn(move || {
        let _local = local;
        panic!("worker panicked (expected by this test)");
    });
    assert!(worker.join().is_err());
    assert_eq!(std::sync::Arc::strong_count(&counter), 4);
    drop(steal);
    assert_eq!(std::sync::Arc::strong_count(&counter), 1);
}

#[test]
fn handles_are_send_and_sync() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<Local<Box<usize>>>();
    send::<Steal<Box<usize>>>();
    sync::<Steal<Box<usize>>>();
}

/// One owner pushes and pops 100k items while three stealers steal; every
/// item must come out exactly once, through pop, steal or overflow.
#[test]
fn stress_every_item_received_exactly_once() {
    const ITEMS: usize = 100_000;
    const STEALERS: usize = 3;

    struct Inject<'a>(&'a Mutex<Vec<usize>>);
    impl Overflow<usize> for Inject<'_> {
        fn push_batch<I: Iterator<Item = usize>>(&self, iter: I) {
            crate::loom::lock(self.0).extend(iter);
        }
    }

    let seen: Vec<AtomicU8> = (0..ITEMS).map(|_| AtomicU8::new(0)).collect();
    let record = |i: usize| {
        seen[i].fetch_add(1, Ordering::Relaxed);
    };
    let inject = Mutex::new(Vec::new());
    let done = AtomicBool::new(false);
    let steal_total = AtomicUsize::new(0);
    let (steal, mut owner) = local::<usize>();

    std::thread::scope(|s| {
        for _ in 0..STEALERS {
            let steal = steal.clone();
            let (record, done, steal_total) = (&record, &done, &steal_total);
            s.spawn(move || {
                let (_, mut mine) = local::<usize>();
                loop {
                    let finished = done.load(Ordering::Acquire);
                    let mut stolen = 0;
                    if let Some(t) = steal.steal_into(&mut mine, &mut stolen) {
                        steal_total.fetch_add(stolen, Ordering::Relaxed);
                        record(t);
                        while let Some(t) = mine.pop() {
                            record(t);
                        }
                    } else if finished {
                        break;
                    } else {
                        std::hint::spin_loop();
                    }
                }
            });
        }

        let sink = Inject(&inject);
        for i in 0..ITEMS {
            owner.push_back_or_overflow(i, &sink);
            if i % 3 == 0 {
                if let Some(t) = owner.pop() {
                    record(t);
                }
            }
        }
        // On a busy machine the stealers may not have run yet. Pops are
        // only every third push, so tasks are left: wait for a steal
        // before draining, so that one is guaranteed to happen.
        while steal_total.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        while let Some(t) = owner.pop() {
            record(t);
        }
        done.store(true, Ordering::Release);
    });

    for t in inject.into_inner().unwrap_or_else(|e| e.into_inner()) {
        record(t);
    }
    let bad: Vec<(usize, u8)> = seen
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .enumerate()
        .filter(|&(_, c)| c != 1)
        .take(10)
        .collect();
    assert!(bad.is_empty(), "items not seen exactly once: {bad:?}");
    assert!(steal_total.load(Ordering::Relaxed) > 0, "no steal happened");
}
