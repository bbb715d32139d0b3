//! Reading does not allocate: iterating the frames of a file (both CRCs
//! checked), parsing each payload, walking every feature, looking features up
//! by name and visiting every value (iterators, and `copy_to_slice` into a
//! buffer the caller owns) performs zero heap allocations.
//!
//! A counting global allocator (`tests/support/counting_alloc.rs`) wraps
//! `System` and counts allocations per thread (the test harness runs each
//! test on its own thread). Setup may allocate; only the measured loops must
//! not. `counter_sees_allocations` checks that the counter would catch one
//! that sneaked in.

use std::hint::black_box;

use recordwire::frame::{write_ofrecord_frame, write_tfrecord_frame, ErrorPolicy, ReadOptions};
use recordwire::io::{OpenOptions, RecordFile, Source};
use recordwire::view::DecodeOptions;
use recordwire::view::{
    ExampleRef, FeatureRef, FeaturesRef, ListRef, OfRecordRef, PayloadKind, SequenceExampleRef,
};
use recordwire::{DecodeError, DecodeReason};

use crate::counting_alloc;

use counting_alloc::count_allocations;

#[test]
fn counter_sees_allocations() {
    let (_, n) = count_allocations(|| {
        let v: Vec<u8> = Vec::with_capacity(1);
        black_box(v);
    });
    assert_eq!(n, 1, "Vec::with_capacity(1)");
    let (_, n) = count_allocations(|| black_box(Box::new(7u64)));
    assert_eq!(n, 1, "Box::new");
    let (_, n) = count_allocations(|| {
        let mut v = Vec::with_capacity(1);
        v.extend_from_slice(black_box(&[1u8; 100]));
        black_box(v)
    });
    assert_eq!(n, 2, "allocation and growth");
    let (_, n) = count_allocations(|| black_box(format!("{}", black_box(12345))));
    assert!(n >= 1, "format!");
    let (_, n) = count_allocations(|| black_box(1 + black_box(2)));
    assert_eq!(n, 0, "plain arithmetic");
    // And inside the measured visitor: a feature visit that allocates is seen.
    let (file, _) = example_file(3);
    let (_, n) = count_allocations(|| {
        for r in file.records() {
            let r = r.expect("record");
            let ex = ExampleRef::parse(r.data, r.data_offset).expect("example");
            let name = ex.features().iter().next().expect("a feature").expect("ok");
            black_box(name.name().to_vec());
        }
    });
    assert_eq!(n, 3, "one to_vec per record");
}

// ---------------------------------------------------------------------------
// A tiny protobuf encoder, for building the test files
// ---------------------------------------------------------------------------

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn len_field(out: &mut Vec<u8>, field: u32, body: &[u8]) {
    tag(out, field, 2);
    varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

/// How a numeric list is written.
#[derive(Clone, Copy, Debug)]
enum Enc {
    Packed,
    Unpacked,
    /// A packed run of the first half, then the rest unpacked, with an
    /// unknown field in between.
    Mixed,
}

/// A list message (`repeated T value = 1`) of fixed-width values.
fn fixed_list(values: &[Vec<u8>], wire: u8, enc: Enc) -> Vec<u8> {
    let mut out = Vec::new();
    let split = match enc {
        Enc::Packed => values.len(),
        Enc::Unpacked => 0,
        Enc::Mixed => values.len() / 2,
    };
    if split > 0 || matches!(enc, Enc::Packed) {
        let packed: Vec<u8> = values[..split].concat();
        len_field(&mut out, 1, &packed);
    }
    if matches!(enc, Enc::Mixed) {
        tag(&mut out, 9, 0); // unknown field
        varint(&mut out, 1);
    }
    for v in &values[split..] {
        tag(&mut out, 1, wire);
        out.extend_from_slice(v);
    }
    out
}

fn float_list(values: &[f32], enc: Enc) -> Vec<u8> {
    let raw: Vec<Vec<u8>> = values.iter().map(|v| v.to_le_bytes().to_vec()).collect();
    fixed_list(&raw, 5, enc)
}

fn double_list(values: &[f64], enc: Enc) -> Vec<u8> {
    let raw: Vec<Vec<u8>> = values.iter().map(|v| v.to_le_bytes().to_vec()).collect();
    fixed_list(&raw, 1, enc)
}

fn varint_list(values: &[u64], enc: Enc) -> Vec<u8> {
    let mut out = Vec::new();
    let split = match enc {
        Enc::Packed => values.len(),
        Enc::Unpacked => 0,
        Enc::Mixed => values.len() / 2,
    };
    if split > 0 || matches!(enc, Enc::Packed) {
        let mut packed = Vec::new();
        for &v in &values[..split] {
            varint(&mut packed, v);
        }
        len_field(&mut out, 1, &packed);
    }
    if matches!(enc, Enc::Mixed) {
        tag(&mut out, 9, 5); // unknown fixed32
        out.extend_from_slice(&[1, 2, 3, 4]);
    }
    for &v in &values[split..] {
        tag(&mut out, 1, 0);
        varint(&mut out, v);
    }
    out
}

fn bytes_list(values: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        len_field(&mut out, 1, v);
    }
    out
}

