//! The workloads, one module per family, and the list the driver runs.
//!
//! Each family is written once, as a macro over the runtime crate's name, and
//! instantiated twice: `family!(tokio)` and `family!(weft)`. Both sides are
//! therefore the same tokens with only the crate path differing, so no
//! difference in the benchmark code can masquerade as a runtime difference.
//!
//! The multi_thread and current_thread families copy Tokio's own
//! `benches/rt_multi_threaded.rs` and `benches/rt_current_thread.rs`; where
//! the harness needs something Tokio's bench does not do (stopping background
//! load after each sample), it happens in the untimed `setup`/`teardown`.

use crate::harness::Side;
use std::time::{Duration, Instant};

pub mod blocking;
pub mod current_thread;
pub mod floor;
pub mod io;
pub mod multi_thread;
pub mod oneshot;
pub mod sync;

/// Worker threads of every multi_thread runtime (Tokio's `NUM_WORKERS`).
pub const NUM_WORKERS: usize = 4;
/// Worker threads of the sync suite's runtimes (Tokio's sync benches use 6).
pub const SYNC_WORKERS: usize = 6;
/// Tasks spawned per iteration of the multi_thread spawn workloads.
pub const NUM_SPAWN: usize = 10_000;
/// How long `stall` burns CPU (Tokio's `STALL_DUR`).
pub const STALL_DUR: Duration = Duration::from_micros(10);

/// Busy work for the background tasks of the `*_busy` workloads: 10 µs of
/// CPU, spinning on the OS scheduler's yield as Tokio's bench does.
pub fn stall() {
    let now = Instant::now();
    while now.elapsed() < STALL_DUR {
        std::thread::yield_now();
    }
}

/// Builds one side of a workload (including its runtime, untimed).
pub type MakeSide = fn() -> Box<dyn Side>;

/// What a workload row measures.
pub enum Kind {
    /// weft against Tokio: the same code instantiated for each.
    Compare {
        /// The Tokio instance.
        tokio: MakeSide,
        /// The weft instance.
        weft: MakeSide,
    },
    /// A runtime-free lower bound, printed for context and not as a ratio.
    Floor(MakeSide),
}

/// One row of the table.
pub struct Workload {
    /// Name used in the table and by `--filter`.
    pub name: &'static str,
    /// What one iteration is, for the table notes.
    pub note: &'static str,
    /// How it is measured.
    pub kind: Kind,
}

/// Expands to a `Kind::Compare` for the function `$f` of a family's two
/// instantiations (`$family::tokio_side::$f` and `$family::weft_side::$f`).
macro_rules! compare {
    ($family:ident :: $f:ident) => {
        Kind::Compare {
            tokio: $family::tokio_side::$f,
            weft: $family::weft_side::$f,
        }
    };
}

/// A group of workloads with its own table, section of `BENCHMARKS.md` and
/// chart. Sync workload names start with `sync_`, so `--filter sync_`
/// selects the same rows as `--suite sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// The scheduler benches (Tokio's `rt_*`), the oneshot, `spawn_blocking` and the floors.
    Scheduler,
    /// `weft::sync` against `tokio::sync` (Tokio's `sync_*` benches).
    Sync,
    /// Sockets, timers and the clock (names start with `io_`).
    Io,
}

impl Suite {
    /// Every suite, in run order.
    pub const ALL: [Suite; 3] = [Suite::Scheduler, Suite::Sync, Suite::Io];

    /// The name `--suite` takes.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Scheduler => "scheduler",
            Suite::Sync => "sync",
            Suite::Io => "io",
        }
    }

    /// The suite's workloads, in table order.
    pub fn workloads(self) -> Vec<Workload> {
        match self {
            Suite::Scheduler => scheduler(),
            Suite::Sync => sync_suite(),
            Suite::Io => io_suite(),
        }
    }
}

/// Every workload of every suite, in run order (the driver goes suite by
/// suite; the tests check names across all of them).
#[cfg(test)]
pub fn all() -> Vec<Workload> {
    Suite::ALL.iter().flat_map(|s| s.workloads()).collect()
}

