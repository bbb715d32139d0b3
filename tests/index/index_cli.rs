//! The index commands end to end: `index` writes a sidecar that `count` and
//! `get` then use, DALI output matches the tfrecord package's, `get` equals
//! sequential reading, and a stale index is refused with `stale_index`.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use crate::support::cli;
use cli::run;

fn copy_to(dir: &Path, src: &str) -> String {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(src);
    let to = dir.join(from.file_name().unwrap());
    std::fs::copy(&from, &to).unwrap();
    to.to_str().unwrap().to_string()
}

#[test]
fn get_equals_sequential_reading_for_both_framings() {
    let dir = tempfile::tempdir().unwrap();
    for (src, payload) in [
        ("testdata/ref/examples.tfrecord", "example"),
        ("testdata/ref/ofrecord.part-0", "ofrecord"),
        (
            "testdata/ref/sequence_examples.tfrecord",
            "sequence_example",
        ),
    ] {
        let file = copy_to(dir.path(), src);
        let (_, all, _) = run(&["cat", &file, "--payload", payload]);
        let lines: Vec<&str> = all.lines().collect();
        // without a sidecar (index built in memory), then with one
        for with_sidecar in [false, true] {
            if with_sidecar {
                let (code, _, err) = run(&["index", &file]);
                assert_eq!(code, 0, "{err}");
                assert!(Path::new(&format!("{file}.rwindex")).exists());
            }
            let mut ids: Vec<String> = (0..lines.len()).rev().map(|i| i.to_string()).collect();
            ids.push("0".into());
            let mut args = vec!["get", file.as_str(), "--payload", payload];
            args.extend(ids.iter().map(String::as_str));
            let (code, got, err) = run(&args);
            assert_eq!(code, 0, "{src}: {err}");
            let got: Vec<&str> = got.lines().collect();
            let mut want: Vec<&str> = lines.iter().rev().copied().collect();
            want.push(lines[0]);
            assert_eq!(got, want, "{src}");
            let (code, n, _) = run(&["count", &file]);
            assert_eq!((code, n.trim().parse::<usize>().unwrap()), (0, lines.len()));
        }
    }
}

#[test]
fn dali_index_matches_the_tfrecord_package() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_to(dir.path(), "testdata/ref/examples.tfrecord");
    let (code, text, err) = run(&["index", &file, "--format", "dali", "--out", "-"]);
    assert_eq!(code, 0, "{err}");
    let want = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/index/examples.tfrecord.tfindex"),
    )
    .unwrap();
    assert_eq!(text, want);
    // and it can be used for get
    let idx = format!("{file}.idx");
    std::fs::write(&idx, &text).unwrap();
    let (code, a, _) = run(&["get", &file, "7", "--index", &idx]);
    let (_, b, _) = run(&["get", &file, "7"]);
    assert_eq!((code, a), (0, b));
}

#[test]
fn stale_sidecar_is_rejected_or_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_to(dir.path(), "testdata/ref/examples.tfrecord");
    assert_eq!(run(&["index", &file]).0, 0);
    let sidecar = format!("{file}.rwindex");
    // rewrite the data file with other records (same framing)
    let other = copy_to(dir.path(), "testdata/ref/small.tfrecord");
    std::fs::copy(&other, &file).unwrap();
    // given explicitly, a stale index is an error that says so
    let (code, _, err) = run(&["get", &file, "0", "--index", &sidecar]);
    assert_eq!(code, 1);
    assert!(err.starts_with("error[stale_index]: "), "{err}");
    // found as a sidecar, it is not trusted: count rebuilds and is right
    let (code, n, _) = run(&["count", &file]);
    assert_eq!((code, n.trim()), (0, "10"));
    let (code, a, _) = run(&["get", &file, "9"]);
    let (_, all, _) = run(&["cat", &file]);
    assert_eq!((code, a.trim()), (0, all.lines().nth(9).unwrap()));
    // an id past the end is a usage error (exit 2), with its kind, after
    // the note that the stale sidecar was passed over
    let (code, _, err) = run(&["get", &file, "10"]);
    assert_eq!(code, 2);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("note: ") && lines[0].contains("sidecar index was not used"),
        "{err}"
    );
    assert!(lines[1].starts_with("error[usage_error]: "), "{err}");
    assert!(lines[1].contains("no record 10"), "{err}");
}

