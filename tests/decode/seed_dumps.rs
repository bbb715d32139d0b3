//! The two `xxd -b` dumps of the seed article, kept verbatim in
//! `testdata/seed_map.xxd` and `testdata/seed_example.xxd`, as test vectors.
//! The article (a blog post, "tfrecord二进制解析") is one of the documents
//! the project was started from, which are not in this repository; it
//! explains a serialized `map<string, int64>` and a tf.Example bit by bit
//! (docs/FORMAT.md, "Terms" and §4.4).
//!
//! The dumps are copied exactly as printed, with the article's quirks: `||`
//! markers inserted before two groups, a last line without its ASCII column,
//! and one byte printed with 7 binary digits (`0001010` at offset 0x47, which
//! docs/FORMAT.md §4.4 says is `0x0a`). A small nom parser reads that format: an offset
//! `0000000:`, groups of 7 or 8 binary digits (each optionally preceded by
//! `||`), then the ASCII column.

use nom::bytes::complete::{tag, take_while_m_n};
use nom::character::complete::{char, hex_digit1, line_ending, not_line_ending, space1};
use nom::combinator::{eof, map_res, opt};
use nom::multi::many1;
use nom::sequence::{preceded, terminated};
use nom::{IResult, Parser};

use recordwire::view::{ExampleRef, ListRef, PayloadKind};
use recordwire::wire::{FieldReader, Value};

// ---------------------------------------------------------------------------
// The parser
// ---------------------------------------------------------------------------

/// One byte group of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group<'a> {
    /// Preceded by the article's `||` marker.
    marked: bool,
    /// The binary digits as printed (7 or 8 of them).
    digits: &'a str,
}

/// One line of `xxd -b` output.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Line<'a> {
    offset: u64,
    groups: Vec<Group<'a>>,
    /// The ASCII column, when printed.
    ascii: Option<&'a str>,
}

fn offset(i: &str) -> IResult<&str, u64> {
    map_res(terminated(hex_digit1, char(':')), |h| {
        u64::from_str_radix(h, 16)
    })
    .parse(i)
}

fn group(i: &str) -> IResult<&str, Group<'_>> {
    (
        opt(tag("||")),
        take_while_m_n(7, 8, |c: char| c == '0' || c == '1'),
    )
        .map(|(m, digits)| Group {
            marked: m.is_some(),
            digits,
        })
        .parse(i)
}

fn line(i: &str) -> IResult<&str, Line<'_>> {
    (
        offset,
        many1(preceded(char(' '), group)),
        opt(preceded(space1, not_line_ending)),
    )
        .map(|(offset, groups, ascii)| Line {
            offset,
            groups,
            ascii,
        })
        .parse(i)
}

fn dump(i: &str) -> IResult<&str, Vec<Line<'_>>> {
    terminated(many1(terminated(line, line_ending)), eof).parse(i)
}

/// A byte group that was not printed with 8 digits.
#[derive(Debug, PartialEq, Eq)]
struct Short {
    offset: u64,
    digits: String,
    value: u8,
}

/// What a dump holds.
#[derive(Debug)]
struct Parsed {
    bytes: Vec<u8>,
    /// Offsets of the groups preceded by `||`.
    markers: Vec<u64>,
    short: Vec<Short>,
}