/// The scheduler suite, in table order.
fn scheduler() -> Vec<Workload> {
    vec![
        Workload {
            name: "spawn_many_local",
            note: "multi_thread (4 workers): 10,000 spawns from inside `block_on`, each task \
                   decrements a shared counter; the last signals a std `sync_channel`",
            kind: compare!(multi_thread::spawn_many_local),
        },
        Workload {
            name: "spawn_many_remote_idle",
            note: "multi_thread: 10,000 `rt.spawn(async {})` from the bench thread, then all \
                   JoinHandles awaited in `block_on`",
            kind: compare!(multi_thread::spawn_many_remote_idle),
        },
        Workload {
            name: "spawn_many_remote_busy1",
            note: "as remote_idle while 8 background tasks loop `yield_now` + 10 µs stall; they \
                   are started before and stopped after each sample (untimed)",
            kind: compare!(multi_thread::spawn_many_remote_busy1),
        },
        Workload {
            name: "spawn_many_remote_busy2",
            note: "1,000 remote spawns awaited while 4 background chains (stall 10 µs, spawn \
                   successor) run; chains started/stopped around each sample (untimed)",
            kind: compare!(multi_thread::spawn_many_remote_busy2),
        },
        Workload {
            name: "ping_pong",
            note: "one iteration = one round as in Tokio's bench: a root task spawns 1,000 \
                   tasks, each spawns a peer and ping-pongs over two oneshots (2,001 spawns, \
                   2,000 oneshots); a countdown signals the end",
            kind: compare!(multi_thread::ping_pong),
        },
        Workload {
            name: "yield_many",
            note: "200 tasks spawned from the bench thread, each `yield_now()` ×1,000; fresh \
                   runtime per sample, built and dropped outside the timed region (Tokio \
                   builds it in `bench_function`'s closure, outside `b.iter`)",
            kind: compare!(multi_thread::yield_many),
        },
        Workload {
            name: "chained_spawn",
            note: "a chain of 1,000 spawns, each task spawning the next, started from \
                   `block_on`; fresh runtime per sample, built and dropped outside the timed \
                   region (as in Tokio's bench)",
            kind: compare!(multi_thread::chained_spawn),
        },
        Workload {
            name: "ct_spawn_many_local",
            note: "current_thread: 1,000 spawns inside `block_on`, then each JoinHandle awaited",
            kind: compare!(current_thread::spawn_many_local),
        },
        Workload {
            name: "ct_spawn_many_remote_idle",
            note: "current_thread: 1,000 `handle.spawn(async {})` from outside, then awaited in \
                   `block_on`",
            kind: compare!(current_thread::spawn_many_remote_idle),
        },
        Workload {
            name: "ct_spawn_many_remote_busy",
            note: "as ct remote_idle with a background task that keeps spawning its successor; \
                   started/stopped around each sample (untimed)",
            kind: compare!(current_thread::spawn_many_remote_busy),
        },
        Workload {
            name: "oneshot_request_reply",
            note: "multi_thread (1 worker): 1,000 request/reply round trips between two tasks, \
                   two fresh oneshots per round (request carries the reply sender and the \
                   receiver of the next request)",
            kind: compare!(oneshot::request_reply),
        },
        Workload {
            name: "spawn_blocking",
            note: "multi_thread (4 workers): 1,000 `spawn_blocking` closures returning their \
                   index, spawned from `block_on`, then awaited in order (the pool is warm)",
            kind: compare!(blocking::spawn_blocking_multi_thread),
        },
        Workload {
            name: "ct_spawn_blocking",
            note: "as spawn_blocking on a current_thread runtime",
            kind: compare!(blocking::spawn_blocking_current_thread),
        },
        Workload {
            name: "floor_box_task_future",
            note: "no runtime: 10,000 × (clone the Arc and SyncSender, build the \
                   spawn_many_local task future, `Box::new`, drop) — spawn_many_local's \
                   per-task work minus scheduling",
            kind: Kind::Floor(floor::box_task_future),
        },
        Workload {
            name: "floor_alloc_only",
            note: "no runtime: 10,000 × (allocate + free a block the size of that task future): \
                   the bare one-allocation limit",
            kind: Kind::Floor(floor::alloc_only),
        },
    ]
}

