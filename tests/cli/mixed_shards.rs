//! `get` and `order` over several files of different kinds at once (plain
//! and compressed, TFRecord and OFRecord, tf.Example, SequenceExample and
//! OFRecord payloads): each record as `cat` gives it, each file read as its
//! own framing, compression and payload.

#![allow(clippy::unwrap_used)]

use crate::support::cli::{real_files, run};

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// `get FILES… 0 1 …` of every record equals `cat` of each file in turn.
fn get_equals_cat(files: &[&str]) -> usize {
    let want: String = files.iter().map(|f| ok(&["cat", f])).collect();
    let n = want.lines().count();
    let ids: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let mut args = vec!["get"];
    args.extend(files);
    args.extend(ids.iter().map(String::as_str));
    let got = ok(&args);
    for (k, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "record {k} of {files:?}");
    }
    assert_eq!(got.lines().count(), n, "{files:?}");
    // `count` adds up, and `order` is a permutation of the ids.
    let mut count = vec!["count"];
    count.extend(files);
    let total = ok(&count);
    let last = total.lines().last().unwrap();
    let total: usize = last.split('\t').next().unwrap().parse().unwrap();
    assert_eq!(total, n, "{files:?}");
    let mut order = vec!["order", "--mode", "page-aware", "--seed", "3"];
    order.extend(files);
    let mut ids: Vec<usize> = ok(&order).lines().map(|l| l.parse().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..n).collect::<Vec<_>>(), "{files:?}");
    n
}

#[test]
fn each_file_is_read_as_its_own_payload_and_compression() {
    let n = get_equals_cat(&[
        "testdata/ref/ofrecord.part-0",
        "testdata/ref/examples.tfrecord",
        "testdata/ref/sequence_examples.tfrecord",
        "testdata/ref/examples.tfrecord.gz",
        "testdata/ref/examples.tfrecord.zlib",
    ]);
    assert!(n > 100, "{n}");
    // The first file's payload is not forced on the others: an OFRecord
    // file first, then a tf.Example file, gives tf.Example names.
    let out = ok(&[
        "get",
        "testdata/ref/ofrecord.part-0",
        "testdata/ref/small.tfrecord",
        "20",
    ]);
    assert!(out.starts_with("{\"features\":"), "{out}");
}

/// The real files of ../shared/realworld/files, globbed as a shell gives
/// them: every file `cat` reads as it is detected, in one `get`.
#[test]
fn the_real_files_as_one_dataset() {
    let Some(files) = real_files() else {
        return;
    };
    let readable: Vec<&str> = files
        .iter()
        .map(String::as_str)
        .filter(|f| run(&["cat", f]).0 == 0)
        .collect();
    assert!(readable.len() >= 15, "{readable:?}");
    assert!(readable.iter().any(|f| f.ends_with(".gz")));
    assert!(
        readable.iter().any(|f| f.contains("part-0")),
        "an OFRecord file"
    );
    get_equals_cat(&readable);
}
