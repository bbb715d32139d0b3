//! Tests of the file layer: mapped and read files, compressed files, sources.

use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use flate2::write::{GzEncoder, ZlibEncoder};

use super::*;
use crate::error::{Error, ErrorKind};
use crate::frame::{file_of, records, ErrorPolicy, Framing, ReadOptions, Record};

/// A record as compared between readers: id, offsets and data.
type Rec = (u64, u64, u64, u64, Vec<u8>);

/// An item of a walk: a record, or an error with the skipped range.
type Item = Result<Rec, (Error, Option<(u64, u64)>)>;

fn rec(r: &Record<'_>) -> Rec {
    (r.id, r.offset, r.data_offset, r.end, r.data.to_vec())
}

/// Every item of a source (records, or errors with the skipped range).
fn walk(source: &mut Source) -> Vec<Item> {
    let mut out = Vec::new();
    while let Some(item) = source.next_record() {
        match item {
            Ok(r) => out.push(Ok(rec(&r))),
            Err(e) => out.push(Err((e, source.skipped()))),
        }
    }
    assert!(source.next_record().is_none());
    out
}

fn plain_records(file: &[u8], framing: Framing) -> Vec<Rec> {
    records(file, framing, ReadOptions::default())
        .map(|r| rec(&r.unwrap()))
        .collect()
}

/// A few hundred records of varied sizes, some compressible, some not.
fn sample(framing: Framing) -> Vec<u8> {
    let mut state = 0x1234_5678u32;
    let datas: Vec<Vec<u8>> = (0..300u32)
        .map(|i| {
            let len = (i * 37 % 1500) as usize;
            (0..len)
                .map(|j| {
                    state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    if i % 2 == 0 {
                        (j % 7) as u8
                    } else {
                        (state >> 24) as u8
                    }
                })
                .collect()
        })
        .collect();
    file_of(framing, datas.iter().map(|d| &d[..]))
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut enc = ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// A gzip file of several members, split at arbitrary points (not at frames).
fn gzip_members(data: &[u8]) -> Vec<u8> {
    let cuts = [0, 1, data.len() / 3, data.len() / 2 + 5, data.len()];
    let mut out = Vec::new();
    for w in cuts.windows(2) {
        out.extend_from_slice(&gzip(&data[w[0]..w[1]]));
    }
    out
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }

    fn file(&self, name: &str, content: &[u8]) -> PathBuf {
        let path = self.0.path().join(name);
        std::fs::write(&path, content).unwrap();
        path
    }
}

fn open(path: &Path, options: &OpenOptions) -> Source {
    Source::open(path, options).unwrap()
}

#[test]
fn names() {
    for c in [
        Compression::Auto,
        Compression::None,
        Compression::Gzip,
        Compression::Zlib,
    ] {
        assert_eq!(c.name().parse::<Compression>(), Ok(c));
        assert_eq!(c.to_string(), c.name());
    }
    assert!("lz4".parse::<Compression>().is_err());
    let o = OpenOptions::default();
    assert_eq!(
        (o.framing, o.compression, o.mmap),
        (None, Compression::Auto, true)
    );
}

#[test]
fn mmap_and_read_give_identical_records() {
    let dir = Dir::new();
    for framing in [Framing::TfRecord, Framing::OfRecord] {
        let content = sample(framing);
        let path = dir.file("data", &content);
        let expected = plain_records(&content, framing);
        assert_eq!(expected.len(), 300);

        let mapped = RecordFile::open(&path, &OpenOptions::default()).unwrap();
        let read = RecordFile::open(&path, &OpenOptions::default().with_mmap(false)).unwrap();
        assert!(mapped.is_mapped());
        assert!(!read.is_mapped());
        for file in [&mapped, &read] {
            assert_eq!(file.framing(), framing);
            assert_eq!(file.compression(), Compression::None);
            assert_eq!(file.len(), content.len());
            assert_eq!(file.bytes(), &content[..]);
            let got: Vec<Rec> = file.records().map(|r| rec(&r.unwrap())).collect();
            assert_eq!(got, expected);
        }
        for mmap in [true, false] {
            let mut source = open(&path, &OpenOptions::default().with_mmap(mmap));
            // Not mapped, a file is read in chunks, as a stream.
            assert_eq!(source.as_file().is_some(), mmap);
            let got: Vec<Rec> = walk(&mut source).into_iter().map(Result::unwrap).collect();
            assert_eq!(got, expected);
        }
    }
}

