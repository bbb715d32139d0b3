//! `recordwire export`: the columns of a batch decode written as Parquet or
//! as .npy files, read back here (the parquet crate's Arrow reader, a .npy
//! parser of its own) and compared with a `batch::Batch` decoded directly
//! with the library; then, when python3 has them, loaded with numpy and
//! pyarrow (else a `SKIP:` line on stderr).

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use recordwire::batch::{decode, Batch, Column, DType, FeatureSpec, Form, Spec};
use recordwire::encode::{Example, Feature, FeatureList, FeatureLists, Features, SequenceExample};
use recordwire::frame::{file_of, Framing};
use recordwire::io::{OpenOptions, RecordFile};

use crate::support::cli::{run_bin, run_utf8};

/// Records in the generated files; decoded in batches of [`BATCH`], so that
/// the export spans several batches, the last one short.
const RECORDS: usize = 53;
const BATCH: &str = "8";

// ---------------------------------------------------------------------------
// The data: an Example file and a SequenceExample file, with their specs.

const EXAMPLE_SPEC: &str = r#"{
  "payload": "example",
  "features": {
    "label": {"form": "fixed_len", "dtype": "int64", "shape": []},
    "image/encoded": {"form": "fixed_len", "dtype": "bytes", "shape": []},
    "pos": {"form": "fixed_len", "dtype": "float32", "shape": [2, 3]},
    "tokens": {"form": "var_len", "dtype": "int64"},
    "words": {"form": "var_len", "dtype": "bytes"},
    "boxes": {"form": "fixed_len_sequence", "dtype": "float32", "shape": [4], "allow_missing": true},
    "tags": {"form": "fixed_len_sequence", "dtype": "bytes", "shape": [], "allow_missing": true}
  }
}"#;

fn example(i: usize) -> Vec<u8> {
    let n = i as i64;
    let mut f: Vec<(String, Feature)> = vec![
        ("label".into(), Feature::Int64(vec![n * 3 - 40])),
        (
            "image/encoded".into(),
            Feature::Bytes(vec![format!("img-{i}").repeat(i % 4).into_bytes()]),
        ),
        (
            "pos".into(),
            Feature::Float((0..6).map(|k| n as f32 + k as f32 / 8.0).collect()),
        ),
        (
            "tokens".into(),
            Feature::Int64((0..n % 7).map(|k| k * n).collect()),
        ),
        (
            "words".into(),
            Feature::Bytes(
                (0..i % 3)
                    .map(|k| vec![b'a' + k as u8; k + i % 5])
                    .collect(),
            ),
        ),
        (
            "tags".into(),
            Feature::Bytes(
                (0..i % 4)
                    .map(|k| format!("t{k}.{i}").into_bytes())
                    .collect(),
            ),
        ),
    ];
    // Missing in every fifth record (allow_missing: no elements).
    if !i.is_multiple_of(5) {
        f.push((
            "boxes".into(),
            Feature::Float(
                (0..4 * (i % 6))
                    .map(|k| k as f32 * 0.5 - n as f32)
                    .collect(),
            ),
        ));
    }
    let features: Features = f.into_iter().collect();
    Example::with_features(features).to_bytes().unwrap()
}

const SEQUENCE_SPEC: &str = r#"{
  "payload": "sequence_example",
  "features": {
    "id": {"form": "fixed_len", "dtype": "int64", "shape": []},
    "name": {"form": "var_len", "dtype": "bytes"}
  },
  "sequence": {
    "frames": {"form": "fixed_len_sequence", "dtype": "float32", "shape": [3], "allow_missing": true},
    "notes": {"form": "var_len", "dtype": "int64"},
    "words": {"form": "var_len", "dtype": "bytes"},
    "id": {"form": "var_len", "dtype": "int64"}
  }
}"#;

struct Data {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    /// The record files, in order (the records split between them).
    files: Vec<String>,
    spec_path: String,
    spec: Spec,
    records: Vec<Vec<u8>>,
}

