//! `weft::io`'s utility layer (extension traits, buffering, copy, split,
//! duplex) through the public API, on every runtime flavour (`rt_test!` in
//! `support/mod.rs`).

#[macro_use]
mod support;

/// In-memory readers and writers that move data in small pieces and return
/// `Pending` (after waking themselves) every other call, so every loop in
/// the utilities has to resume correctly.
mod helpers {
    use std::future::{poll_fn, Future};
    use std::io;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll};

    use weft::io::{AsyncRead, AsyncWrite};

    /// Polls `fut` exactly once.
    pub async fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
        poll_fn(|cx| Poll::Ready(Pin::new(&mut *fut).poll(cx))).await
    }

    /// Returns `true` on every other call (after waking the task).
    fn stall(flip: &mut bool, cx: &mut Context<'_>) -> bool {
        *flip = !*flip;
        if *flip {
            cx.waker().wake_by_ref();
        }
        *flip
    }

    /// Reader over `data` that yields at most `chunk` bytes per read and is
    /// `Pending` every other call. Counts its reads and records the largest
    /// buffer it was offered.
    pub struct ChunkReader {
        data: Vec<u8>,
        pos: usize,
        chunk: usize,
        flip: bool,
        pub reads: usize,
        pub largest_buf: usize,
    }

    impl ChunkReader {
        pub fn new(data: impl Into<Vec<u8>>, chunk: usize) -> ChunkReader {
            ChunkReader {
                data: data.into(),
                pos: 0,
                chunk,
                flip: false,
                reads: 0,
                largest_buf: 0,
            }
        }
    }

    impl AsyncRead for ChunkReader {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut weft::io::ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            if stall(&mut self.flip, cx) {
                return Poll::Pending;
            }
            self.reads += 1;
            self.largest_buf = self.largest_buf.max(buf.remaining());
            let n = buf
                .remaining()
                .min(self.chunk)
                .min(self.data.len() - self.pos);
            let pos = self.pos;
            buf.put_slice(&self.data[pos..pos + n]);
            self.pos += n;
            Poll::Ready(Ok(()))
        }
    }

    /// What a [`ChunkWriter`] saw; shared so a test can inspect it after
    /// handing the writer to an adapter.
    #[derive(Default, Debug)]
    pub struct Log {
        pub data: Vec<u8>,
        /// Size of every accepted write, in order.
        pub writes: Vec<usize>,
        pub flushes: usize,
        pub closed: bool,
    }

    /// Writer that accepts at most `chunk` bytes per write, is `Pending`
    /// every other call when `stalls` is set, and accepts nothing (returns
    /// `Ok(0)`) once it holds `capacity` bytes.
    pub struct ChunkWriter {
        pub log: Arc<Mutex<Log>>,
        chunk: usize,
        capacity: usize,
        stalls: bool,
        flip: bool,
    }

    impl ChunkWriter {
        pub fn new(chunk: usize) -> ChunkWriter {
            ChunkWriter {
                log: Arc::default(),
                chunk,
                capacity: usize::MAX,
                stalls: true,
                flip: false,
            }
        }

        /// Never `Pending`, unlimited chunk: records writes exactly as made.
        pub fn recorder() -> ChunkWriter {
            ChunkWriter {
                stalls: false,
                ..ChunkWriter::new(usize::MAX)
            }
        }

        pub fn with_capacity(mut self, capacity: usize) -> ChunkWriter {
            self.capacity = capacity;
            self
        }

        fn stalled(&mut self, cx: &mut Context<'_>) -> bool {
            self.stalls && stall(&mut self.flip, cx)
        }
    }

    impl AsyncWrite for ChunkWriter {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            if self.stalled(cx) {
                return Poll::Pending;
            }
            let mut log = self.log.lock().unwrap();
            assert!(!log.closed, "write after close");
            let room = self.capacity - log.data.len();
            let n = buf.len().min(self.chunk).min(room);
            log.data.extend_from_slice(&buf[..n]);
            log.writes.push(n);
            Poll::Ready(Ok(n))
        }

        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            if self.stalled(cx) {
                return Poll::Pending;
            }
            self.log.lock().unwrap().flushes += 1;
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            if self.stalled(cx) {
                return Poll::Pending;
            }
            self.log.lock().unwrap().closed = true;
            Poll::Ready(Ok(()))
        }
    }

    /// `len` bytes of a pattern that does not repeat every 256 bytes.
    pub fn pattern(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ (i / 251) as u8)
            .collect()
    }
}

