//! Tokio's I/O trait shapes and the utilities issue #11 asks for: hand-written
//! `AsyncRead` with `ReadBuf`, the number readers and writers, `read_buf` /
//! `write_all_buf`, `fill_buf` / `consume`, seeking, `BufStream`, `join`,
//! `simplex`, `copy_bidirectional_with_sizes`, and the futures-io bridge.

use std::io::{self, Cursor, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{Context, Poll};
use weft::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncSeekExt, AsyncWrite, AsyncWriteExt, BufReader,
    BufStream, BufWriter, ReadBuf,
};

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// A reader written the way Tokio code writes one: it fills the
/// uninitialised part of the buffer itself, one byte per call.
struct Countdown(u8);

impl AsyncRead for Countdown {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.0 > 0 && buf.remaining() > 0 {
            // SAFETY: we write one byte into the unfilled part, then claim it.
            unsafe {
                buf.unfilled_mut()[0].write(self.0);
                buf.assume_init(1);
            }
            buf.advance(1);
            self.0 -= 1;
        }
        Poll::Ready(Ok(()))
    }
}

#[test]
fn hand_written_reader_with_read_buf() {
    block_on(async {
        let mut out = Vec::new();
        Countdown(5).read_to_end(&mut out).await.unwrap();
        assert_eq!(out, vec![5, 4, 3, 2, 1]);
    });
}

#[test]
fn read_to_end_uses_spare_capacity_without_zeroing_the_callers_bytes() {
    block_on(async {
        let mut out = b"keep:".to_vec();
        let mut src: &[u8] = &[7u8; 100_000];
        let n = src.read_to_end(&mut out).await.unwrap();
        assert_eq!(n, 100_000);
        assert_eq!(&out[..5], b"keep:");
        assert!(out[5..].iter().all(|&b| b == 7));
    });
}

#[test]
fn numbers_round_trip_in_both_byte_orders() {
    block_on(async {
        let mut out = Vec::new();
        out.write_u8(1).await.unwrap();
        out.write_i16(-2).await.unwrap();
        out.write_u32_le(0xdead_beef).await.unwrap();
        out.write_i64(-3).await.unwrap();
        out.write_u128_le(u128::MAX - 4).await.unwrap();
        out.write_f32(1.5).await.unwrap();
        out.write_f64_le(-0.25).await.unwrap();
        assert_eq!(out.len(), 1 + 2 + 4 + 8 + 16 + 4 + 8);
        assert_eq!(&out[1..3], &(-2i16).to_be_bytes());
        assert_eq!(&out[3..7], &0xdead_beefu32.to_le_bytes());

        let mut r: &[u8] = &out;
        assert_eq!(r.read_u8().await.unwrap(), 1);
        assert_eq!(r.read_i16().await.unwrap(), -2);
        assert_eq!(r.read_u32_le().await.unwrap(), 0xdead_beef);
        assert_eq!(r.read_i64().await.unwrap(), -3);
        assert_eq!(r.read_u128_le().await.unwrap(), u128::MAX - 4);
        assert_eq!(r.read_f32().await.unwrap(), 1.5);
        assert_eq!(r.read_f64_le().await.unwrap(), -0.25);
        let err = r.read_u16().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    });
}

#[test]
fn numbers_survive_a_reader_that_gives_one_byte_at_a_time() {
    block_on(async {
        // Countdown hands out 4, 3, 2, 1 in four separate reads.
        assert_eq!(Countdown(4).read_u32().await.unwrap(), 0x0403_0201);
        assert_eq!(Countdown(2).read_u16_le().await.unwrap(), 0x0102);
    });
}

#[test]
fn read_buf_and_write_all_buf_move_bytes_buf_cursors() {
    block_on(async {
        let mut src: &[u8] = b"hello world";
        let mut dst = bytes::BytesMut::with_capacity(4);
        let mut total = 0;
        loop {
            if dst.capacity() == dst.len() {
                dst.reserve(4);
            }
            let n = src.read_buf(&mut dst).await.unwrap();
            if n == 0 {
                break;
            }
            total += n;
        }
        assert_eq!((total, &dst[..]), (11, &b"hello world"[..]));

        let mut out = Vec::new();
        let mut chain = bytes::Buf::chain(&b"ab"[..], &b"cd"[..]);
        out.write_all_buf(&mut chain).await.unwrap();
        assert_eq!(out, b"abcd");
        assert_eq!(bytes::Buf::remaining(&chain), 0);
    });
}

#[test]
fn fill_buf_and_consume() {
    block_on(async {
        let mut reader = BufReader::with_capacity(4, &b"abcdefgh"[..]);
        assert_eq!(reader.fill_buf().await.unwrap(), b"abcd");
        reader.consume(3);
        assert_eq!(reader.fill_buf().await.unwrap(), b"d");
        reader.consume(1);
        assert_eq!(reader.fill_buf().await.unwrap(), b"efgh");
    });
}

