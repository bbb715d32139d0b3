//! The payload of a TFRecord file when `--payload` is not given
//! (docs/FORMAT.md §2.4): SequenceExample files are read as such, with a note
//! on stderr (§9.5).

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
