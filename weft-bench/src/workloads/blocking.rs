//! The blocking-pool family: `spawn_blocking` from inside a runtime.
//!
//! Not one of Tokio's `rt_*` benches (its `spawn_blocking` bench is not
//! in its tree); this measures what a program that offloads many small
//! synchronous calls pays: 1,000 `spawn_blocking` closures that do almost
//! nothing, spawned from `block_on` and then awaited in order, on a
//! multi_thread runtime (4 workers) and on a current_thread one. The pool
//! is warm after the first sample: its threads wait for work between
//! iterations (their keep-alive is 10 s on both), so the timed part is the
//! hand-off to an idle pool thread and the wake-up of the awaiting task,
//! not thread creation.

macro_rules! blocking_family {
    ($rt:ident) => {
        use crate::harness::Side;
        use crate::workloads::NUM_WORKERS;
        use std::hint::black_box;
        use $rt::runtime::{self, Runtime};
        use $rt::task::JoinHandle;

        const CLOSURES: usize = 1_000;

        pub struct SpawnBlocking {
            rt: Runtime,
            handles: Vec<JoinHandle<usize>>,
        }

        impl Side for SpawnBlocking {
            fn run(&mut self) {
                let Self { rt, handles } = self;
                rt.block_on(async {
                    for i in 0..CLOSURES {
                        handles.push($rt::task::spawn_blocking(move || black_box(i)));
                    }
                    let mut sum = 0;
                    for handle in handles.drain(..) {
                        sum += handle.await.unwrap();
                    }
                    assert_eq!(sum, CLOSURES * (CLOSURES - 1) / 2);
                });
            }
        }

        fn side(rt: Runtime) -> Box<dyn Side> {
            Box::new(SpawnBlocking {
                rt,
                handles: Vec::with_capacity(CLOSURES),
            })
        }

        pub fn spawn_blocking_multi_thread() -> Box<dyn Side> {
            side(
                runtime::Builder::new_multi_thread()
                    .worker_threads(NUM_WORKERS)
                    .build()
                    .unwrap(),
            )
        }

        pub fn spawn_blocking_current_thread() -> Box<dyn Side> {
            side(runtime::Builder::new_current_thread().build().unwrap())
        }
    };
}

/// The family on Tokio.
pub mod tokio_side {
    blocking_family!(tokio);
}

/// The family on weft.
pub mod weft_side {
    blocking_family!(weft);
}
