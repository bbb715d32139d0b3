//! Every form of the mapping: the schema, and each row's value read back
//! from the Arrow arrays, against a naive reading of the batch's columns
//! (row by row through the accessors, dropping padding by the lengths).

#![allow(clippy::unwrap_used)]

use arrow_array::Array;
use arrow_schema::DataType as T;

use super::*;

#[path = "../../tests/support/arrow_rows.rs"]
mod arrow_rows;
#[path = "../../tests/support/rows.rs"]
mod rows;
use crate::batch::decode;
use crate::encode::{
    Example, Feature, FeatureList, FeatureLists, Features, OfRecord, SequenceExample,
};
use arrow_rows::arrow_value;
use rows::{naive_row, sequence_example, V};

/// Decodes `records` with `spec`, maps the batch, and checks the schema
/// against [`schema`] and every value against [`naive_row`]; returns the
/// record batch.
fn check(spec: &Spec, records: &[Vec<u8>]) -> RecordBatch {
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut batch = Batch::new();
    decode(&payloads, spec, &mut batch).unwrap();
    let reference = batch.clone();
    let rb = record_batch(spec, &mut batch).unwrap();
    assert_eq!(rb.schema(), schema(spec).unwrap());
    assert_eq!(rb.num_rows(), records.len());
    let names = column_names(spec).unwrap();
    let features = spec.features().iter().map(|f| (f, false));
    let sequence = spec.sequence().iter().map(|f| (f, true));
    let cols = reference.columns().iter().chain(reference.sequence());
    for ((name, (f, seq)), col) in names.iter().zip(features.chain(sequence)).zip(cols) {
        let field = rb.schema().field_with_name(name).unwrap().clone();
        assert!(!field.is_nullable(), "{field:?}");
        assert_eq!(field.data_type(), &data_type(f, seq).unwrap());
        let array = rb.column_by_name(name).unwrap();
        assert_eq!(array.null_count(), 0);
        for r in 0..records.len() {
            assert_eq!(
                arrow_value(array.as_ref(), r),
                naive_row(f, seq, col, r),
                "column {name}, row {r}"
            );
        }
    }
    rb
}

fn ty(rb: &RecordBatch, name: &str) -> T {
    rb.schema()
        .field_with_name(name)
        .unwrap()
        .data_type()
        .clone()
}

fn list(t: T) -> T {
    T::LargeList(item(t))
}

fn fixed(t: T, n: i32) -> T {
    T::FixedSizeList(item(t), n)
}

const EXAMPLE_SPEC: &str = r#"{
  "payload": "example",
  "features": {
    "label": {"form": "fixed_len", "dtype": "int64", "shape": []},
    "pos": {"form": "fixed_len", "dtype": "float32", "shape": [2, 3]},
    "none": {"form": "fixed_len", "dtype": "int64", "shape": [0], "default": []},
    "image": {"form": "fixed_len", "dtype": "bytes", "shape": []},
    "image_ref": {"form": "fixed_len", "dtype": "bytes", "shape": [], "borrow": true},
    "tokens": {"form": "var_len", "dtype": "int64"},
    "words": {"form": "var_len", "dtype": "bytes", "sparse": true},
    "words_ref": {"form": "var_len", "dtype": "bytes", "borrow": true},
    "boxes": {"form": "fixed_len_sequence", "dtype": "float32", "shape": [2], "allow_missing": true, "default": -1.0},
    "tags": {"form": "fixed_len_sequence", "dtype": "bytes", "shape": [], "allow_missing": true},
    "tags_ref": {"form": "fixed_len_sequence", "dtype": "bytes", "shape": [], "allow_missing": true, "borrow": true}
  }
}"#;