/// A `Feature` holding `list` in oneof field `field` (None: no kind).
fn feature(field: Option<u32>, list: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(f) = field {
        len_field(&mut out, f, list);
    }
    out
}

/// One map entry `{key: value}` as field 1 of the map message.
fn entry(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    let mut e = Vec::new();
    len_field(&mut e, 1, name.as_bytes());
    len_field(&mut e, 2, value);
    len_field(out, 1, &e);
}

/// What a walk over the records saw, to check the walk did its work.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Seen {
    records: u64,
    features: u64,
    kindless: u64,
    bytes_values: u64,
    bytes_len: u64,
    floats: u64,
    doubles: u64,
    int32s: u64,
    int64s: u64,
    /// Sum of every int64 and int32 value (wrapping), of float bits, of
    /// double bits: the values' content, not only their count.
    int_sum: i64,
    float_bits: u64,
    double_bits: u64,
    lookups: u64,
    feature_lists: u64,
}

/// Builds the features of record `i` (tf.Example schema), appending map
/// entries to `map` and what they hold to `seen`.
fn tf_features(i: u64, map: &mut Vec<u8>, seen: &mut Seen) {
    let image: Vec<u8> = (0..(i % 50) as u8).collect();
    let values: [&[u8]; 3] = [&image, b"", b"jpeg"];
    let bbox = [0.25f32, 0.5, 0.75 + i as f32, -1.0];
    let scores = [i as f32 * 0.5, f32::MIN_POSITIVE, -0.0];
    let mixed_f = [1.5f32, 2.5, 3.5, 4.5, 5.5];
    let ids = [i, u64::MAX - i, 1 << 40]; // negative int64 values, 10-byte varints
    let mixed_i = [7u64, 300, 1 << 20, 0];

    // A duplicate key: the first "label" is replaced by the last one.
    if i.is_multiple_of(10) {
        entry(
            map,
            "label",
            &feature(Some(3), &varint_list(&[999], Enc::Packed)),
        );
    }
    entry(
        map,
        "label",
        &feature(Some(3), &varint_list(&[i], Enc::Packed)),
    );
    entry(map, "image", &feature(Some(1), &bytes_list(&values)));
    entry(
        map,
        "bbox",
        &feature(Some(2), &float_list(&bbox, Enc::Packed)),
    );
    entry(
        map,
        "scores",
        &feature(Some(2), &float_list(&scores, Enc::Unpacked)),
    );
    entry(
        map,
        "mixed_f",
        &feature(Some(2), &float_list(&mixed_f, Enc::Mixed)),
    );
    entry(
        map,
        "ids",
        &feature(Some(3), &varint_list(&ids, Enc::Unpacked)),
    );
    entry(
        map,
        "mixed_i",
        &feature(Some(3), &varint_list(&mixed_i, Enc::Mixed)),
    );
    entry(map, "empty", &feature(Some(2), &[]));
    entry(map, "no_kind", &feature(None, &[]));

    seen.features += 9;
    seen.kindless += 1;
    seen.bytes_values += 3;
    seen.bytes_len += image.len() as u64 + 4;
    seen.floats += (bbox.len() + scores.len() + mixed_f.len()) as u64;
    for f in bbox.iter().chain(&scores).chain(&mixed_f) {
        seen.float_bits = seen.float_bits.wrapping_add(u64::from(f.to_bits()));
    }
    seen.int64s += 1 + (ids.len() + mixed_i.len()) as u64;
    for v in std::iter::once(&i).chain(&ids).chain(&mixed_i) {
        seen.int_sum = seen.int_sum.wrapping_add(*v as i64);
    }
}

