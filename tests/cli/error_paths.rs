//! Every subcommand's error paths: each error line says its kind
//! (`error[kind]: …`), usage errors and inputs that cannot be opened exit 2,
//! damaged data exits 1 (docs/FORMAT.md §8, §9.4).

#![allow(clippy::unwrap_used)]

use crate::support::cli::run;

const SMALL: &str = "testdata/ref/small.tfrecord";
const CRC: &str = "testdata/bad/tf_data_crc_mismatch.tfrecord";
const TRUNCATED: &str = "testdata/bad/tf_truncated_data.tfrecord";
const MISSING: &str = "testdata/no/such.tfrecord";

/// One failing invocation: its arguments, the exit status and the kind of
/// its first error line.
struct Case {
    args: Vec<String>,
    code: i32,
    kind: &'static str,
}

fn case(args: &[&str], code: i32, kind: &'static str) -> Case {
    Case {
        args: args.iter().map(|a| a.to_string()).collect(),
        code,
        kind,
    }
}

/// The cases of every subcommand; `scratch` holds files made for them.
fn cases(scratch: &std::path::Path) -> Vec<(&'static str, Vec<Case>)> {
    let not_json = scratch.join("not.json");
    std::fs::write(&not_json, "{not json}\n").expect("write");
    let bad_message = scratch.join("bad.bin");
    std::fs::write(&bad_message, [0x0f, 0x01]).expect("write");
    let out = scratch.join("out.tfrecord");
    // `export`: a spec that small.tfrecord's labels (int64) do not fit, an
    // output, and an output that exists (the scratch directory, not empty).
    let wrong_spec = scratch.join("wrong.spec.json");
    std::fs::write(
        &wrong_spec,
        r#"{"features": {"label": {"form": "fixed_len", "dtype": "float32", "shape": []}}}"#,
    )
    .expect("write");
    let (wrong_spec, export_out, scratch_dir) = (
        wrong_spec.to_str().expect("UTF-8").to_owned(),
        scratch
            .join("out.parquet")
            .to_str()
            .expect("UTF-8")
            .to_owned(),
        scratch.to_str().expect("UTF-8").to_owned(),
    );
    let (not_json, bad_message, out) = (
        not_json.to_str().expect("UTF-8").to_owned(),
        bad_message.to_str().expect("UTF-8").to_owned(),
        out.to_str().expect("UTF-8").to_owned(),
    );
    let import_out = scratch
        .join("imported.tfrecord")
        .to_str()
        .expect("UTF-8")
        .to_owned();
    let common = |command: &'static str, mut more: Vec<Case>| {
        more.push(case(&[command, "--no-such-option"], 2, "usage_error"));
        (command, more)
    };
    vec![
        common(
            "cat",
            vec![
                case(&["cat", MISSING], 2, "io_error"),
                case(&["cat", CRC], 1, "data_crc_mismatch"),
                case(&["cat", "--payload", "nonsense", SMALL], 2, "usage_error"),
            ],
        ),
        common(
            "decode",
            vec![
                case(&["decode", MISSING], 2, "io_error"),
                case(&["decode", &bad_message], 1, "decode_error"),
            ],
        ),
        common(
            "dump",
            vec![
                case(&["dump", MISSING], 2, "io_error"),
                case(&["dump", "--record", "99", SMALL], 2, "usage_error"),
                case(&["dump", TRUNCATED], 1, "truncated_data"),
            ],
        ),
        common(
            "verify",
            vec![
                case(&["verify", MISSING], 2, "io_error"),
                case(&["verify", CRC], 1, "data_crc_mismatch"),
                case(&["verify", "--threads", "4", CRC], 1, "data_crc_mismatch"),
                case(&["verify", "--threads", "0", SMALL], 2, "usage_error"),
            ],
        ),
        common(
            "count",
            vec![
                case(&["count", MISSING], 2, "io_error"),
                case(&["count", TRUNCATED], 1, "truncated_data"),
                case(&["count", "--threads", "3", TRUNCATED], 1, "truncated_data"),
                case(&["count", SMALL, SMALL, "--index", SMALL], 2, "usage_error"),
            ],
        ),
        common(
            "encode",
            vec![
                case(&["encode", MISSING], 2, "io_error"),
                case(&["encode", &not_json], 1, "invalid_json"),
            ],
        ),
        common(
            "pack",
            vec![
                case(&["pack", MISSING, &out], 2, "io_error"),
                case(&["pack", &not_json, &out], 1, "invalid_json"),
            ],
        ),
        common(
            "convert",
            vec![
                case(&["convert", MISSING, &out], 2, "io_error"),
                case(&["convert", CRC, &out], 1, "data_crc_mismatch"),
            ],
        ),
        common(
            "index",
            vec![
                case(&["index", MISSING], 2, "io_error"),
                case(&["index", TRUNCATED, "--out", "-"], 1, "truncated_data"),
            ],
        ),
        common(
            "get",
            vec![
                case(&["get", MISSING, "0"], 2, "io_error"),
                case(&["get", SMALL, "10"], 2, "usage_error"),
                case(&["get", CRC, "2"], 1, "data_crc_mismatch"),
            ],
        ),
        common(
            "order",
            vec![
                case(&["order", MISSING], 2, "io_error"),
                case(
                    &["order", SMALL, "--rank", "3", "--world", "2"],
                    2,
                    "usage_error",
                ),
                case(&["order", SMALL, "--mode", "sorted"], 2, "usage_error"),
            ],
        ),
        common(
            "inspect",
            vec![
                case(&["inspect", MISSING], 2, "io_error"),
                case(&["inspect", CRC], 1, "data_crc_mismatch"),
                case(&["inspect", "--spec", CRC], 1, "data_crc_mismatch"),
                case(&["inspect", "--spec-format", "tf", SMALL], 2, "usage_error"),
            ],
        ),
        common(
            "export",
            vec![
                case(
                    &["export", "--spec", "auto", MISSING, &export_out],
                    2,
                    "io_error",
                ),
                case(
                    &["export", "--spec", MISSING, SMALL, &export_out],
                    2,
                    "io_error",
                ),
                case(
                    &["export", "--spec", &not_json, SMALL, &export_out],
                    2,
                    "usage_error",
                ),
                case(
                    &["export", "--spec", "auto", CRC, &export_out],
                    1,
                    "data_crc_mismatch",
                ),
                case(
                    &["export", "--spec", &wrong_spec, SMALL, &export_out],
                    1,
                    "feature_error",
                ),
                case(
                    &["export", "--spec", "auto", SMALL, &scratch_dir],
                    2,
                    "usage_error",
                ),
            ],
        ),
        common(
            "import",
            vec![
                case(&["import", MISSING, &import_out], 2, "io_error"),
                case(&["import", SMALL, &import_out], 1, "parquet_error"),
                case(
                    &[
                        "import",
                        "--payload",
                        "sequence_example",
                        SMALL,
                        &import_out,
                    ],
                    2,
                    "usage_error",
                ),
            ],
        ),
        common(
            "bench",
            vec![
                case(&["bench", MISSING], 2, "io_error"),
                case(&["bench", "-"], 2, "usage_error"),
                case(
                    &["bench", "--samples", "10", "--passes", "1", TRUNCATED],
                    1,
                    "truncated_data",
                ),
            ],
        ),
    ]
}

