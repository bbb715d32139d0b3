//! Index files among record files: a dataset glob leaves out every index
//! recordwire writes (by content, whatever the name), and the command line
//! names an index file given as a record file instead of reading it as a
//! damaged one.

use crate::support::cli::run;
use recordwire::dataset::Dataset;
use recordwire::frame::{file_of, Framing};
use recordwire::index::{index_file_format, IndexFormat};
use recordwire::io::OpenOptions;

fn s(p: &std::path::Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Two shards of 3 and 5 records, with a DALI index of the first, a raw
/// offset table of the second, a native sidecar of the first, and a native
/// index under a name that says nothing.
fn dataset_with_indexes(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let shard = |n: usize| file_of(Framing::TfRecord, (0..n).map(|_| &b"\x0a\x00"[..]));
    let a = dir.join("train-0");
    let b = dir.join("train-1");
    std::fs::write(&a, shard(3)).expect("write");
    std::fs::write(&b, shard(5)).expect("write");
    for args in [
        vec!["index", s(&a), "--format", "dali"],
        vec!["index", s(&b), "--format", "lirs"],
        vec!["index", s(&a)],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    let odd = dir.join("train-9");
    let sidecar = recordwire::index::sidecar_path(&a);
    std::fs::copy(&sidecar, &odd).expect("copy");
    vec![a, b]
}

#[test]
fn a_glob_leaves_out_index_files_by_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shards = dataset_with_indexes(dir.path());
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "train-0",
            "train-0.idx",
            "train-0.rwindex",
            "train-1",
            "train-1.offsets",
            "train-9"
        ]
    );
    let pattern = dir.path().join("train-*");
    assert_eq!(Dataset::glob(&pattern).expect("glob"), shards);
    let dataset = Dataset::open_glob(&pattern, &OpenOptions::default()).expect("open");
    assert_eq!(dataset.len(), 8);
}

#[test]
fn index_files_are_told_apart_from_record_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shards = dataset_with_indexes(dir.path());
    let format_of = |name: &str| {
        let bytes = std::fs::read(dir.path().join(name)).expect("read");
        index_file_format(name, &bytes, bytes.len() as u64)
    };
    assert_eq!(format_of("train-0.idx"), Some(IndexFormat::Dali));
    assert_eq!(format_of("train-1.offsets"), Some(IndexFormat::Lirs));
    assert_eq!(format_of("train-0.rwindex"), Some(IndexFormat::Native));
    assert_eq!(format_of("train-9"), Some(IndexFormat::Native));
    assert_eq!(format_of("train-0"), None);
    assert_eq!(format_of("train-1"), None);
    // The record files themselves, even named like indexes.
    let data = std::fs::read(&shards[0]).expect("read");
    assert_eq!(
        index_file_format("x.offsets", &data, data.len() as u64),
        None
    );
    // An OFRecord file whose first record is empty starts with a zero
    // length, like a raw table: only the `.offsets` name makes it one.
    let of = file_of(Framing::OfRecord, [&b""[..], b"abc"]);
    assert_eq!(index_file_format("part-0", &of, of.len() as u64), None);
}

#[test]
fn the_command_line_names_an_index_file_given_as_a_record_file_or_passes_over_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shards = dataset_with_indexes(dir.path());
    let idx = dir.path().join("train-0.idx");
    for command in ["count", "cat", "verify"] {
        // Alone, it is refused.
        let (code, out, err) = run(&[command, s(&idx)]);
        assert_eq!(code, 2, "{command}: {out}{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "error[usage_error]: {}: this is an index file (dali), not a record file; give an index with --index",
                idx.display()
            ),
            "{command}"
        );
        // Beside a record file (as a shell glob gives it), it is passed
        // over with a note.
        let (code, out, err) = run(&[command, s(&shards[0]), s(&idx)]);
        let (code_alone, out_alone, err_alone) = run(&[command, s(&shards[0])]);
        assert_eq!((code, code_alone), (0, 0), "{command}: {err}");
        assert_eq!(out, out_alone, "{command}");
        assert_eq!(
            err,
            format!(
                "note: passing over {}: an index file (dali), not a record file\n{err_alone}",
                idx.display()
            ),
            "{command}"
        );
    }
    let offsets = dir.path().join("train-1.offsets");
    let (code, _, err) = run(&["get", s(&offsets), "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("this is an index file (lirs)"), "{err}");
    // Given where an index belongs, it is used.
    let (code, out, err) = run(&["count", s(&shards[1]), "--index", s(&offsets)]);
    assert_eq!((code, out.trim()), (0, "5"), "{err}");
}
