//! Columns by field path (issue 38, point 4): `recordwire::schema::
//! schema_columns` over the records of `testdata/schema/`, each column's
//! rows checked against the oracle's `dict_all` (protobuf's
//! `json_format.MessageToDict` with the fields that have no presence at
//! their defaults, made by `testdata/gen/make_schema_fixtures.py`): a key
//! that is missing there is a field with presence that is absent (null
//! here); the rest is the value in MessageToDict's form (int64 as strings,
//! bytes in base64, enums by name, floats by value). And `recordwire export
//! --columns` writes the same columns to Parquet.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use base64::Engine as _;
use recordwire::frame::{records, Framing, ReadOptions};
use recordwire::schema::{schema_columns, ColumnOptions, JsonOptions, Schema};
use serde_json::{Number, Value};

use crate::support::cli::run;

/// The payloads of `testdata/schema/NAME.tfrecord`, each with its offset.
fn payloads(name: &str) -> (Vec<u8>, Vec<(usize, usize, u64)>) {
    let file = std::fs::read(format!("testdata/schema/{name}.tfrecord")).expect("the fixture");
    let spans = records(&file, Framing::TfRecord, ReadOptions::default())
        .map(|r| {
            let r = r.expect("a well-framed record");
            let start = usize::try_from(r.data_offset).expect("an offset");
            (start, start + r.data.len(), r.data_offset)
        })
        .collect();
    (file, spans)
}

fn schema(name: &str, message: &str) -> Schema {
    let set = std::fs::read(format!("testdata/schema/{name}.pb")).expect("the descriptor set");
    Schema::from_descriptor_set(&set, message).expect("the message")
}

fn columns(name: &str, message: &str, paths: &[&str], options: &ColumnOptions) -> RecordBatch {
    let (file, spans) = payloads(name);
    schema_columns(
        &schema(name, message),
        paths,
        spans.iter().map(|&(s, e, at)| (&file[s..e], at)),
        options,
    )
    .expect("the columns")
}

/// The oracle's `dict_all` of every record.
fn expected(name: &str) -> Vec<Value> {
    std::fs::read_to_string(format!("testdata/schema/{name}.expected.jsonl"))
        .expect("the expected values")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("an expected line")["dict_all"].clone())
        .collect()
}

/// The value at `steps` of a MessageToDict object: `Null` where a field is
/// missing (absent with presence), a list where a repeated field is passed
/// through.
fn at_path(v: &Value, steps: &[&str]) -> Value {
    let Some((first, rest)) = steps.split_first() else {
        return v.clone();
    };
    match v.get(*first) {
        None => Value::Null,
        Some(Value::Array(items)) if !rest.is_empty() => {
            Value::Array(items.iter().map(|i| at_path(i, rest)).collect())
        }
        Some(x) => at_path(x, rest),
    }
}