/// A TFRecord file of `n` tf.Examples, in memory, and what it holds.
fn example_file(n: u64) -> (RecordFile, Seen) {
    let (bytes, seen) = example_bytes(n);
    let file = RecordFile::from_bytes(bytes.into(), "examples", &OpenOptions::default());
    (file, seen)
}

fn example_bytes(n: u64) -> (Vec<u8>, Seen) {
    let mut file = Vec::new();
    let mut seen = Seen::default();
    for i in 0..n {
        let mut map = Vec::new();
        tf_features(i, &mut map, &mut seen);
        let mut ex = Vec::new();
        if i % 7 == 3 {
            // `Example.features` twice: the two maps merge.
            let cut = map.len() / 2;
            let cut = (0..=cut)
                .rev()
                .find(|&c| starts_entry(&map, c))
                .unwrap_or(0);
            len_field(&mut ex, 1, &map[..cut]);
            len_field(&mut ex, 1, &map[cut..]);
        } else {
            len_field(&mut ex, 1, &map);
        }
        write_tfrecord_frame(&mut file, &ex);
        seen.records += 1;
        seen.lookups += 2;
    }
    (file, seen)
}

/// Whether a map entry starts at `at` in `map` (walking the entries).
fn starts_entry(map: &[u8], at: usize) -> bool {
    let mut pos = 0;
    while pos < at {
        // tag 0x0a, then a varint length
        let mut len = 0u64;
        let mut shift = 0;
        let mut p = pos + 1;
        loop {
            let b = map[p];
            len |= u64::from(b & 0x7f) << shift;
            shift += 7;
            p += 1;
            if b < 0x80 {
                break;
            }
        }
        pos = p + len as usize;
    }
    pos == at
}

// ---------------------------------------------------------------------------
// The visitors: everything a reader does with a record
// ---------------------------------------------------------------------------

/// Visits every value of one feature, with the iterators and with
/// `copy_to_slice` into the caller's buffers, checking they agree.
fn visit_feature(f: FeatureRef<'_>, bufs: &mut Bufs, seen: &mut Seen) -> Result<(), DecodeError> {
    let Some(list) = f.list()? else {
        seen.kindless += 1;
        return Ok(());
    };
    match list {
        ListRef::Bytes(l) => {
            for v in l.iter() {
                let v = v?;
                seen.bytes_values += 1;
                seen.bytes_len += v.len() as u64;
            }
        }
        ListRef::Float(l) => {
            let n = l.copy_to_slice(&mut bufs.f32s)?;
            assert!(n <= bufs.f32s.len(), "buffer too small for {n} floats");
            for (i, v) in l.iter().enumerate() {
                let v = v?;
                assert_eq!(v.to_bits(), bufs.f32s[i].to_bits(), "copy_to_slice vs iter");
                seen.floats += 1;
                seen.float_bits = seen.float_bits.wrapping_add(u64::from(v.to_bits()));
            }
            assert_eq!(n, l.len()?);
        }
        ListRef::Double(l) => {
            let n = l.copy_to_slice(&mut bufs.f64s)?;
            for (i, v) in l.iter().enumerate() {
                let v = v?;
                assert_eq!(v.to_bits(), bufs.f64s[i].to_bits(), "copy_to_slice vs iter");
                seen.doubles += 1;
                seen.double_bits = seen.double_bits.wrapping_add(v.to_bits());
            }
            assert_eq!(n, l.len()?);
        }
        ListRef::Int32(l) => {
            let n = l.copy_to_slice(&mut bufs.i32s)?;
            for (i, v) in l.iter().enumerate() {
                let v = v?;
                assert_eq!(v, bufs.i32s[i], "copy_to_slice vs iter");
                seen.int32s += 1;
                seen.int_sum = seen.int_sum.wrapping_add(i64::from(v));
            }
            assert_eq!(n, l.len()?);
        }
        ListRef::Int64(l) => {
            let n = l.copy_to_slice(&mut bufs.i64s)?;
            for (i, v) in l.iter().enumerate() {
                let v = v?;
                assert_eq!(v, bufs.i64s[i], "copy_to_slice vs iter");
                seen.int64s += 1;
                seen.int_sum = seen.int_sum.wrapping_add(v);
            }
            assert_eq!(n, l.len()?);
        }
    }
    Ok(())
}