fn example(i: usize) -> Vec<u8> {
    let n = i as i64;
    let words: Vec<Vec<u8>> = (0..i % 3).map(|k| vec![b'a' + k as u8; k + i]).collect();
    let tags: Vec<Vec<u8>> = (0..i % 4)
        .map(|k| format!("t{k}.{i}").into_bytes())
        .collect();
    let mut f: Vec<(String, Feature)> = vec![
        ("label".into(), Feature::Int64(vec![n - 2])),
        (
            "pos".into(),
            Feature::Float((0..6).map(|k| n as f32 + k as f32 / 8.0).collect()),
        ),
        (
            "image".into(),
            Feature::Bytes(vec![format!("img-{i}").into_bytes()]),
        ),
        ("image_ref".into(), Feature::Bytes(vec![vec![i as u8; i]])),
        ("tokens".into(), Feature::Int64((0..n % 4).collect())),
        ("words".into(), Feature::Bytes(words.clone())),
        ("words_ref".into(), Feature::Bytes(words)),
        ("tags".into(), Feature::Bytes(tags.clone())),
        ("tags_ref".into(), Feature::Bytes(tags)),
    ];
    if i % 3 != 1 {
        f.push((
            "boxes".into(),
            Feature::Float((0..2 * (i % 4)).map(|k| k as f32 - n as f32).collect()),
        ));
    }
    Example::with_features(f.into_iter().collect())
        .to_bytes()
        .unwrap()
}

#[test]
fn every_example_form() {
    let spec = Spec::from_json(EXAMPLE_SPEC.as_bytes()).unwrap();
    let records: Vec<Vec<u8>> = (0..7).map(example).collect();
    let rb = check(&spec, &records);
    assert_eq!(ty(&rb, "label"), T::Int64);
    assert_eq!(ty(&rb, "pos"), fixed(fixed(T::Float32, 3), 2));
    assert_eq!(ty(&rb, "none"), fixed(T::Int64, 0));
    assert_eq!(ty(&rb, "image"), T::LargeBinary);
    assert_eq!(ty(&rb, "image_ref"), T::LargeBinary);
    assert_eq!(ty(&rb, "tokens"), list(T::Int64));
    assert_eq!(ty(&rb, "words"), list(T::LargeBinary));
    assert_eq!(ty(&rb, "words_ref"), list(T::LargeBinary));
    assert_eq!(ty(&rb, "boxes"), list(fixed(T::Float32, 2)));
    assert_eq!(ty(&rb, "tags"), list(T::LargeBinary));
    // Unpadded: a record's elements are its own (the batch pads with -1).
    let boxes = rb.column_by_name("boxes").unwrap();
    assert_eq!(arrow_value(boxes.as_ref(), 1), V::L(vec![]));
    let f = |x: f32| V::F(f64::from(x).to_bits());
    assert_eq!(
        arrow_value(boxes.as_ref(), 2),
        V::L(vec![
            V::L(vec![f(-2.0), f(-1.0)]),
            V::L(vec![f(0.0), f(1.0)])
        ])
    );
    let tags = rb.column_by_name("tags_ref").unwrap();
    assert_eq!(
        arrow_value(tags.as_ref(), 2),
        V::L(vec![V::B(b"t0.2".to_vec()), V::B(b"t1.2".to_vec())])
    );
    let none = rb.column_by_name("none").unwrap();
    assert_eq!(none.len(), 7);
}

#[test]
fn numeric_and_owned_bytes_buffers_are_taken_without_a_copy() {
    let spec = Spec::from_json(EXAMPLE_SPEC.as_bytes()).unwrap();
    let records: Vec<Vec<u8>> = (0..5).map(example).collect();
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut batch = Batch::new();
    decode(&payloads, &spec, &mut batch).unwrap();
    let label = batch.column("label").unwrap().raw_values().as_ptr();
    let image = batch.column("image").unwrap().raw_values().as_ptr();
    let splits = batch
        .column("tokens")
        .unwrap()
        .row_splits()
        .unwrap()
        .as_ptr();
    let rb = record_batch(&spec, &mut batch).unwrap();
    let label_arrow = rb.column_by_name("label").unwrap().to_data();
    assert_eq!(label_arrow.buffers()[0].as_ptr(), label);
    assert_eq!(label as usize % 64, 0);
    let image_arrow = rb.column_by_name("image").unwrap().to_data();
    assert_eq!(image_arrow.buffers()[1].as_ptr(), image);
    let tokens = rb.column_by_name("tokens").unwrap().to_data();
    assert_eq!(tokens.buffers()[0].as_ptr().cast::<i64>(), splits);
    // The batch is emptied (its columns taken) and decodes again.
    assert_eq!(batch.rows(), 0);
    decode(&payloads, &spec, &mut batch).unwrap();
    assert_eq!(batch.rows(), 5);
}

