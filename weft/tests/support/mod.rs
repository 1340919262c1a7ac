//! Shared by the integration tests: the one macro that runs a test body on
//! every runtime flavour, and the watchdog that turns a hang into a failure.

mod watchdog;
#[allow(unused_imports)] // not every test file watches a body
pub use watchdog::{watchdog, Progress};

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
#[allow(unused_macros)] // io_uring.rs builds its own runtimes
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

/// A unique path under the temp dir for a socket file (`tag` names the
/// test), removed on drop.
#[allow(dead_code)] // only the Unix socket tests use it
pub struct TempPath(pub std::path::PathBuf);

#[allow(dead_code)]
impl TempPath {
    pub fn new(tag: &str) -> TempPath {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("weft-{}-{tag}-{n}.sock", std::process::id());
        let path = std::env::temp_dir().join(name);
        let _ = std::fs::remove_file(&path);
        TempPath(path)
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
