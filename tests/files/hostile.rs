//! The hostile-input suite: every file of `testdata/bad/hostile/`, described
//! in `testdata/bad/hostile.json` (written by `testdata/gen/make_hostile.py`;
//! see `testdata/README.md`). Each entry says what reading the file must give:
//! an error kind of docs/FORMAT.md §8 with its record id, absolute byte offset (in the
//! decompressed stream for compressed files) and, for payload errors, its
//! `DecodeReason`; or `ok`. And which records come before the error, as the
//! JSON lines `cat` prints.
//!
//! Checked through the library (`io::Source`, mapped and read,
//! `io::RecordFile`, `frame::records`, the views' `parse` and
//! `PayloadKind::validate`) and through the built binary (`cat`, `cat
//! --on-error skip`, `verify`, and `decode` of the bare payloads), the binary
//! also under a 1 GiB address-space limit, with a time limit on every child.
//!
//! Every entry is checked fully: there is no list of known bugs. (There was
//! one, of six compressed streams damaged after valid frames whose frames 0-2
//! were lost, until `io::Inflater` delivered them.)

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use recordwire::frame::{records, ErrorPolicy, Framing, ReadOptions};
use recordwire::io::{Compression, OpenOptions, RecordFile, Source};
use recordwire::view::{DecodeOptions, ExampleRef, OfRecordRef, PayloadKind};
use recordwire::{Error, ErrorKind};
use serde_json::Value;

/// Time limit for one run of the binary.
const CHILD_TIMEOUT: Duration = Duration::from_secs(20);

/// The address-space limit of the `ulimit` runs, in KiB (1 GiB).
const ADDRESS_SPACE_KIB: u64 = 1 << 20;

// ---------------------------------------------------------------------------
// The manifest
// ---------------------------------------------------------------------------

fn bad_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad")
}

/// One file of the suite.
#[derive(Debug, Clone)]
struct Hostile {
    raw: Value,
    file: String,
    framing: String,
    compression: String,
    payload: String,
    /// An error kind name, or `ok`.
    outcome: String,
    record: Option<u64>,
    offset: Option<u64>,
    /// `Debug` of the expected `DecodeReason`.
    reason: Option<String>,
    json_before: Vec<String>,
    json_skip: Option<Vec<String>>,
}

impl Hostile {
    fn path(&self) -> String {
        bad_dir().join(&self.file).display().to_string()
    }

    fn ok(&self) -> bool {
        self.outcome == "ok"
    }

    fn framing(&self) -> Framing {
        self.framing.parse().expect("framing name")
    }

    fn compression(&self) -> Compression {
        self.compression.parse().expect("compression name")
    }

    fn payload_kind(&self) -> PayloadKind {
        self.payload.parse().expect("payload name")
    }

    fn u64(&self, key: &str) -> Option<u64> {
        self.raw.get(key).and_then(Value::as_u64)
    }

    fn value(&self, key: &str) -> Option<&Value> {
        self.raw.get("values").and_then(|v| v.get(key))
    }

    /// `[start, end)` of the hostile record's payload, when the entry is about one.
    fn payload_range(&self) -> Option<(usize, usize)> {
        let start = usize::try_from(self.u64("payload_offset")?).ok()?;
        let len = usize::try_from(self.u64("payload_len")?).ok()?;
        Some((start, start + len))
    }

    /// Options naming framing, compression and payload.
    fn explicit_args(&self) -> Vec<String> {
        [
            "--framing",
            &self.framing,
            "--compression",
            &self.compression,
            "--payload",
            &self.payload,
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    }

    /// The argument lists to read the file with: everything named, and
    /// everything detected (unless the manifest says detection cannot work).
    fn arg_variants(&self) -> Vec<Vec<String>> {
        let mut v = vec![self.explicit_args()];
        if self.raw.get("auto_detect").and_then(Value::as_bool) != Some(false) {
            v.push(Vec::new());
        }
        v
    }

    /// The first line `cat` and `verify` must print for this error.
    fn error_prefix(&self, path: &str) -> String {
        format!(
            "error[{}]: {path}: record {} at byte {}: ",
            self.outcome,
            self.record.expect("record"),
            self.offset.expect("offset")
        )
    }

    /// The decompressed (plain) bytes of the file.
    fn stream(&self) -> Vec<u8> {
        let raw = std::fs::read(self.path()).expect("read hostile file");
        let mut out = Vec::new();
        // Damaged streams decompress as far as they go; only whole ones are asked for here.
        let _ = match self.compression() {
            Compression::Gzip => flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut out),
            Compression::Zlib => flate2::read::ZlibDecoder::new(&raw[..]).read_to_end(&mut out),
            _ => return raw,
        };
        out
    }
}

