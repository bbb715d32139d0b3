//! Zero-copy views of any message by a schema given at run time
//! (`recordwire::schema::MessageRef`, issue 38 point 2).
//!
//! - Against the oracle: every record of `testdata/schema/{shapes,legacy}`,
//!   read field by field through the views and put in protobuf's
//!   `MessageToDict` form, equals the fixture's `dict` (made by protobuf's
//!   Python upb from the same bytes, which hold non-canonical encodings).
//! - Google's parser's rules one by one, on records built here: last scalar
//!   wins, messages merge (two levels deep too), packed and unpacked runs
//!   join, the last oneof member wins, mismatched wire types and a closed
//!   enum's unknown values are unknown fields, proto2 defaults, UTF-8 in
//!   proto3 only, the depth limit.
//! - Zero allocation: walking every field and value of every record
//!   allocates nothing.

use std::hint::black_box;

use base64::Engine as _;
use recordwire::io::{OpenOptions, RecordFile};
use recordwire::schema::{FieldType, MessageRef, Schema, ValueRef};
use recordwire::DecodeReason;
use serde_json::{json, Map, Value};

use crate::counting_alloc::count_allocations;

fn schema(name: &str, message: &str) -> Schema {
    let bytes = std::fs::read(format!("testdata/schema/{name}.pb")).expect("the descriptor set");
    Schema::from_descriptor_set(&bytes, message).expect("the schema")
}

fn records(name: &str) -> RecordFile {
    RecordFile::open(
        format!("testdata/schema/{name}.tfrecord"),
        &OpenOptions::default(),
    )
    .expect("the fixture")
}

/// One value in `MessageToDict`'s form (no well-known types here).
fn dict_value(v: &ValueRef<'_>) -> Value {
    match v {
        ValueRef::Double(x) => float(*x, format!("{x:e}")),
        // A float32 is compared by its bits with the oracle's number read
        // as a float32 (see `same`).
        ValueRef::Float(x) if x.is_finite() => json!(format!("f32:{}", x.to_bits())),
        ValueRef::Float(x) => float(f64::from(*x), format!("{x:e}")),
        ValueRef::Int32(x) => json!(x),
        ValueRef::Uint32(x) => json!(x),
        ValueRef::Int64(x) => json!(x.to_string()),
        ValueRef::Uint64(x) => json!(x.to_string()),
        ValueRef::Bool(x) => json!(x),
        ValueRef::String(s) => json!(String::from_utf8_lossy(s)),
        ValueRef::Bytes(b) => json!(base64::engine::general_purpose::STANDARD.encode(b)),
        ValueRef::Enum(n, name) => name.map_or(json!(n), |s| json!(s)),
        ValueRef::Message(m) => dict(m),
    }
}

/// A float as protobuf's JSON has it: NaN and the infinities as strings, a
/// float32 by its shortest text (`text`).
fn float(x: f64, text: String) -> Value {
    if x.is_nan() {
        json!("NaN")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        serde_json::from_str(&text).expect("a number")
    }
}

fn map_key(v: &ValueRef<'_>) -> String {
    match dict_value(v) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// The message as `MessageToDict(preserving_proto_field_name=True)`.
fn dict(m: &MessageRef<'_>) -> Value {
    let mut out = Map::new();
    for f in m.fields() {
        if !f.is_set().expect("a well-formed record") {
            continue;
        }
        let value = if f.is_map() {
            let mut entries = Map::new();
            for e in f.entries() {
                let (k, v) = e.expect("an entry");
                entries.insert(map_key(&k), dict_value(&v));
            }
            Value::Object(entries)
        } else if f.is_repeated() {
            Value::Array(
                f.values()
                    .map(|v| dict_value(&v.expect("a value")))
                    .collect(),
            )
        } else {
            dict_value(&f.get().expect("a value").expect("a set field"))
        };
        out.insert(f.name().to_owned(), value);
    }
    Value::Object(out)
}

/// Equal as JSON values, numbers by value; `a`'s float32s (`"f32:BITS"`)
/// equal to `b`'s number read as a float32.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(s), Value::Number(y)) if s.starts_with("f32:") => {
            y.as_f64()
                .map(|y| (y as f32).to_bits().to_string())
                .as_deref()
                == s.get(4..)
        }
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(p), Some(q), _, _) => p == q,
                (_, _, Some(p), Some(q)) => p == q,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn check_fixture(name: &str, message: &str) {
    let schema = schema(name, message);
    let file = records(name);
    let expected = std::fs::read_to_string(format!("testdata/schema/{name}.expected.jsonl"))
        .expect("the expected values");
    let expected: Vec<Value> = expected
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str::<Value>(l).expect("a line")["dict"].clone())
        .collect();
    let mut n = 0;
    for (i, r) in file.records().enumerate() {
        let r = r.expect("a record");
        let view = MessageRef::parse(&schema, r.data, r.data_offset).expect("a valid record");
        assert_eq!(view.message_name(), message);
        let got = dict(&view);
        assert!(
            same(&got, &expected[i]),
            "{name} record {i}:\n got {got}\nwant {}",
            expected[i]
        );
        n += 1;
    }
    assert_eq!(n, expected.len());
}

