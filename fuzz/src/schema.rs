//! The schema JSON printer (`recordwire::schema`, `cat --message`) over any
//! bytes, by one of a few fixed schemas: the descriptor sets of
//! `testdata/schema/` (embedded), the first input byte picking one.

use std::sync::OnceLock;

use recordwire::schema::{JsonOptions, Schema};

const CONFORMANCE: &[u8] = include_bytes!("../../testdata/schema/conformance/conformance.pb");

/// The descriptor sets and the message each input is read as.
const SETS: [(&[u8], &str); 5] = [
    (
        include_bytes!("../../testdata/schema/shapes.pb"),
        "rwtest.Shapes",
    ),
    (
        include_bytes!("../../testdata/schema/legacy.pb"),
        "rwtest.Legacy",
    ),
    (include_bytes!("../../testdata/schema/wkt.pb"), "rwtest.Wkt"),
    (
        CONFORMANCE,
        "protobuf_test_messages.proto2.TestAllTypesProto2",
    ),
    (
        CONFORMANCE,
        "protobuf_test_messages.proto3.TestAllTypesProto3",
    ),
];

/// The schemas of [`SETS`], compiled once per process.
fn schemas() -> &'static [Schema] {
    static SCHEMAS: OnceLock<Vec<Schema>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        SETS.iter()
            .map(|(set, message)| {
                Schema::from_descriptor_set(set, message).expect("a fixed schema")
            })
            .collect()
    })
}

/// The first byte picks the schema (modulo their count), the rest is the
/// record. With every option set (names, defaults), `write_json` gives the
/// same answer: an error at the same place with the same reason (inside the
/// record), or one line of JSON, an object, that it appended to what the
/// buffer held.
pub fn schema_json(data: &[u8]) {
    let Some((&pick, record)) = data.split_first() else {
        return;
    };
    let schemas = schemas();
    let schema = &schemas[usize::from(pick) % schemas.len()];
    let base = 7u64;
    let mut first = None;
    for (names, defaults) in [(false, false), (true, false), (false, true), (true, true)] {
        let options = JsonOptions::default()
            .with_json_names(names)
            .with_defaults(defaults);
        let mut out = b"[prefix]".to_vec();
        let result = schema.write_json(&mut out, record, base, &options);
        assert!(out.starts_with(b"[prefix]"), "the buffer's bytes were lost");
        match &first {
            None => first = Some(result),
            Some(f) => assert_eq!(f, &result, "names={names} defaults={defaults}"),
        }
        match result {
            Ok(()) => check_object(&out[8..]),
            Err(e) => assert!(
                (base..=base + record.len() as u64).contains(&e.offset),
                "{e} outside the record (at {base}, {} bytes)",
                record.len()
            ),
        }
    }
}

/// One line of JSON, an object (proto2 strings that are not UTF-8 print as
/// `\udcXX` escapes, which serde_json's `Value` refuses: checked for syntax
/// only then).
fn check_object(out: &[u8]) {
    assert!(!out.contains(&b'\n'), "not one line");
    let text = std::str::from_utf8(out).expect("JSON is UTF-8");
    if let Err(e) = super::json_syntax(text) {
        panic!("invalid JSON ({e}): {text}");
    }
    assert!(
        text.starts_with('{') && text.ends_with('}'),
        "not an object: {text}"
    );
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => assert!(v.is_object(), "not an object: {text}"),
        Err(e) => assert!(text.contains("\\udc"), "invalid JSON ({e}): {text}"),
    }
}
