use super::*;

fn schema(source: &str, message: &str) -> Schema {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.proto");
    std::fs::write(&path, source).unwrap();
    Schema::from_proto(&[&path], &[dir.path()], message).unwrap()
}

fn json(s: &Schema, bytes: &[u8]) -> String {
    let mut out = Vec::new();
    s.write_json(&mut out, bytes, 0, &JsonOptions::default())
        .unwrap();
    String::from_utf8(out).unwrap()
}

const P3: &str = r#"syntax = "proto3"; package t;
message Inner { int32 a = 1; string b = 2; }
enum Color { NONE = 0; RED = 1; }
message M {
  int32 i = 1; int64 l = 2; repeated int32 r = 3; Inner inner = 4;
  Color c = 5; oneof o { int32 x = 6; string y = 7; } map<string, int32> m = 8;
  float f = 9; bytes b = 10; sint64 z = 11;
}"#;

#[test]
fn google_semantics_on_the_wire() {
    let s = schema(P3, "t.M");
    // i twice (last wins), l, r packed [1,2] then unpacked 3, inner in two
    // parts (merge), an unknown enum number, x then y (y wins), a map with a
    // repeated key (last wins), a wrong wire type for i (unknown).
    let mut b = vec![0x08, 0x01, 0x08, 0x05, 0x10, 0x80, 0x01];
    b.extend([0x1a, 0x02, 0x01, 0x02, 0x18, 0x03]);
    b.extend([0x22, 0x02, 0x08, 0x07, 0x22, 0x03, 0x12, 0x01, b'q']);
    b.extend([0x28, 0x09]);
    b.extend([0x30, 0x04, 0x3a, 0x01, b'k']);
    b.extend([0x42, 0x05, 0x0a, 0x01, b'a', 0x10, 0x01]);
    b.extend([0x42, 0x05, 0x0a, 0x01, b'a', 0x10, 0x02]);
    b.extend([0x0d, 0, 0, 0, 0]);
    b.extend([
        0x4d, 0xcd, 0xcc, 0xcc, 0x3d, 0x52, 0x02, 0xff, 0x00, 0x58, 0x03,
    ]);
    assert_eq!(
        json(&s, &b),
        r#"{"i":5,"l":"128","r":[1,2,3],"inner":{"a":7,"b":"q"},"c":9,"y":"k","m":{"a":2},"f":0.1,"b":"/wA=","z":"-2"}"#
    );
    // Defaults are left out without presence, printed with the option.
    assert_eq!(json(&s, &[0x08, 0x00, 0x22, 0x00]), r#"{"inner":{}}"#);
    // A known number with the wrong wire type is an unknown field.
    assert_eq!(json(&s, &[0x2a, 0x00]), "{}");
    let mut out = Vec::new();
    s.write_json(
        &mut out,
        &[],
        0,
        &JsonOptions::default().with_defaults(true),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"i":0,"l":"0","r":[],"c":"NONE","m":{},"f":0.0,"b":"","z":"0"}"#
    );
}

#[test]
fn a_proto3_string_must_be_utf8_and_depth_is_bounded() {
    let s = schema(P3, "t.M");
    let mut out = Vec::new();
    let err = s
        .write_json(&mut out, &[0x3a, 0x01, 0xff], 10, &JsonOptions::default())
        .unwrap_err();
    assert_eq!(err.reason, crate::wire::DecodeReason::InvalidUtf8);
    let deep = schema("syntax = \"proto3\"; message D { D d = 1; }", "D");
    let mut b: Vec<u8> = Vec::new();
    for _ in 0..120 {
        let mut outer = vec![0x0a];
        crate::wire::encode_varint(b.len() as u64, &mut outer);
        outer.extend(&b);
        b = outer;
    }
    let err = deep
        .write_json(&mut out, &b, 0, &JsonOptions::default())
        .unwrap_err();
    assert_eq!(err.reason, crate::wire::DecodeReason::DepthLimitExceeded);
}

#[test]
fn schema_errors_name_the_place_and_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.proto");
    std::fs::write(
        &path,
        "syntax = \"proto3\";\nmessage M {\n  Nope n = 1;\n}\n",
    )
    .unwrap();
    let err = Schema::from_proto(&[&path], &[dir.path()], "M").unwrap_err();
    assert_eq!(err.kind().name(), "usage_error");
    assert!(err.to_string().contains("bad.proto:3:3"), "{err}");
    let good = dir.path().join("good.proto");
    std::fs::write(&good, "syntax = \"proto3\"; package p; message A {}").unwrap();
    let err = Schema::from_proto(&[&good], &[dir.path()], "p.B").unwrap_err();
    assert!(
        err.to_string()
            .contains("no message p.B (the schema defines p.A)"),
        "{err}"
    );
    let err = Schema::from_descriptor_set(b"\xff\xff", "p.A").unwrap_err();
    assert!(err.to_string().contains("not a FileDescriptorSet"), "{err}");
}

