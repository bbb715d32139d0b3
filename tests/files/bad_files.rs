//! Every damaged file of `testdata/bad/` (see `testdata/bad/manifest.json` and
//! `testdata/README.md`), through the CLI (in-process and the built binary)
//! and through the library, against docs/FORMAT.md §8:
//!
//! - `cat` (fail policy): exit 1, exactly one error line
//!   `error[<kind>]: <file>: record <R> at byte <O>: …`, and on stdout exactly
//!   the records before the damage, as `cat` prints them for the valid base file;
//! - `cat --on-error skip`: exit 1, `skip_delivered` records (the base file's
//!   records without the damaged one), the error and the skipped range reported;
//! - the library (`io::Source`, `frame::records`, `io::RecordFile`): the error's
//!   kind name, record id, offset and values exactly;
//! - `verify`: exit 1 and a line naming the kind.

use std::path::{Path, PathBuf};

use recordwire::frame::{records, ErrorPolicy, Framing, ReadOptions};
use recordwire::io::{Compression, OpenOptions, RecordFile, Source};
use recordwire::view::{DecodeOptions, PayloadKind};
use recordwire::{DecodeReason, ErrorKind};
use serde_json::Value;

// ---------------------------------------------------------------------------
// Running the CLI
// ---------------------------------------------------------------------------

use crate::support::cli;

use cli::{run_bin, run_utf8 as run};

// ---------------------------------------------------------------------------
// The manifest
// ---------------------------------------------------------------------------

fn bad_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad")
}

/// One damaged file.
#[derive(Debug, Clone)]
struct Bad {
    raw: Value,
    file: String,
    framing: String,
    compression: String,
    payload: String,
    kind: String,
    record: Option<u64>,
    offset: Option<u64>,
    records_before: Option<u64>,
    skip_delivered: Option<u64>,
}

impl Bad {
    fn path(&self) -> String {
        bad_dir().join(&self.file).display().to_string()
    }

    fn u64(&self, key: &str) -> Option<u64> {
        self.raw.get(key).and_then(Value::as_u64)
    }

    fn framing(&self) -> Framing {
        match self.framing.as_str() {
            "tfrecord" => Framing::TfRecord,
            "ofrecord" => Framing::OfRecord,
            other => panic!("{}: framing {other:?}", self.file),
        }
    }

    fn compression(&self) -> Compression {
        self.compression.parse().expect("compression name")
    }

    fn payload(&self) -> PayloadKind {
        self.payload.parse().expect("payload name")
    }

    fn header_len(&self) -> u64 {
        match self.framing() {
            Framing::TfRecord => 12,
            Framing::OfRecord => 8,
        }
    }

    /// The valid file whose records the damaged one starts with.
    fn base5(&self) -> &'static str {
        match self.framing() {
            Framing::TfRecord => "base5.tfrecord",
            Framing::OfRecord => "base5.ofrecord",
        }
    }

    /// The payload range `[start, end)` of the damaged record, for decode errors.
    fn payload_range(&self) -> Option<(u64, u64)> {
        let start = self.u64("payload_offset")?;
        let len = self.raw["payload_hex"].as_str()?.len() as u64 / 2;
        Some((start, start + len))
    }

    /// The same file read by naming everything, and by detecting everything.
    fn read_options(&self) -> [Vec<String>; 2] {
        [
            vec![
                "--framing".into(),
                self.framing.clone(),
                "--compression".into(),
                self.compression.clone(),
                "--payload".into(),
                self.payload.clone(),
            ],
            vec![],
        ]
    }
}