const SEQUENCE_SPEC: &str = r#"{
  "payload": "sequence_example",
  "features": {
    "id": {"form": "fixed_len", "dtype": "int64", "shape": []},
    "name": {"form": "var_len", "dtype": "bytes"}
  },
  "sequence": {
    "frames": {"form": "fixed_len_sequence", "dtype": "float32", "shape": [3], "allow_missing": true},
    "labels": {"form": "fixed_len_sequence", "dtype": "bytes", "shape": [], "allow_missing": true},
    "notes": {"form": "var_len", "dtype": "int64", "sparse": true},
    "words": {"form": "var_len", "dtype": "bytes", "borrow": true},
    "id": {"form": "var_len", "dtype": "int64"}
  }
}"#;

#[test]
fn every_sequence_form_with_sequence_names() {
    let spec = Spec::from_json(SEQUENCE_SPEC.as_bytes()).unwrap();
    let records: Vec<Vec<u8>> = (0..9).map(sequence_example).collect();
    let rb = check(&spec, &records);
    let names: Vec<String> = rb
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        [
            "id",
            "name",
            "frames",
            "labels",
            "notes",
            "words",
            "sequence.id"
        ]
    );
    assert_eq!(ty(&rb, "frames"), list(fixed(T::Float32, 3)));
    assert_eq!(ty(&rb, "labels"), list(T::LargeBinary));
    assert_eq!(ty(&rb, "notes"), list(list(T::Int64)));
    assert_eq!(ty(&rb, "words"), list(list(T::LargeBinary)));
    assert_eq!(ty(&rb, "sequence.id"), list(list(T::Int64)));
    let seq_id = rb.column_by_name("sequence.id").unwrap();
    assert_eq!(
        arrow_value(seq_id.as_ref(), 7),
        V::L(vec![V::L(vec![V::I(7), V::I(-7)])])
    );
    // Frames unpadded: record 4 has 4 frames, record 5 (missing) none.
    let frames = rb.column_by_name("frames").unwrap();
    assert!(matches!(arrow_value(frames.as_ref(), 4), V::L(l) if l.len() == 4));
    assert_eq!(arrow_value(frames.as_ref(), 5), V::L(vec![]));
}

const OFRECORD_SPEC: &str = r#"{
  "payload": "ofrecord",
  "features": {
    "img": {"form": "ofrecord_raw", "dtype": "float32", "shape": [2, 2]},
    "ids": {"form": "ofrecord_raw", "dtype": "int32", "shape": [4], "auto_zero_padding": true},
    "chars": {"form": "ofrecord_raw", "dtype": "int8", "shape": [5], "dim1_varying_length": true},
    "bytes": {"form": "ofrecord_raw", "dtype": "uint8", "shape": [3]},
    "score": {"form": "fixed_len", "dtype": "float64", "shape": []},
    "more": {"form": "var_len", "dtype": "int32"}
  }
}"#;

fn ofrecord(i: usize) -> Vec<u8> {
    let features: Features = [
        (
            "img",
            Feature::Float((0..4).map(|k| (k + i) as f32).collect()),
        ),
        ("ids", Feature::Int64((0..(i % 5) as i64).collect())),
        ("chars", Feature::Bytes(vec![b"abcdefg"[..i % 6].to_vec()])),
        ("bytes", Feature::Int32(vec![i as i32, 255, 7])),
        ("score", Feature::Double(vec![i as f64 / 3.0])),
        ("more", Feature::Int32((0..(i % 3) as i32).collect())),
    ]
    .into_iter()
    .collect();
    OfRecord::with_features(features).to_bytes().unwrap()
}

