//! `recordwire bench` end to end: its JSON parses, its record and value
//! counts are the file's (counted independently, from `cat`'s JSON), its
//! percentiles are ordered, its options are obeyed, damaged data exits 1
//! with the error kind, compressed files get through checkpoints, and empty
//! files give nulls instead of NaN. No timing is asserted beyond ordering
//! and positivity.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use serde_json::Value;

use crate::support::cli;
use cli::run;

fn data(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .to_str()
        .unwrap()
        .to_string()
}

/// Runs `bench --json` with few passes and samples; checks exit 0 and that
/// stdout is one JSON object.
fn bench_json(file: &str, extra: &[&str]) -> Value {
    let mut args = vec!["bench", "--json", "--passes", "2", "--samples", "500", file];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{file}: {err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Number of values in a record's JSON: every array under a `"value"` key
/// (feature names map to objects, never to arrays).
fn values_in(v: &Value) -> u64 {
    match v {
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| match (k.as_str(), v) {
                ("value", Value::Array(a)) => a.len() as u64,
                _ => values_in(v),
            })
            .sum(),
        Value::Array(a) => a.iter().map(values_in).sum(),
        _ => 0,
    }
}

/// (records, values) of `file`, from `cat`.
fn true_counts(file: &str, extra: &[&str]) -> (u64, u64) {
    let mut args = vec!["cat", file];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let mut records = 0;
    let mut values = 0;
    for line in out.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        records += 1;
        values += values_in(&v);
    }
    (records, values)
}

fn u(v: &Value, path: &[&str]) -> u64 {
    let mut v = v;
    for k in path {
        v = &v[*k];
    }
    v.as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not a u64: {v}"))
}

fn check_latency(r: &Value) {
    assert_eq!(r["skipped"], false, "{r}");
    let p: Vec<u64> = ["p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"]
        .iter()
        .map(|k| u(r, &[k]))
        .collect();
    assert!(p[0] > 0, "{r}");
    assert!(p.windows(2).all(|w| w[0] <= w[1]), "not ordered: {r}");
    assert!(r["mean_ns"].as_f64().unwrap() > 0.0);
}

fn check_passes(v: &Value, passes: u64) {
    assert_eq!(u(v, &["passes"]), passes, "{v}");
    let median = v["median_seconds"].as_f64().unwrap();
    let best = v["best_seconds"].as_f64().unwrap();
    assert!(best > 0.0 && best <= median, "{v}");
    for k in [
        "records_per_second",
        "gb_per_second",
        "mib_per_second",
        "best_gb_per_second",
    ] {
        assert!(v[k].as_f64().unwrap() > 0.0, "{k}: {v}");
    }
    let gb = v["gb_per_second"].as_f64().unwrap();
    let mib = v["mib_per_second"].as_f64().unwrap();
    assert!((gb * 1e9 / (mib * 1048576.0) - 1.0).abs() < 1e-9);
}

/// Writes a file of `n` tf.Examples (through `pack`) whose lists grow, so
/// that the reused buffers must grow too.
fn generated(dir: &Path, n: usize, payload: &str) -> String {
    let mut jsonl = String::new();
    for i in 0..n {
        let ints: Vec<String> = (0..(i * 7) % 300).map(|k| format!("\"{k}\"")).collect();
        let floats: Vec<String> = (0..i % 50).map(|k| format!("{k}.5")).collect();
        let line = if payload == "ofrecord" {
            let int32: Vec<String> = (0..i % 40).map(|k| k.to_string()).collect();
            format!(
                "{{\"feature\":{{\"id\":{{\"int64_list\":{{\"value\":[{}]}}}},\"w\":{{\"float_list\":{{\"value\":[{}]}}}},\"d\":{{\"double_list\":{{\"value\":[{}]}}}},\"i\":{{\"int32_list\":{{\"value\":[{}]}}}},\"b\":{{\"bytes_list\":{{\"value\":[\"YQ==\",\"\"]}}}}}}}}",
                ints.join(","),
                floats.join(","),
                floats.join(","),
                int32.join(",")
            )
        } else {
            format!(
                "{{\"features\":{{\"feature\":{{\"id\":{{\"int64_list\":{{\"value\":[{}]}}}},\"w\":{{\"float_list\":{{\"value\":[{}]}}}},\"b\":{{\"bytes_list\":{{\"value\":[\"YQ==\",\"\"]}}}},\"none\":{{}}}}}}}}",
                ints.join(","),
                floats.join(",")
            )
        };
        jsonl.push_str(&line);
        jsonl.push('\n');
    }
    let input = dir.join(format!("gen-{payload}.jsonl"));
    std::fs::write(&input, jsonl).unwrap();
    let out = dir.join(format!("gen.{payload}"));
    let (out, input) = (out.to_str().unwrap(), input.to_str().unwrap());
    let (code, _, err) = run(&["pack", "--payload", payload, input, out]);
    assert_eq!(code, 0, "{err}");
    out.to_string()
}

