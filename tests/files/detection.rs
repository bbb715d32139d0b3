//! Detection (docs/FORMAT.md §1.6) with the file's name as a hint, and inputs
//! that fit neither framing, through every reader: the library (`Source`,
//! `RecordFile`, `Shard`/`Dataset`, whose index build reads the frames its own
//! way) and the commands `cat`, `verify`, `count`, `inspect`, `dump`, `index`,
//! `get`, `order` and `bench`; and the streaming index builder.
//!
//! - A `.tfrecord` whose first length CRC is damaged is TFRecord: the error is
//!   `length_crc_mismatch` at record 0, byte 0, and skip mode resynchronises.
//! - A 5-byte `.tfrecord` is `truncated_header` needing 12 bytes.
//! - A PNG or a text file says `not a TFRecord or OFRecord file: …` and what
//!   its first bytes look like, with the kind the framing read gives (its
//!   values unchanged), named `.tfrecord` or not.
//! - Valid OFRecord files are still OFRecord, named `part-N`, `.ofrecord` or
//!   anything; a valid TFRecord header beats an OFRecord name.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};

use recordwire::dataset::{Dataset, Shard};
use recordwire::frame::{ErrorPolicy, Framing, ReadOptions};
use recordwire::index::Index;
use recordwire::io::{Compression, OpenOptions, RecordFile, Source};
use recordwire::Error;

use crate::support::cli;

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `small.tfrecord` (10 tf.Examples, the first frame 143 bytes).
fn small() -> Vec<u8> {
    std::fs::read(testdata("ref/small.tfrecord")).unwrap()
}

/// `ofrecord.part-0` (20 OFRecords).
fn ofrecords() -> Vec<u8> {
    std::fs::read(testdata("ref/ofrecord.part-0")).unwrap()
}

/// The start of a PNG file: its signature and the start of its IHDR chunk.
const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0\0\0\x01\0\x08\x06\0\0\0\x5c\x72\xa8\x66";

/// A text file.
const TEXT: &[u8] = b"hello world, this is not a record file\nsecond line\n";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn options(policy: ErrorPolicy) -> OpenOptions {
    OpenOptions::default().with_read(ReadOptions::default().with_policy(policy))
}

/// The first error of each library reader, with `mmap` on and off where it
/// applies; every one must be the same.
fn library_errors(path: &Path) -> Vec<(String, Error)> {
    let mut out = Vec::new();
    for mmap in [true, false] {
        let opts = options(ErrorPolicy::Fail).with_mmap(mmap);
        let mut source = Source::open(path, &opts).unwrap();
        let err = loop {
            match source.next_record() {
                Some(Ok(_)) => continue,
                Some(Err(e)) => break e,
                None => panic!("{}: Source gives no error", path.display()),
            }
        };
        out.push((format!("Source (mmap {mmap})"), err));

        let file = RecordFile::open(path, &opts).unwrap();
        let err = file.records().find_map(Result::err).expect("an error");
        out.push((format!("RecordFile::records (mmap {mmap})"), err));

        let err = Shard::open(path, &opts).unwrap_err();
        out.push((format!("Shard::open (mmap {mmap})"), err));
    }
    let err = Dataset::open([path], &OpenOptions::default()).unwrap_err();
    out.push(("Dataset::open".into(), err));
    out
}

/// The error line of every command that reads record files, run over `path`.
fn cli_errors(path: &Path) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.rwindex");
    let p = s(path);
    let mut lines = Vec::new();
    for args in [
        vec!["cat", p],
        vec!["cat", "--on-error", "skip", p],
        vec!["verify", p],
        vec!["count", p],
        vec!["inspect", p],
        vec!["inspect", "--json", p],
        vec!["dump", p],
        vec!["index", "--out", s(&out), p],
        vec!["get", p, "0"],
        vec!["order", p],
        vec!["bench", "--passes", "1", "--samples", "1", p],
        vec!["cat", "--no-mmap", p],
    ] {
        let run = cli::run_utf8(&args);
        assert_eq!(run.code, 1, "{args:?}: exit status; stderr {}", run.stderr);
        // `verify` prints its problems on stdout; the others on stderr.
        let text = if args[0] == "verify" {
            &run.stdout
        } else {
            &run.stderr
        };
        let line = text
            .lines()
            .find(|l| l.starts_with("error["))
            .unwrap_or_else(|| panic!("{args:?}: no error line in {text:?}"));
        lines.push((args.join(" "), line.to_owned()));
    }
    lines
}

