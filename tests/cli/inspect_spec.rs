//! `recordwire inspect --spec`: the spec inferred from every record of the
//! files, as JSON that `batch::Spec::from_json` reads back, or as TensorFlow
//! Python.

#![allow(clippy::unwrap_used)]

use recordwire::batch::{DType, Form, Spec};
use recordwire::view::PayloadKind;

use crate::support::cli::run_utf8;

fn spec_of(args: &[&str]) -> Spec {
    let out = run_utf8(args);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    Spec::from_json(out.stdout.as_bytes()).unwrap_or_else(|e| {
        panic!(
            "{args:?} printed a spec that does not read back: {e}\n{}",
            out.stdout
        )
    })
}

fn form_of<'s>(spec: &'s Spec, sequence: bool, name: &str) -> (&'s Form, DType) {
    let part = if sequence {
        spec.sequence()
    } else {
        spec.features()
    };
    let f = part
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no {name} in {}", spec.to_json()));
    (&f.form, f.dtype)
}

fn fixed(shape: &[usize]) -> Form {
    Form::FixedLen {
        shape: shape.to_vec(),
        default: None,
    }
}

#[test]
fn the_spec_of_a_tensorflow_file_reads_back_with_the_forms_of_its_features() {
    let spec = spec_of(&["inspect", "--spec", "testdata/ref/small.tfrecord"]);
    assert_eq!(spec.payload(), PayloadKind::Example);
    assert_eq!(form_of(&spec, false, "label"), (&fixed(&[]), DType::Int64));
    assert_eq!(form_of(&spec, false, "image"), (&fixed(&[]), DType::Bytes));
    assert_eq!(
        form_of(&spec, false, "bbox"),
        (&fixed(&[4]), DType::Float32)
    );
    assert_eq!(spec.features().len(), 3);

    let spec = spec_of(&["inspect", "--spec", "testdata/ref/examples.tfrecord"]);
    assert_eq!(form_of(&spec, false, "w"), (&Form::VarLen, DType::Float32));
    assert_eq!(form_of(&spec, false, "blob"), (&Form::VarLen, DType::Bytes));
}

#[test]
fn a_sequence_example_file_gives_context_and_sequence_features() {
    let out = run_utf8(&[
        "inspect",
        "--spec",
        "testdata/ref/sequence_examples.tfrecord",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Detected, and said, as other commands say it.
    assert!(
        out.stderr.contains("records read as sequence_example"),
        "{}",
        out.stderr
    );
    // Features the inference leaves out are noted, one `note:` line each.
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("note: \"empty_list\": left out")),
        "{}",
        out.stderr
    );
    let spec = Spec::from_json(out.stdout.as_bytes()).unwrap();
    assert_eq!(spec.payload(), PayloadKind::SequenceExample);
    assert_eq!(
        form_of(&spec, false, "fps"),
        (&Form::VarLen, DType::Float32)
    );
    assert_eq!(
        form_of(&spec, true, "tokens"),
        (&Form::VarLen, DType::Int64)
    );
    let audio = Form::FixedLenSequence {
        shape: vec![8],
        allow_missing: true,
        default: None,
    };
    assert_eq!(form_of(&spec, true, "audio"), (&audio, DType::Float32));
}

#[test]
fn one_spec_over_several_files_and_the_ofrecord_payload() {
    // The label is fixed_len in each file alone; over both, still one value each.
    let spec = spec_of(&[
        "inspect",
        "--spec",
        "testdata/ref/small.tfrecord",
        "testdata/ref/small.tfrecord",
    ]);
    assert_eq!(form_of(&spec, false, "label"), (&fixed(&[]), DType::Int64));
    let spec = spec_of(&["inspect", "--spec", "testdata/ref/ofrecord.part-0"]);
    assert_eq!(spec.payload(), PayloadKind::OfRecord);
    assert_eq!(
        form_of(&spec, false, "int32"),
        (&Form::VarLen, DType::Int32)
    );
    assert_eq!(
        form_of(&spec, false, "doubles"),
        (&Form::VarLen, DType::Float64)
    );
}

#[test]
fn files_of_different_payloads_are_a_usage_error() {
    let out = run_utf8(&[
        "inspect",
        "--spec",
        "testdata/ref/small.tfrecord",
        "testdata/ref/sequence_examples.tfrecord",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("error[usage_error]: "),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("one spec reads one payload"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn spec_format_tf_prints_tensorflow_python() {
    let out = run_utf8(&[
        "inspect",
        "--spec",
        "--spec-format",
        "tf",
        "testdata/ref/small.tfrecord",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("features = {"), "{}", out.stdout);
    assert!(
        out.stdout.contains(r#""label": tf.io.FixedLenFeature("#),
        "{}",
        out.stdout
    );
    // `--spec-format` goes with `--spec`; `--json` does not.
    let out = run_utf8(&[
        "inspect",
        "--spec-format",
        "tf",
        "testdata/ref/small.tfrecord",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = run_utf8(&["inspect", "--spec", "--json", "testdata/ref/small.tfrecord"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn a_damaged_record_stops_the_inference_as_inspect_does() {
    let out = run_utf8(&["inspect", "--spec", "testdata/bad/tf_decode_error.tfrecord"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "error[decode_error]: testdata/bad/tf_decode_error.tfrecord: record 2 at byte 389"
        ),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}

#[test]
fn notes_quote_garbled_feature_names_on_one_line() {
    // An ELWC file read as tf.Example: its "names" are whole nested
    // messages. Each note is one line, the name quoted as JSON.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("junk.tfrecord");
    let name = b"\n\x0fdocument_tokens\x12\x03\n\x01a\x7f".to_vec();
    let mut features = recordwire::encode::Features::new();
    features.insert(name, recordwire::encode::Feature::None);
    let record = recordwire::encode::Example::with_features(features)
        .to_bytes()
        .expect("encode");
    std::fs::write(
        &path,
        recordwire::frame::file_of(recordwire::frame::Framing::TfRecord, [record.as_slice()]),
    )
    .expect("write");
    let out = dir.path().join("out.parquet");
    let (path, out) = (
        path.to_str().expect("UTF-8 path"),
        out.to_str().expect("UTF-8 path"),
    );
    for args in [
        &["inspect", "--spec", path][..],
        &["export", "--spec", "auto", path, out][..],
    ] {
        let (_, _, err) = crate::support::cli::run(args);
        let note = "note: \"\\n\\u000fdocument_tokens\\u0012\\u0003\\n\\u0001a\\u007f\": left out, no record sets its list (the type is unknown)";
        assert!(err.lines().any(|l| l == note), "{args:?}: {err}");
        assert!(
            err.lines()
                .all(|l| l.starts_with("note:") || l.starts_with("error")),
            "{err}"
        );
    }
}
