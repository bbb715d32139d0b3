//! The payload of a TFRecord file when `--payload` is not given
//! (docs/FORMAT.md §2.4): SequenceExample files are read as such, with a note
//! on stderr; and the notes of §9.5 on files whose records may not be the
//! message they are read as (other messages read as tf.Example, raw bytes).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use prost::Message;
use recordwire::frame::{file_of, Framing};

use crate::support::cli::{run, run_bin};
use crate::support::prost_mirror::tf;

const SEQ: &str = "testdata/ref/sequence_examples.tfrecord";
const SEQ_JSONL: &str = "testdata/ref/sequence_examples.jsonl";

fn seq_note(name: &str, record: u64) -> String {
    format!(
        "note: {name}: records read as sequence_example (field 2 feature_lists in record {record}); --payload to force\n"
    )
}

fn write(dir: &Path, name: &str, records: &[Vec<u8>]) -> String {
    let path: PathBuf = dir.join(name);
    std::fs::write(
        &path,
        file_of(Framing::TfRecord, records.iter().map(Vec::as_slice)),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

/// A TensorBoard `Event { wall_time, step }` (fields 1: double, 2: int64),
/// without the `file_version` record that begins an event file, in a file
/// without TensorBoard's name: not detected as events (that is
/// builtin_schema.rs), so read as tf.Example, which the notes are about.
fn event(step: u8) -> Vec<u8> {
    let mut e = vec![0x09];
    e.extend_from_slice(&(1.7e9 + f64::from(step)).to_le_bytes());
    e.extend_from_slice(&[0x10, step]);
    e
}

fn example_record() -> Vec<u8> {
    let mut features = tf::Features::default();
    features
        .feature
        .insert("label".into(), bytes_feature(b"cat".to_vec()));
    tf::Example {
        features: Some(features),
    }
    .encode_to_vec()
}

fn bytes_feature(value: Vec<u8>) -> tf::Feature {
    tf::Feature {
        kind: Some(tf::Kind::BytesList(tf::BytesList { value: vec![value] })),
    }
}

#[test]
fn a_sequence_example_file_is_read_as_one_without_payload() {
    let (code, forced, _) = run(&["cat", "--payload", "sequence_example", SEQ]);
    assert_eq!(code, 0);
    assert!(forced.lines().nth(2).unwrap().contains("\"feature_lists\""));

    let (code, out, err) = run(&["cat", SEQ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, forced);
    assert_eq!(err, seq_note(SEQ, 2));

    // `auto` is the default, and can be named.
    let (_, named, err) = run(&["cat", "--payload", "auto", SEQ]);
    assert_eq!((named, err), (forced.clone(), seq_note(SEQ, 2)));

    // A named payload is used as named: the records as tf.Examples (their
    // feature lists skipped), and no note about the choice.
    let (code, out, err) = run(&["cat", "--payload", "example", SEQ]);
    assert_eq!(code, 0);
    assert!(!out.contains("feature_lists"));
    assert_eq!(err, "");

    let (code, out, err) = run(&["verify", SEQ]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert_eq!(
        err,
        format!("{}{SEQ}: 10 valid records, 0 problems\n", seq_note(SEQ, 2))
    );

    let (code, out, err) = run(&["inspect", SEQ]);
    assert_eq!(code, 0);
    assert_eq!(err, seq_note(SEQ, 2));
    assert!(out.contains("sequence_example payloads"), "{out}");
    assert!(out.contains("\nfeature lists:    14\n"), "{out}");

    let (code, out, err) = run(&["get", SEQ, "3"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().next(), forced.lines().nth(3));
    assert_eq!(err, seq_note(SEQ, 2));

    let (code, out, _) = run(&["dump", "--record", "2", SEQ]);
    assert_eq!(code, 0);
    assert!(out.starts_with(&format!(
        "# {SEQ}: tfrecord frames, sequence_example payloads\n"
    )));

    // convert keeps the feature lists: to OFRecord framing the payloads stay
    // SequenceExamples, and they have no OFRecord form.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.ofrecord");
    let target = target.to_str().unwrap();
    let (code, _, err) = run(&["convert", "--out-framing", "ofrecord", SEQ, target]);
    assert_eq!((code, err), (0, seq_note(SEQ, 2)));
    let (_, out, _) = run(&["cat", "--payload", "sequence_example", target]);
    assert_eq!(out, forced);
    let (code, _, err) = run(&["convert", "--out-payload", "ofrecord", SEQ, target]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.ends_with("error[usage_error]: cannot convert sequence_example payloads to ofrecord\n"),
        "{err}"
    );
}

#[test]
fn compressed_and_piped_sequence_examples_are_detected() {
    let (_, forced, _) = run(&["cat", "--payload", "sequence_example", SEQ]);
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("seq.tfrecord.gz");
    let gz = gz.to_str().unwrap();
    let (code, _, err) = run(&["pack", "--payload", "sequence_example", SEQ_JSONL, gz]);
    assert_eq!(code, 0, "{err}");

    let (code, out, err) = run(&["cat", gz]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, forced);
    assert_eq!(err, seq_note(gz, 2));

    for input in [SEQ, gz] {
        let out = run_bin(&["cat", "-"], Some(Path::new(input)));
        assert_eq!(out.code, 0, "{out:?}");
        assert_eq!(out.stdout, forced, "cat - < {input}");
        assert_eq!(out.stderr, seq_note("<stdin>", 2));
    }
}

#[test]
fn a_pipe_is_read_ahead_past_large_records() {
    // Two records with only a large context, then one with feature lists:
    // the evidence is past the first 64 KiB of the pipe.
    let big = |fill: u8| {
        let mut context = tf::Features::default();
        context
            .feature
            .insert("blob".into(), bytes_feature(vec![fill; 100_000]));
        tf::SequenceExample {
            context: Some(context),
            feature_lists: None,
        }
        .encode_to_vec()
    };
    let mut lists = tf::FeatureLists::default();
    lists.feature_list.insert(
        "tokens".into(),
        tf::FeatureList {
            feature: vec![bytes_feature(b"a".to_vec())],
        },
    );
    let third = tf::SequenceExample {
        context: None,
        feature_lists: Some(lists),
    }
    .encode_to_vec();
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "late.tfrecord", &[big(1), big(2), third]);

    let (code, file_out, err) = run(&["cat", &path]);
    assert_eq!(code, 0);
    assert_eq!(err, seq_note(&path, 2));
    let out = run_bin(&["cat", "-"], Some(Path::new(&path)));
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, file_out);
    assert_eq!(out.stderr, seq_note("<stdin>", 2));
    assert_eq!(out.stdout.lines().count(), 3);
    assert!(out.stdout.lines().nth(2).unwrap().contains("\"tokens\""));
}

#[test]
fn records_of_another_message_are_noted() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "events.out.tfevents",
        &(0..5).map(event).collect::<Vec<_>>(),
    );
    let note = format!(
        "note: {path}: 5 of 5 records hold fields tf.Example does not have (first: field 1, wire type 1, in record 0): this may not be a tf.Example file, they look like TensorBoard tensorflow.Event messages; --payload raw shows the bytes\n"
    );

    // The values are what Google's parser gives: empty tf.Examples.
    let (code, out, err) = run(&["cat", &path]);
    assert_eq!(code, 0);
    assert_eq!(out, "{}\n".repeat(5));
    assert_eq!(err, note);

    let (code, out, err) = run(&["verify", &path]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert_eq!(err, format!("{note}{path}: 5 valid records, 0 problems\n"));

    let (code, out, err) = run(&["inspect", &path]);
    assert_eq!(code, 0);
    assert_eq!(err, note);
    assert!(
        out.contains(
            "\nunknown:     5 records hold fields tf.Example does not have (first: field 1, wire type 1, in record 0)\nfeatures:    0\n"
        ),
        "{out}"
    );
    let (code, out, _) = run(&["inspect", "--json", &path]);
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        json["unknown_fields"],
        serde_json::json!({"records": 5, "first": {"record": 0, "field": 1, "wire_type": 1}})
    );

    let one = write(dir.path(), "one.tfevents", &[event(0), example_record()]);
    let (_, out, _) = run(&["inspect", &one]);
    assert!(
        out.contains("\nunknown:     1 record holds fields tf.Example does not have (first: field 1, wire type 1, in record 0)\n"),
        "{out}"
    );

    let (code, _, err) = run(&["get", &path, "4"]);
    assert_eq!(code, 0);
    assert_eq!(
        err,
        format!(
            "note: {path}: 1 of 1 record holds fields tf.Example does not have (first: field 1, wire type 1, in record 4): this may not be a tf.Example file, they look like TensorBoard tensorflow.Event messages; --payload raw shows the bytes\n"
        )
    );

    // A named payload says nothing; raw shows the bytes.
    let (_, _, err) = run(&["cat", "--payload", "example", &path]);
    assert_eq!(err, "");
    let (code, out, err) = run(&["cat", "--payload", "raw", &path]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.starts_with("{\"raw\":\"CQ"), "{out}");

    // Plain tf.Examples and SequenceExamples have nothing to note.
    for file in [
        "testdata/ref/examples.tfrecord",
        SEQ,
        "testdata/ref/ofrecord.part-0",
    ] {
        let (code, _, err) = run(&["verify", file]);
        assert_eq!(code, 0);
        assert_eq!(
            err.lines().filter(|l| l.contains("does not have")).count(),
            0,
            "{file}: {err}"
        );
    }
    let (_, out, _) = run(&["inspect", "--json", "testdata/ref/examples.tfrecord"]);
    assert!(
        out.contains("\"unknown_fields\":{\"records\":0,\"first\":null}"),
        "{out}"
    );
}

#[test]
fn raw_bytes_that_do_not_decode_are_noted() {
    // As magenta's tfrecord_iterator_test.tfrecord.
    let dir = tempfile::tempdir().unwrap();
    let records = [
        b"hello world".to_vec(),
        b"12345".to_vec(),
        b"success".to_vec(),
    ];
    let path = write(dir.path(), "text.tfrecord", &records);

    let (code, out, err) = run(&["cat", &path]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err,
        format!(
            "error[decode_error]: {path}: record 0 at byte 14: end-group tag for field 13 without a matching start\n\
             note: {path}: record 0 does not decode as tf.Example: this may not be a tf.Example file; --payload raw shows the bytes\n"
        )
    );

    let (code, out, err) = run(&["verify", &path]);
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 3);
    assert_eq!(
        err,
        format!(
            "note: {path}: 3 of 3 records do not decode as tf.Example (first: record 0): this may not be a tf.Example file; --payload raw shows the bytes\n\
             {path}: 0 valid records, 3 problems\n"
        )
    );

    let (code, _, err) = run(&["inspect", &path]);
    assert_eq!(code, 1);
    assert!(err.ends_with(&format!("note: {path}: record 0 does not decode as tf.Example: this may not be a tf.Example file; --payload raw shows the bytes\n")), "{err}");

    let (code, out, err) = run(&["cat", "--payload", "raw", &path]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        "{\"raw\":\"aGVsbG8gd29ybGQ=\"}\n{\"raw\":\"MTIzNDU=\"}\n{\"raw\":\"c3VjY2Vzcw==\"}\n"
    );

    // Named, the payload's errors are only errors.
    let (code, _, err) = run(&["cat", "--payload", "example", &path]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_named_payload_that_decodes_only_into_junk_names_is_noted() {
    // tf.Example records parse as OFRecord (field 1 is a map either way),
    // but the names they give are the Example's entries, bytes and all.
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "e.tfrecord",
        &[example_record(), example_record()],
    );
    let (code, out, err) = run(&["cat", "--payload", "ofrecord", &path]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\\n\\u0005label"),
        "the junk is printed as asked: {out}"
    );
    assert_eq!(
        err,
        format!(
            "note: {path}: 2 of 2 records decode as OFRecord only with feature names that are not \
             text (first: record 0, name \"\\n\\u0005label\\u0012\\u0007\\n\\u0005\\n\\u0003cat\"), and they \
             read cleanly as tf.Example: is --payload ofrecord right? (--payload example reads them so)\n"
        )
    );
    // `get` by id says the same of the records it read.
    let (code, _, err) = run(&["get", "--payload", "ofrecord", &path, "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("1 of 1 records decode as OFRecord only with feature names that are not text (first: record 1"), "{err}");
    // The right payload, named or detected: nothing to say.
    for args in [
        &["cat", "--payload", "example", &path][..],
        &["cat", &path][..],
    ] {
        let (code, _, err) = run(args);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
    }
}

#[test]
fn no_junk_names_note_on_the_real_files_under_their_own_payload() {
    let Some(files) = crate::support::cli::real_files() else {
        return;
    };
    let mut noted = 0;
    for f in &files {
        let (_, out, _) = run(&["inspect", f]);
        let payload = ["sequence_example", "ofrecord", "example"]
            .into_iter()
            .find(|p| {
                out.lines()
                    .any(|l| l.starts_with("format:") && l.contains(&format!("{p} payloads")))
            });
        let Some(payload) = payload else { continue };
        let (_, _, err) = run(&["cat", "--payload", payload, f]);
        assert!(!err.contains("not text"), "{f}: {err}");
        noted += 1;
        // The tfx mnist file read as OFRecord is the case the note is for.
        if f.ends_with("mnist.tfrecord") {
            let (code, _, err) = run(&["cat", "--payload", "ofrecord", f]);
            assert_eq!(code, 0);
            assert!(err.contains("1000 of 1000 records decode as OFRecord only with feature names that are not text"), "{err}");
        }
    }
    assert!(noted >= 15, "only {noted} real files were read");
}
