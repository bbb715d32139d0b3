//! The framing `convert` and `pack` write, from the output's name
//! (docs/FORMAT.md §1.6, §9.3): a name that says OFRecord (`.ofrecord`,
//! OneFlow's `part-N`) or TFRecord (`.tfrecord`, `.tfrec`) decides, unless the
//! framing is named (`--out-framing`, `--framing`), which may disagree with
//! the name; a payload kind named explicitly whose framing contradicts the
//! name is refused. Each test reads the written bytes' framing back.

#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::path::{Path, PathBuf};

use recordwire::frame::{is_tfrecord_header, records, Framing, ReadOptions};

use crate::support::cli;

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The framing of the record file `bytes` (decompressed when GZIP) and its
/// record payloads; every frame must be valid.
fn written(bytes: &[u8]) -> (Framing, Vec<Vec<u8>>) {
    let mut plain = Vec::new();
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_end(&mut plain)
            .unwrap();
        &plain[..]
    } else {
        bytes
    };
    let framing = match bytes.first_chunk::<12>() {
        Some(h) if is_tfrecord_header(h) => Framing::TfRecord,
        _ => Framing::OfRecord,
    };
    let payloads = records(bytes, framing, ReadOptions::default())
        .map(|r| r.unwrap().data.to_vec())
        .collect();
    (framing, payloads)
}

fn written_file(path: &Path) -> (Framing, Vec<Vec<u8>>) {
    written(&std::fs::read(path).unwrap())
}

/// The payloads of a reference file.
fn payloads_of(rel: &str) -> Vec<Vec<u8>> {
    written_file(&testdata(rel)).1
}

fn ok(args: &[&str]) {
    let run = cli::run_utf8(args);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
}