/// Checks that every reader gives the error `want` (`error[…]: …` as the
/// command line prints it) for `path`, with record 0 and byte 0.
fn every_reader_says(path: &Path, want: &str) {
    for (how, err) in library_errors(path) {
        assert_eq!(format!("error{err}"), want, "{how}");
        assert_eq!((err.record(), err.offset()), (Some(0), Some(0)), "{how}");
    }
    for (how, line) in cli_errors(path) {
        assert_eq!(line, want, "{how}");
    }
}

#[test]
fn a_tfrecord_whose_first_length_crc_is_damaged_is_read_as_tfrecord() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = small();
    bytes[8] ^= 1; // the first length CRC
    let path = write(dir.path(), "train.tfrecord", &bytes);
    let stored = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    let computed = recordwire::frame::masked_crc32c(&bytes[..8]);
    let want = format!(
        "error[length_crc_mismatch]: {}: record 0 at byte 0: stored {stored:#010x}, computed {computed:#010x}",
        path.display()
    );
    every_reader_says(&path, &want);

    let file = RecordFile::open(&path, &OpenOptions::default()).unwrap();
    assert_eq!(file.framing(), Framing::TfRecord);
    let err = file.records().next().unwrap().unwrap_err();
    assert_eq!(err.detail(), None, "an ordinary damaged TFRecord");

    // Skip mode resynchronises on the second frame (at byte 143) and reads
    // the 9 records after the damaged one, with their ids.
    let mut source = Source::open(&path, &options(ErrorPolicy::skip())).unwrap();
    let mut ids = Vec::new();
    let mut skipped = Vec::new();
    while let Some(item) = source.next_record() {
        match item {
            Ok(r) => ids.push(r.id),
            Err(e) => {
                assert_eq!(e.kind().name(), "length_crc_mismatch");
                skipped.push(source.skipped());
            }
        }
    }
    assert_eq!(ids, (1..10).collect::<Vec<u64>>());
    assert_eq!(skipped, [Some((0, 143))]);
    let run = cli::run_utf8(&["cat", "--on-error", "skip", s(&path)]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout.lines().count(), 9);
    assert!(
        run.stderr
            .contains(&format!("{}: skipped bytes 0..143", path.display())),
        "{}",
        run.stderr
    );

    // TFX's names, compressed or not, say TFRecord too.
    for name in ["data_tfrecord-00000-of-00001", "x.tfrec", "x.tfrecords"] {
        let path = write(dir.path(), name, &bytes);
        let err = RecordFile::open(&path, &OpenOptions::default())
            .unwrap()
            .records()
            .next()
            .unwrap()
            .unwrap_err();
        assert_eq!(err.kind().name(), "length_crc_mismatch", "{name}");
    }

    // Without a name that says TFRecord, the bytes say nothing certain: the
    // first 8 bytes are a plausible OFRecord length (135), so it is read as
    // OFRecord (docs/FORMAT.md §1.6).
    let path = write(dir.path(), "unnamed", &bytes);
    let file = RecordFile::open(&path, &OpenOptions::default()).unwrap();
    assert_eq!(file.framing(), Framing::OfRecord);
}

#[test]
fn a_five_byte_tfrecord_needs_a_tfrecord_header() {
    let dir = tempfile::tempdir().unwrap();
    let five = &small()[..5];
    let path = write(dir.path(), "cut.tfrecord", five);
    every_reader_says(
        &path,
        &format!(
            "error[truncated_header]: {}: record 0 at byte 0: input ends inside a frame header: \
             needed 12 bytes, 5 available",
            path.display()
        ),
    );
    // Without a name, 5 bytes are no frame header of either framing.
    let path = write(dir.path(), "cut", five);
    every_reader_says(
        &path,
        &format!(
            "error[truncated_header]: {}: record 0 at byte 0: not a TFRecord or OFRecord file: \
             it starts with the bytes 7f 00 00 00 00; only 5 bytes, fewer than a frame header \
             (12 bytes for TFRecord, 8 for OFRecord)",
            path.display()
        ),
    );
}

