//! The benchmark corpora, generated reproducibly from a fixed seed: the
//! same bytes on every machine and every run, shared by the criterion
//! benches and `examples/gen_corpus.rs` (which writes them to files for
//! `recordwire bench` and the TensorFlow script).
//!
//! - BERT-like: `input_ids`, `input_mask`, `segment_ids` (128 int64 each),
//!   `masked_lm_positions`, `masked_lm_ids` (20 int64 each),
//!   `masked_lm_weights` (20 floats), `next_sentence_labels` (1 int64):
//!   445 values per record, about 900 bytes.
//! - ImageNet-like: `image/encoded` (100 000 random bytes) plus 12 small
//!   features (format, label, size, four bbox float lists, filename, synset,
//!   bbox labels): 27 values per record.
//! - CTR-like (Criteo's display-ads layout): `label` and 13 count features
//!   `I1`..`I13` (one int64 each), 26 hashed categories `C1`..`C26` (one
//!   8-hex-digit string each): 40 values per record, about 700 bytes.
//! - Wide (`wide`, for the feature-count sweep): `n` one-value int64
//!   features `feat_0`, `feat_1`, ….
//! - YouTube-8M-like (`yt8m`, frame level): tf.SequenceExamples with context
//!   `id` (11 bytes) and `labels` (1–5 int64), and feature lists `rgb` (one
//!   1 024-byte value per frame) and `audio` (one 128-byte value per frame),
//!   60–300 frames per record: about 210 KB per record. Not in `CORPORA`
//!   (which are tf.Examples); [`yt8m_file`] makes it, from its own seed.
//!
//! The encoding is written out field by field here (not with the crate's
//! encoder), so the benchmarks do not depend on the code they measure.

#![allow(dead_code)]

use recordwire::frame::write_tfrecord_frame;
use recordwire::wire::encode_varint;

/// A deterministic xorshift generator, so the corpus is the same every run.
pub struct Rng(pub u64);

impl Rng {
    /// The seed every corpus starts from.
    pub const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