/// Every feature of a map (each name once), then two lookups by name.
fn visit_features(
    features: FeaturesRef<'_>,
    lookups: [&str; 2],
    bufs: &mut Bufs,
    seen: &mut Seen,
) -> Result<(), DecodeError> {
    for f in features.iter() {
        let f = f?;
        seen.features += 1;
        black_box(f.name());
        visit_feature(f.feature, bufs, seen)?;
    }
    for name in lookups {
        let f = features.get(name)?;
        assert!(f.is_some(), "lookup of {name:?}");
        seen.lookups += 1;
        black_box(f);
    }
    assert!(features.get("no such feature")?.is_none());
    Ok(())
}

/// Caller-owned buffers for `copy_to_slice`.
struct Bufs {
    f32s: Vec<f32>,
    f64s: Vec<f64>,
    i32s: Vec<i32>,
    i64s: Vec<i64>,
}

impl Bufs {
    fn new() -> Self {
        Bufs {
            f32s: vec![0.0; 1024],
            f64s: vec![0.0; 1024],
            i32s: vec![0; 1024],
            i64s: vec![0; 1024],
        }
    }
}

/// The measured loop over a tf.Example file.
fn walk_examples(file: &RecordFile, bufs: &mut Bufs) -> Seen {
    let mut seen = Seen::default();
    let opts = ReadOptions::default(); // both CRCs checked
    assert!(opts.check_length_crc && opts.check_data_crc);
    for r in file.records_with(opts) {
        let r = r.expect("valid record");
        let ex = ExampleRef::parse(r.data, r.data_offset).expect("valid Example");
        visit_features(ex.features(), ["label", "bbox"], bufs, &mut seen).expect("decodes");
        seen.records += 1;
    }
    seen
}

fn assert_no_allocations(what: &str, n: u64) {
    assert_eq!(n, 0, "{what}: {n} allocations in the reading loop");
}

// ---------------------------------------------------------------------------
// tf.Example
// ---------------------------------------------------------------------------

const RECORDS: u64 = 1000;

#[test]
fn examples_in_memory_read_without_allocating() {
    let (file, expected) = example_file(RECORDS);
    let mut bufs = Bufs::new();
    let (seen, n) = count_allocations(|| walk_examples(&file, &mut bufs));
    assert_eq!(seen, expected, "the walk saw what was written");
    assert_no_allocations("tf.Example, RecordFile::from_bytes", n);
}

#[test]
fn examples_mapped_read_without_allocating() {
    let (bytes, expected) = example_bytes(RECORDS);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("examples.tfrecord");
    std::fs::write(&path, &bytes).expect("write");
    let file = RecordFile::open(&path, &OpenOptions::default()).expect("open");
    assert!(file.is_mapped(), "a plain file is memory-mapped");
    let mut bufs = Bufs::new();
    let (seen, n) = count_allocations(|| walk_examples(&file, &mut bufs));
    assert_eq!(seen, expected);
    assert_no_allocations("tf.Example, RecordFile::open (mmap)", n);

    // The same walk through `Source`, what the CLI uses.
    let mut source = Source::open(&path, &OpenOptions::default()).expect("open source");
    let (seen, n) = count_allocations(|| {
        let mut seen = Seen::default();
        while let Some(r) = source.next_record() {
            let r = r.expect("valid record");
            let ex = ExampleRef::parse(r.data, r.data_offset).expect("valid Example");
            visit_features(ex.features(), ["label", "bbox"], &mut bufs, &mut seen)
                .expect("decodes");
            seen.records += 1;
        }
        seen
    });
    assert_eq!(seen, expected);
    assert_no_allocations("tf.Example, io::Source (mmap)", n);
}

