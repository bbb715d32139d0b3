//! The batched decoder against TensorFlow itself: every fixture of
//! `testdata/batch/cases/` (written by `testdata/batch/make.py`, which ran
//! `tf.io.parse_example` / `parse_sequence_example`) decoded here must give
//! TensorFlow's values bit for bit, or fail on the same record with the same
//! feature; specs TensorFlow refuses are refused.
//!
//! Where TensorFlow's fast parser departs from protobuf's rules on
//! non-canonical wire data (`WIRE_DIVERGENCES`), recordwire keeps protobuf's
//! rules (the crate's contract, docs/FORMAT.md §4); those cases are checked
//! against what protobuf's rules give instead.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use base64::Engine;
use recordwire::batch::{decode, Batch, Column, DType, Decoder, Form, Spec};
use recordwire::ErrorKind;
use serde_json::Value;

/// Cases where TensorFlow's fast parser reads wire data differently from
/// protobuf (and from TensorFlow's own proto parsing), with what recordwire
/// does instead.
const WIRE_DIVERGENCES: &[(&str, &str)] = &[
    ("feature_two_kinds", "a Feature with two lists: protobuf's last oneof member wins, TF reads the first"),
    ("int64_list_two_packed_chunks", "two packed runs: protobuf concatenates them, TF keeps the first"),
    ("int64_list_unpacked_then_packed", "mixed packing: protobuf concatenates, TF refuses the record"),
    ("float_list_packed_odd_length", "a packed float run of 4n+k bytes: protobuf refuses, TF drops the tail"),
    ("map_entry_extra_field", "an unknown field in a map entry: protobuf skips it, TF refuses the record"),
    ("map_entry_key_only", "a map entry without a value: protobuf reads an empty Feature, TF refuses the record"),
    ("features_unknown_field", "an unknown field in Features: protobuf skips it, TF refuses the record"),
    ("seq_map_entry_value_before_key", "value before key: protobuf accepts (as parse_example does), parse_sequence_example refuses"),
    ("unknown_kind_in_spec", "a Feature holding an unknown field: protobuf skips it (a Feature with no list), TF refuses the record"),
    ("unknown_kind_var_len", "see unknown_kind_in_spec"),
    ("seq_empty_batch", "an empty batch: TF fails a context FixedLen without default with no record to blame; recordwire gives an empty batch"),
];

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/batch/cases")
}

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

/// A column's values as TensorFlow's fixture writes them.
fn values_json(c: &Column<'_>) -> Vec<Value> {
    match c.dtype() {
        DType::Int64 => c
            .values::<i64>()
            .unwrap()
            .iter()
            .map(|&v| v.into())
            .collect(),
        DType::Float32 => c
            .values::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits().into())
            .collect(),
        DType::Bytes => (0..c.len())
            .map(|i| {
                base64::engine::general_purpose::STANDARD
                    .encode(c.bytes_value(i).unwrap())
                    .into()
            })
            .collect(),
        d => panic!("{d}"),
    }
}

fn shape_json(s: &[usize]) -> Vec<Value> {
    s.iter().map(|&d| (d as u64).into()).collect()
}

fn check_column(case: &str, c: &Column<'_>, want: &Value) {
    let name = c.name();
    if let Some(dense) = want.get("dense") {
        assert_eq!(
            Value::from(shape_json(c.shape())),
            dense["shape"],
            "{case}: {name} shape"
        );
        assert_eq!(
            Value::from(values_json(c)),
            dense["values"],
            "{case}: {name} values"
        );
    } else {
        let sparse = &want["sparse"];
        let s = c
            .sparse()
            .unwrap_or_else(|| panic!("{case}: {name} has no sparse form"));
        let rank = s.dense_shape.len();
        let indices: Vec<Value> = s
            .indices
            .chunks(rank)
            .map(|i| Value::from(i.to_vec()))
            .collect();
        assert_eq!(
            Value::from(indices),
            sparse["indices"],
            "{case}: {name} indices"
        );
        assert_eq!(
            Value::from(values_json(c)),
            sparse["values"],
            "{case}: {name} values"
        );
        assert_eq!(
            Value::from(shape_json(s.dense_shape)),
            sparse["dense_shape"],
            "{case}: {name} dense_shape"
        );
    }
}

