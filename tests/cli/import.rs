//! `recordwire import`: Parquet rows back to records. A file exported with
//! a spec whose every feature each record sets imports back to the very
//! records (the same bytes); columns with no feature form are errors that
//! name them; OFRecord output takes the OFRecord kinds.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use arrow_array::{ArrayRef, Date32Array, Float64Array, Int32Array, RecordBatch};
use recordwire::encode::{Example, Feature, Features, OfRecord};
use recordwire::frame::{file_of, Framing};
use recordwire::io::{OpenOptions, RecordFile};

use crate::support::cli::run_utf8;

const SPEC: &str = r#"{"payload": "example", "features": {
  "label": {"form": "fixed_len", "dtype": "int64", "shape": []},
  "pos": {"form": "fixed_len", "dtype": "float32", "shape": [2, 3]},
  "image": {"form": "fixed_len", "dtype": "bytes", "shape": []},
  "tokens": {"form": "var_len", "dtype": "int64"},
  "words": {"form": "var_len", "dtype": "bytes"}
}}"#;

fn example(i: usize) -> Vec<u8> {
    let n = i as i64;
    let f: Features = [
        ("label", Feature::Int64(vec![n * 3 - 40])),
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
            Feature::Int64((0..n % 7).map(|k| k * n).collect()),
        ),
        (
            "words",
            Feature::Bytes((0..i % 3).map(|k| vec![b'a' + k as u8; k + i]).collect()),
        ),
    ]
    .into_iter()
    .collect();
    Example::with_features(f).to_bytes().unwrap()
}

fn records_of(path: &std::path::Path) -> Vec<Vec<u8>> {
    let file = RecordFile::open(path, &OpenOptions::default()).unwrap();
    let mut out = Vec::new();
    let mut source = recordwire::io::Source::from_file(file);
    while let Some(r) = source.next_record() {
        out.push(r.unwrap().data.to_vec());
    }
    out
}

#[test]
fn an_exported_file_imports_back_to_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<Vec<u8>> = (0..41).map(example).collect();
    let data = dir.path().join("in.tfrecord");
    std::fs::write(
        &data,
        file_of(Framing::TfRecord, records.iter().map(|r| &r[..])),
    )
    .unwrap();
    let spec = dir.path().join("spec.json");
    std::fs::write(&spec, SPEC).unwrap();
    let parquet = dir.path().join("rows.parquet");
    let (d, s, p) = (
        data.to_str().unwrap(),
        spec.to_str().unwrap(),
        parquet.to_str().unwrap(),
    );
    let out = run_utf8(&["export", d, p, "--spec", s, "--batch-size", "8"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for (name, compressed) in [("back.tfrecord", false), ("back.tfrecord.gz", true)] {
        let back = dir.path().join(name);
        let b = back.to_str().unwrap();
        let out = run_utf8(&["import", p, b, "--batch-size", "16"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stderr.contains("41 rows imported"), "{}", out.stderr);
        let head = std::fs::read(&back).unwrap();
        assert_eq!(head.starts_with(&[0x1f, 0x8b]), compressed);
        assert_eq!(records_of(&back), records, "{name}");
    }
}

/// `batch` written as a Parquet file at `path`.
fn parquet_of(path: &std::path::Path, batch: &RecordBatch) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

#[test]
fn ofrecord_output_takes_the_ofrecord_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let small: ArrayRef = Arc::new(Int32Array::from(vec![1, -2]));
    let wide: ArrayRef = Arc::new(Float64Array::from(vec![0.1, 2.5]));
    let batch = RecordBatch::try_from_iter([("small", small), ("wide", wide)]).unwrap();
    let parquet = dir.path().join("rows.parquet");
    parquet_of(&parquet, &batch);
    let out_path = dir.path().join("part-0");
    let p = parquet.to_str().unwrap();
    let o = out_path.to_str().unwrap();
    let out = run_utf8(&["import", p, o, "--payload", "ofrecord"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expect: Vec<Vec<u8>> = [(1, 0.1), (-2, 2.5)]
        .iter()
        .map(|&(i, x)| {
            let f: Features = [
                ("small", Feature::Int32(vec![i])),
                ("wide", Feature::Double(vec![x])),
            ]
            .into_iter()
            .collect();
            OfRecord::with_features(f).to_bytes().unwrap()
        })
        .collect();
    assert_eq!(records_of(&out_path), expect);
}

#[test]
fn a_column_with_no_feature_form_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let ok: ArrayRef = Arc::new(Int32Array::from(vec![1]));
    let when: ArrayRef = Arc::new(Date32Array::from(vec![19000]));
    let batch = RecordBatch::try_from_iter([("ok", ok), ("when", when)]).unwrap();
    let parquet = dir.path().join("rows.parquet");
    parquet_of(&parquet, &batch);
    let target = dir.path().join("out.tfrecord");
    let out = run_utf8(&[
        "import",
        parquet.to_str().unwrap(),
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.starts_with("error[encode_error]: "),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("column \"when\""), "{}", out.stderr);
    assert!(!target.exists(), "nothing is left at the output");
}
