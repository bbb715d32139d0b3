//! recordwire's inflater (`src/deflate/`, through
//! `recordwire::__internals::deflate`) against flate2 and against miniz_oxide's
//! block-boundary API (flate2's backend), decompressing the same GZIP members
//! made by flate2 at levels 1, 6 and 9: MB/s of output, medians of 5 runs, in
//! one process.
//!
//! ```sh
//! cargo run --release --example inflate_bench                 # ~100 MB generated
//! INFLATE_BENCH_MB=20 cargo run --release --example inflate_bench  # ~20 MB
//! INFLATE_BENCH_CLOCK=cpu cargo run --release --example inflate_bench  # CPU time
//! # instruction counts of the `blocks` rows (each decoder once per level):
//! INFLATE_BENCH_ONCE=1 valgrind --tool=callgrind --toggle-collect='*ours_blocks*' \
//!     target/release/examples/inflate_bench FILE      # or '*miniz_blocks*'
//! cargo run --release --example gen_corpus -- /tmp/gzcorpus 1
//! cargo run --release --example inflate_bench -- /tmp/gzcorpus/bert.tfrecord
//! ```
//!
//! Rows: `flate2 gz` is `read::MultiGzDecoder` (with its CRC-32); `flate2
//! raw` is `Decompress::new(false)` over the deflate data into one buffer;
//! `ours raw` is one `Inflate::run` into one buffer; `ours gz` adds the header,
//! CRC-32 and trailer check; `ours index` is what an indexer does: stop at
//! every block, decode in 1 MiB steps and drain all but the 32 KiB window,
//! updating the CRC-32 on each drained chunk. `blocks` stops at every block
//! boundary and keeps the whole output in one buffer: ours is the loop of
//! `src/deflate/`'s module doc and its test `checkpoints_and_restart`
//! (`Inflate::run` with no limit and `stop_at_blocks`, from an empty `Vec`), miniz_oxide's is `decompress` with
//! `TINFL_FLAG_STOP_ON_BLOCK_BOUNDARY` into a flat buffer made for the whole
//! output (its best case: it needs the size up front), reading
//! `block_boundary_state` at each stop. Every run checks the output's length
//! (and all but the `blocks` rows its CRC-32, or its block count), so a
//! broken decoder fails instead of getting faster.

use std::hint::black_box;
use std::io::{Read, Write};
use std::time::Instant;

use miniz_oxide::inflate::core::inflate_flags::{
    TINFL_FLAG_STOP_ON_BLOCK_BOUNDARY, TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
};
use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;
use recordwire::__internals::deflate::{
    end_byte, gzip_header, gzip_trailer, Inflate, Progress, WINDOW,
};

const RUNS: usize = 5;
/// The least seconds one run lasts (`f` repeated).
const MIN_RUN: f64 = 0.25;

thread_local! {
    static START: Instant = Instant::now();
}

/// Seconds this thread has run on a CPU (Linux's `schedstat`, in
/// nanoseconds), when known.
fn thread_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Whether runs are timed by the thread's CPU time (`INFLATE_BENCH_CLOCK=cpu`:
/// steadier than the wall clock on a machine shared with other work).
fn cpu_clock() -> bool {
    std::env::var("INFLATE_BENCH_CLOCK").is_ok_and(|c| c == "cpu") && thread_cpu().is_some()
}

/// Median seconds of `RUNS` runs of `f`; each run repeats `f` for at least
/// [`MIN_RUN`] seconds and takes the mean (a coarse clock, as the CPU time
/// of some kernels is, then still times a short `f`).
fn median(mut f: impl FnMut()) -> f64 {
    let cpu = cpu_clock();
    let now = || match cpu {
        true => thread_cpu().unwrap_or(0.0),
        false => START.with(|s| s.elapsed().as_secs_f64()),
    };
    let mut t: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = now();
            let mut n = 0;
            while n == 0 || now() - start < MIN_RUN {
                f();
                n += 1;
            }
            (now() - start) / f64::from(n)
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[RUNS / 2]
}

