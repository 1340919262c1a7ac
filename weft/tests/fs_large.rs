//! `fs::File` at scale (issue 14's bar): 100 MB written through a `File`
//! in uneven chunks and read back equal, by one reader and by several at
//! once, on every flavour.

#[macro_use]
mod support;

rt_test! {
    use weft::fs::File;
    use weft::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

    const LEN: usize = 100 << 20;

    /// The byte at `i`: a pattern with no period a chunk size divides.
    fn byte(i: usize) -> u8 {
        (i.wrapping_mul(2_654_435_761) >> 13) as u8
    }

    async fn check_range(path: std::path::PathBuf, from: usize, to: usize) {
        let mut file = File::open(&path).await.unwrap();
        file.seek(std::io::SeekFrom::Start(from as u64)).await.unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut at = from;
        while at < to {
            let want = (to - at).min(buf.len());
            file.read_exact(&mut buf[..want]).await.unwrap();
            for (k, b) in buf[..want].iter().enumerate() {
                assert_eq!(*b, byte(at + k), "byte {} differs", at + k);
            }
            at += want;
        }
    }

    #[test]
    fn a_hundred_megabytes_written_and_read_back_by_concurrent_readers() {
        rt().block_on(async {
            let path = std::env::temp_dir().join(format!(
                "weft-fs-large-{}-{:?}",
                std::process::id(),
                FLAVOR
            ));
            let mut file = File::create(&path).await.unwrap();
            let mut at = 0;
            let mut chunk = 1;
            while at < LEN {
                // Chunks from 1 byte to ~3 MB, so writes cross every buffer
                // boundary.
                chunk = (chunk * 7 + 13) % (3 << 20) + 1;
                let n = chunk.min(LEN - at);
                let data: Vec<u8> = (at..at + n).map(byte).collect();
                file.write_all(&data).await.unwrap();
                at += n;
            }
            file.flush().await.unwrap();
            file.sync_all().await.unwrap();
            drop(file);
            assert_eq!(std::fs::metadata(&path).unwrap().len(), LEN as u64);

            check_range(path.clone(), 0, LEN).await;
            let readers: Vec<_> = (0..4)
                .map(|i| weft::spawn(check_range(path.clone(), i * LEN / 4, (i + 1) * LEN / 4)))
                .collect();
            for reader in readers {
                reader.await.unwrap();
            }
            std::fs::remove_file(&path).unwrap();
        });
    }
}