#[test]
fn record_bytes_are_zero_copy_and_outlive_the_file() {
    let dir = Dir::new();
    let content = sample(Framing::TfRecord);
    let path = dir.file("data.tfrecord", &content);
    let file = RecordFile::open(&path, &OpenOptions::default()).unwrap();
    let mut owned = Vec::new();
    for record in file.records() {
        let record = record.unwrap();
        let handle = file.record_bytes(&record);
        if !record.data.is_empty() {
            assert_eq!(handle.as_ptr(), record.data.as_ptr(), "no copy");
        }
        owned.push(handle);
    }
    drop(file);
    let expected: Vec<Vec<u8>> = plain_records(&content, Framing::TfRecord)
        .into_iter()
        .map(|r| r.4)
        .collect();
    assert_eq!(owned, expected);

    // A record from elsewhere is copied, not a panic.
    let other = file_of(Framing::TfRecord, [&b"x"[..]]);
    let file = RecordFile::from_bytes(Bytes::from(content), "mem", &OpenOptions::default());
    let record = records(&other, Framing::TfRecord, ReadOptions::default())
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(file.record_bytes(&record), &b"x"[..]);
}

#[test]
fn records_from_an_offset() {
    let content = file_of(Framing::TfRecord, [&b"a"[..], b"bb", b"ccc"]);
    let file = RecordFile::from_bytes(Bytes::from(content), "mem", &OpenOptions::default());
    let got: Vec<Rec> = file
        .records_from(17, 1, ReadOptions::default())
        .map(|r| rec(&r.unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            (1, 17, 29, 35, b"bb".to_vec()),
            (2, 35, 47, 54, b"ccc".to_vec())
        ]
    );
    assert_eq!(
        file.records_from(1000, 0, ReadOptions::default()).count(),
        0
    );
    assert_eq!(
        file.records_from(u64::MAX, 0, ReadOptions::default())
            .count(),
        0
    );
}

#[test]
fn empty_files_have_zero_records() {
    let dir = Dir::new();
    let path = dir.file("empty", b"");
    for mmap in [true, false] {
        let options = OpenOptions::default().with_mmap(mmap);
        let file = RecordFile::open(&path, &options).unwrap();
        assert!(file.is_empty());
        assert_eq!(file.framing(), Framing::TfRecord);
        assert_eq!(file.records().count(), 0);
        assert!(walk(&mut open(&path, &options)).is_empty());
        for framing in [Framing::TfRecord, Framing::OfRecord] {
            let options = options.clone().with_framing(Some(framing));
            assert!(walk(&mut open(&path, &options)).is_empty());
        }
    }
    let empty_gz = dir.file("empty.gz", &gzip(b""));
    assert!(walk(&mut open(&empty_gz, &OpenOptions::default())).is_empty());
}

#[test]
fn compressed_files_give_the_same_records() {
    let dir = Dir::new();
    let content = sample(Framing::TfRecord);
    let expected: Vec<Result<Rec, _>> = plain_records(&content, Framing::TfRecord)
        .into_iter()
        .map(Ok)
        .collect();
    let cases = [
        ("single.gz", gzip(&content), Compression::Gzip),
        ("multi.gz", gzip_members(&content), Compression::Gzip),
        ("data.zz", zlib(&content), Compression::Zlib),
    ];
    for (name, compressed, compression) in cases {
        let path = dir.file(name, &compressed);
        for options in [
            OpenOptions::default(),
            OpenOptions::default().with_mmap(false),
            OpenOptions::default()
                .with_compression(compression)
                .with_framing(Some(Framing::TfRecord)),
        ] {
            let mut source = open(&path, &options);
            assert!(source.as_file().is_none(), "streamed");
            assert_eq!(source.compression(), compression);
            assert_eq!(source.framing(), Framing::TfRecord);
            assert_eq!(source.name(), path.display().to_string());
            assert_eq!(walk(&mut source), expected, "{name}");

            // Decompressed into memory.
            let file = RecordFile::open(&path, &options).unwrap();
            assert_eq!(file.compression(), compression);
            assert_eq!(file.bytes(), &content[..]);
            assert!(file.early_end().is_none());
            let mut source = Source::from_file(file);
            assert_eq!(walk(&mut source), expected, "{name} in memory");
        }
    }
}

