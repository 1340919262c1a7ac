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

    /// The wait is for writes begun before the call only: one file written
    /// all the time by another task does not hold a reader of another
    /// file up for ever.
    #[test]
    fn a_busy_writer_elsewhere_does_not_starve_a_reader() {
        rt().block_on(async {
            let dir = scratch("busy");
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let writer = {
                let (path, stop) = (dir.join("busy"), stop.clone());
                weft::spawn(async move {
                    let mut file = File::create(&path).await.unwrap();
                    let mut writes = 0_u32;
                    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                        file.write_all(&[1; 512]).await.unwrap();
                        writes += 1;
                        weft::task::yield_now().await;
                    }
                    file.flush().await.unwrap();
                    writes
                })
            };
            let other = dir.join("other");
            fs::write(&other, b"x").await.unwrap();
            for _ in 0..50 {
                assert_eq!(fs::read(&other).await.unwrap(), b"x");
            }
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
            assert!(writer.await.unwrap() > 0);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }
}