fn manifest() -> Vec<Bad> {
    let text = std::fs::read_to_string(bad_dir().join("manifest.json")).expect("read manifest");
    let v: Value = serde_json::from_str(&text).expect("manifest is JSON");
    let s = |e: &Value, k: &str| {
        e[k].as_str()
            .unwrap_or_else(|| panic!("manifest: {k} is not a string in {e}"))
            .to_owned()
    };
    let entries: Vec<Bad> = v
        .as_array()
        .expect("manifest is an array")
        .iter()
        .map(|e| Bad {
            raw: e.clone(),
            file: s(e, "file"),
            framing: s(e, "framing"),
            compression: s(e, "compression"),
            payload: s(e, "payload"),
            kind: s(e, "kind"),
            record: e["record"].as_u64(),
            offset: e["offset"].as_u64(),
            records_before: e["records_before"].as_u64(),
            skip_delivered: e["skip_delivered"].as_u64(),
        })
        .collect();
    assert_eq!(entries.len(), 18, "manifest entries");
    entries
}

/// `cat` of a valid base file, as we print it.
fn base_lines(base: &str) -> Vec<String> {
    let path = bad_dir().join(base).display().to_string();
    let out = run(&["cat", &path]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "cat {base}");
    out.stdout.lines().map(str::to_owned).collect()
}

/// Frame starts of a valid base file, then its end.
fn base_frames(base: &str) -> Vec<u64> {
    let bytes = std::fs::read(bad_dir().join(base)).expect("read base");
    let framing = if base.ends_with(".ofrecord") {
        Framing::OfRecord
    } else {
        Framing::TfRecord
    };
    let mut offsets = Vec::new();
    let mut end = 0;
    for r in records(&bytes, framing, ReadOptions::default()) {
        let r = r.expect("base records are valid");
        offsets.push(r.offset);
        end = r.end;
    }
    offsets.push(end);
    offsets
}

/// The stderr lines that are error reports.
fn error_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.starts_with("error")).collect()
}

/// Kinds `cat` may report first for this file: the manifest's, and for the
/// corrupt deflate stream (whose `record` is null because it depends on the
/// inflater) also the data CRC error that corrupted output may show first,
/// as the manifest's note explains.
fn accepted_kinds(b: &Bad) -> Vec<&str> {
    if b.record.is_none() {
        vec![b.kind.as_str(), "data_crc_mismatch", "length_crc_mismatch"]
    } else {
        vec![b.kind.as_str()]
    }
}

/// Checks one error line against the manifest; returns its kind.
fn check_error_line<'l>(b: &Bad, path: &str, line: &'l str) -> &'l str {
    let kind = line
        .strip_prefix("error[")
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("{}: not an error line: {line:?}", b.file));
    assert!(
        accepted_kinds(b).contains(&kind),
        "{}: kind {kind:?}, expected {:?}: {line}",
        b.file,
        accepted_kinds(b)
    );
    if kind != b.kind {
        return kind;
    }
    // Decode errors' exact offsets are checked in one place,
    // `decode_error_offsets_are_the_manifests`.
    let exact = if b.kind == "decode_error" {
        None
    } else {
        b.offset
    };
    match (b.record, exact) {
        (Some(r), Some(o)) => {
            let prefix = format!("error[{}]: {path}: record {r} at byte {o}: ", b.kind);
            assert!(
                line.starts_with(&prefix),
                "{}: error line\n  {line}\ndoes not start with\n  {prefix}",
                b.file
            );
        }
        (Some(r), None) => {
            let prefix = format!("error[{}]: {path}: record {r} at byte ", b.kind);
            assert!(
                line.starts_with(&prefix),
                "{}: {line:?} vs {prefix:?}",
                b.file
            );
            let o: u64 = line[prefix.len()..]
                .split(':')
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{}: no offset in {line:?}", b.file));
            let (start, end) = b.payload_range().expect("payload range for decode errors");
            assert!(
                (start..end).contains(&o),
                "{}: offset {o} outside the payload {start}..{end}: {line}",
                b.file
            );
        }
        _ => {
            let prefix = format!("error[{}]: {path}: ", b.kind);
            assert!(
                line.starts_with(&prefix),
                "{}: {line:?} vs {prefix:?}",
                b.file
            );
        }
    }
    // Decode errors: the offset, whatever the manifest says, lies in the payload.
    if b.kind == "decode_error" {
        let (start, end) = b.payload_range().expect("payload range");
        let o = offset_in_line(line).expect("offset in a decode error line");
        assert!(
            (start..end).contains(&o),
            "{}: decode error offset {o} outside the payload {start}..{end}",
            b.file
        );
    }
    // The values involved.
    if let (Some(stored), Some(computed)) = (b.u64("stored_crc"), b.u64("computed_crc")) {
        let text = format!("stored {stored:#010x}, computed {computed:#010x}");
        assert!(line.contains(&text), "{}: {line:?} lacks {text:?}", b.file);
    }
    if let Some(available) = b.u64("available") {
        let text = format!("{available} available");
        assert!(line.contains(&text), "{}: {line:?} lacks {text:?}", b.file);
    }
    if let Some(length) = b.raw["declared_length"].as_i64().filter(|l| *l < 0) {
        assert!(line.contains(&length.to_string()), "{}: {line:?}", b.file);
    }
    kind
}

