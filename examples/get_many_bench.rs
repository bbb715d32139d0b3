//! Random reads of a large record file through the index, warm page cache,
//! for BENCHMARKS.md: `get` one id at a time, the same ids sorted by offset
//! and read one at a time (what `get_many` did before it prefetched), and
//! `get_many` (sorted, the frames a window ahead prefetched) on batches of
//! BATCH ids, each record followed by one feature lookup, plus one random
//! 64-byte read per id as the floor.
//!
//! ```text
//! cargo run --release --example get_many_bench -- FILE [IDS] [ROUNDS] [BATCH]
//! ```
//!
//! Prints the median over ROUNDS (default 7) of the nanoseconds per id.

use std::hint::black_box;
use std::time::Instant;

use recordwire::frame::ReadOptions;
use recordwire::index::Index;
use recordwire::io::{OpenOptions, RecordFile};
use recordwire::view::ExampleRef;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: get_many_bench FILE [IDS] [ROUNDS]")?;
    let n_ids: usize = args.get(2).map_or(Ok(100_000), |s| s.parse())?;
    let rounds: usize = args.get(3).map_or(Ok(7), |s| s.parse())?;
    let batch: usize = args.get(4).map_or(Ok(256), |s| s.parse())?;
    let file = RecordFile::open(path, &OpenOptions::default())?;
    let data = file.bytes();
    let index = Index::build(data, file.framing(), true)?;
    let n = index.len();
    let opts = ReadOptions::default();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let lookup = |data: &[u8], base: u64| {
        let ex = ExampleRef::new(data, base);
        let f = ex.get("input_ids").ok().flatten();
        f.map_or(0, |f| {
            f.list().ok().flatten().map_or(0, |l| l.len().unwrap_or(0))
        })
    };
    let (mut one, mut sorted, mut many, mut floor) = (vec![], vec![], vec![], vec![]);
    let mut scratch = Vec::new();
    for _ in 0..rounds {
        let ids: Vec<u64> = (0..n_ids).map(|_| next() % n).collect();
        let offsets: Vec<usize> = (0..n_ids)
            .map(|_| (next() % (data.len() as u64 - 64)) as usize)
            .collect();
        let t = Instant::now();
        let mut s = 0;
        for &id in &ids {
            let r = index.get(data, id, &opts)?.ok_or("id")?;
            s += lookup(r.data, r.data_offset);
        }
        one.push(t.elapsed().as_nanos() as f64 / n_ids as f64);
        black_box(s);

        let ids: Vec<u64> = (0..n_ids).map(|_| next() % n).collect();
        let t = Instant::now();
        let mut s = 0;
        let mut order: Vec<u64> = Vec::with_capacity(batch);
        for chunk in ids.chunks(batch) {
            order.clear();
            order.extend_from_slice(chunk);
            order.sort_unstable_by_key(|&id| index.frame_range(id).map(|r| r.start));
            for &id in &order {
                let r = index.get(data, id, &opts)?.ok_or("id")?;
                s += lookup(r.data, r.data_offset);
            }
        }
        sorted.push(t.elapsed().as_nanos() as f64 / n_ids as f64);
        black_box(s);

        let ids: Vec<u64> = (0..n_ids).map(|_| next() % n).collect();
        let t = Instant::now();
        let mut s = 0;
        for chunk in ids.chunks(batch) {
            index.get_many(data, chunk, &opts, &mut scratch, |_, r| {
                if let Some(r) = r {
                    s += lookup(r.data, r.data_offset);
                }
            })?;
        }
        many.push(t.elapsed().as_nanos() as f64 / n_ids as f64);
        black_box(s);

        let t = Instant::now();
        let mut s = 0u64;
        for &o in &offsets {
            s = s.wrapping_add(u64::from(data[o]) ^ u64::from(data[o + 63]));
        }
        floor.push(t.elapsed().as_nanos() as f64 / n_ids as f64);
        black_box(s);
    }
    let floor = median(floor);
    for (name, v) in [
        ("get, one at a time", one),
        ("get, sorted by offset", sorted),
        ("get_many", many),
    ] {
        let m = median(v);
        println!("{name:24} {m:8.1} ns/id  {:5.2}x the floor", m / floor);
    }
    println!("{:24} {floor:8.1} ns/id", "random 64-byte read");
    Ok(())
}
