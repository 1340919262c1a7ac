//! 4 KiB random reads of one large file by many tasks, each with its own
//! `fs::File` (seek to a random 4 KiB-aligned offset, `read_exact` 4 KiB),
//! written the same way against weft and Tokio; prints the reads, the
//! process CPU time they took (every thread's, blocking pool and kernel
//! io_uring workers included) and reads per CPU-second. `fs_cpu.sh` runs
//! it.
//!
//! `fs_random_read weft|tokio PATH SECONDS [TASKS]` (default 64 tasks).
//! weft's I/O driver follows `WEFT_IO_DRIVER`. Both runtimes are
//! multi_thread with their default worker count.
//!
//! If PATH is a directory, each task instead loops `fs::read` of a random
//! file in it (open, read to the end, close): whole small-file reads.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BLOCK: u64 = 4096;

/// The process's user + system CPU time so far (all threads).
fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes the whole struct we hand it.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// A small, fast generator (xorshift64*), seeded per task.
fn next_block(state: &mut u64, blocks: u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D) % blocks
}

struct Shared {
    stop: AtomicBool,
    reads: AtomicU64,
}

macro_rules! whole_reader {
    ($rt:ident, $files:expr, $seed:expr, $shared:expr) => {
        async move {
            let mut state = $seed;
            let mut reads = 0u64;
            while !$shared.stop.load(Ordering::Relaxed) {
                let i = next_block(&mut state, $files.len() as u64) as usize;
                let contents = $rt::fs::read(&$files[i]).await.unwrap();
                assert!(!contents.is_empty());
                reads += 1;
            }
            $shared.reads.fetch_add(reads, Ordering::Relaxed);
        }
    };
}

macro_rules! reader {
    ($rt:ident, $path:expr, $blocks:expr, $seed:expr, $shared:expr) => {
        async move {
            use $rt::io::{AsyncReadExt, AsyncSeekExt};
            let mut file = $rt::fs::File::open(&*$path).await.unwrap();
            let mut buf = vec![0u8; BLOCK as usize];
            let mut state = $seed;
            let mut reads = 0u64;
            while !$shared.stop.load(Ordering::Relaxed) {
                let offset = next_block(&mut state, $blocks) * BLOCK;
                file.seek(std::io::SeekFrom::Start(offset)).await.unwrap();
                file.read_exact(&mut buf).await.unwrap();
                reads += 1;
            }
            $shared.reads.fetch_add(reads, Ordering::Relaxed);
        }
    };
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args
        .next()
        .expect("usage: fs_random_read weft|tokio PATH SECONDS [TASKS]");
    let path: Arc<str> = args.next().expect("PATH").into();
    let seconds: f64 = args.next().expect("SECONDS").parse().unwrap();
    let tasks: u64 = args.next().map_or(64, |t| t.parse().unwrap());
    let files: Arc<Vec<std::path::PathBuf>> =
        Arc::new(if std::fs::metadata(&*path).unwrap().is_dir() {
            std::fs::read_dir(&*path)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect()
        } else {
            Vec::new()
        });
    let blocks = if files.is_empty() {
        std::fs::metadata(&*path).unwrap().len() / BLOCK
    } else {
        1
    };
    assert!(blocks > 0, "{path} is smaller than one block");
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        reads: AtomicU64::new(0),
    });
    let stopper = {
        let shared = shared.clone();
        move || {
            std::thread::sleep(Duration::from_secs_f64(seconds));
            shared.stop.store(true, Ordering::Relaxed);
        }
    };
    let (cpu0, t0) = (cpu_time(), Instant::now());
    // The same driver loop on either runtime (`$rt` names the crate).
    macro_rules! run_on {
        ($rt:ident) => {{
            let rt = $rt::runtime::Runtime::new().unwrap();
            rt.block_on(async {
                let mut handles = Vec::new();
                for seed in 1..=tasks {
                    let (path, shared) = (path.clone(), shared.clone());
                    let seed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    if files.is_empty() {
                        handles.push($rt::spawn(reader!($rt, path, blocks, seed, shared)));
                    } else {
                        let files = files.clone();
                        handles.push($rt::spawn(whole_reader!($rt, files, seed, shared)));
                    }
                }
                std::thread::spawn(stopper);
                for h in handles {
                    h.await.unwrap();
                }
            });
        }};
    }
    match which.as_str() {
        "weft" => run_on!(weft),
        "tokio" => run_on!(tokio),
        other => panic!("unknown runtime {other:?}: use weft or tokio"),
    }
    let (cpu, wall) = (cpu_time() - cpu0, t0.elapsed());
    let reads = shared.reads.load(Ordering::Relaxed);
    println!(
        "{reads} {:.4} {:.4} {:.0} {:.0}",
        cpu.as_secs_f64(),
        wall.as_secs_f64(),
        reads as f64 / cpu.as_secs_f64(),
        reads as f64 / wall.as_secs_f64()
    );
}
