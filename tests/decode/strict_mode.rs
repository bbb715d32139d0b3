//! Strict mode (docs/FORMAT.md §3.6) through the command line: duplicate keys, unknown
//! fields (at every level of a tf.Example and an OFRecord) and mixed
//! packed/unpacked lists are reported with the record id and the absolute
//! byte offset of the offending field, computed here from how each record is
//! built; without `--strict` the same files are valid.

#![allow(clippy::unwrap_used)]

use crate::support::cli;

use recordwire::frame::{write_ofrecord_frame, write_tfrecord_frame};
use recordwire::wire::encode_varint;

fn len_field(n: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_varint(((n as u64) << 3) | 2, &mut out);
    encode_varint(body.len() as u64, &mut out);
    out.extend_from_slice(body);
    out
}

fn varint_field(n: u32, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    encode_varint((n as u64) << 3, &mut out);
    encode_varint(v, &mut out);
    out
}

/// Offset of the payload of a length-delimited field whose body is `body`
/// (tag of field < 16: one byte).
fn header_len(body: &[u8]) -> usize {
    let mut v = Vec::new();
    encode_varint(body.len() as u64, &mut v);
    1 + v.len()
}

/// An int64 Feature (field `kind_field`) holding `list` as its list body.
fn feature(kind_field: u32, list: &[u8], extra: &[u8]) -> Vec<u8> {
    let mut f = len_field(kind_field, list);
    f.extend_from_slice(extra);
    f
}

fn packed(values: &[u64]) -> Vec<u8> {
    let mut p = Vec::new();
    for &v in values {
        encode_varint(v, &mut p);
    }
    len_field(1, &p)
}

/// A map entry `{name: feature}` plus extra bytes inside the entry.
fn entry(name: &str, feature: &[u8], extra: &[u8]) -> Vec<u8> {
    let mut e = len_field(1, name.as_bytes());
    e.extend_from_slice(&len_field(2, feature));
    e.extend_from_slice(extra);
    e
}

/// A payload and the offset (within it) of the field strict mode reports.
struct Case {
    payload: Vec<u8>,
    at: Option<usize>,
    what: &'static str,
}

/// Entries wrapped as a map (`Features` for TF with the Example's field 1
/// around it; the OFRecord itself for OneFlow). Returns the payload and the
/// offset of each entry's tag.
fn wrap(entries: &[Vec<u8>], tf: bool, top_extra: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let mut map = Vec::new();
    let mut starts = Vec::new();
    for e in entries {
        starts.push(map.len());
        map.extend_from_slice(&len_field(1, e));
    }
    if !tf {
        let mut p = map;
        p.extend_from_slice(top_extra);
        return (p, starts);
    }
    let base = header_len(&map);
    let mut p = len_field(1, &map);
    p.extend_from_slice(top_extra);
    (p, starts.iter().map(|s| s + base).collect())
}