#[test]
fn validation_and_wire_order_entries_do_not_allocate() {
    let (file, expected) = example_file(RECORDS);
    let (entries, n) = count_allocations(|| {
        let mut entries = 0u64;
        for r in file.records() {
            let r = r.expect("valid record");
            for kind in [PayloadKind::Example, PayloadKind::Raw] {
                kind.validate(r.data, r.data_offset, Default::default())
                    .expect("valid");
            }
            let ex = ExampleRef::new(r.data, r.data_offset);
            for e in ex.features().entries() {
                black_box(e.expect("entry").name());
                entries += 1;
            }
            assert!(ex.has_features().expect("ok"));
            black_box(ex.features().len().expect("len"));
        }
        entries
    });
    // Duplicated labels show in wire order.
    assert_eq!(entries, expected.features + expected.records.div_ceil(10));
    assert_no_allocations("validate + entries()", n);
}

/// Random access: `Index::get` (both CRCs), a lazy view, one lookup by name
/// and its values, for a thousand pseudo-random ids; and the same through a
/// `Shard` opened on the file (the index built at open, outside the loop).
#[test]
fn random_access_get_and_lookup_do_not_allocate() {
    use recordwire::dataset::Shard;
    use recordwire::frame::Framing;
    use recordwire::index::Index;
    let (bytes, expected) = example_bytes(RECORDS);
    let index = Index::build(&bytes, Framing::TfRecord, true).expect("index");
    assert_eq!(index.len(), expected.records);
    let ids: Vec<u64> = (0..1000u64).map(|i| (i * 7919 + 13) % RECORDS).collect();
    let opts = ReadOptions::default();
    let mut ints = vec![0i64; 1024];
    let (found, n) = count_allocations(|| {
        let mut found = 0u64;
        for &id in &ids {
            let r = index
                .get(&bytes, id, &opts)
                .expect("valid")
                .expect("in range");
            assert_eq!(r.id, id);
            let ex = ExampleRef::new(r.data, r.data_offset);
            if let Some(l) = ex
                .get("label")
                .expect("valid")
                .and_then(|f| f.int64_list().ok().flatten())
            {
                found += l.copy_to_slice(&mut ints).expect("ints") as u64;
            }
        }
        found
    });
    assert!(
        found >= ids.len() as u64,
        "every record has a label: {found}"
    );
    assert_no_allocations("Index::get + lookup", n);

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("examples.tfrecord");
    std::fs::write(&path, &bytes).expect("write");
    let shard = Shard::open(&path, &OpenOptions::default()).expect("shard");
    let (count, n) = count_allocations(|| {
        let mut count = 0u64;
        for &id in &ids {
            // An owned record: a share of the map, no copy, no allocation.
            let r = shard.get(id).expect("valid").expect("in range");
            let ex = ExampleRef::new(&r.data, r.data_offset);
            count += u64::from(ex.get("label").expect("valid").is_some());
        }
        count
    });
    assert_eq!(count, ids.len() as u64);
    assert_no_allocations("Shard::get + lookup (mmap)", n);

    // A warm batch of owned records from a dataset: nothing allocated.
    let dataset = recordwire::dataset::Dataset::from_shards(vec![shard]);
    let mut scratch = recordwire::dataset::Scratch::new();
    let batch = |scratch: &mut recordwire::dataset::Scratch| {
        let mut total = 0usize;
        dataset
            .get_many(&ids, scratch, |_, r| total += r.map_or(0, |r| r.data.len()))
            .expect("valid");
        total
    };
    let warm = batch(&mut scratch);
    let (total, n) = count_allocations(|| batch(&mut scratch));
    assert_eq!(total, warm);
    assert!(total > 0);
    assert_no_allocations("Dataset::get_many (mmap, warm)", n);
}

#[test]
fn json_printing_reuses_its_buffer() {
    // The json module promises no allocation per record once the caller's
    // buffer has grown.
    let (file, _) = example_file(200);
    let mut line = Vec::with_capacity(1 << 16);
    let (_, n) = count_allocations(|| {
        for r in file.records() {
            let r = r.expect("valid record");
            line.clear();
            recordwire::json::write_record(
                &mut line,
                PayloadKind::Example,
                r.data,
                r.data_offset,
                false,
                None,
            )
            .expect("prints");
            black_box(&line);
        }
    });
    assert_no_allocations("json::write_record into a reused buffer", n);
}

