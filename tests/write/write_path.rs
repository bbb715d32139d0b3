//! The write path end to end: `pack` reproduces files TensorFlow wrote, byte
//! for byte, from `cat`'s output and from MessageToDict's; compressed outputs
//! decompress to the same bytes; `encode` gives the seed's documented bytes;
//! and a failing or killed writer never leaves a partial file under the
//! final name.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use recordwire::encode::{RecordWriter, WriterOptions};
use recordwire::frame::Framing;
use recordwire::io::Compression;

use crate::support::cli;

use cli::run_bytes as run;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// (reference file, payload) pairs written by TensorFlow / protobuf.
const REFERENCE: &[(&str, &str)] = &[
    ("testdata/ref/examples.tfrecord", "example"),
    ("testdata/ref/small.tfrecord", "example"),
    (
        "testdata/ref/sequence_examples.tfrecord",
        "sequence_example",
    ),
    ("testdata/ref/ofrecord.part-0", "ofrecord"),
];

#[test]
fn pack_of_cat_output_reproduces_tensorflow_files_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (file, payload) in REFERENCE {
        let src = root().join(file);
        let (code, jsonl, err) = run(&["cat", s(&src), "--payload", payload]);
        assert_eq!(code, 0, "{file}: {err}");
        let jsonl_path = dir.path().join("in.jsonl");
        std::fs::write(&jsonl_path, &jsonl).unwrap();
        let out = dir.path().join("out.rec");
        let (code, _, err) = run(&["pack", s(&jsonl_path), s(&out), "--payload", payload]);
        assert_eq!(code, 0, "{file}: {err}");
        let want = std::fs::read(&src).unwrap();
        let got = std::fs::read(&out).unwrap();
        assert!(
            got == want,
            "{file}: pack(cat(f)) differs from f ({} vs {} bytes)",
            got.len(),
            want.len()
        );
    }
}

#[test]
fn pack_of_message_to_dict_output_reproduces_the_files() {
    let dir = tempfile::tempdir().unwrap();
    for (file, payload) in REFERENCE {
        let src = root().join(file);
        let jsonl = root().join(format!(
            "testdata/ref/{}.jsonl",
            match *file {
                "testdata/ref/ofrecord.part-0" => "ofrecord",
                f => f
                    .trim_start_matches("testdata/ref/")
                    .trim_end_matches(".tfrecord"),
            }
        ));
        let out = dir.path().join("out.rec");
        let (code, _, err) = run(&["pack", s(&jsonl), s(&out), "--payload", payload]);
        assert_eq!(code, 0, "{file}: {err}");
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&src).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn compressed_outputs_decompress_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("testdata/ref/examples.tfrecord");
    let want = std::fs::read(&src).unwrap();
    let jsonl = root().join("testdata/ref/examples.jsonl");
    for (name, flag) in [
        ("o.tfrecord.gz", None),
        ("o.zlib", None),
        ("o.bin", Some("gzip")),
        ("o2.bin", Some("zlib")),
    ] {
        let out = dir.path().join(name);
        let mut args = vec!["pack", s(&jsonl), s(&out)];
        if let Some(f) = flag {
            args.extend(["--compression", f]);
        }
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let raw = std::fs::read(&out).unwrap();
        let mut plain = Vec::new();
        let gzip = name.ends_with(".gz") || flag == Some("gzip");
        if gzip {
            assert_eq!(&raw[..2], [0x1f, 0x8b], "{name} is gzip");
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_end(&mut plain)
                .unwrap();
        } else {
            assert_eq!(raw[0] & 0x0f, 8, "{name} is zlib");
            flate2::read::ZlibDecoder::new(&raw[..])
                .read_to_end(&mut plain)
                .unwrap();
        }
        assert!(plain == want, "{name} decompresses to other bytes");
        // and convert does the same from the record file
        let conv = dir.path().join(format!("c-{name}"));
        let mut args = vec!["convert", s(&src), s(&conv)];
        if let Some(f) = flag {
            args.extend(["--out-compression", f]);
        } else if name.ends_with(".zlib") {
            args.extend(["--out-compression", "zlib"]);
        }
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let (code, a, _) = run(&["cat", s(&conv)]);
        let (_, b, _) = run(&["cat", s(&src)]);
        assert_eq!(code, 0);
        assert!(a == b);
    }
}

