//! `weft::fs`: the free functions and `read_dir`, on every flavour (a
//! first slice of issue #14).

#[macro_use]
mod support;

rt_test! {
    use std::path::PathBuf;

    /// A fresh directory per test and flavour.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "weft-fs-{}-{:?}-{name}",
            std::process::id(),
            FLAVOR
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn write_read_copy_rename_remove() {
        rt().block_on(async {
            let dir = scratch("files");
            weft::fs::create_dir_all(dir.join("sub/deeper")).await.unwrap();
            let a = dir.join("a.txt");
            weft::fs::write(&a, "contents").await.unwrap();
            assert_eq!(weft::fs::read_to_string(&a).await.unwrap(), "contents");
            assert_eq!(weft::fs::copy(&a, dir.join("b.txt")).await.unwrap(), 8);
            weft::fs::rename(dir.join("b.txt"), dir.join("sub/c.txt")).await.unwrap();
            assert_eq!(weft::fs::read(dir.join("sub/c.txt")).await.unwrap(), b"contents");
            assert_eq!(weft::fs::metadata(&a).await.unwrap().len(), 8);
            assert!(weft::fs::try_exists(&a).await.unwrap());
            weft::fs::remove_file(&a).await.unwrap();
            assert!(!weft::fs::try_exists(&a).await.unwrap());
            let err = weft::fs::read(&a).await.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
            weft::fs::remove_dir(dir.join("sub/deeper")).await.unwrap();
            weft::fs::remove_dir_all(&dir).await.unwrap();
            assert!(!dir.exists());
        });
    }

    #[test]
    fn links_and_permissions() {
        use std::os::unix::fs::PermissionsExt;
        rt().block_on(async {
            let dir = scratch("links");
            weft::fs::create_dir(&dir).await.unwrap();
            let target = dir.join("target");
            weft::fs::write(&target, b"t").await.unwrap();
            weft::fs::symlink(&target, dir.join("sym")).await.unwrap();
            weft::fs::hard_link(&target, dir.join("hard")).await.unwrap();
            assert_eq!(weft::fs::read_link(dir.join("sym")).await.unwrap(), target);
            assert!(weft::fs::symlink_metadata(dir.join("sym"))
                .await
                .unwrap()
                .file_type()
                .is_symlink());
            assert_eq!(
                weft::fs::canonicalize(dir.join("sym")).await.unwrap(),
                std::fs::canonicalize(&target).unwrap()
            );
            weft::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600))
                .await
                .unwrap();
            let mode = weft::fs::metadata(&target).await.unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            weft::fs::remove_dir_all(&dir).await.unwrap();
        });
    }

    #[test]
    fn read_dir_yields_every_entry_across_batches() {
        rt().block_on(async {
            let dir = scratch("listing");
            weft::fs::create_dir(&dir).await.unwrap();
            // More than one batch of 32.
            for i in 0..70 {
                weft::fs::write(dir.join(format!("f{i:02}")), b"").await.unwrap();
            }
            let mut entries = weft::fs::read_dir(&dir).await.unwrap();
            let mut names = Vec::new();
            while let Some(entry) = entries.next_entry().await.unwrap() {
                assert!(entry.file_type().await.unwrap().is_file());
                assert_eq!(entry.path(), dir.join(entry.file_name()));
                names.push(entry.file_name().into_string().unwrap());
            }
            names.sort();
            let expected: Vec<_> = (0..70).map(|i| format!("f{i:02}")).collect();
            assert_eq!(names, expected);
            assert!(entries.next_entry().await.unwrap().is_none());
            weft::fs::remove_dir_all(&dir).await.unwrap();
        });
    }
}

/// A FIFO opened for reading (through `File::open`, `OpenOptions` and
/// `fs::read`) reads what its writer writes, whether the writer comes
/// after the open or was already waiting for a reader, and reads an empty
/// file from a writer that writes nothing: never the end of the file
/// before a writer came, and never a wait for a second writer. (On
/// io_uring the open itself returns before a writer comes: README,
/// differences.)
#[test]
fn a_fifo_opened_for_reading_reads_what_its_writer_writes() {
    use std::io::Write;
    use std::time::Duration;
    use weft::io::AsyncReadExt;
    let dir = std::env::temp_dir().join(format!("weft-fs-fifo-read-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fifo");
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cases = [
        ("writer after the open", 100, 0, &b"through the fifo"[..]),
        ("writer before the open", 0, 50, &b"through the fifo"[..]),
        ("writer writing nothing", 100, 0, &b""[..]),
    ];
    for how in ["File::open", "OpenOptions", "fs::read"] {
        for (case, writer_after_ms, open_after_ms, bytes) in cases {
            let writer = {
                let path = path.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(writer_after_ms));
                    // Waits for a reader, if none has the FIFO open yet.
                    let mut fifo = std::fs::OpenOptions::new().write(true).open(path).unwrap();
                    fifo.write_all(bytes).unwrap();
                })
            };
            rt.block_on(async {
                weft::time::sleep(Duration::from_millis(open_after_ms)).await;
                let reading = async {
                    let mut fifo = match how {
                        "fs::read" => return weft::fs::read(&path).await.unwrap(),
                        "File::open" => weft::fs::File::open(&path).await.unwrap(),
                        _ => weft::fs::OpenOptions::new()
                            .read(true)
                            .open(&path)
                            .await
                            .unwrap(),
                    };
                    let mut read = Vec::new();
                    fifo.read_to_end(&mut read).await.unwrap();
                    read
                };
                let read = weft::time::timeout(Duration::from_secs(10), reading)
                    .await
                    .unwrap_or_else(|_| panic!("{how}, {case}: the read waited for ever"));
                assert_eq!(read, bytes, "{how}, {case}");
            });
            writer.join().unwrap();
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A FIFO opened for writing waits for a reader, as open(2) and Tokio do:
/// on io_uring the ring's first, non-blocking attempt fails with ENXIO,
/// which went to the caller before.
#[test]
fn a_fifo_opened_for_writing_waits_for_its_reader() {
    use std::time::Duration;
    use weft::io::AsyncWriteExt;
    let dir = std::env::temp_dir().join(format!("weft-fs-fifo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fifo");
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let reader = {
        let path = path.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            std::fs::read(path).unwrap()
        })
    };
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let opened = weft::time::timeout(
            Duration::from_secs(10),
            weft::fs::OpenOptions::new().write(true).open(&path),
        )
        .await
        .expect("the open waited for ever");
        let mut fifo = opened.expect("a FIFO opened for writing waits for its reader");
        fifo.write_all(b"through the fifo").await.unwrap();
        fifo.flush().await.unwrap();
    });
    assert_eq!(reader.join().unwrap(), b"through the fifo");
    std::fs::remove_dir_all(&dir).unwrap();
}
