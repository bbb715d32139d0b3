use bytes::Bytes;
use proptest::prelude::*;

use super::access::{Compressed, Run};
use super::*;
use crate::encode::{RecordWriter, WriterOptions};
use crate::frame::{file_of, Framing, ReadOptions};
use crate::test_util::{gzip, records, zlib};

/// Several GZIP members, cut at byte positions that are not record
/// boundaries.
fn multi_member(data: &[u8], cuts: &[usize]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut from = 0;
    for &c in cuts.iter().chain([data.len()].iter()) {
        let c = c.clamp(from, data.len());
        out.extend(gzip(&data[from..c], 6));
        from = c;
    }
    out
}

/// Every record by `get` (fresh cache, shared cache in order and in a
/// scrambled order) equals the record read from the plain file.
fn check_all(gz: &Bytes, compression: Compression, recs: &[Vec<u8>], spacing: u64) -> GzIndex {
    let index = GzIndex::build(gz, compression, Framing::TfRecord, spacing, true).unwrap();
    assert_eq!(index.len(), recs.len() as u64);
    let opts = ReadOptions::default();
    let mut cache = GzCache::new();
    for (i, r) in recs.iter().enumerate() {
        let got = index.get(gz, i as u64, &opts, &mut cache).unwrap().unwrap();
        assert_eq!(got.data, &r[..], "record {i}, spacing {spacing}");
        assert_eq!(got.id, i as u64);
    }
    // In file order, one cache: each span inflated once.
    assert!(
        cache.restarts() <= index.checkpoints().len() as u64,
        "{} restarts for {} checkpoints",
        cache.restarts(),
        index.checkpoints().len()
    );
    let n = recs.len() as u64;
    let mut cache = GzCache::new();
    for k in 0..n.min(300) {
        let id = (k * 7919 + 13) % n;
        let got = index.get(gz, id, &opts, &mut cache).unwrap().unwrap();
        assert_eq!(got.data, &recs[id as usize][..], "record {id}");
        if k % 6 != 0 {
            continue;
        }
        let mut one = GzCache::new();
        let fresh = index.get(gz, id, &opts, &mut one).unwrap().unwrap();
        assert_eq!(fresh.data, &recs[id as usize][..]);
    }
    assert!(index.get(gz, n, &opts, &mut cache).unwrap().is_none());
    index
}

#[test]
fn every_record_of_gzip_and_zlib_files_at_every_level_and_spacing() {
    let recs = records(4000, 600, 1);
    let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
    for level in [0, 1, 6, 9] {
        for spacing in [1, 4096, 64 * 1024, 1 << 40] {
            let gz = Bytes::from(gzip(&plain, level));
            let index = check_all(&gz, Compression::Gzip, &recs, spacing);
            assert!(!index.is_block_compressed());
            assert_eq!(index.decompressed_size(), plain.len() as u64);
            if spacing == 1 << 40 {
                assert_eq!(index.checkpoints().len(), 1, "only the stream start");
            }
            if spacing == 1 && level > 0 {
                assert!(index.checkpoints().len() > 3, "one per block");
            }
            let z = Bytes::from(zlib(&plain, level));
            check_all(&z, Compression::Zlib, &recs, spacing);
        }
    }
}

#[test]
fn multi_member_files_restart_at_each_member() {
    let recs = records(800, 900, 2);
    let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
    let third = plain.len() / 3;
    let gz = Bytes::from(multi_member(&plain, &[third + 5, 2 * third + 1]));
    for spacing in [1, 10_000, 1 << 40] {
        let index = check_all(&gz, Compression::Gzip, &recs, spacing);
        // Cut inside records: not block-compressed.
        assert!(!index.is_block_compressed());
        let member_points = index
            .checkpoints()
            .iter()
            .filter(|p| p.window_len == 0)
            .count();
        assert_eq!(member_points, 3, "one window-less checkpoint per member");
    }
}