impl Data {
    /// `records` split over two TFRecord files (the second one GZIP, so
    /// that a batch spans a mapped file and a stream), and the spec file.
    fn new(spec: &str, record: fn(usize) -> Vec<u8>) -> Data {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let records: Vec<Vec<u8>> = (0..RECORDS).map(record).collect();
        let (a, b) = records.split_at(RECORDS / 2 + 1);
        let first = path.join("part-a.tfrecord");
        std::fs::write(
            &first,
            file_of(Framing::TfRecord, a.iter().map(Vec::as_slice)),
        )
        .unwrap();
        let second = path.join("part-b.tfrecord.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(
            &mut gz,
            &file_of(Framing::TfRecord, b.iter().map(Vec::as_slice)),
        )
        .unwrap();
        std::fs::write(&second, gz.finish().unwrap()).unwrap();
        let spec_path = path.join("spec.json");
        std::fs::write(&spec_path, spec).unwrap();
        Data {
            files: vec![s(&first), s(&second)],
            spec_path: s(&spec_path),
            spec: Spec::from_json(spec.as_bytes()).unwrap(),
            records,
            dir: path,
            _dir: dir,
        }
    }

    /// The records decoded by the library in one batch.
    fn batch(&self) -> Batch<'_> {
        let payloads: Vec<&[u8]> = self.records.iter().map(Vec::as_slice).collect();
        let mut batch = Batch::new();
        decode(&payloads, &self.spec, &mut batch).unwrap();
        assert_eq!(batch.rows(), RECORDS);
        batch
    }

    fn export(&self, out: &Path, extra: &[&str]) -> String {
        let mut args = vec!["export", "--spec", &self.spec_path, "--batch-size", BATCH];
        args.extend_from_slice(extra);
        args.extend(self.files.iter().map(String::as_str));
        let out = s(out);
        args.push(&out);
        let r = run_utf8(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{}", r.stdout);
        r.stderr
    }
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_owned()
}

// ---------------------------------------------------------------------------
// Rows as value trees, from the library's batch and from Arrow arrays.

#[path = "../support/rows.rs"]
mod rows;
use rows::{naive_row, sequence_example, V};

/// Every column of the library's batch, by column name, row by row.
fn library_rows(spec: &Spec, batch: &Batch<'_>) -> BTreeMap<String, Vec<V>> {
    let mut out = BTreeMap::new();
    for (f, col) in spec.features().iter().zip(batch.columns()) {
        let rows = (0..batch.rows())
            .map(|r| naive_row(f, false, col, r))
            .collect();
        out.insert(f.name.clone(), rows);
    }
    for (f, col) in spec.sequence().iter().zip(batch.sequence()) {
        let name = if spec.find(&f.name).is_some() {
            format!("sequence.{}", f.name)
        } else {
            f.name.clone()
        };
        let rows = (0..batch.rows())
            .map(|r| naive_row(f, true, col, r))
            .collect();
        out.insert(name, rows);
    }
    out
}

// ---------------------------------------------------------------------------
// Parquet

#[path = "../support/arrow_rows.rs"]
mod arrow_rows;

mod parquet_out {
    use std::collections::BTreeMap;
    use std::path::Path;

    use arrow_array::{Array, RecordBatch};
    use arrow_schema::SchemaRef;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    use super::arrow_rows::arrow_value as value;
    use super::V;

    /// The file's schema, key-value metadata, row groups and rows by column.
    pub struct Read {
        pub schema: SchemaRef,
        pub metadata: BTreeMap<String, String>,
        pub row_groups: usize,
        pub rows: BTreeMap<String, Vec<V>>,
    }

    pub fn read(path: &Path) -> Read {
        let file = std::fs::File::open(path).unwrap();
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let meta = builder.metadata().clone();
        let metadata = meta
            .file_metadata()
            .key_value_metadata()
            .into_iter()
            .flatten()
            .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
            .collect();
        let schema = builder.schema().clone();
        let reader = builder.with_batch_size(5).build().unwrap();
        let mut rows: BTreeMap<String, Vec<V>> = BTreeMap::new();
        for batch in reader {
            let batch: RecordBatch = batch.unwrap();
            for (field, col) in batch.schema().fields().iter().zip(batch.columns()) {
                let out = rows.entry(field.name().clone()).or_default();
                out.extend((0..col.len()).map(|i| value(col.as_ref(), i)));
            }
        }
        Read {
            schema,
            metadata,
            row_groups: meta.num_row_groups(),
            rows,
        }
    }
}