#[test]
fn seek_through_a_buf_reader_counts_from_the_logical_position() {
    block_on(async {
        let mut reader = BufReader::with_capacity(4, Cursor::new(b"0123456789".to_vec()));
        let mut two = [0u8; 2];
        reader.read_exact(&mut two).await.unwrap(); // buffers "0123"
        assert_eq!(&two, b"01");
        assert_eq!(reader.stream_position().await.unwrap(), 2);
        assert_eq!(reader.seek(SeekFrom::Current(3)).await.unwrap(), 5);
        reader.read_exact(&mut two).await.unwrap();
        assert_eq!(&two, b"56");
        assert_eq!(reader.seek(SeekFrom::End(-1)).await.unwrap(), 9);
        reader.rewind().await.unwrap();
        reader.read_exact(&mut two).await.unwrap();
        assert_eq!(&two, b"01");
    });
}

/// A source as long as `u64` allows whose byte at position `p` is `p as
/// u8`; it counts the seeks made on it.
struct Positions {
    at: u64,
    seeks: usize,
}

impl AsyncRead for Positions {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        while buf.remaining() > 0 && self.at < u64::MAX {
            buf.put_slice(&[self.at as u8]);
            self.at += 1;
        }
        Poll::Ready(Ok(()))
    }
}

impl weft::io::AsyncSeek for Positions {
    fn start_seek(mut self: Pin<&mut Self>, to: SeekFrom) -> io::Result<()> {
        let invalid = || io::Error::new(io::ErrorKind::InvalidInput, "out of range");
        self.at = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::End(d) => u64::MAX.checked_add_signed(d).ok_or_else(invalid)?,
            SeekFrom::Current(d) => self.at.checked_add_signed(d).ok_or_else(invalid)?,
        };
        self.seeks += 1;
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        Poll::Ready(Ok(self.at))
    }
}

/// A relative seek whose offset, less the buffered bytes, does not fit in
/// an `i64` still lands where the caller asked (two seeks of the inner
/// reader, as std's `BufReader` makes), and the buffer is refilled there.
#[test]
fn a_relative_seek_past_i64_min_once_buffered_bytes_count_still_lands() {
    block_on(async {
        let mut reader = BufReader::with_capacity(8, Positions { at: 0, seeks: 0 });
        let far = reader.seek(SeekFrom::End(-100)).await.unwrap();
        assert_eq!(far, u64::MAX - 100);
        let mut three = [0u8; 3];
        reader.read_exact(&mut three).await.unwrap(); // buffers 8, 5 left
        assert_eq!(three, [far as u8, (far + 1) as u8, (far + 2) as u8]);
        let seeks = reader.get_ref().seeks;
        let to = reader.seek(SeekFrom::Current(i64::MIN)).await.unwrap();
        assert_eq!(to, far + 3 - (1u64 << 63));
        assert_eq!(reader.get_ref().seeks, seeks + 2);
        assert_eq!(reader.fill_buf().await.unwrap()[0], to as u8);
        assert_eq!(reader.stream_position().await.unwrap(), to);
    });
}

#[test]
fn seek_through_a_buf_writer_writes_the_buffer_first() {
    block_on(async {
        let mut writer = BufWriter::new(Cursor::new(vec![0u8; 8]));
        writer.write_all(b"abc").await.unwrap();
        assert_eq!(writer.seek(SeekFrom::Start(6)).await.unwrap(), 6);
        writer.write_all(b"z").await.unwrap();
        writer.flush().await.unwrap();
        assert_eq!(writer.get_ref().get_ref(), b"abc\0\0\0z\0");
    });
}

#[test]
fn buf_stream_buffers_both_ways() {
    block_on(async {
        let (client, mut server) = weft::io::duplex(64);
        let mut stream = BufStream::new(client);
        stream.write_all(b"request\n").await.unwrap();
        // Nothing reaches the peer before the flush.
        let mut peek = [0u8; 1];
        let early =
            weft::time::timeout(std::time::Duration::from_millis(20), server.read(&mut peek)).await;
        assert!(early.is_err(), "data left the buffer before the flush");
        stream.flush().await.unwrap();
        let mut line = String::new();
        BufReader::new(&mut server)
            .read_line(&mut line)
            .await
            .unwrap();
        assert_eq!(line, "request\n");

        server.write_all(b"reply\nrest").await.unwrap();
        let mut line = String::new();
        stream.read_line(&mut line).await.unwrap();
        assert_eq!(line, "reply\n");
    });
}

