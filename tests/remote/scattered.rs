//! Reads of many ranges at once (`ByteSource::read_ranges` and
//! `read_scattered`) in any order, with any gap and count, against a plain
//! slice of each range, over every source: the memory map, positioned reads
//! and a remote object on an HTTP server that honours `Range`; and the
//! sidecars whose fingerprint check asks for its ranges out of order (issue
//! 37: a panic remotely, a refusal with `--no-mmap`).

use std::ops::Range;

use bytes::Bytes;
use proptest::prelude::*;
use recordwire::dataset::{Dataset, IndexOrigin, Shard};
use recordwire::frame::{write_tfrecord_frame, Framing};
use recordwire::index::Index;
use recordwire::io::remote::{RemoteSource, StorageOptions};
use recordwire::io::{ByteSource, FileSource, MemorySource, OpenOptions};

use crate::support::common::config;
use crate::support::servers::Origin;

/// An object of `len` bytes, each a function of its offset.
fn content(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u64).wrapping_mul(2_654_435_761).rotate_right(13) as u8)
        .collect()
}

/// Ranges within `len` bytes: empty, short, long, overlapping, repeated,
/// in any order.
fn ranges(len: u64) -> impl Strategy<Value = Vec<Range<u64>>> {
    let one = (0..=len, 0u64..20_000).prop_map(move |(start, n)| start..(start + n).min(len));
    prop::collection::vec(one, 0..48)
}

/// What each source must give: the slice of each range, in the order asked.
fn expected(bytes: &[u8], ranges: &[Range<u64>]) -> Vec<Bytes> {
    ranges
        .iter()
        .map(|r| Bytes::copy_from_slice(&bytes[r.start as usize..r.end as usize]))
        .collect()
}

fn both_reads(source: &dyn ByteSource, ranges: &[Range<u64>]) -> (Vec<Bytes>, Vec<Bytes>) {
    let mut vectored = Vec::new();
    source
        .read_ranges(ranges, &mut vectored)
        .unwrap_or_else(|e| panic!("{}: read_ranges({ranges:?}): {e}", source.kind()));
    let mut scattered = Vec::new();
    source
        .read_scattered(ranges, &mut scattered)
        .unwrap_or_else(|e| panic!("{}: read_scattered({ranges:?}): {e}", source.kind()));
    (vectored, scattered)
}

const LEN: usize = 300_000;

#[test]
fn reads_of_many_ranges_in_any_order_equal_a_slice_of_each() {
    let bytes = content(LEN);
    let origin = Origin::start();
    origin.put("scattered/object", bytes.clone());
    let url = format!("{}/scattered/object", origin.base());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("object");
    std::fs::write(&path, &bytes).unwrap();
    let memory = MemorySource::new(Bytes::from(bytes.clone()));
    let file = FileSource::new(std::fs::File::open(&path).unwrap(), LEN as u64);
    // One remote source per gap and request size (clients are kept per
    // options, so these are made once).
    let gaps = [0u64, 1, 100, 4096, 64 << 10, 1 << 20];
    let sizes = [4096u64, 100_000, 8 << 20];
    let mut remotes = Vec::new();
    for gap in gaps {
        for size in sizes {
            let options = StorageOptions::new([
                ("allow_http", "true".to_string()),
                ("retry_timeout", "600s".to_string()),
                ("coalesce_gap", gap.to_string()),
                ("request_size", size.to_string()),
                ("cache_dir", "none".to_string()),
            ]);
            let remote = RemoteSource::open(&url, &options).expect("open the remote object");
            remotes.push(((gap, size), remote));
        }
    }
    let strategy = (ranges(LEN as u64), 0..remotes.len());
    proptest!(config(64), |((asked, which) in strategy)| {
        let want = expected(&bytes, &asked);
        for source in [&memory as &dyn ByteSource, &file] {
            let (vectored, scattered) = both_reads(source, &asked);
            prop_assert_eq!(&vectored, &want, "{} read_ranges", source.kind());
            prop_assert_eq!(&scattered, &want, "{} read_scattered", source.kind());
        }
        let ((gap, size), remote) = &remotes[which];
        let (vectored, scattered) = both_reads(remote, &asked);
        prop_assert_eq!(&vectored, &want, "remote read_ranges, gap {} request_size {}", gap, size);
        prop_assert_eq!(&scattered, &want, "remote read_scattered, gap {} request_size {}", gap, size);
    });
}