fn check_parquet(data: &Data, out: &Path) {
    let read = parquet_out::read(out);
    let batch = data.batch();
    let expected = library_rows(&data.spec, &batch);
    assert_eq!(
        read.rows.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (name, rows) in &expected {
        assert_eq!(rows.len(), RECORDS);
        assert_eq!(&read.rows[name], rows, "column {name}");
    }
    // The spec, as the file's key-value metadata.
    let spec = Spec::from_json(read.metadata["recordwire.spec"].as_bytes()).unwrap();
    assert_eq!(spec, data.spec);
    // Not null, anywhere.
    for f in read.schema.fields() {
        assert!(!f.is_nullable(), "{f:?}");
    }
    assert!(read.row_groups >= 1);
}

#[test]
fn parquet_of_an_example_file_holds_what_the_library_decodes() {
    let data = Data::new(EXAMPLE_SPEC, example);
    let out = data.dir.join("out.parquet");
    let summary = data.export(&out, &["--threads", "3"]);
    assert!(
        summary.contains(&format!(
            "exported {RECORDS} records (2 files), 7 columns, "
        )),
        "{summary}"
    );
    check_parquet(&data, &out);
    let read = parquet_out::read(&out);
    // The Arrow types of the forms.
    use arrow_schema::DataType as T;
    let ty = |n: &str| read.schema.field_with_name(n).unwrap().data_type().clone();
    assert_eq!(ty("label"), T::Int64);
    assert_eq!(ty("image/encoded"), T::LargeBinary);
    assert!(
        matches!(&ty("pos"), T::FixedSizeList(inner, 2)
            if matches!(inner.data_type(), T::FixedSizeList(leaf, 3) if leaf.data_type() == &T::Float32)),
        "{:?}",
        ty("pos")
    );
    assert!(matches!(&ty("tokens"), T::LargeList(leaf) if leaf.data_type() == &T::Int64));
    assert!(matches!(&ty("words"), T::LargeList(leaf) if leaf.data_type() == &T::LargeBinary));
    assert!(
        matches!(&ty("boxes"), T::LargeList(inner)
            if matches!(inner.data_type(), T::FixedSizeList(leaf, 4) if leaf.data_type() == &T::Float32)),
        "{:?}",
        ty("boxes")
    );
    // Unpadded: a record's boxes are its own, however long the batch's longest.
    let boxes = &read.rows["boxes"];
    assert_eq!(boxes[0], V::L(vec![]));
    assert!(matches!(&boxes[3], V::L(l) if l.len() == 3));
    pyarrow_check(
        &out,
        "label",
        (0..RECORDS as i64).map(|n| n * 3 - 40).sum(),
        "tokens",
    );
}

#[test]
fn parquet_of_a_sequence_example_file_nests_frames() {
    let data = Data::new(SEQUENCE_SPEC, sequence_example);
    let out = data.dir.join("seq.parquet");
    data.export(&out, &[]);
    check_parquet(&data, &out);
    let read = parquet_out::read(&out);
    use arrow_schema::DataType as T;
    let ty = |n: &str| read.schema.field_with_name(n).unwrap().data_type().clone();
    assert!(
        matches!(&ty("notes"), T::LargeList(f)
            if matches!(f.data_type(), T::LargeList(leaf) if leaf.data_type() == &T::Int64)),
        "{:?}",
        ty("notes")
    );
    // A sequence feature named as a context feature has a column of its own.
    assert_eq!(ty("id"), T::Int64);
    assert!(matches!(&ty("sequence.id"), T::LargeList(_)));
    assert_eq!(
        read.rows["sequence.id"][7],
        V::L(vec![V::L(vec![V::I(7), V::I(-7)])])
    );
    pyarrow_check(
        &out,
        "id",
        (0..RECORDS as i64).map(|n| 1000 + n).sum(),
        "name",
    );
}

// ---------------------------------------------------------------------------
// .npy

/// A parsed .npy file.
#[derive(Debug)]
struct Npy {
    descr: String,
    shape: Vec<usize>,
    data: Vec<u8>,
}

fn read_npy(path: &Path) -> Npy {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let start = 10 + hlen;
    assert_eq!(start % 64, 0, "{}: data start at {start}", path.display());
    let header = std::str::from_utf8(&bytes[10..start]).unwrap();
    assert!(header.ends_with('\n'), "{header:?}");
    let header = header.trim_end();
    let field = |key: &str| {
        let at = header.find(&format!("'{key}': ")).unwrap() + key.len() + 4;
        &header[at..]
    };
    let descr = field("descr");
    let descr = descr[1..].split('\'').next().unwrap().to_owned();
    assert!(field("fortran_order").starts_with("False"), "{header}");
    let shape = field("shape");
    let shape = &shape[1..shape.find(')').unwrap()];
    let shape: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    assert!(header.starts_with('{') && header.ends_with('}'), "{header}");
    let data = bytes[start..].to_vec();
    let width = match descr.as_str() {
        "<i8" | "<f8" => 8,
        "<i4" | "<f4" => 4,
        "|i1" | "|u1" => 1,
        d => panic!("descr {d}"),
    };
    assert_eq!(
        data.len(),
        shape.iter().product::<usize>() * width,
        "{}",
        path.display()
    );
    Npy { descr, shape, data }
}

impl Npy {
    fn i64s(&self) -> Vec<i64> {
        assert_eq!(self.descr, "<i8");
        self.data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
}

/// The npy files of one column, from index.json.
struct NpyColumn {
    files: BTreeMap<String, Npy>,
}

impl NpyColumn {
    fn get(&self, role: &str) -> &Npy {
        self.files
            .get(role)
            .unwrap_or_else(|| panic!("no {role} file"))
    }

    /// The values: numeric ones as trees of one scalar each, bytes ones from data and offsets.
    fn scalars(&self, dtype: DType) -> Vec<V> {
        if dtype == DType::Bytes {
            let data = &self.get("data").data;
            let offsets = self.get("offsets").i64s();
            assert_eq!(offsets[0], 0);
            return offsets
                .windows(2)
                .map(|w| V::B(data[w[0] as usize..w[1] as usize].to_vec()))
                .collect();
        }
        let v = self.get("values");
        let (descr, width) = match dtype {
            DType::Int64 => ("<i8", 8),
            DType::Float32 => ("<f4", 4),
            DType::Int32 => ("<i4", 4),
            DType::Float64 => ("<f8", 8),
            DType::Int8 => ("|i1", 1),
            _ => ("|u1", 1),
        };
        assert_eq!(v.descr, descr);
        v.data
            .chunks_exact(width)
            .map(|c| match dtype {
                DType::Int64 => V::I(i64::from_le_bytes(c.try_into().unwrap())),
                DType::Float32 => {
                    V::F(f64::from(f32::from_le_bytes(c.try_into().unwrap())).to_bits())
                }
                DType::Int32 => V::I(i32::from_le_bytes(c.try_into().unwrap()).into()),
                DType::Float64 => V::F(f64::from_le_bytes(c.try_into().unwrap()).to_bits()),
                DType::Int8 => V::I(i8::from_le_bytes([c[0]]).into()),
                _ => V::I(c[0].into()),
            })
            .collect()
    }
}

fn nest(scalars: &[V], dims: &[usize]) -> V {
    match dims {
        [] => scalars[0].clone(),
        [d, rest @ ..] => {
            let size: usize = rest.iter().product();
            V::L((0..*d).map(|k| nest(&scalars[k * size..], rest)).collect())
        }
    }
}

fn check_npy(data: &Data, out: &Path) -> Vec<(String, Npy)> {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["rows"], RECORDS);
    let spec = Spec::from_json(&std::fs::read(out.join("spec.json")).unwrap()).unwrap();
    assert_eq!(spec, data.spec);
    let batch = data.batch();
    let expected = library_rows(&data.spec, &batch);
    let features = index["features"].as_object().unwrap();
    assert_eq!(features.len(), expected.len());
    let mut all = Vec::new();
    let plans = data
        .spec
        .features()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| (f, c, false))
        .chain(
            data.spec
                .sequence()
                .iter()
                .zip(batch.sequence())
                .map(|(f, c)| (f, c, true)),
        );
    for (f, col, sequence) in plans {
        let column = if sequence && data.spec.find(&f.name).is_some() {
            format!("sequence.{}", f.name)
        } else {
            f.name.clone()
        };
        let entry = &features[&column];
        assert_eq!(entry["name"], f.name.as_str());
        assert_eq!(entry["form"], f.form.name());
        assert_eq!(
            entry["part"],
            if sequence { "sequence" } else { "features" }
        );
        let mut files = BTreeMap::new();
        for (role, name) in entry["files"].as_object().unwrap() {
            let name = name.as_str().unwrap();
            assert!(!name.contains('/'), "{name}");
            let npy = read_npy(&out.join(name));
            all.push((name.to_owned(), read_npy(&out.join(name))));
            files.insert(role.clone(), npy);
        }
        let c = NpyColumn { files };
        let scalars = c.scalars(f.dtype);
        let dims = f.form.shape().unwrap_or_default();
        let elems: usize = dims.iter().product();
        let rows: Vec<V> = match &f.form {
            Form::FixedLen { .. } | Form::OfRecordRaw { .. } => {
                if f.dtype != DType::Bytes {
                    let mut shape = vec![RECORDS];
                    shape.extend_from_slice(dims);
                    assert_eq!(c.get("values").shape, shape, "{column}");
                }
                (0..RECORDS)
                    .map(|r| nest(&scalars[r * elems..], dims))
                    .collect()
            }
            Form::FixedLenSequence { .. } => {
                let lengths = c.get("lengths").i64s();
                assert_eq!(lengths, col.lengths().unwrap(), "{column}");
                let total: i64 = lengths.iter().sum();
                if f.dtype != DType::Bytes {
                    let mut shape = vec![total as usize];
                    shape.extend_from_slice(dims);
                    assert_eq!(c.get("values").shape, shape, "{column}");
                }
                let mut at = 0;
                lengths
                    .iter()
                    .map(|&n| {
                        let row = (0..n as usize)
                            .map(|k| nest(&scalars[(at + k) * elems..], dims))
                            .collect();
                        at += n as usize;
                        V::L(row)
                    })
                    .collect()
            }
            Form::VarLen if !sequence => {
                let splits = c.get("row_splits").i64s();
                assert_eq!(splits, col.row_splits().unwrap(), "{column}");
                splits
                    .windows(2)
                    .map(|w| V::L(scalars[w[0] as usize..w[1] as usize].to_vec()))
                    .collect()
            }
            Form::VarLen => {
                let rows = c.get("row_splits").i64s();
                let frames = c.get("frame_splits").i64s();
                assert_eq!(rows, col.row_splits().unwrap(), "{column}");
                assert_eq!(frames, col.frame_splits().unwrap(), "{column}");
                rows.windows(2)
                    .map(|r| {
                        V::L(
                            (r[0]..r[1])
                                .map(|f| {
                                    let (a, b) = (frames[f as usize], frames[f as usize + 1]);
                                    V::L(scalars[a as usize..b as usize].to_vec())
                                })
                                .collect(),
                        )
                    })
                    .collect()
            }
        };
        assert_eq!(&rows, &expected[&column], "column {column}");
    }
    all
}