#[test]
fn order_shards_cover_the_file_once() {
    let file = format!(
        "{}/testdata/ref/examples.tfrecord",
        env!("CARGO_MANIFEST_DIR")
    );
    for mode in ["sequential", "shuffle", "page-aware", "quasi-random"] {
        let mut seen: Vec<u64> = Vec::new();
        for rank in 0..3 {
            let r = rank.to_string();
            let (code, out, err) = run(&[
                "order", &file, "--mode", mode, "--seed", "9", "--epoch", "2", "--world", "3",
                "--rank", &r, "--tail", "keep",
            ]);
            assert_eq!(code, 0, "{err}");
            let ids: Vec<u64> = out.lines().map(|l| l.parse().unwrap()).collect();
            assert!(
                (13..=14).contains(&ids.len()),
                "{mode}: rank {rank} has {}",
                ids.len()
            );
            seen.extend(ids);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..40).collect::<Vec<u64>>(), "{mode}");
    }
    // the same inputs give the same order; another epoch another one
    let a = run(&["order", &file, "--mode", "shuffle", "--seed", "1"]).1;
    let b = run(&["order", &file, "--mode", "shuffle", "--seed", "1"]).1;
    let c = run(&[
        "order", &file, "--mode", "shuffle", "--seed", "1", "--epoch", "1",
    ])
    .1;
    assert_eq!(a, b);
    assert_ne!(a, c);
    // a rank out of range is a usage error
    assert_eq!(run(&["order", &file, "--rank", "3", "--world", "3"]).0, 2);
}

/// `get` takes more ids than a command line holds: from a file
/// (`--ids-file`) or stdin (`-`), as `order` prints them, after those given
/// as arguments; a word that is not an id is a usage error naming it.
#[test]
fn get_reads_ids_from_a_file_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let file = "testdata/ref/small.tfrecord";
    let (_, all, _) = run(&["cat", file, "--features", "label"]);
    let all: Vec<&str> = all.lines().collect();
    // 200 000 ids: far past what one command line holds.
    let ids: Vec<u64> = (0..200_000u64).map(|i| (i * 7) % 10).collect();
    let text: String = ids.iter().map(|i| format!("{i}\n")).collect();
    let path = dir.path().join("ids.txt");
    std::fs::write(&path, &text).unwrap();
    let path = path.to_str().unwrap();
    let (code, out, err) = run(&["get", file, "9", "--ids-file", path, "--features", "label"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 200_001);
    assert_eq!(lines[0], all[9]);
    for (line, &id) in lines[1..].iter().zip(&ids).step_by(997) {
        assert_eq!(*line, all[id as usize]);
    }
    // Stdin, through the binary, from `order`'s output.
    let order = dir.path().join("order.txt");
    let (_, shuffled, _) = run(&["order", file, "--mode", "shuffle", "--seed", "4"]);
    std::fs::write(&order, &shuffled).unwrap();
    let out =
        crate::support::cli::run_bin(&["get", file, "-", "--features", "label"], Some(&order));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expected: Vec<&str> = shuffled
        .lines()
        .map(|i| all[i.parse::<usize>().unwrap()])
        .collect();
    assert_eq!(out.stdout.lines().collect::<Vec<_>>(), expected);
    // A word that is not an id.
    std::fs::write(dir.path().join("bad.txt"), "3 1 x\n").unwrap();
    let bad = dir.path().join("bad.txt");
    let (code, out, err) = run(&["get", file, "--ids-file", bad.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err.trim_end(),
        format!(
            "error[usage_error]: {}: `x` is not a record id (a whole number from 0)",
            bad.display()
        )
    );
}
