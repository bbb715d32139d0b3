//! Read-path throughput: framing with both CRCs, `ExampleRef::parse`, and a
//! visit of every value of every feature into caller-owned buffers, over
//! generated TFRecord files of tf.Examples (BERT-like and image-like), beside
//! the memory-bandwidth floor (summing the same bytes).
//!
//! Run: `cargo bench --bench read`. Each benchmark asserts the count of what
//! it decoded, so one that stops working fails instead of getting faster.

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use recordwire::frame::{records, write_tfrecord_frame, Framing, ReadOptions};
use recordwire::view::{ExampleRef, ListRef};
use recordwire::wire::encode_varint;

/// A deterministic xorshift generator, so the corpus is the same every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn len_field(out: &mut Vec<u8>, field: u32, body: &[u8]) {
    encode_varint(((field as u64) << 3) | 2, out);
    encode_varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

enum V {
    Bytes(Vec<Vec<u8>>),
    Float(Vec<f32>),
    Int(Vec<i64>),
}

fn example(features: &[(&str, V)]) -> Vec<u8> {
    let mut map = Vec::new();
    for (name, v) in features {
        let (field, list) = match v {
            V::Bytes(b) => {
                let mut l = Vec::new();
                for x in b {
                    len_field(&mut l, 1, x);
                }
                (1, l)
            }
            V::Float(f) => {
                let mut packed = Vec::new();
                for x in f {
                    packed.extend_from_slice(&x.to_le_bytes());
                }
                let mut l = Vec::new();
                len_field(&mut l, 1, &packed);
                (2, l)
            }
            V::Int(i) => {
                let mut packed = Vec::new();
                for &x in i {
                    encode_varint(x as u64, &mut packed);
                }
                let mut l = Vec::new();
                len_field(&mut l, 1, &packed);
                (3, l)
            }
        };
        let mut feature = Vec::new();
        len_field(&mut feature, field, &list);
        let mut entry = Vec::new();
        len_field(&mut entry, 1, name.as_bytes());
        len_field(&mut entry, 2, &feature);
        len_field(&mut map, 1, &entry);
    }
    let mut ex = Vec::new();
    len_field(&mut ex, 1, &map);
    ex
}

fn bert(rng: &mut Rng) -> Vec<u8> {
    let ids = |rng: &mut Rng, n: usize, m: u64| (0..n).map(|_| (rng.next() % m) as i64).collect();
    example(&[
        ("input_ids", V::Int(ids(rng, 128, 30522))),
        ("input_mask", V::Int(ids(rng, 128, 2))),
        ("segment_ids", V::Int(ids(rng, 128, 2))),
        ("masked_lm_positions", V::Int(ids(rng, 20, 128))),
        ("masked_lm_ids", V::Int(ids(rng, 20, 30522))),
        (
            "masked_lm_weights",
            V::Float((0..20).map(|i| (i % 2) as f32).collect()),
        ),
        ("next_sentence_labels", V::Int(ids(rng, 1, 2))),
    ])
}

fn image(rng: &mut Rng) -> Vec<u8> {
    let img: Vec<u8> = (0..100_000).map(|_| rng.next() as u8).collect();
    let mut f: Vec<(&str, V)> = vec![
        ("image/encoded", V::Bytes(vec![img])),
        ("image/format", V::Bytes(vec![b"jpeg".to_vec()])),
        (
            "image/class/label",
            V::Int(vec![(rng.next() % 1000) as i64]),
        ),
        ("image/height", V::Int(vec![224])),
        ("image/width", V::Int(vec![224])),
    ];
    for name in ["xmin", "xmax", "ymin", "ymax"] {
        let v = (0..4)
            .map(|_| (rng.next() % 1000) as f32 / 1000.0)
            .collect();
        f.push((
            match name {
                "xmin" => "image/object/bbox/xmin",
                "xmax" => "image/object/bbox/xmax",
                "ymin" => "image/object/bbox/ymin",
                _ => "image/object/bbox/ymax",
            },
            V::Float(v),
        ));
    }
    f.push((
        "image/filename",
        V::Bytes(vec![b"n01440764_10026.JPEG".to_vec()]),
    ));
    f.push(("image/synset", V::Bytes(vec![b"n01440764".to_vec()])));
    f.push(("image/object/bbox/label", V::Int(vec![1, 2, 3, 4])));
    example(&f)
}

fn file(n: usize, make: fn(&mut Rng) -> Vec<u8>) -> Vec<u8> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    for _ in 0..n {
        write_tfrecord_frame(&mut out, &make(&mut rng));
    }
    out
}

/// Frames with both CRCs, parses each Example, visits every value into
/// caller-owned buffers. Returns (records, values) for the count assertion.
fn read_all(buf: &[u8], ints: &mut [i64], floats: &mut [f32]) -> (usize, usize) {
    let (mut n, mut values) = (0, 0);
    for r in records(buf, Framing::TfRecord, ReadOptions::default()) {
        let r = r.expect("valid frame");
        let ex = ExampleRef::parse(r.data, r.data_offset).expect("valid example");
        for f in ex.features().iter() {
            let f = f.expect("valid feature");
            match f.feature.list().expect("valid list") {
                Some(ListRef::Int64(l)) => values += l.copy_to_slice(ints).expect("ints"),
                Some(ListRef::Float(l)) => values += l.copy_to_slice(floats).expect("floats"),
                Some(ListRef::Bytes(l)) => {
                    for b in l.iter() {
                        black_box(b.expect("bytes"));
                        values += 1;
                    }
                }
                Some(_) | None => {}
            }
        }
        n += 1;
    }
    (n, values)
}

/// The memory-bandwidth floor: touch every byte once (sum as u64 words).
fn sum_bytes(buf: &[u8]) -> u64 {
    let mut s = 0u64;
    let chunks = buf.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        s = s.wrapping_add(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
    }
    for &b in rest {
        s = s.wrapping_add(b as u64);
    }
    s
}

fn bench(c: &mut Criterion) {
    for (name, n, make, per_record) in [
        (
            "bert",
            20_000usize,
            bert as fn(&mut Rng) -> Vec<u8>,
            445usize,
        ),
        ("image", 200, image as fn(&mut Rng) -> Vec<u8>, 27),
    ] {
        let buf = file(n, make);
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Bytes(buf.len() as u64));
        g.sample_size(20);
        let mut ints = vec![0i64; 4096];
        let mut floats = vec![0f32; 4096];
        g.bench_function("recordwire_read_all_crc", |b| {
            b.iter(|| {
                let (records, values) = read_all(&buf, &mut ints, &mut floats);
                assert_eq!(records, n);
                assert_eq!(values, n * per_record);
            })
        });
        g.bench_function("framing_crc_only", |b| {
            b.iter(|| {
                let mut k = 0;
                for r in records(&buf, Framing::TfRecord, ReadOptions::default()) {
                    black_box(r.expect("frame").data.len());
                    k += 1;
                }
                assert_eq!(k, n);
            })
        });
        g.bench_function("memory_bandwidth_floor", |b| {
            b.iter(|| black_box(sum_bytes(black_box(&buf))))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
