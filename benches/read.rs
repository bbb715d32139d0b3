//! Read-path throughput of recordwire beside its peers, in one run, over the
//! seeded corpora of `benches/common/corpus.rs` (BERT-like, ImageNet-like
//! and CTR-like tf.Examples in TFRecord files held in memory).
//!
//! Groups, per corpus (`bert/...`, `image/...`, `ctr/...`):
//! - `framing`: frames with both CRCs checked — recordwire, the `tfrecord`
//!   crate (`check_integrity: true`), and two floors over the same bytes:
//!   `crc32c` (one CRC32C pass) and `memory` (summing every byte);
//! - `decode`: framing with both CRCs, then every value of every feature into
//!   caller-owned buffers — recordwire (`ExampleRef::parse`, validated as
//!   Google's parser does, then the visit), recordwire_lazy (`ExampleRef::new`
//!   and the visit, which checks what it reads, names as UTF-8 included),
//!   prost owned and with `Bytes` fields, quick-protobuf
//!   (borrowed, as `pb-rs` generates), the `tfrecord` crate; peers decode
//!   payloads framed by recordwire's framing, except the `tfrecord` crate,
//!   which frames itself;
//! - `lookup2`: framing with CRCs, then two features by name with their values
//!   (recordwire lazily, the peers by decoding the whole message);
//! - `get`: random access to 1 000 pseudo-random ids through the index, with
//!   the frame CRC and one feature lookup, beside one random 64-byte read of
//!   the same bytes per id;
//! - `wide/N` (the feature-count sweep, N = 8 … 1024): records of N one-value
//!   int64 features, every value visited as in `decode` — recordwire
//!   validated and lazy, prost owned, quick-protobuf — with about 130 000
//!   features per iteration at every N, so the medians divide into ns per
//!   record (`benches/report.py` prints them);
//! - `yt8m/decode`: YouTube-8M-like tf.SequenceExamples (context `id` and
//!   `labels`; feature lists `rgb` and `audio`, one bytes value per frame,
//!   60–300 frames), every context value and every frame visited, framing
//!   and both CRCs included — recordwire validated (`SequenceExampleRef::parse`)
//!   and lazy (`new`, names checked as UTF-8), prost owned, quick-protobuf;
//! - `micro`: single fast paths against what they replaced, in the same run
//!   (varint lists byte by byte vs a word at a time; the length CRC through
//!   the crate's call vs the inline table).
//!
//! Run: `cargo bench --manifest-path benches/Cargo.toml --bench read`; `python3 benches/report.py` then prints
//! the table of medians and ratios that BENCHMARKS.md quotes. Every benchmark
//! asserts the count of what it decoded, so one that stops working fails
//! instead of getting faster.

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

#[path = "common/corpus.rs"]
mod corpus;
#[path = "common/peers.rs"]
mod peers;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use prost::Message;
use recordwire::__internals::arch;
use recordwire::frame::{records, Framing, ReadOptions, Record};
use recordwire::index::Index;
use recordwire::view::{ExampleRef, FeatureRef, ListRef, SequenceExampleRef};
use std::hint::black_box;
use std::io::Cursor;

fn frames(buf: &[u8]) -> impl Iterator<Item = Record<'_>> {
    records(buf, Framing::TfRecord, ReadOptions::default()).map(|r| r.expect("valid frame"))
}

/// Caller-owned buffers every decoder copies numeric values into.
struct Sink {
    ints: Vec<i64>,
    floats: Vec<f32>,
}

impl Sink {
    fn new() -> Self {
        Sink {
            ints: vec![0; 4096],
            floats: vec![0.0; 4096],
        }
    }
    fn ints(&mut self, v: &[i64]) -> usize {
        self.ints[..v.len()].copy_from_slice(v);
        v.len()
    }
    fn floats(&mut self, v: &[f32]) -> usize {
        self.floats[..v.len()].copy_from_slice(v);
        v.len()
    }
    fn bytes<B: AsRef<[u8]>>(&mut self, v: &[B]) -> usize {
        for b in v {
            black_box(b.as_ref());
        }
        v.len()
    }

    /// Every value of one recordwire feature.
    fn feature(&mut self, f: &FeatureRef<'_>) -> usize {
        match f.list().expect("valid list") {
            Some(ListRef::Int64(l)) => l.copy_to_slice(&mut self.ints).expect("ints"),
            Some(ListRef::Float(l)) => l.copy_to_slice(&mut self.floats).expect("floats"),
            Some(ListRef::Bytes(l)) => {
                let mut n = 0;
                for b in l.iter() {
                    black_box(b.expect("bytes"));
                    n += 1;
                }
                n
            }
            Some(_) | None => 0,
        }
    }
}

