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
