//! Where a ring's owner waits (uring/mod.rs, "An owner whose ring holds
//! nothing waits in epoll"): in the ring while anything of the ring's is
//! in the kernel or queued for it, in epoll alone otherwise.

use super::*;
use std::io::Write;
use std::os::unix::net::UnixStream;

fn epoll() -> std::os::fd::OwnedFd {
    // SAFETY: no pointer; the result is checked before it is owned.
    let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(fd >= 0, "epoll_create1: {}", io::Error::last_os_error());
    // SAFETY: a descriptor just made, owned by nothing else.
    unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) }
}

/// Each thing that can end a wait in the ring keeps the owner there: an
/// entry queued, a request in flight, the poll on the epoll descriptor
/// still armed after a wait that timed out.
#[test]
fn a_ring_is_empty_only_with_nothing_queued_in_flight_or_armed() {
    let ring = Ring::new().unwrap();
    let epoll = epoll();
    assert!(ring.is_empty(), "a new ring");

    let (a, mut b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    // The owner's start: queued for its batch point.
    let key = ring
        .start_recv(
            a.as_raw_fd(),
            Vec::with_capacity(8),
            8,
            Waker::noop(),
            false,
            true,
        )
        .unwrap();
    assert!(!ring.is_empty(), "a receive queued");
    let mut wakers = Vec::new();
    ring.flush(&mut wakers);
    assert!(!ring.is_empty(), "a receive in flight");
    b.write_all(b"x").unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let (result, _) = loop {
        ring.flush(&mut wakers);
        if let Some(done) = ring.try_take(key) {
            break done;
        }
        assert!(Instant::now() < deadline, "the receive never completed");
        std::thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(result, 1);
    assert!(ring.is_empty(), "the receive taken");

    // A wait that times out leaves its poll on the epoll descriptor armed.
    let fired = ring.park(
        epoll.as_raw_fd(),
        Some(Duration::from_millis(1)),
        &mut wakers,
    );
    assert!(!fired, "nothing is registered in that epoll set");
    assert!(!ring.is_empty(), "the poll on the epoll descriptor armed");
}

/// A runtime's worker waits in epoll while its I/O is all readiness-based
/// (a UDP socket), and in its ring while a receive of a ring-backed stream
/// is in flight there.
#[test]
fn a_worker_waits_in_its_ring_only_while_the_ring_holds_something() {
    use crate::runtime::{Builder, IoDriver};
    let rt = Builder::new_current_thread()
        .enable_all()
        .io_driver(IoDriver::Uring)
        .build()
        .unwrap();
    rt.block_on(async {
        let driver = crate::runtime::io::registration::current_driver();
        let rings = driver.io().and_then(|io| io.rings()).expect("rings");
        let (index, owned) = driver.io().unwrap().current_ring(rings);
        assert!(owned, "block_on holds the current_thread runtime's core");
        let ring = rings.get(index);

        // A UDP round trip whose reply comes late, so the worker parks.
        let socket = crate::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.connect(peer.local_addr().unwrap()).await.unwrap();
        let echo = std::thread::spawn(move || {
            let mut buf = [0; 16];
            for _ in 0..5 {
                let (n, from) = peer.recv_from(&mut buf).unwrap();
                std::thread::sleep(Duration::from_millis(5));
                peer.send_to(&buf[..n], from).unwrap();
            }
        });
        let before = ring.waits.load(Ordering::Relaxed);
        for i in 0..5u8 {
            socket.send(&[i]).await.unwrap();
            let mut buf = [0; 16];
            let n = socket.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], &[i]);
        }
        echo.join().unwrap();
        assert_eq!(
            ring.waits.load(Ordering::Relaxed),
            before,
            "parked in the ring with nothing in it"
        );

        // A stream's read is a receive on the ring: the worker parks there.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let writer = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            std::thread::sleep(Duration::from_millis(20));
            stream.write_all(b"late").unwrap();
        });
        let mut stream = crate::net::TcpStream::connect(addr).await.unwrap();
        let mut buf = [0; 4];
        crate::io::AsyncReadExt::read_exact(&mut stream, &mut buf)
            .await
            .unwrap();
        assert_eq!(&buf, b"late");
        writer.join().unwrap();
        assert!(
            ring.waits.load(Ordering::Relaxed) > before,
            "a receive in flight, yet the worker did not wait in the ring"
        );
    });
}
