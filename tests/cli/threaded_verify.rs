//! `verify` and `count` on several threads report exactly what one thread
//! reports: the same lines in the same order, the same summary, notes and
//! exit status, on files big enough to be split (parts of 256 KiB and up),
//! with damage of every kind placed at and around the parts' boundaries.

use std::path::Path;

use recordwire::frame::pad::pad_frame;
use recordwire::frame::{records, tfrecord_frame, Framing, ReadOptions};

use crate::support::cli::{real_files, run_utf8};

/// The records of the small reference file, to repeat.
fn payloads() -> Vec<Vec<u8>> {
    let file =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/ref/small.tfrecord"))
            .expect("read small.tfrecord");
    records(&file, Framing::TfRecord, ReadOptions::default())
        .map(|r| r.expect("a valid record").data.to_vec())
        .collect()
}

const PART: usize = 256 << 10;

/// About 3 MB of tf.Examples, damaged in every way a frame can be, at and
/// around multiples of the smallest part size; `cut` ends it inside a frame.
fn damaged_file(cut: bool) -> Vec<u8> {
    let payloads = payloads();
    let mut file = Vec::new();
    let mut damage = Vec::new();
    let mut i = 0usize;
    while file.len() < 3 << 20 {
        let data = &payloads[i % payloads.len()];
        let at = file.len();
        // Near each boundary: a record holding a whole TFRecord file (a
        // header the split's search finds inside a record), a pad frame,
        // and frames to damage.
        let near = (at % PART) < 2000 || PART - (at % PART) < 2000;
        match (near, i % 7) {
            (true, 0) => {
                let inner: Vec<u8> = [&data[..], b"x"]
                    .iter()
                    .flat_map(|d| tfrecord_frame(d))
                    .collect();
                file.extend(tfrecord_frame(&inner));
            }
            (true, 1) => file.extend(pad_frame(64, Framing::TfRecord).expect("a pad")),
            (true, 2) => {
                file.extend(tfrecord_frame(data));
                damage.push(at + 3); // the length: a length CRC mismatch
            }
            (true, 3) => {
                file.extend(tfrecord_frame(data));
                damage.push(at + 12 + data.len() / 2); // the data: a data CRC mismatch
            }
            (true, 4) => file.extend(tfrecord_frame(&[0x0a, 0x05, 0xff])), // not an Example
            _ => file.extend(tfrecord_frame(data)),
        }
        i += 1;
    }
    for at in damage {
        file[at] ^= 0x20;
    }
    if cut {
        file.truncate(file.len() - 5);
    }
    file
}

fn same_for_every_thread_count(args: &[&str], path: &Path) -> recordwire_out::Out {
    let p = path.to_str().expect("a UTF-8 path");
    let run = |threads: &str| {
        let mut a: Vec<&str> = args.to_vec();
        a.extend(["--threads", threads, p]);
        run_utf8(&a)
    };
    let one = run("1");
    for threads in ["2", "3", "4", "8"] {
        let many = run(threads);
        assert_eq!(
            (many.code, &many.stdout, &many.stderr),
            (one.code, &one.stdout, &one.stderr),
            "{args:?} with {threads} threads against one, on {p}"
        );
    }
    one
}

mod recordwire_out {
    pub use crate::support::cli::Out;
}

#[test]
fn damaged_files_verify_the_same_on_every_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    for cut in [false, true] {
        let path = dir.path().join(format!("damaged-{cut}.tfrecord"));
        let file = damaged_file(cut);
        assert!(file.len() > 10 * PART);
        std::fs::write(&path, &file).expect("write");
        let out = same_for_every_thread_count(&["verify"], &path);
        assert_eq!(out.code, 1);
        // Every kind of damage was reported, many times over.
        for kind in ["length_crc_mismatch", "data_crc_mismatch", "decode_error"] {
            let n = out.stdout.lines().filter(|l| l.contains(kind)).count();
            assert!(n >= 8, "{kind}: {n} lines in\n{}", out.stdout);
        }
        assert_eq!(
            out.stdout.lines().any(|l| l.contains("truncated_data")),
            cut,
            "{}",
            out.stdout
        );
        assert!(out.stderr.contains("pad frames"), "{}", out.stderr);
        // `count` stops at the first error, the same one on every thread count.
        let counted = same_for_every_thread_count(&["count"], &path);
        assert_eq!(counted.code, 1);
        let first = out
            .stdout
            .lines()
            .find(|l| l.contains("crc_mismatch"))
            .expect("a CRC error");
        // (Ids differ: `verify` gives pad frames ids, to count them.)
        let at = first
            .split("at byte ")
            .nth(1)
            .and_then(|r| r.split(':').next());
        assert!(
            counted
                .stderr
                .contains(&format!("at byte {}:", at.expect("an offset"))),
            "count: {}\nverify: {first}",
            counted.stderr
        );
    }
}

#[test]
fn clean_files_count_and_verify_the_same_on_every_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("clean.tfrecord");
    let payloads = payloads();
    let file: Vec<u8> = (0..40_000)
        .flat_map(|i| tfrecord_frame(&payloads[i % payloads.len()]))
        .collect();
    assert!(file.len() > 4 * PART);
    std::fs::write(&path, &file).expect("write");
    let out = same_for_every_thread_count(&["verify"], &path);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("40000 valid records, 0 problems"),
        "{}",
        out.stderr
    );
    let counted = same_for_every_thread_count(&["count"], &path);
    assert_eq!(counted.stdout.trim(), "40000");
}

#[test]
fn real_files_and_hostile_files_verify_the_same_on_every_thread_count() {
    let bad = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad");
    let mut paths: Vec<_> = std::fs::read_dir(&bad)
        .expect("testdata/bad")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_file() && !p.to_string_lossy().ends_with(".json"))
        .collect();
    paths.extend(real_files().unwrap_or_default().into_iter().map(Into::into));
    assert!(paths.len() > 20);
    for path in paths {
        same_for_every_thread_count(&["verify"], &path);
    }
}
