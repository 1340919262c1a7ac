//! Tokio's conversions from std types: `TryFrom` for the socket types (the
//! same as their `from_std`) and `From<OwnedFd>` for `fs::File`.

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