#[test]
fn counts_are_the_files_and_percentiles_are_ordered() {
    let dir = tempfile::tempdir().unwrap();
    let gen_ex = generated(dir.path(), 200, "example");
    let gen_of = generated(dir.path(), 150, "ofrecord");
    let cases: Vec<(String, &[&str], &str, &str)> = vec![
        (
            data("testdata/ref/examples.tfrecord"),
            &[],
            "tfrecord",
            "example",
        ),
        (
            data("testdata/ref/small.tfrecord"),
            &[],
            "tfrecord",
            "example",
        ),
        (
            data("testdata/ref/ofrecord.part-0"),
            &[],
            "ofrecord",
            "ofrecord",
        ),
        (
            data("testdata/ref/sequence_examples.tfrecord"),
            &["--payload", "sequence_example"],
            "tfrecord",
            "sequence_example",
        ),
        (gen_ex, &[], "tfrecord", "example"),
        (gen_of, &[], "ofrecord", "ofrecord"),
    ];
    for (file, extra, framing, payload) in &cases {
        let (records, values) = true_counts(file, extra);
        assert!(records > 0 && values > 0, "{file}");
        let j = bench_json(file, extra);
        assert_eq!(j["file"], file.as_str());
        assert_eq!(
            (j["framing"].as_str(), j["payload"].as_str()),
            (Some(*framing), Some(*payload))
        );
        assert_eq!(j["compression"], "none");
        assert_eq!(u(&j, &["records"]), records, "{file}");
        assert_eq!(u(&j, &["values"]), values, "{file}");
        let bytes = std::fs::metadata(file).unwrap().len();
        assert_eq!(u(&j, &["bytes"]), bytes);
        assert_eq!(u(&j, &["stream_bytes"]), bytes);
        assert!(u(&j, &["data_bytes"]) < bytes);
        check_passes(&j["sequential"], 2);
        check_passes(&j["framing_only"], 2);
        let ra = &j["random_access"];
        check_latency(ra);
        assert_eq!(u(ra, &["samples"]), 500);
        assert_eq!(ra["index"], "built");
        check_latency(&j["random_read_64"]);
        assert_eq!(u(&j["random_read_64"], &["bytes_per_read"]), 64);
        assert!(j["ratio_p50"].as_f64().unwrap() > 0.0);
        assert!(j["timer_overhead_ns"].is_u64());
    }
}