#[test]
fn every_ofrecord_form_keeps_the_lengths() {
    let spec = Spec::from_json(OFRECORD_SPEC.as_bytes()).unwrap();
    let records: Vec<Vec<u8>> = (0..6).map(ofrecord).collect();
    let rb = check(&spec, &records);
    assert_eq!(ty(&rb, "img"), fixed(fixed(T::Float32, 2), 2));
    assert_eq!(ty(&rb, "ids"), list(T::Int32));
    assert_eq!(ty(&rb, "chars"), list(T::Int8));
    assert_eq!(ty(&rb, "bytes"), fixed(T::UInt8, 3));
    assert_eq!(ty(&rb, "score"), T::Float64);
    assert_eq!(ty(&rb, "more"), list(T::Int32));
    // Raw values that may be fewer: what the record held, not the zeros.
    let ids = rb.column_by_name("ids").unwrap();
    assert_eq!(arrow_value(ids.as_ref(), 2), V::L(vec![V::I(0), V::I(1)]));
    assert_eq!(arrow_value(ids.as_ref(), 0), V::L(vec![]));
    let chars = rb.column_by_name("chars").unwrap();
    assert_eq!(
        arrow_value(chars.as_ref(), 3),
        V::L(vec![V::I(97), V::I(98), V::I(99)])
    );
}

#[test]
fn an_empty_batch_maps_to_empty_arrays() {
    for (text, _) in [(EXAMPLE_SPEC, 0), (SEQUENCE_SPEC, 0), (OFRECORD_SPEC, 0)] {
        let spec = Spec::from_json(text.as_bytes()).unwrap();
        let rb = check(&spec, &[]);
        assert_eq!(rb.num_rows(), 0);
        assert_eq!(rb.num_columns(), column_names(&spec).unwrap().len());
    }
}

#[test]
fn a_batch_of_another_spec_is_refused() {
    let spec = Spec::from_json(EXAMPLE_SPEC.as_bytes()).unwrap();
    let other = Spec::from_json(OFRECORD_SPEC.as_bytes()).unwrap();
    let records: Vec<Vec<u8>> = (0..2).map(example).collect();
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut batch = Batch::new();
    decode(&payloads, &spec, &mut batch).unwrap();
    let e = record_batch(&other, &mut batch).unwrap_err().to_string();
    assert!(e.contains("decode it with this spec"), "{e}");
    let e = record_batch(&spec, &mut Batch::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("decode it with this spec"), "{e}");
}

#[test]
fn colliding_column_names_are_refused() {
    let spec = Spec::from_json(
        br#"{"payload": "sequence_example",
             "features": {"x": {"form": "fixed_len", "dtype": "int64", "shape": []},
                          "sequence.x": {"form": "fixed_len", "dtype": "int64", "shape": []}},
             "sequence": {"x": {"form": "var_len", "dtype": "int64"}}}"#,
    )
    .unwrap();
    let e = schema(&spec).unwrap_err().to_string();
    assert!(
        e.contains("two columns would be named \"sequence.x\""),
        "{e}"
    );
}

#[test]
fn an_owned_batch_maps_as_the_borrowing_one() {
    let spec = Spec::from_json(EXAMPLE_SPEC.as_bytes()).unwrap();
    let records: Vec<bytes::Bytes> = (0..7).map(|i| example(i).into()).collect();
    let payloads: Vec<&[u8]> = records.iter().map(|r| &r[..]).collect();
    let mut borrowing = Batch::new();
    decode(&payloads, &spec, &mut borrowing).unwrap();
    let mut owned = borrowing.clone().into_owned(|row| records.get(row));
    assert!(owned.column("words_ref").unwrap().shared().is_some());
    let a = record_batch(&spec, &mut borrowing).unwrap();
    let b = record_batch(&spec, &mut owned).unwrap();
    assert_eq!(a, b);
    let tags = b.column_by_name("tags_ref").unwrap();
    assert_eq!(
        arrow_value(tags.as_ref(), 2),
        V::L(vec![V::B(b"t0.2".to_vec()), V::B(b"t1.2".to_vec())])
    );
}

