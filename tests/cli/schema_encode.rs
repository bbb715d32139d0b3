//! `encode` and `pack` with a schema given at run time: protobuf's JSON
//! mapping read back to bytes. `cat --message` of every record of
//! `testdata/schema/` packed again gives each record's deterministic
//! serialization (`deterministic_b64`, see its README), byte for byte, with
//! the fields' own names and with their JSON names; mistakes in the JSON
//! are errors naming the field (and, for `pack`, the line).

use base64::Engine as _;
use recordwire::frame::{file_of, Framing};
use serde_json::Value;

use crate::support::cli::{run, run_bytes};

/// The fixture sets: (name under `testdata/schema/`, root message). More
/// sets (protobuf's conformance cases) are one more line here.
const FIXTURES: &[(&str, &str)] = &[
    ("shapes", "rwtest.Shapes"),
    ("legacy", "rwtest.Legacy"),
    ("wkt", "rwtest.Wkt"),
];

/// Whether record `i` of fixture `name` (its rewrite label `label`) can be
/// made from its JSON: not with unknown fields (the serialization keeps
/// them, JSON has none), nor with a `google.protobuf.Value` of no kind
/// (printed `null`, read back as `null_value`).
fn from_json(name: &str, i: usize, label: &Value) -> bool {
    let label = label.as_str().unwrap_or_default();
    !(label.contains("unknown")
        || label.contains("wrong_wire_type")
        || (name == "wkt" && [1, 7, 32, 36].contains(&i)))
}

/// The deterministic serializations of the fixture's records, by index.
fn deterministic(name: &str) -> Vec<(Vec<u8>, bool)> {
    let text = std::fs::read_to_string(format!("testdata/schema/{name}.expected.jsonl"))
        .expect("the fixture");
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let v: Value = serde_json::from_str(line).expect("a fixture line");
            let b64 = v["deterministic_b64"].as_str().expect("deterministic_b64");
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64");
            (bytes, from_json(name, i, &v["noncanonical"]))
        })
        .collect()
}

#[test]
fn cat_then_pack_gives_the_deterministic_serialization() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (name, message) in FIXTURES {
        let set = format!("testdata/schema/{name}.pb");
        let data = format!("testdata/schema/{name}.tfrecord");
        let records = deterministic(name);
        let kept: Vec<&[u8]> = records
            .iter()
            .filter(|r| r.1)
            .map(|r| r.0.as_slice())
            .collect();
        assert!(
            kept.len() * 4 >= records.len() * 3,
            "{name}: too few records kept"
        );
        for names in [&[][..], &["--json-names"][..]] {
            let mut args = vec!["cat", "--message", message, "--descriptor-set", &set];
            args.extend_from_slice(names);
            args.push(&data);
            let (code, out, err) = run(&args);
            assert_eq!(code, 0, "{err}");
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), records.len());
            let mut jsonl = String::new();
            for (line, (_, keep)) in lines.iter().zip(&records) {
                if *keep {
                    jsonl.push_str(line);
                    jsonl.push('\n');
                }
            }
            let input = dir.path().join(format!("{name}.jsonl"));
            let output = dir.path().join(format!("{name}.tfrecord"));
            std::fs::write(&input, jsonl).expect("write the JSON Lines");
            let (input, output) = (
                input.to_str().expect("utf-8"),
                output.to_str().expect("utf-8"),
            );
            let (code, _, err) = run(&[
                "pack",
                input,
                output,
                "--message",
                message,
                "--descriptor-set",
                &set,
            ]);
            assert_eq!(code, 0, "{name} {names:?}: {err}");
            let got = std::fs::read(output).expect("the packed file");
            let want = file_of(Framing::TfRecord, kept.iter().copied());
            let first = got.iter().zip(&want).position(|(a, b)| a != b);
            assert!(
                got == want,
                "{name} {names:?}: the packed file ({} bytes) differs from deterministic_b64's \
                 ({} bytes), first at byte {first:?}",
                got.len(),
                want.len()
            );
        }
    }
}