/// 100,000 small records (the fingerprint's sampled headers then reach into
/// the last 4 KiB, so the sorted ranges it asks for are not sorted by
/// start) and their native index.
fn small_records() -> (Vec<u8>, Vec<u8>) {
    let mut file = Vec::new();
    for k in 0..100_000u32 {
        let data = format!("record {k:06} {}", "x".repeat((k % 29) as usize));
        write_tfrecord_frame(&mut file, data.as_bytes());
    }
    let index = Index::build(&file, Framing::TfRecord, true).unwrap();
    let mut sidecar = Vec::new();
    index.write_native(&mut sidecar).unwrap();
    (file, sidecar)
}

#[test]
fn a_sidecar_of_many_small_records_opens_remotely_with_any_gap_and_locally_without_the_map() {
    let (file, sidecar) = small_records();
    let origin = Origin::start();
    origin.put("small/small.tfrecord", file.clone());
    origin.put("small/small.tfrecord.rwindex", sidecar.clone());
    let url = format!("{}/small/small.tfrecord", origin.base());
    for gap in ["0", "4096", "65535", "1048576"] {
        let options = OpenOptions::default().with_storage(StorageOptions::new([
            ("allow_http", "true"),
            ("retry_timeout", "600s"),
            ("coalesce_gap", gap),
            ("cache_dir", "none"),
        ]));
        let dataset =
            Dataset::open([&url], &options).unwrap_or_else(|e| panic!("coalesce_gap={gap}: {e}"));
        assert_eq!(dataset.len(), 100_000, "coalesce_gap={gap}");
        assert!(
            matches!(dataset.shards()[0].origin(), IndexOrigin::Sidecar),
            "coalesce_gap={gap}: {:?}",
            dataset.shards()[0].origin()
        );
        let last = dataset.get(99_999).unwrap().unwrap();
        assert!(last.data.starts_with(b"record 099999"));
    }
    // Locally, read with positioned reads rather than the map.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.tfrecord");
    std::fs::write(&path, &file).unwrap();
    std::fs::write(dir.path().join("small.tfrecord.rwindex"), &sidecar).unwrap();
    let unmapped = OpenOptions::default().with_mmap(false);
    let shard = Shard::open(&path, &unmapped).expect("open --no-mmap with its sidecar");
    assert!(
        matches!(shard.origin(), IndexOrigin::Sidecar),
        "{:?}",
        shard.origin()
    );
    assert_eq!(shard.len(), 100_000);
    assert!(!shard.is_mapped());
}

/// Issue 37, point 13: when a coalesced read fails (here: the object was
/// overwritten since it was opened, so its ETag differs), the error names
/// the first record whose bytes that read was to bring, at that record's
/// start, not the batch's first record nor the request's first byte.
#[test]
fn a_failed_coalesced_read_names_the_first_record_it_was_to_bring() {
    // 300 records of 1,000 bytes: the first request at open (64 KiB) holds
    // the first 64 whole frames; the rest of a batch is fetched.
    let mut file = Vec::new();
    let mut starts = Vec::new();
    for k in 0..300u32 {
        starts.push(file.len() as u64);
        let data = vec![(k % 251) as u8; 1000];
        write_tfrecord_frame(&mut file, &data);
    }
    let origin = Origin::start();
    origin.put("changed/data.tfrecord", file.clone());
    let url = format!("{}/changed/data.tfrecord", origin.base());
    let options = OpenOptions::default().with_storage(StorageOptions::new([
        ("allow_http", "true"),
        ("retry_timeout", "600s"),
        ("cache_dir", "none"),
    ]));
    let dataset = Dataset::open([&url], &options).expect("open");
    assert_eq!(dataset.len(), 300);
    // Overwritten: same size, new ETag.
    let mut changed = file.clone();
    changed[70_000] ^= 1;
    origin.put("changed/data.tfrecord", changed);
    let head_records = starts.iter().take_while(|&&s| s + 1016 <= 64 << 10).count() as u64;
    for first in [0u64, 10, head_records, head_records + 5, 200] {
        let ids: Vec<u64> = (first..(first + 100).min(300)).collect();
        let mut scratch = recordwire::dataset::Scratch::new();
        let mut delivered = Vec::new();
        let err = dataset
            .get_many(&ids, &mut scratch, |p, r| delivered.push((p, r.is_some())))
            .expect_err("the object changed");
        let expect = first.max(head_records);
        assert_eq!(err.record(), Some(expect), "batch from {first}: {err}");
        assert_eq!(
            err.offset(),
            Some(starts[expect as usize]),
            "batch from {first}: {err}"
        );
        assert!(err.to_string().contains("changed"), "{err}");
    }
}
