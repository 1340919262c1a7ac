//! `fs::File` on the io_uring driver: reads and writes go through the
//! worker's ring, not the blocking pool, with the same cursor semantics
//! as read(2)/write(2), and an op in flight survives its future or its
//! file being dropped.
//!
//! Every runtime here asks for `IoDriver::Uring`; `tests/fs_file.rs` runs
//! the file semantics on both drivers (README, "Testing").

#[path = "support/uring.rs"]
mod uring;

use std::future::Future;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::pin::Pin;
use std::task::Poll;
use std::time::{Duration, Instant};
use uring::on_a_worker;
use weft::fs::File;
use weft::io::{AsyncRead, AsyncReadExt, AsyncSeekExt, AsyncWriteExt, ReadBuf};
use weft::runtime::Runtime;

/// Each flavour with a blocking pool of one thread, so a test can take
/// the pool away from the file.
fn runtimes() -> Vec<(&'static str, Runtime)> {
    uring::runtimes_with(|b| b.max_blocking_threads(1))
}

fn scratch(test: &str, flavour: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "weft-uring-fs-{}-{test}-{}",
        std::process::id(),
        flavour.replace(['(', ')'], "")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

/// Open `path` for reading and writing without the blocking pool.
fn open_rw(path: &PathBuf) -> File {
    File::from_std(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .unwrap(),
    )
}

/// Run `work` with the runtime's only blocking thread held by another
/// task, failing (instead of hanging) if `work` waits for the pool.
async fn without_the_blocking_pool(what: &str, work: impl std::future::Future<Output = ()>) {
    let held = hold_the_blocking_pool().await;
    weft::time::timeout(Duration::from_secs(10), work)
        .await
        .unwrap_or_else(|_| panic!("{what} waited for the blocking pool"));
    held.release().await;
}

/// The runtime's only blocking thread, held by a task until `release`.
struct HeldPool {
    release: std::sync::mpsc::Sender<()>,
    hog: weft::task::JoinHandle<()>,
}

async fn hold_the_blocking_pool() -> HeldPool {
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (started_tx, started) = weft::sync::oneshot::channel();
    let hog = weft::task::spawn_blocking(move || {
        started_tx.send(()).unwrap();
        let _ = held.recv();
    });
    started.await.unwrap();
    HeldPool { release, hog }
}

impl HeldPool {
    async fn release(self) {
        self.release.send(()).unwrap();
        self.hog.await.unwrap();
    }
}

/// With the runtime's only blocking thread held by another task, a file
/// is still written, sought (from the start and from the cursor) and read
/// back: on io_uring none of those needs the pool. (On epoll each would
/// wait for the pool, and this test would time out.)
#[test]
fn reads_writes_and_seeks_do_not_need_the_blocking_pool() {
    for (name, rt) in runtimes() {
        let dir = scratch("no-pool", name);
        on_a_worker(&rt, {
            let dir = dir.clone();
            async move {
                let mut file = open_rw(&dir.join("data"));

                let work = async {
                    let data = pattern(300_000);
                    file.write_all(&data).await.unwrap();
                    file.flush().await.unwrap();
                    assert_eq!(file.seek(SeekFrom::Start(1000)).await.unwrap(), 1000);
                    let mut chunk = vec![0; 5000];
                    file.read_exact(&mut chunk).await.unwrap();
                    assert!(
                        chunk[..] == data[1000..6000],
                        "{name}: wrong bytes after a seek"
                    );
                    // Relative to the caller's position (6000), not to the
                    // kernel's cursor.
                    assert_eq!(file.seek(SeekFrom::Current(-10)).await.unwrap(), 5990);
                    let mut rest = Vec::new();
                    file.read_to_end(&mut rest).await.unwrap();
                    assert!(rest[..] == data[5990..], "{name}: wrong tail");
                };
                without_the_blocking_pool(&format!("{name}: a file operation"), work).await;
            }
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Ring reads and writes move the descriptor's own cursor, as read(2) and
/// write(2) do: a `try_clone` copy (same open file) continues where the
/// original stopped, and the std file from `into_std` is where the reads
/// left it.
#[test]
fn the_cursor_is_the_descriptors_own() {
    for (name, rt) in runtimes() {
        let dir = scratch("cursor", name);
        let data = pattern(10_000);
        std::fs::write(dir.join("data"), &data).unwrap();
        let mut std_file = rt.block_on(async {
            let mut file = File::open(dir.join("data")).await.unwrap();
            let mut head = [0; 100];
            file.read_exact(&mut head).await.unwrap();
            let mut clone = file.try_clone().await.unwrap();
            let mut next = [0; 100];
            clone.read_exact(&mut next).await.unwrap();
            assert!(
                next[..] == data[100..200],
                "{name}: the clone did not continue"
            );
            let mut after = [0; 50];
            file.read_exact(&mut after).await.unwrap();
            assert!(
                after[..] == data[200..250],
                "{name}: the original missed the clone's read"
            );
            file.into_std().await
        });
        assert_eq!(std_file.stream_position().unwrap(), 250, "{name}");
        let mut rest = Vec::new();
        std_file.read_to_end(&mut rest).unwrap();
        assert!(rest[..] == data[250..], "{name}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A read whose future is dropped while the ring has it loses nothing:
/// its bytes are the next read's, in order.
#[test]
fn a_dropped_read_keeps_its_bytes_for_the_next() {
    for (name, rt) in runtimes() {
        let dir = scratch("dropped-read", name);
        let data = pattern(64 * 1024);
        std::fs::write(dir.join("data"), &data).unwrap();
        rt.block_on(async {
            let mut file = File::open(dir.join("data")).await.unwrap();
            let mut first = [0; 10];
            file.read_exact(&mut first).await.unwrap();
            let mut big = vec![0; 4096];
            // Usually pending (the ring has the read); if it completed at
            // once, its bytes are the first of the rest.
            let mut rest = std::future::poll_fn(|cx| {
                let mut buf = ReadBuf::new(&mut big);
                Poll::Ready(match Pin::new(&mut file).poll_read(cx, &mut buf) {
                    Poll::Ready(done) => {
                        done.unwrap();
                        buf.filled().to_vec()
                    }
                    Poll::Pending => Vec::new(),
                })
            })
            .await;
            file.read_to_end(&mut rest).await.unwrap();
            assert_eq!(rest.len(), data.len() - 10, "{name}");
            assert!(rest[..] == data[10..], "{name}: bytes lost or reordered");
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Dropping a `File` right after a large write was accepted still writes
/// every byte (the ring finishes the write; the descriptor closes after).
#[test]
fn a_dropped_file_still_finishes_its_write() {
    for (name, rt) in runtimes() {
        let dir = scratch("dropped-write", name);
        let path = dir.join("data");
        let data = pattern(2 << 20);
        rt.block_on(async {
            let mut file = open_rw(&path);
            let n = file.write(&data).await.unwrap();
            assert_eq!(
                n,
                data.len(),
                "{name}: the write took less than its buffer bound"
            );
            drop(file);
        });
        // The runtime's teardown (or the kernel before it) ends the write.
        drop(rt);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = std::fs::read(&path).unwrap();
            if got.len() == data.len() {
                assert!(got == data, "{name}: bytes differ");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{name}: only {} bytes",
                got.len()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The kernel's errors come back as std's: a read from a file opened
/// only for writing is `EBADF` from that read; a write to a file opened
/// only for reading is accepted and fails at the next flush.
#[test]
fn ring_errors_are_the_system_calls_errors() {
    for (name, rt) in runtimes() {
        let dir = scratch("errors", name);
        let path = dir.join("data");
        std::fs::write(&path, b"abc").unwrap();
        rt.block_on(async {
            let mut write_only =
                File::from_std(std::fs::OpenOptions::new().write(true).open(&path).unwrap());
            let mut buf = [0; 3];
            let err = write_only.read(&mut buf).await.unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc_ebadf()), "{name}: {err}");

            let mut read_only = File::from_std(std::fs::File::open(&path).unwrap());
            assert_eq!(read_only.write(b"xyz").await.unwrap(), 3, "{name}");
            let err = read_only.flush().await.unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc_ebadf()), "{name}: {err}");
            // Reported once; the file works afterwards.
            read_only.flush().await.unwrap();
            read_only.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"abc", "{name}");
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}

const fn libc_ebadf() -> i32 {
    9 // EBADF on Linux
}

/// A read from a FIFO waits in the ring until a writer writes; a read
/// still waiting when the runtime is dropped neither hangs the drop nor
/// touches freed memory.
#[test]
fn a_fifo_read_waits_in_the_ring_and_shutdown_ends_it() {
    for (name, rt) in runtimes() {
        let dir = scratch("fifo", name);
        let path = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        // O_RDWR: opening a FIFO this way never blocks, and the file is
        // its own writer.
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .unwrap()
        };
        let (reader_std, mut writer) = (open(), open());
        rt.block_on(async {
            let mut reader = File::from_std(reader_std);
            let read = weft::spawn(async move {
                let mut buf = [0; 5];
                reader.read_exact(&mut buf).await.unwrap();
                (buf, reader)
            });
            weft::time::sleep(Duration::from_millis(20)).await;
            assert!(
                !read.is_finished(),
                "{name}: read returned before any write"
            );
            std::io::Write::write_all(&mut writer, b"hello").unwrap();
            let (buf, mut reader) = read.await.unwrap();
            assert_eq!(&buf, b"hello", "{name}");
            // Left waiting for the shutdown.
            weft::spawn(async move {
                let mut buf = [0; 1];
                let _ = reader.read(&mut buf).await;
            });
            weft::time::sleep(Duration::from_millis(10)).await;
        });
        let started = Instant::now();
        drop(rt);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name}: shutdown waited {:?} for a FIFO read",
            started.elapsed()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Every combination of the six `OpenOptions` switches, on a file that
/// exists and one that does not: the ring's `openat` gives what std's
/// `open` gives (success or the same error; the same access; the same
/// creating and truncating).
#[test]
fn open_options_through_the_ring_match_std_for_every_combination() {
    let rt = uring::current_thread();
    let dir = scratch("open-matrix", "all");
    let mut compared = 0;
    for bits in 0u32..64 {
        let on = |i: u32| bits & (1 << i) != 0;
        let set = |o: &mut std::fs::OpenOptions| {
            o.read(on(0))
                .write(on(1))
                .append(on(2))
                .truncate(on(3))
                .create(on(4))
                .create_new(on(5));
        };
        for exists in [false, true] {
            // The outcome of one open: error, or (can read, can write,
            // length after the open, file there afterwards).
            let outcome = |path: &PathBuf, file: std::io::Result<std::fs::File>| {
                file.map(|mut f| {
                    let readable = f.read(&mut [0; 1]).is_ok();
                    let writable = std::io::Write::write(&mut f, b"").is_ok()
                        && std::io::Write::write(&mut f, b"z").is_ok();
                    let len = std::fs::metadata(path).unwrap().len();
                    (readable, writable, len)
                })
                .map_err(|e| (e.kind(), e.raw_os_error()))
            };
            let prepare = |path: &PathBuf| {
                let _ = std::fs::remove_file(path);
                if exists {
                    std::fs::write(path, b"0123456789").unwrap();
                }
            };
            let std_path = dir.join(format!("std-{bits}-{exists}"));
            prepare(&std_path);
            let mut std_options = std::fs::OpenOptions::new();
            set(&mut std_options);
            let expected = outcome(&std_path, std_options.open(&std_path));

            let ring_path = dir.join(format!("ring-{bits}-{exists}"));
            prepare(&ring_path);
            let mut options = weft::fs::OpenOptions::new();
            options
                .read(on(0))
                .write(on(1))
                .append(on(2))
                .truncate(on(3))
                .create(on(4))
                .create_new(on(5));
            let file = rt.block_on(async {
                match options.open(&ring_path).await {
                    Ok(file) => Ok(file.into_std().await),
                    Err(e) => Err(e),
                }
            });
            let got = outcome(&ring_path, file);
            assert_eq!(got, expected, "options {bits:06b}, file exists: {exists}");
            compared += 1;
        }
    }
    assert_eq!(compared, 128);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `File::open`/`create`, `fs::read`, `fs::read_to_string` and `fs::write`
/// all work with the runtime's only blocking thread taken: on io_uring
/// none needs the pool.
#[test]
fn opening_reading_and_writing_whole_files_do_not_need_the_blocking_pool() {
    for (name, rt) in runtimes() {
        let dir = scratch("whole-files", name);
        on_a_worker(&rt, {
            let dir = dir.clone();
            async move {
                let work = async {
                    let big = pattern(200_000);
                    weft::fs::write(dir.join("big"), &big).await.unwrap();
                    assert!(
                        weft::fs::read(dir.join("big")).await.unwrap() == big,
                        "{name}"
                    );
                    weft::fs::write(dir.join("text"), "hello").await.unwrap();
                    assert_eq!(
                        weft::fs::read_to_string(dir.join("text")).await.unwrap(),
                        "hello"
                    );
                    let empty = dir.join("empty");
                    File::create(&empty).await.unwrap();
                    assert!(weft::fs::read(&empty).await.unwrap().is_empty(), "{name}");
                    let err = File::open(dir.join("missing")).await.unwrap_err();
                    assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{name}");
                    weft::fs::write(dir.join("bad"), [0xff, 0xfe])
                        .await
                        .unwrap();
                    let err = weft::fs::read_to_string(dir.join("bad")).await.unwrap_err();
                    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{name}");
                };
                without_the_blocking_pool(&format!("{name}: a whole-file call"), work).await;
            }
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// An open whose future is dropped while the ring has it never leaks the
/// descriptor the kernel made: after many dropped opens, no descriptor of
/// the process names the file.
#[test]
fn a_dropped_open_leaks_no_descriptor() {
    /// The process's descriptors open on `path`.
    fn open_on(path: &std::path::Path) -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
            .filter(|target| target == path)
            .count()
    }
    for (name, rt) in runtimes() {
        let dir = scratch("dropped-open", name);
        let path = dir.join("data");
        std::fs::write(&path, b"x").unwrap();
        rt.block_on(async {
            for _ in 0..200 {
                // Polled once (the open is on the ring), then dropped.
                let mut open = std::pin::pin!(File::open(&path));
                let done =
                    std::future::poll_fn(|cx| Poll::Ready(open.as_mut().poll(cx).is_ready())).await;
                let _ = done;
            }
            // Let the cancels and completions come in.
            weft::time::sleep(Duration::from_millis(50)).await;
        });
        drop(rt);
        assert_eq!(open_on(&path), 0, "{name}: dropped opens left descriptors");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `create_dir`, `rename`, `remove_file`, `remove_dir` and
/// `File::sync_all`/`sync_data` on the ring: they work with the blocking
/// pool held, and each failing call gives the error std gives.
#[test]
fn path_calls_and_syncs_run_on_the_ring_with_stds_errors() {
    for (name, rt) in runtimes() {
        let dir = scratch("path-calls", name);
        on_a_worker(&rt, {
            let dir = dir.clone();
            async move {
                let work = async {
                    let sub = dir.join("sub");
                    weft::fs::create_dir(&sub).await.unwrap();
                    let mut file = File::create(sub.join("a")).await.unwrap();
                    file.write_all(b"data").await.unwrap();
                    file.sync_all().await.unwrap();
                    file.sync_data().await.unwrap();
                    drop(file);
                    weft::fs::rename(sub.join("a"), sub.join("b"))
                        .await
                        .unwrap();
                    assert_eq!(std::fs::read(sub.join("b")).unwrap(), b"data", "{name}");
                    assert!(!sub.join("a").exists(), "{name}");

                    // Failures: the same OS error as std's call.
                    let same = |ours: std::io::Error, std: std::io::Error, what: &str| {
                        assert_eq!(
                            ours.raw_os_error(),
                            std.raw_os_error(),
                            "{name}: {what}: {ours} vs {std}"
                        );
                        assert!(ours.raw_os_error().is_some(), "{name}: {what}: {ours}");
                    };
                    same(
                        weft::fs::create_dir(&sub).await.unwrap_err(),
                        std::fs::create_dir(&sub).unwrap_err(),
                        "create_dir on an existing directory",
                    );
                    same(
                        weft::fs::remove_dir(&sub).await.unwrap_err(),
                        std::fs::remove_dir(&sub).unwrap_err(),
                        "remove_dir of a non-empty directory",
                    );
                    same(
                        weft::fs::remove_file(&sub).await.unwrap_err(),
                        std::fs::remove_file(&sub).unwrap_err(),
                        "remove_file of a directory",
                    );
                    same(
                        weft::fs::remove_file(sub.join("a")).await.unwrap_err(),
                        std::fs::remove_file(sub.join("a")).unwrap_err(),
                        "remove_file of a missing file",
                    );
                    same(
                        weft::fs::rename(sub.join("a"), sub.join("c"))
                            .await
                            .unwrap_err(),
                        std::fs::rename(sub.join("a"), sub.join("c")).unwrap_err(),
                        "rename of a missing file",
                    );
                    let nul = weft::fs::remove_file("bad\0name").await.unwrap_err();
                    assert_eq!(nul.kind(), std::io::ErrorKind::InvalidInput, "{name}");

                    weft::fs::remove_file(sub.join("b")).await.unwrap();
                    weft::fs::remove_dir(&sub).await.unwrap();
                    assert!(!sub.exists(), "{name}");
                };
                without_the_blocking_pool(&format!("{name}: a path call or sync"), work).await;
            }
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A multi_thread runtime's `block_on` thread is not a worker: its file
/// calls go to the blocking pool, as on Tokio (through the shared ring,
/// every step waited for a worker to reap it and wake the caller: 2.5×
/// Tokio's time for a small `fs::read`; BENCHMARKS.md). With the pool's
/// only thread held, such a call waits; it completes once the thread is
/// free. The same call in a task runs on the ring and does not wait.
#[test]
fn a_multi_thread_block_on_sends_file_calls_to_the_blocking_pool() {
    for (name, rt) in runtimes()
        .into_iter()
        .filter(|(n, _)| n.starts_with("multi"))
    {
        let dir = scratch("block-on-pool", name);
        let path = dir.join("f");
        std::fs::write(&path, b"contents").unwrap();
        rt.block_on(async {
            let held = hold_the_blocking_pool().await;

            let in_a_task = weft::spawn(weft::fs::read(path.clone()));
            assert_eq!(in_a_task.await.unwrap().unwrap(), b"contents", "{name}");

            let mut read = Box::pin(weft::fs::read(&path));
            let waited = weft::time::timeout(Duration::from_millis(50), &mut read).await;
            assert!(
                waited.is_err(),
                "{name}: the call did not wait for the pool"
            );
            let release = held.release();
            let (read, ()) = weft::join!(read, release);
            assert_eq!(read.unwrap(), b"contents", "{name}");
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `Handle::block_on` of a file call on a current_thread runtime that
/// nobody drives (no thread in `Runtime::block_on`) completes, as on
/// Tokio: the call runs on the blocking pool, since no thread would reap
/// the ring it would otherwise go to. So does one from a blocking-pool
/// thread while the runtime's own `block_on` waits.
#[test]
fn file_calls_complete_in_handle_block_on_on_an_undriven_current_thread_runtime() {
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = weft::runtime::Builder::new_current_thread()
            .enable_all()
            .io_driver(weft::runtime::IoDriver::Uring)
            .build()
            .unwrap();
        let dir = scratch("undriven", "current_thread");
        let path = dir.join("f");
        std::fs::write(&path, b"contents").unwrap();
        let _enter = rt.enter();
        let read = weft::runtime::Handle::current().block_on(weft::fs::read_to_string(&path));
        let from_pool = rt.block_on(async {
            let handle = weft::runtime::Handle::current();
            let path = path.clone();
            weft::task::spawn_blocking(move || handle.block_on(weft::fs::read(&path)))
                .await
                .unwrap()
        });
        done_tx.send((read.unwrap(), from_pool.unwrap())).unwrap();
    });
    let (read, from_pool) = done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("a file call in Handle::block_on never completed");
    assert_eq!(read, "contents");
    assert_eq!(from_pool, b"contents");
}
