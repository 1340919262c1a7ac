//! `JoinSet`: a collection of tasks, joined in completion order.
//!
//! Each member's `JoinHandle` is polled with a waker of its own, which puts
//! the member's slot on a ready list and wakes whoever waits in
//! `join_next`. So `join_next` polls only members that made progress
//! instead of scanning the whole set. Every join reports the finished
//! task's id internally; the plain `join_next` family drops it, the
//! `_with_id` family returns it.

use super::{AbortHandle, Id, JoinError, JoinHandle};
use crate::runtime::Handle;
use std::collections::VecDeque;
use std::fmt;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll, Wake, Waker};

/// A set of tasks spawned together. Dropping the set aborts every task in
/// it.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let mut set = weft::task::JoinSet::new();
/// for i in 0..5u32 {
///     set.spawn(async move { i });
/// }
/// let mut total = 0;
/// while let Some(res) = set.join_next().await {
///     total += res.unwrap();
/// }
/// assert_eq!(total, 10);
/// # });
/// ```
pub struct JoinSet<T> {
    slots: Vec<Option<Member<T>>>,
    free: Vec<usize>,
    len: usize,
    shared: Arc<Shared>,
}

/// A set is `Unpin` whatever its output type, as Tokio's is (wrappers
/// such as tokio-stream's `JoinSetStream` poll it through `Pin<&mut _>`):
/// nothing in it is ever pinned, the output of a member that finished
/// before joining the set included.
impl<T> Unpin for JoinSet<T> {}

// SAFETY: through `&JoinSet` only `len`, `is_empty` and `Debug` (which
// prints the length) are reachable, and none of them touches a member's
// handle or kept output; every other method takes `&mut self`. So sharing
// the set between threads needs no `T: Sync`, as for Tokio's `JoinSet`
// (`Sync` when `T: Send`); moving it needs `Send`, which the fields give.
unsafe impl<T: Send> Sync for JoinSet<T> {}

struct Member<T> {
    handle: JoinHandle<T>,
    waker: Waker,
    notify: Arc<MemberWaker>,
    /// The task had already finished when it joined the set.
    done: Option<Result<T, JoinError>>,
}

struct Shared {
    /// Slots to poll, in the order their tasks woke them (so results come
    /// out in completion order, as Tokio documents).
    ready: Mutex<VecDeque<usize>>,
    waiter: Mutex<Option<Waker>>,
}

struct MemberWaker {
    slot: usize,
    queued: AtomicBool,
    shared: Arc<Shared>,
}

impl<T> Member<T> {
    /// Poll the member's task with the member's own waker, without a
    /// budget (see `take_finished`).
    fn poll_handle(&mut self) -> Poll<Result<T, JoinError>> {
        let mut member_cx = Context::from_waker(&self.waker);
        crate::coop::with_unconstrained(|| Pin::new(&mut self.handle).poll(&mut member_cx))
    }
}

impl Wake for MemberWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.shared
                .ready
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push_back(self.slot);
        }
        let waiter = self
            .shared
            .waiter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(w) = waiter {
            w.wake();
        }
    }
}

impl<T> Default for JoinSet<T> {
    fn default() -> Self {
        JoinSet::new()
    }
}

impl<T> JoinSet<T> {
    /// An empty set.
    pub fn new() -> JoinSet<T> {
        JoinSet {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
            shared: Arc::new(Shared {
                ready: Mutex::new(VecDeque::new()),
                waiter: Mutex::new(None),
            }),
        }
    }

