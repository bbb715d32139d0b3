//! `recordwire cat data/*` in a folder where `recordwire index` wrote
//! sidecars: the shell glob gives the index files too. The commands that read
//! several record files pass over an index file with a note on stderr; an
//! index file with no record file beside it is still a usage error.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use crate::support::cli::run;

/// A folder of two record files, the native sidecar of each and a DALI
/// index of one: the record files, and every file as `dir/*` lists them.
fn folder(dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut data = Vec::new();
    for from in ["testdata/ref/small.tfrecord", "testdata/bad/base5.tfrecord"] {
        let to = dir.join(Path::new(from).file_name().unwrap());
        std::fs::copy(from, &to).unwrap();
        data.push(to.to_str().unwrap().to_owned());
    }
    data.sort();
    let (code, _, err) = run(&["index", &data[0], &data[1]]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&["index", "--format", "dali", &data[1]]);
    assert_eq!(code, 0, "{err}");
    let mut all: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
        .collect();
    all.sort();
    assert_eq!(all.len(), 5, "{all:?}");
    (data, all)
}

/// The note for each index file among `all`.
fn notes(data: &[String], all: &[String]) -> String {
    all.iter()
        .filter(|f| !data.contains(f))
        .map(|f| {
            let format = if f.ends_with(".idx") {
                "dali"
            } else {
                "native"
            };
            format!("note: passing over {f}: an index file ({format}), not a record file\n")
        })
        .collect()
}

#[test]
fn a_glob_with_sidecars_reads_the_record_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let (data, all) = folder(dir.path());
    let with = |args: &[&str], files: &[String]| {
        let mut argv: Vec<&str> = args[..1].to_vec();
        argv.extend(files.iter().map(String::as_str));
        argv.extend(&args[1..]);
        run(&argv)
    };
    for args in [
        &["cat"][..],
        &["cat", "--with-id", "--limit", "7"],
        &["count"],
        &["verify"],
        &["dump", "--record", "1"],
        &["inspect"],
        &["inspect", "--json"],
        &["order", "--mode", "shuffle", "--seed", "5"],
        &["get", "0", "4", "9"],
    ] {
        let (code, out, err) = with(args, &data);
        assert_eq!(code, 0, "{args:?}: {err}");
        // Something to compare (`verify` says it on stderr).
        assert!(!out.is_empty() || !err.is_empty(), "{args:?}");
        let (code_all, out_all, err_all) = with(args, &all);
        assert_eq!(code_all, 0, "{args:?} over {all:?}: {err_all}");
        assert_eq!(out_all, out, "{args:?}");
        // The notes first, then what the command says of the record files.
        assert_eq!(err_all, notes(&data, &all) + &err, "{args:?}");
    }
}

#[test]
fn index_over_a_glob_indexes_the_record_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let (data, all) = folder(dir.path());
    let mut argv = vec!["index"];
    argv.extend(all.iter().map(String::as_str));
    let (code, _, err) = run(&argv);
    assert_eq!(code, 0, "{err}");
    assert!(err.starts_with(&notes(&data, &all)), "{err}");
    let mut now: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
        .collect();
    now.sort();
    assert_eq!(now, all, "no index of an index was written");
}

#[test]
fn get_passes_over_an_index_given_first() {
    let dir = tempfile::tempdir().unwrap();
    let (data, all) = folder(dir.path());
    let sidecar = format!("{}.rwindex", data[0]);
    assert!(all.contains(&sidecar));
    let (code, out, err) = run(&["get", &sidecar, &data[0], &data[1], "3", "6"]);
    let (code_data, out_data, err_data) = run(&["get", &data[0], &data[1], "3", "6"]);
    assert_eq!((code, code_data), (0, 0), "{err}{err_data}");
    assert_eq!(out, out_data);
    assert_eq!(
        err,
        format!(
            "note: passing over {sidecar}: an index file (native), not a record file\n{err_data}"
        )
    );
}

#[test]
fn an_index_file_alone_is_still_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (data, all) = folder(dir.path());
    // base5's sidecar, small's DALI index, small's sidecar.
    let indexes: Vec<&String> = all.iter().filter(|f| !data.contains(f)).collect();
    assert!(indexes[1].ends_with(".idx"), "{indexes:?}");
    let refused = |f: &str, format: &str| {
        format!("error[usage_error]: {f}: this is an index file ({format}), not a record file; give an index with --index\n")
    };
    for command in ["cat", "count", "verify", "inspect", "dump", "order"] {
        let (code, out, err) = run(&[command, indexes[0]]);
        assert_eq!((code, out.as_str()), (2, ""), "{command}");
        assert_eq!(err, refused(indexes[0], "native"), "{command}");
        // Only index files: the first is named, nothing is read.
        let (code, out, err) = run(&[command, indexes[1], indexes[0]]);
        assert_eq!((code, out.as_str()), (2, ""), "{command}");
        assert_eq!(err, refused(indexes[1], "dali"), "{command}");
    }
    let (code, _, err) = run(&["get", indexes[1], "0"]);
    assert_eq!((code, err), (2, refused(indexes[1], "dali")));
    let (code, _, err) = run(&["bench", indexes[0]]);
    assert_eq!((code, err), (2, refused(indexes[0], "native")));
}