#[test]
fn encode_gives_the_seed_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("seed.json");
    std::fs::write(
        &json,
        r#"{"features": {"feature": {
            "masked_lm_weights": {"float_list": {"value": [1.0, 1.0, 0.0]}},
            "masked_lm_positions": {"int64_list": {"value": ["2", "10", "0"]}},
            "next_sentence_labels": {"int64_list": {"value": [1]}}}}}"#,
    )
    .unwrap();
    let (code, bytes, err) = run(&["encode", s(&json)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(bytes.len(), 104);
    assert_eq!(&bytes[..4], [0x0a, 0x66, 0x0a, 0x25]);
    // decode gives the same JSON back (as values)
    let bin = dir.path().join("seed.bin");
    std::fs::write(&bin, &bytes).unwrap();
    let (code, back, _) = run(&["decode", s(&bin)]);
    assert_eq!(code, 0);
    let back = String::from_utf8(back).unwrap();
    assert!(
        back.contains(r#""masked_lm_positions":{"int64_list":{"value":["2","10","0"]}}"#),
        "{back}"
    );
    // --sorted writes the entries in key order
    let (_, sorted, _) = run(&["encode", s(&json), "--sorted"]);
    let pos = |b: &[u8], n: &[u8]| b.windows(n.len()).position(|w| w == n).unwrap();
    assert!(pos(&sorted, b"masked_lm_positions") < pos(&sorted, b"masked_lm_weights"));
    assert!(pos(&bytes, b"masked_lm_weights") < pos(&bytes, b"masked_lm_positions"));
}

#[test]
fn bad_json_leaves_no_output_and_keeps_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let mut text = String::new();
    for i in 0..5 {
        text.push_str(&format!(
            r#"{{"features": {{"feature": {{"i": {{"int64_list": {{"value": [{i}]}}}}}}}}}}"#
        ));
        text.push('\n');
    }
    text.push_str(
        "{\"features\": {\"feature\": {\"x\": {\"int64_list\": {\"value\": [\"nope\"]}}}}}\n",
    );
    std::fs::write(&input, &text).unwrap();
    let out = dir.path().join("out.tfrecord");
    let (code, _, err) = run(&["pack", s(&input), s(&out)]);
    assert_eq!(code, 1);
    assert!(err.starts_with("error[invalid_json]: "), "{err}");
    assert!(err.contains("line 6"), "{err}");
    assert!(!out.exists(), "no file under the final name");
    std::fs::write(&out, b"precious").unwrap();
    let (code, _, _) = run(&["pack", s(&input), s(&out)]);
    assert_eq!(code, 1);
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// A writer that fails after `budget` bytes, like a full disk.
struct FullDisk {
    budget: usize,
    written: Vec<u8>,
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.written.len() + buf.len() > self.budget {
            return Err(std::io::Error::other("disk full (simulated)"));
        }
        self.written.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl recordwire::encode::FinishTarget for FullDisk {}

#[test]
fn a_failing_sink_makes_the_writer_fail_and_stay_failed() {
    let mut opts = WriterOptions::new(Framing::TfRecord);
    opts.buffer = 16;
    let mut w = RecordWriter::new(
        FullDisk {
            budget: 100,
            written: Vec::new(),
        },
        opts,
    );
    let mut failed = false;
    for _ in 0..20 {
        if w.write_record(&[7u8; 30]).is_err() {
            failed = true;
            break;
        }
    }
    assert!(failed, "the full disk must surface as an error");
    assert!(
        w.write_record(b"x").is_err(),
        "a failed writer refuses further records"
    );
    assert!(w.finish().is_err());
}

#[test]
fn a_file_writer_dropped_without_finish_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.tfrecord");
    std::fs::write(&target, b"old").unwrap();
    {
        let mut w = RecordWriter::create(
            &target,
            WriterOptions::new(Framing::TfRecord).with_compression(Compression::Gzip),
        )
        .unwrap();
        w.write_record(b"new record").unwrap();
        // dropped here, as on an error path
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"old");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "the temporary file was removed"
    );
}

#[test]
fn a_killed_pack_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("killed.tfrecord");
    let mut child = Command::new(env!("CARGO_BIN_EXE_recordwire"))
        .args(["pack", "-", s(&out)])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let line = "{\"features\": {\"feature\": {\"v\": {\"bytes_list\": {\"value\": [\"".to_string()
        + &"QUJD".repeat(5000)
        + "\"]}}}}}\n";
    for _ in 0..200 {
        stdin.write_all(line.as_bytes()).unwrap();
    }
    stdin.flush().unwrap();
    // Wait until the writer has put bytes in its temporary file, then kill it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let temp_has_data = std::fs::read_dir(dir.path()).unwrap().any(|e| {
            let e = e.unwrap();
            e.file_name().to_string_lossy().contains(".tmp-")
                && e.metadata().map(|m| m.len() > 0).unwrap_or(false)
        });
        if temp_has_data || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    let _ = child.wait();
    drop(stdin);
    assert!(
        !out.exists(),
        "a killed writer must not leave a file under the final name"
    );
}

