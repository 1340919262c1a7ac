//! The `Display` of every `sync` error type, in a fixed order, written once
//! in `error_displays!` and expanded for both crates by `for_both!` (the
//! test compares the two lists).

use std::future::Future;
use std::task::{Context, Poll, Waker};

use crate::harness::for_both;

macro_rules! error_displays {
    () => {
        /// The `Display` of every error type, in a fixed order.
        pub fn error_displays() -> Vec<String> {
            use k::sync::{broadcast, mpsc, oneshot, watch, Mutex, Semaphore};
            fn now<F: Future>(f: F) -> F::Output {
                let mut f = std::pin::pin!(f);
                match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                    Poll::Ready(v) => v,
                    Poll::Pending => panic!("pending"),
                }
            }
            let mut v = Vec::new();
            let sem = Semaphore::new(0);
            v.push(sem.try_acquire().unwrap_err().to_string());
            sem.close();
            v.push(sem.try_acquire().unwrap_err().to_string());
            v.push(now(sem.acquire()).unwrap_err().to_string());
            let m = Mutex::new(0);
            let _g = m.try_lock().unwrap();
            v.push(m.try_lock().unwrap_err().to_string());

            let (tx, mut rx) = mpsc::channel::<u32>(1);
            tx.try_send(1).unwrap();
            v.push(tx.try_send(2).unwrap_err().to_string());
            rx.try_recv().unwrap();
            v.push(rx.try_recv().unwrap_err().to_string());
            rx.close();
            v.push(tx.try_send(3).unwrap_err().to_string());
            v.push(now(tx.send(4)).unwrap_err().to_string());
            v.push(now(tx.reserve()).unwrap_err().to_string());
            drop(tx);
            v.push(rx.try_recv().unwrap_err().to_string());

            let (tx, mut rx) = oneshot::channel::<u32>();
            v.push(rx.try_recv().unwrap_err().to_string());
            drop(tx);
            v.push(rx.try_recv().unwrap_err().to_string());
            let (tx, rx) = oneshot::channel::<u32>();
            drop(tx);
            v.push(now(rx).unwrap_err().to_string());

            let (tx, mut rx) = watch::channel(0u32);
            drop(tx);
            v.push(now(rx.changed()).unwrap_err().to_string());
            let (tx, rx) = watch::channel(0u32);
            drop(rx);
            v.push(tx.send(1).unwrap_err().to_string());

            let (tx, mut rx) = broadcast::channel::<u32>(1);
            v.push(rx.try_recv().unwrap_err().to_string());
            tx.send(1).unwrap();
            tx.send(2).unwrap();
            v.push(rx.try_recv().unwrap_err().to_string());
            tx.send(3).unwrap();
            tx.send(4).unwrap();
            v.push(now(rx.recv()).unwrap_err().to_string());
            rx.try_recv().unwrap();
            drop(tx);
            v.push(rx.try_recv().unwrap_err().to_string());
            v.push(now(rx.recv()).unwrap_err().to_string());
            let (tx, rx) = broadcast::channel::<u32>(1);
            drop(rx);
            v.push(tx.send(1).unwrap_err().to_string());
            v
        }
    };
}

for_both!(error_displays);