    /// The next 64 pseudo-random bits.
    pub fn next(&mut self) -> u64 {
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

/// One feature's values.
pub enum V {
    /// A BytesList.
    Bytes(Vec<Vec<u8>>),
    /// A FloatList (packed).
    Float(Vec<f32>),
    /// An Int64List (packed).
    Int(Vec<i64>),
}

/// A serialized Feature holding these values.
fn feature(v: &V) -> Vec<u8> {
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
    let mut out = Vec::new();
    len_field(&mut out, field, &list);
    out
}

/// A serialized map entry: `name` (field 1) and `value` (field 2).
fn entry(name: &str, value: &[u8]) -> Vec<u8> {
    let mut entry = Vec::new();
    len_field(&mut entry, 1, name.as_bytes());
    len_field(&mut entry, 2, value);
    entry
}

/// A serialized Features message (its map, in this order).
fn features(features: &[(&str, V)]) -> Vec<u8> {
    let mut map = Vec::new();
    for (name, v) in features {
        len_field(&mut map, 1, &entry(name, &feature(v)));
    }
    map
}

/// A serialized tf.Example with these features, in this order.
pub fn example(f: &[(&str, V)]) -> Vec<u8> {
    let mut ex = Vec::new();
    len_field(&mut ex, 1, &features(f));
    ex
}

/// Values per BERT-like record.
pub const BERT_VALUES: usize = 445;
/// Values per image-like record.
pub const IMAGE_VALUES: usize = 27;

/// One BERT-like tf.Example.
pub fn bert(rng: &mut Rng) -> Vec<u8> {
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

/// One ImageNet-like tf.Example.
pub fn image(rng: &mut Rng) -> Vec<u8> {
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
    for name in [
        "image/object/bbox/xmin",
        "image/object/bbox/xmax",
        "image/object/bbox/ymin",
        "image/object/bbox/ymax",
    ] {
        let v = (0..4)
            .map(|_| (rng.next() % 1000) as f32 / 1000.0)
            .collect();
        f.push((name, V::Float(v)));
    }
    f.push((
        "image/filename",
        V::Bytes(vec![b"n01440764_10026.JPEG".to_vec()]),
    ));
    f.push(("image/synset", V::Bytes(vec![b"n01440764".to_vec()])));
    f.push(("image/object/bbox/label", V::Int(vec![1, 2, 3, 4])));
    example(&f)
}

/// Values per CTR-like record.
pub const CTR_VALUES: usize = 40;

/// One CTR-like tf.Example: Criteo's columns (a click label, 13 integer
/// counts, 26 categorical values hashed to 8 hex digits), one value each.
pub fn ctr(rng: &mut Rng) -> Vec<u8> {
    const I: [&str; 13] = [
        "I1", "I2", "I3", "I4", "I5", "I6", "I7", "I8", "I9", "I10", "I11", "I12", "I13",
    ];
    const C: [&str; 26] = [
        "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "C10", "C11", "C12", "C13", "C14",
        "C15", "C16", "C17", "C18", "C19", "C20", "C21", "C22", "C23", "C24", "C25", "C26",
    ];
    let mut f: Vec<(&str, V)> = Vec::with_capacity(40);
    f.push((
        "label",
        V::Int(vec![i64::from(rng.next().is_multiple_of(4))]),
    ));
    for name in I {
        // Counts: mostly small, a few in the tens of thousands.
        let bits = rng.next() % 17;
        f.push((name, V::Int(vec![(rng.next() % (1 << bits)) as i64])));
    }
    for name in C {
        let category = format!("{:08x}", rng.next() as u32);
        f.push((name, V::Bytes(vec![category.into_bytes()])));
    }
    example(&f)
}

/// The name of the `i`th feature of a wide record.
pub fn wide_name(i: usize) -> String {
    format!("feat_{i}")
}

/// One tf.Example of `n` one-value int64 features (`feat_0`, …).
pub fn wide(rng: &mut Rng, n: usize) -> Vec<u8> {
    let names: Vec<String> = (0..n).map(wide_name).collect();
    let f: Vec<(&str, V)> = names
        .iter()
        .map(|name| (name.as_str(), V::Int(vec![(rng.next() % 100_000) as i64])))
        .collect();
    example(&f)
}

/// A TFRecord file (both CRCs) of `records` wide records of `n` features.
pub fn wide_file(n: usize, records: usize) -> Vec<u8> {
    let mut rng = Rng(Rng::SEED);
    let mut out = Vec::new();
    for _ in 0..records {
        write_tfrecord_frame(&mut out, &wide(&mut rng, n));
    }
    out
}

/// The seed of the YouTube-8M-like corpus (its own generator state, so the
/// other corpora's bytes do not depend on it).
pub const YT8M_SEED: u64 = 0x5851_f42d_4c95_7f2d;

/// Records in the in-memory YouTube-8M-like benchmark file (about 420 MB).
pub const YT8M_RECORDS: usize = 2000;

/// A serialized tf.SequenceExample: `context` features and feature lists
/// (each a list of features), in this order.
pub fn sequence_example(context: &[(&str, V)], lists: &[(&str, Vec<V>)]) -> Vec<u8> {
    let mut map = Vec::new();
    for (name, values) in lists {
        let mut list = Vec::new();
        for v in values {
            len_field(&mut list, 1, &feature(v));
        }
        len_field(&mut map, 1, &entry(name, &list));
    }
    let mut out = Vec::new();
    len_field(&mut out, 1, &features(context));
    len_field(&mut out, 2, &map);
    out
}

/// `n` pseudo-random bytes, eight per draw.
fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        v.extend_from_slice(&rng.next().to_le_bytes());
    }
    v.truncate(n);
    v
}

/// One YouTube-8M-like (frame-level) tf.SequenceExample and its number of
/// values (context values plus two per frame).
pub fn yt8m(rng: &mut Rng) -> (Vec<u8>, usize) {
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let id: Vec<u8> = (0..11).map(|_| ALNUM[(rng.next() % 64) as usize]).collect();
    let n_labels = 1 + (rng.next() % 5) as usize;
    let labels: Vec<i64> = (0..n_labels).map(|_| (rng.next() % 3862) as i64).collect();
    let frames = 60 + (rng.next() % 241) as usize;
    let mut rgb = Vec::with_capacity(frames);
    let mut audio = Vec::with_capacity(frames);
    for _ in 0..frames {
        rgb.push(V::Bytes(vec![random_bytes(rng, 1024)]));
        audio.push(V::Bytes(vec![random_bytes(rng, 128)]));
    }
    let payload = sequence_example(
        &[("id", V::Bytes(vec![id])), ("labels", V::Int(labels))],
        &[("rgb", rgb), ("audio", audio)],
    );
    (payload, 1 + n_labels + 2 * frames)
}

/// A TFRecord file (both CRCs) of `records` YouTube-8M-like records, and
/// the number of values in it.
pub fn yt8m_file(records: usize) -> (Vec<u8>, usize) {
    let mut rng = Rng(YT8M_SEED);
    let (mut out, mut values) = (Vec::new(), 0);
    for _ in 0..records {
        let (p, v) = yt8m(&mut rng);
        write_tfrecord_frame(&mut out, &p);
        values += v;
    }
    (out, values)
}

/// A corpus: its name, record count and generator.
pub struct Corpus {
    /// `bert`, `image` or `ctr`.
    pub name: &'static str,
    /// Records in the in-memory benchmark file.
    pub records: usize,
    /// Values per record (for the count assertions).
    pub values_per_record: usize,
    /// Makes one record.
    pub make: fn(&mut Rng) -> Vec<u8>,
}

/// The corpora, at the sizes the benches use (about 18 MB, 20 MB and 35 MB).
pub const CORPORA: [Corpus; 3] = [
    Corpus {
        name: "bert",
        records: 20_000,
        values_per_record: BERT_VALUES,
        make: bert,
    },
    Corpus {
        name: "image",
        records: 200,
        values_per_record: IMAGE_VALUES,
        make: image,
    },
    Corpus {
        name: "ctr",
        records: 50_000,
        values_per_record: CTR_VALUES,
        make: ctr,
    },
];

impl Corpus {
    /// The payloads of `n` records.
    pub fn payloads(&self, n: usize) -> Vec<Vec<u8>> {
        let mut rng = Rng(Rng::SEED);
        (0..n).map(|_| (self.make)(&mut rng)).collect()
    }

    /// A TFRecord file (both CRCs) of `n` records.
    pub fn file(&self, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for p in self.payloads(n) {
            write_tfrecord_frame(&mut out, &p);
        }
        out
    }
}