#[test]
fn a_png_is_not_a_record_file() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["image", "image.png"] {
        let path = write(dir.path(), name, PNG);
        every_reader_says(
            &path,
            &format!(
                "error[truncated_data]: {}: record 0 at byte 0: not a TFRecord or OFRecord file: \
                 it starts with the PNG signature (89 50 4e 47 0d 0a 1a 0a); not a TFRecord \
                 header, and as an OFRecord header it declares 727905341920923785 bytes, {} \
                 available",
                path.display(),
                PNG.len() - 8
            ),
        );
    }
    // Named as TFRecord, it is read as TFRecord: the length CRC is wrong, and
    // the message says what the bytes are.
    let path = write(dir.path(), "image.tfrecord", PNG);
    let stored = u32::from_le_bytes(PNG[8..12].try_into().unwrap());
    let computed = recordwire::frame::masked_crc32c(&PNG[..8]);
    every_reader_says(
        &path,
        &format!(
            "error[length_crc_mismatch]: {}: record 0 at byte 0: not a TFRecord or OFRecord \
             file: it starts with the PNG signature (89 50 4e 47 0d 0a 1a 0a 00 00 00 0d); as a \
             TFRecord header, its length CRC does not match (stored {stored:#010x}, computed \
             {computed:#010x})",
            path.display()
        ),
    );
}

#[test]
fn a_text_file_is_not_a_record_file() {
    let dir = tempfile::tempdir().unwrap();
    let declared = u64::from_le_bytes(TEXT[..8].try_into().unwrap());
    for name in ["notes", "notes.txt"] {
        let path = write(dir.path(), name, TEXT);
        every_reader_says(
            &path,
            &format!(
                "error[truncated_data]: {}: record 0 at byte 0: not a TFRecord or OFRecord file: \
                 it starts with text (\"hello wo\"); not a TFRecord header, and as an OFRecord \
                 header it declares {declared} bytes, {} available",
                path.display(),
                TEXT.len() - 8
            ),
        );
    }
    let path = write(dir.path(), "notes.tfrecord", TEXT);
    let err = RecordFile::open(&path, &OpenOptions::default())
        .unwrap()
        .records()
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind().name(), "length_crc_mismatch");
    let want = format!("error{err}");
    assert!(
        want.contains(
            "record 0 at byte 0: not a TFRecord or OFRecord file: it starts with text \
             (\"hello world,\"); as a TFRecord header, its length CRC does not match"
        ),
        "{want}"
    );
    every_reader_says(&path, &want);

    // A negative first length.
    let mut negative = (-5i64).to_le_bytes().to_vec();
    negative.extend_from_slice(b"abc");
    let path = write(dir.path(), "negative", &negative);
    every_reader_says(
        &path,
        &format!(
            "error[invalid_length]: {}: record 0 at byte 0: not a TFRecord or OFRecord file: it \
             starts with the bytes fb ff ff ff ff ff ff ff; not a TFRecord header, and as an \
             OFRecord header it declares a negative length (-5)",
            path.display()
        ),
    );
}

#[test]
fn streams_say_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "image", PNG);
    let file_err = RecordFile::open(&path, &OpenOptions::default())
        .unwrap()
        .records()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(file_err.detail().is_some(), "{file_err}");
    // The library's stream, in chunks of every size, and stdin.
    for chunk in [1, 3, 8, 1000] {
        let reader = Chunks {
            data: PNG.to_vec(),
            at: 0,
            step: chunk,
        };
        let mut source = Source::from_reader(reader, s(&path), &OpenOptions::default()).unwrap();
        let err = source.next_record().unwrap().unwrap_err();
        assert_eq!(err, file_err, "chunks of {chunk}");
        assert!(source.next_record().is_none());
    }
    // The streaming index builder, which has no name.
    let err =
        Index::build_from_reader(std::io::Cursor::new(PNG), &OpenOptions::default()).unwrap_err();
    assert_eq!(err.with_file(s(&path)), file_err);
    let run = cli::run_bin(&["cat", "-"], Some(&path));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr.trim_end(),
        format!("error{file_err}").replace(s(&path), "<stdin>")
    );
    // A named framing is used as named: no second guess.
    let named = OpenOptions::default().with_framing(Some(Framing::OfRecord));
    let err = RecordFile::open(&path, &named)
        .unwrap()
        .records()
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind(), file_err.kind());
    assert_eq!(err.detail(), None);
    let run = cli::run_utf8(&["cat", "--framing", "ofrecord", s(&path)]);
    assert!(
        run.stderr
            .contains("frame declares 727905341920923785 bytes"),
        "{}",
        run.stderr
    );
}

