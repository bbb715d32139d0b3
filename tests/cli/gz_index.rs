//! `index`, `count`, `get`, `order` on GZIP and ZLIB files: the checkpoint
//! index, on TensorFlow's own compressed files (`testdata/ref/`) and on the
//! block-compressed output of `convert --gzip-blocks`, against the same
//! commands on the uncompressed file.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use crate::support::cli::run;

fn data(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .display()
        .to_string()
}

/// Copies `rel` into `dir` (so that its sidecar goes there).
fn copy(dir: &Path, rel: &str) -> String {
    let to = dir.join(Path::new(rel).file_name().unwrap());
    std::fs::copy(data(rel), &to).unwrap();
    to.display().to_string()
}

/// `get` of every id, one line each.
fn get_all(file: &str, n: usize) -> Vec<String> {
    let ids: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let mut args = vec!["get", file];
    args.extend(ids.iter().map(String::as_str));
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    out.lines().map(str::to_owned).collect()
}

#[test]
fn tensorflow_gzip_and_zlib_files_read_by_id_through_their_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let plain = data("testdata/ref/examples.tfrecord");
    let expected = get_all(&plain, 40);
    assert_eq!(expected.len(), 40);
    for rel in [
        "testdata/ref/examples.tfrecord.gz",
        "testdata/ref/examples.tfrecord.zlib",
    ] {
        let file = copy(dir.path(), rel);
        // Without a sidecar: built in memory.
        assert_eq!(get_all(&file, 40), expected, "{rel}, built");
        for spacing in ["1", "4096", "100000000"] {
            let (code, _, err) = run(&["index", "--spacing", spacing, &file]);
            assert_eq!(code, 0, "{err}");
            assert!(err.contains("40 records indexed into"), "{err}");
            assert!(err.contains("checkpoint index"), "{err}");
            let sidecar = format!("{file}.rwindex");
            assert!(std::fs::read(&sidecar).unwrap().starts_with(b"RWGZIDX\0"));
            assert_eq!(get_all(&file, 40), expected, "{rel}, spacing {spacing}");
            let (code, out, err) = run(&["count", &file]);
            assert_eq!((code, out.as_str()), (0, "40\n"), "{err}");
            // Ids in a scrambled order, and one past the end.
            let (code, out, _) = run(&["get", &file, "39", "0", "17", "17", "3"]);
            assert_eq!(code, 0);
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(
                lines,
                [
                    &expected[39],
                    &expected[0],
                    &expected[17],
                    &expected[17],
                    &expected[3]
                ]
            );
            let (code, _, err) = run(&["get", &file, "40"]);
            assert_eq!(code, 2, "{err}");
            assert!(
                err.contains("no record 40 (the file has 40 records)"),
                "{err}"
            );
        }
        // Orders are those of the plain file (same record offsets).
        for mode in [
            vec!["--mode", "shuffle", "--seed", "7"],
            vec!["--mode", "page-aware", "--page-size", "4096", "--seed", "7"],
        ] {
            let mut a = vec!["order", file.as_str()];
            a.extend(&mode);
            let mut b = vec!["order", plain.as_str()];
            b.extend(&mode);
            let (ca, oa, ea) = run(&a);
            let (cb, ob, _) = run(&b);
            assert_eq!((ca, cb), (0, 0), "{ea}");
            assert_eq!(oa, ob, "{mode:?}");
        }
    }
}

#[test]
fn a_stale_checkpoint_sidecar_is_passed_over_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy(dir.path(), "testdata/ref/examples.tfrecord.gz");
    let (code, _, err) = run(&["index", &file]);
    assert_eq!(code, 0, "{err}");
    // The file changes: one more GZIP member (an empty one) at the end.
    let mut bytes = std::fs::read(&file).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, b"").unwrap();
    bytes.extend(gz.finish().unwrap());
    std::fs::write(&file, &bytes).unwrap();
    let (code, out, err) = run(&["count", &file]);
    assert_eq!((code, out.as_str()), (0, "40\n"), "{err}");
    assert!(
        err.contains("not used") && err.contains("stale_index"),
        "{err}"
    );
    let (code, out, err) = run(&["get", &file, "5"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1);
    assert!(err.contains("the sidecar index was not used"), "{err}");
}

#[test]
fn convert_writes_block_compressed_gzip_that_indexes_without_windows() {
    let dir = tempfile::tempdir().unwrap();
    let plain = data("testdata/ref/examples.tfrecord");
    let out = dir.path().join("blocks.tfrecord.gz").display().to_string();
    let (code, _, err) = run(&["convert", "--gzip-blocks", "8192", &plain, &out]);
    assert_eq!(code, 0, "{err}");
    // Any GZIP reader reads it whole: the same frames as the plain file.
    let mut decoded = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(&out).unwrap()),
        &mut decoded,
    )
    .unwrap();
    assert_eq!(decoded, std::fs::read(&plain).unwrap());
    let (code, _, err) = run(&["index", &out]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("0 with a window; block-compressed"), "{err}");
    assert_eq!(get_all(&out, 40), get_all(&plain, 40));
    let (code, text, err) = run(&["inspect", &out]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("block-compressed"), "{text}");
    // A plain GZIP file is not.
    let (code, text, _) = run(&["inspect", &data("testdata/ref/examples.tfrecord.gz")]);
    assert_eq!(code, 0);
    assert!(!text.contains("block-compressed"), "{text}");
}

#[test]
fn order_of_several_compressed_files_is_that_of_the_plain_files() {
    let dir = tempfile::tempdir().unwrap();
    let plain = data("testdata/ref/examples.tfrecord");
    let gz = copy(dir.path(), "testdata/ref/examples.tfrecord.gz");
    let zz = copy(dir.path(), "testdata/ref/examples.tfrecord.zlib");
    let small = data("testdata/ref/small.tfrecord");
    let small_gz = dir.path().join("small.tfrecord.gz").display().to_string();
    let (code, _, err) = run(&["convert", "--gzip-blocks", "200", &small, &small_gz]);
    assert_eq!(code, 0, "{err}");
    for mode in [
        vec!["--mode", "shuffle", "--seed", "4"],
        vec!["--mode", "page-aware", "--page-size", "4096", "--seed", "4"],
        vec![
            "--mode",
            "quasi-random",
            "--page-size",
            "8192",
            "--seed",
            "4",
            "--rank",
            "1",
            "--world",
            "2",
        ],
    ] {
        let mut a = vec!["order", gz.as_str(), zz.as_str(), small_gz.as_str()];
        a.extend(&mode);
        let mut b = vec!["order", plain.as_str(), plain.as_str(), small.as_str()];
        b.extend(&mode);
        let (ca, oa, ea) = run(&a);
        let (cb, ob, eb) = run(&b);
        assert_eq!((ca, cb), (0, 0), "{ea}{eb}");
        assert_eq!(oa, ob, "{mode:?}");
        assert_eq!(
            oa.lines().count(),
            if mode.contains(&"--world") { 45 } else { 90 }
        );
    }
    // Page size 0: each checkpoint span a page, every id once.
    let (code, out, err) = run(&[
        "order",
        &gz,
        &small_gz,
        "--mode",
        "page-aware",
        "--page-size",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut ids: Vec<u64> = out.lines().map(|l| l.parse().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..50).collect::<Vec<u64>>());
}
