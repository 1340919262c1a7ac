//! Shared by the integration tests: the one macro that runs a test body on
//! every runtime flavour.

/// A runtime flavour a test body runs on (exposed to the body as `FLAVOR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)] // not every test file reads it
pub enum Flavor {
    CurrentThread,
    MultiThread(usize),
}

/// Expands the body once per flavour, in a module with an `rt()` builder and
/// a `FLAVOR` constant: current_thread, multi_thread with 1 worker, and
/// multi_thread with 4 workers.
macro_rules! rt_test {
    ($($t:tt)*) => {
        mod current_thread_scheduler {
            $($t)*

            #[allow(dead_code)]
            const FLAVOR: crate::support::Flavor = crate::support::Flavor::CurrentThread;

            #[allow(dead_code)]
            fn rt() -> weft::runtime::Runtime {
                weft::runtime::Builder::new_current_thread().enable_all().build().unwrap()
            }
        }

        mod threaded_scheduler_1_thread {
            $($t)*

            #[allow(dead_code)]
            const FLAVOR: crate::support::Flavor = crate::support::Flavor::MultiThread(1);

            #[allow(dead_code)]
            fn rt() -> weft::runtime::Runtime {
                weft::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                    .unwrap()
            }
        }

        mod threaded_scheduler_4_threads {
            $($t)*

            #[allow(dead_code)]
            const FLAVOR: crate::support::Flavor = crate::support::Flavor::MultiThread(4);

            #[allow(dead_code)]
            fn rt() -> weft::runtime::Runtime {
                weft::runtime::Builder::new_multi_thread()
                    .worker_threads(4)
                    .enable_all()
                    .build()
                    .unwrap()
            }
        }
    };
}