#[test]
fn join_reads_one_side_and_writes_the_other() {
    block_on(async {
        let (a, mut a_peer) = weft::io::duplex(16);
        let (b, mut b_peer) = weft::io::duplex(16);
        let (a_read, _a_write) = weft::io::split(a);
        let (_b_read, b_write) = weft::io::split(b);
        let mut joined = weft::io::join(a_read, b_write);
        a_peer.write_all(b"in").await.unwrap();
        let mut two = [0u8; 2];
        joined.read_exact(&mut two).await.unwrap();
        assert_eq!(&two, b"in");
        joined.write_all(b"out").await.unwrap();
        let mut three = [0u8; 3];
        b_peer.read_exact(&mut three).await.unwrap();
        assert_eq!(&three, b"out");
    });
}

#[test]
fn simplex_is_one_way_with_back_pressure() {
    block_on(async {
        let (mut rx, mut tx) = weft::io::simplex(4);
        assert_eq!(tx.write(b"abcdef").await.unwrap(), 4);
        let mut buf = [0u8; 8];
        assert_eq!(rx.read(&mut buf).await.unwrap(), 4);
        assert_eq!(&buf[..4], b"abcd");
        tx.shutdown().await.unwrap();
        assert_eq!(rx.read(&mut buf).await.unwrap(), 0);
    });
}

#[test]
fn duplex_vectored_write_fills_from_every_buffer() {
    block_on(async {
        let (mut a, mut b) = weft::io::duplex(5);
        let bufs = [
            IoSlice::new(b"ab"),
            IoSlice::new(b"cd"),
            IoSlice::new(b"ef"),
        ];
        assert_eq!(a.write_vectored(&bufs).await.unwrap(), 5);
        let mut got = [0u8; 5];
        b.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"abcde");
    });
}

#[test]
fn copy_bidirectional_with_small_buffers() {
    block_on(async {
        let (mut client, mut proxy_in) = weft::io::duplex(1024);
        let (mut proxy_out, mut server) = weft::io::duplex(1024);
        let up: Vec<u8> = (0..700u32).map(|i| i as u8).collect();
        client.write_all(&up).await.unwrap();
        client.shutdown().await.unwrap();
        server.write_all(b"down").await.unwrap();
        server.shutdown().await.unwrap();
        let (a, b) = weft::io::copy_bidirectional_with_sizes(&mut proxy_in, &mut proxy_out, 3, 1)
            .await
            .unwrap();
        assert_eq!((a, b), (700, 4));
        let mut got = Vec::new();
        server.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, up);
    });
}

/// A futures-io writer, for the bridge.
#[derive(Default)]
struct FuturesVec(Vec<u8>, bool);

impl futures_io::AsyncWrite for FuturesVec {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.0.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.1 = true;
        Poll::Ready(Ok(()))
    }
}

#[test]
fn futures_io_bridge_both_ways() {
    use futures::io::AsyncReadExt as _;
    use weft::compat::{FuturesAsyncWriteCompatExt, WeftAsyncReadCompatExt};
    block_on(async {
        // futures-io writer driven by weft's AsyncWriteExt; shutdown -> close.
        let mut w = FuturesVec::default().compat_write();
        AsyncWriteExt::write_all(&mut w, b"weft side")
            .await
            .unwrap();
        AsyncWriteExt::shutdown(&mut w).await.unwrap();
        let inner = w.into_inner();
        assert_eq!((inner.0.as_slice(), inner.1), (&b"weft side"[..], true));

        // weft reader driven by futures' AsyncReadExt.
        let (mut a, b) = weft::io::duplex(16);
        AsyncWriteExt::write_all(&mut a, b"to futures")
            .await
            .unwrap();
        drop(a);
        let mut text = String::new();
        b.compat().read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "to futures");

        // And a weft writer driven by futures' AsyncWriteExt.
        let mut v = Vec::<u8>::new().compat_write();
        futures::io::AsyncWriteExt::write_all(&mut v, b"x")
            .await
            .unwrap();
        assert_eq!(v.get_ref(), b"x");
    });
}

#[test]
fn generic_code_over_pinned_boxes_and_references() {
    async fn pump(
        mut r: impl AsyncRead + Unpin,
        mut w: impl AsyncWrite + Unpin,
    ) -> io::Result<u64> {
        weft::io::copy(&mut r, &mut w).await
    }
    block_on(async {
        let r: Pin<Box<dyn AsyncRead + Send>> = Box::pin(&b"boxed"[..]);
        let mut out = Vec::new();
        assert_eq!(pump(r, &mut out).await.unwrap(), 5);
        let r: Box<dyn AsyncRead + Unpin + Send> = Box::new(Cursor::new(b"cursor".to_vec()));
        assert_eq!(pump(r, &mut out).await.unwrap(), 6);
        assert_eq!(out, b"boxedcursor");
    });
}