#[test]
fn block_compressed_files_need_no_windows() {
    let recs = records(3000, 400, 3);
    let mut w = RecordWriter::new(
        Vec::new(),
        WriterOptions::new(Framing::TfRecord).with_gzip_blocks(64 * 1024),
    );
    for r in &recs {
        w.write_record(r).unwrap();
    }
    let gz = Bytes::from(w.finish().unwrap());
    // One stream to a plain GZIP reader.
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut plain)
        .unwrap();
    assert_eq!(
        plain,
        file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]))
    );
    let index = check_all(&gz, Compression::Gzip, &recs, DEFAULT_SPACING);
    assert!(index.is_block_compressed());
    assert!(index.checkpoints().len() > 10);
    assert!(index.checkpoints().iter().all(|p| p.window_len == 0));
    // Every member starts a record.
    for p in index.checkpoints() {
        assert!(index.records().offsets().binary_search(&p.out).is_ok());
    }
}

#[test]
fn the_index_file_round_trips_and_refuses_other_data() {
    let recs = records(1000, 700, 4);
    let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
    let gz = Bytes::from(gzip(&plain, 6));
    let index = GzIndex::build(&gz, Compression::Gzip, Framing::TfRecord, 8192, true).unwrap();
    let mut file = Vec::new();
    index.write_native(&mut file).unwrap();
    assert_eq!(file.len() as u64, index.native_len());
    let reopened = GzIndex::open_native(Bytes::from(file.clone()), &gz).unwrap();
    assert_eq!(reopened, index);
    let mut cache = GzCache::new();
    let r = reopened
        .get(&gz, 777, &ReadOptions::default(), &mut cache)
        .unwrap()
        .unwrap();
    assert_eq!(r.data, &recs[777][..]);

    // Other data: appended, truncated, rewritten with the same size.
    let mut appended = gz.to_vec();
    appended.extend(gzip(b"more", 6));
    let mut rewritten = gzip(
        &file_of(Framing::TfRecord, recs.iter().rev().map(|r| &r[..])),
        6,
    );
    rewritten.resize(gz.len(), 0);
    for other in [appended, gz[..gz.len() - 1].to_vec(), rewritten] {
        let err = GzIndex::open_native(Bytes::from(file.clone()), &other).unwrap_err();
        assert_eq!(err.kind().name(), "stale_index", "{err}");
    }
    // A damaged index file: any byte of the header, and bytes of the body.
    let body = [
        GZ_HEADER_LEN,
        GZ_HEADER_LEN + 9,
        file.len() / 2,
        file.len() - 1,
    ];
    for at in (0..GZ_HEADER_LEN).chain(body) {
        let mut bad = file.clone();
        bad[at] ^= 0x10;
        let err = GzIndex::open_native(Bytes::from(bad), &gz).unwrap_err();
        assert_eq!(err.kind().name(), "stale_index", "byte {at}: {err}");
    }
    for len in [0, 10, GZ_HEADER_LEN, file.len() - 8] {
        let err = GzIndex::open_native(Bytes::from(file[..len].to_vec()), &gz).unwrap_err();
        assert_eq!(err.kind().name(), "stale_index", "{len} bytes: {err}");
    }
}

#[test]
fn a_damaged_span_fails_its_records_and_the_others_still_read() {
    let recs = records(6000, 800, 5);
    let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
    let gz = gzip(&plain, 6);
    let good = Bytes::from(gz.clone());
    let index = GzIndex::build(&good, Compression::Gzip, Framing::TfRecord, 1, true).unwrap();
    let points = index.checkpoints();
    assert!(points.len() >= 4);
    // Damage the middle of the compressed bytes of the second checkpoint's span.
    let (a, b) = (points[1], points[2]);
    let mid = ((a.bit / 8 + b.bit / 8) / 2) as usize;
    let mut bad = gz.clone();
    for k in 0..16 {
        bad[mid + k] ^= 0xa5;
    }
    let bad = Bytes::from(bad);
    let offsets = index.records().offsets();
    let opts = ReadOptions::default();
    let (mut failed, mut read) = (0, 0);
    for id in 0..recs.len() as u64 {
        let (start, end) = (offsets[id as usize], offsets[id as usize + 1]);
        // A fresh cache: each read starts from its checkpoint.
        let mut one = GzCache::new();
        let got = index.get(&bad, id, &opts, &mut one);
        if end <= a.out || start >= b.out {
            // Outside the damaged span (the record after it may start
            // before `b` and end after it: it needs the damaged bytes).
            let got = got.unwrap_or_else(|e| panic!("record {id}: {e}")).unwrap();
            assert_eq!(got.data, &recs[id as usize][..]);
            read += 1;
        } else if let Err(e) = got {
            let kind = e.kind().name();
            assert!(
                [
                    "compression_error",
                    "data_crc_mismatch",
                    "length_crc_mismatch",
                    "stale_index"
                ]
                .contains(&kind),
                "record {id}: {e}"
            );
            assert_eq!(e.record(), Some(id));
            failed += 1;
        } else {
            // Before the damage within the span: still right.
            assert_eq!(got.unwrap().unwrap().data, &recs[id as usize][..]);
        }
    }
    assert!(failed > 0, "the damage was seen");
    assert!(read > 1000, "{read} records outside the damaged span");
}

