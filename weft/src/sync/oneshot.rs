//! TEMPORARY STUB — replaced by the real oneshot.
#![allow(missing_docs, missing_debug_implementations)]
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
struct Inner<T> {
    value: Option<T>,
    closed: bool,
    waker: Option<Waker>,
}
pub struct Sender<T>(Arc<Mutex<Inner<T>>>);
pub struct Receiver<T>(Arc<Mutex<Inner<T>>>);
pub mod error {
    #[derive(Debug)]
    pub struct RecvError;
}
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let i = Arc::new(Mutex::new(Inner {
        value: None,
        closed: false,
        waker: None,
    }));
    (Sender(i.clone()), Receiver(i))
}
impl<T> Sender<T> {
    pub fn send(self, t: T) -> Result<(), T> {
        let w = {
            let mut g = self.0.lock().unwrap();
            if Arc::strong_count(&self.0) == 1 {
                return Err(t);
            }
            g.value = Some(t);
            g.waker.take()
        };
        if let Some(w) = w {
            w.wake()
        }
        Ok(())
    }
}
impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let w = {
            let mut g = self.0.lock().unwrap();
            g.closed = true;
            g.waker.take()
        };
        if let Some(w) = w {
            w.wake()
        }
    }
}
impl<T> Future for Receiver<T> {
    type Output = Result<T, error::RecvError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut g = self.0.lock().unwrap();
        if let Some(v) = g.value.take() {
            return Poll::Ready(Ok(v));
        }
        if g.closed {
            return Poll::Ready(Err(error::RecvError));
        }
        g.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}