/// The subcommands `recordwire --help` lists (but `help`).
fn subcommands() -> Vec<String> {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    out.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_error_line_has_its_kind_and_every_exit_status_its_class() {
    let dir = tempfile::tempdir().expect("tempdir");
    let all = cases(dir.path());
    let covered: Vec<String> = all.iter().map(|(c, _)| c.to_string()).collect();
    assert_eq!(covered, subcommands(), "a subcommand without error cases");
    for (_, cases) in &all {
        for c in cases {
            let args: Vec<&str> = c.args.iter().map(String::as_str).collect();
            let (code, out, err) = run(&args);
            let error_lines: Vec<&str> = out
                .lines()
                .chain(err.lines())
                .filter(|l| l.starts_with("error"))
                .collect();
            assert!(
                !error_lines.is_empty(),
                "{args:?}: no error line in {out}{err}"
            );
            for line in &error_lines {
                let kind = line
                    .strip_prefix("error[")
                    .and_then(|rest| rest.split_once("]: "))
                    .map(|(kind, _)| kind);
                assert!(
                    kind.is_some_and(
                        |k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                    ),
                    "{args:?}: an error line without its kind: {line}"
                );
            }
            assert_eq!(
                (code, error_lines[0].split(']').next()),
                (c.code, Some(format!("error[{}", c.kind).as_str())),
                "{args:?}: {err}"
            );
        }
    }
}

#[test]
fn pack_of_a_record_of_the_wrong_shape_says_the_shape_expected() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let run_pack = |line: &str, out: &str| {
        std::fs::write(&input, format!("{line}\n")).unwrap();
        let out = dir.path().join(out);
        let (code, _, err) = run(&["pack", input.to_str().unwrap(), out.to_str().unwrap()]);
        assert_eq!(code, 1, "{err}");
        assert!(!out.exists());
        err
    };
    let err = run_pack(r#"{"a": 1}"#, "x.tfrecord");
    assert!(
        err.ends_with(
            "line 1: unknown field \"a\"; expected \"features\" (a tf.Example is {\"features\": \
             {\"feature\": {\"NAME\": {\"int64_list\": {\"value\": [...]}}}}})\n"
        ),
        "{err}"
    );
    let err = run_pack(r#"{"a": 1}"#, "x.ofrecord");
    assert!(
        err.contains("expected \"feature\" (an OFRecord is {\"feature\": {\"NAME\""),
        "{err}"
    );
    // Deeper down, the fields that belong there.
    let err = run_pack(r#"{"features": {"x": 1}}"#, "x.tfrecord");
    assert!(
        err.ends_with("line 1: features: unknown field \"x\"; expected \"feature\"\n"),
        "{err}"
    );
}

/// The kinds an error line or a Python `recordwire.Error` can carry: the
/// library's `ErrorKind` names and the kinds the command line and the
/// bindings give themselves, read from the source.
fn kinds_in_source() -> std::collections::BTreeSet<String> {
    let mut kinds = std::collections::BTreeSet::new();
    let mut scan = |path: &std::path::Path, before: &[&str]| {
        let text = std::fs::read_to_string(path).unwrap();
        for marker in before {
            for (at, _) in text.match_indices(marker) {
                let rest = &text[at + marker.len()..];
                let Some(rest) = rest.trim_start().strip_prefix('"') else {
                    continue;
                };
                let kind: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if rest[kind.len()..].starts_with('"') && !kind.is_empty() {
                    kinds.insert(kind);
                }
            }
        }
    };
    scan(std::path::Path::new("src/error.rs"), &["} =>", ") =>"]);
    for dir in ["src/cli", "python/src"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                scan(
                    &path,
                    &[
                        "input_error(stderr,",
                        "new_error(py,",
                        "USAGE_ERROR: &str =",
                    ],
                );
            }
        }
    }
    kinds
}

#[test]
fn the_readme_lists_every_error_kind() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let kinds = kinds_in_source();
    for expected in [
        "truncated_data",
        "feature_error",
        "usage_error",
        "invalid_spec",
        "invalid_json",
    ] {
        assert!(
            kinds.contains(expected),
            "the source scan missed {expected}: {kinds:?}"
        );
    }
    let missing: Vec<_> = kinds
        .iter()
        .filter(|k| !readme.contains(&format!("| `{k}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "README.md's table of error kinds lacks {missing:?}"
    );
}