#[test]
fn a_file_that_is_not_a_compressed_stream_is_a_compression_error() {
    let plain = file_of(Framing::TfRecord, [&b"a"[..], b"b"]);
    for (data, compression) in [
        (plain.clone(), Compression::Gzip),
        (plain.clone(), Compression::Zlib),
        (gzip(&plain, 6)[..20].to_vec(), Compression::Gzip),
    ] {
        let err = GzIndex::build(&Bytes::from(data), compression, Framing::TfRecord, 1, true)
            .unwrap_err();
        assert_eq!(err.kind().name(), "compression_error", "{err}");
    }
    // Garbage after the last member.
    let mut gz = gzip(&plain, 6);
    gz.extend_from_slice(b"junk");
    let err = GzIndex::build(
        &Bytes::from(gz),
        Compression::Gzip,
        Framing::TfRecord,
        1,
        true,
    )
    .unwrap_err();
    assert_eq!(err.kind().name(), "compression_error", "{err}");
}

proptest! {
    #![proptest_config(crate::test_util::proptest_config())]

    /// Random record sizes, compression levels, spacings and ids.
    #[test]
    fn random_files_spacings_and_ids(
        seed in any::<u64>(),
        n in 1usize..400,
        max in 0usize..3000,
        level in 0u32..10,
        spacing in prop_oneof![Just(1u64), 100u64..100_000, Just(u64::MAX)],
        zlib_stream in any::<bool>(),
        ids in proptest::collection::vec(any::<u64>(), 1..40),
    ) {
        let recs = records(n, max, seed);
        let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
        let (data, compression) = if zlib_stream {
            (zlib(&plain, level), Compression::Zlib)
        } else {
            (gzip(&plain, level), Compression::Gzip)
        };
        let data = Bytes::from(data);
        let index = GzIndex::build(&data, compression, Framing::TfRecord, spacing, true).unwrap();
        prop_assert_eq!(index.len(), n as u64);
        let mut cache = GzCache::new();
        let opts = ReadOptions::default();
        for id in ids {
            let id = id % n as u64;
            let got = index.get(&data, id, &opts, &mut cache).unwrap().unwrap();
            prop_assert_eq!(got.data, &recs[id as usize][..]);
        }
        let mut scratch = Vec::new();
        let mut seen = vec![false; n];
        let all: Vec<u64> = (0..n as u64).rev().collect();
        index.get_many(&data, &all, &opts, &mut cache, &mut scratch, |pos, r| {
            let id = all[pos] as usize;
            assert_eq!(r.unwrap().data, &recs[id][..]);
            seen[id] = true;
        }).unwrap();
        prop_assert!(seen.iter().all(|&s| s));
    }
}