const WKT: &str = r#"syntax = "proto3"; package t;
import "google/protobuf/timestamp.proto"; import "google/protobuf/duration.proto";
import "google/protobuf/struct.proto"; import "google/protobuf/field_mask.proto";
import "google/protobuf/any.proto";
message W {
  google.protobuf.Timestamp ts = 1; google.protobuf.Duration d = 2; google.protobuf.Value v = 3;
  google.protobuf.FieldMask mask = 4; google.protobuf.Any any = 5;
}"#;

fn wkt_error(bytes: &[u8]) -> crate::wire::DecodeReason {
    let s = schema(WKT, "t.W");
    let mut out = Vec::new();
    s.write_json(&mut out, bytes, 0, &JsonOptions::default())
        .unwrap_err()
        .reason
}

#[test]
fn well_known_types_print_in_their_forms_and_refuse_what_json_cannot_hold() {
    use crate::wire::DecodeReason::WellKnownValue;
    let s = schema(WKT, "t.W");
    // ts = {seconds: -1, nanos: 500000000}; d = {seconds: 0, nanos: -500000000};
    // mask = ["foo_bar.baz"].
    let mut b = vec![0x0a, 0x11, 0x08];
    b.extend([0xff; 9]);
    b.extend([0x01, 0x10, 0x80, 0xca, 0xb5, 0xee, 0x01]);
    b.extend([
        0x12, 0x0b, 0x10, 0x80, 0xb6, 0xca, 0x91, 0xfe, 0xff, 0xff, 0xff, 0xff, 0x01,
    ]);
    b.extend([0x22, 0x0d, 0x0a, 0x0b]);
    b.extend(b"foo_bar.baz");
    assert_eq!(
        json(&s, &b),
        r#"{"ts":"1969-12-31T23:59:59.500Z","d":"-0.500s","mask":"fooBar.baz"}"#
    );
    // A Timestamp of year 10000, a NaN Value, a mask path in upper case and
    // an Any of a type the schema lacks are refused, as protobuf refuses them.
    let mut far = vec![0x0a, 0x06, 0x08];
    crate::wire::encode_varint(253_402_300_800, &mut far);
    far[1] = (far.len() - 2) as u8;
    assert!(matches!(wkt_error(&far), WellKnownValue("Timestamp", _)));
    let mut nan = vec![0x1a, 0x09, 0x11];
    nan.extend(f64::NAN.to_le_bytes());
    assert!(matches!(wkt_error(&nan), WellKnownValue("Value", _)));
    assert!(matches!(
        wkt_error(&[0x22, 0x05, 0x0a, 0x03, b'f', b'o', b'O']),
        WellKnownValue("FieldMask", _)
    ));
    let mut any = vec![0x2a, 0x0b, 0x0a, 0x09];
    any.extend(b"x/t.Nope!");
    assert!(matches!(wkt_error(&any), WellKnownValue("Any", _)));
}

#[test]
fn every_builtin_message_loads_and_an_unknown_one_is_a_usage_error() {
    for name in super::BUILTIN_MESSAGES {
        let schema = Schema::builtin(name).expect("a built-in message");
        assert_eq!(schema.message_name(), *name);
    }
    // The messages they reach load too; a leading dot is the full name.
    for name in [".tensorflow.Summary", "tensorflow.TensorProto"] {
        assert!(Schema::builtin(name).is_ok(), "{name}");
    }
    let err = Schema::builtin("tensorflow.Nothing").expect_err("not built in");
    assert_eq!(err.kind().name(), "usage_error");
    let text = err.to_string();
    assert!(
        text.contains("tensorflow.Nothing is not a built-in message")
            && text.contains("tensorflow.serving.ExampleListWithContext"),
        "{text}"
    );
}