#[test]
fn compressed_ofrecord_when_named() {
    let dir = Dir::new();
    let content = sample(Framing::OfRecord);
    let path = dir.file("data.gz", &gzip(&content));
    let options = OpenOptions::default().with_framing(Some(Framing::OfRecord));
    let got: Vec<Rec> = walk(&mut open(&path, &options))
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(got, plain_records(&content, Framing::OfRecord));
}

/// Asserts the walk is a prefix of `expected`'s records, then one
/// `compression_error` at the frame being read; returns how many records came.
fn assert_prefix_then_compression_error(items: &[Item], expected: &[Rec], name: &str) -> usize {
    let (last, good) = items.split_last().expect("at least the error");
    for (got, want) in good.iter().zip(expected) {
        assert_eq!(got.as_ref().unwrap(), want, "{name}");
    }
    let n = good.len();
    let (err, skipped) = last.as_ref().unwrap_err();
    assert_eq!(err.kind().name(), "compression_error", "{name}: {err}");
    assert_eq!(err.record(), Some(n as u64), "{name}");
    let offset = if n == 0 { 0 } else { expected[n - 1].3 };
    assert_eq!(err.offset(), Some(offset), "{name}");
    assert!(err.file().is_some());
    assert_eq!(*skipped, None);
    n
}

#[test]
fn truncated_compressed_streams() {
    let dir = Dir::new();
    let content = sample(Framing::TfRecord);
    let expected = plain_records(&content, Framing::TfRecord);
    for (name, compressed) in [
        ("t.gz", gzip(&content)),
        ("t.zz", zlib(&content)),
        ("m.gz", gzip_members(&content)),
    ] {
        for keep in [
            compressed.len() - 1,
            compressed.len() - 9,
            compressed.len() * 3 / 4,
            compressed.len() / 2,
            20,
        ] {
            let path = dir.file(name, &compressed[..keep]);
            for skip in [false, true] {
                let read = if skip {
                    ReadOptions::default().with_policy(ErrorPolicy::skip())
                } else {
                    ReadOptions::default()
                };
                let options = OpenOptions::default().with_read(read);
                let items = walk(&mut open(&path, &options));
                let n = assert_prefix_then_compression_error(&items, &expected, name);
                if keep > compressed.len() / 2 {
                    assert!(
                        n > 100,
                        "{name} cut at {keep}: only {n} records before the error"
                    );
                }
                // The same from the in-memory decompression.
                let file = RecordFile::open(&path, &options).unwrap();
                assert!(file.early_end().is_some());
                let items = walk(&mut Source::from_file(file));
                assert_eq!(
                    assert_prefix_then_compression_error(&items, &expected, name),
                    n,
                    "{name} cut at {keep}"
                );
            }
        }
    }
}

#[test]
fn garbage_after_the_stream_is_found_after_the_last_record() {
    let dir = Dir::new();
    let content = sample(Framing::TfRecord);
    let expected = plain_records(&content, Framing::TfRecord);
    for (name, mut compressed) in [
        ("g.gz", gzip(&content)),
        ("g.zz", zlib(&content)),
        ("gm.gz", gzip_members(&content)),
    ] {
        compressed.extend_from_slice(b"\x00garbage");
        let path = dir.file(name, &compressed);
        let items = walk(&mut open(&path, &OpenOptions::default()));
        assert_eq!(
            assert_prefix_then_compression_error(&items, &expected, name),
            expected.len()
        );
        let (err, _) = items.last().unwrap().as_ref().unwrap_err();
        assert_eq!(err.offset(), Some(content.len() as u64));
    }
}

