//! `UnixSocket`, the Unix socket builder, the `net::unix` id types and
//! `net::unix::SocketAddr` (issue 14), on every flavour.

#[macro_use]
mod support;

#[test]
fn id_types_match_ucred() {
    let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    let rt = weft::runtime::Runtime::new().unwrap();
    let _guard = rt.enter();
    let a = weft::net::UnixStream::from_std(a).unwrap();
    let cred = a.peer_cred().unwrap();
    let uid: weft::net::unix::uid_t = cred.uid();
    let gid: weft::net::unix::gid_t = cred.gid();
    let pid: Option<weft::net::unix::pid_t> = cred.pid();
    // SAFETY: getuid/getgid have no preconditions.
    assert_eq!(uid, unsafe { libc::getuid() });
    assert_eq!(gid, unsafe { libc::getgid() });
    assert_eq!(pid, Some(std::process::id() as i32));
}

rt_test! {
    use crate::support::TempPath;
    use std::io::ErrorKind;
    use weft::io::{AsyncReadExt, AsyncWriteExt};
    use weft::net::UnixSocket;

    #[test]
    fn listen_then_connect_exchanges_bytes() {
        rt().block_on(async {
            let path = TempPath::new("listen");
            let server = UnixSocket::new_stream().unwrap();
            server.bind(&path.0).unwrap();
            let listener = server.listen(8).unwrap();
            assert_eq!(listener.local_addr().unwrap().as_pathname(), Some(path.0.as_path()));

            let client = UnixSocket::new_stream().unwrap();
            let mut client = client.connect(&path.0).await.unwrap();
            let (mut conn, _) = listener.accept().await.unwrap();
            client.write_all(b"ping").await.unwrap();
            let mut got = [0u8; 4];
            conn.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"ping");
            conn.write_all(b"pong").await.unwrap();
            client.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"pong");
        });
    }

    #[test]
    fn connect_to_nothing_fails() {
        rt().block_on(async {
            let path = TempPath::new("nothing");
            let err = UnixSocket::new_stream().unwrap().connect(&path.0).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::NotFound);
        });
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn abstract_name_binds_without_a_file() {
        rt().block_on(async {
            let name = format!("\0weft-abstract-{}-{:?}", std::process::id(), FLAVOR);
            let server = UnixSocket::new_stream().unwrap();
            server.bind(&name).unwrap();
            let listener = server.listen(1).unwrap();
            let local = listener.local_addr().unwrap();
            assert_eq!(local.as_abstract_name(), Some(&name.as_bytes()[1..]));
            assert_eq!(local.as_pathname(), None);
            assert!(!local.is_unnamed());
            // Round trip through std's type and back.
            let std_addr: std::os::unix::net::SocketAddr = local.into();
            let again = weft::net::unix::SocketAddr::from(std_addr);
            assert_eq!(again.as_abstract_name(), Some(&name.as_bytes()[1..]));
            let mut client = UnixSocket::new_stream().unwrap().connect(&name).await.unwrap();
            let (mut conn, _) = listener.accept().await.unwrap();
            client.write_all(b"a").await.unwrap();
            let mut got = [0u8; 1];
            conn.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"a");
        });
    }

    #[test]
    fn datagram_sockets_exchange_datagrams() {
        rt().block_on(async {
            let path = TempPath::new("dgram");
            let a = UnixSocket::new_datagram().unwrap();
            a.bind(&path.0).unwrap();
            let a = a.datagram().unwrap();
            let b = UnixSocket::new_datagram().unwrap().datagram().unwrap();
            b.send_to(b"one", &path.0).await.unwrap();
            let mut buf = [0u8; 8];
            let n = a.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"one");
        });
    }

    #[test]
    fn the_wrong_conversion_is_an_error() {
        rt().block_on(async {
            let err = UnixSocket::new_datagram().unwrap().listen(1).unwrap_err();
            assert!(err.to_string().contains("listen"), "{err}");
            let path = TempPath::new("wrong");
            let err = UnixSocket::new_datagram().unwrap().connect(&path.0).await.unwrap_err();
            assert!(err.to_string().contains("connect"), "{err}");
            let err = UnixSocket::new_stream().unwrap().datagram().unwrap_err();
            assert!(err.to_string().contains("datagram"), "{err}");
        });
    }
}