#[test]
fn npy_of_an_example_file_holds_what_the_library_decodes() {
    let data = Data::new(EXAMPLE_SPEC, example);
    let out = data.dir.join("out");
    let summary = data.export(&out, &["--format", "npy"]);
    assert!(summary.contains("(npy)"), "{summary}");
    let files = check_npy(&data, &out);
    // The names the module docs promise.
    let mut names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "boxes.lengths.npy",
            "boxes.values.npy",
            "image__encoded.data.npy",
            "image__encoded.offsets.npy",
            "label.npy",
            "pos.npy",
            "tags.data.npy",
            "tags.lengths.npy",
            "tags.offsets.npy",
            "tokens.row_splits.npy",
            "tokens.values.npy",
            "words.data.npy",
            "words.offsets.npy",
            "words.row_splits.npy",
        ]
    );
    numpy_check(&out, &files);
}

#[test]
fn npy_of_a_sequence_example_file_has_frame_and_row_splits() {
    let data = Data::new(SEQUENCE_SPEC, sequence_example);
    let out = data.dir.join("out.d");
    data.export(&out, &["--threads", "2"]);
    let files = check_npy(&data, &out);
    for name in [
        "notes.values.npy",
        "notes.frame_splits.npy",
        "notes.row_splits.npy",
        "words.data.npy",
        "words.offsets.npy",
        "words.frame_splits.npy",
        "frames.values.npy",
        "frames.lengths.npy",
        "sequence.id.values.npy",
        "id.npy",
    ] {
        assert!(files.iter().any(|(n, _)| n == name), "no {name}");
    }
    numpy_check(&out, &files);
}