#[test]
fn the_looked_up_feature_is_the_first_of_record_0() {
    let file = data("testdata/ref/small.tfrecord");
    let (_, first, _) = run(&["cat", &file]);
    let first: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let names: Vec<&String> = first["features"]["feature"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    let j = bench_json(&file, &[]);
    let feature = j["random_access"]["feature"].as_str().unwrap().to_string();
    assert!(names.contains(&&feature), "{feature} not in {names:?}");
    // A record 0 without features: the op is the get alone, and the feature null.
    let j = bench_json(
        &data("testdata/ref/sequence_examples.tfrecord"),
        &["--payload", "sequence_example"],
    );
    assert!(j["random_access"]["feature"].is_null(), "{j}");
}

#[test]
fn passes_samples_and_seed_are_obeyed() {
    let file = data("testdata/ref/examples.tfrecord");
    let (code, out, err) = run(&[
        "bench",
        &file,
        "--json",
        "--passes",
        "3",
        "--samples",
        "777",
        "--seed",
        "42",
    ]);
    assert_eq!(code, 0, "{err}");
    let j: Value = serde_json::from_str(&out).unwrap();
    check_passes(&j["sequential"], 3);
    check_passes(&j["framing_only"], 3);
    for part in ["random_access", "random_read_64"] {
        assert_eq!(u(&j[part], &["samples"]), 777);
        assert_eq!(u(&j[part], &["seed"]), 42);
    }
    // --samples 0: random access skipped, not an error
    let (code, out, err) = run(&["bench", &file, "--json", "--passes", "1", "--samples", "0"]);
    assert_eq!(code, 0, "{err}");
    let j: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["random_access"]["skipped"], true);
    assert!(j["random_access"]["reason"].is_string());
    assert!(j["ratio_p50"].is_null());
    // usage errors exit 2
    for bad in [
        &["bench", file.as_str(), "--passes", "0"][..],
        &["bench", file.as_str(), "--samples", "-1"],
        &["bench", file.as_str(), "--mode", "x"],
        &["bench", "-"],
        &["bench"],
    ] {
        let (code, _, err) = run(bad);
        assert_eq!(code, 2, "{bad:?}: {err}");
    }
    // an input that cannot be opened: exit 2, io_error
    let (code, _, err) = run(&["bench", "/nonexistent/x.tfrecord"]);
    assert_eq!(code, 2);
    assert!(err.contains("error[io_error]"), "{err}");
}

#[test]
fn index_options_are_used() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("examples.tfrecord");
    std::fs::copy(data("testdata/ref/examples.tfrecord"), &file).unwrap();
    let file = file.to_str().unwrap();
    let (records, _) = true_counts(file, &[]);
    // --index: a DALI index elsewhere
    let idx = dir.path().join("x.idx");
    let idx = idx.to_str().unwrap();
    let (code, _, err) = run(&["index", file, "--format", "dali", "--out", idx]);
    assert_eq!(code, 0, "{err}");
    let j = bench_json(file, &["--index", idx]);
    assert_eq!(j["random_access"]["index"], "given");
    assert_eq!(u(&j, &["records"]), records);
    // the current sidecar
    let (code, _, err) = run(&["index", file]);
    assert_eq!(code, 0, "{err}");
    let j = bench_json(file, &[]);
    assert_eq!(j["random_access"]["index"], "sidecar");
    // a stale --index is refused: exit 1, stale_index
    let other = dir.path().join("small.tfrecord");
    std::fs::copy(data("testdata/ref/small.tfrecord"), &other).unwrap();
    let (code, _, err) = run(&["bench", other.to_str().unwrap(), "--index", idx]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("error[stale_index]"), "{err}");
}

#[test]
fn damaged_files_exit_1_with_the_error_kind_and_record() {
    for (file, kind, record) in [
        ("tf_data_crc_mismatch.tfrecord", "data_crc_mismatch", 2),
        ("tf_length_crc_mismatch.tfrecord", "length_crc_mismatch", 2),
        ("tf_truncated_data.tfrecord", "truncated_data", 3),
        ("tf_decode_error.tfrecord", "decode_error", 2),
        ("of_invalid_length.ofrecord", "invalid_length", 2),
        ("of_decode_error.ofrecord", "decode_error", 2),
        ("gz_truncated.tfrecord.gz", "compression_error", 4),
    ] {
        let path = data(&format!("testdata/bad/{file}"));
        let (code, out, err) = run(&["bench", "--passes", "1", "--samples", "10", &path]);
        assert_eq!(code, 1, "{file}: {err}");
        assert!(out.is_empty(), "{file}: {out}");
        let line = err.lines().next().unwrap();
        assert!(
            line.starts_with(&format!("error[{kind}]: {path}: record {record} at byte ")),
            "{file}: {err}"
        );
    }
}