rt_test! {
    use std::task::Poll;

    use weft::io::{
        self, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, BufWriter, ErrorKind,
    };
    use weft::task::yield_now;

    use crate::helpers::{pattern, poll_once, ChunkReader, ChunkWriter};

    #[test]
    fn read_exact_across_partial_reads() {
        rt().block_on(async {
            let mut r = ChunkReader::new(&b"hello world!"[..], 3);
            let mut buf = [0u8; 11];
            assert_eq!(r.read_exact(&mut buf).await.unwrap(), 11);
            assert_eq!(&buf, b"hello world");
            assert_eq!(r.reads, 4, "11 bytes in chunks of 3");
            let mut rest = [0u8; 4];
            assert_eq!(r.read(&mut rest).await.unwrap(), 1);
            assert_eq!(r.read(&mut rest).await.unwrap(), 0);
        });
    }

    #[test]
    fn read_exact_early_eof() {
        rt().block_on(async {
            let mut r = ChunkReader::new(&b"short"[..], 2);
            let mut buf = [0u8; 8];
            let err = r.read_exact(&mut buf).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
            // The available bytes were consumed on the way.
            assert_eq!(&buf[..5], b"short");
        });
    }

    #[test]
    fn read_to_end_appends_and_counts() {
        rt().block_on(async {
            let data = pattern(10_000);
            let mut r = ChunkReader::new(data.clone(), 7);
            let mut out = b"prefix".to_vec();
            assert_eq!(r.read_to_end(&mut out).await.unwrap(), 10_000);
            assert_eq!(&out[..6], b"prefix");
            assert_eq!(&out[6..], &data[..]);
            // At end of stream: nothing more, nothing appended.
            assert_eq!(r.read_to_end(&mut out).await.unwrap(), 0);
            assert_eq!(out.len(), 10_006);
        });
    }

    #[test]
    fn read_to_string_utf8_split_across_reads() {
        rt().block_on(async {
            // One byte per read splits every multi-byte character.
            let mut r = ChunkReader::new("žluťoučký kůň".as_bytes(), 1);
            let mut s = String::from(">");
            let n = r.read_to_string(&mut s).await.unwrap();
            assert_eq!(n, "žluťoučký kůň".len());
            assert_eq!(s, ">žluťoučký kůň");
        });
    }

    #[test]
    fn read_to_string_invalid_utf8_keeps_nothing() {
        rt().block_on(async {
            let mut r = ChunkReader::new(&b"valid then \xff\xfe bad"[..], 4);
            let mut s = String::from("kept");
            let err = r.read_to_string(&mut s).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidData);
            assert_eq!(s, "kept");
        });
    }

    #[test]
    fn write_all_with_short_writes() {
        rt().block_on(async {
            let data = pattern(1_000);
            let mut w = ChunkWriter::new(3);
            w.write_all(&data).await.unwrap();
            let log = w.log.lock().unwrap();
            assert_eq!(log.data, data);
            assert_eq!(log.writes.len(), 334);
            assert!(log.writes.iter().all(|&n| n <= 3));
        });
    }

    #[test]
    fn write_all_write_zero() {
        rt().block_on(async {
            let mut w = ChunkWriter::new(2).with_capacity(5);
            let err = w.write_all(b"more than five").await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WriteZero);
            assert_eq!(w.log.lock().unwrap().data, b"more ");
        });
    }

    #[test]
    fn write_flush_shutdown_reach_the_writer() {
        rt().block_on(async {
            let mut w = ChunkWriter::new(4);
            assert_eq!(w.write(b"abcdef").await.unwrap(), 4);
            let bufs = [std::io::IoSlice::new(b""), std::io::IoSlice::new(b"xy")];
            assert_eq!(w.write_vectored(&bufs).await.unwrap(), 2);
            w.flush().await.unwrap();
            w.shutdown().await.unwrap();
            let log = w.log.lock().unwrap();
            assert_eq!((log.data.as_slice(), log.flushes, log.closed), (&b"abcdxy"[..], 1, true));
        });
    }

    #[test]
    fn lines_strip_endings_and_keep_last_line() {
        rt().block_on(async {
            let r = ChunkReader::new(&b"a\r\nbb\n\nmid\rdle\nlast"[..], 2);
            let mut lines = BufReader::with_capacity(4, r).lines();
            let mut got = Vec::new();
            while let Some(line) = lines.next_line().await.unwrap() {
                got.push(line);
            }
            assert_eq!(got, ["a", "bb", "", "mid\rdle", "last"]);
            assert_eq!(lines.next_line().await.unwrap(), None);
        });
    }

    #[test]
    fn lines_invalid_utf8_skips_that_line() {
        rt().block_on(async {
            let r: &[u8] = b"ok\n\xc3(\nnext\n";
            let mut lines = r.lines();
            assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("ok"));
            let err = lines.next_line().await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidData);
            assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("next"));
            assert_eq!(lines.next_line().await.unwrap(), None);
        });
    }

    #[test]
    fn next_line_is_cancel_safe() {
        rt().block_on(async {
            let (mut tx, rx) = io::duplex(64);
            let mut lines = BufReader::new(rx).lines();
            tx.write_all(b"par").await.unwrap();
            {
                let mut fut = Box::pin(lines.next_line());
                assert!(poll_once(&mut fut).await.is_pending());
                // Dropped with "par" already read from the stream.
            }
            tx.write_all(b"tial\nnext\n").await.unwrap();
            assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("partial"));
            assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("next"));
        });
    }

    #[test]
    fn read_line_dropped_midway_leaves_the_string_as_it_was() {
        rt().block_on(async {
            let (mut tx, rx) = io::duplex(64);
            let mut r = BufReader::new(rx);
            tx.write_all(b"par").await.unwrap();
            let mut s = String::with_capacity(32);
            s.push_str("kept|");
            {
                let mut fut = Box::pin(r.read_line(&mut s));
                assert!(poll_once(&mut fut).await.is_pending());
                // Dropped with "par" taken from the stream (lost: not
                // cancel safe, as documented) and appended in place.
            }
            assert_eq!(s, "kept|");
            tx.write_all(b"tial\n").await.unwrap();
            assert_eq!(r.read_line(&mut s).await.unwrap(), 5);
            assert_eq!(s, "kept|tial\n");
        });
    }

    #[test]
    fn an_error_midway_keeps_read_lines_text_and_drops_read_to_strings() {
        /// "héllo" then a reset connection.
        struct ThenReset(bool);
        impl io::AsyncRead for ThenReset {
            fn poll_read(
                mut self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
                buf: &mut io::ReadBuf<'_>,
            ) -> Poll<std::io::Result<()>> {
                if std::mem::replace(&mut self.0, true) {
                    return Poll::Ready(Err(ErrorKind::ConnectionReset.into()));
                }
                buf.put_slice("héllo".as_bytes());
                Poll::Ready(Ok(()))
            }
        }
        rt().block_on(async {
            // read_line: the text is out of the reader; the string is the
            // only place left for it (Tokio's documented behaviour).
            let mut s = String::from("> ");
            let err = BufReader::new(ThenReset(false))
                .read_line(&mut s)
                .await
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ConnectionReset);
            assert_eq!(s, "> héllo");
            // read_to_string: the string is left as it was (as Tokio's).
            let mut s = String::from("> ");
            let err = ThenReset(false).read_to_string(&mut s).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ConnectionReset);
            assert_eq!(s, "> ");
        });
    }

    #[test]
    fn read_line_and_read_until_keep_delimiter() {
        rt().block_on(async {
            let mut r = BufReader::with_capacity(3, ChunkReader::new(&b"one\ntwo;three"[..], 2));
            let mut s = String::new();
            assert_eq!(r.read_line(&mut s).await.unwrap(), 4);
            assert_eq!(s, "one\n");
            let mut v = Vec::new();
            assert_eq!(r.read_until(b';', &mut v).await.unwrap(), 4);
            assert_eq!(v, b"two;");
            assert_eq!(r.read_line(&mut s).await.unwrap(), 5);
            assert_eq!(s, "one\nthree");
            assert_eq!(r.read_line(&mut s).await.unwrap(), 0);

            let mut parts = BufReader::new(&b"x,,y"[..]).split(b',');
            assert_eq!(parts.next_segment().await.unwrap(), Some(b"x".to_vec()));
            assert_eq!(parts.next_segment().await.unwrap(), Some(Vec::new()));
            assert_eq!(parts.next_segment().await.unwrap(), Some(b"y".to_vec()));
            assert_eq!(parts.next_segment().await.unwrap(), None);
        });
    }

    #[test]
    fn buf_reader_batches_small_reads() {
        rt().block_on(async {
            let data = pattern(40);
            let mut r = BufReader::with_capacity(16, ChunkReader::new(data.clone(), 100));
            let mut byte = [0u8; 1];
            r.read_exact(&mut byte).await.unwrap();
            assert_eq!(byte[0], data[0]);
            assert_eq!(r.buffer(), &data[1..16]);
            let mut out = byte.to_vec();
            while r.read(&mut byte).await.unwrap() == 1 {
                out.push(byte[0]);
            }
            assert_eq!(out, data);
            // 16 + 16 + 8 bytes, then end of stream: 4 inner reads for 41 reads.
            assert_eq!(r.get_ref().reads, 4);
        });
    }

    #[test]
    fn buf_reader_large_read_bypasses_buffer() {
        rt().block_on(async {
            let data = pattern(100);
            let mut r = BufReader::with_capacity(8, ChunkReader::new(data.clone(), 100));
            let mut big = [0u8; 64];
            assert_eq!(r.read(&mut big).await.unwrap(), 64);
            assert_eq!(&big[..], &data[..64]);
            assert_eq!(r.get_ref().largest_buf, 64, "read went straight to the inner reader");
            assert!(r.buffer().is_empty());
            // A small read goes through the buffer again.
            let mut small = [0u8; 2];
            r.read_exact(&mut small).await.unwrap();
            assert_eq!(r.buffer(), &data[66..72]);
            assert_eq!(r.into_inner().reads, 2);
        });
    }

    #[test]
    fn buf_writer_holds_small_writes_until_flush() {
        rt().block_on(async {
            let inner = ChunkWriter::new(5);
            let log = inner.log.clone();
            let mut w = BufWriter::with_capacity(16, inner);
            for chunk in [&b"aaaa"[..], b"bbbb", b"cccc"] {
                w.write_all(chunk).await.unwrap();
            }
            assert_eq!(w.buffer(), b"aaaabbbbcccc");
            assert!(log.lock().unwrap().writes.is_empty());
            // Does not fit: the buffer is written out first, then this is buffered.
            w.write_all(b"dddddd").await.unwrap();
            assert_eq!(log.lock().unwrap().data, b"aaaabbbbcccc");
            assert_eq!(w.buffer(), b"dddddd");
            w.flush().await.unwrap();
            let log = log.lock().unwrap();
            assert_eq!(log.data, b"aaaabbbbccccdddddd");
            assert_eq!(log.flushes, 1);
            assert!(w.buffer().is_empty());
        });
    }

    #[test]
    fn buf_writer_shutdown_flushes_then_closes() {
        rt().block_on(async {
            let inner = ChunkWriter::new(3);
            let log = inner.log.clone();
            let mut w = BufWriter::new(inner);
            w.write_all(b"pending data").await.unwrap();
            assert!(log.lock().unwrap().data.is_empty());
            w.shutdown().await.unwrap();
            let log = log.lock().unwrap();
            assert_eq!(log.data, b"pending data");
            assert!(log.closed);
        });
    }

    #[test]
    fn buf_writer_large_write_bypasses_buffer() {
        rt().block_on(async {
            let inner = ChunkWriter::recorder();
            let log = inner.log.clone();
            let mut w = BufWriter::with_capacity(8, inner);
            w.write_all(b"abc").await.unwrap();
            let big = pattern(100);
            assert_eq!(w.write(&big).await.unwrap(), 100);
            assert!(w.buffer().is_empty());
            let log = log.lock().unwrap();
            assert_eq!(log.writes, [3, 100], "buffered part first, then the big write whole");
            assert_eq!(&log.data[3..], &big[..]);
        });
    }

    #[test]
    fn copy_megabytes_through_duplex() {
        const LEN: usize = 3 * 1024 * 1024 + 17;
        rt().block_on(async {
            let data = pattern(LEN);
            let (mut producer, mut hop_in) = io::duplex(1024);
            let (mut hop_out, mut consumer) = io::duplex(300);

            let expected = data.clone();
            let produce = weft::spawn(async move {
                for piece in data.chunks(10_000) {
                    producer.write_all(piece).await.unwrap();
                }
                producer.shutdown().await.unwrap();
            });
            let relay = weft::spawn(async move {
                let n = io::copy(&mut hop_in, &mut hop_out).await.unwrap();
                hop_out.shutdown().await.unwrap();
                n
            });
            let consume = weft::spawn(async move {
                let mut got = Vec::new();
                consumer.read_to_end(&mut got).await.unwrap();
                got
            });
            produce.await.unwrap();
            assert_eq!(relay.await.unwrap(), LEN as u64);
            let got = consume.await.unwrap();
            assert_eq!(got.len(), LEN);
            assert!(got == expected, "copied data differs");
        });
    }

    #[test]
    fn copy_and_copy_buf_count_and_flush() {
        rt().block_on(async {
            let data = pattern(20_000);
            let mut w = ChunkWriter::new(1000);
            let n = io::copy(&mut ChunkReader::new(data.clone(), 3000), &mut w).await.unwrap();
            assert_eq!(n, 20_000);
            {
                let log = w.log.lock().unwrap();
                assert_eq!(log.data, data);
                assert!(log.flushes >= 1, "copy flushes at the end");
            }

            let mut r = BufReader::with_capacity(512, ChunkReader::new(data.clone(), 700));
            let mut w = ChunkWriter::new(100);
            assert_eq!(io::copy_buf(&mut r, &mut w).await.unwrap(), 20_000);
            assert_eq!(w.log.lock().unwrap().data, data);
        });
    }

    #[test]
    fn copy_bidirectional_propagates_shutdown() {
        rt().block_on(async {
            let (mut client, mut proxy_in) = io::duplex(16);
            let (mut proxy_out, mut server) = io::duplex(16);
            let proxy = weft::spawn(async move {
                io::copy_bidirectional(&mut proxy_in, &mut proxy_out).await.unwrap()
            });

            let request = pattern(1000);
            let sent = request.clone();
            let client = weft::spawn(async move {
                client.write_all(&sent).await.unwrap();
                client.shutdown().await.unwrap();
                let mut got = Vec::new();
                client.read_to_end(&mut got).await.unwrap();
                got
            });
            // The server sees end of stream while its own direction is open
            // (the client is still waiting for the response).
            let mut got = Vec::new();
            server.read_to_end(&mut got).await.unwrap();
            assert!(got == request);
            assert!(!client.is_finished());

            server.write_all(b"response after the request ended").await.unwrap();
            server.shutdown().await.unwrap();
            assert_eq!(client.await.unwrap(), b"response after the request ended");

            assert_eq!(proxy.await.unwrap(), (1000, 32));
        });
    }

    #[test]
    fn split_halves_work_from_separate_tasks() {
        rt().block_on(async {
            let (stream, mut peer) = io::duplex(32);
            let (mut rd, mut wr) = io::split(stream);
            assert!(rd.is_pair_of(&wr) && wr.is_pair_of(&rd));
            let (other, _other_peer) = io::duplex(1);
            let (other_rd, other_wr) = io::split(other);
            assert!(!rd.is_pair_of(&other_wr) && !wr.is_pair_of(&other_rd));

            let out = pattern(5000);
            let expected = out.clone();
            let writer = weft::spawn(async move {
                wr.write_all(&out).await.unwrap();
                wr
            });
            let reader = weft::spawn(async move {
                let mut got = vec![0u8; 3000];
                rd.read_exact(&mut got).await.unwrap();
                (rd, got)
            });
            // The peer echoes nothing back until it has read everything.
            let mut from_wr = vec![0u8; 5000];
            peer.read_exact(&mut from_wr).await.unwrap();
            assert!(from_wr == expected);
            peer.write_all(&expected[..3000]).await.unwrap();

            let wr = writer.await.unwrap();
            let (rd, got) = reader.await.unwrap();
            assert!(got[..] == expected[..3000]);

            let mut stream = rd.unsplit(wr);
            stream.write_all(b"whole again").await.unwrap();
            let mut buf = [0u8; 11];
            peer.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"whole again");
        });
    }

    #[test]
    #[should_panic(expected = "different stream")]
    fn unsplit_rejects_foreign_half() {
        let (a, _pa) = io::duplex(1);
        let (b, _pb) = io::duplex(1);
        let (a_rd, _a_wr) = io::split(a);
        let (_b_rd, b_wr) = io::split(b);
        let _ = a_rd.unsplit(b_wr);
    }

    #[test]
    fn duplex_back_pressure() {
        rt().block_on(async {
            let (mut a, mut b) = io::duplex(8);
            assert_eq!(a.write(b"0123456789").await.unwrap(), 8);
            {
                let mut blocked = a.write(b"89");
                assert!(poll_once(&mut blocked).await.is_pending(), "pipe is full");
            }
            let mut buf = [0u8; 3];
            b.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"012");
            // Room for exactly 3 more.
            assert_eq!(a.write(b"89abc").await.unwrap(), 3);

            // A blocked writer task is woken as the reader drains.
            let data = pattern(1000);
            let expected = data.clone();
            let writer = weft::spawn(async move {
                a.write_all(&data).await.unwrap();
                a
            });
            let mut got = vec![0u8; 8 + 1000];
            b.read_exact(&mut got).await.unwrap();
            assert_eq!(&got[..8], b"3456789a");
            assert!(got[8..] == expected[..]);
            writer.await.unwrap();
        });
    }

    #[test]
    fn duplex_drop_gives_eof_and_broken_pipe() {
        rt().block_on(async {
            let (mut a, mut b) = io::duplex(64);
            a.write_all(b"last words").await.unwrap();
            drop(a);
            let mut got = String::new();
            b.read_to_string(&mut got).await.unwrap();
            assert_eq!(got, "last words");
            let err = b.write(b"anyone?").await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::BrokenPipe);

            // A reader already waiting is woken by the drop.
            let (a, mut b) = io::duplex(64);
            let reader = weft::spawn(async move {
                let mut buf = [0u8; 4];
                b.read(&mut buf).await.unwrap()
            });
            for _ in 0..10 {
                yield_now().await;
            }
            drop(a);
            assert_eq!(reader.await.unwrap(), 0);

            // A writer waiting for room is woken by the drop and fails.
            let (mut a, b) = io::duplex(4);
            let writer = weft::spawn(async move { a.write_all(b"too much data").await });
            for _ in 0..10 {
                yield_now().await;
            }
            drop(b);
            assert_eq!(writer.await.unwrap().unwrap_err().kind(), ErrorKind::BrokenPipe);
        });
    }

    #[test]
    fn duplex_shutdown_is_one_way() {
        rt().block_on(async {
            let (mut a, mut b) = io::duplex(64);
            a.write_all(b"req").await.unwrap();
            a.shutdown().await.unwrap();
            let err = a.write(b"x").await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::BrokenPipe);
            let mut got = Vec::new();
            assert_eq!(b.read_to_end(&mut got).await.unwrap(), 3);
            // The other direction still works.
            b.write_all(b"resp").await.unwrap();
            let mut buf = [0u8; 4];
            a.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"resp");
        });
    }

    #[test]
    fn duplex_spends_coop_budget() {
        rt().block_on(async {
            let (mut a, _b) = io::duplex(1 << 16);
            let writes = weft::spawn(async move {
                // Always-ready writes, never awaited as a whole: the budget
                // must eventually turn one into Pending.
                let mut ready = 0;
                for _ in 0..1000 {
                    match poll_once(&mut a.write(b"x")).await {
                        Poll::Ready(res) => {
                            assert_eq!(res.unwrap(), 1);
                            ready += 1;
                        }
                        Poll::Pending => break,
                    }
                }
                // After yielding, a new budget lets writes through again.
                yield_now().await;
                assert_eq!(a.write(b"y").await.unwrap(), 1);
                ready
            });
            let ready = writes.await.unwrap();
            assert!(ready > 0 && ready < 1000, "{ready} writes before the budget ran out");
        });
    }

    #[test]
    fn take_and_chain() {
        rt().block_on(async {
            let mut limited = ChunkReader::new(pattern(100), 7).take(20);
            let mut out = Vec::new();
            assert_eq!(limited.read_to_end(&mut out).await.unwrap(), 20);
            assert_eq!(out, pattern(20));
            assert_eq!(limited.limit(), 0);
            limited.set_limit(5);
            out.clear();
            limited.read_to_end(&mut out).await.unwrap();
            assert_eq!(out, &pattern(25)[20..]);

            let first = ChunkReader::new(&b"head-"[..], 2);
            let second = ChunkReader::new(&b"tail"[..], 3);
            let mut s = String::new();
            first.chain(second).read_to_string(&mut s).await.unwrap();
            assert_eq!(s, "head-tail");

            let mut lines = BufReader::new(&b"a\nb"[..]).chain(&b"c\nd"[..]).lines();
            assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("a"));
            assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("bc"));
            assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("d"));
        });
    }

    #[test]
    fn empty_repeat_sink() {
        rt().block_on(async {
            let mut buf = [7u8; 4];
            assert_eq!(io::empty().read(&mut buf).await.unwrap(), 0);
            assert_eq!(io::repeat(b'q').read(&mut buf).await.unwrap(), 4);
            assert_eq!(&buf, b"qqqq");
            let n = io::copy(&mut io::repeat(1).take(100_000), &mut io::sink()).await.unwrap();
            assert_eq!(n, 100_000);
        });
    }

    #[test]
    fn empty_seeks_to_zero_and_takes_every_vectored_slice() {
        use weft::io::{AsyncSeekExt, AsyncWrite, IoSlice, SeekFrom};

        rt().block_on(async {
            let mut e = io::empty();
            assert_eq!(e.seek(SeekFrom::Start(10)).await.unwrap(), 0);
            assert_eq!(e.seek(SeekFrom::Current(-3)).await.unwrap(), 0);
            assert_eq!(e.stream_position().await.unwrap(), 0);
            assert!(e.is_write_vectored());
            let bufs = [IoSlice::new(b"ab"), IoSlice::new(b""), IoSlice::new(b"cde")];
            assert_eq!(e.write_vectored(&bufs).await.unwrap(), 5);
        });
    }

    #[test]
    fn buf_stream_from_a_buf_reader_over_a_buf_writer_keeps_both_buffers() {
        use weft::io::BufStream;

        rt().block_on(async {
            let (mut peer, stream) = io::duplex(64);
            peer.write_all(b"first\nsecond\n").await.unwrap();
            let mut stack = BufReader::new(BufWriter::new(stream));
            let mut line = String::new();
            stack.read_line(&mut line).await.unwrap();
            assert_eq!(line, "first\n");
            assert_eq!(stack.buffer(), b"second\n");
            stack.write_all(b"reply").await.unwrap();
            assert_eq!(stack.get_ref().buffer(), b"reply");

            let mut s = BufStream::from(stack);
            line.clear();
            s.read_line(&mut line).await.unwrap();
            assert_eq!(line, "second\n", "the read buffer came along");
            s.flush().await.unwrap();
            let mut got = [0u8; 5];
            peer.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"reply", "the write buffer came along");
        });
    }

    #[test]
    fn buf_stream_from_a_buf_writer_over_a_buf_reader_keeps_both_buffers() {
        use weft::io::BufStream;

        rt().block_on(async {
            let (mut peer, stream) = io::duplex(64);
            peer.write_all(b"first\nsecond\n").await.unwrap();
            let mut stack = BufWriter::new(BufReader::new(stream));
            let mut line = String::new();
            stack.read_line(&mut line).await.unwrap();
            assert_eq!(line, "first\n");
            assert_eq!(stack.get_ref().buffer(), b"second\n");
            stack.write_all(b"reply").await.unwrap();
            assert_eq!(stack.buffer(), b"reply");

            let mut s = BufStream::from(stack);
            line.clear();
            s.read_line(&mut line).await.unwrap();
            assert_eq!(line, "second\n", "the read buffer came along");
            s.flush().await.unwrap();
            let mut got = [0u8; 5];
            peer.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"reply", "the write buffer came along");
        });
    }

    /// Text that is not UTF-8: the error is `InvalidData` and holds what
    /// Tokio's holds (a `Utf8Error` whose `valid_up_to` counts the string
    /// the caller passed in; for `lines`, the line's bytes), the caller's
    /// string is left as it was, and `lines` goes on with the next line.
    #[test]
    fn invalid_utf8_errors_hold_the_utf8_error() {
        rt().block_on(async {
            let mut line = String::from("ab");
            let mut reader = BufReader::new(&b"cd\xffe\nrest\n"[..]);
            let err = reader.read_line(&mut line).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidData);
            let inner = err.into_inner().unwrap();
            let utf8 = inner.downcast::<std::str::Utf8Error>().unwrap();
            assert_eq!(utf8.valid_up_to(), 4, "\"ab\" and \"cd\"");
            assert_eq!(line, "ab");

            let mut text = String::from("xyz");
            let mut reader: &[u8] = b"\xc3";
            let err = reader.read_to_string(&mut text).await.unwrap_err();
            let inner = err.into_inner().unwrap();
            let utf8 = inner.downcast::<std::str::Utf8Error>().unwrap();
            assert_eq!(utf8.valid_up_to(), 3);
            assert_eq!(text, "xyz");

            let mut lines = BufReader::new(&b"one\n\xfe\xff\r\ntwo"[..]).lines();
            assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("one"));
            let err = lines.next_line().await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidData);
            let inner = err.into_inner().unwrap();
            let bad = inner.downcast::<std::string::FromUtf8Error>().unwrap();
            assert_eq!(bad.into_bytes(), b"\xfe\xff");
            assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("two"));
            assert_eq!(lines.next_line().await.unwrap(), None);
        });
    }

    /// Copies between streams that are always ready (in-memory slices and
    /// vectors) spend the task's budget, so a loop of them yields: each
    /// copy here completes in one poll, and within one poll of the task the
    /// budget runs out well before 10,000 of them.
    #[test]
    fn copies_between_always_ready_streams_spend_the_budget() {
        rt().block_on(async {
            for which in ["copy", "copy_buf"] {
                let mut done = 0;
                loop {
                    let mut reader: &[u8] = b"hello";
                    let mut writer: Vec<u8> = Vec::new();
                    let polled = if which == "copy" {
                        poll_once(&mut Box::pin(io::copy(&mut reader, &mut writer))).await
                    } else {
                        poll_once(&mut Box::pin(io::copy_buf(&mut reader, &mut writer))).await
                    };
                    match polled {
                        Poll::Ready(n) => assert_eq!(n.unwrap(), 5),
                        Poll::Pending => break,
                    }
                    done += 1;
                    assert!(done < 10_000, "io::{which} never ran out of budget");
                }
                assert!(done > 0, "io::{which} was Pending with budget left");
                yield_now().await; // a fresh budget for the next one
            }
        });
    }

    #[test]
    #[should_panic(expected = "BufReader::with_capacity: capacity must be greater than zero")]
    fn buf_reader_with_capacity_zero_panics() {
        let _ = BufReader::with_capacity(0, &b""[..]);
    }

    #[test]
    #[should_panic(expected = "BufStream::with_capacity: reader_capacity must be greater than zero")]
    fn buf_stream_with_reader_capacity_zero_panics() {
        let _ = weft::io::BufStream::with_capacity(0, 8, io::duplex(8).0);
    }
}