/// Records whose every feature is set (so that decoding to Arrow and
/// encoding back loses nothing): scalar, fixed shape, var_len of each kind.
fn full_example(i: usize) -> Vec<u8> {
    let n = i as i64;
    let f: Features = [
        ("label", Feature::Int64(vec![n - 2])),
        (
            "pos",
            Feature::Float((0..6).map(|k| n as f32 + k as f32 / 8.0).collect()),
        ),
        (
            "image",
            Feature::Bytes(vec![format!("img-{i}").into_bytes()]),
        ),
        (
            "tokens",
            Feature::Int64((0..n % 4).map(|t| t * 1000 - 7).collect()),
        ),
        (
            "words",
            Feature::Bytes((0..i % 3).map(|k| vec![b'a' + k as u8; k + i]).collect()),
        ),
        (
            "weights",
            Feature::Float((0..i % 5).map(|k| k as f32 * 0.25).collect()),
        ),
    ]
    .into_iter()
    .collect();
    Example::with_features(f).to_bytes().unwrap()
}

const FULL_SPEC: &str = r#"{"payload": "example", "features": {
  "label": {"form": "fixed_len", "dtype": "int64", "shape": []},
  "pos": {"form": "fixed_len", "dtype": "float32", "shape": [2, 3]},
  "image": {"form": "fixed_len", "dtype": "bytes", "shape": []},
  "tokens": {"form": "var_len", "dtype": "int64"},
  "words": {"form": "var_len", "dtype": "bytes"},
  "weights": {"form": "var_len", "dtype": "float32"}
}}"#;

#[test]
fn rows_encode_back_to_the_records_they_were_decoded_from() {
    let spec = Spec::from_json(FULL_SPEC.as_bytes()).unwrap();
    let records: Vec<Vec<u8>> = (0..9).map(full_example).collect();
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut batch = Batch::new();
    decode(&payloads, &spec, &mut batch).unwrap();
    let rb = record_batch(&spec, &mut batch).unwrap();
    let mut encoder = RecordEncoder::new(rb.schema().as_ref(), false).unwrap();
    let mut out = Vec::new();
    for (r, record) in records.iter().enumerate() {
        out.clear();
        encoder.encode(&rb, r, &mut out).unwrap();
        assert_eq!(&out, record, "row {r}");
    }
    // A slice of the batch (offsets into its arrays) encodes the same rows.
    let tail = rb.slice(4, 5);
    for r in 0..5 {
        out.clear();
        encoder.encode(&tail, r, &mut out).unwrap();
        assert_eq!(out, records[4 + r], "row {} of the slice", r);
    }
}

#[test]
fn arrow_types_map_to_the_kinds_the_python_writer_gives_numpy_arrays() {
    use arrow_array::builder::{ListBuilder, UInt8Builder};
    use arrow_array::{
        BooleanArray, FixedSizeBinaryArray, Float64Array, Int16Array, Int32Array, StringArray,
        UInt64Array,
    };
    use std::sync::Arc;
    let mut small = ListBuilder::new(UInt8Builder::new());
    small.append_value([Some(1), Some(2)]);
    small.append_null();
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("i16", Arc::new(Int16Array::from(vec![-3, 4]))),
        ("i32", Arc::new(Int32Array::from(vec![7, -8]))),
        ("u64", Arc::new(UInt64Array::from(vec![9, 10]))),
        ("flag", Arc::new(BooleanArray::from(vec![true, false]))),
        ("f64", Arc::new(Float64Array::from(vec![0.1, 2.5]))),
        ("s", Arc::new(StringArray::from(vec!["x", "yz"]))),
        (
            "fixed",
            Arc::new(FixedSizeBinaryArray::try_from_iter([b"ab", b"cd"].into_iter()).unwrap()),
        ),
        ("small", Arc::new(small.finish())),
    ];
    let rb = RecordBatch::try_from_iter(columns).unwrap();
    let expect = |ofrecord: bool, row: usize| -> Vec<u8> {
        let r = row as i64;
        let mut f: Vec<(&str, Feature)> = vec![
            (
                "i16",
                match ofrecord {
                    true => Feature::Int32(vec![[-3, 4][row]]),
                    false => Feature::Int64(vec![[-3, 4][row]]),
                },
            ),
            (
                "i32",
                match ofrecord {
                    true => Feature::Int32(vec![[7, -8][row]]),
                    false => Feature::Int64(vec![[7, -8][row]]),
                },
            ),
            ("u64", Feature::Int64(vec![9 + r])),
            ("flag", Feature::Int64(vec![1 - r])),
            (
                "f64",
                match ofrecord {
                    true => Feature::Double(vec![[0.1, 2.5][row]]),
                    false => Feature::Float(vec![[0.1f64, 2.5][row] as f32]),
                },
            ),
            (
                "s",
                Feature::Bytes(vec![["x", "yz"][row].as_bytes().to_vec()]),
            ),
            ("fixed", Feature::Bytes(vec![[b"ab", b"cd"][row].to_vec()])),
        ];
        // A null row leaves its feature out.
        if row == 0 {
            f.push(("small", Feature::Int64(vec![1, 2])));
        }
        let features: Features = f.into_iter().collect();
        match ofrecord {
            true => OfRecord::with_features(features).to_bytes().unwrap(),
            false => Example::with_features(features).to_bytes().unwrap(),
        }
    };
    for ofrecord in [false, true] {
        let mut encoder = RecordEncoder::new(rb.schema().as_ref(), ofrecord).unwrap();
        for row in 0..2 {
            let mut out = Vec::new();
            encoder.encode(&rb, row, &mut out).unwrap();
            assert_eq!(out, expect(ofrecord, row), "ofrecord {ofrecord}, row {row}");
        }
    }
}