#[test]
fn views_equal_message_to_dict_proto3() {
    check_fixture("shapes", "rwtest.Shapes");
}

#[test]
fn views_equal_message_to_dict_proto2() {
    check_fixture("legacy", "rwtest.Legacy");
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, number: u32, wire: u8) {
    varint(out, u64::from(number) << 3 | u64::from(wire));
}

fn len(out: &mut Vec<u8>, number: u32, body: &[u8]) {
    tag(out, number, 2);
    varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

fn int(out: &mut Vec<u8>, number: u32, v: u64) {
    tag(out, number, 0);
    varint(out, v);
}

fn get<'a>(m: &MessageRef<'a>, name: &str) -> Option<ValueRef<'a>> {
    m.field(name)
        .expect("a field of the schema")
        .get()
        .expect("a well-formed record")
}

fn all<'a>(m: &MessageRef<'a>, name: &str) -> Vec<ValueRef<'a>> {
    m.field(name)
        .expect("a field of the schema")
        .values()
        .collect::<Result<_, _>>()
        .expect("a well-formed record")
}

#[test]
fn googles_rules_proto3() {
    let schema = schema("shapes", "rwtest.Shapes");
    let mut r = Vec::new();
    int(&mut r, 3, 1); // f_int32 = 1
    int(&mut r, 3, 2); // ... = 2: the last wins
                       // inner = {a: 5}, then inner = {b: "x"}: merged.
    let mut inner = Vec::new();
    int(&mut inner, 1, 5);
    len(&mut r, 30, &inner);
    let mut inner2 = Vec::new();
    len(&mut inner2, 2, b"x");
    len(&mut r, 30, &inner2);
    // r_int32: packed [1, 2], then unpacked 3, then packed [4].
    len(&mut r, 20, &[1, 2]);
    int(&mut r, 20, 3);
    len(&mut r, 20, &[4]);
    // pick_int = 7 then pick_text = "t": the text wins; then f_string with
    // the wrong wire type (varint): unknown.
    int(&mut r, 50, 7);
    len(&mut r, 51, b"t");
    int(&mut r, 14, 9);
    // An unknown field number.
    int(&mut r, 999, 1);
    // color = 7 (open enum: kept as the number).
    int(&mut r, 40, 7);
    let view = MessageRef::parse(&schema, &r, 100).expect("valid");
    assert_eq!(get(&view, "f_int32"), Some(ValueRef::Int32(2)));
    let Some(ValueRef::Message(inner)) = get(&view, "inner") else {
        panic!("inner is set");
    };
    assert_eq!(inner.bytes(), None, "two occurrences: merged");
    assert_eq!(get(&inner, "a"), Some(ValueRef::Int32(5)));
    assert_eq!(get(&inner, "b"), Some(ValueRef::String(b"x")));
    assert_eq!(
        all(&view, "r_int32"),
        [1, 2, 3, 4].map(ValueRef::Int32).to_vec()
    );
    assert_eq!(view.field("r_int32").expect("field").len(), Ok(4));
    assert_eq!(get(&view, "pick_int"), None, "a later member won");
    assert_eq!(get(&view, "pick_text"), Some(ValueRef::String(b"t")));
    assert_eq!(get(&view, "f_string"), None, "wrong wire type");
    assert_eq!(get(&view, "color"), Some(ValueRef::Enum(7, None)));
    let unknown: Vec<u32> = view
        .unknown_fields()
        .map(|f| f.expect("ok").number)
        .collect();
    assert_eq!(unknown, [14, 999]);
    // In one pass, in wire order: every occurrence, runs expanded, the
    // unknown and mismatched fields passed over.
    let numbers: Vec<u32> = view.wire_values().map(|v| v.expect("ok").0).collect();
    assert_eq!(numbers, [3, 3, 30, 30, 20, 20, 20, 20, 50, 51, 40]);
    // By number and JSON name too; types and names.
    let f = view.field_number(3).expect("field 3");
    assert_eq!((f.name(), f.field_type()), ("f_int32", FieldType::Int32));
    assert_eq!(view.field("fInt32").expect("json name").number(), 3);
    assert_eq!(
        view.field("inner").expect("inner").type_name(),
        Some("rwtest.Shapes.Inner")
    );
    assert!(view.field("no_such_field").is_none());
    // Implicit presence: unset reads as the default.
    let f = view.field("f_double").expect("f_double");
    assert_eq!(f.get(), Ok(None));
    assert_eq!(f.get_or_default(), Ok(Some(ValueRef::Double(0.0))));
    assert_eq!(f.is_set(), Ok(false));
    let c = view.field("colors").expect("colors");
    assert_eq!(c.is_empty(), Ok(true));
}

