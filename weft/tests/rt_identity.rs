//! Runtime identity and worker facts Tokio has (issue 14): `Builder::name`
//! / `Handle::name`, `Handle::id` / `runtime::Id`, `worker_index`,
//! `is_rt_shutdown_err`, `worker_park_unpark_count`, and the I/O event
//! caps, on every flavour.

#[macro_use]
mod support;

use weft::runtime::Builder;

#[test]
fn name_is_what_the_builder_set() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .name("ingest")
        .build()
        .unwrap();
    assert_eq!(rt.handle().name(), Some("ingest"));
    let inside = rt.block_on(async {
        weft::spawn(async { weft::runtime::Handle::current().name().map(str::to_owned) })
            .await
            .unwrap()
    });
    assert_eq!(inside.as_deref(), Some("ingest"));
    let unnamed = Builder::new_current_thread().build().unwrap();
    assert_eq!(unnamed.handle().name(), None);
}

#[test]
#[should_panic(expected = "empty runtime name")]
fn an_empty_name_panics() {
    Builder::new_current_thread().name("  ");
}

#[test]
#[should_panic(expected = "max_io_events_per_tick must be non-zero")]
fn zero_events_per_tick_panics() {
    Builder::new_current_thread().max_io_events_per_tick(0);
}

#[test]
#[should_panic(expected = "max_io_events_per_busy_tick must be non-zero")]
fn zero_events_per_busy_tick_panics() {
    Builder::new_current_thread().max_io_events_per_busy_tick(0);
}

#[test]
fn ids_differ_between_runtimes_and_display_as_numbers() {
    let a = Builder::new_current_thread().build().unwrap();
    let b = Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    assert_ne!(a.handle().id(), b.handle().id());
    assert_eq!(a.handle().id(), a.handle().clone().id());
    let shown = a.handle().id().to_string();
    assert!(shown.parse::<u64>().unwrap() > 0, "{shown}");
}

#[test]
fn worker_index_is_none_off_the_runtime() {
    assert_eq!(weft::runtime::worker_index(), None);
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    // The thread in a multi_thread block_on is no worker.
    assert_eq!(rt.block_on(async { weft::runtime::worker_index() }), None);
    let in_blocking = rt.block_on(async {
        weft::task::spawn_blocking(weft::runtime::worker_index)
            .await
            .unwrap()
    });
    assert_eq!(in_blocking, None);
}

/// A tiny event cap still delivers every event: what a turn does not
/// take waits for the next one.
#[test]
fn a_small_event_cap_still_delivers_everything() {
    use weft::io::{AsyncReadExt, AsyncWriteExt};
    for (per_tick, busy) in [(1, 1), (4, 1), (2, 64)] {
        let rt = Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .max_io_events_per_tick(per_tick)
            .max_io_events_per_busy_tick(busy)
            .build()
            .unwrap();
        rt.block_on(async {
            let mut tasks = Vec::new();
            for i in 0..16u8 {
                let (mut a, mut b) = weft::net::UnixStream::pair().unwrap();
                tasks.push(weft::spawn(async move {
                    let mut got = [0u8; 1];
                    b.read_exact(&mut got).await.unwrap();
                    got[0]
                }));
                weft::spawn(async move { a.write_all(&[i]).await.unwrap() });
            }
            for (i, t) in tasks.into_iter().enumerate() {
                assert_eq!(t.await.unwrap(), i as u8);
            }
        });
    }
}

#[test]
fn shutdown_error_is_recognised() {
    let rt1 = Builder::new_current_thread().enable_all().build().unwrap();
    let listener = rt1
        .block_on(weft::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    drop(rt1);
    let rt2 = Builder::new_current_thread().enable_all().build().unwrap();
    let err = rt2.block_on(listener.accept()).unwrap_err();
    assert!(weft::runtime::is_rt_shutdown_err(&err), "{err}");
    let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
    assert!(!weft::runtime::is_rt_shutdown_err(&refused));
    let lookalike = std::io::Error::other(err.to_string() + "!");
    assert!(!weft::runtime::is_rt_shutdown_err(&lookalike));
}

rt_test! {
    use crate::support::Flavor;

    #[test]
    fn worker_index_inside_a_task_is_below_the_worker_count() {
        let rt = rt();
        let workers = rt.metrics().num_workers();
        let indexes = rt.block_on(async {
            let mut handles = Vec::new();
            for _ in 0..32 {
                handles.push(weft::spawn(async { weft::runtime::worker_index() }));
            }
            let mut out = Vec::new();
            for h in handles {
                out.push(h.await.unwrap());
            }
            out
        });
        for index in indexes {
            let index = index.expect("a task runs on a worker");
            assert!(index < workers, "{index} >= {workers}");
        }
        let on_block_on = rt.block_on(async { weft::runtime::worker_index() });
        match FLAVOR {
            Flavor::CurrentThread => assert_eq!(on_block_on, Some(0)),
            Flavor::MultiThread(_) => assert_eq!(on_block_on, None),
        }
    }

    #[test]
    fn park_unpark_count_is_odd_while_parked() {
        let rt = rt();
        let metrics = rt.metrics();
        // Let the workers settle into parking.
        rt.block_on(async {
            weft::time::sleep(std::time::Duration::from_millis(20)).await;
        });
        match FLAVOR {
            Flavor::CurrentThread => {
                // Outside block_on nothing drives it: it parked and unparked
                // around the sleep, so the count is even and non-zero.
                let n = metrics.worker_park_unpark_count(0);
                assert!(n > 0 && n.is_multiple_of(2), "{n}");
                assert!(n >= 2 * metrics.worker_park_count(0) - 1);
            }
            Flavor::MultiThread(workers) => {
                // Idle workers are parked: odd.
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
                for w in 0..workers {
                    loop {
                        let n = metrics.worker_park_unpark_count(w);
                        if !n.is_multiple_of(2) {
                            break;
                        }
                        assert!(std::time::Instant::now() < deadline, "worker {w} never parked: {n}");
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                }
            }
        }
    }

    #[test]
    fn handle_id_is_the_same_inside_and_outside() {
        let rt = rt();
        let outside = rt.handle().id();
        let inside = rt.block_on(async {
            weft::spawn(async { weft::runtime::Handle::current().id() }).await.unwrap()
        });
        assert_eq!(outside, inside);
    }
}