// ---------------------------------------------------------------------------
// OFRecord
// ---------------------------------------------------------------------------

fn ofrecord_bytes(n: u64) -> (Vec<u8>, Seen) {
    let mut file = Vec::new();
    let mut seen = Seen::default();
    for i in 0..n {
        let mut rec = Vec::new();
        let image: Vec<u8> = (0..(i % 30) as u8).rev().collect();
        let images: Vec<f32> = (0..16).map(|k| (k as f32) / (i as f32 + 1.0)).collect();
        let doubles = [0.1f64, -0.0, f64::MAX, i as f64];
        let labels = [i as i32, -1, i32::MIN, 300];
        let ids = [i, u64::MAX, 5];
        entry(
            &mut rec,
            "image",
            &feature(Some(1), &bytes_list(&[&image, b"x"])),
        );
        entry(
            &mut rec,
            "images",
            &feature(Some(2), &float_list(&images, Enc::Packed)),
        );
        entry(
            &mut rec,
            "doubles",
            &feature(Some(3), &double_list(&doubles, Enc::Mixed)),
        );
        // int32 sign-extended to 64 bits on the wire.
        let wire_labels: Vec<u64> = labels.iter().map(|&v| i64::from(v) as u64).collect();
        let enc = if i % 2 == 0 {
            Enc::Packed
        } else {
            Enc::Unpacked
        };
        entry(
            &mut rec,
            "labels",
            &feature(Some(4), &varint_list(&wire_labels, enc)),
        );
        entry(
            &mut rec,
            "ids",
            &feature(Some(5), &varint_list(&ids, Enc::Mixed)),
        );
        entry(
            &mut rec,
            "d_unpacked",
            &feature(Some(3), &double_list(&doubles, Enc::Unpacked)),
        );
        entry(&mut rec, "nothing", &feature(None, &[]));
        write_ofrecord_frame(&mut file, &rec);

        seen.records += 1;
        seen.features += 7;
        seen.kindless += 1;
        seen.bytes_values += 2;
        seen.bytes_len += image.len() as u64 + 1;
        seen.floats += images.len() as u64;
        for f in &images {
            seen.float_bits = seen.float_bits.wrapping_add(u64::from(f.to_bits()));
        }
        seen.doubles += 2 * doubles.len() as u64;
        for d in doubles.iter().chain(&doubles) {
            seen.double_bits = seen.double_bits.wrapping_add(d.to_bits());
        }
        seen.int32s += labels.len() as u64;
        seen.int64s += ids.len() as u64;
        for v in &labels {
            seen.int_sum = seen.int_sum.wrapping_add(i64::from(*v));
        }
        for v in &ids {
            seen.int_sum = seen.int_sum.wrapping_add(*v as i64);
        }
        seen.lookups += 2;
    }
    (file, seen)
}

#[test]
fn ofrecords_read_without_allocating() {
    let (bytes, expected) = ofrecord_bytes(RECORDS);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("part-0");
    std::fs::write(&path, &bytes).expect("write");
    let mapped = RecordFile::open(&path, &OpenOptions::default()).expect("open");
    assert!(mapped.is_mapped());
    assert_eq!(
        mapped.framing(),
        recordwire::frame::Framing::OfRecord,
        "detected"
    );
    let in_memory = RecordFile::from_bytes(bytes.into(), "part-0", &OpenOptions::default());
    for (what, file) in [("mmap", &mapped), ("in memory", &in_memory)] {
        let mut bufs = Bufs::new();
        let (seen, n) = count_allocations(|| {
            let mut seen = Seen::default();
            for r in file.records() {
                let r = r.expect("valid record");
                let rec = OfRecordRef::parse(r.data, r.data_offset).expect("valid OFRecord");
                visit_features(rec.features(), ["labels", "images"], &mut bufs, &mut seen)
                    .expect("decodes");
                seen.records += 1;
            }
            seen
        });
        assert_eq!(seen, expected, "OFRecord {what}");
        assert_no_allocations(&format!("OFRecord ({what})"), n);
    }
}

