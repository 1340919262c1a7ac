//! The I/O suite: weft's reactor, sockets and timers against Tokio's.
//!
//! - `io_tcp_echo_{1,10,100}`: an echo server on the runtime under test
//!   (multi_thread, 1 worker, `enable_all`), one task per connection doing
//!   read → `write_all`. The load comes from one client shared by both
//!   sides: a thread running a Tokio current_thread runtime with 1, 10 or
//!   100 persistent connections (`TCP_NODELAY` on both ends). One iteration
//!   = 1,000 round trips of a 100-byte message, split evenly over the
//!   connections, all connections running concurrently. So the client's
//!   cost is identical on both sides and the difference is the server's.
//!   With the server's worker and the client thread, both cores are busy.
//! - `io_timers_arm_cancel`: current_thread, inside `unconstrained` (so
//!   the budget does not stop the arming): 100,000 `sleep`s of 1–10 s are
//!   created, boxed, polled once (which arms each in the wheel) and kept;
//!   then all are dropped (which cancels each). Creation, arming and
//!   cancelling are timed.
//! - `io_timeout_ready`: current_thread: 10,000 `timeout(1 s, ready)`
//!   awaited, whose future is ready at once, so the timer is never armed
//!   (Tokio's `time_timeout` shape): the clock read and the `Sleep` made
//!   and dropped.
//! - `io_instant_now`: current_thread: 10,000 `Instant::now()` inside
//!   `block_on` (Tokio's `time_now`), on the runtime's clock.
//! - `io_duplex_stream`: current_thread: a spawned writer `write_all`s
//!   1 MiB in 8 KiB chunks into one end of `io::duplex(64 KiB)` and shuts
//!   it down; `block_on` reads the other end in 8 KiB reads to EOF. The
//!   in-memory pipe and the wakes between its two tasks.
//! - `io_copy_mem`: current_thread: `io::copy` of 4 MiB from a `&[u8]`
//!   into a `Vec<u8>` (Tokio's `copy_mem_to_mem` shape; the `Vec` keeps its
//!   capacity between iterations).
//! - `io_file_read_seq`: multi_thread (4 workers, `enable_all`): a 4 MiB
//!   file (made once, in the page cache) opened with `fs::File` and read in
//!   64 KiB reads to EOF. weft reads on its default I/O driver (io_uring
//!   where the kernel allows it), Tokio on its blocking pool.

pub use crate::echo::EchoClient;

/// Sleeps per `io_timers_arm_cancel` iteration.
pub const TIMERS: u64 = 100_000;

/// Calls per `io_timeout_ready` and `io_instant_now` iteration.
pub const CLOCK_CALLS: usize = 10_000;

/// Bytes through the duplex per `io_duplex_stream` iteration.
pub const DUPLEX_BYTES: usize = 1 << 20;
/// Bytes per `io_copy_mem` iteration.
pub const COPY_BYTES: usize = 4 << 20;
/// Size of the `io_file_read_seq` file.
pub const FILE_BYTES: usize = 4 << 20;

/// The `io_file_read_seq` file: made on first use (per process), removed
/// when the last side holding it is dropped.
pub struct SeqFile {
    path: std::path::PathBuf,
}