/// ~`n` bytes of text-like lines with numbers and words, interleaved with
/// stretches of random bytes (like embedded images or floats).
fn generate(n: usize) -> Vec<u8> {
    let words = [
        "the",
        "record",
        "feature",
        "label",
        "image",
        "encoded",
        "float_list",
        "int64",
        "value",
        "of",
        "a",
        "tensor",
        "shape",
        "train",
        "eval",
        "bytes",
        "key",
        "and",
        "data",
        "model",
    ];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::with_capacity(n + 4096);
    while out.len() < n {
        let r = next();
        if r % 10 == 0 {
            // Random-ish: 4-bit values (compress ~2x), like quantized floats.
            let len = 256 + (r >> 8) as usize % 4096;
            out.extend((0..len).map(|_| (next() & 0x0f) as u8 + b'0'));
        } else if r % 10 == 1 {
            let len = 64 + (r >> 8) as usize % 1024;
            out.extend((0..len).map(|_| next() as u8));
        } else {
            for _ in 0..(r >> 8) % 30 {
                let w = words[(next() >> 40) as usize % words.len()];
                out.extend_from_slice(w.as_bytes());
                out.push(if next() % 7 == 0 { b'\n' } else { b' ' });
                if next() % 5 == 0 {
                    out.extend_from_slice((next() % 100_000).to_string().as_bytes());
                    out.push(b',');
                }
            }
        }
    }
    out.truncate(n);
    out
}

fn crc_of(data: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(data);
    crc.sum()
}

/// Decodes the member with ours into `out` (cleared), checking the trailer.
fn ours_gz(gz: &[u8], out: &mut Vec<u8>) -> usize {
    out.clear();
    let h = gzip_header(gz, 0).expect("header");
    let mut inflate = Inflate::at(h.deflate_start as u64 * 8);
    let Ok(Progress::End { bit }) = inflate.run(gz, out, usize::MAX, false) else {
        panic!("ours failed")
    };
    let mut crc = flate2::Crc::new();
    crc.update(out);
    gzip_trailer(gz, end_byte(bit))
        .expect("trailer")
        .check(&crc)
        .expect("crc");
    out.len()
}

/// The indexer's loop: returns (output length, CRC-32, blocks).
fn ours_index(gz: &[u8], out: &mut Vec<u8>) -> (u64, u32, usize) {
    out.clear();
    let h = gzip_header(gz, 0).expect("header");
    let mut inflate = Inflate::at(h.deflate_start as u64 * 8);
    let mut crc = flate2::Crc::new();
    let mut total = 0u64;
    let mut blocks = 0;
    let mut kept = 0;
    loop {
        let p = inflate
            .run(gz, out, kept + (1 << 20), true)
            .expect("ours failed");
        crc.update(&out[kept..]);
        total += (out.len() - kept) as u64;
        let drop = out.len().saturating_sub(WINDOW);
        out.drain(..drop);
        kept = out.len();
        match p {
            Progress::Block { .. } => blocks += 1,
            Progress::Limit => {}
            Progress::End { .. } => break,
        }
    }
    (total, crc.sum(), blocks)
}

/// The module doc's loop: every block boundary, the whole output kept in
/// `out` (cleared, so each run starts from an empty `Vec` with capacity).
/// Returns (output length, boundaries as bit positions summed, blocks).
#[inline(never)]
fn ours_blocks(deflate: &[u8], out: &mut Vec<u8>) -> (usize, u64, usize) {
    out.clear();
    let mut inflate = Inflate::at(0);
    let (mut bits, mut blocks) = (0, 0);
    loop {
        match inflate.run(deflate, out, usize::MAX, true) {
            Ok(Progress::Block { bit }) => {
                bits += bit;
                blocks += 1;
            }
            Ok(Progress::End { .. }) => return (out.len(), bits, blocks),
            r => panic!("ours failed: {r:?}"),
        }
    }
}

/// miniz_oxide stopping at every block boundary, into `out` (as long as the
/// whole output, and more). Returns the same as [`ours_blocks`].
#[inline(never)]
fn miniz_blocks(deflate: &[u8], out: &mut [u8]) -> (usize, u64, usize) {
    let flags = TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF | TINFL_FLAG_STOP_ON_BLOCK_BOUNDARY;
    let mut r = DecompressorOxide::new();
    let (mut at, mut pos, mut bits, mut blocks) = (0, 0, 0, 0);
    loop {
        let (status, read, written) = decompress(&mut r, &deflate[at..], out, pos, flags);
        at += read;
        pos += written;
        match status {
            TINFLStatus::BlockBoundary => {
                let state = r.block_boundary_state().expect("at a boundary");
                bits += at as u64 * 8 - u64::from(state.num_bits);
                blocks += 1;
            }
            TINFLStatus::Done => return (pos, bits, blocks),
            other => panic!("miniz_oxide failed: {other:?}"),
        }
    }
}