#[test]
fn spec_auto_infers_the_spec_first() {
    let data = Data::new(EXAMPLE_SPEC, example);
    let out = data.dir.join("auto.parquet");
    let mut args = vec!["export", "--spec", "auto"];
    args.extend(data.files.iter().map(String::as_str));
    let o = s(&out);
    args.push(&o);
    let r = run_utf8(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let read = parquet_out::read(&out);
    let spec = Spec::from_json(read.metadata["recordwire.spec"].as_bytes()).unwrap();
    // The same as `inspect --spec` prints for the same files.
    let mut args = vec!["inspect", "--spec"];
    args.extend(data.files.iter().map(String::as_str));
    let inspected = run_utf8(&args);
    assert_eq!(spec, Spec::from_json(inspected.stdout.as_bytes()).unwrap());
    assert_eq!(
        spec.features()[0].form,
        Form::FixedLen {
            shape: vec![],
            default: None
        }
    );
    assert_eq!(read.rows["label"].len(), RECORDS);
}

// ---------------------------------------------------------------------------
// Errors and the output's place

/// Nothing at `out`, nor a temporary beside it.
fn nothing_left(dir: &Path, out: &Path) {
    assert!(!out.exists(), "{} was left", out.display());
    let stem = out.file_name().unwrap().to_str().unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(!name.starts_with(&format!("{stem}.tmp")), "{name} was left");
    }
}