/// Every value of one peer feature (prost's and the `tfrecord` crate's
/// `Option<Kind>` share the shape) into the sink.
macro_rules! peer_values {
    ($sink:expr, $kind:expr, $Kind:path) => {{
        use $Kind as K;
        match $kind {
            Some(K::Int64List(l)) => $sink.ints(&l.value),
            Some(K::FloatList(l)) => $sink.floats(&l.value),
            Some(K::BytesList(l)) => $sink.bytes(&l.value),
            None => 0,
        }
    }};
}

/// recordwire: frames, `parse`, every value. Returns (records, values).
fn recordwire_decode(buf: &[u8], sink: &mut Sink) -> (usize, usize) {
    let (mut n, mut values) = (0, 0);
    for r in frames(buf) {
        let ex = ExampleRef::parse(r.data, r.data_offset).expect("valid example");
        for f in ex.features().iter() {
            values += sink.feature(&f.expect("valid feature").feature);
        }
        n += 1;
    }
    (n, values)
}

/// recordwire without the separate validation pass: `ExampleRef::new`, then
/// every value (which reads every field of every feature, so malformed
/// bytes still fail) and each name checked as UTF-8 as prost's `String`
/// keys are. Only what the visit never touches goes unchecked (oneof
/// members a later member replaces).
fn recordwire_decode_lazy(buf: &[u8], sink: &mut Sink) -> (usize, usize) {
    let (mut n, mut values) = (0, 0);
    for r in frames(buf) {
        let ex = ExampleRef::new(r.data, r.data_offset);
        for f in ex.features().iter() {
            let f = f.expect("valid feature");
            black_box(f.entry.name_str().expect("UTF-8 name"));
            values += sink.feature(&f.feature);
        }
        n += 1;
    }
    (n, values)
}

fn prost_owned_values(ex: &peers::prost_owned::Example, sink: &mut Sink) -> usize {
    let mut values = 0;
    for f in ex.features.as_ref().expect("features").feature.values() {
        values += peer_values!(sink, &f.kind, peers::prost_owned::Kind);
    }
    values
}

fn prost_owned_decode(buf: &[u8], sink: &mut Sink) -> (usize, usize) {
    let (mut n, mut values) = (0, 0);
    for r in frames(buf) {
        let ex = peers::prost_owned::Example::decode(r.data).expect("prost");
        values += prost_owned_values(&ex, sink);
        n += 1;
    }
    (n, values)
}

fn prost_bytes_decode(file: &Bytes, sink: &mut Sink) -> (usize, usize) {
    use peers::prost_bytes::Example;
    let (mut n, mut values) = (0, 0);
    for r in frames(file) {
        let start = r.data_offset as usize;
        let ex = Example::decode(file.slice(start..start + r.data.len())).expect("prost");
        for f in ex.features.as_ref().expect("features").feature.values() {
            values += peer_values!(sink, &f.kind, peers::prost_bytes::Kind);
        }
        n += 1;
    }
    (n, values)
}

fn quick_values(ex: &peers::quick::Example<'_>, sink: &mut Sink) -> usize {
    use peers::quick::Kind;
    let mut values = 0;
    for f in ex.features.as_ref().expect("features").feature.values() {
        values += match &f.kind {
            Kind::Int64List(l) => sink.ints(&l.value),
            Kind::FloatList(l) => sink.floats(&l.value),
            Kind::BytesList(l) => sink.bytes(&l.value),
            Kind::None => 0,
        };
    }
    values
}

fn quick_decode(buf: &[u8], sink: &mut Sink) -> (usize, usize) {
    let (mut n, mut values) = (0, 0);
    for r in frames(buf) {
        let ex = peers::quick::decode(r.data).expect("quick-protobuf");
        values += quick_values(&ex, sink);
        n += 1;
    }
    (n, values)
}

fn tfrecord_crate_decode(buf: &[u8], sink: &mut Sink) -> (usize, usize) {
    let config = tfrecord::RecordReaderConfig {
        check_integrity: true,
    };
    let (mut n, mut values) = (0, 0);
    for ex in tfrecord::ExampleIter::from_reader(Cursor::new(buf), config) {
        let ex = ex.expect("tfrecord crate");
        for f in ex.features.as_ref().expect("features").feature.values() {
            values += peer_values!(sink, &f.kind, tfrecord::protobuf::feature::Kind);
        }
        n += 1;
    }
    (n, values)
}