#[test]
fn corrupt_compressed_data() {
    let dir = Dir::new();
    let content = sample(Framing::TfRecord);
    let expected = plain_records(&content, Framing::TfRecord);
    for (name, mut compressed) in [("c.gz", gzip(&content)), ("c.zz", zlib(&content))] {
        let mid = compressed.len() / 2;
        for b in &mut compressed[mid..mid + 16] {
            *b ^= 0x5a;
        }
        let path = dir.file(name, &compressed);
        let items = walk(&mut open(&path, &OpenOptions::default()));
        let (last, good) = items.split_last().unwrap();
        // Every record delivered is genuine (a corrupt one fails its CRC).
        for (got, want) in good.iter().zip(&expected) {
            assert_eq!(got.as_ref().unwrap(), want);
        }
        let (err, _) = last.as_ref().unwrap_err();
        assert!(
            matches!(
                err.kind(),
                ErrorKind::Compression { .. }
                    | ErrorKind::DataCrcMismatch { .. }
                    | ErrorKind::LengthCrcMismatch { .. }
                    | ErrorKind::TruncatedData { .. }
                    | ErrorKind::TruncatedHeader { .. }
            ),
            "{err}"
        );
        assert_eq!(err.record(), Some(good.len() as u64));
        assert!(good.len() < expected.len());
    }
}

#[test]
fn explicit_compression_none_reads_a_gzip_file_as_ofrecord_bytes() {
    let dir = Dir::new();
    let path = dir.file("x.gz", &gzip(&sample(Framing::TfRecord)));
    let source = open(
        &path,
        &OpenOptions::default().with_compression(Compression::None),
    );
    assert_eq!(source.compression(), Compression::None);
    assert_eq!(source.framing(), Framing::OfRecord);
}

#[test]
fn plain_damage_through_a_source() {
    let dir = Dir::new();
    let mut content = file_of(Framing::TfRecord, [&b"zero"[..], b"one!", b"two"]);
    content[20 + 12] ^= 1;
    let path = dir.file("bad.tfrecord", &content);
    let options = OpenOptions::default()
        .with_read(ReadOptions::default().with_policy(ErrorPolicy::skip()))
        .with_framing(Some(Framing::TfRecord));
    for mmap in [true, false] {
        let items = walk(&mut open(&path, &options.clone().with_mmap(mmap)));
        assert_eq!(items.len(), 3);
        let (err, skipped) = items[1].as_ref().unwrap_err();
        assert_eq!(err.kind().name(), "data_crc_mismatch");
        assert_eq!(err.file(), Some(&*path.display().to_string()));
        assert_eq!(
            (err.record(), err.offset(), *skipped),
            (Some(1), Some(20), Some((20, 40)))
        );
        assert_eq!(items[2].as_ref().unwrap().0, 2);
    }
    // The same bytes as a stream (through a pipe-like reader).
    let mut source = Source::from_reader(std::io::Cursor::new(content), "pipe", &options).unwrap();
    assert!(source.as_file().is_none());
    let items = walk(&mut source);
    let (err, skipped) = items[1].as_ref().unwrap_err();
    assert_eq!((err.file(), *skipped), (Some("pipe"), Some((20, 40))));
    assert_eq!(source.errors(), 1);
}

#[test]
fn missing_file_is_an_io_error_with_its_name() {
    let err = Source::open("/nonexistent/x.tfrecord", &OpenOptions::default()).unwrap_err();
    assert_eq!(err.kind().name(), "io_error");
    assert_eq!(err.file(), Some("/nonexistent/x.tfrecord"));
    let err = RecordFile::open("/nonexistent/x.tfrecord", &OpenOptions::default()).unwrap_err();
    assert_eq!(err.kind().name(), "io_error");
}

#[cfg(unix)]
#[test]
fn a_fifo_is_streamed() {
    let dir = Dir::new();
    let path = dir.0.path().join("fifo");
    let status = std::process::Command::new("mkfifo").arg(&path).status();
    if !matches!(status, Ok(s) if s.success()) {
        return; // no mkfifo here
    }
    let content = sample(Framing::TfRecord);
    let compressed = gzip(&content);
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || std::fs::write(path, compressed).unwrap())
    };
    let mut source = open(&path, &OpenOptions::default());
    assert_eq!(source.compression(), Compression::Gzip);
    let got: Vec<Rec> = walk(&mut source).into_iter().map(Result::unwrap).collect();
    writer.join().unwrap();
    assert_eq!(got, plain_records(&content, Framing::TfRecord));
}