#[test]
fn encode_writes_one_message() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let json = dir.path().join("one.json");
    // Fields out of order, by both name styles, an int64 as a number
    // beyond a double's precision, an enum by name, a map sorted by key.
    std::fs::write(
        &json,
        r#"{"fInt64": 9007199254740993, "f_int32": -1, "color": "GREEN", "m_int64_str": {"5": "b", "-2": "a"}}"#,
    )
    .expect("write");
    let (code, out, err) = run_bytes(&[
        "encode",
        json.to_str().expect("utf-8"),
        "--message",
        "rwtest.Shapes",
        "--descriptor-set",
        "testdata/schema/shapes.pb",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, printed, err) = {
        let tf = dir.path().join("one.tfrecord");
        std::fs::write(&tf, file_of(Framing::TfRecord, [out.as_slice()])).expect("write");
        run(&[
            "cat",
            "--message",
            "rwtest.Shapes",
            "--descriptor-set",
            "testdata/schema/shapes.pb",
            tf.to_str().expect("utf-8"),
        ])
    };
    assert_eq!(code, 0, "{err}");
    let printed: Value = serde_json::from_str(printed.trim()).expect("JSON");
    let want: Value = serde_json::from_str(
        r#"{"f_int32": -1, "f_int64": "9007199254740993", "color": "GREEN", "m_int64_str": {"-2": "a", "5": "b"}}"#,
    )
    .expect("JSON");
    assert_eq!(printed, want);
    // f_int32 = -1 is 10 bytes of varint, right after f_int64 (field 3).
    assert!(
        out.windows(11)
            .any(|w| w == [0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
        "{out:02x?}"
    );
}

#[test]
fn json_mistakes_name_the_field_and_the_line() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "shapes",
            "rwtest.Shapes",
            r#"{"f_int32": 1, "nope": 2}"#,
            "unknown field \"nope\" of rwtest.Shapes",
        ),
        (
            "shapes",
            "rwtest.Shapes",
            r#"{"color": "PURPLE"}"#,
            "color: \"PURPLE\" is not a value of enum rwtest.Color",
        ),
        (
            "shapes",
            "rwtest.Shapes",
            r#"{"f_int32": 2147483648}"#,
            "f_int32: 2147483648 is out of range for int32",
        ),
        (
            "shapes",
            "rwtest.Shapes",
            r#"{"inners": [{}, {"children": [{"a": "x"}]}]}"#,
            "inners[1].children[0].a: \"x\" is not an integer",
        ),
        (
            "shapes",
            "rwtest.Shapes",
            r#"{"f_bytes": "a*b="}"#,
            "f_bytes: invalid base64",
        ),
        (
            "shapes",
            "rwtest.Shapes",
            r#"{"pick_int": 1, "pickText": "a"}"#,
            "are members of one oneof",
        ),
        (
            "shapes",
            "rwtest.Shapes",
            r#"{"m_bool_inner": {"yes": {}}}"#,
            "m_bool_inner[\"yes\"]: a bool map key",
        ),
        (
            "legacy",
            "rwtest.Legacy",
            r#"{"kind": 7}"#,
            "kind: 7 is not a value of the closed enum rwtest.Legacy.Kind",
        ),
        (
            "wkt",
            "rwtest.Wkt",
            r#"{"ts": "2024-02-30T00:00:00Z"}"#,
            "ts: \"2024-02-30T00:00:00Z\": a date or time out of range",
        ),
        (
            "wkt",
            "rwtest.Wkt",
            r#"{"dur": "1.5"}"#,
            "dur: \"1.5\": a Duration ends in 's'",
        ),
        (
            "wkt",
            "rwtest.Wkt",
            r#"{"any": {"@type": "type.googleapis.com/rwtest.Nope"}}"#,
            "is not in the schema",
        ),
    ];
    for (i, (name, message, json, want)) in cases.iter().enumerate() {
        let set = format!("testdata/schema/{name}.pb");
        let input = dir.path().join(format!("{i}.jsonl"));
        // The mistake on line 3, after a good line and a blank one.
        std::fs::write(&input, format!("{{}}\n\n{json}\n")).expect("write");
        let input = input.to_str().expect("utf-8");
        let output = dir.path().join(format!("{i}.tfrecord"));
        let (code, _, err) = run(&[
            "pack",
            input,
            output.to_str().expect("utf-8"),
            "--message",
            message,
            "--descriptor-set",
            &set,
        ]);
        assert_eq!(code, 1, "{json}: {err}");
        assert!(
            err.contains("line 3: ") && err.contains(want),
            "{json}:\n{err}"
        );
        let (code, _, err) = run(&[
            "encode",
            input,
            "--message",
            message,
            "--descriptor-set",
            &set,
        ]);
        assert_eq!(code, 1, "{json}: {err}");
    }
    // --json-names and --print-defaults are for printing: encode and pack
    // do not have them.
    let (code, _, err) = run(&[
        "encode",
        "x.json",
        "--json-names",
        "--message",
        "rwtest.Shapes",
        "--descriptor-set",
        "testdata/schema/shapes.pb",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--json-names"), "{err}");
    // --payload and a schema do not go together.
    let (code, _, err) = run(&[
        "pack",
        "x.jsonl",
        "y.tfrecord",
        "--payload",
        "example",
        "--message",
        "rwtest.Shapes",
        "--descriptor-set",
        "testdata/schema/shapes.pb",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--payload"), "{err}");
}