/// Equal as MessageToDict values: numbers by value (a float32 compared as
/// float32), an enum's name or, where it has none, its number.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(p), Some(q), _, _) => p == q,
                (_, _, Some(p), Some(q)) => p == q,
                // Within an ulp: serde_json's parser (without its
                // `float_roundtrip`) may be one ulp off the text.
                _ => match (x.as_f64(), y.as_f64()) {
                    (Some(p), Some(q)) => {
                        p == q || (p - q).abs() <= f64::EPSILON * p.abs().max(q.abs())
                    }
                    _ => false,
                },
            }
        }
        (Value::String(s), Value::Number(n)) | (Value::Number(n), Value::String(s)) => {
            match s.strip_prefix("f32:") {
                Some(bits) => {
                    n.as_f64().map(|f| (f as f32).to_bits().to_string()) == Some(bits.to_owned())
                }
                None => *s == n.to_string(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn float(x: f64, single: bool) -> Value {
    if x.is_nan() {
        Value::String("NaN".into())
    } else if x.is_infinite() {
        Value::String(if x > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else if single {
        // Compared as a float32 by [`same`] (protobuf's text of a float32 is
        // not always the shortest).
        Value::String(format!("f32:{}", (x as f32).to_bits()))
    } else {
        Value::Number(Number::from_f64(x).expect("a finite number"))
    }
}

/// Row `row` of `array` in MessageToDict's form (`Null` for null). A
/// `LargeBinary` field named `children` is the recursion cut of `Inner`:
/// printed by `inner`.
fn dict(array: &dyn Array, row: usize, name: &str, inner: &Schema) -> Value {
    if array.is_null(row) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::Boolean => Value::Bool(array.as_boolean().value(row)),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(row).into(),
        DataType::UInt32 => array.as_primitive::<UInt32Type>().value(row).into(),
        DataType::Int64 => Value::String(array.as_primitive::<Int64Type>().value(row).to_string()),
        DataType::UInt64 => {
            Value::String(array.as_primitive::<UInt64Type>().value(row).to_string())
        }
        DataType::Float32 => float(
            f64::from(array.as_primitive::<Float32Type>().value(row)),
            true,
        ),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(row), false),
        DataType::LargeUtf8 => Value::String(array.as_string::<i64>().value(row).to_owned()),
        DataType::LargeBinary => {
            let bytes = array.as_binary::<i64>().value(row);
            if name == "children" {
                let mut json = Vec::new();
                inner
                    .write_json(
                        &mut json,
                        bytes,
                        0,
                        &JsonOptions::default().with_defaults(true),
                    )
                    .expect("a cut Inner that parses");
                serde_json::from_slice(&json).expect("JSON")
            } else {
                Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
            }
        }
        DataType::LargeList(_) => {
            let items = array.as_list::<i64>().value(row);
            Value::Array(
                (0..items.len())
                    .map(|i| dict(&items, i, name, inner))
                    .collect(),
            )
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let mut object = serde_json::Map::new();
            for (f, child) in fields.iter().zip(s.columns()) {
                let v = dict(child, row, f.name(), inner);
                if !v.is_null() {
                    object.insert(f.name().clone(), v);
                }
            }
            Value::Object(object)
        }
        DataType::Map(_, _) => {
            let entries = array.as_map().value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            let mut object = serde_json::Map::new();
            for i in 0..entries.len() {
                let key = match dict(keys, i, "key", inner) {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                object.insert(key, dict(values, i, name, inner));
            }
            Value::Object(object)
        }
        other => panic!("no dict form for {other}"),
    }
}

fn check(name: &str, message: &str, paths: &[&str]) {
    let options = ColumnOptions::default().with_enum_names(true);
    let batch = columns(name, message, paths, &options);
    let want = expected(name);
    assert_eq!(batch.num_rows(), want.len());
    let inner = schema("shapes", "rwtest.Shapes.Inner");
    for (c, path) in paths.iter().enumerate() {
        let steps: Vec<&str> = if path.is_empty() {
            Vec::new()
        } else {
            path.split('.').collect()
        };
        let column = batch.column(c);
        for (row, record) in want.iter().enumerate() {
            let got = dict(column.as_ref(), row, path, &inner);
            let expect = at_path(record, &steps);
            assert!(
                same(&got, &expect),
                "{name} record {row}, path {path:?}:\n got  {got}\n want {expect}"
            );
        }
    }
}

#[test]
fn shapes_columns_are_the_oracles_values() {
    check(
        "shapes",
        "rwtest.Shapes",
        &[
            "",
            "f_double",
            "f_float",
            "f_int32",
            "f_int64",
            "f_uint64",
            "f_sint64",
            "f_fixed32",
            "f_sfixed64",
            "f_bool",
            "f_string",
            "f_bytes",
            "opt_int32",
            "opt_string",
            "r_int32",
            "r_int64",
            "r_double",
            "r_float",
            "r_bool",
            "r_string",
            "r_bytes",
            "r_sint64",
            "r_fixed32",
            "inner",
            "inner.a",
            "inner.children",
            "inner.children.b",
            "inners",
            "inners.a",
            "color",
            "colors",
            "pick_int",
            "pick_text",
            "pick_inner",
            "pick_inner.b",
            "m_str_int",
            "m_int64_str",
            "m_bool_inner",
            "m_uint32_color",
        ],
    );
}

#[test]
fn legacy_columns_are_the_oracles_values() {
    check(
        "legacy",
        "rwtest.Legacy",
        &[
            "",
            "with_default",
            "name",
            "kind",
            "unpacked",
            "packed_ints",
            "blob",
            "grp",
            "grp.g",
        ],
    );
}

#[test]
fn types_of_the_mapping() {
    let batch = columns(
        "shapes",
        "rwtest.Shapes",
        &[
            "inners.children",
            "color",
            "m_bool_inner",
            "inner.a",
            "f_int32",
        ],
        &ColumnOptions::default(),
    );
    let s = batch.schema();
    let types: Vec<String> = s.fields().iter().map(|f| f.to_string()).collect();
    // The recursion of Inner is cut at its second appearance: bytes.
    assert!(types[0].contains("LargeList(non-null Struct(\"a\": non-null Int32, \"b\": non-null LargeUtf8, \"children\": non-null LargeList(non-null LargeBinary)))"), "{}", types[0]);
    assert_eq!(s.field(1).data_type(), &DataType::Int32);
    assert!(matches!(s.field(2).data_type(), DataType::Map(_, false)));
    // Through an absent message: null; a field without presence: never null.
    assert!(s.field(3).is_nullable());
    assert!(!s.field(4).is_nullable());
    // The numbers and the names of an enum agree.
    let names = columns(
        "shapes",
        "rwtest.Shapes",
        &["color"],
        &ColumnOptions::default().with_enum_names(true),
    );
    let numbers = batch.column(1).as_primitive::<Int32Type>();
    let names = names.column(0).as_string::<i64>();
    for row in 0..batch.num_rows() {
        let name = match numbers.value(row) {
            0 => "COLOR_UNSPECIFIED".to_owned(),
            1 => "RED".to_owned(),
            2 => "GREEN".to_owned(),
            n => n.to_string(),
        };
        assert_eq!(names.value(row), name);
    }
}

#[test]
fn well_known_types_are_plain_messages() {
    let batch = columns(
        "wkt",
        "rwtest.Wkt",
        &["", "ts", "w_int32.value", "val"],
        &ColumnOptions::default(),
    );
    assert_eq!(batch.num_rows(), 40);
    let s = batch.schema();
    assert_eq!(
        s.field(1).data_type().to_string(),
        "Struct(\"seconds\": non-null Int64, \"nanos\": non-null Int32)"
    );
    assert_eq!(s.field(2).data_type(), &DataType::Int32);
    assert!(s.field(2).is_nullable());
    assert!(s.field(3).data_type().to_string().contains("LargeBinary"));
    // The wrapper's value where the oracle has one (its JSON form is the value).
    let want = expected("wkt");
    let w = batch.column(2).as_primitive::<Int32Type>();
    for (row, record) in want.iter().enumerate() {
        match record.get("w_int32") {
            Some(v) => assert_eq!(Some(i64::from(w.value(row))), v.as_i64(), "row {row}"),
            None => assert!(w.is_null(row), "row {row}"),
        }
    }
}

#[test]
fn paths_that_do_not_exist_say_what_does() {
    let s = schema("shapes", "rwtest.Shapes");
    let err = schema_columns(
        &s,
        &["inner.nope"],
        std::iter::empty(),
        &ColumnOptions::default(),
    )
    .expect_err("no such field");
    assert_eq!(err.kind().name(), "usage_error");
    let text = err.to_string();
    assert!(text.contains("\"inner.nope\""), "{text}");
    assert!(
        text.contains("rwtest.Shapes.inner has no field \"nope\" (its fields: a, b, children)"),
        "{text}"
    );
    let err = schema_columns(
        &s,
        &["f_int32.x"],
        std::iter::empty(),
        &ColumnOptions::default(),
    )
    .expect_err("not a message");
    assert!(
        err.to_string().contains("only through message fields"),
        "{err}"
    );
    let err = schema_columns(
        &s,
        &["m_str_int.key"],
        std::iter::empty(),
        &ColumnOptions::default(),
    )
    .expect_err("a map ends a path");
    assert!(err.to_string().contains("is a map"), "{err}");
}

#[test]
fn a_malformed_record_is_a_decode_error_at_its_offset() {
    let s = schema("shapes", "rwtest.Shapes");
    // inner (field 30, length 5) holding a = varint cut short.
    let bad: &[u8] = b"\xf2\x01\x02\x08\x80";
    let good: &[u8] = b"";
    let err = schema_columns(
        &s,
        &["inner.a"],
        [(good, 0), (bad, 1000)],
        &ColumnOptions::default(),
    )
    .expect_err("a truncated record");
    assert_eq!(err.kind().name(), "decode_error");
    // The offset of the varint cut short: byte 3 of the record at 1000.
    assert_eq!(err.offset(), Some(1003));
    // Fields no path reads are skipped by their length, not parsed.
    let batch = schema_columns(&s, &["f_int32"], [(bad, 1000)], &ColumnOptions::default())
        .expect("inner is not read");
    assert_eq!(batch.num_rows(), 1);
}

#[test]
fn export_columns_writes_them_to_parquet() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("cols.parquet");
    let out_text = out.display().to_string();
    let paths = ["f_int64", "inners.a", "m_str_int", "pick_inner", "colors"];
    let (code, _, err) = run(&[
        "export",
        "testdata/schema/shapes.tfrecord",
        &out_text,
        "--message",
        "rwtest.Shapes",
        "--descriptor-set",
        "testdata/schema/shapes.pb",
        "--columns",
        &paths.join(","),
        "--enum-names",
        "--batch-size",
        "7",
    ]);
    assert_eq!(code, 0, "{err}");
    // 60 rows: one batch of the reader (its default is 1024 rows).
    let got = read_parquet(&out);
    let want = columns(
        "shapes",
        "rwtest.Shapes",
        &paths,
        &ColumnOptions::default().with_enum_names(true),
    );
    assert_eq!(got.num_rows(), want.num_rows());
    for (c, path) in paths.iter().enumerate() {
        assert_eq!(got.schema().field(c).name(), path);
        assert_eq!(
            got.column(c).to_data(),
            want.column(c).to_data(),
            "column {path}"
        );
    }
}

/// The real Waymo scenario (`testdata/schema/waymo/README.md`): the three
/// columns of the issue, checked against the JSON printer's values of the
/// same record (`Schema::write_json`, itself checked against MessageToDict
/// by `schema_json`; every field of this proto2 schema has presence, so a
/// key the printer leaves out is null here).
#[test]
fn waymo_scenario_columns_are_the_printers_values() {
    let Some(files) = crate::support::realworld::real_files() else {
        return;
    };
    let file = files
        .iter()
        .find(|f| f.ends_with("motion_data_one_scenario.tfrecord"))
        .expect("the Waymo scenario among the real files");
    let schema = Schema::from_proto(
        &["testdata/schema/waymo/waymo_open_dataset/protos/scenario.proto"],
        &["testdata/schema/waymo"],
        "waymo.open_dataset.Scenario",
    )
    .expect("Waymo's scenario.proto");
    let bytes = std::fs::read(file).expect("the real file");
    let records: Vec<(&[u8], u64)> = records(&bytes, Framing::TfRecord, ReadOptions::default())
        .map(|r| {
            let r = r.expect("a well-framed record");
            (r.data, r.data_offset)
        })
        .collect();
    assert_eq!(records.len(), 1);
    let paths = [
        "tracks.states.center_x",
        "scenario_id",
        "map_features.lane.polyline",
    ];
    let batch = schema_columns(
        &schema,
        &paths,
        records.iter().copied(),
        &ColumnOptions::default(),
    )
    .expect("the columns");
    let types: Vec<String> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.data_type().to_string())
        .collect();
    assert_eq!(types[0], "LargeList(non-null LargeList(Float64))");
    assert_eq!(types[1], "LargeUtf8");
    assert!(
        types[2].starts_with("LargeList(LargeList(non-null Struct("),
        "{}",
        types[2]
    );
    let inner = schema_for_cut();
    for (row, &(record, base)) in records.iter().enumerate() {
        let mut json = Vec::new();
        schema
            .write_json(&mut json, record, base, &JsonOptions::default())
            .expect("the printer reads the record");
        let want: Value = serde_json::from_slice(&json).expect("JSON");
        for (c, path) in paths.iter().enumerate() {
            let steps: Vec<&str> = path.split('.').collect();
            let got = dict(batch.column(c).as_ref(), row, path, &inner);
            let expect = at_path(&want, &steps);
            assert!(!got.is_null(), "{path} is empty in the real scenario");
            assert!(
                same(&got, &expect),
                "path {path:?}:\n got  {got}\n want {expect}"
            );
        }
    }
}

/// The schema [`dict`] prints a cut with (none is cut on the Waymo paths).
fn schema_for_cut() -> Schema {
    schema("shapes", "rwtest.Shapes.Inner")
}

/// The Parquet file `out` as one batch.
fn read_parquet(out: &std::path::Path) -> RecordBatch {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let file = std::fs::File::open(out).expect("the Parquet file");
    let mut read: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("a Parquet file")
        .build()
        .expect("a reader")
        .map(|b| b.expect("a batch"))
        .collect();
    assert_eq!(read.len(), 1);
    read.remove(0)
}

#[test]
fn export_without_columns_writes_each_top_level_field() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (name, message) in [("shapes", "rwtest.Shapes"), ("wkt", "rwtest.Wkt")] {
        let out = dir.path().join(format!("{name}.parquet"));
        let (code, _, err) = run(&[
            "export",
            &format!("testdata/schema/{name}.tfrecord"),
            &out.display().to_string(),
            "--message",
            message,
            "--descriptor-set",
            &format!("testdata/schema/{name}.pb"),
        ]);
        assert_eq!(code, 0, "{err}");
        let s = schema(name, message);
        let mut fields: Vec<&str> = s.field_names().collect();
        if name == "wkt" {
            // google.protobuf.Empty: a struct of no fields, which Parquet
            // cannot store, left out with a note.
            assert!(err.contains("note: field empty left out"), "{err}");
            fields.retain(|f| *f != "empty");
        }
        let got = read_parquet(&out);
        let want = columns(name, message, &fields, &ColumnOptions::default());
        assert_eq!(got.schema().fields().len(), fields.len());
        for (c, f) in fields.iter().enumerate() {
            assert_eq!(got.schema().field(c).name(), f);
            assert_eq!(
                got.column(c).to_data(),
                want.column(c).to_data(),
                "{name}: {f}"
            );
        }
    }
}

#[test]
fn export_of_a_malformed_record_says_where_as_cat_does() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("bad.parquet");
    let schema = [
        "--message",
        "rwtest.Shapes",
        "--descriptor-set",
        "testdata/schema/shapes.pb",
    ];
    let bad = "testdata/bad/tf_decode_error.tfrecord";
    let mut cat = vec!["cat"];
    cat.extend_from_slice(&schema);
    cat.push(bad);
    let (cat_code, _, cat_err) = run(&cat);
    let out_text = out.display().to_string();
    let mut export = vec!["export", bad, &out_text, "--columns", "f_int32"];
    export.extend_from_slice(&schema);
    let (code, _, err) = run(&export);
    assert_eq!((code, cat_code), (1, 1), "{err}");
    let line = cat_err
        .lines()
        .find(|l| l.starts_with("error[decode_error]"))
        .expect("cat's error line");
    assert!(line.contains(&format!("{bad}: record ")), "{line}");
    assert!(err.contains(line), "{err}\nwant {line}");
    assert!(!out.exists());
}