/// recordwire on SequenceExamples: frames, `parse` (or `new` when `lazy`,
/// with each name checked as UTF-8), every context value and every value of
/// every frame of every feature list. Returns (records, values).
fn recordwire_sequence(buf: &[u8], sink: &mut Sink, lazy: bool) -> (usize, usize) {
    let (mut n, mut values) = (0, 0);
    for r in frames(buf) {
        let ex = if lazy {
            SequenceExampleRef::new(r.data, r.data_offset)
        } else {
            SequenceExampleRef::parse(r.data, r.data_offset).expect("valid sequence example")
        };
        for f in ex.context().iter() {
            let f = f.expect("valid feature");
            if lazy {
                black_box(f.entry.name_str().expect("UTF-8 name"));
            }
            values += sink.feature(&f.feature);
        }
        for l in ex.feature_lists().iter() {
            let l = l.expect("valid feature list");
            if lazy {
                black_box(l.entry.name_str().expect("UTF-8 name"));
            }
            for f in l.list.iter() {
                values += sink.feature(&f.expect("valid frame"));
            }
        }
        n += 1;
    }
    (n, values)
}

fn prost_sequence(buf: &[u8], sink: &mut Sink) -> (usize, usize) {
    use peers::prost_owned::{Kind, SequenceExample};
    let (mut n, mut values) = (0, 0);
    for r in frames(buf) {
        let ex = SequenceExample::decode(r.data).expect("prost");
        for f in ex.context.as_ref().expect("context").feature.values() {
            values += peer_values!(sink, &f.kind, Kind);
        }
        let lists = ex.feature_lists.as_ref().expect("feature lists");
        for l in lists.feature_list.values() {
            for f in &l.feature {
                values += peer_values!(sink, &f.kind, Kind);
            }
        }
        n += 1;
    }
    (n, values)
}

fn quick_feature(f: &peers::quick::Feature<'_>, sink: &mut Sink) -> usize {
    use peers::quick::Kind;
    match &f.kind {
        Kind::Int64List(l) => sink.ints(&l.value),
        Kind::FloatList(l) => sink.floats(&l.value),
        Kind::BytesList(l) => sink.bytes(&l.value),
        Kind::None => 0,
    }
}

