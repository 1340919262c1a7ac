//! `weft::net::unix::pipe`: anonymous pipes and FIFOs, on every flavour.

#[macro_use]
mod support;

rt_test! {
    use std::io::ErrorKind;
    use std::os::fd::AsRawFd;
    use std::path::PathBuf;
    use std::time::Duration;
    use weft::io::{AsyncReadExt, AsyncWriteExt};
    use weft::net::unix::pipe;

    /// A fresh FIFO per test and flavour.
    fn fifo(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!(
            "weft-fifo-{}-{:?}-{name}",
            std::process::id(),
            FLAVOR
        ));
        let _ = std::fs::remove_file(&path);
        let status = std::process::Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(status.success());
        path
    }

    fn is_nonblocking(fd: &impl AsRawFd) -> bool {
        // SAFETY: F_GETFL only reads the flags of an fd the caller holds open.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        assert!(flags >= 0);
        flags & libc::O_NONBLOCK != 0
    }

    #[test]
    fn writes_larger_than_the_pipe_buffer_arrive_whole_then_eof() {
        rt().block_on(async {
            let (mut tx, mut rx) = pipe::pipe().unwrap();
            let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
            let writer = {
                let data = data.clone();
                weft::spawn(async move {
                    tx.write_all(&data).await.unwrap();
                })
            };
            let mut got = Vec::new();
            rx.read_to_end(&mut got).await.unwrap();
            writer.await.unwrap();
            assert!(got == data, "got {} bytes, not the same 300,000", got.len());
        });
    }

    #[test]
    fn try_read_on_an_empty_pipe_would_block_then_sees_data() {
        rt().block_on(async {
            let (tx, rx) = pipe::pipe().unwrap();
            let mut buf = [0u8; 16];
            assert_eq!(rx.try_read(&mut buf).unwrap_err().kind(), ErrorKind::WouldBlock);
            // As in Tokio, readiness is learnt from the driver: wait first.
            tx.writable().await.unwrap();
            assert_eq!(tx.try_write(b"abc").unwrap(), 3);
            rx.readable().await.unwrap();
            assert_eq!(rx.try_read(&mut buf).unwrap(), 3);
            assert_eq!(&buf[..3], b"abc");
            let mut spare = Vec::with_capacity(8);
            assert_eq!(rx.try_read_buf(&mut spare).unwrap_err().kind(), ErrorKind::WouldBlock);
            tx.try_write(b"xy").unwrap();
            rx.readable().await.unwrap();
            assert_eq!(rx.try_read_buf(&mut spare).unwrap(), 2);
            assert_eq!(spare, b"xy");
            drop(tx);
            rx.readable().await.unwrap();
            assert_eq!(rx.try_read(&mut buf).unwrap(), 0, "end-of-file after the sender drops");
        });
    }

    #[test]
    fn a_full_pipe_makes_the_writer_wait_until_read() {
        rt().block_on(async {
            let (tx, mut rx) = pipe::pipe().unwrap();
            let chunk = [7u8; 4096];
            let mut written = 0;
            tx.writable().await.unwrap();
            loop {
                match tx.try_write(&chunk) {
                    Ok(n) => written += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{e}"),
                }
            }
            let full = weft::time::timeout(Duration::from_millis(50), tx.writable()).await;
            assert!(full.is_err(), "a full pipe reported writable");
            let mut drain = vec![0u8; written];
            rx.read_exact(&mut drain).await.unwrap();
            weft::time::timeout(Duration::from_secs(10), tx.writable())
                .await
                .expect("drained pipe never became writable")
                .unwrap();
        });
    }

    #[test]
    fn fifo_opened_by_path_carries_data() {
        rt().block_on(async {
            let path = fifo("data");
            let mut rx = pipe::OpenOptions::new().open_receiver(&path).unwrap();
            let mut tx = pipe::OpenOptions::new().open_sender(&path).unwrap();
            tx.write_all(b"through the fifo").await.unwrap();
            drop(tx);
            let mut got = String::new();
            rx.read_to_string(&mut got).await.unwrap();
            assert_eq!(got, "through the fifo");
            std::fs::remove_file(path).unwrap();
        });
    }

    #[test]
    fn sender_without_reader_fails_unless_read_write() {
        rt().block_on(async {
            let path = fifo("noreader");
            let err = pipe::OpenOptions::new().open_sender(&path).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::ENXIO));
            let tx = pipe::OpenOptions::new().read_write(true).open_sender(&path).unwrap();
            tx.writable().await.unwrap();
            assert_eq!(tx.try_write(b"kept").unwrap(), 4);
            std::fs::remove_file(path).unwrap();
        });
    }

    #[test]
    fn non_fifos_and_wrong_access_modes_are_refused() {
        rt().block_on(async {
            let file_path = fifo("regular");
            std::fs::remove_file(&file_path).unwrap();
            std::fs::write(&file_path, b"plain").unwrap();
            let err = pipe::OpenOptions::new().open_receiver(&file_path).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            // `unchecked` skips the check (and epoll then refuses a
            // regular file).
            let err = pipe::OpenOptions::new().unchecked(true).open_receiver(&file_path).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::PermissionDenied);
            std::fs::remove_file(&file_path).unwrap();

            let (std_rx, std_tx) = std::io::pipe().unwrap();
            let err = pipe::Sender::from_owned_fd(std_rx.into()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "a read end is not a sender");
            let err = pipe::Receiver::from_owned_fd(std_tx.into()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "a write end is not a receiver");
        });
    }

    #[test]
    fn ends_come_back_blocking_or_not_as_asked() {
        rt().block_on(async {
            let (tx, rx) = pipe::pipe().unwrap();
            assert!(is_nonblocking(&tx) && is_nonblocking(&rx));
            let tx = tx.into_blocking_fd().unwrap();
            assert!(!is_nonblocking(&tx));
            let rx = rx.into_nonblocking_fd().unwrap();
            assert!(is_nonblocking(&rx));
            // And back in: from_owned_fd makes it non-blocking again.
            let tx = pipe::Sender::from_owned_fd(tx).unwrap();
            assert!(is_nonblocking(&tx));
        });
    }
}
