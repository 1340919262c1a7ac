//! The I/O utility layer's costs, built against weft or against Tokio
//! (run.sh renames the crate to `rt`), on a current_thread runtime, with
//! in-memory readers and writers only (no system call in the loop). The
//! first argument picks the workload, the second how many times it runs
//! (default 10); run.sh counts instructions for 1 and 3 runs and reports
//! the difference, so setup cancels out.
//!
//! - `copy`: `io::copy` of 1 MiB from a `&[u8]` into a `Vec<u8>`;
//! - `read_line`, `read_until`, `lines`: the 20,000 lines of a 620 KB text
//!   through a `BufReader`;
//! - `read_to_string`, `read_to_end`: that text from a `&[u8]`;
//! - `read_exact`: that text in 16-byte `read_exact`s through a `BufReader`;
//! - `nums`: 20,000 × (`write_u32`, `write_u64_le`) into a `Vec`, then the
//!   same reads back from a `&[u8]`;
//! - `bufwriter`: 40,000 small `write_all`s through a `BufWriter<Vec<u8>>`;
//! - `split`: 5,000 64-byte round trips over a `duplex` whose one end is
//!   `io::split`;
//! - `take_repeat`: `io::copy` of `repeat(5).take(1 MiB)` into a `Vec`;
//! - `chain`: `read_to_end` of two chained `&[u8]` halves of the text.

use rt::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use std::hint::black_box;

/// The workloads, for the usage message and run.sh.
const MODES: &[&str] = &[
    "copy",
    "lines",
    "read_line",
    "read_until",
    "bufwriter",
    "read_to_end",
    "read_to_string",
    "nums",
    "read_exact",
    "split",
    "take_repeat",
    "chain",
];

fn text() -> Vec<u8> {
    use std::io::Write;
    let mut text = Vec::new();
    for i in 0..20_000 {
        writeln!(text, "line number {i} with some text").unwrap();
    }
    text
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    if mode == "--list" {
        println!("{}", MODES.join(" "));
        return;
    }
    assert!(MODES.contains(&mode.as_str()), "usage: io-util MODE [N]; MODE one of {MODES:?}");
    let n: usize = std::env::args()
        .nth(2)
        .map_or(10, |s| s.parse().expect("a count"));
    let runtime = rt::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let text = text();
    runtime.block_on(async {
        for _ in 0..n {
            run(&mode, &text).await;
        }
    });
}

async fn run(mode: &str, text: &[u8]) {
    match mode {
        "copy" => {
            let from = vec![3u8; 1 << 20];
            let mut to = Vec::with_capacity(1 << 20);
            rt::io::copy(&mut &from[..], &mut to).await.unwrap();
        }
        "lines" => {
            let mut lines = BufReader::new(text).lines();
            let mut total = 0;
            while let Some(line) = lines.next_line().await.unwrap() {
                total += line.len();
            }
            black_box(total);
        }
        "read_line" => {
            let mut reader = BufReader::new(text);
            let mut line = String::new();
            loop {
                line.clear();
                if reader.read_line(&mut line).await.unwrap() == 0 {
                    break;
                }
                black_box(&line);
            }
        }
        "read_until" => {
            let mut reader = BufReader::new(text);
            let mut line = Vec::new();
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line).await.unwrap() == 0 {
                    break;
                }
                black_box(&line);
            }
        }
        "bufwriter" => {
            let mut w = BufWriter::new(Vec::with_capacity(1 << 20));
            for i in 0..20_000u32 {
                w.write_all(&i.to_le_bytes()).await.unwrap();
                w.write_all(b"abcdefghij").await.unwrap();
            }
            w.flush().await.unwrap();
            black_box(w.into_inner().len());
        }
        "read_to_end" => {
            let mut v = Vec::new();
            { text }.read_to_end(&mut v).await.unwrap();
            black_box(v.len());
        }
        "read_to_string" => {
            let mut s = String::new();
            { text }.read_to_string(&mut s).await.unwrap();
            black_box(s.len());
        }
        "nums" => {
            let mut v = Vec::with_capacity(240_000);
            for i in 0..20_000u32 {
                v.write_u32(i).await.unwrap();
                v.write_u64_le(u64::from(i)).await.unwrap();
            }
            let mut r = &v[..];
            let mut sum = 0u64;
            for _ in 0..20_000 {
                sum += u64::from(r.read_u32().await.unwrap());
                sum += r.read_u64_le().await.unwrap();
            }
            black_box(sum);
        }
        "read_exact" => {
            let mut reader = BufReader::new(text);
            let mut chunk = [0u8; 16];
            for _ in 0..text.len() / 16 {
                reader.read_exact(&mut chunk).await.unwrap();
                black_box(&chunk);
            }
        }
        "split" => {
            let (a, mut b) = rt::io::duplex(1 << 16);
            let (mut read_half, mut write_half) = rt::io::split(a);
            let mut buf = [0u8; 64];
            for _ in 0..5_000 {
                write_half.write_all(&[1u8; 64]).await.unwrap();
                b.read_exact(&mut buf).await.unwrap();
                b.write_all(&buf).await.unwrap();
                read_half.read_exact(&mut buf).await.unwrap();
            }
        }
        "take_repeat" => {
            let mut v = Vec::with_capacity(1 << 20);
            rt::io::copy(&mut rt::io::repeat(5).take(1 << 20), &mut v)
                .await
                .unwrap();
            black_box(v.len());
        }
        "chain" => {
            let (a, b) = text.split_at(text.len() / 2);
            let mut v = Vec::with_capacity(text.len());
            a.chain(b).read_to_end(&mut v).await.unwrap();
            black_box(v.len());
        }
        _ => unreachable!("checked in main"),
    }
}
