//! io_uring refused by the kernel (as seccomp or `kernel.io_uring_disabled`
//! refuse it), forced through the probe's hidden hook, which makes the
//! probe's `io_uring_setup` fail with `EPERM`: `Auto` falls back to epoll
//! silently, an explicit `Uring` fails `build()` saying why, and `Epoll`
//! is unaffected. One test in its own binary: it sets the process's
//! environment.

use weft::runtime::{Builder, IoDriver, IO_DRIVER_ENV};

#[test]
fn a_refused_setup_falls_back_under_auto_and_fails_an_explicit_request() {
    std::env::set_var("WEFT_IO_URING_FAIL_SETUP", libc_eperm().to_string());
    std::env::remove_var(IO_DRIVER_ENV);

    let auto = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("Auto must fall back to epoll, not fail");
    assert_eq!(auto.metrics().io_driver(), Some(IoDriver::Epoll));
    // The fallback runtime still does I/O.
    auto.block_on(async {
        let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (c, s) = weft::join!(weft::net::TcpStream::connect(addr), listener.accept());
        let (mut c, (mut s, _)) = (c.unwrap(), s.unwrap());
        use weft::io::{AsyncReadExt, AsyncWriteExt};
        c.write_all(b"ok").await.unwrap();
        let mut b = [0u8; 2];
        s.read_exact(&mut b).await.unwrap();
        assert_eq!(&b, b"ok");
    });

    let err = Builder::new_current_thread()
        .enable_all()
        .io_driver(IoDriver::Uring)
        .build()
        .expect_err("an explicit io_uring request must fail where it is refused");
    assert_eq!(err.kind(), std::io::ErrorKind::Unsupported);
    let msg = err.to_string();
    assert!(msg.contains("io_uring_setup failed"), "{msg}");
    assert!(msg.contains("Operation not permitted"), "{msg}");
    assert!(
        msg.contains("IoDriver::Auto"),
        "the error should name the fix: {msg}"
    );

    // The environment's choice is an explicit request too.
    std::env::set_var(IO_DRIVER_ENV, "uring");
    assert!(Builder::new_current_thread().enable_all().build().is_err());
    std::env::set_var(IO_DRIVER_ENV, "epoll");
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    assert_eq!(rt.metrics().io_driver(), Some(IoDriver::Epoll));
    // A builder's own setting wins over the environment.
    std::env::set_var(IO_DRIVER_ENV, "uring");
    let rt = Builder::new_current_thread()
        .enable_all()
        .io_driver(IoDriver::Epoll)
        .build()
        .unwrap();
    assert_eq!(rt.metrics().io_driver(), Some(IoDriver::Epoll));
    // A misspelt driver is an error that lists the valid names.
    std::env::set_var(IO_DRIVER_ENV, "kqueue");
    let err = Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("auto, epoll or uring"), "{err}");
    // Without the I/O driver there is no I/O driver to report.
    std::env::remove_var(IO_DRIVER_ENV);
    let rt = Builder::new_current_thread().enable_time().build().unwrap();
    assert_eq!(rt.metrics().io_driver(), None);
}

fn libc_eperm() -> i32 {
    1
}
