//! `weft::fs::FileTimes` and `File::{set_times, set_modified}` (issue 14),
//! read back through std's metadata, on every flavour.

#[macro_use]
mod support;

rt_test! {
    use std::time::{Duration, SystemTime};
    use weft::fs::{File, FileTimes};
    use weft::io::AsyncWriteExt;

    fn temp_file(tag: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!(
            "weft-times-{}-{tag}-{:?}",
            std::process::id(),
            FLAVOR
        ));
        let _ = std::fs::remove_file(&path);
        path
    }

    #[test]
    fn set_times_sets_both_times() {
        rt().block_on(async {
            let path = temp_file("both");
            let file = File::create(&path).await.unwrap();
            let accessed = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
            let modified = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000);
            file.set_times(FileTimes::new().set_accessed(accessed).set_modified(modified))
                .await
                .unwrap();
            let meta = std::fs::metadata(&path).unwrap();
            assert_eq!(meta.accessed().unwrap(), accessed);
            assert_eq!(meta.modified().unwrap(), modified);
            std::fs::remove_file(&path).unwrap();
        });
    }

    #[test]
    fn set_modified_leaves_the_access_time() {
        rt().block_on(async {
            let path = temp_file("modified");
            let file = File::create(&path).await.unwrap();
            let accessed = SystemTime::UNIX_EPOCH + Duration::from_secs(5_000_000);
            file.set_times(FileTimes::new().set_accessed(accessed)).await.unwrap();
            let modified = SystemTime::UNIX_EPOCH + Duration::from_secs(7_000_000);
            file.set_modified(modified).await.unwrap();
            let meta = std::fs::metadata(&path).unwrap();
            assert_eq!(meta.modified().unwrap(), modified);
            assert_eq!(meta.accessed().unwrap(), accessed, "an unset time is left alone");
            std::fs::remove_file(&path).unwrap();
        });
    }

    #[test]
    fn a_write_in_flight_lands_before_the_times() {
        rt().block_on(async {
            let path = temp_file("inflight");
            let mut file = File::create(&path).await.unwrap();
            // Accepted at once; the actual write runs in the background.
            file.write_all(&vec![7u8; 256 * 1024]).await.unwrap();
            let modified = SystemTime::UNIX_EPOCH + Duration::from_secs(9_000_000);
            file.set_modified(modified).await.unwrap();
            let meta = std::fs::metadata(&path).unwrap();
            assert_eq!(meta.len(), 256 * 1024, "the write finished first");
            assert_eq!(meta.modified().unwrap(), modified, "and did not move the time after");
            std::fs::remove_file(&path).unwrap();
        });
    }
}