#[test]
fn compressed_files_stream_and_get_through_checkpoints() {
    let (records, values) = true_counts(&data("testdata/ref/examples.tfrecord"), &[]);
    let plain = std::fs::metadata(data("testdata/ref/examples.tfrecord"))
        .unwrap()
        .len();
    for (ext, name) in [("gz", "gzip"), ("zlib", "zlib")] {
        let file = data(&format!("testdata/ref/examples.tfrecord.{ext}"));
        let j = bench_json(&file, &[]);
        assert_eq!(j["compression"], name);
        assert_eq!((u(&j, &["records"]), u(&j, &["values"])), (records, values));
        assert_eq!(u(&j, &["bytes"]), std::fs::metadata(&file).unwrap().len());
        assert_eq!(u(&j, &["stream_bytes"]), plain);
        check_passes(&j["sequential"], 2);
        check_passes(&j["framing_only"], 2);
        // Random gets through the checkpoints (built: no sidecar in testdata).
        for part in ["random_access", "random_read_64"] {
            assert_eq!(j[part]["skipped"], false, "{j}");
            assert!(u(&j, &[part, "p50_ns"]) > 0, "{j}");
        }
        assert_eq!(j["random_access"]["index"], "checkpoints built", "{j}");
        assert!(j["ratio_p50"].as_f64().unwrap() > 0.0, "{j}");
        let (code, out, err) = run(&["bench", "--passes", "1", &file]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("get+lookup:    p50 "), "{out}");
    }
}

#[test]
fn empty_files_give_zero_records_and_nulls() {
    for file in [
        "testdata/ref/empty.tfrecord",
        "testdata/ref/empty.tfrecord.gz",
    ] {
        let file = data(file);
        let j = bench_json(&file, &[]);
        assert_eq!((u(&j, &["records"]), u(&j, &["values"])), (0, 0));
        for part in ["sequential", "framing_only"] {
            for k in [
                "records_per_second",
                "gb_per_second",
                "mib_per_second",
                "best_gb_per_second",
            ] {
                assert!(j[part][k].is_null(), "{part}.{k}: {j}");
            }
            assert!(j[part]["median_seconds"].as_f64().unwrap() >= 0.0);
        }
        assert_eq!(j["random_access"]["skipped"], true);
        assert!(j["ratio_p50"].is_null());
        let (code, out, err) = run(&["bench", "--passes", "1", &file]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("0 records, 0 values"), "{out}");
        assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
    }
}

#[test]
fn raw_payloads_and_read_options() {
    let file = data("testdata/ref/examples.tfrecord");
    let (records, _) = true_counts(&file, &[]);
    let j = bench_json(&file, &["--payload", "raw"]);
    assert_eq!((u(&j, &["records"]), u(&j, &["values"])), (records, 0));
    assert!(j["random_access"]["feature"].is_null());
    check_latency(&j["random_access"]);
    let j = bench_json(&file, &["--no-mmap", "--no-data-crc", "--strict"]);
    assert_eq!(
        (j["mapped"].as_bool(), j["data_crc"].as_bool()),
        (Some(false), Some(false))
    );
    assert_eq!(u(&j, &["records"]), records);
    // a bad data CRC goes unnoticed without data CRC checks
    let bad = data("testdata/bad/tf_data_crc_mismatch.tfrecord");
    let j = bench_json(&bad, &["--no-data-crc"]);
    assert_eq!(u(&j, &["records"]), 5);
}

#[test]
fn human_output_has_one_line_per_measure() {
    let file = data("testdata/ref/examples.tfrecord");
    let (code, out, err) = run(&["bench", "--passes", "1", "--samples", "100", &file]);
    assert_eq!(code, 0, "{err}");
    let labels: Vec<&str> = out
        .lines()
        .map(|l| l.split(':').next().unwrap().trim())
        .collect();
    assert_eq!(
        labels,
        [
            "file",
            "format",
            "size",
            "sequential",
            "framing only",
            "random access",
            "get+lookup",
            "64-byte read",
            "ratio (p50)",
            "timer"
        ],
        "{out}"
    );
    assert!(out.contains("records/s") && out.contains("GB/s") && out.contains("MiB/s"));
    assert!(out.contains("p99.9"));
    // --help lists the JSON keys
    let (code, help, _) = run(&["bench", "--help"]);
    assert_eq!(code, 0);
    for key in ["ratio_p50", "p999_ns", "gb_per_second", "random_read_64"] {
        assert!(help.contains(key), "{key} not in --help");
    }
}