/// The fixture's spec with every var_len feature asking for the sparse form
/// (what TensorFlow returns for them).
fn spec_of(v: &Value) -> Result<Spec, recordwire::batch::SpecError> {
    let spec = Spec::from_json(v.to_string().as_bytes())?;
    let sparse = |fs: &[recordwire::batch::FeatureSpec]| {
        fs.iter()
            .map(|f| {
                let mut f = f.clone();
                f.sparse = f.form == Form::VarLen;
                f
            })
            .collect::<Vec<_>>()
    };
    Spec::new(
        spec.payload(),
        sparse(spec.features()),
        sparse(spec.sequence()),
    )
}

/// Messages of specs TensorFlow refuses before it reads a record.
fn is_spec_error(message: &str) -> bool {
    [
        "Unsupported FixedLenSequenceFeature",
        "Unsupported: FixedLenSequenceFeature",
        "must be None",
        "Input to reshape",
    ]
    .iter()
    .any(|m| message.contains(m))
}

fn run_case(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap();
    let case: Value = serde_json::from_str(&text).unwrap();
    let name = case["name"].as_str().unwrap().to_string();
    let expect = &case["expect"];
    let spec = match spec_of(&case["spec"]) {
        Ok(spec) => spec,
        Err(e) => {
            let msg = expect["error"]["message"].as_str().unwrap_or_default();
            return if is_spec_error(msg) {
                Ok(())
            } else {
                Err(format!("{name}: spec refused ({e}), TensorFlow took it"))
            };
        }
    };
    let records: Vec<Vec<u8>> = case["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| b64(r.as_str().unwrap()))
        .collect();
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut batch = Batch::new();
    let result = decode(&payloads, &spec, &mut batch);
    // The same on two threads.
    let mut two = Batch::new();
    let result2 = Decoder::new(2).decode(&payloads, &spec, &mut two);
    assert_eq!(
        result.as_ref().map_err(|e| e.to_string()),
        result2.as_ref().map_err(|e| e.to_string()),
        "{name}"
    );
    if let Some(err) = expect.get("error") {
        let msg = err["message"].as_str().unwrap_or_default();
        if is_spec_error(msg) {
            return Err(format!(
                "{name}: TensorFlow refused the spec ({msg}); recordwire took it"
            ));
        }
        let Err(e) = result else {
            return Err(format!(
                "{name}: TensorFlow failed ({msg}); recordwire decoded {} rows",
                batch.rows()
            ));
        };
        if let Some(r) = err["record"].as_u64() {
            if e.record() != Some(r) {
                return Err(format!(
                    "{name}: TensorFlow blames record {r}, recordwire: {e}"
                ));
            }
            assert_eq!(
                batch.rows() as u64,
                r,
                "{name}: the rows before the failing record are kept"
            );
        }
        if let (Some(f), ErrorKind::Feature { feature, .. }) = (err["feature"].as_str(), e.kind()) {
            if &**feature != f {
                return Err(format!(
                    "{name}: TensorFlow blames feature {f}, recordwire: {e}"
                ));
            }
        }
        assert!(e.offset().is_some(), "{name}: {e}");
        return Ok(());
    }
    if let Err(e) = result {
        return Err(format!("{name}: TensorFlow decoded it, recordwire: {e}"));
    }
    for (fname, want) in expect["ok"].as_object().unwrap() {
        check_column(&name, batch.column(fname).unwrap(), want);
    }
    if let Some(seq) = expect.get("sequence").and_then(Value::as_object) {
        for (fname, want) in seq {
            check_column(
                &name,
                batch.sequence().iter().find(|c| c.name() == fname).unwrap(),
                want,
            );
        }
    }
    if let Some(lengths) = expect.get("lengths").and_then(Value::as_object) {
        for (fname, want) in lengths {
            let c = batch.sequence().iter().find(|c| c.name() == fname).unwrap();
            assert_eq!(
                &Value::from(c.lengths().unwrap().to_vec()),
                want,
                "{name}: {fname} lengths"
            );
        }
    }
    Ok(())
}

#[test]
fn every_tensorflow_fixture_is_matched() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 100,
        "the fixtures are missing: {}",
        paths.len()
    );
    let mut failures = Vec::new();
    let mut diverged = Vec::new();
    for p in &paths {
        let case = p.file_stem().unwrap().to_str().unwrap();
        let r = run_case(p);
        match (WIRE_DIVERGENCES.iter().any(|(c, _)| *c == case), r) {
            (false, Err(e)) => failures.push(e),
            (true, Ok(())) => failures.push(format!(
                "{case}: listed as a divergence but matches TensorFlow"
            )),
            (true, Err(e)) => diverged.push(e),
            (false, Ok(())) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from TensorFlow:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
    assert_eq!(diverged.len(), WIRE_DIVERGENCES.len(), "{diverged:#?}");
}
