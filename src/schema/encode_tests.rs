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
