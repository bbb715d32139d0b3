//! `dump` of payloads of no known message, against the oracle
//! `protoc --decode_raw`: the fields, their numbers and nesting, and the
//! values of `testdata/decode_raw/unknown.tfrecord` must be what protoc
//! printed for it (`unknown.protoc.txt`, written by
//! `testdata/gen/make_decode_raw.py`): a length-delimited field that parses
//! as a message is opened, 10 levels at most, as protoc does; one that does
//! not is bytes. Then the real TensorBoard event file, where it is, and
//! hostile nesting.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use recordwire::dump::{dump_payload, GUESS_DEPTH};
use recordwire::view::PayloadKind;

use crate::support::cli::{real_files, run};

const UNKNOWN: &str = "testdata/decode_raw/unknown.tfrecord";

/// One protoc field line, normalized: `N: varint V`, `N: i32 0x…`,
/// `N: i64 0x…`, `N: bytes LEN`, `N: bytes LEN "TEXT"` (when the bytes are
/// text), `N {`, `}`; two spaces per level.
fn line(indent: usize, text: &str) -> String {
    format!("{}{text}", "  ".repeat(indent))
}

/// The bytes of a string as protoc's CEscape writes it.
fn c_unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        match c {
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'"' | b'\'' | b'\\' => out.push(c),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    if i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                        v = v * 8 + u32::from(b[i] - b'0');
                        i += 1;
                    }
                }
                out.push(v as u8);
            }
            other => panic!("escape \\{} in {s}", other as char),
        }
    }
    out
}

/// Text as `dump` shows it: UTF-8 without control characters but tab, line
/// feed and carriage return.
fn text_of(bytes: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(bytes).ok()?;
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'));
    plain.then(|| s.to_string())
}

/// protoc's output, normalized, per record.
fn protoc_records() -> Vec<Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/decode_raw/unknown.protoc.txt");
    let text = std::fs::read_to_string(path).unwrap();
    let mut records: Vec<Vec<String>> = Vec::new();
    for raw in text.lines() {
        if raw.starts_with("# record ") {
            records.push(Vec::new());
            continue;
        }
        if raw.starts_with('#') {
            continue;
        }
        let indent = (raw.len() - raw.trim_start().len()) / 2;
        let t = raw.trim();
        let norm = if t == "}" || t.ends_with(" {") {
            t.to_string()
        } else {
            let (n, value) = t.split_once(": ").unwrap();
            if let Some(q) = value.strip_prefix('"') {
                let bytes = c_unescape(q.strip_suffix('"').unwrap());
                match text_of(&bytes) {
                    Some(s) => format!("{n}: bytes {} {s:?}", bytes.len()),
                    None => format!("{n}: bytes {}", bytes.len()),
                }
            } else if let Some(hex) = value.strip_prefix("0x") {
                let width = if hex.len() == 8 { "i32" } else { "i64" };
                format!("{n}: {width} {value}")
            } else {
                format!("{n}: varint {value}")
            }
        };
        records.last_mut().unwrap().push(line(indent, &norm));
    }
    records
}

/// `dump`'s output, normalized as [`protoc_records`], per record; checks on
/// the way that each guess says it is one.
fn dump_records(out: &str) -> Vec<Vec<String>> {
    let mut records: Vec<Vec<String>> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let close = |open: &mut Vec<usize>, rec: &mut Vec<String>, at: usize| {
        while open.last().is_some_and(|&i| i >= at) {
            let i = open.pop().unwrap();
            rec.push(line(i, "}"));
        }
    };
    for raw in out.lines() {
        if raw.starts_with("# record ") {
            if let Some(rec) = records.last_mut() {
                close(&mut open, rec, 0);
            }
            records.push(Vec::new());
            continue;
        }
        // Offset, hex column (34 characters, one of them a `…` where the
        // bytes are cut), then two spaces a level.
        let Some((at, _)) = raw.char_indices().nth(34) else {
            continue;
        };
        let text = &raw[at..];
        let indent = (text.len() - text.trim_start().len()) / 2;
        let t = text.trim();
        if t.starts_with("end of group") {
            continue;
        }
        let Some(rest) = t.strip_prefix("unknown field ") else {
            continue; // the frame's lengths and CRCs
        };
        let rec = records.last_mut().unwrap();
        close(&mut open, rec, indent);
        let (n, rest) = rest.split_once(' ').unwrap();
        let norm = if rest == "(SGROUP)" {
            open.push(indent);
            format!("{n} {{")
        } else if let Some(v) = rest.strip_prefix("(VARINT) ") {
            format!("{n}: varint {v}")
        } else if let Some(v) = rest.strip_prefix("(I32) ") {
            let (hex, guess) = v.split_once(", ").unwrap();
            assert!(guess.starts_with("guessed float "), "{raw}");
            let bits = u32::from_str_radix(&hex[2..], 16).unwrap();
            let shown: f64 = guess["guessed float ".len()..]
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let x = f32::from_bits(bits);
            assert!(shown as f32 == x || (x.is_nan() && shown.is_nan()), "{raw}");
            format!("{n}: i32 {hex}")
        } else if let Some(v) = rest.strip_prefix("(I64) ") {
            let (hex, guess) = v.split_once(", ").unwrap();
            assert!(guess.starts_with("guessed double "), "{raw}");
            let bits = u64::from_str_radix(&hex[2..], 16).unwrap();
            let shown: f64 = guess["guessed double ".len()..]
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(shown.to_bits(), bits, "{raw}");
            format!("{n}: i64 {hex}")
        } else if let Some(v) = rest.strip_prefix("(LEN) ") {
            let (len, what) = v.split_once(" bytes").unwrap();
            if what.starts_with(", guessed message") {
                open.push(indent);
                format!("{n} {{")
            } else if let Some(q) = what.strip_prefix(", guessed text ") {
                let s: String = parse_json_string(q);
                format!("{n}: bytes {len} {s:?}")
            } else {
                assert!(what.is_empty() || what.starts_with(':'), "{raw}");
                format!("{n}: bytes {len}")
            }
        } else {
            panic!("unexpected line {raw}");
        };
        rec.push(line(indent, &norm));
    }
    if let Some(rec) = records.last_mut() {
        close(&mut open, rec, 0);
    }
    records
}