#[test]
fn for_each_record_stops_when_asked() {
    let content = file_of(Framing::TfRecord, [&b"a"[..], b"b", b"c"]);
    let mut source = Source::from_file(RecordFile::from_bytes(
        Bytes::from(content),
        "mem",
        &OpenOptions::default(),
    ));
    let mut seen = 0;
    let flow = source.for_each_record(|item| {
        seen += 1;
        if item.unwrap().id == 1 {
            std::ops::ControlFlow::Break("stopped")
        } else {
            std::ops::ControlFlow::Continue(())
        }
    });
    assert_eq!(flow, std::ops::ControlFlow::Break("stopped"));
    assert_eq!((seen, source.next_id(), source.position()), (2, 2, 34));
    assert_eq!(
        source.for_each_record(|_| std::ops::ControlFlow::<()>::Continue(())),
        std::ops::ControlFlow::Continue(())
    );
}

#[test]
fn sources_and_files_can_move_between_threads() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<Source>();
    send::<RecordFile>();
    sync::<RecordFile>();
    send::<Bytes>();
    let file = RecordFile::from_bytes(
        Bytes::from(vec![0u8; 1 << 20]),
        "big",
        &OpenOptions::default(),
    );
    let shown = format!("{:?}", Source::from_file(file));
    assert!(shown.len() < 500, "Debug shows no bytes: {shown}");
}

#[test]
fn resolve_follows_the_detection_table() {
    use crate::frame::{tfrecord_frame, Basis};
    let good = tfrecord_frame(b"abc");
    let mut damaged = good.clone();
    damaged[8] ^= 1;
    let gz = gzip(b"x");
    let (tf, of) = (Some(Framing::TfRecord), Some(Framing::OfRecord));
    let auto = OpenOptions::default();
    let r = |prefix: &[u8], hint, options: &OpenOptions| {
        let r = resolve(prefix, hint, options);
        (r.compression, r.framing, r.basis)
    };
    use Compression::{Gzip, None as Plain};
    use Framing::{OfRecord as Of, TfRecord as Tf};
    assert_eq!(r(b"", None, &auto), (Plain, Tf, Basis::Header));
    assert_eq!(r(b"", of, &auto), (Plain, Of, Basis::Header));
    assert_eq!(r(&good, of, &auto), (Plain, Tf, Basis::Header));
    assert_eq!(r(&damaged, None, &auto), (Plain, Of, Basis::Fallback));
    assert_eq!(r(&damaged, tf, &auto), (Plain, Tf, Basis::Assumed));
    assert_eq!(r(&damaged, of, &auto), (Plain, Of, Basis::Assumed));
    assert_eq!(r(&gz, None, &auto), (Gzip, Tf, Basis::Assumed));
    assert_eq!(r(&gz, of, &auto), (Gzip, Of, Basis::Assumed));
    // Named: used as named, never second-guessed.
    let named = auto.clone().with_framing(of);
    assert_eq!(r(&good, tf, &named), (Plain, Of, Basis::Named));
    let plain = auto.clone().with_compression(Compression::None);
    assert_eq!(r(&gz, None, &plain), (Plain, Of, Basis::Fallback));
    assert_eq!(r(&gz, tf, &plain), (Plain, Tf, Basis::Assumed));
    // The uncompressed framing is the one `detect_with_hint` tells.
    for prefix in [&good[..], &damaged, b"", b"\x01\0\0\0\0\0\0\0"] {
        for hint in [None, tf, of] {
            let want = match crate::frame::detect_with_hint(prefix, hint) {
                crate::frame::Detected::OfRecord => Of,
                _ => Tf,
            };
            assert_eq!(r(prefix, hint, &auto).1, want, "{prefix:02x?} {hint:?}");
        }
    }
}