fn bench(name: &str, data: &[u8]) {
    let mb = data.len() as f64 / 1e6;
    let want_crc = crc_of(data);
    let mut out = Vec::with_capacity(data.len() + 1024);
    for level in [1, 6, 9] {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).expect("in memory");
        let gz = e.finish().expect("in memory");
        let h = gzip_header(&gz, 0).expect("header");
        let deflate = &gz[h.deflate_start..gz.len() - 8];
        if std::env::var_os("INFLATE_BENCH_ONCE").is_some() {
            // Each `blocks` decoder once, untimed (for instruction counts).
            let mut flat = vec![0; data.len() + 1024];
            let ours = ours_blocks(deflate, &mut out);
            assert_eq!(miniz_blocks(deflate, &mut flat), ours);
            println!("{name} level {level}: {} blocks", ours.2 + 1);
            continue;
        }

        let flate2_gz = median(|| {
            out.clear();
            flate2::read::MultiGzDecoder::new(&gz[..])
                .read_to_end(&mut out)
                .expect("flate2");
            assert_eq!(crc_of(&out), want_crc);
        });
        let flate2_raw = median(|| {
            out.clear();
            let mut d = flate2::Decompress::new(false);
            d.decompress_vec(deflate, &mut out, flate2::FlushDecompress::Finish)
                .expect("flate2");
            assert_eq!(out.len(), data.len());
        });
        let ours_raw = median(|| {
            out.clear();
            let r = Inflate::at(0).run(deflate, &mut out, usize::MAX, false);
            assert!(matches!(r, Ok(Progress::End { .. })));
            assert_eq!(out.len(), data.len());
        });
        assert_eq!(crc_of(&out), want_crc);
        let ours_gz = median(|| assert_eq!(black_box(ours_gz(&gz, &mut out)), data.len()));
        let mut blocks = 0;
        let mut index_out = Vec::new();
        let ours_index = median(|| {
            let (n, crc, b) = ours_index(&gz, &mut index_out);
            assert_eq!((n, crc), (data.len() as u64, want_crc));
            blocks = b;
        });
        let mut walk = (0, 0, 0);
        let mut blocks_out = Vec::new();
        let ours_blocks = median(|| walk = ours_blocks(deflate, &mut blocks_out));
        assert_eq!(walk.0, data.len());
        assert_eq!(crc_of(&blocks_out), want_crc);
        let mut flat = vec![0; data.len() + 1024];
        let mut miniz_walk = (0, 0, 0);
        let miniz_blocks = median(|| miniz_walk = miniz_blocks(deflate, &mut flat));
        assert_eq!(miniz_walk, walk, "the same boundaries");
        assert_eq!(crc_of(&flat[..data.len()]), want_crc);
        println!(
            "{name} level {level}: {:.1} MB -> {:.1} MB ({} blocks)",
            mb,
            gz.len() as f64 / 1e6,
            blocks + 1
        );
        for (row, ours, theirs) in [
            ("raw", ours_raw, flate2_raw),
            ("gz", ours_gz, flate2_gz),
            ("index", ours_index, flate2_gz),
        ] {
            println!(
                "  {row:6} ours {:7.1} MB/s   flate2 {:7.1} MB/s   ratio {:.2}",
                mb / ours,
                mb / theirs,
                theirs / ours
            );
        }
        println!(
            "  blocks ours {:7.1} MB/s   miniz_oxide block-boundary {:7.1} MB/s   ratio {:.2}",
            mb / ours_blocks,
            mb / miniz_blocks,
            miniz_blocks / ours_blocks
        );
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if cpu_clock() {
        println!("(times are the thread's CPU time)");
    }
    if paths.is_empty() {
        let mb = std::env::var("INFLATE_BENCH_MB")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(100);
        bench("generated", &generate(mb * 1_000_000));
    }
    for path in paths {
        let data = std::fs::read(&path)?;
        bench(&path, &data);
    }
    Ok(())
}