#[test]
fn span_pages_inflate_each_checkpoint_span_once_per_epoch() {
    use crate::order::{Mode, OrderSpec};
    let recs = records(5000, 700, 21);
    let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
    let gz = Bytes::from(gzip(&plain, 6));
    let index =
        GzIndex::build(&gz, Compression::Gzip, Framing::TfRecord, 64 * 1024, false).unwrap();
    let spans = index.checkpoints().len() as u64;
    assert!(spans > 5, "{spans} checkpoints");
    let opts = ReadOptions::default();
    for epoch in 0..3 {
        let spec = OrderSpec {
            mode: Mode::PageAware { page_size: 0 },
            seed: 9,
            ..OrderSpec::default()
        };
        let ids: Vec<u64> = index.order(spec).unwrap().epoch(epoch).iter().collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..recs.len() as u64).collect::<Vec<_>>());
        assert_ne!(ids, sorted, "shuffled");
        let mut cache = GzCache::new();
        for &id in &ids {
            let r = index.get(&gz, id, &opts, &mut cache).unwrap().unwrap();
            assert_eq!(r.data, &recs[id as usize][..]);
        }
        // Each span inflated once: the stream once, plus at most the end of
        // a record past each span's end (read again when its span starts).
        assert!(cache.restarts() <= spans, "epoch {epoch}");
        let size = index.decompressed_size();
        assert!(cache.inflated() >= size);
        assert!(
            cache.inflated() <= size + spans * 1024,
            "epoch {epoch}: {} bytes inflated for {size}",
            cache.inflated()
        );
    }
}

#[test]
fn memory_stays_bounded_however_far_a_record_lies_past_its_checkpoint() {
    // About 14 MB of records, one checkpoint (a spacing larger than the file).
    let recs: Vec<Vec<u8>> = (0..7000)
        .map(|i| format!("{i:>8} ").repeat(200).into_bytes())
        .collect();
    let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
    assert!(plain.len() > 3 * access_step());
    let gz = Bytes::from(gzip(&plain, 1));
    let index = GzIndex::build(&gz, Compression::Gzip, Framing::TfRecord, u64::MAX, false).unwrap();
    assert_eq!(index.checkpoints().len(), 1);
    let opts = ReadOptions::default();
    let mut cache = GzCache::new();
    let last = recs.len() as u64 - 1;
    let r = index.get(&gz, last, &opts, &mut cache).unwrap().unwrap();
    assert_eq!(r.data, &recs[last as usize][..]);
    assert!(
        cache.held() <= access_step() + 2 * 32 * 1024 + 2000,
        "{} bytes held",
        cache.held()
    );
    // Continuing from record 0 to the last: bounded too.
    let mut cache = GzCache::new();
    index.get(&gz, 0, &opts, &mut cache).unwrap();
    index.get(&gz, last, &opts, &mut cache).unwrap();
    assert!(
        cache.held() <= access_step() + 2 * 32 * 1024 + 2000,
        "{} bytes held",
        cache.held()
    );
}

fn access_step() -> usize {
    4 << 20
}

/// A compressed file that is not in memory (as a remote object or a file
/// read with positioned reads is not): every range read is recorded.
#[derive(Debug)]
struct Ranged {
    data: Bytes,
    reads: std::sync::Mutex<Vec<std::ops::Range<u64>>>,
}

impl Ranged {
    fn new(data: Bytes) -> Arc<Ranged> {
        Arc::new(Ranged {
            data,
            reads: Default::default(),
        })
    }

    fn take(&self) -> Vec<std::ops::Range<u64>> {
        std::mem::take(&mut *self.reads.lock().unwrap())
    }
}

impl ByteSource for Ranged {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }

    fn read_range(&self, range: std::ops::Range<u64>) -> Result<Bytes, Error> {
        self.reads.lock().unwrap().push(range.clone());
        Ok(self.data.slice(range.start as usize..range.end as usize))
    }

    fn kind(&self) -> &'static str {
        "ranged"
    }
}