fn manifest() -> Vec<Hostile> {
    let text = std::fs::read_to_string(bad_dir().join("hostile.json")).expect("read hostile.json");
    let v: Value = serde_json::from_str(&text).expect("hostile.json is JSON");
    let s = |e: &Value, k: &str| {
        e[k].as_str()
            .unwrap_or_else(|| panic!("hostile.json: {k} is not a string in {e}"))
            .to_owned()
    };
    let lines = |e: &Value| -> Vec<String> {
        e.as_array()
            .expect("a list of JSON lines")
            .iter()
            .map(|l| l.as_str().expect("a JSON line").to_owned())
            .collect()
    };
    v.as_array()
        .expect("hostile.json is an array")
        .iter()
        .map(|e| Hostile {
            raw: e.clone(),
            file: s(e, "file"),
            framing: s(e, "framing"),
            compression: s(e, "compression"),
            payload: s(e, "payload"),
            outcome: s(e, "outcome"),
            record: e["record"].as_u64(),
            offset: e["offset"].as_u64(),
            reason: e["reason"].as_str().map(str::to_owned),
            json_before: lines(&e["json_before"]),
            json_skip: e.get("json_skip").filter(|v| !v.is_null()).map(lines),
        })
        .collect()
}

/// Runs `check` on every entry, and fails with every failure's message at
/// the end, so that one run shows them all.
fn for_each(mut check: impl FnMut(&Hostile)) {
    let mut failures = Vec::new();
    let mut n = 0;
    for h in manifest() {
        n += 1;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&h)));
        if let Err(e) = r {
            failures.push(format!("{}: {}", h.file, panic_text(&e)));
        }
    }
    assert!(n > 0, "no entries checked");
    assert!(
        failures.is_empty(),
        "{} of {n} entries failed:\n{}",
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

/// Compares JSON lines as values, or as text where a line holds a `\udcXX`
/// escape (a lone surrogate, which JSON parsers reject).
fn same_lines(got: &[&str], want: &[String]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{} lines, expected {}:\n  got  {got:?}\n  want {want:?}",
            got.len(),
            want.len()
        ));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let same = if w.contains("\\udc") {
            *g == w.as_str()
        } else {
            match (
                serde_json::from_str::<Value>(g),
                serde_json::from_str::<Value>(w),
            ) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            }
        };
        if !same {
            return Err(format!("line {i} differs:\n  got  {g}\n  want {w}"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Running the binary
// ---------------------------------------------------------------------------

#[derive(Debug)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Out {
    fn stdout_lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

/// Runs `program args…` with a time limit; stdin is empty.
fn run_limited(program: &str, args: &[String]) -> Out {
    run_limited_with_stdin(program, args, None)
}

/// Runs `program args…` with a time limit, stdin from `stdin` (or empty).
fn run_limited_with_stdin(program: &str, args: &[String], stdin: Option<&Path>) -> Out {
    let input = match stdin {
        Some(p) => Stdio::from(std::fs::File::open(p).expect("open the stdin file")),
        None => Stdio::null(),
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child");
    let mut stdout = child.stdout.take().expect("stdout pipe");
    let mut stderr = child.stderr.take().expect("stderr pipe");
    let out_thread = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b);
        b
    });
    let err_thread = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b);
        b
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if start.elapsed() > CHILD_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{program} {args:?}: still running after {CHILD_TIMEOUT:?}, killed");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stdout = out_thread.join().expect("stdout reader");
    let stderr = err_thread.join().expect("stderr reader");
    Out {
        code: status.code(),
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
    }
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_recordwire")
}

fn run_bin(args: &[String]) -> Out {
    run_limited(bin(), args)
}

/// Runs the binary with its address space limited to 1 GiB (`ulimit -v`).
fn run_bin_limited(args: &[String]) -> Out {
    run_bin_limited_with_stdin(args, None)
}

