//! Records of any message, read by a schema given at run time (issue 38):
//! `cat --message` prints each record of `testdata/schema/` as protobuf's
//! `json_format.MessageToDict` does, value for value. The expected values
//! were made by `testdata/gen/make_schema_fixtures.py` (versions in
//! `testdata/schema/README.md`) from the same bytes, which include
//! non-canonical encodings (split messages, repeated scalars, packed and
//! unpacked runs mixed, wrong wire types, closed enums' unknown values,
//! duplicate map keys, oneof members overriding each other), and Google's
//! well-known types in their JSON forms (`wkt`).

use serde_json::Value;

use crate::support::cli::run;

/// Equal as protobuf's JSON values: numbers by value (`1` and `1.0` are one
/// number), everything else as is.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
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

fn check(name: &str, message: &str, schema: &[&str], key: &str, extra: &[&str]) {
    let data = format!("testdata/schema/{name}.tfrecord");
    let mut args = vec!["cat", "--message", message];
    args.extend_from_slice(schema);
    args.extend_from_slice(extra);
    args.push(&data);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let expected = std::fs::read_to_string(format!("testdata/schema/{name}.expected.jsonl"))
        .expect("the expected values");
    let expected: Vec<Value> = expected
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("an expected line")[key].clone())
        .collect();
    let got: Vec<Value> = out
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).expect("a line of JSON"))
        .collect();
    assert_eq!(got.len(), expected.len());
    let wrong: Vec<String> = got
        .iter()
        .zip(&expected)
        .enumerate()
        .filter(|(_, (g, e))| !same(g, e))
        .map(|(i, (g, e))| format!("{name} record {i} ({key}):\n got {g}\n want {e}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} records differ; the first:\n{}",
        wrong.len(),
        got.len(),
        wrong[..wrong.len().min(3)].join("\n")
    );
}

#[test]
fn every_record_prints_as_message_to_dict_by_a_descriptor_set() {
    for (name, message) in [
        ("shapes", "rwtest.Shapes"),
        ("legacy", "rwtest.Legacy"),
        ("wkt", "rwtest.Wkt"),
    ] {
        let set = format!("testdata/schema/{name}.pb");
        check(name, message, &["--descriptor-set", &set], "dict", &[]);
        check(
            name,
            message,
            &["--descriptor-set", &set],
            "dict_all",
            &["--print-defaults"],
        );
    }
}

/// Protobuf's own conformance schemas (`testdata/schema/conformance/`, made
/// by `testdata/gen/make_conformance_fixtures.py`): every scalar, repeated,
/// packed and unpacked, map and oneof kind, recursion, the well-known types
/// (proto3), groups, extensions and closed enums (proto2), with Google's
/// wire-level oddities.
#[test]
fn protobufs_conformance_messages_print_as_message_to_dict() {
    let set = "testdata/schema/conformance/conformance.pb";
    for (name, message, proto) in [
        (
            "conformance/proto2",
            "protobuf_test_messages.proto2.TestAllTypesProto2",
            "testdata/schema/conformance/test_messages_proto2.proto",
        ),
        (
            "conformance/proto3",
            "protobuf_test_messages.proto3.TestAllTypesProto3",
            "testdata/schema/conformance/test_messages_proto3.proto",
        ),
    ] {
        check(name, message, &["--descriptor-set", set], "dict", &[]);
        check(
            name,
            message,
            &["--descriptor-set", set],
            "dict_all",
            &["--print-defaults"],
        );
        check(
            name,
            message,
            &["--proto", proto, "-I", "testdata/schema/conformance"],
            "dict",
            &[],
        );
    }
}

#[test]
fn the_proto_sources_give_the_same_schema() {
    // wkt.proto's imports are the well-known types protox has built in.
    for (name, message) in [
        ("shapes", "rwtest.Shapes"),
        ("legacy", "rwtest.Legacy"),
        ("wkt", "rwtest.Wkt"),
    ] {
        let proto = format!("testdata/schema/{name}.proto");
        check(
            name,
            message,
            &["--proto", &proto, "-I", "testdata/schema"],
            "dict",
            &[],
        );
    }
}

#[test]
fn schema_mistakes_are_usage_errors() {
    let data = "testdata/schema/shapes.tfrecord";
    let (code, _, err) = run(&[
        "cat",
        "--message",
        "rwtest.Nope",
        "--descriptor-set",
        "testdata/schema/shapes.pb",
        data,
    ]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "error[usage_error]: schema: no message rwtest.Nope (the schema defines rwtest."
        ),
        "{err}"
    );
    let (code, _, err) = run(&["cat", "--proto", "testdata/schema/shapes.proto", data]);
    assert_eq!(code, 2);
    assert!(err.contains("need --message NAME"), "{err}");
    let (code, _, err) = run(&["cat", "--message", "rwtest.Shapes", data]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--proto FILE.proto or --descriptor-set FILE.pb"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.proto");
    std::fs::write(
        &bad,
        "syntax = \"proto3\";\nmessage M {\n  Missing m = 1;\n}\n",
    )
    .unwrap();
    let bad = bad.display().to_string();
    let (code, _, err) = run(&["cat", "--message", "M", "--proto", &bad, data]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.proto:3:3: "), "{err}");
}