/// Parses a dump and checks its own consistency: each line starts at the
/// offset of its first byte, and the ASCII column (where printed) shows each
/// byte (printable ASCII as itself, anything else as `.`).
fn parse_dump(name: &str) -> Parsed {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("read the dump");
    let (_, lines) = dump(&text).unwrap_or_else(|e| panic!("{name}: not an xxd -b dump: {e}"));
    let mut parsed = Parsed {
        bytes: Vec::new(),
        markers: Vec::new(),
        short: Vec::new(),
    };
    for l in &lines {
        assert_eq!(
            l.offset,
            parsed.bytes.len() as u64,
            "{name}: line at {:#x} does not start where the previous one ended",
            l.offset
        );
        let start = parsed.bytes.len();
        for g in &l.groups {
            let at = parsed.bytes.len() as u64;
            let value = u8::from_str_radix(g.digits, 2).expect("binary digits");
            if g.marked {
                parsed.markers.push(at);
            }
            if g.digits.len() != 8 {
                parsed.short.push(Short {
                    offset: at,
                    digits: g.digits.to_owned(),
                    value,
                });
            }
            parsed.bytes.push(value);
        }
        if let Some(ascii) = l.ascii {
            let shown: String = parsed.bytes[start..]
                .iter()
                .map(|&b| {
                    if (0x20..0x7f).contains(&b) {
                        b as char
                    } else {
                        '.'
                    }
                })
                .collect();
            assert_eq!(ascii, shown, "{name}: ASCII column of line {:#x}", l.offset);
        }
    }
    parsed
}

#[test]
fn parser_reads_the_format_strictly() {
    let (rest, l) = line("0000006: 01110011 ||0001010  s.").expect("a line");
    assert_eq!(rest, "");
    assert_eq!(l.offset, 6);
    assert_eq!(
        l.groups,
        [
            Group {
                marked: false,
                digits: "01110011"
            },
            Group {
                marked: true,
                digits: "0001010"
            }
        ]
    );
    assert_eq!(l.ascii, Some("s."));
    // A 9-digit group, a 6-digit group or a missing colon is not the format.
    assert!(dump("0000000: 000000001\n").is_err());
    assert!(dump("0000000: 000001\n").is_err());
    assert!(dump("0000000 00000001\n").is_err());
    assert!(dump("0000000: 00000001  .\n").is_ok());
}

// ---------------------------------------------------------------------------
// The map<string, int64> dump
// ---------------------------------------------------------------------------

#[test]
fn map_dump_is_key_test_value_300() {
    let p = parse_dump("seed_map.xxd");
    assert_eq!(p.bytes.len(), 11, "{:02x?}", p.bytes);
    assert!(p.short.is_empty() && p.markers.is_empty());
    assert_eq!(
        p.bytes,
        [0x0a, 0x09, 0x0a, 0x04, b't', b'e', b's', b't', 0x10, 0xac, 0x02]
    );

    // Msg { map<string, int64> val = 1 }: one entry, field 1, LEN.
    let fields: Vec<_> = FieldReader::new(&p.bytes, 0, 0)
        .collect::<Result<_, _>>()
        .expect("well-formed message");
    assert_eq!(fields.len(), 1, "{fields:?}");
    let entry = fields[0];
    assert_eq!((entry.number, entry.offset, entry.value_offset), (1, 0, 2));
    let Value::Len(body) = entry.value else {
        panic!("field 1 is not length-delimited: {entry:?}");
    };
    assert_eq!(body.len(), 9);

    // The entry: key (field 1) "test", value (field 2, varint) 300.
    let inner: Vec<_> = FieldReader::new(body, entry.value_offset, 1)
        .collect::<Result<_, _>>()
        .expect("well-formed entry");
    assert_eq!(inner.len(), 2, "{inner:?}");
    assert_eq!(inner[0].number, 1);
    assert_eq!(inner[0].value, Value::Len(b"test"));
    assert_eq!((inner[0].offset, inner[0].value_offset), (2, 4));
    assert_eq!(inner[1].number, 2);
    assert_eq!(inner[1].value, Value::Varint(300));
    assert_eq!((inner[1].offset, inner[1].value_offset), (8, 9));
}

// ---------------------------------------------------------------------------
// The tf.Example dump
// ---------------------------------------------------------------------------

#[test]
fn example_dump_has_one_seven_digit_byte_at_0x47() {
    let p = parse_dump("seed_example.xxd");
    assert_eq!(p.bytes.len(), 104);
    assert_eq!(
        p.short,
        [Short {
            offset: 0x47,
            digits: "0001010".to_owned(),
            value: 0x0a
        }],
        "exactly one short group, 0001010 = 0x0a at 0x47 (docs/FORMAT.md §4.4)"
    );
    assert_eq!(p.bytes[0x47], 0x0a);
    // The article's markers sit before the second and third map entries.
    assert_eq!(p.markers, [0x29, 0x49]);
    // Example.features, 102 bytes: the whole rest of the message.
    assert_eq!(p.bytes[..2], [0x0a, 0x66]);
}