fn run_bin_limited_with_stdin(args: &[String], stdin: Option<&Path>) -> Out {
    let mut all = vec![
        "-c".to_owned(),
        format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\""),
        bin().to_owned(),
    ];
    all.extend(args.iter().cloned());
    run_limited_with_stdin("sh", &all, stdin)
}

fn args(cmd: &[&str], opts: &[String], path: &str) -> Vec<String> {
    cmd.iter()
        .map(|s| (*s).to_owned())
        .chain(opts.iter().cloned())
        .chain(std::iter::once(path.to_owned()))
        .collect()
}

/// `stderr` without the notes about the payload (docs/FORMAT.md §9.5): a
/// file whose records hold fields their message does not have (the `*_top`
/// files hide such fields at the top level) gets one.
fn without_notes(stderr: &str, path: &str) -> String {
    let note = format!("note: {path}: ");
    stderr
        .lines()
        .filter(|l| {
            let is_note = l.starts_with(&note);
            assert!(
                !is_note || l.contains(" does not have ") || l.contains(" decode as "),
                "unexpected note {l:?}"
            );
            !is_note
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Checks `cat` in fail mode: exit status, the one error line, and exactly
/// the records before the error on stdout.
fn check_cat(h: &Hostile, path: &str, out: &Out, how: &str) {
    let lines = out.stdout_lines();
    let stderr = without_notes(&out.stderr, path);
    if h.ok() {
        assert_eq!(out.code, Some(0), "{how}: exit status; {out:?}");
        assert_eq!(stderr, "", "{how}: stderr");
    } else {
        assert_eq!(out.code, Some(1), "{how}: exit status; {out:?}");
        assert_eq!(
            stderr.lines().count(),
            1,
            "{how}: one line on stderr: {:?}",
            out.stderr
        );
        let prefix = h.error_prefix(path);
        assert!(
            stderr.starts_with(&prefix),
            "{how}: stderr\n  {}\ndoes not start with\n  {prefix}",
            out.stderr.trim_end()
        );
    }
    if let Err(e) = same_lines(&lines, &h.json_before) {
        panic!("{how}: records on stdout: {e}");
    }
}

fn check_verify(h: &Hostile, path: &str, out: &Out, how: &str) {
    if h.ok() {
        assert_eq!(out.code, Some(0), "{how}: exit status; {out:?}");
        assert_eq!(out.stdout, "", "{how}: no problem expected");
        let n = h.json_before.len();
        assert!(
            out.stderr
                .contains(&format!(": {n} valid records, 0 problems")),
            "{how}: {out:?}"
        );
    } else {
        assert_eq!(out.code, Some(1), "{how}: exit status; {out:?}");
        let first = out.stdout.lines().next().unwrap_or_default();
        let prefix = h.error_prefix(path);
        assert!(
            first.starts_with(&prefix),
            "{how}: first line\n  {first}\ndoes not start with\n  {prefix}"
        );
    }
}

// ---------------------------------------------------------------------------
// The manifest itself
// ---------------------------------------------------------------------------

/// The suite covers what issue 6 asks: every docs/FORMAT.md §8.1 kind (but
/// `stale_index`, which is about index files) in both framings and, where it
/// can occur inside a stream, in GZIP and ZLIB streams; every payload attack
/// in both payloads; and every file is there with its size.
#[test]
fn manifest_covers_every_kind_and_attack() {
    let all = manifest();
    let mut by: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for h in &all {
        let size = std::fs::metadata(h.path())
            .unwrap_or_else(|e| panic!("{}: {e}", h.file))
            .len();
        assert_eq!(Some(size), h.u64("size"), "{}: size", h.file);
        let place = if h.compression == "none" {
            h.framing.clone()
        } else {
            h.compression.clone()
        };
        by.entry((place.clone(), h.outcome.clone()))
            .or_default()
            .push(h.file.clone());
        let attack = h.raw["attack"].as_str().expect("attack").to_owned();
        by.entry((format!("{place}/{}", h.payload), attack))
            .or_default()
            .push(h.file.clone());
    }
    let need = |place: &str, what: &str| {
        assert!(
            by.contains_key(&(place.to_owned(), what.to_owned())),
            "no {what} in {place}"
        );
    };
    for kind in [
        "truncated_header",
        "truncated_data",
        "length_crc_mismatch",
        "data_crc_mismatch",
        "decode_error",
        "ok",
    ] {
        need("tfrecord", kind);
    }
    for kind in [
        "truncated_header",
        "truncated_data",
        "invalid_length",
        "decode_error",
        "ok",
    ] {
        need("ofrecord", kind);
    }
    for place in ["gzip", "zlib"] {
        for kind in [
            "truncated_header",
            "truncated_data",
            "length_crc_mismatch",
            "data_crc_mismatch",
            "decode_error",
            "compression_error",
        ] {
            need(place, kind);
        }
    }
    for payload in ["tfrecord/example", "ofrecord/ofrecord"] {
        for attack in [
            "varint_11_bytes",
            "tag_6_bytes",
            "length_6_bytes",
            "length_past_parent",
            "wire_type_6",
            "wire_type_7",
            "field_number_0",
            "field_number_2^29",
            "field_number_2^29-1",
            "group_unterminated",
            "group_crossed",
            "nesting_100",
            "nesting_101",
            "nesting_100000",
            "packed_float_length",
            "invalid_utf8_name",
            "value_past_parent",
        ] {
            need(payload, attack);
        }
    }
    need("ofrecord/ofrecord", "packed_double_length");
    need("ofrecord/ofrecord", "negative_length");
    need("tfrecord/example", "huge_length");
    need("ofrecord/ofrecord", "huge_length");
    // Frames declaring 2^40 and 2^64-1 bytes, with good length CRCs.
    for f in [
        "hostile/tf_len_2p40.tfrecord",
        "hostile/tf_len_2p64m1.tfrecord",
        "hostile/of_len_2p40.ofrecord",
        "hostile/gz_len_2p40.tfrecord.gz",
        "hostile/zlib_len_2p64m1.tfrecord.zlib",
    ] {
        assert!(all.iter().any(|h| h.file == f), "{f} missing");
    }
    // Invalid UTF-8 names: errors in tf.Example, accepted in OFRecord.
    for h in all.iter().filter(|h| h.file.contains("utf8_")) {
        let want = if h.payload == "example" {
            "decode_error"
        } else {
            "ok"
        };
        assert_eq!(h.outcome, want, "{}", h.file);
    }
    eprintln!("{} entries", all.len());
}

// ---------------------------------------------------------------------------
// The library
// ---------------------------------------------------------------------------

/// What a fail-mode walk gave: the records (as `cat` prints them) and the
/// first error, framing or payload.
struct Walk {
    json: Vec<String>,
    error: Option<Error>,
}

fn json_of(kind: PayloadKind, data: &[u8], base: u64) -> Result<String, recordwire::DecodeError> {
    let mut line = Vec::new();
    recordwire::json::write_record(&mut line, kind, data, base, false, None)?;
    Ok(String::from_utf8(line).expect("JSON is UTF-8"))
}

fn options(h: &Hostile, policy: ErrorPolicy, mmap: bool) -> OpenOptions {
    OpenOptions::default()
        .with_framing(Some(h.framing()))
        .with_compression(h.compression())
        .with_mmap(mmap)
        .with_read(ReadOptions::default().with_policy(policy))
}

/// Walks with `Source`; in skip mode goes on after errors (decode errors
/// included, as `cat --on-error skip` does) and returns the first error.
fn walk_source(h: &Hostile, policy: ErrorPolicy, mmap: bool) -> Walk {
    let mut source = Source::open(h.path(), &options(h, policy, mmap)).expect("open");
    let skip = matches!(policy, ErrorPolicy::Skip { .. });
    let kind = h.payload_kind();
    let mut walk = Walk {
        json: Vec::new(),
        error: None,
    };
    let mut guard = 0;
    while let Some(item) = source.next_record() {
        guard += 1;
        assert!(guard < 1000, "more items than the file can hold");
        let err = match item {
            Ok(r) => match json_of(kind, r.data, r.data_offset) {
                Ok(line) => {
                    walk.json.push(line);
                    continue;
                }
                Err(e) => Error::from(e).with_record(r.id),
            },
            Err(e) => e,
        };
        walk.error.get_or_insert(err);
        if !skip {
            break;
        }
    }
    walk
}

fn walk_slice<'a>(
    h: &Hostile,
    it: impl Iterator<Item = Result<recordwire::frame::Record<'a>, Error>>,
) -> Walk {
    let mut walk = Walk {
        json: Vec::new(),
        error: None,
    };
    for item in it {
        let err = match item {
            Ok(r) => match json_of(h.payload_kind(), r.data, r.data_offset) {
                Ok(line) => {
                    walk.json.push(line);
                    continue;
                }
                Err(e) => Error::from(e).with_record(r.id),
            },
            Err(e) => e,
        };
        walk.error = Some(err);
        break;
    }
    walk
}

/// Checks an error against the entry: kind, record, offset, and the values
/// (decode reason, lengths, CRCs) the manifest gives.
fn check_error(h: &Hostile, err: Option<&Error>, how: &str) {
    let Some(err) = err else {
        assert!(h.ok(), "{how}: no error, expected {}", h.outcome);
        return;
    };
    assert!(!h.ok(), "{how}: unexpected error {err}");
    assert_eq!(err.kind().name(), h.outcome, "{how}: kind of {err}");
    assert_eq!(err.record(), h.record, "{how}: record of {err}");
    assert_eq!(err.offset(), h.offset, "{how}: offset of {err}");
    let v = |k: &str| h.value(k).and_then(Value::as_u64);
    match err.kind() {
        ErrorKind::Decode(reason) => {
            assert_eq!(
                Some(format!("{reason:?}")),
                h.reason,
                "{how}: decode reason of {err}"
            );
        }
        ErrorKind::TruncatedHeader { needed, available } => {
            assert_eq!(Some(*needed), v("needed"), "{how}: {err}");
            assert_eq!(Some(*available), v("available"), "{how}: {err}");
        }
        ErrorKind::TruncatedData {
            declared,
            available,
        } => {
            assert_eq!(Some(*declared), v("declared"), "{how}: {err}");
            assert_eq!(Some(*available), v("available"), "{how}: {err}");
        }
        ErrorKind::InvalidLength { length } => {
            assert_eq!(
                Some(*length),
                h.value("length").and_then(Value::as_i64),
                "{how}: {err}"
            );
        }
        ErrorKind::LengthCrcMismatch { stored, computed }
        | ErrorKind::DataCrcMismatch { stored, computed } => {
            assert_eq!(Some(u64::from(*stored)), v("stored"), "{how}: {err}");
            assert_eq!(Some(u64::from(*computed)), v("computed"), "{how}: {err}");
        }
        ErrorKind::Compression { message } => {
            assert!(!message.is_empty(), "{how}: empty message");
        }
        other => panic!("{how}: unexpected kind {other:?}"),
    }
}

fn check_walk(h: &Hostile, walk: &Walk, want: &[String], how: &str) {
    check_error(h, walk.error.as_ref(), how);
    let got: Vec<&str> = walk.json.iter().map(String::as_str).collect();
    if let Err(e) = same_lines(&got, want) {
        panic!("{how}: records: {e}");
    }
}

#[test]
fn library_fail_mode() {
    for_each(|h| {
        for mmap in [true, false] {
            let walk = walk_source(h, ErrorPolicy::Fail, mmap);
            check_walk(h, &walk, &h.json_before, &format!("Source (mmap {mmap})"));
        }
        let bytes = std::fs::read(h.path()).expect("read");
        let file = RecordFile::from_bytes(
            bytes.clone().into(),
            h.path(),
            &options(h, ErrorPolicy::Fail, true),
        );
        check_walk(
            h,
            &walk_slice(h, file.records()),
            &h.json_before,
            "RecordFile::records",
        );
        if h.compression == "none" {
            let it = records(&bytes, h.framing(), ReadOptions::default());
            check_walk(h, &walk_slice(h, it), &h.json_before, "frame::records");
        }
    });
}

#[test]
fn library_skip_mode() {
    for_each(|h| {
        let Some(want) = &h.json_skip else {
            // Not meaningful (no way to find the next frame): no panic, the
            // records before are there, and the first error is the expected one.
            let walk = walk_source(h, ErrorPolicy::skip(), true);
            check_error(h, walk.error.as_ref(), "Source (skip)");
            assert!(walk.json.len() >= h.json_before.len());
            return;
        };
        for mmap in [true, false] {
            let walk = walk_source(h, ErrorPolicy::skip(), mmap);
            check_walk(h, &walk, want, &format!("Source (skip, mmap {mmap})"));
        }
    });
}

/// The hostile payload through the views and `validate`: the same error
/// (offset and reason) as the walk, or none for `ok`, whichever way it is asked.
#[test]
fn views_parse_and_validate_the_payload() {
    for_each(|h| {
        let Some((start, end)) = h.payload_range() else {
            return;
        };
        let stream = h.stream();
        let payload = &stream[start..end];
        let base = start as u64;
        let parsed = match h.payload_kind() {
            PayloadKind::Example => ExampleRef::parse(payload, base).map(drop),
            PayloadKind::OfRecord => OfRecordRef::parse(payload, base).map(drop),
            other => panic!("payload {other:?}"),
        };
        let validated = h
            .payload_kind()
            .validate(payload, base, DecodeOptions::default());
        for (how, r) in [("parse", parsed), ("validate", validated)] {
            match r {
                Ok(()) => assert!(h.ok(), "{how}: accepted, expected {:?}", h.reason),
                Err(e) => {
                    assert!(!h.ok(), "{how}: rejected: {e}");
                    assert_eq!(Some(e.offset), h.offset, "{how}: offset of {e}");
                    assert_eq!(Some(format!("{:?}", e.reason)), h.reason, "{how}");
                }
            }
        }
        // The same payload seen from offset 0 (a bare message).
        let bare = h
            .payload_kind()
            .validate(payload, 0, DecodeOptions::default());
        if let (Err(e), Some(o)) = (bare, h.offset) {
            assert_eq!(e.offset, o - base, "bare: offset of {e}");
        }
        // Lazy views (`new`, no check first) never panic whatever is asked.
        if h.payload_kind() == PayloadKind::Example {
            let ex = ExampleRef::new(payload, base);
            for f in ex.features().iter().flatten() {
                let _ = f.feature.list().map(|l| l.map(|l| l.len()));
            }
            let _ = ex.get("id").map(|f| f.map(|f| f.int64_list()));
        } else {
            let of = OfRecordRef::new(payload, base);
            for f in of.features().iter().flatten() {
                let _ = f.feature.list().map(|l| l.map(|l| l.len()));
            }
            let _ = of.get("id").map(|f| f.map(|f| f.int64_list()));
        }
    });
}

// ---------------------------------------------------------------------------
// The binary
// ---------------------------------------------------------------------------

#[test]
fn cli_cat_fail_mode() {
    for_each(|h| {
        let path = h.path();
        for opts in h.arg_variants() {
            let out = run_bin(&args(&["cat"], &opts, &path));
            check_cat(h, &path, &out, &format!("cat {opts:?}"));
        }
    });
}

#[test]
fn cli_cat_skip_mode() {
    for_each(|h| {
        let path = h.path();
        let out = run_bin(&args(
            &["cat", "--on-error", "skip"],
            &h.explicit_args(),
            &path,
        ));
        let how = "cat --on-error skip";
        if h.ok() {
            check_cat(h, &path, &out, how);
            return;
        }
        assert_eq!(out.code, Some(1), "{how}: exit status; {out:?}");
        let first = out.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with(&h.error_prefix(&path)),
            "{how}: first stderr line {first:?}"
        );
        for l in without_notes(&out.stderr, &path).lines() {
            assert!(
                l.starts_with("error[") || l.contains(": skipped bytes "),
                "{how}: unexpected stderr line {l:?}"
            );
        }
        if let Some(range) = h.raw.get("skipped").and_then(Value::as_array) {
            let (a, b) = (range[0].as_u64(), range[1].as_u64());
            let text = format!(": skipped bytes {}..{}", a.expect("start"), b.expect("end"));
            assert!(
                out.stderr.lines().any(|l| l.ends_with(&text)),
                "{how}: stderr lacks {text:?}: {}",
                out.stderr
            );
        }
        match &h.json_skip {
            Some(want) => {
                if let Err(e) = same_lines(&out.stdout_lines(), want) {
                    panic!("{how}: {e}");
                }
            }
            None => {
                let got = out.stdout_lines();
                assert!(got.len() >= h.json_before.len(), "{how}: {out:?}");
            }
        }
    });
}

#[test]
fn cli_verify() {
    for_each(|h| {
        let path = h.path();
        for opts in h.arg_variants() {
            let out = run_bin(&args(&["verify"], &opts, &path));
            check_verify(h, &path, &out, &format!("verify {opts:?}"));
        }
    });
}

/// Every file through `verify` and `cat` with the address space limited to
/// 1 GiB: the same answers, exit status 0 or 1 (not an abort or a kill).
#[test]
fn cli_under_address_space_limit() {
    for_each(|h| {
        let path = h.path();
        let opts = h.explicit_args();
        let out = run_bin_limited(&args(&["verify"], &opts, &path));
        check_verify(h, &path, &out, "verify (ulimit -v 1 GiB)");
        let out = run_bin_limited(&args(&["cat"], &opts, &path));
        check_cat(h, &path, &out, "cat (ulimit -v 1 GiB)");
    });
}

/// `cat -` with the file on stdin (a pipe: the streaming reader, which must
/// not allocate a declared length either), under the address-space limit.
#[test]
fn cli_cat_from_stdin_under_address_space_limit() {
    for_each(|h| {
        let out = run_bin_limited_with_stdin(
            &args(&["cat"], &h.explicit_args(), "-"),
            Some(Path::new(&h.path())),
        );
        check_cat(h, "<stdin>", &out, "cat - (ulimit -v 1 GiB)");
    });
}

/// The other commands that read records (`dump`, `inspect`, `count`,
/// `index`, `get`, `order`) on every file, under the address-space limit:
/// they finish with status 0, 1 or 2, never a panic, an abort or a kill.
#[test]
fn other_commands_fail_cleanly_under_address_space_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = dir.path().join("index").display().to_string();
    for_each(|h| {
        let path = h.path();
        let opts = h.explicit_args();
        let runs: [Vec<String>; 6] = [
            args(&["dump"], &opts, &path),
            args(&["inspect"], &opts, &path),
            args(&["count"], &opts, &path),
            args(&["index", "--out", &index], &opts, &path),
            args(&["order", "--mode", "shuffle"], &opts, &path),
            [
                args(&["get"], &opts, &path),
                vec!["0".into(), "3".into(), "5".into()],
            ]
            .concat(),
        ];
        for a in runs {
            let out = run_bin_limited(&a);
            assert!(
                matches!(out.code, Some(0..=2)) && !out.stderr.contains("panicked"),
                "{a:?}: {out:?}"
            );
            if h.ok() && a[0] != "index" {
                assert_eq!(out.code, Some(0), "{a:?} on a valid file: {out:?}");
            }
        }
    });
}

