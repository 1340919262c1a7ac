//! TEMPORARY STUB — replaced by the real ring queue.
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
pub(crate) const LOCAL_QUEUE_CAPACITY: usize = 256;
pub(crate) trait Overflow<T> {
    fn push_batch<I: Iterator<Item = T>>(&self, iter: I);
}
pub(crate) struct Local<T> {
    inner: Arc<Mutex<VecDeque<T>>>,
}
pub(crate) struct Steal<T> {
    inner: Arc<Mutex<VecDeque<T>>>,
}
impl<T> Clone for Steal<T> {
    fn clone(&self) -> Self {
        Steal {
            inner: self.inner.clone(),
        }
    }
}
pub(crate) fn local<T>() -> (Steal<T>, Local<T>) {
    let i = Arc::new(Mutex::new(VecDeque::new()));
    (Steal { inner: i.clone() }, Local { inner: i })
}
impl<T> Local<T> {
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().unwrap().len()
    }
    pub(crate) fn has_tasks(&self) -> bool {
        self.len() > 0
    }
    pub(crate) fn remaining_slots(&self) -> usize {
        LOCAL_QUEUE_CAPACITY - self.len()
    }
    pub(crate) fn max_capacity(&self) -> usize {
        LOCAL_QUEUE_CAPACITY
    }
    pub(crate) fn push_back_or_overflow<O: Overflow<T>>(&mut self, task: T, overflow: &O) -> bool {
        let mut q = self.inner.lock().unwrap();
        if q.len() < LOCAL_QUEUE_CAPACITY {
            q.push_back(task);
            return false;
        }
        let half: Vec<T> = q.drain(..LOCAL_QUEUE_CAPACITY / 2).collect();
        drop(q);
        overflow.push_batch(half.into_iter().chain(std::iter::once(task)));
        true
    }
    pub(crate) fn push_back(&mut self, tasks: impl ExactSizeIterator<Item = T>) {
        self.inner.lock().unwrap().extend(tasks)
    }
    pub(crate) fn pop(&mut self) -> Option<T> {
        self.inner.lock().unwrap().pop_front()
    }
}
impl<T> Steal<T> {
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().unwrap().len()
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub(crate) fn steal_into(&self, dst: &mut Local<T>, stolen: &mut usize) -> Option<T> {
        let mut src = self.inner.lock().unwrap();
        let n = src.len() - src.len() / 2;
        if n == 0 {
            return None;
        }
        let mut taken: VecDeque<T> = src.drain(..n).collect();
        drop(src);
        *stolen = taken.len();
        let first = taken.pop_back();
        dst.inner.lock().unwrap().extend(taken);
        first
    }
}
