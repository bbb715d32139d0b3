//! The built-in schemas (`--message NAME` with no `.proto`) and the
//! detection of TensorBoard event files and ELWC files: on the real files
//! (the Lingvo event file, TensorFlow Ranking's two ELWC files) and on
//! files made here, with a tf.Example file and random bytes that must stay
//! what they are.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use prost::Message;
use recordwire::frame::{file_of, Framing};
use recordwire::wire::encode_varint;

use crate::support::cli::{real_files, run};
use crate::support::prost_mirror::tf;

const EVENT: &str = "tensorflow.Event";
const ELWC: &str = "tensorflow.serving.ExampleListWithContext";

/// The real file whose name ends with `suffix` (the folder is there: a
/// file missing from it is a failure, not a skip).
fn real(files: &[String], suffix: &str) -> String {
    files
        .iter()
        .find(|f| f.ends_with(suffix))
        .unwrap_or_else(|| panic!("no real file *{suffix}"))
        .clone()
}

fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The `format:` line of `inspect`.
fn format_line(file: &str) -> String {
    let (code, out, err) = run(&["inspect", file]);
    assert_eq!(code, 0, "{file}: {err}");
    out.lines()
        .find(|l| l.starts_with("format:"))
        .expect("a format line")
        .to_owned()
}

