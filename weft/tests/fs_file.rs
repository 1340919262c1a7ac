//! `weft::fs::{File, OpenOptions, DirBuilder}` on every flavour (issue
//! #14): buffered background writes, read-ahead accounting, errors kept for
//! the next operation, and the builders' options.

#[macro_use]
mod support;

/// `File` can move between tasks and be shared, as Tokio's can.
#[allow(dead_code)]
fn file_is_send_and_sync() {
    fn check<T: Send + Sync + 'static>() {}
    check::<weft::fs::File>();
    check::<weft::fs::OpenOptions>();
    check::<weft::fs::DirBuilder>();
}

rt_test! {
    use std::io::{ErrorKind, SeekFrom};
    use std::path::{Path, PathBuf};
    use std::pin::Pin;
    use std::task::Poll;
    use std::time::{Duration, Instant};
    use weft::fs::{DirBuilder, File, OpenOptions};
    use weft::io::{AsyncRead, AsyncReadExt, AsyncSeekExt, AsyncWriteExt, ReadBuf};

    /// A fresh directory per test and flavour.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "weft-fs-file-{}-{:?}-{name}",
            std::process::id(),
            FLAVOR
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// `len` bytes that are not all alike, so misplaced chunks show.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    /// Leave bytes read ahead in `file`'s buffer: start a read with a large
    /// buffer, then drop that read while it is in flight, so the next read
    /// takes its bytes. The file is rewound first. Retries in the rare case
    /// the blocking read finished before the first poll returned.
    async fn read_ahead(file: &mut File) {
        loop {
            file.rewind().await.unwrap();
            let mut big = [0u8; 64];
            let pending = std::future::poll_fn(|cx| {
                let mut buf = ReadBuf::new(&mut big);
                Poll::Ready(Pin::new(&mut *file).poll_read(cx, &mut buf).is_pending())
            })
            .await;
            if pending {
                return;
            }
        }
    }

    /// Wait, with a deadline, until `path` is `len` bytes long.
    fn wait_for_len(path: &Path, len: u64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let now = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            if now == len {
                return;
            }
            assert!(Instant::now() < deadline, "{path:?} stayed at {now} bytes, not {len}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn write_then_read_back() {
        rt().block_on(async {
            let dir = scratch("roundtrip");
            let path = dir.join("f");
            let mut file = File::create(&path).await.unwrap();
            file.write_all(b"hello, file").await.unwrap();
            file.shutdown().await.unwrap();
            drop(file);

            let mut file = File::open(&path).await.unwrap();
            let mut text = String::new();
            file.read_to_string(&mut text).await.unwrap();
            assert_eq!(text, "hello, file");
            // At the end: a further read gives nothing.
            assert_eq!(file.read(&mut [0u8; 8]).await.unwrap(), 0);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn a_write_returns_before_it_lands_and_flush_waits_for_it() {
        rt().block_on(async {
            let dir = scratch("flush");
            let path = dir.join("f");
            let data = pattern(2 * 1024 * 1024);
            let mut file = File::create(&path).await.unwrap();
            // One call: the whole 2 MiB are taken into the buffer at once.
            assert_eq!(file.write(&data).await.unwrap(), data.len());
            file.flush().await.unwrap();
            // No waiting: flush returned after the write was done.
            assert_eq!(std::fs::read(&path).unwrap(), data);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn a_dropped_file_still_finishes_its_write() {
        rt().block_on(async {
            let dir = scratch("drop");
            let path = dir.join("f");
            let data = pattern(1024 * 1024 + 17);
            let mut file = File::create(&path).await.unwrap();
            file.write_all(&data).await.unwrap();
            drop(file);
            wait_for_len(&path, data.len() as u64);
            assert_eq!(std::fs::read(&path).unwrap(), data);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn reads_see_earlier_writes() {
        rt().block_on(async {
            let dir = scratch("read-after-write");
            let path = dir.join("f");
            let mut file = File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .await
                .unwrap();
            file.write_all(b"written").await.unwrap();
            // The read waits for the write: the cursor is then at the end.
            assert_eq!(file.read(&mut [0u8; 16]).await.unwrap(), 0);
            file.write_all(b" twice").await.unwrap();
            file.rewind().await.unwrap();
            let mut text = String::new();
            file.read_to_string(&mut text).await.unwrap();
            assert_eq!(text, "written twice");
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn seek_counts_bytes_read_ahead() {
        rt().block_on(async {
            let dir = scratch("seek");
            let path = dir.join("f");
            std::fs::write(&path, b"abcdef").unwrap();
            let mut file = File::open(&path).await.unwrap();
            read_ahead(&mut file).await;
            // The OS read all six bytes; the caller takes three.
            let mut three = [0u8; 3];
            assert_eq!(file.read(&mut three).await.unwrap(), 3);
            assert_eq!(&three, b"abc");
            assert_eq!(file.stream_position().await.unwrap(), 3);
            let mut rest = String::new();
            file.read_to_string(&mut rest).await.unwrap();
            assert_eq!(rest, "def");

            // Relative seeks count from the caller's position too.
            read_ahead(&mut file).await;
            file.read_exact(&mut [0u8; 2]).await.unwrap();
            assert_eq!(file.seek(SeekFrom::Current(1)).await.unwrap(), 3);
            assert_eq!(file.seek(SeekFrom::End(-1)).await.unwrap(), 5);
            assert_eq!(file.read_u8().await.unwrap(), b'f');
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn a_write_after_reading_ahead_lands_at_the_callers_position() {
        rt().block_on(async {
            let dir = scratch("write-after-read");
            let path = dir.join("f");
            std::fs::write(&path, b"0123456789").unwrap();
            let mut file = File::options().read(true).write(true).open(&path).await.unwrap();
            read_ahead(&mut file).await;
            file.read_exact(&mut [0u8; 2]).await.unwrap();
            file.write_all(b"AB").await.unwrap();
            file.flush().await.unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"01AB456789");
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn set_len_waits_for_the_write_and_resizes() {
        rt().block_on(async {
            let dir = scratch("set-len");
            let path = dir.join("f");
            let mut file = File::create(&path).await.unwrap();
            file.write_all(b"hello world").await.unwrap();
            // No flush: set_len must wait, or the write would land after it.
            file.set_len(5).await.unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"hello");
            file.set_len(8).await.unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"hello\0\0\0");
            // Not open for writing: set_len's own error.
            let reader = File::open(&path).await.unwrap();
            assert!(reader.set_len(1).await.is_err());
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn sync_and_metadata_follow_the_write_in_flight() {
        rt().block_on(async {
            let dir = scratch("sync");
            let path = dir.join("f");
            let data = pattern(1024 * 1024);
            let mut file = File::create(&path).await.unwrap();
            // Each time, the metadata call starts while the write runs.
            for i in 1..=4 {
                file.write_all(&data).await.unwrap();
                assert_eq!(file.metadata().await.unwrap().len(), i * data.len() as u64);
            }
            let len = 4 * data.len() as u64;
            file.write_all(&data).await.unwrap();
            file.sync_all().await.unwrap();
            assert_eq!(std::fs::metadata(&path).unwrap().len(), len + data.len() as u64);
            file.write_all(&data).await.unwrap();
            file.sync_data().await.unwrap();
            assert_eq!(std::fs::metadata(&path).unwrap().len(), len + 2 * data.len() as u64);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn set_permissions_and_try_clone_share_the_file() {
        use std::os::unix::fs::PermissionsExt;
        rt().block_on(async {
            let dir = scratch("clone");
            let path = dir.join("f");
            let mut a = File::create(&path).await.unwrap();
            a.set_max_buf_size(4096);
            a.write_all(b"ab").await.unwrap();
            let mut b = a.try_clone().await.unwrap();
            assert_eq!(b.max_buf_size(), 4096);
            // Shared cursor: b's write follows a's.
            b.write_all(b"cd").await.unwrap();
            b.flush().await.unwrap();
            a.write_all(b"ef").await.unwrap();
            a.flush().await.unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"abcdef");
            a.set_permissions(std::fs::Permissions::from_mode(0o640)).await.unwrap();
            let mode = b.metadata().await.unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o640);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn into_std_waits_for_the_write() {
        use std::io::Read;
        use std::os::unix::io::{AsFd, AsRawFd, FromRawFd, IntoRawFd};
        rt().block_on(async {
            let dir = scratch("into-std");
            let path = dir.join("f");
            let data = pattern(1024 * 1024);
            let mut file = File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .await
                .unwrap();
            assert_eq!(file.as_raw_fd(), file.as_fd().as_raw_fd());
            file.write_all(&data).await.unwrap();
            let mut std = file.into_std().await;
            assert_eq!(std.metadata().unwrap().len(), data.len() as u64);
            std::io::Seek::rewind(&mut std).unwrap();

            // And back, through a raw descriptor.
            // SAFETY: the descriptor comes from `into_raw_fd`, so it is open
            // and owned by nothing else.
            let mut file = unsafe { File::from_raw_fd(std.into_raw_fd()) };
            let mut first = [0u8; 4];
            file.read_exact(&mut first).await.unwrap();
            assert_eq!(first, data[..4]);
            // Idle: the std file comes back at once, cursor after what was
            // read (nothing was read ahead).
            let mut std = file.try_into_std().expect("no operation in flight");
            let mut next = [0u8; 1];
            std.read_exact(&mut next).unwrap();
            assert_eq!(next[0], data[4]);

            let file = File::from(std);
            // A write in flight holds the file: either it is still running
            // (Err, and the File comes back) or it is already done.
            let mut file = file;
            file.write_all(&data).await.unwrap();
            match file.try_into_std() {
                Ok(_) => {}
                Err(mut file) => {
                    file.flush().await.unwrap();
                    file.try_into_std().expect("idle after flush");
                }
            }
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn create_new_refuses_an_existing_file() {
        rt().block_on(async {
            let dir = scratch("create-new");
            let path = dir.join("f");
            let mut file = File::create_new(&path).await.unwrap();
            // Read and write access.
            file.write_all(b"new").await.unwrap();
            file.rewind().await.unwrap();
            assert_eq!(file.read_u8().await.unwrap(), b'n');
            let err = File::create_new(&path).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::AlreadyExists);
            let err = File::open(dir.join("missing")).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::NotFound);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn open_options_append_truncate_mode() {
        use std::os::unix::fs::PermissionsExt;
        rt().block_on(async {
            let dir = scratch("options");
            let path = dir.join("f");
            std::fs::write(&path, b"one").unwrap();

            let mut file = OpenOptions::new().append(true).open(&path).await.unwrap();
            file.write_all(b"two").await.unwrap();
            file.flush().await.unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"onetwo");

            // Writing without truncate overwrites in place.
            let mut file = OpenOptions::new().write(true).open(&path).await.unwrap();
            file.write_all(b"ON").await.unwrap();
            file.flush().await.unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"ONetwo");

            OpenOptions::new().write(true).truncate(true).open(&path).await.unwrap();
            assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);

            let private = dir.join("private");
            let mut options = OpenOptions::new();
            options.write(true).create(true).mode(0o600).custom_flags(0);
            options.open(&private).await.unwrap();
            let mode = std::fs::metadata(&private).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);

            // From std's builder, options kept; no access mode is an error.
            let mut std_options = std::fs::OpenOptions::new();
            std_options.read(true);
            assert!(OpenOptions::from(std_options).open(&path).await.is_ok());
            let err = OpenOptions::default().open(&path).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            let err = OpenOptions::new().write(true).open(dir.join("no")).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::NotFound);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn dir_builder_recursive_and_not() {
        use std::os::unix::fs::PermissionsExt;
        rt().block_on(async {
            let dir = scratch("dir-builder");
            let deep = dir.join("a/b/c");
            let err = DirBuilder::new().create(&deep).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::NotFound);
            DirBuilder::new().recursive(true).create(&deep).await.unwrap();
            assert!(std::fs::metadata(&deep).unwrap().is_dir());
            // Existing: fine when recursive, an error when not.
            DirBuilder::new().recursive(true).create(&deep).await.unwrap();
            let err = DirBuilder::new().create(&deep).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::AlreadyExists);

            let private = dir.join("private");
            DirBuilder::new().mode(0o700).create(&private).await.unwrap();
            let mode = std::fs::metadata(&private).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn writes_and_reads_larger_than_max_buf_size() {
        rt().block_on(async {
            let dir = scratch("large");
            let path = dir.join("f");
            let data = pattern(5 * 1024 * 1024 + 3);
            let mut file = File::create(&path).await.unwrap();
            assert_eq!(file.max_buf_size(), 2 * 1024 * 1024);
            // One write takes at most the bound...
            assert_eq!(file.write(&data).await.unwrap(), 2 * 1024 * 1024);
            // ...and write_all loops for the rest.
            file.write_all(&data[2 * 1024 * 1024..]).await.unwrap();
            file.flush().await.unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), data);

            // A small bound: every read and write moves at most 7 bytes.
            let small = dir.join("small");
            let mut file = File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&small)
                .await
                .unwrap();
            file.set_max_buf_size(7);
            assert_eq!(file.write(&data[..100]).await.unwrap(), 7);
            file.write_all(&data[7..100]).await.unwrap();
            file.rewind().await.unwrap();
            let mut buf = [0u8; 64];
            assert_eq!(file.read(&mut buf).await.unwrap(), 7);
            let mut all = buf[..7].to_vec();
            file.read_to_end(&mut all).await.unwrap();
            assert_eq!(all, &data[..100]);
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    #[test]
    fn a_failed_background_write_is_reported_by_the_next_operation() {
        rt().block_on(async {
            let dir = scratch("write-error");
            let path = dir.join("f");
            std::fs::write(&path, b"read only").unwrap();

            // Read-only: the write is accepted, its failure shows at flush,
            // once.
            let mut file = File::open(&path).await.unwrap();
            assert_eq!(file.write(b"x").await.unwrap(), 1);
            assert!(file.flush().await.is_err());
            file.flush().await.unwrap();

            // A read waits for the failed write but leaves its error for the
            // next write.
            let mut file = File::open(&path).await.unwrap();
            file.write_all(b"x").await.unwrap();
            let mut text = String::new();
            file.read_to_string(&mut text).await.unwrap();
            assert_eq!(text, "read only");
            assert!(file.write(b"y").await.is_err());

            // sync_all and set_len report it too, rather than succeed.
            let mut file = File::open(&path).await.unwrap();
            file.write_all(b"x").await.unwrap();
            assert!(file.sync_all().await.is_err());
            file.sync_all().await.unwrap();
            file.write_all(b"x").await.unwrap();
            assert!(file.set_len(0).await.is_err());
            // Reported once: the next flush is clean.
            file.flush().await.unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"read only");
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }

    /// A `BufReader` over a `File` seeks after it has buffered bytes: the
    /// `seek` first completes any seek in flight, and the file, idle,
    /// reports where it last seeked (0), behind what the reader buffered.
    /// async_zip's Tokio reader did this (through tokio-util's `Compat`)
    /// and hit an overflow in `BufReader::poll_complete`.
    #[test]
    fn a_buf_reader_over_a_file_seeks_after_buffering() {
        use weft::io::{AsyncBufReadExt, BufReader};

        rt().block_on(async {
            let dir = scratch("buf-reader-seek");
            let path = dir.join("lines");
            std::fs::write(&path, b"hello\nworld\n").unwrap();
            let mut reader = BufReader::new(File::open(&path).await.unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).await.unwrap();
            assert_eq!((line.as_str(), reader.buffer()), ("hello\n", &b"world\n"[..]));

            assert_eq!(reader.stream_position().await.unwrap(), 6);
            assert_eq!(reader.seek(SeekFrom::Start(0)).await.unwrap(), 0);
            line.clear();
            reader.read_line(&mut line).await.unwrap();
            assert_eq!(line, "hello\n");
            assert_eq!(reader.seek(SeekFrom::Current(1)).await.unwrap(), 7);
            line.clear();
            reader.read_line(&mut line).await.unwrap();
            assert_eq!(line, "orld\n");
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }
}
