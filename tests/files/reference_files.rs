//! The CLI against the reference files of `testdata/ref/`, written by
//! TensorFlow 2.21 and protobuf 7.36 (see `testdata/README.md`).
//!
//! `cat` must print, line by line, the same JSON *values* as
//! `MessageToDict(msg, preserving_proto_field_name=True)` did in the `.jsonl`
//! files, under these rules:
//!
//! - objects compare order-insensitively (map order is not part of the contract);
//! - numbers inside a `float_list` compare as the same double: MessageToDict
//!   gives a float32 as the double of protobuf's `ToShortestFloat` (at least 6
//!   significant digits: `1.4013e-45`), and so must we (docs/FORMAT.md §5.2).
//!   Each decimal must also read back as the same float32 (parsed as f64 and
//!   rounded to f32, what protobuf's JSON readers do);
//! - numbers inside a `double_list` compare as f64 bit patterns, `int32_list`
//!   values as integers, anything else as f64;
//! - `"NaN"`, `"Infinity"`, `"-Infinity"` are strings and compare as strings,
//!   and so do int64 values (strings), bytes (base64) and names.
//!
//! Numbers are compared from their text, parsed by Rust's correctly rounded
//! parsers: before handing a line to `serde_json`, every number token is
//! rewritten into a marked string (`1.5` → `"\u0000num:1.5"`), so that
//! `serde_json`'s default best-effort float parsing cannot blur a last bit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use recordwire::frame::{records, Framing, ReadOptions};
use serde_json::Value;

// ---------------------------------------------------------------------------
// Running the CLI
// ---------------------------------------------------------------------------

use crate::support::cli;

use cli::{run_bin, run_utf8 as run};

/// Runs in-process and asserts exit 0 and an empty stderr.
fn run_ok(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(
        out.code, 0,
        "recordwire {args:?}: exit {}\nstderr:\n{}",
        out.code, out.stderr
    );
    assert!(
        out.stderr.is_empty(),
        "recordwire {args:?}: unexpected stderr:\n{}",
        out.stderr
    );
    out.stdout
}

// ---------------------------------------------------------------------------
// The manifest
// ---------------------------------------------------------------------------

fn ref_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/ref")
}

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

/// One good file of `testdata/ref/manifest.json`.
#[derive(Debug, Clone)]
struct RefFile {
    /// Path relative to `testdata/`.
    file: String,
    framing: String,
    compression: String,
    payload: String,
    records: u64,
    /// Frame starts in the (decompressed) stream, then the end.
    frame_offsets: Vec<u64>,
    jsonl: Option<String>,
}

impl RefFile {
    fn path(&self) -> String {
        testdata(&self.file).display().to_string()
    }

    /// The `--payload` option when the payload is not the framing's default.
    fn payload_args(&self) -> Vec<&'static str> {
        match self.payload.as_str() {
            "sequence_example" => vec!["--payload", "sequence_example"],
            "example" | "ofrecord" => vec![],
            other => panic!("unexpected payload {other:?} in the manifest"),
        }
    }

    /// Expected `cat` lines, raw text.
    fn expected_lines(&self) -> Vec<String> {
        match &self.jsonl {
            None => Vec::new(),
            Some(rel) => {
                let text = std::fs::read_to_string(testdata(rel)).expect("read .jsonl");
                assert!(
                    text.is_empty() || text.ends_with('\n'),
                    "{rel}: last line must end with a newline"
                );
                text.lines().map(str::to_owned).collect()
            }
        }
    }

    fn header_len(&self) -> u64 {
        match self.framing.as_str() {
            "tfrecord" => 12,
            "ofrecord" => 8,
            other => panic!("unexpected framing {other:?}"),
        }
    }
}

fn manifest() -> Vec<RefFile> {
    let text = std::fs::read_to_string(ref_dir().join("manifest.json")).expect("read manifest");
    let v: Value = serde_json::from_str(&text).expect("manifest is JSON");
    let s = |e: &Value, k: &str| {
        e[k].as_str()
            .unwrap_or_else(|| panic!("manifest: {k} is not a string in {e}"))
            .to_owned()
    };
    v.as_array()
        .expect("manifest is an array")
        .iter()
        .map(|e| RefFile {
            file: s(e, "file"),
            framing: s(e, "framing"),
            compression: s(e, "compression"),
            payload: s(e, "payload"),
            records: e["records"].as_u64().expect("records"),
            frame_offsets: e["frame_offsets"]
                .as_array()
                .expect("frame_offsets")
                .iter()
                .map(|o| o.as_u64().expect("offset"))
                .collect(),
            jsonl: e["jsonl"].as_str().map(str::to_owned),
        })
        .collect()
}

fn entry(file: &str) -> RefFile {
    manifest()
        .into_iter()
        .find(|e| e.file == file)
        .unwrap_or_else(|| panic!("{file} not in the manifest"))
}

