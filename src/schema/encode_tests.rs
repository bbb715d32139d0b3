//! `Schema::encode_json` against protobuf: every record of the fixtures of
//! `testdata/schema/` (see its README) encoded from its `dict` must give its
//! `deterministic_b64`, byte for byte.

use base64::Engine as _;

use super::Schema;
use crate::json::read::{parse_json, JsonValue};

/// The fixture files: (name under `testdata/schema/`, root message). One
/// line per file: more fixture sets (protobuf's conformance cases) are one
/// more line here.
const FIXTURES: &[(&str, &str)] = &[
    ("shapes", "rwtest.Shapes"),
    ("legacy", "rwtest.Legacy"),
    ("wkt", "rwtest.Wkt"),
];

/// Why a record's `deterministic_b64` cannot come from its `dict`, or
/// `None`: unknown fields (`unknown:…`, `split_group:…,unknown`,
/// `closed_enum_unknown:…`, `wrong_wire_type:…`: kept by the serialization,
/// not in the JSON), and a `google.protobuf.Value` with no kind, which
/// prints `null` and reads back as `null_value` (testdata/schema/README.md).
fn not_from_json(name: &str, line: usize, label: Option<&[u8]>) -> Option<&'static str> {
    let label = String::from_utf8_lossy(label.unwrap_or_default());
    if label.contains("unknown") || label.contains("wrong_wire_type") {
        return Some("unknown fields");
    }
    if name == "wkt" && [1, 7, 32, 36].contains(&line) {
        return Some("a Value with no kind");
    }
    None
}

fn member<'v>(v: &'v JsonValue, key: &str) -> Option<&'v JsonValue> {
    match v {
        JsonValue::Object(m) => m.iter().find(|(k, _)| k == key.as_bytes()).map(|(_, v)| v),
        _ => None,
    }
}

#[test]
fn every_fixture_dict_encodes_to_its_deterministic_bytes() {
    let (mut checked, mut skipped) = (0, 0);
    let mut failures = Vec::new();
    for (name, message) in FIXTURES {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/schema");
        let set = std::fs::read(format!("{dir}/{name}.pb")).expect("the descriptor set");
        let schema = Schema::from_descriptor_set(&set, message).expect("the schema");
        let lines = std::fs::read(format!("{dir}/{name}.expected.jsonl")).expect("the fixture");
        for (i, line) in lines
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .enumerate()
        {
            let record = parse_json(line).expect("a fixture line");
            let label = match member(&record, "noncanonical") {
                Some(JsonValue::String(s)) => Some(s.as_slice()),
                _ => None,
            };
            if not_from_json(name, i, label).is_some() {
                skipped += 1;
                continue;
            }
            let dict = member(&record, "dict").expect("dict");
            let Some(JsonValue::String(b64)) = member(&record, "deterministic_b64") else {
                panic!("{name} record {i}: no deterministic_b64");
            };
            let want = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64");
            let mut got = Vec::new();
            match schema.encode_json_value(dict, &mut got) {
                Ok(()) if got == want => checked += 1,
                Ok(()) => failures.push(format!(
                    "{name} record {i} ({}):\n got  {got:02x?}\n want {want:02x?}",
                    String::from_utf8_lossy(label.unwrap_or_default())
                )),
                Err(e) => failures.push(format!("{name} record {i}: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // 130 records, 23 of them with unknown fields or a Value of no kind.
    assert!(
        checked >= 107 && skipped <= checked / 4,
        "{checked} records checked, {skipped} skipped"
    );
}

/// JSON in the forms `MessageToDict` never prints, and mistakes:
/// `testdata/schema/parse.expected.jsonl` holds what protobuf's
/// `json_format.Parse` made of each (`testdata/gen/make_parse_cases.py`):
/// the same bytes, or an error here too.
#[test]
fn json_forms_and_mistakes_as_protobuf_parses_them() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/schema");
    let lines = std::fs::read(format!("{dir}/parse.expected.jsonl")).expect("the cases");
    let mut failures = Vec::new();
    let (mut good, mut bad) = (0, 0);
    for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let case = parse_json(line).expect("a case");
        let text = |key: &str| match member(&case, key) {
            Some(JsonValue::String(s)) => Some(String::from_utf8_lossy(s).into_owned()),
            _ => None,
        };
        let (message, set, json) = (
            text("message").expect("message"),
            text("schema").expect("schema"),
            text("json").expect("json"),
        );
        let set = std::fs::read(format!("{dir}/{set}")).expect("the descriptor set");
        let schema = Schema::from_descriptor_set(&set, &message).expect("the schema");
        let mut got = Vec::new();
        let result = schema.encode_json(json.as_bytes(), &mut got);
        match (text("deterministic_b64"), result) {
            (Some(b64), Ok(())) => {
                let want = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .expect("base64");
                if got == want {
                    good += 1;
                } else {
                    failures.push(format!("{json}:\n got  {got:02x?}\n want {want:02x?}"));
                }
            }
            (Some(_), Err(e)) => failures.push(format!("{json}: refused ({e}), protobuf reads it")),
            (None, Ok(())) => failures.push(format!(
                "{json}: read, protobuf refuses it ({})",
                text("error").unwrap_or_default()
            )),
            (None, Err(_)) => bad += 1,
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(good >= 80 && bad >= 30, "{good} read, {bad} refused");
}

/// Where recordwire is stricter or laxer than `json_format.Parse`, on
/// purpose (docs/FORMAT.md §14).
#[test]
fn deliberate_differences_from_protobuf() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/schema");
    let set = std::fs::read(format!("{dir}/shapes.pb")).expect("the descriptor set");
    let schema = Schema::from_descriptor_set(&set, "rwtest.Shapes").expect("the schema");
    let mut out = Vec::new();
    // The largest float as MessageToDict prints it reads back (Parse
    // refuses it as too large).
    schema
        .encode_json(br#"{"f_float": 3.4028235e+38}"#, &mut out)
        .expect("FLT_MAX");
    assert_eq!(out, [0x15, 0xff, 0xff, 0x7f, 0x7f]);
    for (json, why) in [
        (&br#"{"f_bytes": "a*b="}"#[..], "invalid base64"),
        (br#"{"inner": []}"#, "expected an object, not an array"),
        (br#"{"fInt32": 1, "f_int32": 2}"#, "given twice"),
        (br#"{"f_float": 3.5e38}"#, "out of range for a float"),
    ] {
        let e = schema
            .encode_json(json, &mut Vec::new())
            .expect_err("refused");
        assert!(e.to_string().contains(why), "{e}");
    }
}