/// The hostile payloads as bare messages through `recordwire decode`, under
/// the address-space limit: the error at the offset within the payload, or
/// the record's JSON.
#[test]
fn cli_decode_bare_payloads_under_address_space_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    for_each(|h| {
        let Some((start, end)) = h.payload_range() else {
            return;
        };
        let stream = h.stream();
        let name = h.file.replace('/', "_") + ".payload";
        let path = dir.path().join(name).display().to_string();
        std::fs::write(&path, &stream[start..end]).expect("write payload");
        let out = run_bin_limited(&args(&["decode", "--payload", &h.payload], &[], &path));
        if h.ok() {
            assert_eq!(out.code, Some(0), "decode: {out:?}");
            let record = h.u64("payload_record").expect("payload_record") as usize;
            let want = &h.json_before[record..=record];
            if let Err(e) = same_lines(&out.stdout_lines(), want) {
                panic!("decode: {e}");
            }
        } else {
            assert_eq!(out.code, Some(1), "decode: {out:?}");
            let o = h.offset.expect("offset") - start as u64;
            let prefix = format!("error[decode_error]: {path}: at byte {o}: ");
            assert!(
                out.stderr.starts_with(&prefix),
                "decode: stderr\n  {}\ndoes not start with\n  {prefix}",
                out.stderr.trim_end()
            );
        }
    });
}