fn quick_sequence(buf: &[u8], sink: &mut Sink) -> (usize, usize) {
    let (mut n, mut values) = (0, 0);
    for r in frames(buf) {
        let ex = peers::quick::decode_sequence(r.data).expect("quick-protobuf");
        for f in ex.context.as_ref().expect("context").feature.values() {
            values += quick_feature(f, sink);
        }
        let lists = ex.feature_lists.as_ref().expect("feature lists");
        for l in lists.feature_list.values() {
            for f in &l.feature {
                values += quick_feature(f, sink);
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

/// The byte-at-a-time varint loop the word-at-a-time decoder replaced (one
/// branch per byte), for the `micro` group's before/after.
fn bytewise_varints(mut bytes: &[u8], out: &mut [i64]) -> usize {
    let mut n = 0;
    while !bytes.is_empty() {
        let mut v = 0u64;
        let mut i = 0;
        loop {
            let b = bytes[i];
            v |= ((b & 0x7f) as u64) << (7 * i);
            i += 1;
            if b < 0x80 {
                break;
            }
        }
        out[n] = v as i64;
        n += 1;
        bytes = &bytes[i..];
    }
    n
}

/// Before/after of single fast paths, on the BERT corpus's own values:
/// packed varint lists decoded byte by byte versus recordwire's word-at-a-time
/// decoder (`copy_to_slice` on each record's `input_ids` and `input_mask`
/// Feature), and the 8-byte length CRC through the `crc32c` crate's call
/// versus the inline slicing-by-8 table.
fn micro(c: &mut Criterion) {
    use recordwire::frame::{masked_crc32c, masked_crc32c_u64};
    use recordwire::view::Schema;
    let corpus = &corpus::CORPORA[0];
    let file = corpus.file(corpus.records);
    // The packed runs of two int64 features per record (one run each).
    let mut packed: Vec<&[u8]> = Vec::new();
    for r in frames(&file) {
        let ex = ExampleRef::parse(r.data, r.data_offset).expect("valid");
        for name in ["input_ids", "input_mask"] {
            let f = ex.get(name).expect("valid").expect("present");
            let l = f.int64_list().expect("valid").expect("int64");
            packed.push(l.packed_bytes().expect("valid").expect("one run"));
        }
    }
    // Each as a standalone Feature { int64_list { value: packed } }.
    let owned: Vec<Vec<u8>> = packed
        .iter()
        .map(|run| {
            let mut list = vec![0x0a];
            recordwire::wire::encode_varint(run.len() as u64, &mut list);
            list.extend_from_slice(run);
            let mut f = vec![0x1a];
            recordwire::wire::encode_varint(list.len() as u64, &mut f);
            f.extend_from_slice(&list);
            f
        })
        .collect();
    let values = owned.len() * 128;
    let mut out = vec![0i64; 256];
    let mut g = c.benchmark_group("micro");
    g.sample_size(20);
    g.throughput(Throughput::Elements(values as u64));
    g.bench_function("varint_bytewise", |b| {
        b.iter(|| {
            let n: usize = packed.iter().map(|p| bytewise_varints(p, &mut out)).sum();
            assert_eq!(n, values);
        })
    });
    // The word loop alone, over the same runs: the scalar twin (compaction
    // by shifts and masks) against the dispatched kernel (BMI2 `pext` where
    // the CPU has it).
    g.bench_function("varint_kernel_scalar", |b| {
        b.iter(|| {
            let mut n = 0;
            for p in &packed {
                let mut k = 0;
                n += arch::scalar::varint_words(p, &mut |v| {
                    out[k & 255] = v as i64;
                    k += 1;
                })
                .1;
            }
            black_box(n)
        })
    });
    g.bench_function("varint_kernel_dispatched", |b| {
        b.iter(|| {
            let mut n = 0;
            for p in &packed {
                let mut k = 0;
                n += arch::varint_words(p, &mut |v| {
                    out[k & 255] = v as i64;
                    k += 1;
                })
                .1;
            }
            black_box(n)
        })
    });
    g.bench_function("varint_words_recordwire", |b| {
        b.iter(|| {
            let mut n = 0;
            for f in &owned {
                let f = FeatureRef::new(f, 0, 0, Schema::TensorFlow);
                let l = f.int64_list().expect("valid").expect("int64");
                n += l.copy_to_slice(&mut out).expect("ints");
            }
            assert_eq!(n, values);
        })
    });
    let headers: Vec<[u8; 8]> = frames(&file)
        .map(|r| (r.data.len() as u64).to_le_bytes())
        .collect();
    g.throughput(Throughput::Elements(headers.len() as u64));
    g.bench_function("length_crc_crate_call", |b| {
        b.iter(|| {
            let mut x = 0u32;
            for h in &headers {
                x ^= masked_crc32c(black_box(h));
            }
            black_box(x)
        })
    });
    g.bench_function("length_crc_inline_table", |b| {
        b.iter(|| {
            let mut x = 0u32;
            for h in &headers {
                x ^= masked_crc32c_u64(black_box(*h));
            }
            black_box(x)
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    for corpus in &corpus::CORPORA {
        let n = corpus.records;
        let per_record = corpus.values_per_record;
        let file = Bytes::from(corpus.file(n));
        let buf: &[u8] = &file;
        let (a, b) = match corpus.name {
            "bert" => ("input_ids", "masked_lm_ids"),
            "ctr" => ("C7", "I3"),
            _ => ("image/encoded", "image/class/label"),
        };
        let lookup_values = match corpus.name {
            "bert" => 148,
            _ => 2,
        };
        let mut sink = Sink::new();

        let mut g = c.benchmark_group(format!("{}/framing", corpus.name));
        g.throughput(Throughput::Bytes(buf.len() as u64));
        g.sample_size(20);
        g.bench_function("recordwire", |bch| {
            bch.iter(|| {
                let mut k = 0;
                for r in frames(buf) {
                    black_box(r.data.len());
                    k += 1;
                }
                assert_eq!(k, n);
            })
        });
        g.bench_function("tfrecord_crate", |bch| {
            let config = tfrecord::RecordReaderConfig {
                check_integrity: true,
            };
            bch.iter(|| {
                let mut k = 0;
                for r in tfrecord::BytesIter::from_reader(Cursor::new(buf), config.clone()) {
                    black_box(r.expect("tfrecord crate").len());
                    k += 1;
                }
                assert_eq!(k, n);
            })
        });
        g.bench_function("crc32c_floor", |bch| {
            bch.iter(|| black_box(crc32c::crc32c(black_box(buf))))
        });
        g.bench_function("memory_floor", |bch| {
            bch.iter(|| black_box(sum_bytes(black_box(buf))))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("{}/decode", corpus.name));
        g.throughput(Throughput::Bytes(buf.len() as u64));
        g.sample_size(20);
        let check = |(records, values): (usize, usize)| {
            assert_eq!(records, n);
            assert_eq!(values, n * per_record);
        };
        g.bench_function("recordwire", |bch| {
            bch.iter(|| check(recordwire_decode(buf, &mut sink)))
        });
        g.bench_function("recordwire_lazy", |bch| {
            bch.iter(|| check(recordwire_decode_lazy(buf, &mut sink)))
        });
        g.bench_function("prost_owned", |bch| {
            bch.iter(|| check(prost_owned_decode(buf, &mut sink)))
        });
        g.bench_function("prost_bytes", |bch| {
            bch.iter(|| check(prost_bytes_decode(&file, &mut sink)))
        });
        g.bench_function("quick_protobuf", |bch| {
            bch.iter(|| check(quick_decode(buf, &mut sink)))
        });
        g.bench_function("tfrecord_crate", |bch| {
            bch.iter(|| check(tfrecord_crate_decode(buf, &mut sink)))
        });
        g.bench_function("memory_floor", |bch| {
            bch.iter(|| black_box(sum_bytes(black_box(buf))))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("{}/lookup2", corpus.name));
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(20);
        let check = |values: usize| assert_eq!(values, n * lookup_values);
        g.bench_function("recordwire", |bch| {
            bch.iter(|| {
                let mut values = 0;
                for r in frames(buf) {
                    let ex = ExampleRef::new(r.data, r.data_offset);
                    for name in [a, b] {
                        let f = ex.get(name).expect("valid").expect("present");
                        values += sink.feature(&f);
                    }
                }
                check(values)
            })
        });
        g.bench_function("prost_owned", |bch| {
            use peers::prost_owned::Example;
            bch.iter(|| {
                let mut values = 0;
                for r in frames(buf) {
                    let ex = Example::decode(r.data).expect("prost");
                    let map = &ex.features.as_ref().expect("features").feature;
                    for name in [a, b] {
                        values += peer_values!(sink, &map[name].kind, peers::prost_owned::Kind);
                    }
                }
                check(values)
            })
        });
        g.bench_function("quick_protobuf", |bch| {
            use peers::quick::Kind;
            bch.iter(|| {
                let mut values = 0;
                for r in frames(buf) {
                    let ex = peers::quick::decode(r.data).expect("quick-protobuf");
                    let map = &ex.features.as_ref().expect("features").feature;
                    for name in [a, b] {
                        values += match &map[name].kind {
                            Kind::Int64List(l) => sink.ints(&l.value),
                            Kind::FloatList(l) => sink.floats(&l.value),
                            Kind::BytesList(l) => sink.bytes(&l.value),
                            Kind::None => 0,
                        };
                    }
                }
                check(values)
            })
        });
        g.finish();

        // Random access: the same 1 000 pseudo-random ids for both.
        let index = Index::build(buf, Framing::TfRecord, true).expect("index");
        assert_eq!(index.len(), n as u64);
        let mut rng = corpus::Rng(0x2545_f491_4f6c_dd1d);
        let ids: Vec<u64> = (0..1000).map(|_| rng.next() % n as u64).collect();
        let offsets: Vec<usize> = (0..1000)
            .map(|_| (rng.next() % (buf.len() as u64 - 64)) as usize)
            .collect();
        let opts = ReadOptions::default();
        let mut g = c.benchmark_group(format!("{}/get", corpus.name));
        g.throughput(Throughput::Elements(ids.len() as u64));
        g.sample_size(30);
        g.bench_function("recordwire_get_lookup", |bch| {
            bch.iter(|| {
                let mut found = 0;
                for &id in &ids {
                    let r = index.get(buf, id, &opts).expect("valid").expect("in range");
                    let ex = ExampleRef::new(r.data, r.data_offset);
                    let f = ex.get(b).expect("valid").expect("present");
                    found += f.list().expect("valid").map_or(0, |l| l.len().unwrap_or(0));
                }
                assert_eq!(found, ids.len() * if b == "masked_lm_ids" { 20 } else { 1 });
            })
        });
        // The same ids through `get_many` (read in file order, frames
        // prefetched a window ahead, handed out in request order).
        let mut scratch = Vec::new();
        g.bench_function("recordwire_get_many_lookup", |bch| {
            bch.iter(|| {
                let mut found = 0;
                index
                    .get_many(buf, &ids, &opts, &mut scratch, |_, r| {
                        let r = r.expect("in range");
                        let ex = ExampleRef::new(r.data, r.data_offset);
                        let f = ex.get(b).expect("valid").expect("present");
                        found += f.list().expect("valid").map_or(0, |l| l.len().unwrap_or(0));
                    })
                    .expect("valid");
                assert_eq!(found, ids.len() * if b == "masked_lm_ids" { 20 } else { 1 });
            })
        });
        g.bench_function("random_read_64", |bch| {
            bch.iter(|| {
                let mut s = 0u64;
                for &o in &offsets {
                    s = s.wrapping_add(sum_bytes(&buf[o..o + 64]));
                }
                black_box(s)
            })
        });
        g.finish();
    }
}

/// The YouTube-8M-like SequenceExample corpus (`yt8m/decode`): every
/// context value and every frame of both feature lists, framing and both
/// CRCs included, as in the other corpora's `decode` group.
fn yt8m(c: &mut Criterion) {
    let (file, total) = corpus::yt8m_file(corpus::YT8M_RECORDS);
    let buf: &[u8] = &file;
    let n = corpus::YT8M_RECORDS;
    let mut sink = Sink::new();
    let check = |(records, values): (usize, usize)| {
        assert_eq!(records, n);
        assert_eq!(values, total);
    };
    let mut g = c.benchmark_group("yt8m/decode");
    g.throughput(Throughput::Bytes(buf.len() as u64));
    g.sample_size(20);
    g.bench_function("recordwire", |bch| {
        bch.iter(|| check(recordwire_sequence(buf, &mut sink, false)))
    });
    g.bench_function("recordwire_lazy", |bch| {
        bch.iter(|| check(recordwire_sequence(buf, &mut sink, true)))
    });
    g.bench_function("prost_owned", |bch| {
        bch.iter(|| check(prost_sequence(buf, &mut sink)))
    });
    g.bench_function("quick_protobuf", |bch| {
        bch.iter(|| check(quick_sequence(buf, &mut sink)))
    });
    g.bench_function("framing_only", |bch| {
        bch.iter(|| assert_eq!(frames(buf).count(), n))
    });
    g.bench_function("crc32c_floor", |bch| {
        bch.iter(|| black_box(crc32c::crc32c(black_box(buf))))
    });
    g.bench_function("memory_floor", |bch| {
        bch.iter(|| black_box(sum_bytes(black_box(buf))))
    });
    g.finish();
}

/// Feature counts of the `wide` sweep.
const WIDTHS: [usize; 9] = [8, 16, 32, 64, 65, 128, 256, 512, 1024];

/// Features per iteration of the `wide` sweep, at every width.
const WIDE_FEATURES: usize = 1 << 17;

/// The feature-count sweep: records of N one-value int64 features, decoded
/// like the `decode` group (framing with CRCs, every value), so the cost per
/// record shows how each decoder scales with the width of the map.
fn wide(c: &mut Criterion) {
    for n in WIDTHS {
        let records = WIDE_FEATURES / n;
        let file = corpus::wide_file(n, records);
        let buf: &[u8] = &file;
        let mut sink = Sink::new();
        let check = |(r, values): (usize, usize)| {
            assert_eq!(r, records);
            assert_eq!(values, records * n);
        };
        let mut g = c.benchmark_group(format!("wide/{n}"));
        g.throughput(Throughput::Elements(records as u64));
        g.sample_size(20);
        g.bench_function("recordwire", |bch| {
            bch.iter(|| check(recordwire_decode(buf, &mut sink)))
        });
        g.bench_function("recordwire_lazy", |bch| {
            bch.iter(|| check(recordwire_decode_lazy(buf, &mut sink)))
        });
        g.bench_function("prost_owned", |bch| {
            bch.iter(|| check(prost_owned_decode(buf, &mut sink)))
        });
        g.bench_function("quick_protobuf", |bch| {
            bch.iter(|| check(quick_decode(buf, &mut sink)))
        });
        g.finish();
    }
}

criterion_group!(benches, micro, bench, wide, yt8m);
criterion_main!(benches);
