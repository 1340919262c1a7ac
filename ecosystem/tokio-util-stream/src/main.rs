//! tokio-util and tokio-stream, as published, on weft: `tokio` in this
//! graph is weft-tokio. Each check asserts what the crate promises; the
//! program panics (exit code 101) on the first that fails, and prints one
//! line per check that passed.

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::sync::{broadcast, mpsc, watch};
use tokio_stream::wrappers;
use tokio_util::codec::{BytesCodec, Framed, LinesCodec};
use tokio_util::sync::{CancellationToken, PollSender};
use tokio_util::task::TaskTracker;
use tokio_util::time::DelayQueue;
use tokio_util::udp::UdpFramed;

use each_driver::ok;

async fn framed_lines_over_tcp() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut lines = Framed::new(stream, LinesCodec::new());
        while let Some(line) = lines.next().await {
            lines.send(line.unwrap().to_uppercase()).await.unwrap();
        }
    });
    let mut client = Framed::new(TcpStream::connect(addr).await.unwrap(), LinesCodec::new());
    for word in ["hello", "weft"] {
        client.send(word).await.unwrap();
        assert_eq!(client.next().await.unwrap().unwrap(), word.to_uppercase());
    }
    drop(client);
    server.await.unwrap();
    ok("codec::Framed + LinesCodec over TcpStream");
}