/// Set (to a byte count) in the environment of this binary re-run as a child
/// by `address_space_limit_is_effective`: the child tries to reserve that
/// many bytes and says on stderr whether it could.
const RESERVE_ENV: &str = "RECORDWIRE_TEST_RESERVE_BYTES";

/// Runs this test binary's `address_space_limit_is_effective` alone, as a
/// child under the 1 GiB address-space limit (the wrapper of
/// `run_bin_limited`), asking it to reserve `bytes`; returns what it said.
fn reserve_under_limit(bytes: u64) -> Out {
    let exe = std::env::current_exe().expect("the test binary's path");
    // The test's name within the binary: its path without the crate's name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = if module.is_empty() {
        "address_space_limit_is_effective".to_owned()
    } else {
        format!("{module}::address_space_limit_is_effective")
    };
    run_limited(
        "sh",
        &[
            "-c".to_owned(),
            format!(
                "ulimit -v {ADDRESS_SPACE_KIB} && {RESERVE_ENV}={bytes} && export {RESERVE_ENV} \\
                 && exec \"$0\" \"$@\""
            ),
            exe.display().to_string(),
            name,
            "--exact".to_owned(),
            "--nocapture".to_owned(),
            "--test-threads=1".to_owned(),
        ],
    )
}

/// The limit itself works: under it, a program that tries to allocate more
/// than 1 GiB fails (so the runs above would have shown such an allocation),
/// while one that allocates much less does not. The program is this test
/// binary, re-run as a child with only this test, which then reserves
/// (`Vec::try_reserve_exact`) the bytes it is asked for and reports whether
/// the allocator gave them; no other tool is needed.
#[test]
fn address_space_limit_is_effective() {
    if let Some(bytes) = std::env::var_os(RESERVE_ENV) {
        // The child.
        let bytes: usize = bytes
            .to_str()
            .and_then(|b| b.parse().ok())
            .expect("a byte count");
        let mut v: Vec<u8> = Vec::new();
        match v.try_reserve_exact(bytes) {
            Ok(()) => eprintln!("reserved {bytes} bytes"),
            Err(_) => eprintln!("refused {bytes} bytes"),
        }
        return;
    }
    // What the child said it did with `bytes`, or `None` if it said nothing.
    let said = |out: &Out, bytes: u64| -> Option<String> {
        out.stderr
            .lines()
            .find(|l| l.ends_with(&format!(" {bytes} bytes")))
            .map(|l| l.split(' ').next().unwrap_or_default().to_owned())
    };
    let small = 64 << 20;
    let out = reserve_under_limit(small);
    assert_eq!(
        (out.code, said(&out, small).as_deref()),
        (Some(0), Some("reserved")),
        "64 MiB under a 1 GiB limit (the child must run and allocate): {out:?}"
    );
    let big = 2 << 30;
    let out = reserve_under_limit(big);
    assert_eq!(
        (out.code, said(&out, big).as_deref()),
        (Some(0), Some("refused")),
        "2 GiB allocated under a 1 GiB limit: {out:?}"
    );
}

