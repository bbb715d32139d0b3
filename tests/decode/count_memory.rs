//! `count` streams what it cannot map: a compressed file is counted in
//! constant memory (it used to be decompressed whole into memory first).

use crate::counting_alloc::peak_bytes;
use crate::support::cli::run;
use recordwire::encode::{RecordWriter, WriterOptions};
use recordwire::frame::Framing;
use recordwire::io::Compression;

/// Writes `records` records of `size` bytes each (compressible, but not
/// trivially), GZIP-compressed; returns the path.
fn gzip_file(dir: &std::path::Path, records: u32, size: usize) -> std::path::PathBuf {
    let path = dir.join("big.tfrecord.gz");
    let options = WriterOptions::new(Framing::TfRecord).with_compression(Compression::Gzip);
    let mut w = RecordWriter::create(&path, options).expect("create");
    let mut data = vec![0u8; size];
    for i in 0..records {
        for (j, b) in data.iter_mut().enumerate() {
            *b = ((i as usize * 31 + j / 64) % 251) as u8;
        }
        w.write_record(&data).expect("write");
    }
    w.finish().expect("finish");
    path
}

#[test]
fn count_streams_a_compressed_file_in_constant_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 48 MiB of records once decompressed.
    let (records, size) = (6144, 8192);
    let path = gzip_file(dir.path(), records, size);
    let path = path.to_str().expect("UTF-8 path");
    let ((code, out, err), peak) = peak_bytes(|| run(&["count", path]));
    assert_eq!((code, out.trim(), err.as_str()), (0, "6144", ""));
    let decompressed = u64::from(records) * (size as u64 + 16);
    assert!(
        peak < 8 << 20,
        "count held {peak} bytes at once for a {decompressed}-byte stream"
    );
    // The same count as the file read whole, and as `verify`.
    let (code, _, err) = run(&["verify", "--payload", "raw", path]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(": 6144 valid records, 0 problems"), "{err}");
}

#[test]
fn count_reports_damage_where_cat_and_verify_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = gzip_file(dir.path(), 300, 4096);
    // Cut the compressed file in the middle: the decompressor fails there.
    let bytes = std::fs::read(&path).expect("read");
    std::fs::write(&path, &bytes[..bytes.len() / 2]).expect("write");
    let path = path.to_str().expect("UTF-8 path");
    let first_line = |args: &[&str]| {
        let (code, out, err) = run(args);
        let line = out
            .lines()
            .chain(err.lines())
            .find(|l| l.starts_with("error"))
            .unwrap_or_default()
            .to_owned();
        (code, line)
    };
    let (count_code, count_err) = first_line(&["count", path]);
    let (verify_code, verify_err) = first_line(&["verify", "--payload", "raw", path]);
    let (cat_code, cat_err) = first_line(&["cat", "--payload", "raw", path]);
    assert_eq!(count_code, 1, "{count_err}");
    assert!(count_err.contains(": record "), "no record in {count_err}");
    assert_eq!(count_err, verify_err);
    assert_eq!((cat_code, cat_err), (verify_code, verify_err));
}

#[test]
fn no_mmap_reads_a_plain_file_in_constant_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.tfrecord");
    let options = WriterOptions::new(Framing::TfRecord);
    let mut w = RecordWriter::create(&path, options).expect("create");
    let data = vec![7u8; 8192];
    for _ in 0..6144 {
        w.write_record(&data).expect("write");
    }
    w.finish().expect("finish");
    let path = path.to_str().expect("UTF-8 path");
    for command in ["count", "verify"] {
        let ((code, out, err), peak) =
            peak_bytes(|| run(&[command, "--no-mmap", "--payload", "raw", path]));
        assert_eq!(code, 0, "{command}: {out}{err}");
        assert!(
            peak < 8 << 20,
            "{command} --no-mmap held {peak} bytes at once for a 50 MB file"
        );
    }
}