#[test]
fn convert_between_payloads_maps_kinds_and_refuses_what_has_no_equivalent() {
    let dir = tempfile::tempdir().unwrap();
    let of = root().join("testdata/ref/ofrecord.part-0");
    let out = dir.path().join("x.tfrecord");
    let (code, _, err) = run(&["convert", s(&of), s(&out), "--out-framing", "tfrecord"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("error[unmappable_feature]: "), "{err}");
    assert!(
        err.contains("_list which tf.Example has no equivalent"),
        "{err}"
    );
    assert!(
        !out.exists(),
        "nothing written when the conversion is refused"
    );

    let (code, _, err) = run(&[
        "convert",
        s(&of),
        s(&out),
        "--out-framing",
        "tfrecord",
        "--narrow-doubles",
        "--widen-int32",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, json, _) = run(&["cat", s(&out)]);
    assert_eq!(code, 0);
    let json = String::from_utf8(json).unwrap();
    assert!(!json.contains("double_list") && !json.contains("int32_list"));
    assert_eq!(json.lines().count(), 20);

    // tf.Example -> OFRecord -> tf.Example keeps every feature (int64_list is
    // field 3 in one and 5 in the other); only "features present but empty"
    // has no OFRecord equivalent and comes back as no features.
    let ex = root().join("testdata/ref/examples.tfrecord");
    let mid = dir.path().join("mid.ofrecord");
    let back = dir.path().join("back.tfrecord");
    assert_eq!(
        run(&["convert", s(&ex), s(&mid), "--out-framing", "ofrecord"]).0,
        0
    );
    assert_eq!(
        run(&["convert", s(&mid), s(&back), "--out-framing", "tfrecord"]).0,
        0
    );
    let (_, a, _) = run(&["cat", s(&ex)]);
    let (_, b, _) = run(&["cat", s(&back)]);
    let (a, b) = (String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
    assert_eq!(a.lines().count(), b.lines().count());
    for (x, y) in a.lines().zip(b.lines()) {
        if x == r#"{"features":{}}"# {
            assert_eq!(y, "{}");
        } else {
            assert_eq!(x, y);
        }
    }
    let (_, m, _) = run(&["cat", s(&mid)]);
    assert!(String::from_utf8(m).unwrap().contains("int64_list"));
}