#[test]
fn columns_without_a_feature_form_are_errors_that_name_them() {
    use arrow_array::builder::{Int64Builder, ListBuilder};
    use arrow_array::{Date32Array, Int64Array, UInt64Array};
    use std::sync::Arc;
    let ok: ArrayRef = Arc::new(Int64Array::from(vec![1]));
    let date: ArrayRef = Arc::new(Date32Array::from(vec![1]));
    let rb = RecordBatch::try_from_iter([("ok", ok), ("when", date)]).unwrap();
    let e = RecordEncoder::new(rb.schema().as_ref(), false).unwrap_err();
    assert!(e.to_string().contains("\"when\""), "{e}");
    assert!(e.to_string().contains("Date32"), "{e}");
    // A null inside a list, and a UInt64 beyond int64: the column and row.
    let mut lists = ListBuilder::new(Int64Builder::new());
    lists.append_value([Some(1)]);
    lists.append_value([Some(2), None]);
    let big: ArrayRef = Arc::new(UInt64Array::from(vec![1, u64::MAX]));
    let lists: ArrayRef = Arc::new(lists.finish());
    let rb = RecordBatch::try_from_iter([("l", lists), ("big", big)]).unwrap();
    let mut encoder = RecordEncoder::new(rb.schema().as_ref(), false).unwrap();
    let mut out = Vec::new();
    encoder.encode(&rb, 0, &mut out).unwrap();
    let e = encoder.encode(&rb, 1, &mut out).unwrap_err().to_string();
    assert!(
        e.contains("column \"l\", row 1") && e.contains("null"),
        "{e}"
    );
    let only_big = rb.project(&[1]).unwrap();
    let mut encoder = RecordEncoder::new(only_big.schema().as_ref(), false).unwrap();
    let e = encoder
        .encode(&only_big, 1, &mut out)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("column \"big\", row 1") && e.contains("exceeds int64"),
        "{e}"
    );
}

/// The one helper that `recordwire import` and the Python package's
/// `write_arrow` give their Arrow errors through: our own texts (invalid
/// argument, schema) without arrow-rs's prefix, others as arrow-rs says them.
#[test]
fn error_message_drops_the_prefix_of_our_own_texts_only() {
    let ours = ArrowError::InvalidArgumentError("column \"x\": not a list".into());
    assert!(ours.to_string().starts_with("Invalid argument error: "));
    assert_eq!(error_message(&ours), "column \"x\": not a list");
    let schema = ArrowError::SchemaError("no field \"y\"".into());
    assert_eq!(error_message(&schema), "no field \"y\"");
    let other = ArrowError::ComputeError("overflow".into());
    assert_eq!(error_message(&other), other.to_string());
}
