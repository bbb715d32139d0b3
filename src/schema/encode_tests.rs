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

/// `json` parsed, objects' members sorted by key (a Struct prints its keys
/// in wire order, and its entries are written sorted).
fn unordered(json: &[u8]) -> JsonValue {
    fn sort(v: JsonValue) -> JsonValue {
        match v {
            JsonValue::Object(mut m) => {
                m.sort_by(|a, b| a.0.cmp(&b.0));
                JsonValue::Object(m.into_iter().map(|(k, v)| (k, sort(v))).collect())
            }
            JsonValue::Array(a) => JsonValue::Array(a.into_iter().map(sort).collect()),
            v => v,
        }
    }
    sort(parse_json(json).expect("printed JSON"))
}

/// Printing and reading back agree on every record, those whose bytes JSON
/// cannot give too: the bytes read back from a record's JSON print as the
/// same JSON but for the order of a Struct's keys (either name style, with
/// defaults or without), and reading
/// that JSON again gives the same bytes.
#[test]
fn print_then_read_is_a_fixed_point_on_every_record() {
    use crate::frame::{records, Framing, ReadOptions};
    use crate::schema::JsonOptions;
    let mut n = 0;
    for (name, message) in FIXTURES {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/schema");
        let set = std::fs::read(format!("{dir}/{name}.pb")).expect("the descriptor set");
        let schema = Schema::from_descriptor_set(&set, message).expect("the schema");
        let file = std::fs::read(format!("{dir}/{name}.tfrecord")).expect("the records");
        for record in records(&file, Framing::TfRecord, ReadOptions::default()) {
            let record = record.expect("a record");
            for options in [
                JsonOptions::default(),
                JsonOptions::default().with_json_names(true),
                JsonOptions::default().with_defaults(true),
            ] {
                let print = |bytes: &[u8]| {
                    let mut json = Vec::new();
                    schema
                        .write_json(&mut json, bytes, 0, &options)
                        .expect("printed");
                    json
                };
                let read = |json: &[u8]| {
                    let mut bytes = Vec::new();
                    schema.encode_json(json, &mut bytes).expect("read back");
                    bytes
                };
                let json = print(record.data);
                let bytes = read(&json);
                assert_eq!(
                    unordered(&print(&bytes)),
                    unordered(&json),
                    "{name} record {} ({options:?})",
                    record.id
                );
                assert_eq!(read(&print(&bytes)), bytes, "{name} record {}", record.id);
                n += 1;
            }
        }
    }
    // Three option sets for each record (130 in the first three files).
    assert!(n >= 3 * 130, "{n} checks");
}

/// Field names of `shapes` (top level and `Inner`), and of `wkt` (with
/// `Note` and an `Any`'s keys).
const SHAPES_KEYS: &[&str] = &[
    "f_int32",
    "fInt64",
    "f_uint64",
    "f_float",
    "f_double",
    "f_bool",
    "f_string",
    "f_bytes",
    "f_sint32",
    "fFixed64",
    "opt_int32",
    "color",
    "colors",
    "inner",
    "inners",
    "pick_int",
    "pickInner",
    "pick_text",
    "m_str_int",
    "m_int64_str",
    "m_bool_inner",
    "mUint32Color",
    "r_float",
    "r_sint64",
    "r_bool",
    "r_bytes",
    "a",
    "b",
    "children",
    "nope",
];
const WKT_KEYS: &[&str] = &[
    "ts", "dur", "tss", "st", "val", "lst", "mask", "any", "anys", "vals", "w_int32", "wBytes",
    "w_double", "w_uint64", "w_bool", "w_string", "w_int32s", "durs", "empty", "@type", "value",
    "text", "n", "nope",
];

/// JSON objects of names from `keys` and tricky values, nested anyhow.
fn arbitrary_json(
    keys: &'static [&'static str],
) -> impl proptest::strategy::Strategy<Value = JsonValue> {
    use proptest::prelude::*;
    const NUMBERS: &[&str] = &[
        "0",
        "-1",
        "1",
        "1.5",
        "1e3",
        "-0.0",
        "2147483648",
        "18446744073709551616",
        "1e400",
        "5e-324",
        "9007199254740993",
        "3.4028235e38",
    ];
    const STRINGS: &[&str] = &[
        "",
        "RED",
        "7",
        "NaN",
        "-Infinity",
        "AQID",
        "-_8",
        "a*b",
        "1970-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999999999+01:00",
        "1.5s",
        "-0.5s",
        "fooBar,a.bC",
        "foo_bar",
        "type.googleapis.com/rwtest.Wkt.Note",
        "type.googleapis.com/google.protobuf.Duration",
        "type.googleapis.com/google.protobuf.Any",
        "type.googleapis.com/google.protobuf.Struct",
        "-9223372036854775809",
        "true",
        "x",
    ];
    let leaf = prop_oneof![
        Just(JsonValue::Null),
        any::<bool>().prop_map(JsonValue::Bool),
        proptest::sample::select(NUMBERS).prop_map(|n| JsonValue::Number(n.to_owned())),
        proptest::sample::select(STRINGS).prop_map(|s| JsonValue::String(s.as_bytes().to_vec())),
    ];
    let object = move |inner: BoxedStrategy<JsonValue>| {
        proptest::collection::vec((proptest::sample::select(keys), inner), 0..4).prop_map(|m| {
            JsonValue::Object(
                m.into_iter()
                    .map(|(k, v)| (k.as_bytes().to_vec(), v))
                    .collect(),
            )
        })
    };
    let tree = leaf.prop_recursive(4, 32, 4, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(JsonValue::Array),
            object(inner.boxed()),
        ]
    });
    object(tree.boxed())
}

fn schema_of(name: &str, message: &str) -> Schema {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/schema");
    let set = std::fs::read(format!("{dir}/{name}.pb")).expect("the descriptor set");
    Schema::from_descriptor_set(&set, message).expect("the schema")
}

/// Any JSON: an answer, never a panic; what is read prints, and printing
/// and reading again gives the same bytes.
fn read_or_refused(
    schema: &Schema,
    json: &JsonValue,
) -> Result<(), proptest::test_runner::TestCaseError> {
    let mut bytes = Vec::new();
    if schema.encode_json_value(json, &mut bytes).is_err() {
        return Ok(());
    }
    let mut printed = Vec::new();
    // A Value holding an infinity does not print (as in protobuf);
    // anything else must.
    if let Err(e) = schema.write_json(&mut printed, &bytes, 0, &Default::default()) {
        proptest::prop_assert!(e.to_string().contains("NaN or infinite"), "{e}");
        return Ok(());
    }
    let mut again = Vec::new();
    schema.encode_json(&printed, &mut again).expect("read back");
    proptest::prop_assert_eq!(again, bytes);
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    #[test]
    fn any_shapes_json_is_read_or_refused(json in arbitrary_json(SHAPES_KEYS)) {
        read_or_refused(&schema_of("shapes", "rwtest.Shapes"), &json)?;
    }

    #[test]
    fn any_wkt_json_is_read_or_refused(json in arbitrary_json(WKT_KEYS)) {
        read_or_refused(&schema_of("wkt", "rwtest.Wkt"), &json)?;
    }
}
