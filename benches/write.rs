//! Write-path throughput: encoding owned tf.Examples (BERT-like and
//! image-like) and framing them as TFRecord with both CRCs into memory, beside
//! the memory-bandwidth floor (copying the same bytes).
//!
//! Run: `cargo bench --manifest-path benches/Cargo.toml --bench write`. Each benchmark asserts the size of what
//! it wrote.

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use recordwire::encode::{Example, Feature, Features, RecordWriter, WriterOptions};
use recordwire::frame::Framing;
use std::hint::black_box;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn bert(rng: &mut Rng) -> Example {
    let mut ids = |n: usize, m: u64| (0..n).map(|_| (rng.next() % m) as i64).collect::<Vec<_>>();
    let mut f = Features::new();
    f.insert("input_ids", Feature::Int64(ids(128, 30522)));
    f.insert("input_mask", Feature::Int64(ids(128, 2)));
    f.insert("segment_ids", Feature::Int64(ids(128, 2)));
    f.insert("masked_lm_positions", Feature::Int64(ids(20, 128)));
    f.insert("masked_lm_ids", Feature::Int64(ids(20, 30522)));
    f.insert(
        "masked_lm_weights",
        Feature::Float((0..20).map(|i| (i % 2) as f32).collect()),
    );
    f.insert("next_sentence_labels", Feature::Int64(ids(1, 2)));
    Example::with_features(f)
}

fn image(rng: &mut Rng) -> Example {
    let mut f = Features::new();
    f.insert(
        "image/encoded",
        Feature::Bytes(vec![(0..100_000).map(|_| rng.next() as u8).collect()]),
    );
    f.insert("image/format", Feature::Bytes(vec![b"jpeg".to_vec()]));
    f.insert(
        "image/class/label",
        Feature::Int64(vec![(rng.next() % 1000) as i64]),
    );
    f.insert("image/height", Feature::Int64(vec![224]));
    f.insert("image/width", Feature::Int64(vec![224]));
    for k in ["xmin", "xmax", "ymin", "ymax"] {
        f.insert(
            format!("image/object/bbox/{k}"),
            Feature::Float(vec![0.1, 0.2, 0.3, 0.4]),
        );
    }
    Example::with_features(f)
}

fn bench(c: &mut Criterion) {
    for (name, n, make) in [
        ("bert", 20_000usize, bert as fn(&mut Rng) -> Example),
        ("image", 200, image as fn(&mut Rng) -> Example),
    ] {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let examples: Vec<Example> = (0..n).map(|_| make(&mut rng)).collect();
        let total: usize = examples
            .iter()
            .map(|e| e.encoded_len().unwrap_or(0) + 16)
            .sum();
        let mut g = c.benchmark_group(format!("write_{name}"));
        g.throughput(Throughput::Bytes(total as u64));
        g.sample_size(20);
        g.bench_function("encode_and_frame_tfrecord_crc", |b| {
            let mut scratch = Vec::new();
            b.iter(|| {
                let mut w = RecordWriter::new(
                    Vec::with_capacity(total),
                    WriterOptions::new(Framing::TfRecord),
                );
                for e in &examples {
                    scratch.clear();
                    e.encode_to(&mut scratch).expect("encodable");
                    w.write_record(&scratch).expect("in memory");
                }
                let out = w.finish().expect("in memory");
                assert_eq!(out.len(), total);
                black_box(out)
            })
        });
        let flat = vec![1u8; total];
        g.bench_function("memory_bandwidth_floor_copy", |b| {
            b.iter(|| {
                let v = black_box(&flat).to_vec();
                assert_eq!(v.len(), total);
                black_box(v)
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