#[test]
fn a_record_that_fails_the_spec_stops_the_export_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut records: Vec<Vec<u8>> = (0..20).map(example).collect();
    // Record 13: its label is a bytes list.
    let features: Features = [
        ("label", Feature::Bytes(vec![b"x".to_vec()])),
        ("image/encoded", Feature::Bytes(vec![vec![]])),
        ("pos", Feature::Float(vec![0.0; 6])),
    ]
    .into_iter()
    .collect();
    records[13] = Example::with_features(features).to_bytes().unwrap();
    let file = dir.path().join("bad.tfrecord");
    std::fs::write(
        &file,
        file_of(Framing::TfRecord, records.iter().map(Vec::as_slice)),
    )
    .unwrap();
    let spec_path = dir.path().join("spec.json");
    std::fs::write(&spec_path, EXAMPLE_SPEC).unwrap();
    // The library's own error for that record.
    let spec = Spec::from_json(EXAMPLE_SPEC.as_bytes()).unwrap();
    let rf = RecordFile::open(&file, &OpenOptions::default()).unwrap();
    let all: Vec<_> = rf.records().map(Result::unwrap).collect();
    let mut batch = Batch::new();
    let err = decode(&all, &spec, &mut batch).unwrap_err();
    assert_eq!(err.kind().name(), "feature_error");
    assert_eq!(err.record(), Some(13));
    for (out, format) in [("out.parquet", "parquet"), ("out", "npy")] {
        let out = dir.path().join(out);
        let r = run_utf8(&[
            "export",
            "--spec",
            &s(&spec_path),
            "--batch-size",
            "4",
            "--format",
            format,
            &s(&file),
            &s(&out),
        ]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert_eq!(r.stderr, format!("error{err}\n"));
        let line = r.stderr.trim_end();
        assert!(
            line.starts_with(&format!(
                "error[feature_error]: {}: record 13 at byte ",
                s(&file)
            )),
            "{line}"
        );
        assert!(
            line.contains(&format!(" at byte {}: ", err.offset().unwrap())),
            "{line}"
        );
        nothing_left(dir.path(), &out);
    }
    // The built binary exits the same way.
    let out = dir.path().join("bin.parquet");
    let r = run_bin(
        &["export", "--spec", &s(&spec_path), &s(&file), &s(&out)],
        None,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("error[feature_error]: "), "{}", r.stderr);
    nothing_left(dir.path(), &out);
}