// ---------------------------------------------------------------------------
// tf.SequenceExample
// ---------------------------------------------------------------------------

fn sequence_bytes(n: u64) -> (Vec<u8>, Seen) {
    let mut file = Vec::new();
    let mut seen = Seen::default();
    for i in 0..n {
        let mut context = Vec::new();
        tf_features(i, &mut context, &mut seen);
        seen.lookups += 2;

        let mut lists = Vec::new();
        let steps = i % 5 + 1;
        // "frames": one bytes feature per step; "tokens": int64 steps, mixed
        // encodings; "audio": float steps, one of them kind-less.
        let mut frames = Vec::new();
        let mut tokens = Vec::new();
        let mut audio = Vec::new();
        for s in 0..steps {
            let frame = vec![s as u8; (i % 20) as usize];
            len_field(&mut frames, 1, &feature(Some(1), &bytes_list(&[&frame])));
            let toks = [s, i, u64::MAX];
            let enc = if s % 2 == 0 { Enc::Mixed } else { Enc::Packed };
            len_field(&mut tokens, 1, &feature(Some(3), &varint_list(&toks, enc)));
            if s == 1 {
                len_field(&mut audio, 1, &feature(None, &[]));
                seen.kindless += 1;
            } else {
                let a = [s as f32, -(i as f32)];
                len_field(
                    &mut audio,
                    1,
                    &feature(Some(2), &float_list(&a, Enc::Unpacked)),
                );
                seen.floats += 2;
                for f in a {
                    seen.float_bits = seen.float_bits.wrapping_add(u64::from(f.to_bits()));
                }
            }
            seen.bytes_values += 1;
            seen.bytes_len += frame.len() as u64;
            seen.int64s += 3;
            for v in toks {
                seen.int_sum = seen.int_sum.wrapping_add(v as i64);
            }
        }
        seen.features += 3 * steps;
        entry(&mut lists, "frames", &frames);
        entry(&mut lists, "tokens", &tokens);
        entry(&mut lists, "audio", &audio);
        seen.feature_lists += 3;
        seen.lookups += 2;

        let mut msg = Vec::new();
        len_field(&mut msg, 1, &context);
        len_field(&mut msg, 2, &lists);
        write_tfrecord_frame(&mut file, &msg);
        seen.records += 1;
    }
    (file, seen)
}

#[test]
fn sequence_examples_read_without_allocating() {
    let (bytes, expected) = sequence_bytes(RECORDS);
    let file = RecordFile::from_bytes(bytes.into(), "seq", &OpenOptions::default());
    let mut bufs = Bufs::new();
    let (seen, n) = count_allocations(|| {
        let mut seen = Seen::default();
        let opts = ReadOptions::default().with_policy(ErrorPolicy::Fail);
        for r in file.records_with(opts) {
            let r = r.expect("valid record");
            let seq = SequenceExampleRef::parse(r.data, r.data_offset).expect("valid");
            visit_features(seq.context(), ["label", "ids"], &mut bufs, &mut seen)
                .expect("context decodes");
            let lists = seq.feature_lists();
            for l in lists.iter() {
                let l = l.expect("feature list");
                seen.feature_lists += 1;
                black_box(l.name());
                for f in l.list.iter() {
                    seen.features += 1;
                    visit_feature(f.expect("feature"), &mut bufs, &mut seen).expect("decodes");
                }
            }
            for name in ["tokens", "audio"] {
                let l = lists.get(name).expect("lookup").expect("present");
                assert!(l.len().expect("len") > 0);
                seen.lookups += 1;
            }
            assert!(lists.get("nope").expect("lookup").is_none());
            seen.records += 1;
        }
        seen
    });
    assert_eq!(seen, expected);
    assert_no_allocations("tf.SequenceExample", n);
}