/// A reader that gives `step` bytes per read.
struct Chunks {
    data: Vec<u8>,
    at: usize,
    step: usize,
}

impl std::io::Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The framing, compression and record count that the library and `count`
/// find in `path`.
fn read_as(path: &Path) -> (Framing, Compression, usize) {
    let file = RecordFile::open(path, &OpenOptions::default()).unwrap();
    let mut n = 0;
    for r in file.records() {
        r.unwrap();
        n += 1;
    }
    let mut source = Source::open(path, &OpenOptions::default()).unwrap();
    let mut m = 0;
    while let Some(r) = source.next_record() {
        r.unwrap();
        m += 1;
    }
    assert_eq!(
        (source.framing(), source.compression(), m),
        (file.framing(), file.compression(), n)
    );
    let run = cli::run_utf8(&["count", s(path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), n.to_string());
    (file.framing(), file.compression(), n)
}

#[test]
fn valid_files_keep_their_framing_whatever_their_name() {
    let dir = tempfile::tempdir().unwrap();
    let of = ofrecords();
    for name in ["part-00000", "part-0", "x.ofrecord", "x.OFRecord", "noname"] {
        let path = write(dir.path(), name, &of);
        assert_eq!(
            read_as(&path),
            (Framing::OfRecord, Compression::None, 20),
            "{name}"
        );
    }
    // A valid TFRecord header beats an OFRecord name.
    let tf = small();
    for name in ["x.ofrecord", "part-00000", "x.tfrecord", "noname"] {
        let path = write(dir.path(), name, &tf);
        assert_eq!(
            read_as(&path),
            (Framing::TfRecord, Compression::None, 10),
            "{name}"
        );
    }
    // The OFRecord whose first length (376) starts like a ZLIB header.
    let mut zlib_like = Vec::new();
    for len in [376usize, 5, 0] {
        recordwire::frame::write_ofrecord_frame(&mut zlib_like, &vec![0xab; len]);
    }
    for name in ["part-3", "x.ofrecord", "noname"] {
        let path = write(dir.path(), name, &zlib_like);
        assert_eq!(
            read_as(&path),
            (Framing::OfRecord, Compression::None, 3),
            "{name}"
        );
    }
    // Empty files hold no records; the name says which framing.
    for (name, framing) in [
        ("empty", Framing::TfRecord),
        ("empty.tfrecord", Framing::TfRecord),
        ("empty.ofrecord", Framing::OfRecord),
        ("part-7", Framing::OfRecord),
    ] {
        let path = write(dir.path(), name, b"");
        assert_eq!(read_as(&path), (framing, Compression::None, 0), "{name}");
    }
    // Compressed: a GZIP `.tfrecord` (no `.gz`) is TFRecord; a GZIP
    // `.ofrecord.gz` holds OFRecord frames.
    let gzip = |plain: &[u8]| {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(plain).unwrap();
        enc.finish().unwrap()
    };
    let path = write(dir.path(), "c.tfrecord", &gzip(&tf));
    assert_eq!(read_as(&path), (Framing::TfRecord, Compression::Gzip, 10));
    let path = write(dir.path(), "c.ofrecord.gz", &gzip(&of));
    assert_eq!(read_as(&path), (Framing::OfRecord, Compression::Gzip, 20));
    let path = write(dir.path(), "c.gz", &gzip(&tf));
    assert_eq!(read_as(&path), (Framing::TfRecord, Compression::Gzip, 10));
}