#[test]
fn convert_takes_the_framing_from_the_output_name() {
    let dir = tempfile::tempdir().unwrap();
    let small = testdata("ref/small.tfrecord");
    let out = |name: &str| dir.path().join(name);

    // TFRecord in, `.ofrecord` or `part-N` out: OFRecord frames and payloads.
    for name in ["out.ofrecord", "part-00000", "out.ofrecord.gz"] {
        ok(&["convert", s(&small), s(&out(name))]);
        let (framing, payloads) = written_file(&out(name));
        assert_eq!((framing, payloads.len()), (Framing::OfRecord, 10), "{name}");
        let run = cli::run_utf8(&["cat", s(&out(name))]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert!(
            run.stdout.starts_with(r#"{"feature":{"#),
            "{name}: {}",
            run.stdout
        );
    }
    let raw = out("raw.ofrecord");
    ok(&["convert", s(&small), s(&raw), "--out-payload", "raw"]);
    assert_eq!(
        written_file(&raw),
        (Framing::OfRecord, payloads_of("ref/small.tfrecord"))
    );

    // No name that says anything: the input's framing, as before.
    for name in ["out.bin", "out.tfrecord", "out"] {
        ok(&["convert", s(&small), s(&out(name))]);
        assert_eq!(
            written_file(&out(name)),
            (Framing::TfRecord, payloads_of("ref/small.tfrecord")),
            "{name}"
        );
    }
    let run = cli::run_bytes(&["convert", s(&small), "-"]);
    assert_eq!(run.0, 0, "{}", run.2);
    assert_eq!(written(&run.1).0, Framing::TfRecord);

    // OFRecord in, `.tfrecord` out: TFRecord frames, tf.Example payloads.
    let of = testdata("ref/ofrecord.part-0");
    let tf = out("from_of.tfrecord");
    ok(&[
        "convert",
        s(&of),
        s(&tf),
        "--narrow-doubles",
        "--widen-int32",
    ]);
    let (framing, payloads) = written_file(&tf);
    assert_eq!((framing, payloads.len()), (Framing::TfRecord, 20));
    let run = cli::run_utf8(&["cat", s(&tf)]);
    assert!(run.stdout.starts_with(r#"{"features":"#), "{}", run.stdout);
}

#[test]
fn convert_out_framing_may_disagree_with_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let small = testdata("ref/small.tfrecord");
    let odd = dir.path().join("odd.ofrecord");
    ok(&["convert", s(&small), s(&odd), "--out-framing", "tfrecord"]);
    assert_eq!(
        written_file(&odd),
        (Framing::TfRecord, payloads_of("ref/small.tfrecord"))
    );
    // `--out-framing auto` is no name: the output's name decides.
    let auto = dir.path().join("auto.ofrecord");
    ok(&["convert", s(&small), s(&auto), "--out-framing", "auto"]);
    assert_eq!(written_file(&auto).0, Framing::OfRecord);
    // A payload kind named against the name is refused, nothing written...
    let refused = dir.path().join("refused.ofrecord");
    let run = cli::run_utf8(&[
        "convert",
        s(&small),
        s(&refused),
        "--out-payload",
        "example",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "error[usage_error]: {}: the name says ofrecord framing, but example payloads belong in \
             tfrecord frames; say --out-framing ofrecord to write them in ofrecord frames \
             anyway, or name the output for tfrecord",
            refused.display()
        )
    );
    assert!(!refused.exists());
    // ...unless the framing is named too.
    ok(&[
        "convert",
        s(&small),
        s(&refused),
        "--out-payload",
        "example",
        "--out-framing",
        "ofrecord",
    ]);
    assert_eq!(
        written_file(&refused),
        (Framing::OfRecord, payloads_of("ref/small.tfrecord"))
    );
}

#[test]
fn pack_takes_the_framing_from_the_output_name() {
    let dir = tempfile::tempdir().unwrap();
    let of_json = testdata("ref/ofrecord.jsonl");
    let ex_json = testdata("ref/examples.jsonl");
    let out = |name: &str| dir.path().join(name);

    // OFRecord JSON to a `.ofrecord` or `part-N`: the name says OFRecord, so
    // the payload is OFRecord too: the reference file, byte for byte.
    for name in ["x.ofrecord", "part-00001"] {
        ok(&["pack", s(&of_json), s(&out(name))]);
        assert!(
            std::fs::read(out(name)).unwrap()
                == std::fs::read(testdata("ref/ofrecord.part-0")).unwrap(),
            "{name}"
        );
    }
    // tf.Example JSON to a `.tfrecord`, or a name that says nothing: TFRecord.
    for name in ["x.tfrecord", "x.bin"] {
        ok(&["pack", s(&ex_json), s(&out(name))]);
        assert!(
            std::fs::read(out(name)).unwrap()
                == std::fs::read(testdata("ref/examples.tfrecord")).unwrap(),
            "{name}"
        );
    }
    // `--payload ofrecord` without a name that says anything: OFRecord, as before.
    ok(&[
        "pack",
        "--payload",
        "ofrecord",
        s(&of_json),
        s(&out("y.bin")),
    ]);
    assert_eq!(written_file(&out("y.bin")).0, Framing::OfRecord);

    // A payload against the name is refused; a named framing may disagree.
    for (name, payload, json) in [
        ("z.ofrecord", "example", &ex_json),
        ("z.tfrecord", "ofrecord", &of_json),
    ] {
        let run = cli::run_utf8(&["pack", "--payload", payload, s(json), s(&out(name))]);
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        assert!(
            run.stderr.contains("the name says") && run.stderr.contains("--framing"),
            "{}",
            run.stderr
        );
        assert!(!out(name).exists());
    }
    ok(&[
        "pack",
        "--payload",
        "example",
        "--framing",
        "ofrecord",
        s(&ex_json),
        s(&out("z.ofrecord")),
    ]);
    assert_eq!(
        written_file(&out("z.ofrecord")),
        (Framing::OfRecord, payloads_of("ref/examples.tfrecord"))
    );
    ok(&[
        "pack",
        "--framing",
        "tfrecord",
        "--payload",
        "ofrecord",
        s(&of_json),
        s(&out("w.ofrecord")),
    ]);
    assert_eq!(written_file(&out("w.ofrecord")).0, Framing::TfRecord);
}