#[test]
fn the_real_event_file_prints_as_events() {
    let Some(files) = real_files() else { return };
    let file = real(&files, "events.out.tfevents.test");
    let (code, out, err) = run(&["cat", "--message", EVENT, &file]);
    assert_eq!((code, err.as_str()), (0, ""));
    let events = json_lines(&out);
    assert_eq!(events.len(), 361);
    assert!(
        events[0]["file_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("brain.Event:")),
        "{}",
        events[0]
    );
    // Every later event is a step's summary of tagged values.
    for e in &events[1..] {
        assert!(e["wall_time"].is_number(), "{e}");
        let values = e["summary"]["value"].as_array().expect("summary values");
        assert!(values.iter().all(|v| v["tag"].is_string()), "{e}");
    }

    // Without --message, the file is detected as events and printed the same.
    let (code, detected, err) = run(&["cat", &file]);
    assert_eq!(code, 0);
    assert_eq!(detected, out);
    assert_eq!(
        err,
        format!("note: {file}: records read as {EVENT} (detected by their fields), by its built-in schema; --payload or --message to force\n")
    );
    assert!(format_line(&file).ends_with(&format!(", {EVENT} payloads")));
    let (_, _, err) = run(&["inspect", &file]);
    assert!(!err.contains("tf.Example"), "{err}");
    let (code, out, _) = run(&["inspect", "--json", &file]);
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["message"], EVENT);
    assert_eq!(report["records"], 361);

    // `get` prints the records it is asked for the same way.
    let (code, got, _) = run(&["get", &file, "0", "360"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = detected.lines().collect();
    assert_eq!(got, format!("{}\n{}\n", lines[0], lines[360]));

    // A named payload is read as named.
    let (code, out, _) = run(&["cat", "--payload", "example", "--limit", "1", &file]);
    assert_eq!((code, out.as_str()), (0, "{}\n"));
}

#[test]
fn the_real_elwc_files_print_as_elwc() {
    let Some(files) = real_files() else { return };
    // (file, records, with a context): the TFR-BERT file has none, and is
    // told from ExampleLists by its name only.
    for (suffix, records, context) in [
        ("examples__data__eval_elwc.tfrecord", Some(10), true),
        ("testdata__tfrbert_elwc_test.tfrecord", None, false),
    ] {
        let file = real(&files, suffix);
        let (code, out, err) = run(&["cat", "--message", ELWC, &file]);
        assert_eq!((code, err.as_str()), (0, ""), "{file}");
        let lists = json_lines(&out);
        if let Some(records) = records {
            assert_eq!(lists.len(), records, "{file}");
        }
        assert!(!lists.is_empty(), "{file}");
        for l in &lists {
            let examples = l["examples"].as_array().expect("examples");
            assert!(!examples.is_empty(), "{l}");
            assert!(
                examples
                    .iter()
                    .all(|e| e["features"]["feature"].is_object()),
                "{l}"
            );
            assert_eq!(
                l["context"]["features"]["feature"].is_object(),
                context,
                "{l}"
            );
        }
        // Detected: the same lines, and no "not a tf.Example" note.
        let (code, detected, err) = run(&["cat", &file]);
        assert_eq!(code, 0, "{file}: {err}");
        assert_eq!(detected, out, "{file}");
        assert!(err.contains(&format!("records read as {ELWC}")), "{err}");
        assert!(!err.contains("tf.Example"), "{err}");
        assert!(format_line(&file).ends_with(&format!(", {ELWC} payloads")));
    }
}

#[test]
fn an_unknown_builtin_name_is_a_usage_error_that_lists_them() {
    let (code, out, err) = run(&[
        "cat",
        "--message",
        "tensorflow.Nothing",
        "testdata/ref/small.tfrecord",
    ]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("tensorflow.Nothing is not a built-in message"),
        "{err}"
    );
    assert!(err.contains(EVENT) && err.contains(ELWC), "{err}");
}

#[test]
fn a_builtin_example_reads_as_the_payload_does() {
    // `tensorflow.Example` by the built-in schema: the protobuf JSON
    // mapping of the records that `cat` prints in its own form.
    let (code, out, err) = run(&[
        "cat",
        "--message",
        "tensorflow.Example",
        "testdata/ref/small.tfrecord",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 10);
    assert!(lines.iter().all(|l| l["features"]["feature"].is_object()));
}

fn len_field(n: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_varint((u64::from(n) << 3) | 2, &mut out);
    encode_varint(body.len() as u64, &mut out);
    out.extend_from_slice(body);
    out
}

/// `Event { wall_time, step }`, with `file_version` when `version`.
fn event(step: u8, version: bool) -> Vec<u8> {
    let mut e = vec![0x09];
    e.extend_from_slice(&(1.7e9 + f64::from(step)).to_le_bytes());
    e.extend_from_slice(&[0x10, step]);
    if version {
        e.extend(len_field(3, b"brain.Event:2"));
    }
    e
}

fn example(name: &str) -> Vec<u8> {
    let mut features = tf::Features::default();
    features.feature.insert(
        name.into(),
        tf::Feature {
            kind: Some(tf::Kind::BytesList(tf::BytesList {
                value: vec![b"v".to_vec()],
            })),
        },
    );
    tf::Example {
        features: Some(features),
    }
    .encode_to_vec()
}

fn write(dir: &Path, name: &str, records: &[Vec<u8>]) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        file_of(Framing::TfRecord, records.iter().map(Vec::as_slice)),
    )
    .expect("a temporary file");
    path.to_str().expect("a UTF-8 path").to_owned()
}

#[test]
fn made_files_are_detected_by_their_content() {
    let dir = tempfile::tempdir().unwrap();
    // An event file: its first record says so.
    let mut events = vec![event(0, true)];
    events.extend((1..5).map(|s| event(s, false)));
    let file = write(dir.path(), "run.tfrecord", &events);
    assert!(format_line(&file).ends_with(&format!(", {EVENT} payloads")));
    let (code, out, _) = run(&["cat", &file]);
    assert_eq!(code, 0);
    assert_eq!(
        out.lines().next(),
        Some(r#"{"wall_time":1700000000.0,"file_version":"brain.Event:2"}"#)
    );
    // --features picks tf.Example features: the records are read as
    // tf.Examples then (empty ones), with the note that they look like events.
    let (code, out, err) = run(&["cat", "--features", "x", &file]);
    assert_eq!(code, 0);
    assert_eq!(out, "{}\n".repeat(5));
    assert!(
        err.contains("they look like TensorBoard tensorflow.Event"),
        "{err}"
    );
    let (code, out, _) = run(&["get", "--features", "x", &file, "1"]);
    assert_eq!((code, out.as_str()), (0, "{}\n"));
    // Without its first record, only TensorBoard's name tells.
    let tail = &events[1..];
    let unnamed = write(dir.path(), "tail.tfrecord", tail);
    assert!(format_line(&unnamed).ends_with(", example payloads"));
    let named = write(dir.path(), "events.out.tfevents.1700000000.host", tail);
    assert!(format_line(&named).ends_with(&format!(", {EVENT} payloads")));

    // ELWC records, with a context; without one they could be ExampleLists.
    let mut elwc = len_field(1, &example("doc"));
    elwc.extend(len_field(1, &example("doc")));
    elwc.extend(len_field(2, &example("query")));
    let file = write(dir.path(), "elwc.tfrecord", &[elwc.clone(), elwc]);
    assert!(format_line(&file).ends_with(&format!(", {ELWC} payloads")));
    let (code, out, _) = run(&["cat", &file]);
    assert_eq!(code, 0);
    assert_eq!(
        out.lines().next(),
        Some(
            r#"{"examples":[{"features":{"feature":{"doc":{"bytes_list":{"value":["dg=="]}}}}},{"features":{"feature":{"doc":{"bytes_list":{"value":["dg=="]}}}}}],"context":{"features":{"feature":{"query":{"bytes_list":{"value":["dg=="]}}}}}}"#
        )
    );
    let list = len_field(1, &example("doc"));
    let file = write(dir.path(), "list.tfrecord", std::slice::from_ref(&list));
    assert!(!format_line(&file).contains(ELWC));
    let file = write(dir.path(), "list_elwc.tfrecord", &[list]);
    assert!(format_line(&file).ends_with(&format!(", {ELWC} payloads")));

    // A tf.Example file stays one.
    let file = write(dir.path(), "examples", &[example("a"), example("b")]);
    assert!(format_line(&file).ends_with(", example payloads"));
}

#[test]
fn random_bytes_are_not_taken_for_events_or_elwc() {
    let dir = tempfile::tempdir().unwrap();
    // A fixed xorshift stream: records of random bytes, and records that
    // begin with an Event's first tag (0x09, a double) then go random.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..64 {
        let records: Vec<Vec<u8>> = (0..4)
            .map(|i| {
                let len = 1 + (next() % 64) as usize;
                let mut r: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                if round % 2 == 0 && i == 0 {
                    r[0] = 0x09;
                }
                r
            })
            .collect();
        let file = write(
            dir.path(),
            &format!("events.out.tfevents.{round}"),
            &records,
        );
        let (_, out, err) = run(&["inspect", &file]);
        assert!(
            !out.contains(EVENT) && !out.contains(ELWC) && !err.contains("records read as"),
            "round {round}: {out}{err}"
        );
    }
}

#[test]
fn detection_names_only_the_event_and_elwc_real_files() {
    use recordwire::io::{OpenOptions, Source};
    use recordwire::view::PayloadSniffer;
    let Some(files) = real_files() else { return };
    let mut named = Vec::new();
    for f in &files {
        let mut source = Source::open(f, &OpenOptions::default()).expect("a real file opens");
        let mut sniffer = PayloadSniffer::new().with_name(f);
        while let Some(Ok(record)) = source.next_record() {
            if sniffer.feed(record.data) {
                break;
            }
        }
        if let Some(message) = sniffer.message() {
            let short = f.rsplit("__").next().expect("a name");
            named.push((short.to_owned(), message));
        }
    }
    assert_eq!(
        named,
        [
            ("events.out.tfevents.test".to_owned(), EVENT),
            ("eval_elwc.tfrecord".to_owned(), ELWC),
            ("tfrbert_elwc_test.tfrecord".to_owned(), ELWC),
        ]
    );
}