/// The sync suite, in table order (see `sync.rs` for the exact shapes).
/// The I/O suite, in table order.
fn io_suite() -> Vec<Workload> {
    vec![
        Workload {
            name: "io_tcp_echo_1",
            note: "echo server on multi_thread (1 worker); one shared Tokio current_thread client \
                   thread, 1 connection × 1,000 round trips of 100 bytes",
            kind: compare!(io::tcp_echo_1),
        },
        Workload {
            name: "io_tcp_echo_10",
            note: "as echo_1 with 10 concurrent connections × 100 round trips",
            kind: compare!(io::tcp_echo_10),
        },
        Workload {
            name: "io_tcp_echo_100",
            note: "as echo_1 with 100 concurrent connections × 10 round trips",
            kind: compare!(io::tcp_echo_100),
        },
        Workload {
            name: "io_timers_arm_cancel",
            note: "current_thread, unconstrained: 100,000 `sleep(1–10 s)` boxed, polled once \
                   (armed) and kept, then all dropped (cancelled)",
            kind: compare!(io::timers_arm_cancel),
        },
        Workload {
            name: "io_timeout_ready",
            note: "current_thread: 10,000 `timeout(1 s, f)` awaited where `f` is ready at once \
                   (the timer is never armed: a clock read, a `Sleep` made and dropped)",
            kind: compare!(io::timeout_ready),
        },
        Workload {
            name: "io_instant_now",
            note: "current_thread: 10,000 `time::Instant::now()` inside `block_on`",
            kind: compare!(io::instant_now),
        },
        Workload {
            name: "io_duplex_stream",
            note: "current_thread: a spawned writer `write_all`s 1 MiB in 8 KiB chunks into \
                   `io::duplex(64 KiB)`; `block_on` reads the other end in 8 KiB reads to EOF",
            kind: compare!(io::duplex_stream),
        },
        Workload {
            name: "io_copy_mem",
            note: "current_thread: `io::copy` of 4 MiB from a `&[u8]` into a `Vec<u8>`",
            kind: compare!(io::copy_mem),
        },
        Workload {
            name: "io_file_read_seq",
            note: "multi_thread (4 workers): a 4 MiB file in the page cache opened with \
                   `fs::File` and read in 64 KiB reads to EOF (weft: its default I/O driver; \
                   Tokio: its blocking pool)",
            kind: compare!(io::file_read_seq),
        },
    ]
}

fn sync_suite() -> Vec<Workload> {
    vec![
        Workload {
            name: "sync_mpsc_contended_bounded",
            note: "multi_thread (6 workers): 5 spawned producers × 1,000 `send().await` into \
                   `channel(1_000_000)`; `block_on` receives all 5,000 (Tokio's \
                   `contention_bounded`)",
            kind: compare!(sync::mpsc_contended_bounded),
        },
        Workload {
            name: "sync_mpsc_contended_unbounded",
            note: "as contended_bounded with `unbounded_channel()` (Tokio's \
                   `contention_unbounded`)",
            kind: compare!(sync::mpsc_contended_unbounded),
        },
        Workload {
            name: "sync_mpsc_uncontended_bounded",
            note: "inside `block_on`, no other task: 5,000 `send().await` into \
                   `channel(1_000_000)`, then 5,000 `recv().await` (Tokio's \
                   `uncontented_bounded`)",
            kind: compare!(sync::mpsc_uncontended_bounded),
        },
        Workload {
            name: "sync_mpsc_uncontended_unbounded",
            note: "as uncontended_bounded with `unbounded_channel()` (Tokio's \
                   `uncontented_unbounded`)",
            kind: compare!(sync::mpsc_uncontended_unbounded),
        },
        Workload {
            name: "sync_mpsc_bounded_full",
            note: "as contended_bounded with `channel(100)`: producers wait for capacity \
                   (Tokio's `contention_bounded_full`)",
            kind: compare!(sync::mpsc_bounded_full),
        },
        Workload {
            name: "sync_notify_ping",
            note: "two spawned tasks ping-pong 1,000 rounds through two `Notify`s \
                   (`notify_one` + `notified().await` each way); `block_on` awaits both",
            kind: compare!(sync::notify_ping),
        },
        Workload {
            name: "sync_semaphore_contended",
            note: "64 spawned tasks × 100 × (`acquire().await` 1 permit of `Semaphore::new(5)`, \
                   drop it); `block_on` awaits all (Tokio's `contended_concurrent_multi`, \
                   scaled up from 6 tasks × 1)",
            kind: compare!(sync::semaphore_contended),
        },
        Workload {
            name: "sync_mutex_contended",
            note: "64 spawned tasks × 100 × (`lock().await`, increment, unlock) on one \
                   `Mutex<u64>`; `block_on` awaits all and checks the count",
            kind: compare!(sync::mutex_contended),
        },
        Workload {
            name: "sync_watch_fanout",
            note: "1 `watch` sender (`block_on`), 16 spawned receivers; 100 rounds in lockstep: \
                   `send(i)`, then a `Notify` wait until all 16 have seen `i` via \
                   `changed().await` + `borrow_and_update()` (1,600 `changed()` completions, \
                   100 Notify round trips per iteration)",
            kind: compare!(sync::watch_fanout),
        },
        Workload {
            name: "sync_rwlock_read_mostly",
            note: "64 spawned tasks × 100 rounds on one `RwLock<u64>`: one round in ten \
                   `write().await` and increments, the others `read().await`; `block_on` \
                   awaits all and checks the count",
            kind: compare!(sync::rwlock_read_mostly),
        },
        Workload {
            name: "sync_broadcast_fanout",
            note: "8 spawned receivers of `broadcast::channel(1_024)`; `block_on` sends 1,000 \
                   values without waiting, drops the sender and awaits the receivers, each \
                   having received all 1,000 in order",
            kind: compare!(sync::broadcast_fanout),
        },
    ]
}