fn cases(tf: bool) -> Vec<Case> {
    let int_field = if tf { 3 } else { 5 };
    let ok = || feature(int_field, &packed(&[1, 2, 300]), &[]);
    let mut out = Vec::new();
    // 0: clean.
    let (p, _) = wrap(&[entry("a", &ok(), &[])], tf, &[]);
    out.push(Case {
        payload: p,
        at: None,
        what: "clean",
    });
    // 1: a duplicate key: reported at the second entry for "a".
    let (p, s) = wrap(
        &[
            entry("a", &ok(), &[]),
            entry("b", &ok(), &[]),
            entry("a", &ok(), &[]),
        ],
        tf,
        &[],
    );
    out.push(Case {
        payload: p,
        at: Some(s[2]),
        what: "duplicate key",
    });
    // 2: an unknown field at the top level (after the map).
    let (p, _) = wrap(&[entry("a", &ok(), &[])], tf, &varint_field(9, 1));
    let at = p.len() - varint_field(9, 1).len();
    out.push(Case {
        payload: p,
        at: Some(at),
        what: "unknown top-level field",
    });
    // 3: an unknown field inside a map entry (field 3, after the value).
    let e = entry("a", &ok(), &varint_field(3, 7));
    let (p, s) = wrap(std::slice::from_ref(&e), tf, &[]);
    let at = s[0] + header_len(&e) + e.len() - varint_field(3, 7).len();
    out.push(Case {
        payload: p,
        at: Some(at),
        what: "unknown field in an entry",
    });
    // 4: an unknown field inside a Feature (field 9, after the list).
    let f = feature(int_field, &packed(&[1]), &varint_field(9, 1));
    let e = entry("a", &f, &[]);
    let (p, s) = wrap(std::slice::from_ref(&e), tf, &[]);
    let value_at = s[0] + header_len(&e) + len_field(1, b"a").len() + header_len(&f);
    let at = value_at + f.len() - varint_field(9, 1).len();
    out.push(Case {
        payload: p,
        at: Some(at),
        what: "unknown field in a feature",
    });
    // 5: an unknown field inside the list (field 2).
    let mut list = packed(&[1, 2]);
    list.extend_from_slice(&varint_field(2, 5));
    let f = feature(int_field, &list, &[]);
    let e = entry("a", &f, &[]);
    let (p, s) = wrap(std::slice::from_ref(&e), tf, &[]);
    let list_at =
        s[0] + header_len(&e) + len_field(1, b"a").len() + header_len(&f) + header_len(&list);
    let at = list_at + list.len() - varint_field(2, 5).len();
    out.push(Case {
        payload: p,
        at: Some(at),
        what: "unknown field in a list",
    });
    // 6: mixed packing: an unpacked value after a packed run, reported at
    // the list's first field.
    let mut list = packed(&[1, 2]);
    list.extend_from_slice(&varint_field(1, 3));
    let f = feature(int_field, &list, &[]);
    let e = entry("a", &f, &[]);
    let (p, s) = wrap(std::slice::from_ref(&e), tf, &[]);
    let at = s[0] + header_len(&e) + len_field(1, b"a").len() + header_len(&f) + header_len(&list);
    out.push(Case {
        payload: p,
        at: Some(at),
        what: "mixed packing",
    });
    out
}

/// Writes the cases as one file; returns its path and each problem's
/// expected (record id, absolute offset).
fn file(dir: &std::path::Path, tf: bool) -> (String, Vec<(usize, u64, &'static str)>) {
    let mut bytes = Vec::new();
    let mut expected = Vec::new();
    for (id, c) in cases(tf).into_iter().enumerate() {
        let data_start = bytes.len() + if tf { 12 } else { 8 };
        if tf {
            write_tfrecord_frame(&mut bytes, &c.payload);
        } else {
            write_ofrecord_frame(&mut bytes, &c.payload);
        }
        if let Some(at) = c.at {
            expected.push((id, (data_start + at) as u64, c.what));
        }
    }
    let path = dir.join(if tf {
        "strict.tfrecord"
    } else {
        "strict.ofrecord"
    });
    std::fs::write(&path, &bytes).unwrap();
    (path.to_string_lossy().into_owned(), expected)
}

#[test]
fn strict_problems_are_reported_with_record_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    for tf in [true, false] {
        let (path, expected) = file(dir.path(), tf);
        // Valid without --strict.
        let (code, out, err) = cli::run(&["verify", &path]);
        assert_eq!(code, 0, "{path}: {out}{err}");
        let (code, out, _) = cli::run(&["cat", &path]);
        assert_eq!(code, 0);
        assert_eq!(out.lines().count(), cases(tf).len());

        // verify --strict: one line per problem, in record order.
        let (code, out, err) = cli::run(&["verify", "--strict", &path]);
        assert_eq!(code, 1, "{out}{err}");
        let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("error[")).collect();
        assert_eq!(lines.len(), expected.len(), "{path}:\n{out}");
        for (line, (id, at, what)) in lines.iter().zip(&expected) {
            let want = format!("error[decode_error]: {path}: record {id} at byte {at}: ");
            assert!(
                line.starts_with(&want),
                "{what}: want `{want}…`, got `{line}`"
            );
        }

        // cat --strict: the clean record, then the first problem.
        let (code, out, err) = cli::run(&["cat", "--strict", &path]);
        assert_eq!(code, 1);
        assert_eq!(
            out.lines().count(),
            1,
            "only record 0 before the first problem"
        );
        let (id, at, _) = expected[0];
        assert!(
            err.starts_with(&format!(
                "error[decode_error]: {path}: record {id} at byte {at}: "
            )),
            "{err}"
        );
    }
}