#[test]
fn an_existing_output_is_replaced_only_with_force() {
    let data = Data::new(EXAMPLE_SPEC, example);
    let busy = data.dir.join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("keep.txt"), "mine").unwrap();
    let file = data.dir.join("taken.parquet");
    std::fs::write(&file, "mine").unwrap();
    for out in [&busy, &file] {
        let mut args = vec!["export", "--spec", &data.spec_path];
        args.extend(data.files.iter().map(String::as_str));
        let o = s(out);
        args.push(&o);
        let r = run_utf8(&args);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.starts_with("error[usage_error]: "), "{}", r.stderr);
        assert!(r.stderr.contains("--force"), "{}", r.stderr);
    }
    assert_eq!(
        std::fs::read_to_string(busy.join("keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    // An empty directory is no one's work.
    let empty = data.dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    data.export(&empty, &[]);
    assert!(empty.join("label.npy").exists());
    data.export(&busy, &["--force"]);
    assert!(!busy.join("keep.txt").exists() && busy.join("index.json").exists());
    data.export(&file, &["--force"]);
    check_parquet(&data, &file);
}

#[test]
fn spec_auto_needs_inputs_it_can_read_twice() {
    let data = Data::new(EXAMPLE_SPEC, example);
    let out = data.dir.join("o.parquet");
    let r = run_bin(
        &["export", "--spec", "auto", "-", &s(&out)],
        Some(Path::new(&data.files[0])),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("error[usage_error]: -: --spec auto"),
        "{}",
        r.stderr
    );
    // With a spec, stdin is one more stream.
    let r = run_bin(
        &[
            "export",
            "--spec",
            &data.spec_path,
            "--batch-size",
            "5",
            "-",
            &data.files[1],
            &s(&out),
        ],
        Some(Path::new(&data.files[0])),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("exported {RECORDS} records")),
        "{}",
        r.stderr
    );
    check_parquet(&data, &out);
}

#[test]
fn an_output_directory_named_with_a_slash_is_written_beside_not_inside() {
    let data = Data::new(EXAMPLE_SPEC, example);
    let out = data.dir.join("cols");
    std::fs::create_dir(&out).unwrap();
    data.export(Path::new(&format!("{}/", s(&out))), &[]);
    check_npy(&data, &out);
}

#[test]
fn a_bad_spec_file_is_a_usage_error() {
    let data = Data::new(EXAMPLE_SPEC, example);
    let bad = data.dir.join("bad.json");
    std::fs::write(&bad, r#"{"features": {"x": {"form": "fixed_len"}}}"#).unwrap();
    let out = data.dir.join("o.parquet");
    let r = run_utf8(&["export", "--spec", &s(&bad), &data.files[0], &s(&out)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.starts_with("error[usage_error]: "), "{}", r.stderr);
    assert!(r.stderr.contains("invalid spec"), "{}", r.stderr);
    nothing_left(&data.dir, &out);
}

// ---------------------------------------------------------------------------
// numpy and pyarrow, when python3 has them

/// Says on the process's own stderr (not the test harness's captured
/// output, which a passing test hides) that a check did not run.
fn skip(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIP: {why}");
}

fn python_has(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// FNV-1a, 64 bits: the checksum both sides compute of an array's data.
fn fnv1a(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

const NUMPY_SCRIPT: &str = r#"
import sys, os, numpy as np
def fnv(b):
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    if name.endswith(".npy"):
        a = np.load(os.path.join(d, name))
        print(name, a.dtype.str, ",".join(map(str, a.shape)), fnv(a.tobytes()))
"#;

fn numpy_check(dir: &Path, files: &[(String, Npy)]) {
    if !python_has("numpy") {
        skip("numpy not installed (python3 -c 'import numpy' failed): the .npy files were not loaded with numpy");
        return;
    }
    let out = python(NUMPY_SCRIPT, &[&s(dir)]);
    let mut expected: Vec<String> = files
        .iter()
        .map(|(name, npy)| {
            let shape: Vec<String> = npy.shape.iter().map(ToString::to_string).collect();
            format!(
                "{name} {} {} {}",
                npy.descr,
                shape.join(","),
                fnv1a(&npy.data)
            )
        })
        .collect();
    expected.sort();
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got, expected);
}

const PYARROW_SCRIPT: &str = r#"
import sys, pyarrow.parquet as pq, pyarrow.compute as pc
t = pq.read_table(sys.argv[1])
meta = pq.read_metadata(sys.argv[1]).metadata
print(t.num_rows)
print(pc.sum(t.column(sys.argv[2])).as_py())
print(len(pc.list_flatten(t.column(sys.argv[3]))))
print(b"recordwire.spec" in meta)
"#;

/// pyarrow reads the file: its rows, the sum of the scalar column `sum_of`
/// and the number of values of the list column `list`.
fn pyarrow_check(path: &Path, sum_of: &str, sum: i64, list: &str) {
    if !python_has("pyarrow.parquet") {
        skip("pyarrow not installed (python3 -c 'import pyarrow.parquet' failed): the Parquet file was not read with pyarrow");
        return;
    }
    let out = python(PYARROW_SCRIPT, &[&s(path), sum_of, list]);
    let read = parquet_out::read(path);
    let values = read.rows[list]
        .iter()
        .map(|v| match v {
            V::L(l) => l.len(),
            _ => panic!("{list} is not a list"),
        })
        .sum::<usize>();
    assert_eq!(out, format!("{RECORDS}\n{sum}\n{values}\nTrue\n"));
}
