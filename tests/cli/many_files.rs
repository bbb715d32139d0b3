//! `inspect --per-file`, `dump` and `index` take several files, as `cat`,
//! `verify` and `count` do: the same output as one run per file, in order.

#![allow(clippy::unwrap_used)]

use crate::support::cli::run;

const A: &str = "testdata/ref/small.tfrecord";
const B: &str = "testdata/bad/base5.tfrecord";

fn out(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn inspect_and_dump_take_several_files() {
    for command in [
        &["inspect", "--per-file"][..],
        &["inspect", "--per-file", "--json"],
        &["dump", "--record", "1"],
    ] {
        let one = |file| out(&[command, &[file]].concat());
        let both = out(&[command, &[A, B]].concat());
        assert_eq!(both, one(A) + &one(B), "{command:?}");
    }
}

#[test]
fn index_takes_several_files_each_with_its_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let copies: Vec<String> = [A, B]
        .iter()
        .map(|f| {
            let to = dir
                .path()
                .join(std::path::Path::new(f).file_name().unwrap());
            std::fs::copy(f, &to).unwrap();
            to.to_str().unwrap().to_owned()
        })
        .collect();
    let (code, _, err) = run(&["index", &copies[0], &copies[1]]);
    assert_eq!(code, 0, "{err}");
    for copy in &copies {
        assert!(
            recordwire::index::sidecar_path(std::path::Path::new(copy)).is_file(),
            "{copy}"
        );
    }
    let (code, _, err) = run(&["index", &copies[0], &copies[1], "--out", "-"]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim_end(),
        "error[usage_error]: --out goes with a single file"
    );
}

#[test]
fn order_over_several_files_is_the_datasets_order() {
    use recordwire::dataset::Dataset;
    use recordwire::io::OpenOptions;
    use recordwire::order::{Mode, OrderSpec, Tail};
    let dataset = Dataset::open([A, B], &OpenOptions::default()).unwrap();
    for (mode, args) in [
        (Mode::Shuffle, &["--mode", "shuffle"][..]),
        (
            Mode::PageAware { page_size: 512 },
            &["--mode", "page-aware", "--page-size", "512"],
        ),
    ] {
        for rank in 0..2u32 {
            let r = rank.to_string();
            let printed = out(&[
                &["order", A, B, "--seed", "3", "--world", "2", "--rank", &r],
                args,
            ]
            .concat());
            let spec = OrderSpec {
                mode,
                seed: 3,
                rank,
                world: 2,
                tail: Tail::Pad,
                ..OrderSpec::default()
            };
            let expected: String = dataset
                .order(spec)
                .unwrap()
                .epoch(0)
                .iter()
                .map(|id| format!("{id}\n"))
                .collect();
            assert_eq!(printed, expected, "{mode:?} rank {rank}");
            assert_eq!(printed.lines().count(), 8, "15 ids, two equal parts");
        }
    }
    let (code, _, err) = run(&["order", A, B, "--index", A]);
    assert_eq!(
        (code, err.trim_end()),
        (2, "error[usage_error]: --index goes with a single file")
    );
}

#[test]
fn get_over_several_files_takes_global_ids() {
    let all: Vec<String> = out(&["cat", A, B]).lines().map(str::to_owned).collect();
    let got = out(&["get", A, B, "9", "10", "14", "0"]);
    let expected: String = [9, 10, 14, 0]
        .iter()
        .map(|&i| format!("{}\n", all[i]))
        .collect();
    assert_eq!(got, expected);
    // One file as before; an id past the dataset's end; no ids at all.
    assert_eq!(out(&["get", B, "0"]), format!("{}\n", all[10]));
    let (code, _, err) = run(&["get", A, B, "15"]);
    assert_eq!(
        (code, err.trim_end()),
        (
            2,
            "error[usage_error]: 2 files: no record 15 (the dataset has 15 records)"
        )
    );
    let (code, _, err) = run(&["get", A, B]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("error[usage_error]: no record ids"),
        "{err}"
    );
}
