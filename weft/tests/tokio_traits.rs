//! Trait impls Tokio's types have and programs lean on: conversions from
//! std types (`TryFrom` for the socket types, the same as their
//! `from_std`; `From<OwnedFd>` for `fs::File`), unwind safety, and the
//! auto traits Tokio's own `async_send_sync` test checks where weft once
//! differed.

use std::io::Write;

#[test]
fn std_sockets_and_descriptors_convert() {
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use weft::io::AsyncReadExt;

        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = std_listener.local_addr().unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let listener = weft::net::TcpListener::try_from(std_listener).unwrap();
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let std_accepted = accepted.into_std().unwrap();
        let mut stream: weft::net::TcpStream = std_accepted.try_into().unwrap();
        client.write_all(b"tcp").unwrap();
        let mut buf = [0u8; 3];
        stream.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"tcp");

        let std_udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        std_udp.set_nonblocking(true).unwrap();
        let udp = weft::net::UdpSocket::try_from(std_udp).unwrap();
        udp.send_to(b"udp", udp.local_addr().unwrap())
            .await
            .unwrap();
        assert_eq!(udp.recv(&mut buf).await.unwrap(), 3);

        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let mut a = weft::net::UnixStream::try_from(a).unwrap();
        b.write_all(b"uds").unwrap();
        a.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"uds");

        let (d, e) = std::os::unix::net::UnixDatagram::pair().unwrap();
        d.set_nonblocking(true).unwrap();
        let d = weft::net::UnixDatagram::try_from(d).unwrap();
        e.send(b"dgr").unwrap();
        assert_eq!(d.recv(&mut buf).await.unwrap(), 3);

        let dir = std::env::temp_dir().join(format!("weft-conv-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let ul = std::os::unix::net::UnixListener::bind(dir.join("s")).unwrap();
        ul.set_nonblocking(true).unwrap();
        let ul = weft::net::UnixListener::try_from(ul).unwrap();
        let _peer = std::os::unix::net::UnixStream::connect(dir.join("s")).unwrap();
        ul.accept().await.unwrap();

        std::fs::write(dir.join("f"), b"file").unwrap();
        let fd: std::os::fd::OwnedFd = std::fs::File::open(dir.join("f")).unwrap().into();
        let mut file = weft::fs::File::from(fd);
        let mut text = String::new();
        file.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "file");
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

fn unwind_safe<T: std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
fn sync<T: Sync>() {}

/// The types Tokio declares unwind safe (a `catch_unwind` around code that
/// holds them compiles), whatever a channel's or task's item type is.
#[test]
fn unwind_safe_and_sync_where_tokio_is() {
    type NotUnwindSafe = std::cell::Cell<u8>;
    unwind_safe::<weft::runtime::Runtime>();
    unwind_safe::<weft::runtime::Handle>();
    unwind_safe::<weft::runtime::LocalRuntime>();
    unwind_safe::<weft::task::JoinHandle<NotUnwindSafe>>();
    unwind_safe::<weft::task::AbortHandle>();
    unwind_safe::<weft::sync::Notify>();
    unwind_safe::<weft::sync::mpsc::Receiver<NotUnwindSafe>>();
    unwind_safe::<weft::sync::mpsc::Sender<NotUnwindSafe>>();
    unwind_safe::<weft::sync::mpsc::UnboundedReceiver<NotUnwindSafe>>();
    unwind_safe::<weft::net::TcpStream>();
    unwind_safe::<weft::net::TcpListener>();
    unwind_safe::<weft::net::UdpSocket>();
    unwind_safe::<weft::net::UnixStream>();
    unwind_safe::<weft::net::UnixListener>();
    unwind_safe::<weft::net::UnixDatagram>();
    // `Sync` needs only `T: Send` for a join set (a `Cell` is `Send`).
    sync::<weft::task::JoinSet<std::cell::Cell<u32>>>();
    sync::<weft::runtime::EnterGuard<'static>>();
}