#[test]
fn builders_are_consistent() {
    // The encoder above against the library's own reading, on a few records.
    let (bytes, _) = example_bytes(20);
    let file = RecordFile::from_bytes(bytes.into(), "x", &OpenOptions::default());
    for (i, r) in file.records().enumerate() {
        let r = r.expect("record");
        let ex = ExampleRef::parse(r.data, r.data_offset).expect("parse");
        let Some(ListRef::Int64(label)) = ex
            .get("label")
            .expect("get")
            .and_then(|f| f.list().expect("list"))
        else {
            panic!("record {i}: no int64 label");
        };
        let v: Vec<i64> = label.iter().collect::<Result<_, _>>().expect("values");
        assert_eq!(v, [i as i64], "record {i}: the last `label` entry wins");
        let Some(ListRef::Float(f)) = ex
            .get("mixed_f")
            .expect("get")
            .and_then(|f| f.list().expect("list"))
        else {
            panic!("record {i}: no mixed_f");
        };
        assert!(f.is_mixed().expect("mixed"));
        assert_eq!(f.packed_bytes().expect("packed"), None);
        let mut buf = [0f32; 8];
        assert_eq!(f.copy_to_slice(&mut buf).expect("copy"), 5);
        assert_eq!(buf[..5], [1.5, 2.5, 3.5, 4.5, 5.5]);
        let Some(ListRef::Float(b)) = ex
            .get("bbox")
            .expect("get")
            .and_then(|f| f.list().expect("list"))
        else {
            panic!("record {i}: no bbox");
        };
        assert_eq!(b.packed_bytes().expect("packed").map(<[u8]>::len), Some(16));
    }
}

// ---------------------------------------------------------------------------
// Wide maps (issue 15)
// ---------------------------------------------------------------------------

/// A tf.Example of `n` one-value int64 features `f0`, `f1`, … in a
/// scrambled order, after an entry for every tenth name that the later one
/// replaces; and the same names as the feature lists of a SequenceExample.
fn wide_records(n: u64) -> (Vec<u8>, Vec<u8>) {
    let (mut map, mut lists) = (Vec::new(), Vec::new());
    let mut add = |name: u64, v: u64| {
        let value = feature(Some(3), &varint_list(&[v], Enc::Packed));
        let mut list = Vec::new();
        len_field(&mut list, 1, &value);
        entry(&mut map, &format!("f{name}"), &value);
        entry(&mut lists, &format!("f{name}"), &list);
    };
    for i in (0..n).step_by(10) {
        add(i, 1 << 40);
    }
    for i in 0..n {
        add(i * 7919 % n, i);
    }
    let (mut ex, mut seq) = (Vec::new(), Vec::new());
    len_field(&mut ex, 1, &map);
    len_field(&mut seq, 2, &lists);
    (ex, seq)
}

/// Iterating, counting, looking up and strictly validating maps of 1 000
/// features (one window of the duplicate table) and of 3 000 (several)
/// allocates nothing.
#[test]
fn wide_maps_read_without_allocating() {
    for n in [1000u64, 3000] {
        let (ex, seq) = wide_records(n);
        let (seen, allocations) = count_allocations(|| {
            let strict = DecodeOptions { strict: true };
            let ex = ExampleRef::parse(&ex, 0).expect("valid Example");
            let features = ex.features();
            let (mut seen, mut sum) = (0u64, 0i64);
            for f in features.iter() {
                let f = f.expect("feature");
                black_box(f.name());
                let l = f.feature.int64_list().expect("valid").expect("int64");
                for v in l.iter() {
                    sum = sum.wrapping_add(v.expect("value"));
                }
                seen += 1;
            }
            assert_eq!(features.len().expect("len"), n as usize);
            assert!(features.get("f7").expect("lookup").is_some());
            let e = features.validate(true).expect_err("duplicate names");
            assert_eq!(e.reason, DecodeReason::DuplicateKey);
            assert!(ExampleRef::parse_with(ex.bytes(), 0, strict).is_err());
            let seq = SequenceExampleRef::parse(&seq, 0).expect("valid SequenceExample");
            let lists = seq.feature_lists();
            for l in lists.iter() {
                black_box(l.expect("feature list").list.len().expect("len"));
                seen += 1;
            }
            assert_eq!(lists.len().expect("len"), n as usize);
            assert!(SequenceExampleRef::parse_with(seq.bytes(), 0, strict).is_err());
            (seen, sum)
        });
        assert_eq!(seen.0, 2 * n);
        assert_eq!(seen.1, (0..n as i64).sum::<i64>());
        assert_no_allocations(&format!("a map of {n} features"), allocations);
    }
}