#[test]
fn merges_two_levels_deep() {
    let schema = schema("shapes", "rwtest.Shapes");
    // inner {children {a: 1}} inner {children... no: pick_inner (a
    // singular message) twice, each holding a singular... Inner has no
    // singular message field, so merge Shapes.inner twice where each
    // occurrence carries `a` and `b`: the later a wins across occurrences.
    let mut r = Vec::new();
    let mut one = Vec::new();
    int(&mut one, 1, 1);
    len(&mut one, 3, &[0x08, 0x0b]); // children {a: 11}
    let mut two = Vec::new();
    int(&mut two, 1, 2);
    len(&mut two, 3, &[0x08, 0x0c]); // children {a: 12}
    len(&mut r, 30, &one);
    len(&mut r, 30, &two);
    let view = MessageRef::parse(&schema, &r, 0).expect("valid");
    let Some(ValueRef::Message(inner)) = get(&view, "inner") else {
        panic!("inner is set");
    };
    assert_eq!(get(&inner, "a"), Some(ValueRef::Int32(2)));
    let children = all(&inner, "children");
    assert_eq!(children.len(), 2, "repeated: joined across occurrences");
    let ValueRef::Message(second) = &children[1] else {
        panic!("a message");
    };
    assert_eq!(get(second, "a"), Some(ValueRef::Int32(12)));
}

#[test]
fn googles_rules_proto2() {
    let schema = schema("legacy", "rwtest.Legacy");
    let mut r = Vec::new();
    int(&mut r, 3, 9); // kind = 9: a closed enum's unknown value
    len(&mut r, 2, b"\xff\xfe"); // name: not UTF-8, left alone in proto2
    len(&mut r, 5, &[1, 9, 2]); // packed_ints
    int(&mut r, 4, 3); // unpacked
    tag(&mut r, 7, 3); // group Grp { g = 4 }
    int(&mut r, 8, 4);
    tag(&mut r, 7, 4);
    let view = MessageRef::parse(&schema, &r, 0).expect("valid");
    assert_eq!(get(&view, "kind"), None, "unknown closed-enum value");
    let unknown: Vec<(u32, u64)> = view
        .unknown_fields()
        .map(|f| {
            let f = f.expect("ok");
            let recordwire::wire::Value::Varint(v) = f.value else {
                panic!("a varint");
            };
            (f.number, v)
        })
        .collect();
    assert_eq!(unknown, [(3, 9)]);
    assert_eq!(get(&view, "name"), Some(ValueRef::String(b"\xff\xfe")));
    let d = view.field("with_default").expect("with_default");
    assert_eq!(d.get(), Ok(None));
    assert_eq!(d.get_or_default(), Ok(Some(ValueRef::Int32(42))));
    assert_eq!(d.is_set(), Ok(false));
    assert_eq!(
        all(&view, "packed_ints"),
        [1, 9, 2].map(ValueRef::Int32).to_vec()
    );
    let Some(ValueRef::Message(grp)) = get(&view, "grp") else {
        panic!("the group is set");
    };
    assert_eq!(get(&grp, "g"), Some(ValueRef::Int32(4)));
    let k = view.field("kind").expect("kind");
    assert_eq!(k.get_or_default(), Ok(Some(ValueRef::Enum(1, Some("A")))));
}