impl SeqFile {
    pub fn make() -> std::sync::Arc<SeqFile> {
        use std::sync::{Mutex, Weak};
        static SHARED: Mutex<Weak<SeqFile>> = Mutex::new(Weak::new());
        let mut shared = SHARED.lock().unwrap();
        if let Some(file) = shared.upgrade() {
            return file;
        }
        let path =
            std::env::temp_dir().join(format!("weft-bench-seq-read-{}.dat", std::process::id()));
        let bytes: Vec<u8> = (0..FILE_BYTES).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, bytes).expect("write the io_file_read_seq file");
        let file = std::sync::Arc::new(SeqFile { path });
        *shared = std::sync::Arc::downgrade(&file);
        file
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for SeqFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

macro_rules! io_family {
    ($rt:ident) => {
        use super::{
            EchoClient, SeqFile, CLOCK_CALLS, COPY_BYTES, DUPLEX_BYTES, FILE_BYTES, TIMERS,
        };
        use crate::harness::Side;
        use std::future::Future;
        use std::hint::black_box;
        use std::pin::Pin;
        use std::task::Poll;
        use std::time::Duration;
        use $rt::io::{AsyncReadExt, AsyncWriteExt};
        use $rt::runtime::{Builder, Runtime};

        pub struct Echo {
            // Field order: the client disconnects before the server stops.
            client: EchoClient,
            _rt: Runtime,
        }

        impl Side for Echo {
            fn run(&mut self) {
                self.client.round();
            }
        }

        fn echo(conns: usize) -> Box<dyn Side> {
            let (addr, rt) = echo_server!($rt);
            let client = EchoClient::connect(addr, conns);
            Box::new(Echo { client, _rt: rt })
        }

        pub fn tcp_echo_1() -> Box<dyn Side> {
            echo(1)
        }

        pub fn tcp_echo_10() -> Box<dyn Side> {
            echo(10)
        }

        pub fn tcp_echo_100() -> Box<dyn Side> {
            echo(100)
        }

        pub struct Timers {
            rt: Runtime,
        }

        impl Side for Timers {
            fn run(&mut self) {
                self.rt.block_on($rt::task::unconstrained(async {
                    let mut armed = Vec::with_capacity(TIMERS as usize);
                    for i in 0..TIMERS {
                        let d = Duration::from_millis(1_000 + i % 9_000);
                        let mut s = Box::pin($rt::time::sleep(d));
                        std::future::poll_fn(|cx| {
                            assert!(s.as_mut().poll(cx).is_pending());
                            Poll::Ready(())
                        })
                        .await;
                        armed.push(s);
                    }
                    drop::<Vec<Pin<Box<$rt::time::Sleep>>>>(armed);
                }));
            }
        }

        pub fn timers_arm_cancel() -> Box<dyn Side> {
            let rt = Builder::new_current_thread().enable_all().build().unwrap();
            Box::new(Timers { rt })
        }

        /// A current_thread runtime with the time driver, and one body
        /// run in `block_on` per iteration.
        pub struct Clocked {
            rt: Runtime,
            body: fn(&Runtime),
        }

        impl Side for Clocked {
            fn run(&mut self) {
                (self.body)(&self.rt);
            }
        }

        fn clocked(body: fn(&Runtime)) -> Box<dyn Side> {
            let rt = Builder::new_current_thread().enable_all().build().unwrap();
            Box::new(Clocked { rt, body })
        }

        pub fn timeout_ready() -> Box<dyn Side> {
            clocked(|rt| {
                rt.block_on(async {
                    let mut sum = 0;
                    for i in 0..CLOCK_CALLS {
                        let ready = async move { black_box(i) };
                        sum += $rt::time::timeout(Duration::from_secs(1), ready)
                            .await
                            .unwrap();
                    }
                    assert_eq!(sum, CLOCK_CALLS * (CLOCK_CALLS - 1) / 2);
                })
            })
        }

        pub fn duplex_stream() -> Box<dyn Side> {
            clocked(|rt| {
                rt.block_on(async {
                    let (mut reader, mut writer) = $rt::io::duplex(64 << 10);
                    let write = $rt::spawn(async move {
                        let chunk = [7u8; 8 << 10];
                        for _ in 0..DUPLEX_BYTES / chunk.len() {
                            writer.write_all(&chunk).await.unwrap();
                        }
                        writer.shutdown().await.unwrap();
                    });
                    let mut buf = [0u8; 8 << 10];
                    let mut total = 0;
                    loop {
                        let n = reader.read(&mut buf).await.unwrap();
                        if n == 0 {
                            break;
                        }
                        total += n;
                    }
                    assert_eq!(total, DUPLEX_BYTES);
                    write.await.unwrap();
                })
            })
        }

        pub struct CopyMem {
            rt: Runtime,
            from: Vec<u8>,
            to: Vec<u8>,
        }

        impl Side for CopyMem {
            fn run(&mut self) {
                let Self { rt, from, to } = self;
                to.clear();
                rt.block_on(async {
                    let n = $rt::io::copy(&mut &from[..], to).await.unwrap();
                    assert_eq!(n as usize, COPY_BYTES);
                });
                assert_eq!(to.len(), COPY_BYTES);
            }
        }

        pub fn copy_mem() -> Box<dyn Side> {
            Box::new(CopyMem {
                rt: Builder::new_current_thread().enable_all().build().unwrap(),
                from: vec![3u8; COPY_BYTES],
                to: Vec::with_capacity(COPY_BYTES),
            })
        }

        pub struct FileReadSeq {
            // Field order: the runtime goes before the file is removed.
            rt: Runtime,
            file: std::sync::Arc<SeqFile>,
            buf: Vec<u8>,
        }

        impl Side for FileReadSeq {
            fn run(&mut self) {
                let Self { rt, file, buf } = self;
                rt.block_on(async {
                    let mut f = $rt::fs::File::open(file.path()).await.unwrap();
                    let mut total = 0;
                    loop {
                        let n = f.read(buf).await.unwrap();
                        if n == 0 {
                            break;
                        }
                        total += n;
                    }
                    assert_eq!(total, FILE_BYTES);
                });
            }
        }

        pub fn file_read_seq() -> Box<dyn Side> {
            Box::new(FileReadSeq {
                rt: Builder::new_multi_thread()
                    .worker_threads(crate::workloads::NUM_WORKERS)
                    .enable_all()
                    .build()
                    .unwrap(),
                file: SeqFile::make(),
                buf: vec![0; 64 << 10],
            })
        }

        pub fn instant_now() -> Box<dyn Side> {
            clocked(|rt| {
                rt.block_on(async {
                    let first = $rt::time::Instant::now();
                    let mut last = first;
                    for _ in 0..CLOCK_CALLS {
                        last = black_box($rt::time::Instant::now());
                    }
                    assert!(last >= first);
                })
            })
        }
    };
}

pub mod tokio_side {
    io_family!(tokio);
}

pub mod weft_side {
    io_family!(weft);
}
