//! Golden-file tests of the printers: `dump`, `inspect` and `cat` on shipped
//! files compared with `testdata/golden/*`. After an intended change of
//! output, regenerate with `UPDATE_GOLDEN=1 cargo test --test cli golden::` and
//! review the diff.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use crate::support::cli;
use cli::run;

fn check(name: &str, args: &[&str], expected_code: i32) {
    let (code, out, err) = run(args);
    assert_eq!(
        code, expected_code,
        "exit status of {args:?}; stderr: {err}"
    );
    let text = if err.is_empty() {
        out
    } else {
        format!("{out}--- stderr\n{err}")
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).expect("write golden file");
        return;
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run UPDATE_GOLDEN=1 cargo test --test cli golden::",
            path.display()
        )
    });
    if golden != text {
        let first = golden
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(golden.lines().count().min(text.lines().count()));
        panic!(
            "{name} differs from {} at line {}:\n  golden: {:?}\n  actual: {:?}\n(UPDATE_GOLDEN=1 regenerates)",
            path.display(),
            first + 1,
            golden.lines().nth(first),
            text.lines().nth(first)
        );
    }
}

#[test]
fn dump_small_tfrecord() {
    check(
        "dump_small.txt",
        &["dump", "testdata/ref/small.tfrecord", "--record", "2"],
        0,
    );
}

#[test]
fn dump_sequence_example() {
    check(
        "dump_sequence_example.txt",
        &[
            "dump",
            "testdata/ref/sequence_examples.tfrecord",
            "--payload",
            "sequence_example",
            "--record",
            "1",
        ],
        0,
    );
}

/// Payloads of no known message (`testdata/decode_raw/`): the guesses, each
/// marked as one (tests/cli/dump_unknown.rs checks them against protoc).
#[test]
fn dump_unknown_payloads() {
    check(
        "dump_unknown.txt",
        &[
            "dump",
            "--payload",
            "raw",
            "testdata/decode_raw/unknown.tfrecord",
        ],
        0,
    );
}

#[test]
fn dump_ofrecord() {
    check(
        "dump_ofrecord.txt",
        &["dump", "testdata/ref/ofrecord.part-0", "--record", "3"],
        0,
    );
}

#[test]
fn dump_stops_at_a_decode_error_with_the_error_line() {
    check(
        "dump_decode_error.txt",
        &[
            "dump",
            "testdata/bad/tf_decode_error.tfrecord",
            "--record",
            "2",
        ],
        1,
    );
}

#[test]
fn inspect_examples() {
    check(
        "inspect_examples.txt",
        &["inspect", "testdata/ref/examples.tfrecord"],
        0,
    );
    check(
        "inspect_sequence_examples.json",
        &[
            "inspect",
            "testdata/ref/sequence_examples.tfrecord",
            "--payload",
            "sequence_example",
            "--json",
        ],
        0,
    );
}

#[test]
fn cat_and_verify_of_damaged_files() {
    check(
        "cat_data_crc_mismatch.txt",
        &["cat", "testdata/bad/tf_data_crc_mismatch.tfrecord"],
        1,
    );
    check(
        "verify_length_crc_mismatch.txt",
        &["verify", "testdata/bad/tf_length_crc_mismatch.tfrecord"],
        1,
    );
}