#[test]
fn a_builtin_event_prints_its_summary_and_enums() {
    // Event { step: 5, summary { value { tag: "loss", simple_value: 0.5 } },
    //         session_log { status: START } } (the oneof's last member wins)
    let value = [&b"\x0a\x04loss\x15"[..], &0.5f32.to_le_bytes()].concat();
    let summary = [&[0x0a, value.len() as u8][..], &value].concat();
    let mut event = vec![0x10, 0x05, 0x2a, summary.len() as u8];
    event.extend_from_slice(&summary);
    let schema = Schema::builtin("tensorflow.Event").expect("built in");
    let mut json = Vec::new();
    schema
        .write_json(&mut json, &event, 0, &Default::default())
        .expect("an event");
    assert_eq!(
        String::from_utf8(json).expect("UTF-8"),
        r#"{"step":"5","summary":{"value":[{"tag":"loss","simple_value":0.5}]}}"#
    );
    let log = [0x3a, 0x02, 0x08, 0x01];
    let mut json = Vec::new();
    schema
        .write_json(&mut json, &log, 0, &Default::default())
        .expect("an event");
    assert_eq!(json, br#"{"session_log":{"status":"START"}}"#);
}

const P2: &str = r#"syntax = "proto2"; package t;
enum K { A = 1; B = 2; }
message L {
  optional string s = 1; optional K k = 2; repeated K ks = 3;
  optional group G = 4 { optional int32 g = 5; optional L deep = 6; }
  optional L child = 7; map<string, K> km = 8;
}"#;

fn reason(s: &Schema, bytes: &[u8]) -> crate::wire::DecodeReason {
    let mut out = Vec::new();
    s.write_json(&mut out, bytes, 0, &JsonOptions::default())
        .expect_err("a hostile record")
        .reason
}

/// `inner` wrapped `n` times in field `number` (length-delimited).
fn nest(n: usize, number: u8, inner: &[u8]) -> Vec<u8> {
    let mut b = inner.to_vec();
    for _ in 0..n {
        let mut outer = vec![number << 3 | 2];
        crate::wire::encode_varint(b.len() as u64, &mut outer);
        outer.extend(&b);
        b = outer;
    }
    b
}

#[test]
fn nesting_past_the_limit_is_a_named_error_by_every_path() {
    use crate::wire::DecodeReason::DepthLimitExceeded;
    let s = schema(P2, "t.L");
    // Messages (child), 101 deep and 100000 deep (no stack overflow).
    assert_eq!(reason(&s, &nest(101, 7, &[])), DepthLimitExceeded);
    assert_eq!(reason(&s, &nest(100_000, 7, &[])), DepthLimitExceeded);
    // 100 levels are fine.
    assert!(json(&s, &nest(99, 7, &[])).starts_with(r#"{"child":{"child":"#));
    // Groups holding messages holding groups (G.deep.G.deep...).
    let mut b: Vec<u8> = Vec::new();
    for _ in 0..80 {
        let mut g = vec![0x23];
        g.extend(nest(1, 6, &b));
        g.push(0x24);
        b = g;
    }
    assert_eq!(reason(&s, &b), DepthLimitExceeded);
    // Unknown groups nested 200 deep, skipped: still bounded.
    let mut u = [0xfbu8, 0x06].repeat(200);
    u.extend([0xfc, 0x06].repeat(200));
    assert_eq!(reason(&s, &u), DepthLimitExceeded);
    // The well-known types recurse too: Value.list_value.values[0]...
    let w = schema(WKT, "t.W");
    let mut v: Vec<u8> = Vec::new();
    for _ in 0..200 {
        v = nest(1, 6, &nest(1, 1, &v)); // Value{list_value: ListValue{values: [v]}}
    }
    assert_eq!(reason(&w, &nest(1, 3, &v)), DepthLimitExceeded);
}

#[test]
fn broken_framing_inside_a_record_is_a_named_error() {
    use crate::wire::DecodeReason as R;
    let s = schema(P2, "t.L");
    // A length past the end, at the top and inside a nested message.
    assert!(matches!(
        reason(&s, &[0x0a, 0x05, b'a']),
        R::LengthOverrun { .. }
    ));
    assert!(matches!(
        reason(&s, &[0x3a, 0x03, 0x0a, 0x09, b'a']),
        R::LengthOverrun { .. }
    ));
    // A varint cut short; a group never closed; a group closed by another
    // number; an end-group with none open.
    assert_eq!(reason(&s, &[0x10, 0x80]), R::Truncated);
    assert_eq!(reason(&s, &[0x23, 0x28, 0x01]), R::UnterminatedGroup(4));
    assert!(matches!(
        reason(&s, &[0x23, 0x28, 0x01, 0x3c]),
        R::UnexpectedEndGroup(_) | R::UnterminatedGroup(_)
    ));
    assert_eq!(reason(&s, &[0x24]), R::UnexpectedEndGroup(4));
    // Wire types 6 and 7.
    assert_eq!(reason(&s, &[0x0e]), R::InvalidWireType(6));
    // Every prefix of a record that uses each of these paths (the group
    // keyed by its field name, lowercase): an error or
    // JSON, never a panic.
    let mut full = vec![
        0x0a, 0x02, b'h', b'i', 0x10, 0x01, 0x1a, 0x02, 0x01, 0x02, 0x23,
    ];
    full.extend([
        0x28, 0x05, 0x32, 0x02, 0x10, 0x02, 0x24, 0x3a, 0x02, 0x10, 0x01,
    ]);
    full.extend([0x42, 0x05, 0x0a, 0x01, b'k', 0x10, 0x02]);
    assert_eq!(
        json(&s, &full),
        r#"{"s":"hi","k":"A","ks":["A","B"],"g":{"g":5,"deep":{"k":"B"}},"child":{"k":"A"},"km":{"k":"B"}}"#
    );
    for n in 0..full.len() {
        let mut out = Vec::new();
        let _ = s.write_json(&mut out, &full[..n], 0, &JsonOptions::default());
    }
}

#[test]
fn closed_enums_drop_unknown_numbers_and_proto2_strings_are_not_checked() {
    let s = schema(P2, "t.L");
    // k = 9 alone: an unknown field, not printed; A then 9: A stays; a packed
    // run [A, 9, B] and a map value 9 (the entry kept with its default).
    assert_eq!(json(&s, &[0x10, 0x09]), "{}");
    assert_eq!(json(&s, &[0x10, 0x01, 0x10, 0x09]), r#"{"k":"A"}"#);
    assert_eq!(
        json(&s, &[0x1a, 0x03, 0x01, 0x09, 0x02]),
        r#"{"ks":["A","B"]}"#
    );
    // A proto2 string is not checked (upb accepts it; pure-Python protobuf
    // refuses the message): invalid bytes print as `\udcXX`, losslessly.
    assert_eq!(json(&s, &[0x0a, 0x02, b'a', 0xff]), r#"{"s":"a\udcff"}"#);
    // proto3: an error, in a field and in a map key alike.
    let p3 = schema(P3, "t.M");
    assert_eq!(
        reason(&p3, &[0x3a, 0x01, 0xff]),
        crate::wire::DecodeReason::InvalidUtf8
    );
    assert_eq!(
        reason(&p3, &[0x42, 0x05, 0x0a, 0x01, 0xc3, 0x10, 0x01]),
        crate::wire::DecodeReason::InvalidUtf8
    );
}

#[test]
fn a_proto_that_does_not_compile_is_one_line_with_its_place() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (source, at) in [
        (
            "syntax = \"proto3\";\nmessage M {\n  int32 x = 1\n}\n",
            "bad.proto:4:1",
        ),
        (
            "syntax = \"proto3\";\nmessage M { int32 x = 1; int32 y = 1; }\n",
            "bad.proto:2:",
        ),
        ("syntax = \"proto9\";\n", "bad.proto:1:10"),
        (
            "syntax = \"proto3\";\nimport \"missing.proto\";\n",
            "bad.proto:2:",
        ),
    ] {
        let path = dir.path().join("bad.proto");
        std::fs::write(&path, source).expect("the file");
        let err = Schema::from_proto(&[&path], &[dir.path()], "M").expect_err("no schema");
        let text = err.to_string();
        assert_eq!(err.kind().name(), "usage_error", "{text}");
        assert!(text.contains(at), "{source}: {text}");
        assert!(!text.trim_end().contains('\n'), "{text}");
    }
}

#[test]
fn what_the_differential_run_found_stays_fixed() {
    use crate::wire::DecodeReason::InvalidUtf8;
    // A FieldMask path holding a quote and a control character: one JSON
    // string, escaped (it was written raw).
    let w = schema(WKT, "t.W");
    assert_eq!(
        json(&w, &[0x22, 0x05, 0x0a, 0x03, b'q', b'"', 0x01]),
        r#"{"mask":"q\"\u0001"}"#
    );
    // A proto3 string that is not UTF-8 fails the message even where a later
    // occurrence overrides it (as Google's parsers, which check every one):
    // a singular field, a map key given twice in one entry, an Any's type_url
    // before its last '/'.
    let s = schema(P3, "t.M");
    assert_eq!(
        reason(&s, &[0x3a, 0x01, 0xff, 0x3a, 0x01, b'k']),
        InvalidUtf8
    );
    assert_eq!(
        reason(
            &s,
            &[0x42, 0x08, 0x0a, 0x01, 0xff, 0x0a, 0x01, b'a', 0x10, 0x01]
        ),
        InvalidUtf8
    );
    let mut any = vec![0x2a, 0x0a, 0x0a, 0x08];
    any.extend(b"x\xff/t.W.Q");
    assert_eq!(reason(&w, &any), InvalidUtf8);
    assert_eq!(reason(&w, &[0x22, 0x03, 0x0a, 0x01, 0xff]), InvalidUtf8);
}