async fn cancellation_token_reaches_children() {
    let parent = CancellationToken::new();
    let child = parent.child_token();
    let task = tokio::spawn(async move {
        tokio::select! {
            _ = child.cancelled() => "cancelled",
            _ = tokio::time::sleep(Duration::from_secs(10)) => "slept",
        }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    parent.cancel();
    assert_eq!(task.await.unwrap(), "cancelled");
    ok("sync::CancellationToken cancels a child token's waiter");
}

async fn task_tracker_waits_for_all() {
    let tracker = TaskTracker::new();
    let done = Arc::new(AtomicUsize::new(0));
    for i in 0..10u64 {
        let done = done.clone();
        tracker.spawn(async move {
            tokio::time::sleep(Duration::from_millis(i)).await;
            done.fetch_add(1, Ordering::SeqCst);
        });
    }
    tracker.close();
    tracker.wait().await;
    assert_eq!(done.load(Ordering::SeqCst), 10);
    ok("task::TaskTracker::wait waits for every tracked task");
}

async fn delay_queue_yields_in_deadline_order() {
    let mut queue = DelayQueue::new();
    queue.insert("third", Duration::from_millis(60));
    queue.insert("first", Duration::from_millis(20));
    queue.insert("second", Duration::from_millis(40));
    let mut order = Vec::new();
    while let Some(expired) = queue.next().await {
        order.push(expired.into_inner());
    }
    assert_eq!(order, ["first", "second", "third"]);
    ok("time::DelayQueue yields in deadline order");
}

async fn poll_sender_is_a_sink() {
    let (tx, mut rx) = mpsc::channel::<u32>(1);
    let mut sink = PollSender::new(tx);
    let producer = tokio::spawn(async move {
        for i in 0..5 {
            sink.send(i).await.unwrap();
        }
    });
    let mut got = Vec::new();
    while let Some(v) = rx.recv().await {
        got.push(v);
    }
    producer.await.unwrap();
    assert_eq!(got, [0, 1, 2, 3, 4]);
    ok("sync::PollSender sends through a bounded mpsc channel");
}

async fn reader_stream_reads_everything() {
    let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
    let chunks: Vec<Bytes> = tokio_util::io::ReaderStream::new(&data[..])
        .map(|c| c.unwrap())
        .collect()
        .await;
    assert!(chunks.len() > 1, "read in more than one chunk");
    assert_eq!(chunks.concat(), data);
    ok("io::ReaderStream streams a reader's bytes");
}

async fn udp_framed_round_trip() {
    let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let b_addr = b.local_addr().unwrap();
    let mut a = UdpFramed::new(a, BytesCodec::new());
    let mut b = UdpFramed::new(b, BytesCodec::new());
    a.send((Bytes::from_static(b"datagram"), b_addr))
        .await
        .unwrap();
    let (got, from) = b.next().await.unwrap().unwrap();
    assert_eq!(&got[..], b"datagram");
    assert_eq!(from, a.get_ref().local_addr().unwrap());
    ok("udp::UdpFramed round trip");
}

async fn stream_wrappers() {
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        for i in 0..3 {
            tx.send(i).await.unwrap();
        }
    });
    let got: Vec<i32> = wrappers::ReceiverStream::new(rx).collect().await;
    assert_eq!(got, [0, 1, 2]);

    let (tx, rx) = mpsc::unbounded_channel();
    tx.send("u").unwrap();
    drop(tx);
    let got: Vec<&str> = wrappers::UnboundedReceiverStream::new(rx).collect().await;
    assert_eq!(got, ["u"]);

    let (tx, rx) = broadcast::channel(4);
    let stream = wrappers::BroadcastStream::new(rx);
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    drop(tx);
    let got: Vec<i32> = stream.map(|r| r.unwrap()).collect().await;
    assert_eq!(got, [1, 2]);

    let (tx, rx) = watch::channel(0);
    let mut stream = wrappers::WatchStream::new(rx);
    assert_eq!(stream.next().await, Some(0));
    tx.send(5).unwrap();
    assert_eq!(stream.next().await, Some(5));

    let start = tokio::time::Instant::now();
    let ticks: Vec<_> =
        wrappers::IntervalStream::new(tokio::time::interval(Duration::from_millis(10)))
            .take(3)
            .collect()
            .await;
    assert_eq!(ticks.len(), 3);
    assert!(start.elapsed() >= Duration::from_millis(20));

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut incoming = wrappers::TcpListenerStream::new(listener);
    let client = tokio::spawn(TcpStream::connect(addr));
    let accepted = incoming.next().await.unwrap().unwrap();
    let client = client.await.unwrap().unwrap();
    assert_eq!(accepted.peer_addr().unwrap(), client.local_addr().unwrap());

    let text = &b"one\ntwo\n"[..];
    let lines: Vec<String> = wrappers::LinesStream::new(tokio::io::AsyncBufReadExt::lines(
        tokio::io::BufReader::new(text),
    ))
    .map(|l| l.unwrap())
    .collect()
    .await;
    assert_eq!(lines, ["one", "two"]);

    let dir = std::env::temp_dir().join(format!("weft-eco-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("file"), b"x").unwrap();
    let mut names: Vec<String> =
        wrappers::ReadDirStream::new(tokio::fs::read_dir(&dir).await.unwrap())
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect()
            .await;
    names.sort();
    assert_eq!(names, ["file", "sub"]);
    std::fs::remove_dir_all(&dir).unwrap();
    let text = &b"a,b,c"[..];
    let parts: Vec<Vec<u8>> = wrappers::SplitStream::new(tokio::io::AsyncBufReadExt::split(
        tokio::io::BufReader::new(text),
        b',',
    ))
    .map(|p| p.unwrap())
    .collect()
    .await;
    assert_eq!(parts, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);

    let path = std::env::temp_dir().join(format!("weft-eco-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut incoming =
        wrappers::UnixListenerStream::new(tokio::net::UnixListener::bind(&path).unwrap());
    let client = tokio::spawn(tokio::net::UnixStream::connect(path.clone()));
    let accepted = incoming.next().await.unwrap().unwrap();
    let client = client.await.unwrap().unwrap();
    assert_eq!(
        accepted.peer_addr().unwrap().as_pathname(),
        client.local_addr().unwrap().as_pathname()
    );
    std::fs::remove_file(&path).unwrap();

    let mut signals = wrappers::SignalStream::new(
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()).unwrap(),
    );
    // SAFETY: raising a signal that has a listener (the line above).
    assert_eq!(unsafe { libc::raise(libc::SIGUSR1) }, 0);
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), signals.next())
            .await
            .unwrap(),
        Some(())
    );
    let mut set = tokio::task::JoinSet::new();
    for i in 0..5u32 {
        set.spawn(async move {
            tokio::time::sleep(Duration::from_millis(u64::from(5 - i))).await;
            i * i
        });
    }
    let mut squares: Vec<u32> = wrappers::JoinSetStream::new(set)
        .map(|r| r.unwrap())
        .collect()
        .await;
    squares.sort();
    assert_eq!(squares, [0, 1, 4, 9, 16]);
    ok("tokio-stream wrappers: Receiver, UnboundedReceiver, Broadcast, Watch, Interval, TcpListener, Lines, ReadDir, Split, UnixListener, Signal, JoinSet (every Unix wrapper)");
}

async fn stream_ext_timeout() {
    let (tx, rx) = mpsc::channel::<u32>(1);
    let stream = tokio_stream::StreamExt::timeout(
        wrappers::ReceiverStream::new(rx),
        Duration::from_millis(20),
    );
    tokio::pin!(stream);
    tx.send(1).await.unwrap();
    assert_eq!(stream.next().await.unwrap().unwrap(), 1);
    assert!(
        stream.next().await.unwrap().is_err(),
        "the next item is late"
    );
    drop(tx);
    ok("tokio_stream::StreamExt::timeout");
}

async fn checks() {
    framed_lines_over_tcp().await;
    cancellation_token_reaches_children().await;
    task_tracker_waits_for_all().await;
    delay_queue_yields_in_deadline_order().await;
    poll_sender_is_a_sink().await;
    reader_stream_reads_everything().await;
    udp_framed_round_trip().await;
    stream_wrappers().await;
    stream_ext_timeout().await;
    println!("tokio-util and tokio-stream on weft: all checks passed");
}

fn main() {
    each_driver::main(&each_driver::FLAVOURS, |flavour| {
        each_driver::block_on_within(flavour, std::time::Duration::from_secs(120), checks())
    });
}
