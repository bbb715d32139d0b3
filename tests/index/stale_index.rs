//! The `stale_index` files of the hostile suite: `testdata/bad/stale/`
//! (written by its `make.sh`), record files and index files that do not
//! belong together, in both framings and the three index formats. Each must
//! be refused whole with `stale_index`, the index file's name, and the record
//! id and byte offset where the index and the data first disagree, computed
//! here from how the files were made; never used. Checked through the
//! library (`IndexFormat::detect` and `Index::read_as`) and the CLI (`count`
//! and `get` with `--index`), with each index also shown to work with the
//! data it was built for, so that a reader that refused everything would fail.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use bytes::Bytes;
use recordwire::frame::Framing;
use recordwire::index::{Index, IndexFormat};
use recordwire::Error;
use serde_json::Value;

use crate::support::cli;

fn bad(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/bad")
        .join(name)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(bad(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A file of `testdata/bad/` as a command-line argument.
fn arg(name: &str) -> String {
    bad(name).display().to_string()
}

/// The true index of a record file, built by scanning it.
fn scan(name: &str, framing: Framing) -> Index {
    Index::build(&read(name), framing, true).unwrap()
}

const FORMATS: [(IndexFormat, &str); 3] = [
    (IndexFormat::Native, "rwindex"),
    (IndexFormat::Dali, "tfindex"),
    (IndexFormat::Lirs, "lirs"),
];

/// One data file with an index that does not match it, and where the
/// mismatch must be reported.
struct Case {
    data: String,
    index: String,
    framing: Framing,
    /// `None` for a native index, refused as a whole at open.
    record: Option<u64>,
    offset: u64,
    /// Words the message must hold (what was found).
    says: &'static str,
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (framing, ext, other_file, other) in [
        (
            Framing::TfRecord,
            "tfrecord",
            "../ref/examples.tfrecord",
            "examples.tfrecord",
        ),
        (
            Framing::OfRecord,
            "ofrecord",
            "../ref/ofrecord.part-0",
            "part-0.ofrecord",
        ),
    ] {
        let base = scan(&format!("base5.{ext}"), framing);
        let base_size = base.data_size();
        let starts = base.starts().to_vec();
        assert_eq!(starts.len(), 5);
        let other_ix = scan(other_file, framing);
        for (format, suffix) in FORMATS {
            let native = format == IndexFormat::Native;
            let index = format!("stale/base5.{ext}.{suffix}");
            // Appended to: the frames after the indexed end are not listed.
            cases.push(Case {
                data: format!("stale/appended.{ext}"),
                index: index.clone(),
                framing,
                record: (!native).then_some(5),
                offset: base_size,
                says: if native { "appended" } else { "not listed" },
            });
            // Cut after 3 records: record 3 starts at the end of the data.
            cases.push(Case {
                data: format!("stale/truncated.{ext}"),
                index: index.clone(),
                framing,
                record: (!native).then_some(3),
                offset: starts[3],
                says: if native { "truncated" } else { "past the end" },
            });
            // Another file's index: the native one by its size; a DALI line
            // by its first frame's size; a raw table (no sizes) by its
            // second offset, which is not where base5's first frame ends.
            let (record, offset, says) = match format {
                IndexFormat::Native => (None, base_size.min(other_ix.data_size()), "bytes"),
                IndexFormat::Dali => (Some(0), 0, "declares a frame of"),
                IndexFormat::Lirs => (Some(1), other_ix.starts()[1], "offset"),
            };
            assert_ne!(other_ix.starts()[1], starts[1], "{other} must differ");
            cases.push(Case {
                data: format!("base5.{ext}"),
                index: format!("stale/{other}.{suffix}"),
                framing,
                record,
                offset,
                says,
            });
        }
        // Rewritten in place (one payload byte): same size and frames, so
        // only the native index's content fingerprint can tell.
        cases.push(Case {
            data: format!("stale/rewritten.{ext}"),
            index: format!("stale/base5.{ext}.rwindex"),
            framing,
            record: None,
            offset: 0,
            says: "fingerprint",
        });
    }
    cases
}

fn load(index: &str, data: &[u8], framing: Framing) -> Result<Index, Error> {
    let bytes = read(index);
    let format = IndexFormat::detect(&bytes);
    Index::read_as(format, Bytes::from(bytes), data, framing)
}

#[test]
fn formats_are_told_apart_by_content() {
    for ext in ["tfrecord", "ofrecord"] {
        for (format, suffix) in FORMATS {
            let name = format!("stale/base5.{ext}.{suffix}");
            assert_eq!(IndexFormat::detect(&read(&name)), format, "{name}");
        }
    }
    // The DALI index written by vahidk/tfrecord's create_index.
    let external = read("../index/examples.tfrecord.tfindex");
    assert_eq!(IndexFormat::detect(&external), IndexFormat::Dali);
    assert_eq!(IndexFormat::detect(b""), IndexFormat::Dali);
}

#[test]
fn every_index_works_with_its_own_data() {
    for (framing, ext) in [
        (Framing::TfRecord, "tfrecord"),
        (Framing::OfRecord, "ofrecord"),
    ] {
        let data = format!("base5.{ext}");
        let truth = scan(&data, framing);
        let expected: Vec<Value> = std::fs::read_to_string(bad(&format!("base5.{ext}.jsonl")))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for (_, suffix) in FORMATS {
            let index = format!("stale/base5.{ext}.{suffix}");
            let ix = load(&index, &read(&data), framing).unwrap();
            assert_eq!(ix.offsets(), truth.offsets(), "{index}");
            let (d, i) = (arg(&data), arg(&index));
            let (d, i) = (d.as_str(), i.as_str());
            let (code, out, err) = cli::run(&["count", d, "--index", i]);
            assert_eq!((code, out.trim(), err.as_str()), (0, "5", ""), "{index}");
            let (code, out, err) = cli::run(&["get", d, "4", "1", "--index", i]);
            assert_eq!(code, 0, "{index}: {err}");
            let got: Vec<Value> = out
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(got, [expected[4].clone(), expected[1].clone()], "{index}");
        }
    }
}

#[test]
fn stale_indexes_are_refused_where_they_disagree() {
    let cases = cases();
    assert_eq!(cases.len(), 20);
    for c in &cases {
        let what = format!("{} with {}", c.data, c.index);
        let data = read(&c.data);
        let err = load(&c.index, &data, c.framing).expect_err(&what);
        assert_eq!(err.kind().name(), "stale_index", "{what}: {err}");
        assert_eq!(err.record(), c.record, "{what}: {err}");
        assert_eq!(err.offset(), Some(c.offset), "{what}: {err}");
        assert!(err.to_string().contains(c.says), "{what}: {err}");

        // The CLI: exit 1, nothing on stdout, one line naming the index file.
        let (d, i) = (arg(&c.data), arg(&c.index));
        let (d, i) = (d.as_str(), i.as_str());
        let mut at = format!("at byte {}: ", c.offset);
        if let Some(r) = c.record {
            at = format!("record {r} {at}");
        }
        let head = format!("error[stale_index]: {i}: {at}");
        for args in [
            vec!["count", d, "--index", i],
            vec!["get", d, "0", "--index", i],
        ] {
            let (code, out, err) = cli::run(&args);
            assert_eq!(code, 1, "{what}: {args:?}: {err}");
            assert_eq!(out, "", "{what}: {args:?}");
            assert!(
                err.starts_with(&head),
                "{what}: {args:?}:\n{err}\nwanted {head}"
            );
            assert_eq!(err.lines().count(), 1, "{what}: {args:?}: {err}");
        }
    }
}

/// Without a fingerprint, a DALI index of the rewritten file is still right
/// about its frames, so it is used; the changed byte is then the data CRC's
/// to find, at the record it is in.
#[test]
fn a_rewrite_that_keeps_the_frames_is_left_to_the_data_crc() {
    let (d, i) = (
        arg("stale/rewritten.tfrecord"),
        arg("stale/base5.tfrecord.tfindex"),
    );
    let (d, i) = (d.as_str(), i.as_str());
    let (code, out, _) = cli::run(&["get", d, "1", "--index", i]);
    assert_eq!((code, out.lines().count()), (0, 1));
    let (code, out, err) = cli::run(&["get", d, "2", "--index", i]);
    assert_eq!((code, out.as_str()), (1, ""));
    let start = scan("base5.tfrecord", Framing::TfRecord).starts()[2];
    assert!(
        err.starts_with(&format!(
            "error[data_crc_mismatch]: {d}: record 2 at byte {start}: "
        )),
        "{err}"
    );
}
