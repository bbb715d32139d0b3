//! `inspect A B …`: one summary of the files as a dataset (files, records,
//! sizes, formats and one schema over all records); `--per-file` gives a
//! report for each file, as one run per file does. The summary's numbers
//! are checked against the per-file reports.

#![allow(clippy::unwrap_used)]

use serde_json::Value;

use crate::support::cli::run;

/// Plain, GZIP, OFRecord, SequenceExample and padded files.
const FILES: &[&str] = &[
    "testdata/ref/small.tfrecord",
    "testdata/ref/examples.tfrecord.gz",
    "testdata/ref/ofrecord.part-0",
    "testdata/ref/sequence_examples.tfrecord",
    "testdata/bad/base5.tfrecord",
];

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

fn with_files(args: &[&str], files: &[&str]) -> Vec<String> {
    let mut argv: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    argv.extend(files.iter().map(|f| f.to_string()));
    argv
}

fn ok_over(args: &[&str], files: &[&str]) -> String {
    let argv = with_files(args, files);
    ok(&argv.iter().map(String::as_str).collect::<Vec<_>>())
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn per_file_is_one_report_per_file() {
    for json in [&[][..], &["--json"]] {
        let per_file = [&["inspect", "--per-file"][..], json].concat();
        let each: String = FILES
            .iter()
            .map(|f| ok_over(&[&["inspect"][..], json].concat(), &[f]))
            .collect();
        assert_eq!(ok_over(&per_file, FILES), each, "{json:?}");
        // One file: the same report with or without --per-file.
        for f in FILES {
            let one = ok_over(&[&["inspect"][..], json].concat(), &[f]);
            assert_eq!(ok_over(&per_file, &[f]), one, "{f}");
        }
    }
}

/// Checks the JSON summary of `files` (read with `options`) against their
/// per-file reports.
fn summary_adds_up(files: &[&str], options: &[&str]) -> Value {
    let per_file = [&["inspect", "--per-file", "--json"][..], options].concat();
    let reports = json_lines(&ok_over(&per_file, files));
    assert_eq!(reports.len(), files.len());
    let summary = json_lines(&ok_over(
        &[&["inspect", "--json"][..], options].concat(),
        files,
    ));
    assert_eq!(summary.len(), 1, "one summary");
    let s = &summary[0];
    let sum = |f: &dyn Fn(&Value) -> u64| reports.iter().map(f).sum::<u64>();
    assert_eq!(u(&s["files"]), files.len() as u64);
    assert_eq!(u(&s["records"]), sum(&|r| u(&r["records"])));
    assert_eq!(u(&s["records_per_file"]["total"]), u(&s["records"]));
    let max_records = reports.iter().map(|r| u(&r["records"])).max().unwrap();
    assert_eq!(u(&s["records_per_file"]["max"]), max_records);
    assert_eq!(
        u(&s["data_bytes"]["total"]),
        sum(&|r| u(&r["data_bytes"]["total"]))
    );
    let with_records = || reports.iter().filter(|r| u(&r["records"]) > 0);
    if let Some(min) = with_records().map(|r| u(&r["data_bytes"]["min"])).min() {
        assert_eq!(u(&s["data_bytes"]["min"]), min);
    }
    let max = reports.iter().map(|r| u(&r["data_bytes"]["max"])).max();
    assert_eq!(u(&s["data_bytes"]["max"]), max.unwrap());
    assert_eq!(u(&s["pad_frames"]), sum(&|r| u(&r["pad_frames"])));
    assert_eq!(u(&s["pad_bytes"]), sum(&|r| u(&r["pad_bytes"])));
    assert_eq!(
        u(&s["unknown_fields"]["records"]),
        sum(&|r| u(&r["unknown_fields"]["records"]))
    );
    let stored: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert_eq!(u(&s["stored_bytes"]), stored);
    // The formats count every file once.
    let formats = s["formats"].as_array().unwrap();
    assert_eq!(
        formats.iter().map(|f| u(&f["files"])).sum::<u64>(),
        files.len() as u64
    );
    for r in &reports {
        assert!(
            formats.iter().any(|f| f["framing"] == r["framing"]
                && f["compression"] == r["compression"]
                && f["payload"] == r["payload"]),
            "{r}"
        );
    }
    // One schema over all the files: every feature of every file, its
    // records and kinds added up.
    for key in ["features", "feature_lists"] {
        let all = s[key].as_object().unwrap();
        let mut names = std::collections::BTreeSet::new();
        for r in &reports {
            names.extend(r[key].as_object().unwrap().keys().cloned());
        }
        assert_eq!(
            all.keys()
                .cloned()
                .collect::<std::collections::BTreeSet<_>>(),
            names
        );
        for (name, feature) in all {
            let of = |r: &Value, what: &str| r[key].get(name).map_or(0, |f| u(&f[what]));
            assert_eq!(u(&feature["records"]), sum(&|r| of(r, "records")), "{name}");
            let values = |r: &Value| r[key].get(name).map_or(0, |f| u(&f["values"]["total"]));
            assert_eq!(u(&feature["values"]["total"]), sum(&values), "{name}");
            for (kind, n) in feature["kinds"].as_object().unwrap() {
                let kinds = |r: &Value| {
                    r[key]
                        .get(name)
                        .map_or(0, |f| f["kinds"].get(kind).map_or(0, u))
                };
                assert_eq!(u(n), sum(&kinds), "{name} {kind}");
            }
        }
    }
    s.clone()
}

#[test]
fn the_summary_adds_up_the_files() {
    let s = summary_adds_up(FILES, &[]);
    assert!(s["formats"].as_array().unwrap().len() > 1, "a mix: {s}");
    // Two files of one format.
    let s = summary_adds_up(&[FILES[0], FILES[4]], &[]);
    assert_eq!(s["formats"].as_array().unwrap().len(), 1, "{s}");
}

#[test]
fn the_text_summary_says_what_the_reports_say() {
    let per_file = ok_over(&["inspect", "--per-file"], FILES);
    let field = |text: &str, label: &str| -> Vec<u64> {
        text.lines()
            .filter_map(|l| l.strip_prefix(label))
            .map(|rest| {
                let word = rest.split_whitespace().next().unwrap();
                word.trim_end_matches(',').parse().unwrap()
            })
            .collect()
    };
    let records = field(&per_file, "records:");
    assert_eq!(records.len(), FILES.len());
    let summary = ok_over(&["inspect"], FILES);
    assert_eq!(summary.matches("records:").count(), 1, "{summary}");
    assert_eq!(field(&summary, "files:"), [FILES.len() as u64]);
    assert_eq!(field(&summary, "records:"), [records.iter().sum::<u64>()]);
    let min = records.iter().min().unwrap();
    let max = records.iter().max().unwrap();
    assert!(
        summary.contains(&format!("(per file: min {min} / mean ")),
        "{summary}"
    );
    assert!(summary.contains(&format!(" / max {max})")), "{summary}");
    // One line per format: the mix.
    assert!(
        summary.contains("ofrecord frames, uncompressed, ofrecord payloads"),
        "{summary}"
    );
    assert!(
        summary.contains("tfrecord frames, GZIP stream, example payloads"),
        "{summary}"
    );
    assert!(summary.contains("feature lists:"), "{summary}");
}

#[test]
fn the_summary_stops_at_a_damaged_file() {
    let (code, out, err) = run(&[
        "inspect",
        "testdata/ref/small.tfrecord",
        "testdata/bad/tf_data_crc_mismatch.tfrecord",
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out, "", "no summary of part of the files");
    assert!(err.contains("error[data_crc_mismatch]"), "{err}");
}

/// The real files of ../shared/realworld/files, all at once as a shell glob
/// gives them, when that folder is there.
#[test]
fn the_summary_of_the_real_files_adds_up() {
    let Some(files) = crate::support::cli::real_files() else {
        return;
    };
    // Some hold records of other messages, which `inspect` refuses as their
    // detected payload: the others, as they are detected.
    let readable: Vec<&str> = files
        .iter()
        .map(String::as_str)
        .filter(|f| run(&["inspect", f]).0 == 0)
        .collect();
    assert!(readable.len() >= 10, "{readable:?}");
    let s = summary_adds_up(&readable, &[]);
    assert!(u(&s["records"]) > 0);
    assert!(s["formats"].as_array().unwrap().len() > 1, "a mix: {s}");
    // All of them, as raw bytes.
    let all: Vec<&str> = files.iter().map(String::as_str).collect();
    let s = summary_adds_up(&all, &["--payload", "raw"]);
    assert_eq!(u(&s["files"]), files.len() as u64);
}

#[test]
fn the_schema_table_stays_aligned_with_long_kind_lists_and_wide_names() {
    // examples.tfrecord has features of four kinds at once, a name with an
    // emoji (two columns) and one with control characters and DEL.
    let (code, out, err) = crate::support::cli::run(&[
        "inspect",
        "testdata/ref/small.tfrecord",
        "testdata/ref/examples.tfrecord",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("  name "))
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert!(rows.len() > 100, "{out}");
    // Where the `records` column ends, in terminal columns: the same on
    // every row (the header's `records` is right-aligned the same way).
    let width = unicode_width::UnicodeWidthStr::width;
    let ends: std::collections::BTreeSet<usize> = rows
        .iter()
        .map(|row| {
            let head = row.find("  values per").or_else(|| {
                // A data row: the records count is the last run of digits
                // before the "min / mean / max" figures.
                let stats = row.rfind(" / ")?;
                let before = &row[..stats];
                let stats_start = before.rfind("  ")?;
                Some(stats_start)
            });
            width(&row[..head.expect("a row with figures")])
        })
        .collect();
    assert_eq!(
        ends.len(),
        1,
        "rows end their records column at {ends:?}:\n{}",
        rows.join("\n")
    );
    assert!(
        out.contains("\"\\u0000nul\\u001f\\u007f\""),
        "DEL is escaped: {out}"
    );
}
