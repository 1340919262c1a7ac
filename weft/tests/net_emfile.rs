//! `accept` when the process is out of file descriptors (`EMFILE`): the
//! error reaches the caller, and once descriptors are free again the same
//! listener accepts the connection that was waiting.
//!
//! A binary of its own with a single test, because it lowers the process's
//! `RLIMIT_NOFILE` (restored at the end); the three runtime flavours run one
//! after the other inside that test instead of in parallel.

use std::fs::File;
use std::time::Duration;
use weft::net::TcpListener;
use weft::runtime::{Builder, Runtime};

fn nofile() -> libc::rlimit {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
    lim
}

fn set_nofile(lim: libc::rlimit) {
    // SAFETY: `lim` is a valid rlimit; lowering the soft limit (or restoring
    // it to a value it had) never exceeds the hard limit.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
}

fn scenario(rt: Runtime) {
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(addr).unwrap();

        // Use up every descriptor the limit allows.
        let mut hogs = Vec::new();
        loop {
            match File::open("/dev/null") {
                Ok(f) => hogs.push(f),
                Err(e) if e.raw_os_error() == Some(libc::EMFILE) => break,
                Err(e) => panic!("unexpected error while using up descriptors: {e}"),
            }
            assert!(hogs.len() < 100_000, "the descriptor limit did not apply");
        }

        let limit = Duration::from_secs(30);
        let err = weft::time::timeout(limit, listener.accept())
            .await
            .expect("accept hung instead of failing")
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EMFILE), "{err}");

        // Free a few; the pending connection is still in the backlog and no
        // new readiness edge will come, so this only works if the error left
        // the listener's readiness alone.
        hogs.truncate(hogs.len() - 4);
        let (stream, peer) = weft::time::timeout(limit, listener.accept())
            .await
            .expect("the pending connection was never accepted")
            .unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        assert_eq!(stream.peer_addr().unwrap(), client.local_addr().unwrap());
        drop(hogs);
    });
}

#[test]
fn accept_reports_emfile_and_recovers() {
    let original = nofile();
    let builders: [fn() -> Runtime; 3] = [
        || Builder::new_current_thread().enable_all().build().unwrap(),
        || {
            Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap()
        },
        || {
            Builder::new_multi_thread()
                .worker_threads(4)
                .enable_all()
                .build()
                .unwrap()
        },
    ];
    for build in builders {
        let rt = build();
        // Low enough to exhaust quickly, above what is already open.
        let open = std::fs::read_dir("/proc/self/fd").map_or(64, |d| d.count() as u64);
        set_nofile(libc::rlimit {
            rlim_cur: (open + 32).min(original.rlim_cur),
            rlim_max: original.rlim_max,
        });
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scenario(rt)));
        set_nofile(original);
        if let Err(panic) = result {
            std::panic::resume_unwind(panic);
        }
    }
}