#[test]
fn a_compressed_file_not_in_memory_is_read_one_checkpoint_span_at_a_time() {
    let recs = records(12_000, 600, 8);
    let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
    let third = plain.len() / 3;
    let mut blocks = RecordWriter::new(
        Vec::new(),
        WriterOptions::new(Framing::TfRecord).with_gzip_blocks(64 * 1024),
    );
    for r in &recs {
        blocks.write_record(r).unwrap();
    }
    let files = [
        ("gzip", Compression::Gzip, gzip(&plain, 6)),
        ("zlib", Compression::Zlib, zlib(&plain, 6)),
        ("stored", Compression::Gzip, gzip(&plain, 0)),
        (
            "members",
            Compression::Gzip,
            multi_member(&plain, &[third + 5, 2 * third + 1]),
        ),
        ("blocks", Compression::Gzip, blocks.finish().unwrap()),
    ];
    for (what, compression, data) in files {
        let data = Bytes::from(data);
        let index = Arc::new(
            GzIndex::build(&data, compression, Framing::TfRecord, 64 << 10, true).unwrap(),
        );
        let ranged = Ranged::new(data.clone());
        let over = GzSource::over(
            Arc::clone(&ranged) as Arc<dyn ByteSource>,
            Arc::clone(&index),
        )
        .unwrap();
        // Opening read only the fingerprint's samples.
        let opened: u64 = ranged.take().iter().map(|r| r.end - r.start).sum();
        assert!(
            opened <= 2 * 4096 + 66 * 16,
            "{what}: {opened} bytes to open"
        );
        // The most compressed bytes one read may need: the two spans a
        // record may cross, and the room for the next block's header.
        let bits: Vec<u64> = index.checkpoints().iter().map(|p| p.bit / 8).collect();
        let widest = bits
            .iter()
            .chain([data.len() as u64].iter())
            .collect::<Vec<_>>()
            .windows(3)
            .map(|w| w[2] - w[0])
            .max()
            .unwrap_or(data.len() as u64);
        assert!(
            widest + (4 << 10) < data.len() as u64 / 3,
            "{what}: spans too wide to tell: {widest} of {}, {bits:?}",
            data.len()
        );
        let offsets = index.records().offsets();
        let n = recs.len() as u64;
        // Scattered ids, and a run of neighbours (continuing kept spans).
        let ids = (0..300).map(|k| (k * 7919 + 13) % n).chain(5000..5300);
        for id in ids {
            let frame = offsets[id as usize]..offsets[id as usize + 1];
            let got = over.read_range(frame.clone()).unwrap();
            let header = Framing::TfRecord.header_len();
            assert_eq!(
                &got[header..got.len() - 4],
                &recs[id as usize][..],
                "{what}: record {id}"
            );
            for r in ranged.take() {
                assert!(
                    r.end - r.start <= widest + (4 << 10) + 1,
                    "{what}: record {id} read {r:?}, wider than two spans ({widest})"
                );
            }
        }
    }
}

#[test]
fn a_window_that_ends_too_early_is_told_from_a_truncated_file() {
    let recs = records(3000, 600, 9);
    let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
    let data = Bytes::from(gzip(&plain, 6));
    let index = GzIndex::build(&data, Compression::Gzip, Framing::TfRecord, 1 << 40, true).unwrap();
    let half = data.len() / 2;
    let end = plain.len() as u64;
    // A window of the first half of a whole file: short, a wider one helps.
    let mut run = Run::default();
    index.restart(0, None, &mut run).unwrap();
    let window = Compressed {
        bytes: &data[..half],
        base: 0,
        size: data.len() as u64,
    };
    let e = index.run_to(window, &mut run, 0, end, None).unwrap_err();
    assert_eq!(e.kind().name(), "compression_error");
    assert!(run.window_short, "{e}");
    // The same bytes as the whole of a truncated file: damage, not a window.
    let mut run = Run::default();
    index.restart(0, None, &mut run).unwrap();
    let e = index
        .run_to(Compressed::whole(&data[..half]), &mut run, 0, end, None)
        .unwrap_err();
    assert_eq!(e.kind().name(), "compression_error");
    assert!(!run.window_short, "{e}");
    // A window that starts past the first byte, to the end: the whole file's output.
    let mut run = Run::default();
    index.restart(0, None, &mut run).unwrap();
    let from = index.checkpoints()[0].bit / 8;
    let window = Compressed {
        bytes: &data[from as usize..],
        base: from,
        size: data.len() as u64,
    };
    index.run_to(window, &mut run, 0, end, None).unwrap();
    assert_eq!(run.base, 0);
    assert_eq!(&run.out[..], &plain[..]);
}
