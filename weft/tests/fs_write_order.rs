//! A `File` write returns before it lands; a filesystem call made after it
//! sees it all the same, as on Tokio (where the write starts at once on a
//! blocking thread and practically always wins): path calls and opens wait
//! for the background writes begun before them (`fs/write_order.rs`). On
//! the io_uring driver, before that wait existed, such a read saw the old
//! contents about 95 times in 100.
//!
//! Each check runs many rounds, because what it rules out is a race: one
//! stale round fails the test.

#[macro_use]
mod support;

rt_test! {
    use std::path::PathBuf;
    use weft::fs::{self, File, OpenOptions};
    use weft::io::{AsyncReadExt, AsyncWriteExt};

    const ROUNDS: usize = 200;

    /// A fresh directory per test and flavour.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "weft-fs-write-order-{}-{:?}-{name}",
            std::process::id(),
            FLAVOR
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_path_read_after_an_unflushed_write_sees_it() {
        rt().block_on(async {
            let dir = scratch("read");
            for round in 0..ROUNDS {
                let path = dir.join(format!("{round}"));
                let mut file = File::create(&path).await.unwrap();
                file.write_all(&[7; 4096]).await.unwrap();
                // The file is still open, the write not flushed.
                let seen = fs::read(&path).await.unwrap();
                assert_eq!(seen.len(), 4096, "round {round}: fs::read missed the write");
                let meta = fs::metadata(&path).await.unwrap();
                assert_eq!(meta.len(), 4096, "round {round}: fs::metadata missed it");
                drop(file);
            }
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn a_write_left_in_flight_by_a_dropped_file_is_seen_by_the_next_open() {
        rt().block_on(async {
            let dir = scratch("dropped");
            for round in 0..ROUNDS {
                let path = dir.join(format!("{round}"));
                let mut file = File::create(&path).await.unwrap();
                file.write_all(b"hello").await.unwrap();
                drop(file);
                let mut text = String::new();
                File::open(&path)
                    .await
                    .unwrap()
                    .read_to_string(&mut text)
                    .await
                    .unwrap();
                assert_eq!(text, "hello", "round {round}: the open missed the write");
            }
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn a_rename_and_an_append_come_after_the_write_before_them() {
        rt().block_on(async {
            let dir = scratch("rename");
            for round in 0..ROUNDS / 2 {
                let (from, to) = (dir.join(format!("a{round}")), dir.join(format!("b{round}")));
                let mut file = File::create(&from).await.unwrap();
                file.write_all(b"first,").await.unwrap();
                drop(file);
                fs::rename(&from, &to).await.unwrap();
                let mut again = OpenOptions::new().append(true).open(&to).await.unwrap();
                again.write_all(b"second").await.unwrap();
                drop(again);
                assert_eq!(
                    fs::read_to_string(&to).await.unwrap(),
                    "first,second",
                    "round {round}"
                );
            }
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    /// Only regular files' writes are waited for: a pipe's write that
    /// waits for its reader must not hold up the reader's own path calls
    /// (Tokio's do not wait for it; before, they waited for ever).
    ///
    /// On both drivers: on the blocking pool the write waits whole (on the
    /// ring a pipe's write returns short and goes on from there).
    #[test]
    fn a_pipe_write_waiting_for_its_reader_does_not_hold_up_path_calls() {
        use weft::runtime::{Builder, IoDriver};
        for driver in [IoDriver::Epoll, IoDriver::Auto] {
            let mut builder = match FLAVOR {
                crate::support::Flavor::CurrentThread => Builder::new_current_thread(),
                crate::support::Flavor::MultiThread(n) => {
                    let mut b = Builder::new_multi_thread();
                    b.worker_threads(n);
                    b
                }
            };
            pipe_write_and_path_call(builder.enable_all().io_driver(driver).build().unwrap());
        }
    }

    fn pipe_write_and_path_call(rt: weft::runtime::Runtime) {
        use std::os::fd::FromRawFd;
        use std::time::Duration;
        rt.block_on(async {
            let dir = scratch("pipe");
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for the two descriptors pipe2 makes.
            assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
            // SAFETY: two new descriptors that nothing else owns.
            let (read_end, write_end) = unsafe {
                (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1]))
            };
            let writer = weft::spawn(async move {
                let mut file = File::from_std(write_end);
                // More than the pipe holds: the write waits for the reader.
                file.write_all(&vec![1; 256 * 1024]).await.unwrap();
                file.flush().await.unwrap();
            });
            // Let the write begin (if it has not, the check below sees
            // nothing to wait for, and passes: it cannot fail wrongly).
            weft::time::sleep(Duration::from_millis(100)).await;
            let seen = weft::time::timeout(Duration::from_secs(5), fs::metadata(&dir)).await;
            let mut got = Vec::new();
            File::from_std(read_end).read_to_end(&mut got).await.unwrap();
            writer.await.unwrap();
            assert!(seen.is_ok(), "fs::metadata waited for the pipe's write");
            assert_eq!(got.len(), 256 * 1024);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    /// The wait is for writes begun before the call only: one file written
    /// all the time by another task does not hold a reader of another
    /// file up for ever.
    #[test]
    fn a_busy_writer_elsewhere_does_not_starve_a_reader() {
        use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
        use std::sync::Arc;
        rt().block_on(async {
            let dir = scratch("busy");
            let stop = Arc::new(AtomicBool::new(false));
            let writes = Arc::new(AtomicU32::new(0));
            let writer = {
                let (path, stop, writes) = (dir.join("busy"), stop.clone(), writes.clone());
                weft::spawn(async move {
                    let mut file = File::create(&path).await.unwrap();
                    while !stop.load(Ordering::SeqCst) {
                        file.write_all(&[1; 512]).await.unwrap();
                        writes.fetch_add(1, Ordering::SeqCst);
                        weft::task::yield_now().await;
                    }
                    file.flush().await.unwrap();
                })
            };
            let other = dir.join("other");
            fs::write(&other, b"x").await.unwrap();
            // The writer is writing before the reads start.
            while writes.load(Ordering::SeqCst) == 0 {
                weft::task::yield_now().await;
            }
            for _ in 0..50 {
                assert_eq!(fs::read(&other).await.unwrap(), b"x");
            }
            stop.store(true, Ordering::SeqCst);
            writer.await.unwrap();
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }
}

/// A write on a runtime nobody drives does not hold another runtime's file
/// calls up: the order is per runtime. A current_thread runtime outside
/// its `block_on` reaps none of its ring's completions, so a process-wide
/// order hung here (on io_uring) until the first runtime ran again. The
/// write is still seen by a later call on its own runtime.
#[test]
fn a_write_on_an_idle_runtime_does_not_hold_up_another_runtime() {
    use std::time::Duration;
    use weft::io::AsyncWriteExt;
    let current = || {
        weft::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    let dir = std::env::temp_dir().join(format!("weft-fs-write-order-idle-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("f");
    let idle = current();
    let file = idle.block_on(async {
        let mut file = weft::fs::File::create(&path).await.unwrap();
        file.write_all(b"hello").await.unwrap();
        file
    });
    let other = current();
    let seen = other.block_on(async {
        weft::time::timeout(Duration::from_secs(5), weft::fs::metadata(&dir)).await
    });
    assert!(
        seen.is_ok(),
        "a path call on another runtime waited for the idle one's write"
    );
    let read = idle.block_on(async { weft::fs::read(&path).await.unwrap() });
    assert_eq!(read, b"hello");
    drop(file);
    std::fs::remove_dir_all(&dir).unwrap();
}