/// The decompressed content of a reference file.
fn content(e: &RefFile) -> Vec<u8> {
    use std::io::Read as _;
    let raw = std::fs::read(e.path()).expect("read reference file");
    let mut out = Vec::new();
    match e.compression.as_str() {
        "none" => return raw,
        "gzip" => flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .expect("gunzip"),
        "zlib" => flate2::read::ZlibDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .expect("inflate"),
        other => panic!("unexpected compression {other:?}"),
    };
    out
}

fn framing_of(e: &RefFile) -> Framing {
    match e.framing.as_str() {
        "tfrecord" => Framing::TfRecord,
        _ => Framing::OfRecord,
    }
}

// ---------------------------------------------------------------------------
// Comparing JSON values
// ---------------------------------------------------------------------------

/// Marks a number token rewritten into a string.
const NUM: &str = "\u{0}num:";

/// Rewrites every number token of the JSON text `s` (outside strings) into
/// the string `"\u0000num:TOKEN"`, keeping its exact text.
fn mark_numbers(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len() + s.len() / 4);
    let mut i = 0;
    let mut in_str = false;
    let mut start = 0; // start of the pending verbatim run
    while i < b.len() {
        let c = b[i];
        if in_str {
            match c {
                b'\\' => i += 2,
                b'"' => {
                    in_str = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match c {
            b'"' => {
                in_str = true;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                out.push_str(&s[start..i]);
                let tok_start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                out.push_str("\"\\u0000num:");
                out.push_str(&s[tok_start..i]);
                out.push('"');
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&s[start..]);
    out
}

/// Parses one JSON line with its numbers marked.
fn parse_marked(line: &str, what: &str) -> Value {
    // Check the line is valid JSON as it stands, too.
    serde_json::from_str::<Value>(line)
        .unwrap_or_else(|e| panic!("{what}: not valid JSON ({e}):\n{line}"));
    serde_json::from_str(&mark_numbers(line))
        .unwrap_or_else(|e| panic!("{what}: cannot re-parse with marked numbers ({e}):\n{line}"))
}

/// The number token of a marked value, if it is one.
fn num(v: &Value) -> Option<&str> {
    v.as_str().and_then(|s| s.strip_prefix(NUM))
}

/// How numbers compare at some place in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Other,
    Float,
    Double,
    Int32,
    Int64,
    Bytes,
}

fn ctx_of_key(key: &str, current: Ctx) -> Ctx {
    match key {
        "float_list" => Ctx::Float,
        "double_list" => Ctx::Double,
        "int32_list" => Ctx::Int32,
        "int64_list" => Ctx::Int64,
        "bytes_list" => Ctx::Bytes,
        _ => current,
    }
}

/// A decimal read the way protobuf's JSON readers read a float: as a double,
/// then rounded to float32.
fn f32_via_f64(tok: &str) -> Option<f32> {
    tok.parse::<f64>().ok().map(|d| d as f32)
}

/// Compares two marked JSON values; pushes every difference (with its path)
/// onto `diffs`.
fn compare(path: &str, ours: &Value, theirs: &Value, ctx: Ctx, diffs: &mut Vec<String>) {
    if diffs.len() > 20 {
        return;
    }
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for k in a.keys() {
                if !b.contains_key(k) {
                    diffs.push(format!("{path}: unexpected key {k:?} in ours"));
                }
            }
            for (k, tv) in b {
                let p = format!("{path}/{k:?}");
                match a.get(k) {
                    None => diffs.push(format!("{path}: missing key {k:?} (reference has {tv})")),
                    Some(ov) => compare(&p, ov, tv, ctx_of_key(k, ctx), diffs),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                diffs.push(format!(
                    "{path}: {} elements in ours, {} in the reference",
                    a.len(),
                    b.len()
                ));
                return;
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                compare(&format!("{path}[{i}]"), x, y, ctx, diffs);
            }
        }
        _ => match (num(ours), num(theirs)) {
            (Some(x), Some(y)) => compare_numbers(path, x, y, ctx, diffs),
            (None, None) => {
                if ours != theirs {
                    diffs.push(format!("{path}: ours {ours}, reference {theirs}"));
                }
            }
            _ => diffs.push(format!(
                "{path}: type differs: ours {}, reference {}",
                show(ours),
                show(theirs)
            )),
        },
    }
}

/// A marked value shown as it was written.
fn show(v: &Value) -> String {
    match num(v) {
        Some(t) => format!("number {t}"),
        None => format!("{v}"),
    }
}

fn compare_numbers(path: &str, ours: &str, theirs: &str, ctx: Ctx, diffs: &mut Vec<String>) {
    let same = match ctx {
        Ctx::Float => {
            let (Some(a), Some(b)) = (f32_via_f64(ours), f32_via_f64(theirs)) else {
                diffs.push(format!("{path}: unparsable float {ours} / {theirs}"));
                return;
            };
            // Our text must also read back to the same float32 when parsed
            // directly as float32 (no double rounding surprise).
            match ours.parse::<f32>() {
                Ok(direct) if direct.to_bits() == a.to_bits() => {}
                _ => diffs.push(format!(
                    "{path}: our float {ours} reads as {a:e} via f64 but differently as f32"
                )),
            }
            // The same float32, and the very same number: MessageToDict's
            // float is a double (ToShortestFloat's), compared as one.
            let same_double = match (ours.parse::<f64>(), theirs.parse::<f64>()) {
                (Ok(x), Ok(y)) => x.to_bits() == y.to_bits(),
                _ => false,
            };
            a.to_bits() == b.to_bits() && same_double
        }
        Ctx::Int32 | Ctx::Int64 => match (ours.parse::<i64>(), theirs.parse::<i64>()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        },
        Ctx::Double | Ctx::Other | Ctx::Bytes => {
            match (ours.parse::<f64>(), theirs.parse::<f64>()) {
                (Ok(a), Ok(b)) => a.to_bits() == b.to_bits(),
                _ => false,
            }
        }
    };
    if !same {
        diffs.push(format!(
            "{path}: number differs ({ctx:?}): ours {ours}, reference {theirs}"
        ));
    }
}

/// Asserts that `ours` (our `cat` output) holds the same values as the
/// reference lines, line by line.
fn assert_same_records(what: &str, ours: &str, reference: &[String]) {
    let got: Vec<&str> = ours.lines().collect();
    assert!(
        ours.is_empty() || ours.ends_with('\n'),
        "{what}: output does not end with a newline"
    );
    let mut failures = Vec::new();
    for (i, (o, r)) in got.iter().zip(reference).enumerate() {
        let mut diffs = Vec::new();
        compare(
            "",
            &parse_marked(o, &format!("{what}: our line {i}")),
            &parse_marked(r, &format!("{what}: reference line {i}")),
            Ctx::Other,
            &mut diffs,
        );
        if !diffs.is_empty() {
            failures.push(format!(
                "record {i}:\n  {}\n  ours:      {}\n  reference: {}",
                diffs.join("\n  "),
                clip(o),
                clip(r)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{what}: {} of {} records differ from the reference:\n{}",
        failures.len(),
        reference.len(),
        failures.join("\n")
    );
    assert_eq!(
        got.len(),
        reference.len(),
        "{what}: {} lines printed, the reference has {}",
        got.len(),
        reference.len()
    );
}

fn clip(s: &str) -> String {
    if s.len() <= 400 {
        return s.to_owned();
    }
    let mut end = 400;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

// ---------------------------------------------------------------------------
// The comparator itself
// ---------------------------------------------------------------------------

#[test]
fn comparator_rules() {
    let diff = |a: &str, b: &str| {
        let mut d = Vec::new();
        compare(
            "",
            &parse_marked(a, "a"),
            &parse_marked(b, "b"),
            Ctx::Other,
            &mut d,
        );
        d
    };
    // Key order does not matter; values do.
    assert!(diff(r#"{"a":1,"b":"x"}"#, r#"{"b": "x", "a": 1}"#).is_empty());
    assert!(!diff(r#"{"a":1}"#, r#"{"a":2}"#).is_empty());
    assert!(!diff(r#"{"a":1}"#, r#"{"a":1,"b":1}"#).is_empty());
    // Floats as the same double (MessageToDict's 6+ digits), whatever the
    // spelling; the same float32 is not enough.
    let fl = |v: &str| format!(r#"{{"float_list":{{"value":[{v}]}}}}"#);
    assert!(diff(&fl("1.4013e-45"), &fl("1.4013e-45")).is_empty());
    assert!(!diff(&fl("1e-45"), &fl("1.4013e-45")).is_empty());
    assert!(!diff(&fl("4e-45"), &fl("4.2039e-45")).is_empty());
    assert!(diff(&fl("3.4028235e38"), &fl("3.4028235e+38")).is_empty());
    assert!(diff(&fl("1.0"), &fl("1")).is_empty());
    assert!(!diff(&fl("356370.13"), &fl("356370.12")).is_empty());
    assert!(diff(&fl("0.1"), &fl("0.1")).is_empty());
    assert!(!diff(&fl("-0.0"), &fl("0.0")).is_empty(), "-0.0 vs 0.0");
    assert!(!diff(&fl("3e-45"), &fl("1.4013e-45")).is_empty());
    assert!(diff(&fl("\"NaN\""), &fl("\"NaN\"")).is_empty());
    assert!(!diff(&fl("\"NaN\""), &fl("\"Infinity\"")).is_empty());
    // The same decimals as doubles differ.
    let dl = |v: &str| format!(r#"{{"double_list":{{"value":[{v}]}}}}"#);
    assert!(!diff(&dl("1e-45"), &dl("1.4013e-45")).is_empty());
    assert!(diff(
        &dl("1.7976931348623157e308"),
        &dl("1.7976931348623157e+308")
    )
    .is_empty());
    assert!(!diff(&dl("0.1"), &dl("0.10000000000000002")).is_empty());
    // int64 must stay strings, int32 numbers.
    assert!(!diff(
        r#"{"int64_list":{"value":[7]}}"#,
        r#"{"int64_list":{"value":["7"]}}"#
    )
    .is_empty());
    assert!(!diff(
        r#"{"int32_list":{"value":["7"]}}"#,
        r#"{"int32_list":{"value":[7]}}"#
    )
    .is_empty());
    // Strings with a digit or a minus inside are not touched.
    assert_eq!(
        mark_numbers(r#"{"a-1":"x\"2",  "b":[-1.5e+3,0]}"#),
        r#"{"a-1":"x\"2",  "b":["\u0000num:-1.5e+3","\u0000num:0"]}"#
    );
}

// ---------------------------------------------------------------------------
// cat
// ---------------------------------------------------------------------------

fn cat_args<'a>(e: &'a RefFile, path: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["cat"];
    args.extend(e.payload_args());
    args.extend_from_slice(extra);
    args.push(path);
    args
}

#[test]
fn cat_matches_reference_jsonl() {
    let entries = manifest();
    assert_eq!(entries.len(), 8, "manifest entries");
    for e in &entries {
        let path = e.path();
        let out = run_ok(&cat_args(e, &path, &[]));
        let expected = e.expected_lines();
        assert_eq!(expected.len() as u64, e.records, "{}: .jsonl lines", e.file);
        assert_same_records(&e.file, &out, &expected);
    }
}

#[test]
fn cat_is_the_same_without_mmap() {
    for e in manifest() {
        let path = e.path();
        let mapped = run_ok(&cat_args(&e, &path, &[]));
        let read = run_ok(&cat_args(&e, &path, &["--no-mmap"]));
        assert!(mapped == read, "{}: --no-mmap changes the output", e.file);
    }
}

#[test]
fn cat_names_compression_and_framing_explicitly() {
    // Naming what auto-detection finds gives the same output.
    for e in manifest() {
        let path = e.path();
        let auto = run_ok(&cat_args(&e, &path, &[]));
        let named = run_ok(&cat_args(
            &e,
            &path,
            &["--framing", &e.framing, "--compression", &e.compression],
        ));
        assert!(
            auto == named,
            "{}: naming framing/compression changes the output",
            e.file
        );
    }
}

/// The reference record with only the features named in `keep`: the
/// `feature` map filtered, and dropped when nothing is left (as
/// MessageToDict omits an empty map).
fn filter_features(record: &Value, keep: &[&str]) -> Value {
    fn filter_map(obj: &mut serde_json::Map<String, Value>, keep: &[&str]) {
        if let Some(Value::Object(m)) = obj.get_mut("feature") {
            m.retain(|k, _| keep.contains(&k.as_str()));
            if m.is_empty() {
                obj.remove("feature");
            }
        }
    }
    let mut r = record.clone();
    if let Value::Object(top) = &mut r {
        if let Some(Value::Object(features)) = top.get_mut("features") {
            filter_map(features, keep); // tf.Example
        } else {
            filter_map(top, keep); // OFRecord
        }
    }
    r
}

#[test]
fn cat_features_keeps_only_those() {
    let cases: [(&str, &[&str]); 4] = [
        ("ref/small.tfrecord", &["label", "bbox"]),
        ("ref/small.tfrecord", &["image"]),
        ("ref/examples.tfrecord", &["floats", "a", "no_such_feature"]),
        ("ref/ofrecord.part-0", &["images", "labels", "doubles"]),
    ];
    for (file, keep) in cases {
        let e = entry(file);
        let path = e.path();
        let list = keep.join(",");
        let args = cat_args(&e, &path, &["--features", &list]);
        let run = run(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        // A name no record has is said once on stderr; the others, nothing.
        let missing: Vec<String> = keep
            .iter()
            .filter(|k| k.starts_with("no_such"))
            .map(|k| format!("note: no record printed has a feature named \"{k}\"\n"))
            .collect();
        assert_eq!(run.stderr, missing.concat(), "{args:?}");
        let out = run.stdout;
        let expected: Vec<String> = e
            .expected_lines()
            .iter()
            .map(|l| {
                let v: Value = serde_json::from_str(l).expect("reference line");
                filter_features(&v, keep).to_string()
            })
            .collect();
        assert_same_records(&format!("{file} --features {list}"), &out, &expected);
        // And never a name that was not asked for.
        for (i, line) in out.lines().enumerate() {
            let v: Value = serde_json::from_str(line).expect("our line");
            let map = v
                .get("features")
                .unwrap_or(&v)
                .get("feature")
                .and_then(Value::as_object);
            for name in map.into_iter().flat_map(|m| m.keys()) {
                assert!(
                    keep.contains(&name.as_str()),
                    "{file} --features {list}: record {i} has {name:?}"
                );
            }
        }
    }
    // Selecting something present everywhere in small.tfrecord must print it everywhere.
    let out = run_ok(&[
        "cat",
        "--features",
        "label",
        &entry("ref/small.tfrecord").path(),
    ]);
    assert_eq!(out.lines().filter(|l| l.contains("\"label\"")).count(), 10);
}

// ---------------------------------------------------------------------------
// The text of numbers (docs/FORMAT.md §5.2)
// ---------------------------------------------------------------------------

/// The `value` list of `feature` in one of our lines, as written: numbers
/// bare (`1e-45`), strings quoted (`"NaN"`).
fn value_tokens(line: &str, feature: &str) -> Vec<String> {
    let v = parse_marked(line, "our line");
    let f = v
        .get("features")
        .unwrap_or(&v)
        .get("feature")
        .and_then(|m| m.get(feature))
        .unwrap_or_else(|| panic!("no feature {feature:?} in {line}"));
    let (_, list) = f
        .as_object()
        .and_then(|o| o.iter().next())
        .expect("a feature with a kind");
    list["value"]
        .as_array()
        .expect("a value list")
        .iter()
        .map(|x| match num(x) {
            Some(t) => t.to_owned(),
            None => format!("{x}"), // a string, with its quotes
        })
        .collect()
}

/// Significant digits of a decimal token, without leading or trailing zeros.
fn digits(tok: &str) -> String {
    let mantissa = tok
        .trim_start_matches('-')
        .split(['e', 'E'])
        .next()
        .unwrap_or("");
    let d: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let d = d.trim_start_matches('0').trim_end_matches('0');
    if d.is_empty() {
        "0".to_owned()
    } else {
        d.to_owned()
    }
}

#[test]
fn float_text_follows_spec() {
    let e = entry("ref/examples.tfrecord");
    let out = run_ok(&["cat", &e.path()]);
    let line = out.lines().nth(4).expect("record 4");
    let floats = value_tokens(line, "floats");
    // 0.1, -0.0, 1e-45, 3.4028235e+38, NaN, inf, -inf, 1.0, 0.5
    assert_eq!(floats.len(), 9, "{floats:?}");
    assert_eq!(floats[0], "0.1");
    assert_eq!(floats[1], "-0.0");
    assert_eq!(
        floats[2], "1.4013e-45",
        "docs/FORMAT.md §5.2: at least 6 digits, as MessageToDict"
    );
    assert!(
        floats[3] == "3.4028235e38" || floats[3] == "3.4028235e+38",
        "FLT_MAX printed as {}",
        floats[3]
    );
    assert_eq!(
        floats[4..7],
        [r#""NaN""#, r#""Infinity""#, r#""-Infinity""#]
    );
    assert_eq!(floats[7], "1.0");
    assert_eq!(floats[8], "0.5");
    let more = value_tokens(line, "more_floats");
    assert_eq!(more[2], "16777216.0", "2^24 keeps a fraction: {more:?}");

    // Doubles: the true shortest round trip.
    let e = entry("ref/ofrecord.part-0");
    let out = run_ok(&["cat", &e.path()]);
    let doubles = value_tokens(out.lines().nth(4).expect("record 4"), "doubles");
    assert_eq!(
        doubles[..5],
        [
            r#""NaN""#,
            r#""Infinity""#,
            r#""-Infinity""#,
            "-0.0",
            "5e-324"
        ]
    );
    assert!(
        doubles[5] == "1.7976931348623157e308" || doubles[5] == "1.7976931348623157e+308",
        "DBL_MAX printed as {}",
        doubles[5]
    );
    assert_eq!(doubles[6], "0.1");
    assert_eq!(doubles[8], "1.0");
}

/// The digits protobuf's Python `ToShortestFloat` gives a float32: those of
/// the first of `%.6g` to `%.9g` that reads back (through a double), written
/// here independently of `recordwire::json`.
fn to_shortest_float_digits(v: f32) -> String {
    let exact = f64::from(v);
    for precision in 6..=9 {
        let text = format!("{exact:.*e}", precision - 1);
        if text.parse::<f64>().map(|d| d as f32) == Ok(v) {
            return text;
        }
    }
    unreachable!("{v:e}: nine digits always read back")
}

/// Every float and double we print, in every reference file: a fraction or
/// an exponent; for a double the shortest digits that read back (as Rust's
/// own shortest formatting gives), for a float32 the digits of
/// `ToShortestFloat` (docs/FORMAT.md §5.2).
#[test]
fn every_float_has_fraction_or_exponent_and_its_digits() {
    fn walk(v: &Value, ctx: Ctx, bad: &mut Vec<String>, n: &mut usize) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    walk(x, ctx_of_key(k, ctx), bad, n);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, ctx, bad, n)),
            _ => {
                let Some(tok) = num(v) else { return };
                match ctx {
                    Ctx::Float | Ctx::Double => {
                        *n += 1;
                        if !tok.contains(['.', 'e', 'E']) {
                            bad.push(format!("{tok}: neither fraction nor exponent"));
                        }
                        let want = if ctx == Ctx::Float {
                            to_shortest_float_digits(f32_via_f64(tok).unwrap_or(f32::NAN))
                        } else {
                            format!("{:e}", tok.parse::<f64>().unwrap_or(f64::NAN))
                        };
                        if digits(tok) != digits(&want) {
                            bad.push(format!("{tok}: not the expected digits ({want})"));
                        }
                    }
                    Ctx::Int32 => {
                        if tok.parse::<i32>().is_err() {
                            bad.push(format!("int32 {tok} is not a plain integer"));
                        }
                    }
                    _ => bad.push(format!("a number {tok} where none is expected ({ctx:?})")),
                }
            }
        }
    }
    let mut total = 0;
    for e in manifest() {
        let path = e.path();
        let out = run_ok(&cat_args(&e, &path, &[]));
        let mut bad = Vec::new();
        for line in out.lines() {
            walk(
                &parse_marked(line, &e.file),
                Ctx::Other,
                &mut bad,
                &mut total,
            );
        }
        assert!(bad.is_empty(), "{}: {}", e.file, bad.join("\n"));
    }
    assert!(total > 1000, "only {total} floats seen");
}

/// int64 values are JSON strings of decimal integers, int32 values numbers.
#[test]
fn int64_are_strings_and_int32_are_numbers() {
    fn walk(v: &Value, ctx: Ctx, counts: &mut [usize; 2], bad: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    walk(x, ctx_of_key(k, ctx), counts, bad);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, ctx, counts, bad)),
            Value::String(s) if ctx == Ctx::Int64 => {
                counts[0] += 1;
                if num(v).is_some() || s.parse::<i64>().is_err() {
                    bad.push(format!("int64 value {} is not a string of an i64", show(v)));
                }
            }
            _ if ctx == Ctx::Int32 => {
                counts[1] += 1;
                if num(v).and_then(|t| t.parse::<i32>().ok()).is_none() {
                    bad.push(format!("int32 value {} is not a JSON integer", show(v)));
                }
            }
            _ => {}
        }
    }
    let mut counts = [0usize; 2];
    let mut bad = Vec::new();
    for file in ["ref/examples.tfrecord", "ref/ofrecord.part-0"] {
        let out = run_ok(&["cat", &entry(file).path()]);
        for line in out.lines() {
            walk(&parse_marked(line, file), Ctx::Other, &mut counts, &mut bad);
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(counts[0] > 100 && counts[1] > 5, "values seen: {counts:?}");
    // The extremes, as text.
    let out = run_ok(&["cat", &entry("ref/ofrecord.part-0").path()]);
    let line = out.lines().nth(2).expect("record 2");
    assert!(
        line.contains("-2147483648") && !line.contains("\"-2147483648\""),
        "{line}"
    );
    let line = out.lines().nth(3).expect("record 3");
    assert!(line.contains("\"-9223372036854775808\""), "{line}");
    assert!(line.contains("\"9223372036854775807\""), "{line}");
}

// ---------------------------------------------------------------------------
// count, verify, inspect
// ---------------------------------------------------------------------------

#[test]
fn count_gives_manifest_counts() {
    let entries = manifest();
    for e in &entries {
        let out = run_ok(&["count", &e.path()]);
        assert_eq!(out, format!("{}\n", e.records), "count {}", e.file);
    }
    // Several files: one line each, then the total.
    let paths: Vec<String> = entries.iter().map(RefFile::path).collect();
    let mut args = vec!["count"];
    args.extend(paths.iter().map(String::as_str));
    let out = run_ok(&args);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), entries.len() + 1, "{out}");
    for (line, e) in lines.iter().zip(&entries) {
        assert_eq!(*line, format!("{}\t{}", e.records, e.path()));
    }
    let total: u64 = entries.iter().map(|e| e.records).sum();
    assert_eq!(lines[entries.len()], format!("{total}\ttotal"));
}

#[test]
fn verify_accepts_every_reference_file() {
    for e in manifest() {
        let mut args = vec!["verify"];
        args.extend(e.payload_args());
        let path = e.path();
        args.push(&path);
        let out = run(&args);
        assert_eq!(out.code, 0, "verify {}: {out:?}", e.file);
        assert_eq!(out.stdout, "", "verify {}: problems printed", e.file);
        assert!(
            !out.stderr.contains("error"),
            "verify {}: {}",
            e.file,
            out.stderr
        );
    }
}

/// What the reference says of one feature name across a file.
#[derive(Debug, Default, PartialEq)]
struct FeatureStats {
    records: u64,
    kinds: BTreeMap<String, u64>,
    values_total: u64,
}

/// Schema statistics of a `Features` map (`{"feature": {...}}` or absent).
fn add_stats(stats: &mut BTreeMap<String, FeatureStats>, features: Option<&Value>) {
    let Some(map) = features
        .and_then(|f| f.get("feature"))
        .and_then(Value::as_object)
    else {
        return;
    };
    for (name, feature) in map {
        let s = stats.entry(name.clone()).or_default();
        s.records += 1;
        let (kind, n) = match feature.as_object().and_then(|o| o.iter().next()) {
            None => ("none".to_owned(), 0),
            Some((k, list)) => (
                k.clone(),
                list.get("value")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len) as u64,
            ),
        };
        *s.kinds.entry(kind).or_default() += 1;
        s.values_total += n;
    }
}

#[test]
fn inspect_reports_counts_sizes_and_schema() {
    for e in manifest() {
        let path = e.path();
        let mut args = vec!["inspect"];
        args.extend(e.payload_args());
        args.push(&path);
        let text = run_ok(&args);
        let records_line = text
            .lines()
            .find(|l| l.starts_with("records:"))
            .unwrap_or_else(|| panic!("inspect {}: no `records:` line:\n{text}", e.file));
        assert_eq!(
            records_line.split_whitespace().nth(1),
            Some(e.records.to_string().as_str()),
            "inspect {}: {records_line}",
            e.file
        );

        args.insert(1, "--json");
        let json: Value = serde_json::from_str(run_ok(&args).trim_end()).expect("inspect --json");
        assert_eq!(json["records"], e.records, "inspect --json {}", e.file);
        // Data sizes from the frame offsets.
        let lens: Vec<u64> = e
            .frame_offsets
            .windows(2)
            .map(|w| w[1] - w[0] - e.header_len() - if e.framing == "tfrecord" { 4 } else { 0 })
            .collect();
        let data = &json["data_bytes"];
        assert_eq!(
            data["total"],
            lens.iter().sum::<u64>(),
            "{}: {data}",
            e.file
        );
        assert_eq!(
            data["min"],
            lens.iter().min().copied().unwrap_or(0),
            "{}",
            e.file
        );
        assert_eq!(
            data["max"],
            lens.iter().max().copied().unwrap_or(0),
            "{}",
            e.file
        );

        // The schema of the (context) features, from the reference JSON.
        let mut expected = BTreeMap::new();
        for line in e.expected_lines() {
            let v: Value = serde_json::from_str(&line).expect("reference line");
            let features = match e.payload.as_str() {
                "example" => v.get("features"),
                "sequence_example" => v.get("context"),
                _ => Some(&v),
            };
            add_stats(&mut expected, features);
        }
        let got = json["features"].as_object().expect("features object");
        let names: Vec<&String> = got.keys().collect();
        let expected_names: Vec<&String> = expected.keys().collect();
        assert_eq!(
            names, expected_names,
            "inspect --json {}: feature names",
            e.file
        );
        for (name, want) in &expected {
            let g = &got[name];
            let kinds: BTreeMap<String, u64> = g["kinds"]
                .as_object()
                .expect("kinds")
                .iter()
                .map(|(k, n)| (k.clone(), n.as_u64().expect("kind count")))
                .collect();
            let have = FeatureStats {
                records: g["records"].as_u64().expect("records"),
                kinds,
                values_total: g["values"]["total"].as_u64().expect("values.total"),
            };
            assert_eq!(&have, want, "inspect --json {}: feature {name:?}", e.file);
        }
    }
}

// ---------------------------------------------------------------------------
// decode and dump
// ---------------------------------------------------------------------------

#[test]
fn decode_of_a_bare_record_prints_what_cat_prints() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut checked = 0;
    for e in manifest() {
        if e.records == 0 {
            continue;
        }
        let path = e.path();
        let cat = run_ok(&cat_args(&e, &path, &[]));
        let cat_lines: Vec<&str> = cat.lines().collect();
        let bytes = content(&e);
        let framing = framing_of(&e);
        for (i, r) in records(&bytes, framing, ReadOptions::default()).enumerate() {
            let r = r.unwrap_or_else(|err| panic!("{}: record {i}: {err}", e.file));
            assert_eq!(
                r.offset, e.frame_offsets[i],
                "{}: record {i} offset",
                e.file
            );
            let bare = dir.path().join(format!("record-{i}.bin"));
            std::fs::write(&bare, r.data).expect("write bare record");
            let bare = bare.display().to_string();
            let out = run_ok(&["decode", "--payload", &e.payload, &bare]);
            assert_eq!(
                out.trim_end_matches('\n'),
                cat_lines[i],
                "{}: decode of record {i} differs from cat",
                e.file
            );
            checked += 1;
        }
    }
    assert!(checked >= 100, "only {checked} records decoded");
}

#[test]
fn dump_record_starts_its_payload_at_the_data_offset() {
    for e in manifest() {
        if e.records == 0 {
            continue;
        }
        let path = e.path();
        let bytes = content(&e);
        let framing = framing_of(&e);
        let recs: Vec<_> = records(&bytes, framing, ReadOptions::default())
            .collect::<Result<_, _>>()
            .expect("records");
        // The first, a middle and the last record with a non-empty payload.
        let non_empty: Vec<usize> = (0..recs.len())
            .filter(|&i| !recs[i].data.is_empty())
            .collect();
        let picks = [
            non_empty[0],
            non_empty[non_empty.len() / 2],
            non_empty[non_empty.len() - 1],
        ];
        for n in picks {
            let id = n.to_string();
            let mut args = vec!["dump"];
            args.extend(e.payload_args());
            args.extend(["--record", &id, &path]);
            let out = run_ok(&args);
            let data_offset = e.frame_offsets[n] + e.header_len();
            assert_eq!(recs[n].data_offset, data_offset);
            let header = format!(
                "# record {n} at byte {}: {} bytes of data at byte {data_offset}",
                e.frame_offsets[n],
                recs[n].data.len()
            );
            let lines: Vec<&str> = out.lines().collect();
            let at = lines.iter().position(|l| *l == header).unwrap_or_else(|| {
                panic!("dump {} --record {n}: no line {header:?}:\n{out}", e.file)
            });
            assert_eq!(
                lines.iter().filter(|l| l.starts_with("# record ")).count(),
                1,
                "dump --record {n} shows one record"
            );
            // Frame lines first (length, and the length crc for TFRecord),
            // then the payload.
            let frame_lines = if e.framing == "tfrecord" { 2 } else { 1 };
            assert!(lines[at + 1].ends_with(&format!(" length {}", recs[n].data.len())));
            if frame_lines == 2 {
                assert!(
                    lines[at + 2].contains(" length crc 0x"),
                    "{}",
                    lines[at + 2]
                );
            }
            let first_payload = lines
                .get(at + 1 + frame_lines)
                .unwrap_or_else(|| panic!("dump {} --record {n}: no payload line", e.file));
            let offset = u64::from_str_radix(&first_payload[..8], 16)
                .unwrap_or_else(|_| panic!("no offset in {first_payload:?}"));
            assert_eq!(
                offset, data_offset,
                "dump {} --record {n}: first payload line {first_payload:?}",
                e.file
            );
            assert!(!first_payload.contains("data crc"), "{first_payload}");
        }
        // The whole file dumps without error.
        let mut args = vec!["dump"];
        args.extend(e.payload_args());
        args.push(&path);
        let out = run_ok(&args);
        assert_eq!(
            out.lines().filter(|l| l.starts_with("# record ")).count() as u64,
            e.records,
            "dump {}",
            e.file
        );
    }
}

// ---------------------------------------------------------------------------
// The built binary: real exit codes and streams
// ---------------------------------------------------------------------------

#[test]
fn binary_cat_count_verify_and_stdin() {
    let e = entry("ref/examples.tfrecord");
    let path = e.path();
    let in_process = run_ok(&["cat", &path]);
    let bin = run_bin(&["cat", &path], None);
    assert_eq!((bin.code, bin.stderr.as_str()), (0, ""), "{bin:?}");
    assert!(bin.stdout == in_process, "binary and in-process cat differ");

    // `-` reads stdin, here a gzip stream.
    let gz = entry("ref/examples.tfrecord.gz");
    let bin = run_bin(&["cat", "-"], Some(&testdata(&gz.file)));
    assert_eq!((bin.code, bin.stderr.as_str()), (0, ""), "cat - < .gz");
    assert_same_records(
        "cat - < examples.tfrecord.gz",
        &bin.stdout,
        &gz.expected_lines(),
    );

    let seq = entry("ref/sequence_examples.tfrecord");
    let bin = run_bin(&["cat", "--payload", "sequence_example", &seq.path()], None);
    assert_eq!(bin.code, 0, "{bin:?}");
    assert_same_records(
        "binary cat sequence_examples",
        &bin.stdout,
        &seq.expected_lines(),
    );

    let bin = run_bin(&["count", &entry("ref/ofrecord.part-0").path()], None);
    assert_eq!((bin.code, bin.stdout.as_str()), (0, "20\n"), "{bin:?}");

    let bin = run_bin(&["verify", &path], None);
    assert_eq!((bin.code, bin.stdout.as_str()), (0, ""), "{bin:?}");

    let bin = run_bin(&["cat", &entry("ref/empty.tfrecord.gz").path()], None);
    assert_eq!(
        (bin.code, bin.stdout.as_str(), bin.stderr.as_str()),
        (0, "", "")
    );
}

#[test]
fn binary_usage_errors_exit_2() {
    // Unknown option.
    let bin = run_bin(
        &[
            "cat",
            "--no-such-option",
            &entry("ref/small.tfrecord").path(),
        ],
        None,
    );
    assert_eq!(bin.code, 2, "{bin:?}");
    assert!(bin.stdout.is_empty() && !bin.stderr.is_empty(), "{bin:?}");
    // Missing file.
    let missing = ref_dir().join("no-such-file.tfrecord");
    let bin = run_bin(&["cat", &missing.display().to_string()], None);
    assert_eq!(bin.code, 2, "{bin:?}");
    assert!(
        bin.stdout.is_empty() && bin.stderr.starts_with("error["),
        "{bin:?}"
    );
    // No command.
    assert_eq!(run_bin(&[], None).code, 2);
    // In-process gives the same codes.
    assert_eq!(run(&["cat", "--payload", "nonsense", "x"]).code, 2);
    assert_eq!(run(&["cat", &missing.display().to_string()]).code, 2);
}