fn offset_in_line(line: &str) -> Option<u64> {
    let at = line.find(" at byte ")? + " at byte ".len();
    line[at..].split(':').next()?.parse().ok()
}

// ---------------------------------------------------------------------------
// cat, fail policy
// ---------------------------------------------------------------------------

#[test]
fn base_files_print_the_reference_values() {
    // Light check (the full comparator is in reference_files.rs): the base
    // files we compare against print what the manifest's `.jsonl` holds.
    for base in [
        "base5.tfrecord",
        "base5.tfrecord.gz",
        "base5.tfrecord.zlib",
        "base5.ofrecord",
    ] {
        let ours = base_lines(base);
        let jsonl = if base.contains("tfrecord") {
            "base5.tfrecord.jsonl"
        } else {
            "base5.ofrecord.jsonl"
        };
        let reference = std::fs::read_to_string(bad_dir().join(jsonl)).expect("read jsonl");
        let reference: Vec<&str> = reference.lines().collect();
        assert_eq!(ours.len(), 5, "{base}");
        assert_eq!(reference.len(), 5, "{jsonl}");
        for (i, (o, r)) in ours.iter().zip(&reference).enumerate() {
            let o: Value = serde_json::from_str(o).expect("our JSON");
            let r: Value = serde_json::from_str(r).expect("reference JSON");
            assert!(
                same_light(&o, &r),
                "{base}: record {i} differs:\n  ours      {o}\n  reference {r}"
            );
        }
    }
}

/// JSON equality with numbers compared as float32 (enough for base5's few floats).
fn same_light(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x as f32).to_bits() == (y as f32).to_bits(),
            _ => false,
        },
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_light(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_light(v, w))
        }
        _ => a == b,
    }
}