#[test]
fn get_prints_the_records_it_is_asked_for_by_the_schema() {
    let schema = [
        "--descriptor-set",
        "testdata/schema/wkt.pb",
        "--message",
        "rwtest.Wkt",
    ];
    let data = "testdata/schema/wkt.tfrecord";
    let mut args = vec!["cat"];
    args.extend_from_slice(&schema);
    args.push(data);
    let (code, all, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let all: Vec<&str> = all.split('\n').filter(|l| !l.is_empty()).collect();
    let mut args = vec!["get", data, "11", "3", "39"];
    args.extend_from_slice(&schema);
    let (code, got, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let want = format!("{}\n{}\n{}\n", all[11], all[3], all[39]);
    assert_eq!(got, want);
    let mut args = vec!["get", data, "0", "--features", "x"];
    args.extend_from_slice(&schema);
    let (code, _, err) = run(&args);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn dump_annotates_every_field_by_the_schema() {
    let (code, out, err) = run(&[
        "dump",
        "--descriptor-set",
        "testdata/schema/legacy.pb",
        "--message",
        "rwtest.Legacy",
        "testdata/schema/legacy.tfrecord",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(
            "# testdata/schema/legacy.tfrecord: tfrecord frames, rwtest.Legacy payloads\n"
        ),
        "{out}"
    );
    let names = [
        "with_default",
        "name",
        "kind",
        "unpacked",
        "packed_ints",
        "blob",
        "grp",
        "g",
    ];
    let mut seen = std::collections::BTreeSet::new();
    let mut unknown = 0;
    for line in out
        .split('\n')
        .filter(|l| l.len() > 34 && !l.starts_with('#'))
    {
        let what = line[34..].trim_start();
        if what.starts_with("length")
            || what.starts_with("data crc")
            || what.starts_with("end of group")
        {
            continue;
        }
        if what.starts_with("unknown field") {
            unknown += 1;
            continue;
        }
        let name = what.split(' ').next().unwrap_or_default();
        assert!(names.contains(&name), "not a field of the schema: {line}");
        seen.insert(name.to_owned());
    }
    assert_eq!(seen.len(), names.len(), "every field appears: {seen:?}");
    // The closed enum's unknown values and the unknown numbers are shown as
    // unknown fields; the known values with their types.
    assert!(unknown >= 2, "{out}");
    assert!(out.contains("unknown field 3 (VARINT) 7\n"), "{out}");
    assert!(
        out.contains("kind (3:VARINT) rwtest.Legacy.Kind A (1)\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "packed_ints (5:LEN packed) 5 × int32: [0, -1, 2147483647, -2147483648, 300]\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("grp (7:SGROUP) group rwtest.Legacy.Grp\n"),
        "{out}"
    );
    // The raw dump of the same file knows no names.
    let (code, raw, _) = run(&[
        "dump",
        "--payload",
        "raw",
        "testdata/schema/legacy.tfrecord",
    ]);
    assert_eq!(code, 0);
    assert!(!raw.contains("packed_ints"));
}

#[test]
fn inspect_counts_each_path_as_message_to_dict_sets_it() {
    for (name, message) in [("shapes", "rwtest.Shapes"), ("legacy", "rwtest.Legacy")] {
        let data = format!("testdata/schema/{name}.tfrecord");
        let set = format!("testdata/schema/{name}.pb");
        let (code, out, err) = run(&[
            "inspect",
            "--json",
            "--descriptor-set",
            &set,
            "--message",
            message,
            &data,
        ]);
        assert_eq!(code, 0, "{err}");
        let report: Value = serde_json::from_str(&out).expect("one JSON object");
        let expected = std::fs::read_to_string(format!("testdata/schema/{name}.expected.jsonl"))
            .expect("the expected values");
        let dicts: Vec<Value> = expected
            .split('\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_str::<Value>(l).expect("a line")["dict"].clone())
            .collect();
        assert_eq!(report["records"], dicts.len());
        assert_eq!(report["message"], message);
        // Every top-level field: set in as many records as MessageToDict
        // prints it, with as many values in all.
        let mut top = std::collections::BTreeMap::<String, (u64, u64)>::new();
        for d in &dicts {
            for (k, v) in d.as_object().expect("an object") {
                let n = match v {
                    Value::Array(a) => a.len() as u64,
                    Value::Object(o)
                        if o.keys().all(|_| true)
                            && report["fields"][k]["type"]
                                .as_str()
                                .is_some_and(|t| t.starts_with("map<")) =>
                    {
                        o.len() as u64
                    }
                    _ => 1,
                };
                let e = top.entry(k.clone()).or_default();
                e.0 += 1;
                e.1 += n;
            }
        }
        let fields = report["fields"].as_object().expect("fields");
        let ours: std::collections::BTreeMap<String, (u64, u64)> = fields
            .iter()
            .filter(|(k, _)| !k.contains('.'))
            .map(|(k, v)| {
                (
                    k.clone(),
                    (
                        v["records"].as_u64().expect("records"),
                        v["values"]["total"].as_u64().expect("values"),
                    ),
                )
            })
            .collect();
        assert_eq!(ours, top, "{name}");
    }
}