/// The values of one feature, as text.
fn values(list: ListRef<'_>) -> (&'static str, String) {
    match list {
        ListRef::Int64(l) => {
            let v: Vec<i64> = l.iter().collect::<Result<_, _>>().expect("int64 values");
            ("int64", format!("{v:?}"))
        }
        ListRef::Float(l) => {
            let v: Vec<f32> = l.iter().collect::<Result<_, _>>().expect("float values");
            ("float", format!("{v:?}"))
        }
        other => (other.kind().name(), "?".to_owned()),
    }
}

#[test]
fn example_dump_decodes_to_the_three_features() {
    let p = parse_dump("seed_example.xxd");
    let ex = ExampleRef::parse(&p.bytes, 0).expect("a valid tf.Example");
    assert_eq!(ex.features().len().expect("len"), 3);

    let mut got = Vec::new();
    for f in ex.features().iter() {
        let f = f.expect("feature");
        let name = f.entry.name_str().expect("UTF-8 name").to_owned();
        let list = f.feature.list().expect("list").expect("a kind");
        let (kind, v) = values(list);
        got.push((name, kind, v));
    }
    let want = [
        ("masked_lm_weights", "float", "[1.0, 1.0, 0.0]"),
        ("masked_lm_positions", "int64", "[2, 10, 0]"),
        ("next_sentence_labels", "int64", "[1]"),
    ];
    let got_ref: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|(n, k, v)| (n.as_str(), *k, v.as_str()))
        .collect();
    assert_eq!(got_ref, want, "features in wire order, and nothing else");

    // Lookups by name; the entries start where the article's markers are.
    for (name, kind, v) in want {
        let f = ex.get(name).expect("get").expect("present");
        assert_eq!(
            values(f.list().expect("list").expect("kind")),
            (kind, v.to_owned())
        );
    }
    assert!(ex.get("masked_lm_ids").expect("get").is_none());
    let offsets: Vec<u64> = ex
        .features()
        .entries()
        .map(|e| e.expect("entry").entry.offset)
        .collect();
    assert_eq!(offsets, [2, 0x29, 0x49]);

    // The float list is one packed run: 1.0f is 00 00 80 3f.
    let Some(ListRef::Float(w)) = ex
        .get("masked_lm_weights")
        .expect("get")
        .and_then(|f| f.list().expect("list"))
    else {
        panic!("masked_lm_weights is not a float list");
    };
    assert_eq!(
        w.packed_bytes().expect("packed"),
        Some(&[0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f, 0, 0, 0, 0][..])
    );
}

#[test]
fn dump_of_the_example_names_every_feature_and_value() {
    let p = parse_dump("seed_example.xxd");
    let mut out = String::new();
    recordwire::dump::dump_payload(&mut out, PayloadKind::Example, &p.bytes, 0)
        .expect("dumps without error");
    assert!(!out.contains("error"), "{out}");
    assert!(out.starts_with("00000000  0a 66"), "{out}");
    // In wire order: each name, then its values.
    let needles = [
        "\"masked_lm_weights\"",
        "[1.0, 1.0, 0.0]",
        "\"masked_lm_positions\"",
        "[2, 10, 0]",
        "\"next_sentence_labels\"",
        "[1]",
    ];
    let mut from = 0;
    for n in needles {
        let at = out[from..]
            .find(n)
            .unwrap_or_else(|| panic!("dump lacks {n} (after byte {from}):\n{out}"));
        from += at + n.len();
    }
    // The three entries are shown at the offsets the article marks.
    for offset in ["00000002  0a 25", "00000029  0a 1e", "00000049  0a 1d"] {
        assert!(
            out.lines().any(|l| l.starts_with(offset)),
            "dump has no line {offset:?}:\n{out}"
        );
    }
}
