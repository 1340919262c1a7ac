//! File, directory and standard-stream calls made through the handle of a
//! runtime that has shut down fail as Tokio's do: a filesystem call with
//! kind `Other` and the text `background task failed` (its source, a
//! cancelled `JoinError`, says why), a standard stream with the error
//! `runtime::is_rt_shutdown_err` recognises, and nothing written. On every
//! flavour, and on the I/O driver `WEFT_IO_DRIVER` picks (io_uring, whose
//! file calls otherwise use the rings, by default).

use std::time::Duration;
use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::runtime::{Builder, Handle, Runtime};

fn flavours() -> Vec<(&'static str, Runtime)> {
    vec![
        (
            "current_thread",
            Builder::new_current_thread().enable_all().build().unwrap(),
        ),
        (
            "multi_thread",
            Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap(),
        ),
    ]
}

/// The handle of `rt` after it has shut down.
fn shut_down(rt: Runtime) -> Handle {
    let handle = rt.handle().clone();
    rt.shutdown_timeout(Duration::from_secs(10));
    handle
}

#[track_caller]
fn assert_background_failed(err: &std::io::Error, what: &str) {
    assert_eq!(err.kind(), std::io::ErrorKind::Other, "{what}: {err:?}");
    let inner = err.get_ref().expect("an inner error");
    assert_eq!(inner.to_string(), "background task failed", "{what}");
    let why = inner
        .source()
        .and_then(|s| s.downcast_ref::<weft::task::JoinError>())
        .unwrap_or_else(|| panic!("{what}: the source is not a JoinError: {err:?}"));
    assert!(why.is_cancelled(), "{what}: {why}");
    assert!(
        !weft::runtime::is_rt_shutdown_err(err),
        "{what}: Tokio's fs error is not the runtime-shutdown one"
    );
}

fn temp_file(tag: &str, contents: &[u8]) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("weft-rt-shut-down-{}-{tag}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn path_calls_fail_with_tokios_error() {
    let path = temp_file("path", b"hello");
    for (name, rt) in flavours() {
        let handle = shut_down(rt);
        let err = handle.block_on(weft::fs::read(&path)).unwrap_err();
        assert_background_failed(&err, &format!("{name}: fs::read"));
        let err = handle
            .block_on(weft::fs::read_to_string(&path))
            .unwrap_err();
        assert_background_failed(&err, &format!("{name}: fs::read_to_string"));
        let err = handle.block_on(weft::fs::metadata(&path)).unwrap_err();
        assert_background_failed(&err, &format!("{name}: fs::metadata"));
        let err = handle.block_on(weft::fs::File::open(&path)).unwrap_err();
        assert_background_failed(&err, &format!("{name}: File::open"));
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn an_open_file_fails_with_tokios_error_and_reads_nothing() {
    let path = temp_file("file", b"hello");
    for (name, rt) in flavours() {
        let mut file = rt.block_on(weft::fs::File::open(&path)).unwrap();
        let handle = shut_down(rt);
        let mut buf = [0u8; 5];
        let err = handle.block_on(file.read(&mut buf)).unwrap_err();
        assert_background_failed(&err, &format!("{name}: File::read"));
        assert_eq!(buf, [0; 5], "{name}: nothing was read");
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn read_dir_fails_with_tokios_error() {
    for (name, rt) in flavours() {
        let handle = shut_down(rt);
        let err = handle
            .block_on(weft::fs::read_dir(std::env::temp_dir()))
            .unwrap_err();
        assert_background_failed(&err, &format!("{name}: fs::read_dir"));
    }
}

#[test]
fn standard_streams_fail_with_the_shutdown_error() {
    for (name, rt) in flavours() {
        let handle = shut_down(rt);
        let err = handle
            .block_on(async { weft::io::stdout().write_all(b"not written\n").await })
            .unwrap_err();
        assert!(
            weft::runtime::is_rt_shutdown_err(&err),
            "{name}: stdout write: {err:?}"
        );
        let err = handle
            .block_on(async { weft::io::stderr().flush().await })
            .unwrap_err();
        assert!(
            weft::runtime::is_rt_shutdown_err(&err),
            "{name}: stderr flush: {err:?}"
        );
        let err = handle
            .block_on(async { weft::io::stdin().read(&mut [0u8; 4]).await })
            .unwrap_err();
        assert!(
            weft::runtime::is_rt_shutdown_err(&err),
            "{name}: stdin read: {err:?}"
        );
    }
}

#[test]
fn a_stream_that_found_the_runtime_shut_down_stays_failed() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    let mut out = rt.block_on(async { weft::io::stdout() });
    let handle = shut_down(rt);
    for attempt in 0..2 {
        let err = handle.block_on(out.write(b"x")).unwrap_err();
        assert!(
            weft::runtime::is_rt_shutdown_err(&err),
            "attempt {attempt}: {err:?}"
        );
    }
    let err = handle.block_on(out.flush()).unwrap_err();
    assert!(weft::runtime::is_rt_shutdown_err(&err), "{err:?}");
}