#[test]
fn errors_are_named() {
    let schema = schema("shapes", "rwtest.Shapes");
    // A proto3 string that is not UTF-8.
    let mut r = Vec::new();
    len(&mut r, 14, b"\xff");
    let e = MessageRef::parse(&schema, &r, 10).expect_err("not UTF-8");
    assert_eq!((e.reason, e.offset), (DecodeReason::InvalidUtf8, 12));
    let view = MessageRef::new(&schema, &r, 10);
    assert_eq!(
        view.field("f_string")
            .expect("field")
            .get()
            .map_err(|e| e.reason),
        Err(DecodeReason::InvalidUtf8)
    );
    // A length past the end.
    let e = MessageRef::parse(&schema, &[0x72, 0x05, b'a'], 0).expect_err("overrun");
    assert!(
        matches!(e.reason, DecodeReason::LengthOverrun { .. }),
        "{e}"
    );
    // A packed fixed32 run that does not divide.
    let mut r = Vec::new();
    len(&mut r, 28, &[1, 2, 3]);
    let e = MessageRef::parse(&schema, &r, 0).expect_err("packed length");
    assert!(matches!(e.reason, DecodeReason::PackedLength { .. }), "{e}");
    // Depth: Inner.children nested 100 deep is fine, 101 is not.
    for (depth, ok) in [(99, true), (100, false)] {
        let mut body: Vec<u8> = Vec::new();
        for _ in 0..depth {
            let mut outer = Vec::new();
            len(&mut outer, 3, &body);
            body = outer;
        }
        let mut r = Vec::new();
        len(&mut r, 30, &body);
        let got = MessageRef::parse(&schema, &r, 0);
        assert_eq!(got.is_ok(), ok, "depth {}", depth + 1);
        if let Err(e) = got {
            assert_eq!(e.reason, DecodeReason::DepthLimitExceeded);
        }
    }
    // A truncated group (proto2).
    let legacy = self::schema("legacy", "rwtest.Legacy");
    let mut r = Vec::new();
    tag(&mut r, 7, 3);
    int(&mut r, 8, 4);
    let e = MessageRef::parse(&legacy, &r, 0).expect_err("unterminated group");
    assert_eq!(e.reason, DecodeReason::UnterminatedGroup(7));
}

/// Visits every value of a message in one pass, nested ones too.
fn walk_wire(m: &MessageRef<'_>) -> u64 {
    let mut n = 0u64;
    for v in m.wire_values() {
        n += match v.expect("valid").1 {
            ValueRef::Message(sub) => 1 + walk_wire(&sub),
            other => black_box(other).as_str().map_or(1, |_| 1),
        };
    }
    n
}

/// Visits every value of a message, nested ones too.
fn walk(m: &MessageRef<'_>) -> u64 {
    let mut n = 0u64;
    for f in m.fields() {
        for v in f.values() {
            n += match v.expect("valid") {
                ValueRef::Message(sub) => 1 + walk(&sub),
                ValueRef::String(s) | ValueRef::Bytes(s) => s.len() as u64 + 1,
                other => black_box(other).as_str().map_or(1, |_| 1),
            };
        }
    }
    n
}

#[test]
fn walking_every_value_allocates_nothing() {
    for (name, message) in [("shapes", "rwtest.Shapes"), ("legacy", "rwtest.Legacy")] {
        let schema = schema(name, message);
        let file = records(name);
        let (seen, allocations) = count_allocations(|| {
            let mut n = 0u64;
            for r in file.records() {
                let r = r.expect("a record");
                let view = MessageRef::parse(&schema, r.data, r.data_offset).expect("valid");
                n += walk(&view) + walk_wire(&view);
            }
            n
        });
        assert!(seen > 100, "{name}: {seen} values");
        assert_eq!(allocations, 0, "{name}: allocations while walking");
    }
}