#[test]
fn cat_fails_after_the_records_before_the_damage() {
    let mut failures = Vec::new();
    for b in manifest() {
        let path = b.path();
        let base = base_lines(b.base5());
        for opts in b.read_options() {
            let mut args = vec!["cat"];
            args.extend(opts.iter().map(String::as_str));
            args.push(&path);
            let out = run(&args);
            let r = std::panic::catch_unwind(|| {
                assert_eq!(out.code, 1, "{}: exit status; {out:?}", b.file);
                let errors = error_lines(&out.stderr);
                assert_eq!(
                    out.stderr.lines().count(),
                    1,
                    "{}: exactly one line on stderr: {:?}",
                    b.file,
                    out.stderr
                );
                assert_eq!(errors.len(), 1, "{}: {:?}", b.file, out.stderr);
                check_error_line(&b, &path, errors[0]);
                let got: Vec<&str> = out.stdout.lines().collect();
                match b.records_before {
                    Some(n) => {
                        assert_eq!(
                            got.len() as u64,
                            n,
                            "{}: records delivered before the error",
                            b.file
                        );
                        assert!(
                            got.iter().zip(&base).all(|(g, w)| g == w),
                            "{}: delivered records differ from the base file's",
                            b.file
                        );
                    }
                    None => {
                        // Whatever is delivered must be valid records of the base.
                        assert!(got.len() <= base.len(), "{}", b.file);
                        for (i, g) in got.iter().enumerate() {
                            assert_eq!(*g, base[i], "{}: record {i} delivered damaged", b.file);
                        }
                    }
                }
            });
            if let Err(e) = r {
                failures.push(format!("cat {args:?}: {}", panic_text(&e)));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn panic_text(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "panic".to_owned())
}

// ---------------------------------------------------------------------------
// cat, skip policy
// ---------------------------------------------------------------------------

#[test]
fn cat_skip_delivers_the_undamaged_records() {
    let mut failures = Vec::new();
    for b in manifest() {
        let path = b.path();
        let base = base_lines(b.base5());
        let frames = base_frames(b.base5());
        let out = run(&["cat", "--on-error", "skip", &path]);
        let r = std::panic::catch_unwind(|| {
            assert_eq!(out.code, 1, "{}: exit status; {out:?}", b.file);
            let errors = error_lines(&out.stderr);
            assert!(!errors.is_empty(), "{}: no error reported", b.file);
            // Every stderr line is an error or a skipped range.
            for l in out.stderr.lines() {
                assert!(
                    l.starts_with("error[") || l.contains(": skipped bytes "),
                    "{}: unexpected stderr line {l:?}",
                    b.file
                );
            }
            let first_kind = check_error_line(&b, &path, errors[0]);
            let got: Vec<&str> = out.stdout.lines().collect();
            if let Some(n) = b.skip_delivered {
                assert_eq!(
                    got.len() as u64,
                    n,
                    "{}: records delivered in skip mode",
                    b.file
                );
                assert_eq!(
                    errors.len(),
                    1,
                    "{}: one damage, one error: {errors:?}",
                    b.file
                );
                let r = b.record.expect("record") as usize;
                let expected: Vec<&str> = base
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != r)
                    .map(|(_, l)| l.as_str())
                    .take(n as usize)
                    .collect();
                assert_eq!(got, expected, "{}: skip mode records", b.file);
            } else {
                for g in &got {
                    assert!(
                        base.iter().any(|l| l == g),
                        "{}: damaged record delivered",
                        b.file
                    );
                }
            }
            // The skipped range after a CRC error.
            let o = b.offset.unwrap_or(0);
            let resync = match first_kind {
                "length_crc_mismatch" => b.u64("resync_offset"),
                "data_crc_mismatch" if b.record.is_some() => {
                    Some(frames[b.record.expect("record") as usize + 1])
                }
                _ => None,
            };
            if let Some(end) = resync {
                let text = format!(": skipped bytes {o}..{end}");
                assert!(
                    out.stderr.lines().any(|l| l.ends_with(&text)),
                    "{}: stderr lacks {text:?}:\n{}",
                    b.file,
                    out.stderr
                );
            }
            // The corrupt stream is reported as such in the end.
            if b.record.is_none() {
                assert!(
                    errors
                        .iter()
                        .any(|l| l.starts_with(&format!("error[{}]", b.kind))),
                    "{}: no {} reported in skip mode: {errors:?}",
                    b.file,
                    b.kind
                );
            }
        });
        if let Err(e) = r {
            failures.push(format!(
                "cat --on-error skip {}: {}",
                b.file,
                panic_text(&e)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

// ---------------------------------------------------------------------------
// verify
// ---------------------------------------------------------------------------

#[test]
fn verify_reports_each_damage() {
    for b in manifest() {
        let path = b.path();
        let out = run(&["verify", "--payload", &b.payload, &path]);
        assert_eq!(out.code, 1, "verify {}: {out:?}", b.file);
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert!(!lines.is_empty(), "verify {}: nothing on stdout", b.file);
        let tag = format!("[{}]", b.kind);
        assert!(
            lines.iter().any(|l| l.contains(&tag)),
            "verify {}: no line names {tag}: {lines:?}",
            b.file
        );
        if let (Some(r), Some(o)) = (b.record, b.offset.filter(|_| b.kind != "decode_error")) {
            let line = format!("error[{}]: {path}: record {r} at byte {o}: ", b.kind);
            assert!(
                lines.iter().any(|l| l.starts_with(&line)),
                "verify {}: no line starts with {line:?}: {lines:?}",
                b.file
            );
        }
        if b.record.is_some() {
            assert_eq!(
                lines.len(),
                1,
                "verify {}: one damage, one line: {lines:?}",
                b.file
            );
        }
    }
}

// ---------------------------------------------------------------------------
// The library
// ---------------------------------------------------------------------------

/// What a walk with the library found.
#[derive(Debug)]
struct Walk {
    /// Data of the records delivered.
    delivered: Vec<Vec<u8>>,
    /// The errors met.
    errors: Vec<recordwire::Error>,
}

fn walk_source(b: &Bad, policy: ErrorPolicy, mmap: bool) -> Walk {
    let options = OpenOptions::default()
        .with_framing(Some(b.framing()))
        .with_compression(b.compression())
        .with_mmap(mmap)
        .with_read(ReadOptions::default().with_policy(policy));
    let mut source = Source::open(b.path(), &options).expect("open");
    let mut walk = Walk {
        delivered: Vec::new(),
        errors: Vec::new(),
    };
    while let Some(item) = source.next_record() {
        match item {
            Ok(r) => walk.delivered.push(r.data.to_vec()),
            Err(e) => walk.errors.push(e),
        }
    }
    walk
}

fn walk_records<'a>(
    b: &Bad,
    it: impl Iterator<Item = Result<recordwire::frame::Record<'a>, recordwire::Error>>,
) -> Walk {
    let mut walk = Walk {
        delivered: Vec::new(),
        errors: Vec::new(),
    };
    for item in it {
        match item {
            Ok(r) => walk.delivered.push(r.data.to_vec()),
            Err(e) => walk.errors.push(e),
        }
    }
    let _ = b;
    walk
}

/// Checks the values an error kind carries against the manifest.
fn check_kind_values(b: &Bad, kind: &ErrorKind) {
    match kind {
        ErrorKind::TruncatedHeader { needed, available } => {
            assert_eq!(*needed, b.header_len(), "{}", b.file);
            let size = b.u64("size").expect("size");
            assert_eq!(*available, size - b.offset.expect("offset"), "{}", b.file);
        }
        ErrorKind::TruncatedData {
            declared,
            available,
        } => {
            // `declared` counts the data and, for TFRecord, its CRC.
            let crc = if b.framing() == Framing::TfRecord {
                4
            } else {
                0
            };
            let want = b.u64("declared_length").expect("declared_length") + crc;
            assert_eq!(*declared, want, "{}: declared", b.file);
            assert_eq!(
                Some(*available),
                b.u64("available"),
                "{}: available",
                b.file
            );
        }
        ErrorKind::InvalidLength { length } => {
            assert_eq!(
                Some(*length),
                b.raw["declared_length"].as_i64(),
                "{}",
                b.file
            );
        }
        ErrorKind::LengthCrcMismatch { stored, computed }
        | ErrorKind::DataCrcMismatch { stored, computed } => {
            if let (Some(s), Some(c)) = (b.u64("stored_crc"), b.u64("computed_crc")) {
                assert_eq!(u64::from(*stored), s, "{}: stored CRC", b.file);
                assert_eq!(u64::from(*computed), c, "{}: computed CRC", b.file);
            }
        }
        ErrorKind::Compression { message } => {
            assert!(!message.is_empty(), "{}: empty compression message", b.file);
        }
        other => panic!("{}: unexpected kind {other:?}", b.file),
    }
}

#[test]
fn library_reports_kind_record_offset_and_values() {
    let mut failures = Vec::new();
    for b in manifest() {
        if b.kind == "decode_error" {
            continue;
        }
        let r = std::panic::catch_unwind(|| {
            let mut walks = vec![
                ("Source (mmap)", walk_source(&b, ErrorPolicy::Fail, true)),
                ("Source (read)", walk_source(&b, ErrorPolicy::Fail, false)),
            ];
            let bytes = std::fs::read(b.path()).expect("read");
            let options = OpenOptions::default()
                .with_framing(Some(b.framing()))
                .with_compression(b.compression());
            let file = RecordFile::from_bytes(bytes.clone().into(), b.path(), &options);
            walks.push(("RecordFile::records", walk_records(&b, file.records())));
            if b.compression == "none" {
                let it = records(&bytes, b.framing(), ReadOptions::default());
                walks.push(("frame::records", walk_records(&b, it)));
            }
            for (how, w) in &walks {
                assert_eq!(w.errors.len(), 1, "{} via {how}: {:?}", b.file, w.errors);
                let err = &w.errors[0];
                let (name, record, offset) = (err.kind().name(), err.record(), err.offset());
                assert!(
                    accepted_kinds(&b).contains(&name),
                    "{} via {how}: kind {name}",
                    b.file
                );
                if b.record.is_some() {
                    assert_eq!(name, b.kind, "{} via {how}: kind", b.file);
                    assert_eq!(record, b.record, "{} via {how}: record", b.file);
                    assert_eq!(offset, b.offset, "{} via {how}: offset", b.file);
                    assert_eq!(
                        Some(w.delivered.len() as u64),
                        b.records_before,
                        "{} via {how}: delivered",
                        b.file
                    );
                }
                if *how != "frame::records" {
                    assert_eq!(err.file(), Some(b.path().as_str()), "{} via {how}", b.file);
                }
                check_kind_values(&b, err.kind());
            }
            // Skip policy.
            let w = walk_source(&b, ErrorPolicy::skip(), true);
            if let Some(n) = b.skip_delivered {
                assert_eq!(w.delivered.len() as u64, n, "{}: skip delivered", b.file);
                assert_eq!(w.errors.len(), 1, "{}: skip errors {:?}", b.file, w.errors);
            }
            if b.record.is_none() {
                assert!(
                    w.errors.iter().any(|e| e.kind().name() == b.kind),
                    "{}: skip mode never reports {}: {:?}",
                    b.file,
                    b.kind,
                    w.errors
                );
            }
        });
        if let Err(e) = r {
            failures.push(panic_text(&e));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn library_reports_decode_errors_in_the_payload() {
    let mut failures = Vec::new();
    for b in manifest().into_iter().filter(|b| b.kind == "decode_error") {
        let r = std::panic::catch_unwind(|| {
            let options = OpenOptions::default()
                .with_framing(Some(b.framing()))
                .with_compression(b.compression());
            let mut source = Source::open(b.path(), &options).expect("open");
            let mut good = 0u64;
            let mut first: Option<(u64, recordwire::Error)> = None;
            while let Some(item) = source.next_record() {
                let rec = item.unwrap_or_else(|e| panic!("{}: framing error {e}", b.file));
                match b
                    .payload()
                    .validate(rec.data, rec.data_offset, DecodeOptions::default())
                {
                    Ok(()) => good += 1,
                    Err(e) => {
                        if first.is_none() {
                            let (start, end) = b.payload_range().expect("payload range");
                            assert_eq!(rec.data_offset, start, "{}: payload offset", b.file);
                            assert_eq!(rec.data_offset + rec.data.len() as u64, end);
                            assert_eq!(rec.offset + b.header_len(), rec.data_offset, "{}", b.file);
                            let err = recordwire::Error::from(e).with_record(rec.id);
                            first = Some((good, err));
                        }
                    }
                }
            }
            let (before, err) = first.unwrap_or_else(|| panic!("{}: no decode error", b.file));
            assert_eq!(Some(before), b.records_before, "{}: records before", b.file);
            assert_eq!(
                Some(good),
                b.skip_delivered,
                "{}: records that decode",
                b.file
            );
            assert_eq!(err.kind().name(), "decode_error", "{}", b.file);
            assert_eq!(err.record(), b.record, "{}: record", b.file);
            let (start, end) = b.payload_range().expect("payload range");
            assert!(
                err.offset().is_some_and(|o| (start..end).contains(&o)),
                "{}: offset {:?} outside the payload {start}..{end}",
                b.file,
                err.offset()
            );
            let ErrorKind::Decode(reason) = err.kind() else {
                panic!("{}: {err}", b.file);
            };
            let want = match b.file.as_str() {
                "tf_decode_error.tfrecord" | "of_decode_error.ofrecord" => {
                    DecodeReason::InvalidWireType(7)
                }
                "tf_decode_error_overrun.tfrecord" => DecodeReason::LengthOverrun {
                    declared: 64,
                    available: 13,
                },
                "tf_decode_error_utf8.tfrecord" => DecodeReason::InvalidUtf8,
                "of_decode_error_packed.ofrecord" => DecodeReason::PackedLength {
                    length: 5,
                    width: 4,
                },
                other => panic!("unknown decode error file {other}"),
            };
            assert_eq!(*reason, want, "{}: reason", b.file);
        });
        if let Err(e) = r {
            failures.push(panic_text(&e));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Where the manifest gives the offset of a decode error (the first byte of
/// the offending field: its tag), `cat`, `verify` and the library report
/// exactly that offset.
#[test]
fn decode_error_offsets_are_the_manifests() {
    let mut failures = Vec::new();
    for b in manifest().into_iter().filter(|b| b.kind == "decode_error") {
        let (Some(r), Some(o)) = (b.record, b.offset) else {
            continue;
        };
        let path = b.path();
        let want = format!("error[decode_error]: {path}: record {r} at byte {o}: ");
        let cat = run(&["cat", &path]);
        let verify = run(&["verify", &path]);
        let options = OpenOptions::default().with_framing(Some(b.framing()));
        let file = RecordFile::open(&path, &options).expect("open");
        let rec = file
            .records()
            .nth(r as usize)
            .expect("the damaged record")
            .expect("its frame is fine");
        let lib = b
            .payload()
            .validate(rec.data, rec.data_offset, DecodeOptions::default())
            .expect_err("a decode error");
        let got = [
            (
                "cat",
                cat.stderr.lines().next().unwrap_or_default().to_owned(),
            ),
            (
                "verify",
                verify.stdout.lines().next().unwrap_or_default().to_owned(),
            ),
            ("library", format!("offset {} ({})", lib.offset, lib.reason)),
        ];
        let ok = got[0].1.starts_with(&want) && got[1].1.starts_with(&want) && lib.offset == o;
        if !ok {
            failures.push(format!(
                "{}: expected offset {o} ({})\n  {}",
                b.file,
                b.raw["note"],
                got.iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join("\n  ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---------------------------------------------------------------------------
// The built binary
// ---------------------------------------------------------------------------

#[test]
fn binary_exit_codes_and_streams() {
    let all = manifest();
    let get = |f: &str| {
        all.iter()
            .find(|b| b.file == f)
            .unwrap_or_else(|| panic!("{f} not in the manifest"))
            .clone()
    };
    let base_tf = base_lines("base5.tfrecord");
    let base_of = base_lines("base5.ofrecord");

    for (f, base) in [
        ("tf_data_crc_mismatch.tfrecord", &base_tf),
        ("tf_truncated_header.tfrecord", &base_tf),
        ("of_invalid_length.ofrecord", &base_of),
        ("tf_decode_error.tfrecord", &base_tf),
    ] {
        let b = get(f);
        let path = b.path();
        let out = run_bin(&["cat", &path], None);
        assert_eq!(out.code, 1, "{f}: {out:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{f}: {out:?}");
        check_error_line(&b, &path, out.stderr.trim_end());
        let n = b.records_before.expect("records_before") as usize;
        let want: String = base[..n].iter().map(|l| format!("{l}\n")).collect();
        assert!(
            out.stdout == want,
            "{f}: binary stdout differs from the base records"
        );

        let out = run_bin(&["verify", &path], None);
        assert_eq!(out.code, 1, "verify {f}: {out:?}");
        assert!(
            out.stdout.contains(&format!("[{}]", b.kind)),
            "verify {f}: {out:?}"
        );
    }

    // A truncated gzip stream on stdin: the file is `<stdin>`.
    let b = get("gz_truncated.tfrecord.gz");
    let out = run_bin(&["cat", "-"], Some(Path::new(&b.path())));
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .starts_with("error[compression_error]: <stdin>: record 4 at byte 524: "),
        "{out:?}"
    );
    assert_eq!(out.stdout.lines().count(), 4);

    // Skip mode: exit 1 too, records 0, 1, 3, 4.
    let b = get("tf_length_crc_mismatch.tfrecord");
    let out = run_bin(&["cat", "--on-error", "skip", &b.path()], None);
    assert_eq!(out.code, 1, "{out:?}");
    let want: Vec<&str> = [0, 1, 3, 4].iter().map(|&i| base_tf[i].as_str()).collect();
    assert_eq!(out.stdout.lines().collect::<Vec<_>>(), want);
    assert!(out.stderr.contains(": skipped bytes 262..393"), "{out:?}");

    // Max errors: gives up.
    let b = get("gz_corrupt_deflate.tfrecord.gz");
    let out = run_bin(
        &["cat", "--on-error", "skip", "--max-errors", "1", &b.path()],
        None,
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(error_lines(&out.stderr).len(), 1, "{out:?}");
}

/// `Shard::open` under the skip policy indexes exactly the records that a
/// skip walk of the same file delivers, and lists what it passed over with
/// the walk's errors (kind, record, offset); mapped or read, plain or
/// compressed. Its index is never written.
#[test]
fn shard_skip_indexes_the_records_a_skip_walk_delivers() {
    use recordwire::dataset::Shard;
    for b in manifest() {
        for mmap in [true, false] {
            let walk = walk_source(&b, ErrorPolicy::skip(), mmap);
            let options = OpenOptions::default()
                .with_framing(Some(b.framing()))
                .with_compression(b.compression())
                .with_mmap(mmap)
                .with_read(ReadOptions::default().with_policy(ErrorPolicy::skip()));
            let shard =
                Shard::open(b.path(), &options).unwrap_or_else(|e| panic!("{}: {e}", b.file));
            let got: Vec<Vec<u8>> = (0..shard.len())
                .map(|id| shard.get(id).unwrap().unwrap().data.to_vec())
                .collect();
            assert_eq!(got, walk.delivered, "{} (mmap {mmap})", b.file);
            let skipped: Vec<(&str, Option<u64>, Option<u64>)> = shard
                .skipped()
                .iter()
                .map(|s| (s.error.kind().name(), s.error.record(), Some(s.start)))
                .collect();
            let errors: Vec<(&str, Option<u64>, Option<u64>)> = walk
                .errors
                .iter()
                .map(|e| (e.kind().name(), e.record(), e.offset()))
                .collect();
            assert_eq!(skipped, errors, "{} (mmap {mmap})", b.file);
            assert_eq!(shard.index().has_skips(), !errors.is_empty(), "{}", b.file);
            if shard.index().has_skips() {
                assert!(shard.index().write_native(&mut Vec::new()).is_err());
            }
        }
    }
}
