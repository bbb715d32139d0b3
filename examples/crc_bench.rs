//! CRC32C kernels against the `crc32c` crate: one pass over a whole file,
//! and per record (the data of every frame), medians of 15 rounds.
//!
//! ```sh
//! cargo run --release --example gen_corpus -- /tmp/corpus
//! cargo run --release --example crc_bench -- /tmp/corpus/bert.tfrecord
//! RECORDWIRE_NO_SIMD=1 cargo run --release --example crc_bench -- /tmp/corpus/bert.tfrecord
//! ```

use std::hint::black_box;
use std::time::Instant;

use recordwire::__internals::arch;
use recordwire::frame::{records, Framing, ReadOptions};

fn median(mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..15)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[7]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: crc_bench FILE")?;
    let buf = std::fs::read(&path)?;
    let opts = ReadOptions {
        check_data_crc: false,
        ..ReadOptions::default()
    };
    let datas: Vec<&[u8]> = records(&buf, Framing::TfRecord, opts)
        .map(|r| r.map(|r| r.data))
        .collect::<Result<_, _>>()?;
    let mb = buf.len() as f64 / 1e6;
    println!(
        "{path}: {} records, {mb:.1} MB, kernels {:?}",
        datas.len(),
        arch::level()
    );
    let whole_crate = median(|| {
        black_box(crc32c::crc32c(black_box(&buf)));
    });
    let whole_arch = median(|| {
        black_box(arch::crc32c(0, black_box(&buf)));
    });
    let per_crate = median(|| {
        for r in &datas {
            black_box(crc32c::crc32c(black_box(r)));
        }
    });
    let per_arch = median(|| {
        for r in &datas {
            black_box(arch::crc32c(0, black_box(r)));
        }
    });
    let framing = median(|| {
        for r in records(&buf, Framing::TfRecord, ReadOptions::default()) {
            black_box(r.map(|r| r.data.len()).unwrap_or(0));
        }
    });
    for (name, t) in [
        ("whole file, crc32c crate", whole_crate),
        ("whole file, recordwire::arch", whole_arch),
        ("per record, crc32c crate", per_crate),
        ("per record, recordwire::arch", per_arch),
        ("framing + both CRCs (records)", framing),
    ] {
        println!(
            "{name:32} {:8.3} ms {:6.2} GB/s  {:5.2}x the crate's whole-file pass",
            t * 1e3,
            mb / t / 1e3,
            whole_crate / t
        );
    }
    Ok(())
}