/// A JSON string literal as `dump` writes text (no `…`: the fixture's
/// texts are short).
fn parse_json_string(q: &str) -> String {
    assert!(q.starts_with('"') && q.ends_with('"'), "{q}");
    let inner = &q[1..q.len() - 1];
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next().unwrap() {
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            c @ ('"' | '\\' | '/') => out.push(c),
            other => panic!("escape \\{other} in {q}"),
        }
    }
    out
}

#[test]
fn unknown_payloads_dump_as_protoc_decode_raw_prints_them() {
    let (code, out, err) = run(&["dump", "--payload", "raw", UNKNOWN]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    let want = protoc_records();
    let got = dump_records(&out);
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "record {i}:\n{out}");
    }
    // What the fixture covers: 10 levels opened, the 11th is bytes; a text
    // that also parses as a message is opened (and its text named).
    assert!(want[3].iter().any(|l| l.starts_with(&"  ".repeat(10))));
    assert!(
        out.contains("4 bytes, guessed message (or text \"HiHi\")"),
        "{out}"
    );
    assert!(out.contains("guessed text \"brain.Event:2\""), "{out}");
    assert!(
        out.contains("0x00000001, guessed float 1.4013e-45 (or integer 1)"),
        "{out}"
    );
}

/// The real TensorBoard event file (`Event` messages, which `dump` does not
/// know), where the real files are: every record dumps, the wall time shows
/// as the double it is, and the summaries open into tagged values.
#[test]
fn the_real_event_file_dumps_with_its_guesses() {
    let Some(files) = real_files() else {
        return;
    };
    let events = files.iter().find(|f| f.contains("tfevents")).unwrap();
    let (code, out, err) = run(&["dump", "--payload", "raw", events]);
    assert_eq!(code, 0, "{err}");
    let records = out.matches("\n# record ").count();
    assert!(records > 100, "{records}");
    // Record 0: its wall time (field 1, a double of seconds since 1970) and
    // the file version, text.
    let wall: Vec<f64> = out
        .lines()
        .filter_map(|l| l.split("unknown field 1 (I64) ").nth(1))
        .filter(|l| !l.is_empty())
        .map(|l| l.split("guessed double ").nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(wall.len() >= records, "{}", wall.len());
    assert!(wall.iter().all(|t| (1.4e9..2.0e9).contains(t)), "{wall:?}");
    assert!(out.contains("guessed text \"brain.Event:2\""));
    assert!(out.contains("unknown field 5 (LEN)") && out.contains(", guessed message"));
    assert!(out.contains("guessed float"));
}

/// Bytes nested `n` deep: field 1 holding field 1 … holding a varint.
fn nested(n: usize, tag: u8) -> Vec<u8> {
    // Written back to front, then reversed: linear in `n`.
    let mut rev = vec![0x2a, 0x08];
    for _ in 0..n {
        let mut len = rev.len() as u64;
        let mut bytes = Vec::new();
        loop {
            let b = (len & 0x7f) as u8;
            len >>= 7;
            if len == 0 {
                bytes.push(b);
                break;
            }
            bytes.push(b | 0x80);
        }
        rev.extend(bytes.iter().rev());
        rev.push(tag);
    }
    rev.reverse();
    rev
}

/// Hostile nesting is bounded: 100,000 messages one inside the other open
/// [`GUESS_DEPTH`] levels and show the rest as bytes (in time and output
/// linear in the input), and 100,000 nested groups end at the depth limit
/// with an error line, no stack overflow.
#[test]
fn hostile_nesting_is_bounded() {
    let deep = nested(100_000, 0x0a);
    // A tag and a length of 1 to 3 bytes a level.
    assert!(deep.len() > 300_000, "{}", deep.len());
    let mut out = String::new();
    dump_payload(&mut out, PayloadKind::Raw, &deep, 0).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), GUESS_DEPTH as usize + 1, "{out}");
    assert!(lines[..GUESS_DEPTH as usize]
        .iter()
        .all(|l| l.contains("guessed message")));
    let last = lines.last().unwrap();
    assert!(
        last.contains("unknown field 1 (LEN)") && last.ends_with(" …"),
        "{last}"
    );
    assert!(out.len() < 4096);

    // The same inside a known payload: an Example's unknown field 9.
    let mut example = vec![0x4a];
    let mut len = deep.len();
    while len >= 0x80 {
        example.push((len & 0x7f) as u8 | 0x80);
        len >>= 7;
    }
    example.push(len as u8);
    example.extend(&deep);
    let mut out = String::new();
    dump_payload(&mut out, PayloadKind::Example, &example, 0).unwrap();
    assert_eq!(out.lines().count(), GUESS_DEPTH as usize + 1, "{out}");

    let mut groups = vec![0x0b; 100_000]; // start group 1, 100,000 times
    groups.extend(std::iter::repeat_n(0x0c, 100_000));
    let mut out = String::new();
    let e = dump_payload(&mut out, PayloadKind::Raw, &groups, 0).unwrap_err();
    assert_eq!(
        e.reason.to_string(),
        "messages nested deeper than 100 levels"
    );
    assert!(out.lines().count() < 10, "{out}");
}