// ---------------------------------------------------------------------------
// Known bugs, checked fully
// ---------------------------------------------------------------------------

/// `Shard::open` under the skip policy, on every hostile file: no panic, no
/// allocation by a claimed length, and exactly the records (raw) and errors
/// (kind, offset) of a skip walk with `Source`, mapped or read.
#[test]
fn shard_skip_indexes_what_a_skip_walk_reads() {
    for_each(|h| {
        for mmap in [true, false] {
            let opts = options(h, ErrorPolicy::skip(), mmap);
            let mut source = Source::open(h.path(), &opts).expect("open");
            let (mut delivered, mut errors) = (Vec::new(), Vec::new());
            while let Some(item) = source.next_record() {
                match item {
                    Ok(r) => delivered.push(r.data.to_vec()),
                    Err(e) => errors.push((e.kind().name(), e.offset())),
                }
            }
            let shard = recordwire::dataset::Shard::open(h.path(), &opts)
                .unwrap_or_else(|e| panic!("{}: {e}", h.path()));
            let got: Vec<Vec<u8>> = (0..shard.len())
                .map(|id| shard.get(id).unwrap().unwrap().data.to_vec())
                .collect();
            assert_eq!(got, delivered, "{} (mmap {mmap})", h.path());
            let skipped: Vec<_> = shard
                .skipped()
                .iter()
                .map(|s| (s.error.kind().name(), Some(s.start)))
                .collect();
            assert_eq!(skipped, errors, "{} (mmap {mmap})", h.path());
        }
    });
}
