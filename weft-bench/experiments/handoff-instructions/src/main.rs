//! `joinset`: a JoinSet spawns and joins 20 × 5,000 trivial tasks;
//! `mutex`: four tasks take a Mutex 50,000 times each, yielding while they
//! hold it (so every lock is a hand-off through the semaphore's queue).
//! `filewrite`: 20,000 `File` writes, then 20,000 `fs::metadata` calls
//! (on the blocking pool: the runtime has no I/O driver, so no ring).
//! On a current_thread runtime; `run.sh` counts the instructions of two
//! builds of weft under callgrind.
use std::sync::Arc;
fn main() {
    let what = std::env::args().nth(1).unwrap_or_default();
    let rt = weft::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        match what.as_str() {
            "joinset" => {
                let mut set = weft::task::JoinSet::new();
                for round in 0..20 {
                    for i in 0..5_000u64 {
                        set.spawn(async move { i + round });
                    }
                    let mut sum = 0;
                    while let Some(r) = set.join_next().await {
                        sum += r.unwrap();
                    }
                    std::hint::black_box(sum);
                }
            }
            "mutex" => {
                let m = Arc::new(weft::sync::Mutex::new(0u64));
                let mut handles = Vec::new();
                for _ in 0..4 {
                    let m = m.clone();
                    handles.push(weft::spawn(async move {
                        for _ in 0..50_000 {
                            let mut g = m.lock().await;
                            *g += 1;
                            weft::task::yield_now().await;
                        }
                    }));
                }
                for h in handles {
                    h.await.unwrap();
                }
            }
            "filewrite" => {
                // 20,000 background writes of 64 bytes, each waiting for
                // the one before (a File has one in flight), then 20,000
                // path calls, each checking for writes in flight first.
                use weft::io::AsyncWriteExt;
                let path = std::env::temp_dir().join(format!("handoff-{}", std::process::id()));
                let mut file = weft::fs::File::create(&path).await.unwrap();
                for _ in 0..20_000 {
                    file.write_all(&[1; 64]).await.unwrap();
                }
                file.flush().await.unwrap();
                drop(file);
                for _ in 0..20_000 {
                    std::hint::black_box(weft::fs::metadata(&path).await.unwrap().len());
                }
                weft::fs::remove_file(&path).await.unwrap();
            }
            _ => panic!("joinset | mutex | filewrite"),
        }
    });
}
