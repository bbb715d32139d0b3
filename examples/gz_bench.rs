//! Random access into a GZIP record file, for BENCHMARKS.md: the time to
//! build its checkpoint index against one streaming pass, `get` latency for
//! several checkpoint spacings with the index size of each, and epochs.
//!
//! ```text
//! cargo run --release --example gz_bench -- FILE.gz [SPACING...]
//! ```
//!
//! Prints, for the file:
//! - `stream`: one streaming pass (flate2 inflate, framing, both CRCs), the
//!   median of 3;
//! - per spacing (default 64 KiB, 256 KiB, 1 MiB, 4 MiB): the build time
//!   (median of 3, data CRCs checked, as the streaming pass does), its ratio
//!   to the streaming pass, the index size (bytes and % of the compressed
//!   file), and `get` p50/p99 over 2 000 random ids with one cache (µs);
//! - epochs with the default spacing: every record in file order through
//!   `get` (one cache), in page-aware shuffled orders whose pages are 1 MiB of
//!   the decompressed stream or the checkpoint spans (page size 0: each span
//!   inflated once), and, for contrast, 5 000 ids of a full shuffle (per
//!   record, extrapolated).

use std::hint::black_box;
use std::time::Instant;

use bytes::Bytes;
use recordwire::frame::{Framing, ReadOptions};
use recordwire::index::{GzCache, GzIndex, DEFAULT_SPACING};
use recordwire::io::{Compression, OpenOptions, Source};
use recordwire::order::{Mode, OrderSpec};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: gz_bench FILE.gz [SPACING...]")?;
    let spacings: Vec<u64> = if args.len() > 2 {
        args[2..]
            .iter()
            .map(|s| s.parse())
            .collect::<Result<_, _>>()?
    } else {
        vec![64 << 10, 256 << 10, 1 << 20, 4 << 20]
    };
    let data = Bytes::from(std::fs::read(path)?);
    let compression = if data.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else {
        Compression::Zlib
    };

    let mut stream = Vec::new();
    let mut n = 0u64;
    for _ in 0..3 {
        let t = Instant::now();
        let mut source = Source::open(path, &OpenOptions::default())?;
        n = 0;
        while let Some(r) = source.next_record() {
            black_box(r?.data.len());
            n += 1;
        }
        stream.push(t.elapsed().as_secs_f64());
    }
    let stream = median(stream);
    println!(
        "{path}: {} compressed bytes, {n} records; streaming pass {:.3} s",
        data.len(),
        stream
    );

    let opts = ReadOptions::default();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    println!(
        "spacing  build_s  vs_stream  index_bytes  index_%  get_p50_us  get_p99_us  checkpoints"
    );
    for &spacing in &spacings {
        let mut builds = Vec::new();
        let mut index = None;
        for _ in 0..3 {
            let t = Instant::now();
            let built = GzIndex::build(&data, compression, Framing::TfRecord, spacing, true)?;
            builds.push(t.elapsed().as_secs_f64());
            index = Some(built);
        }
        let index = index.ok_or("no build")?;
        let build = median(builds);
        let mut cache = GzCache::new();
        let mut lat: Vec<f64> = (0..2000)
            .map(|_| {
                let id = next() % n;
                let t = Instant::now();
                let r = index.get(&data, id, &opts, &mut cache);
                black_box(r.map(|r| r.map(|r| r.data.len())).ok());
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        lat.sort_by(f64::total_cmp);
        println!(
            "{:>7}  {:7.3}  {:9.2}  {:11}  {:7.3}  {:10.1}  {:10.1}  {}",
            spacing,
            build,
            build / stream,
            index.native_len(),
            100.0 * index.native_len() as f64 / data.len() as f64,
            lat[lat.len() / 2],
            lat[lat.len() * 99 / 100],
            index.checkpoints().len()
        );
    }

    let index = GzIndex::build(
        &data,
        compression,
        Framing::TfRecord,
        DEFAULT_SPACING,
        false,
    )?;
    let epoch = |ids: &mut dyn Iterator<Item = u64>| -> Result<(f64, u64, u64), recordwire::Error> {
        let mut cache = GzCache::new();
        let t = Instant::now();
        let mut k = 0;
        for id in ids {
            black_box(
                index
                    .get(&data, id, &opts, &mut cache)?
                    .map(|r| r.data.len()),
            );
            k += 1;
        }
        Ok((t.elapsed().as_secs_f64(), k, cache.restarts()))
    };
    let (secs, k, restarts) = epoch(&mut (0..n))?;
    println!(
        "epoch in file order through get: {secs:.3} s ({:.2}x the streaming pass), {k} records, {restarts} restarts",
        secs / stream
    );
    for (what, page) in [("pages of 1 MiB", DEFAULT_SPACING), ("checkpoint spans", 0)] {
        let order = index.order(OrderSpec {
            mode: Mode::PageAware { page_size: page },
            seed: 7,
            ..OrderSpec::default()
        })?;
        let ids: Vec<u64> = order.epoch(0).iter().collect();
        let (secs, k, restarts) = epoch(&mut ids.iter().copied())?;
        println!(
            "epoch page-aware shuffled ({what}): {secs:.3} s ({:.2}x the streaming pass), {k} records, {restarts} restarts",
            secs / stream
        );
    }
    let shuffled: Vec<u64> = (0..5000).map(|_| next() % n).collect();
    let (secs, k, restarts) = epoch(&mut shuffled.iter().copied())?;
    let per = secs / k as f64;
    println!(
        "full shuffle: {:.1} us per record, {restarts} restarts in {k}; an epoch would take {:.1} s ({:.0}x the streaming pass)",
        per * 1e6,
        per * n as f64,
        per * n as f64 / stream
    );
    Ok(())
}