    /// Number of tasks in the set (finished but not yet joined included).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set holds no task.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn insert(&mut self, handle: JoinHandle<T>) -> AbortHandle {
        let abort = handle.abort_handle();
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        // The member's waker is registered now, not at its first join:
        // then every member is on the ready list in the order its task
        // finished, as Tokio's `JoinSet` registers its join waker at
        // insertion (a set joined only after several members finished
        // returned them in insertion order).
        let notify = Arc::new(MemberWaker {
            slot,
            queued: AtomicBool::new(false),
            shared: self.shared.clone(),
        });
        let waker = Waker::from(notify.clone());
        let mut member = Member {
            handle,
            waker,
            notify,
            done: None,
        };
        if let Poll::Ready(res) = member.poll_handle() {
            member.done = Some(res);
            // Queued as its waker would queue it (and a waiting join told).
            member.notify.wake_by_ref();
        }
        self.slots[slot] = Some(member);
        self.len += 1;
        abort
    }

    fn lock_ready(&self) -> std::sync::MutexGuard<'_, VecDeque<usize>> {
        self.shared.ready.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait for the next task to finish and return its result; `None` when
    /// the set is empty. Cancel-safe: a result is never lost if the future
    /// is dropped before it completes.
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// [`join_next`](Self::join_next), with the finished task's id next
    /// to its output (the id [`spawn`](Self::spawn)'s `AbortHandle`
    /// reports; a failed task's id is in its `JoinError`).
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// The result of a task that has already finished, if any, without
    /// waiting. It spends no coop budget (it cannot yield), as in Tokio.
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        self.try_join_next_with_id().map(without_id)
    }

    /// [`try_join_next`](Self::try_join_next), with the task's id.
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        self.take_finished()
    }

    /// Poll for the next finished task.
    ///
    /// Spends one unit of the task's coop budget per call (as any resource
    /// does); with the budget spent it returns `Pending` once and wakes the
    /// task to be polled again.
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_join_next_with_id(cx)
            .map(|res| res.map(without_id))
    }

    /// [`poll_join_next`](Self::poll_join_next), with the task's id.
    pub fn poll_join_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        if self.len == 0 {
            return Poll::Ready(None);
        }
        let coop = ready!(crate::coop::poll_proceed(cx));
        // The replaced waker drops after the lock is released: its drop may
        // run user code that wakes a member back into this set.
        let _replaced = self
            .shared
            .waiter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(cx.waker().clone());
        match self.take_finished() {
            Some(res) => {
                coop.made_progress();
                Poll::Ready(Some(res))
            }
            None => Poll::Pending,
        }
    }

    /// Poll the members on the ready list until one has finished.
    ///
    /// Members are polled without a budget: a member's `JoinHandle` that
    /// found the budget spent would wake its own waker, which puts it back
    /// on the ready list, and this loop would spin on it forever. Unbudgeted,
    /// `Pending` means the task really is still running, and its waker is
    /// registered for when it finishes.
    fn take_finished(&mut self) -> Option<Result<(Id, T), JoinError>> {
        loop {
            let slot = self.lock_ready().pop_front()?;
            let Some(member) = self.slots.get_mut(slot).and_then(Option::as_mut) else {
                continue;
            };
            member.notify.queued.store(false, Ordering::Release);
            let polled = match member.done.take() {
                Some(res) => Poll::Ready(res),
                None => member.poll_handle(),
            };
            if let Poll::Ready(res) = polled {
                let id = member.handle.id();
                self.slots[slot] = None;
                self.free.push(slot);
                self.len -= 1;
                return Some(res.map(|output| (id, output)));
            }
        }
    }

    /// Abort every task in the set. They stay in the set until joined
    /// (each then yields a cancelled `JoinError` unless it finished first).
    pub fn abort_all(&mut self) {
        for member in self.slots.iter().flatten() {
            member.handle.abort();
        }
    }

    /// Remove every task from the set without aborting them.
    pub fn detach_all(&mut self) {
        self.slots.clear();
        self.free.clear();
        self.lock_ready().clear();
        self.len = 0;
    }

    /// Abort every task and wait for all of them to finish.
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Wait for every task and collect the outputs in completion order.
    ///
    /// # Panics
    /// Re-raises the panic of a task that panicked.
    pub async fn join_all(mut self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len);
        while let Some(res) = self.join_next().await {
            match res {
                Ok(v) => out.push(v),
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => panic!("a JoinSet task was cancelled: {e}"),
            }
        }
        out
    }
}

impl<T: Send + 'static> JoinSet<T> {
    /// Spawn a task on the current runtime into the set.
    ///
    /// # Panics
    /// Outside a runtime.
    #[track_caller]
    pub fn spawn<F>(&mut self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.insert(super::spawn(future))
    }

    /// Spawn a task on the given runtime into the set.
    #[track_caller]
    pub fn spawn_on<F>(&mut self, future: F, handle: &Handle) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.insert(handle.spawn(future))
    }

    /// Run a blocking closure on the current runtime's pool, into the set.
    #[track_caller]
    pub fn spawn_blocking<F>(&mut self, f: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        self.insert(super::spawn_blocking(f))
    }

    /// Run a blocking closure on `handle`'s runtime's pool, into the set.
    #[track_caller]
    pub fn spawn_blocking_on<F>(&mut self, f: F, handle: &Handle) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        self.insert(handle.spawn_blocking(f))
    }
}

/// A `_with_id` result without the id.
fn without_id<T>(res: Result<(Id, T), JoinError>) -> Result<T, JoinError> {
    res.map(|(_, output)| output)
}

impl<T: 'static> JoinSet<T> {
    /// Spawn a `!Send` future into the set, on the current
    /// [`LocalSet`](super::LocalSet) or `LocalRuntime`.
    ///
    /// # Panics
    /// Outside a `LocalSet`.
    #[track_caller]
    pub fn spawn_local<F>(&mut self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.insert(super::spawn_local(future))
    }

    /// Spawn a `!Send` future into the set, on `local`.
    #[track_caller]
    pub fn spawn_local_on<F>(&mut self, future: F, local: &super::LocalSet) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.insert(local.spawn_local(future))
    }
}

/// Spawns every future into a new set (on the current runtime).
impl<T, F> FromIterator<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = JoinSet::new();
        set.extend(iter);
        set
    }
}

/// Spawns every future into the set (on the current runtime).
impl<T, F> Extend<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    #[track_caller]
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for future in iter {
            self.spawn(future);
        }
    }
}

impl<T> Drop for JoinSet<T> {
    fn drop(&mut self) {
        self.abort_all();
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet").field("len", &self.len).finish()
    }
}
