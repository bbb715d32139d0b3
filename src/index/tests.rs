//! Unit tests of the index: building, the native format, access.

use std::io::Write;

use bytes::Bytes;
use proptest::prelude::*;

use super::*;
use crate::frame::{file_of, records, tfrecord_frame, write_frame, Framing, ReadOptions};
use crate::index::pad::{is_pad, pad_frame};
use crate::io::{Compression, OpenOptions};

const FRAMINGS: [Framing; 2] = [Framing::TfRecord, Framing::OfRecord];

/// Bytes at an 8-aligned address (and `shift` bytes further).
struct Aligned {
    words: Vec<u64>,
    shift: usize,
    len: usize,
}

impl AsRef<[u8]> for Aligned {
    fn as_ref(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[self.shift..self.shift + self.len]
    }
}

fn aligned(bytes: &[u8], shift: usize) -> Bytes {
    let mut words = vec![0u64; (bytes.len() + shift).div_ceil(8)];
    bytemuck::cast_slice_mut::<u64, u8>(&mut words)[shift..shift + bytes.len()]
        .copy_from_slice(bytes);
    Bytes::from_owner(Aligned {
        words,
        shift,
        len: bytes.len(),
    })
}

fn native(index: &Index) -> Vec<u8> {
    let mut out = Vec::new();
    index.write_native(&mut out).unwrap();
    out
}

fn datas(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| (0..(i * 37 % 301)).map(|j| (i + j) as u8).collect())
        .collect()
}

fn file(framing: Framing, n: usize) -> Vec<u8> {
    file_of(framing, datas(n).iter().map(|d| &d[..]))
}

/// Record offsets by the slice iterator, then the end of the last one.
fn reference_offsets(data: &[u8], framing: Framing) -> Vec<u64> {
    let mut offsets = Vec::new();
    let mut end = 0;
    for r in records(data, framing, ReadOptions::default()) {
        let r = r.unwrap();
        if !is_pad(r.data) {
            offsets.push(r.offset);
            end = r.end;
        }
    }
    offsets.push(end);
    offsets
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(data).unwrap();
    z.finish().unwrap()
}

fn stream_index(bytes: Vec<u8>, framing: Option<Framing>) -> Index {
    let opts = OpenOptions::default().with_framing(framing);
    Index::build_from_reader(std::io::Cursor::new(bytes), &opts).unwrap()
}

#[test]
fn empty_file() {
    for framing in FRAMINGS {
        let index = Index::build(b"", framing, true).unwrap();
        assert_eq!(index.len(), 0);
        assert!(index.is_empty());
        assert_eq!(index.offsets(), [0]);
        assert_eq!(index.starts(), [] as [u64; 0]);
        assert_eq!(index.offset(0), None);
        assert_eq!(index.frame_range(0), None);
        assert_eq!(index.get(b"", 0, &ReadOptions::default()).unwrap(), None);
        let bytes = native(&index);
        assert_eq!(bytes.len(), NATIVE_HEADER_LEN + 8);
        assert_eq!(Index::open_native(Bytes::from(bytes), b"").unwrap(), index);
        assert_eq!(stream_index(Vec::new(), Some(framing)), index);
    }
}

#[test]
fn build_matches_the_record_iterator() {
    for framing in FRAMINGS {
        for n in [1, 2, 63, 64, 65, 129, 300] {
            let data = file(framing, n);
            let index = Index::build(&data, framing, true).unwrap();
            assert_eq!(index.offsets(), reference_offsets(&data, framing));
            assert_eq!(index.len(), n as u64);
            assert_eq!(index.data_size(), data.len() as u64);
            assert_eq!(index.crcs_verified(), framing == Framing::TfRecord);
            assert!(!index.has_pads());
            assert!(!index.is_in_place());
            for id in 0..n as u64 {
                let r = index.frame_range(id).unwrap();
                assert_eq!(Some(r.start), index.offset(id));
            }
        }
    }
}

#[test]
fn the_streaming_builder_gives_the_same_index() {
    for framing in FRAMINGS {
        for n in [0, 1, 5, 64, 65, 66, 200, 1000] {
            let data = file(framing, n);
            let built = Index::build(&data, framing, true).unwrap();
            assert_eq!(stream_index(data.clone(), Some(framing)), built, "{n}");
            if framing == Framing::TfRecord {
                // Compressed: offsets in the decompressed stream, detected.
                assert_eq!(stream_index(gzip(&data), None), built);
                assert_eq!(stream_index(zlib(&data), None), built);
            }
        }
    }
    // With pads.
    let data = padded(Framing::TfRecord, 150);
    let built = Index::build(&data, Framing::TfRecord, false).unwrap();
    let opts = OpenOptions::default().with_read(ReadOptions::default().with_data_crc(false));
    let streamed = Index::build_from_reader(std::io::Cursor::new(gzip(&data)), &opts).unwrap();
    assert_eq!(streamed, built);
    assert!(built.has_pads());
}

#[test]
fn the_streaming_builder_reports_errors() {
    let mut data = file(Framing::TfRecord, 5);
    let third = Index::build(&data, Framing::TfRecord, true)
        .unwrap()
        .offset(3)
        .unwrap();
    data[third as usize + 14] ^= 1;
    let err = Index::build_from_reader(std::io::Cursor::new(gzip(&data)), &OpenOptions::default())
        .unwrap_err();
    assert_eq!(
        (err.kind().name(), err.record(), err.offset()),
        ("data_crc_mismatch", Some(3), Some(third))
    );
    // Without CRC checks the damage is not seen.
    let opts = OpenOptions::default().with_read(ReadOptions::default().with_data_crc(false));
    let index = Index::build_from_reader(std::io::Cursor::new(data.clone()), &opts).unwrap();
    assert!(!index.crcs_verified());
    // A broken gzip stream.
    let mut gz = gzip(&file(Framing::TfRecord, 5));
    gz.truncate(gz.len() - 10);
    let err =
        Index::build_from_reader(std::io::Cursor::new(gz), &OpenOptions::default()).unwrap_err();
    assert_eq!(err.kind().name(), "compression_error");
}

/// A file of `n` records with pad frames before some of them, at the start
/// and at the end.
fn padded(framing: Framing, n: usize) -> Vec<u8> {
    let mut out = pad_frame(100, framing).unwrap();
    for (i, d) in datas(n).iter().enumerate() {
        if i % 3 == 1 {
            out.extend_from_slice(&pad_frame(40 + i * 7, framing).unwrap());
        }
        if i % 7 == 2 {
            // Two pads in a row.
            out.extend_from_slice(&pad_frame(4000, framing).unwrap());
        }
        write_frame(&mut out, framing, d);
    }
    out.extend_from_slice(&pad_frame(50, framing).unwrap());
    out
}

#[test]
fn pads_are_left_out() {
    for framing in FRAMINGS {
        let data = padded(framing, 40);
        let index = Index::build(&data, framing, true).unwrap();
        assert!(index.has_pads());
        assert_eq!(index.len(), 40);
        assert_eq!(index.offsets(), reference_offsets(&data, framing));
        let want = datas(40);
        for (id, d) in want.iter().enumerate() {
            let r = index
                .get(&data, id as u64, &ReadOptions::default())
                .unwrap()
                .unwrap();
            assert_eq!((r.id, r.data), (id as u64, &d[..]));
        }
        // Round trips keep the flag.
        let back = Index::open_native(Bytes::from(native(&index)), &data).unwrap();
        assert!(back.has_pads());
        assert_eq!(back, index);
    }
}

#[test]
fn build_errors_carry_record_ids_that_skip_pads() {
    let mut data = pad_frame(64, Framing::TfRecord).unwrap();
    data.extend_from_slice(&tfrecord_frame(b"zero"));
    data.extend_from_slice(&pad_frame(64, Framing::TfRecord).unwrap());
    let at = data.len();
    data.extend_from_slice(&tfrecord_frame(b"one"));
    data[at + 13] ^= 1;
    let err = Index::build(&data, Framing::TfRecord, true).unwrap_err();
    assert_eq!(
        (err.kind().name(), err.record(), err.offset()),
        ("data_crc_mismatch", Some(1), Some(at as u64))
    );
    // Not checked: fine.
    assert_eq!(
        Index::build(&data, Framing::TfRecord, false).unwrap().len(),
        2
    );
    data[at] ^= 1; // the length
    let err = Index::build(&data, Framing::TfRecord, false).unwrap_err();
    assert_eq!(err.kind().name(), "length_crc_mismatch");
    let mut of = file(Framing::OfRecord, 3);
    of.extend_from_slice(&(-5i64).to_le_bytes());
    let err = Index::build(&of, Framing::OfRecord, false).unwrap_err();
    assert_eq!(
        (err.kind().name(), err.record()),
        ("invalid_length", Some(3))
    );
    let err = Index::build(&of[..of.len() - 3], Framing::OfRecord, false).unwrap_err();
    assert_eq!(
        (err.kind().name(), err.record()),
        ("truncated_header", Some(3))
    );
}

#[test]
fn progress_is_reported() {
    let data = file(Framing::TfRecord, 10);
    let mut seen = Vec::new();
    Index::build_with_progress(&data, Framing::TfRecord, false, |b| seen.push(b)).unwrap();
    assert_eq!(seen, [data.len() as u64]);
}

#[test]
fn native_round_trip_in_place_and_decoded() {
    for framing in FRAMINGS {
        let data = file(framing, 70);
        let index = Index::build(&data, framing, true).unwrap();
        let bytes = native(&index);
        assert_eq!(bytes.len(), 48 + 8 * 71);
        // Aligned: used in place.
        let opened = Index::open_native(aligned(&bytes, 0), &data).unwrap();
        assert_eq!(opened, index);
        assert_eq!(opened.is_in_place(), cfg!(target_endian = "little"));
        opened.verify_table().unwrap();
        // Unaligned: decoded.
        let opened = Index::open_native(aligned(&bytes, 3), &data).unwrap();
        assert!(!opened.is_in_place());
        assert_eq!(opened, index);
        opened.verify_table().unwrap();
        // Written again: the same bytes.
        assert_eq!(native(&opened), bytes);
    }
}

#[test]
fn the_header_layout() {
    let data = file(Framing::OfRecord, 3);
    let index = Index::build(&data, Framing::OfRecord, false).unwrap();
    let b = native(&index);
    assert_eq!(&b[..8], b"RWINDEX\0");
    assert_eq!(&b[8..12], &1u32.to_le_bytes());
    assert_eq!(b[12], 2);
    assert_eq!(b[13], 0);
    assert_eq!(&b[16..24], &3u64.to_le_bytes());
    assert_eq!(&b[24..32], &(data.len() as u64).to_le_bytes());
    assert_eq!(&b[32..36], &index.fingerprint().to_le_bytes());
    assert_eq!(&b[36..40], &crc32c::crc32c(&b[48..]).to_le_bytes());
    assert_eq!(&b[40..44], &crc32c::crc32c(&b[..40]).to_le_bytes());
    assert_eq!(&b[44..48], &[0; 4]);
    let table: Vec<u64> = b[48..]
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(table, index.offsets());
}

#[test]
fn every_header_bit_flip_is_rejected() {
    let data = file(Framing::TfRecord, 10);
    let index = Index::build(&data, Framing::TfRecord, true).unwrap();
    let good = native(&index);
    for byte in 0..NATIVE_HEADER_LEN {
        for bit in 0..8 {
            let mut bad = good.clone();
            bad[byte] ^= 1 << bit;
            let err = Index::open_native(Bytes::from(bad), &data).unwrap_err();
            assert_eq!(err.kind().name(), "stale_index", "byte {byte} bit {bit}");
            assert!(err.to_string().contains("damaged index file"), "{err}");
        }
    }
}

#[test]
fn damaged_index_files_are_rejected() {
    let data = file(Framing::TfRecord, 10);
    let index = Index::build(&data, Framing::TfRecord, true).unwrap();
    let good = native(&index);
    let open = |b: &[u8]| Index::open_native(Bytes::copy_from_slice(b), &data);
    for len in 0..good.len() {
        let err = open(&good[..len]).unwrap_err();
        assert_eq!(err.kind().name(), "stale_index", "{len}");
    }
    let mut longer = good.clone();
    longer.extend_from_slice(&[0; 8]);
    assert!(open(&longer)
        .unwrap_err()
        .to_string()
        .contains("truncated or extended table"));
    let err = open(b"PK\x03\x04 not an index at all, but long enough for a header").unwrap_err();
    assert!(err.to_string().contains("not a recordwire index"), "{err}");
    // A version from the future, with a valid header CRC.
    let mut future = good.clone();
    future[8] = 2;
    let crc = crc32c::crc32c(&future[..40]);
    future[40..44].copy_from_slice(&crc.to_le_bytes());
    let err = open(&future).unwrap_err();
    assert!(err.to_string().contains("format version 2"), "{err}");
    // Table damage in a sampled entry (all of them, with 10 records): open fails.
    for entry in 0..=10usize {
        let mut bad = good.clone();
        bad[48 + 8 * entry] ^= 0x40;
        assert_eq!(open(&bad).unwrap_err().kind().name(), "stale_index");
    }
    // In an entry the fingerprint does not sample: seen by verify_table, and
    // by get() of the record before it.
    let data = file(Framing::TfRecord, 200);
    let index = Index::build(&data, Framing::TfRecord, true).unwrap();
    let good = native(&index);
    for entry in [1usize, 2, 3, 41, 77, 198] {
        let mut bad = good.clone();
        bad[48 + 8 * entry] ^= 0x40;
        let index = Index::open_native(Bytes::from(bad), &data).unwrap();
        let err = index.verify_table().unwrap_err();
        assert!(err.to_string().contains("table CRC"), "{err}");
        let err = index
            .get(&data, entry as u64 - 1, &ReadOptions::default())
            .unwrap_err();
        assert_eq!(
            (err.kind().name(), err.record()),
            ("stale_index", Some(entry as u64 - 1))
        );
        assert!(index
            .get(&data, entry as u64, &ReadOptions::default())
            .is_err());
    }
}

#[test]
fn stale_data_is_detected() {
    for framing in FRAMINGS {
        let data = file(framing, 100);
        let index = Index::build(&data, framing, false).unwrap();
        let bytes = Bytes::from(native(&index));
        let stale = |d: &[u8]| {
            let err = Index::open_native(bytes.clone(), d).unwrap_err();
            assert_eq!(err.kind().name(), "stale_index");
            err.to_string()
        };
        let mut appended = data.clone();
        write_frame(&mut appended, framing, b"more");
        assert!(stale(&appended).contains("appended"));
        assert!(stale(&data[..data.len() - 1]).contains("truncated"));
        assert!(stale(&data[..index.offset(99).unwrap() as usize]).contains("truncated"));
        // Same size, record lengths traded between record 0 and 1.
        let mut d = datas(100);
        let moved = d[1].pop().unwrap();
        d[0].push(moved);
        let rewritten = file_of(framing, d.iter().map(|x| &x[..]));
        assert_eq!(rewritten.len(), data.len());
        assert!(stale(&rewritten).contains("rewritten"));
        // Same size, one byte changed in the first 4 KiB.
        let mut changed = data.clone();
        changed[100] ^= 1;
        assert!(stale(&changed).contains("rewritten"));
        // And the last 4 KiB.
        let mut changed = data.clone();
        let last = changed.len() - 100;
        changed[last] ^= 1;
        assert!(stale(&changed).contains("rewritten"));
    }
}

#[test]
fn get_checks_the_length_against_the_index() {
    for framing in FRAMINGS {
        // 200 records: the fingerprint samples ids 0, 4, 8, ... and 199.
        // Trading a byte from record 42 to record 41 keeps the size, the
        // first and last 4 KiB and every sampled header: open cannot see it,
        // get(41) does.
        let n = 200;
        let data = file(framing, n);
        let index = Index::build(&data, framing, false).unwrap();
        let mut d = datas(n);
        let moved = d[42].pop().unwrap();
        d[41].push(moved);
        let rewritten = file_of(framing, d.iter().map(|x| &x[..]));
        assert!(index.offset(41).unwrap() > 4096);
        let reopened = Index::open_native(Bytes::from(native(&index)), &rewritten).unwrap();
        let err = reopened
            .get(&rewritten, 41, &ReadOptions::default())
            .unwrap_err();
        assert_eq!(
            (err.kind().name(), err.record(), err.offset()),
            ("stale_index", Some(41), index.offset(41))
        );
        assert!(err.to_string().contains("frame header declares"), "{err}");
        // Record 42's offset is no longer a frame start.
        assert!(reopened
            .get(&rewritten, 42, &ReadOptions::default())
            .is_err());
        // The records around them are unchanged.
        for id in [40, 43] {
            assert!(reopened
                .get(&rewritten, id, &ReadOptions::default())
                .is_ok());
        }
        // Data of another size.
        let err = index
            .get(&data[..data.len() - 1], 0, &ReadOptions::default())
            .unwrap_err();
        assert_eq!(err.kind().name(), "stale_index");
    }
}

#[test]
fn get_checks_crcs_as_asked() {
    let mut data = file(Framing::TfRecord, 5);
    let index = Index::build(&data, Framing::TfRecord, true).unwrap();
    let at = index.offset(2).unwrap() as usize;
    data[at + 12] ^= 1;
    let err = index.get(&data, 2, &ReadOptions::default()).unwrap_err();
    assert_eq!(
        (err.kind().name(), err.record(), err.offset()),
        ("data_crc_mismatch", Some(2), Some(at as u64))
    );
    let unchecked = ReadOptions::default().with_data_crc(false);
    assert!(index.get(&data, 2, &unchecked).unwrap().is_some());
    data[at] ^= 1;
    let err = index.get(&data, 2, &ReadOptions::default()).unwrap_err();
    assert_eq!(err.kind().name(), "length_crc_mismatch");
}

#[test]
fn get_many_serves_in_request_order() {
    let data = file(Framing::TfRecord, 50);
    let index = Index::build(&data, Framing::TfRecord, true).unwrap();
    let ids = [49u64, 3, 3, 17, 0, 1000, 25];
    let mut scratch = Vec::new();
    let mut got = Vec::new();
    index
        .get_many(
            &data,
            &ids,
            &ReadOptions::default(),
            &mut scratch,
            |p, r| got.push((p, r.map(|r| (r.id, r.data)))),
        )
        .unwrap();
    let want: Vec<_> = ids
        .iter()
        .enumerate()
        .map(|(p, &id)| {
            (
                p,
                index
                    .get(&data, id, &ReadOptions::default())
                    .unwrap()
                    .map(|r| (r.id, r.data)),
            )
        })
        .collect();
    assert_eq!(got, want);
    // The scratch holds the positions in offset order.
    assert_eq!(scratch, [4, 1, 2, 3, 6, 0, 5]);
    // An error stops the batch before any call.
    let mut bad = data.clone();
    let at = index.offset(17).unwrap() as usize;
    bad[at + 12] ^= 1;
    let mut calls = 0;
    let err = index
        .get_many(&bad, &ids, &ReadOptions::default(), &mut scratch, |_, _| {
            calls += 1
        })
        .unwrap_err();
    assert_eq!((err.record(), calls), (Some(17), 0));
}

#[test]
fn sidecar_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.tfrecord");
    let data = file(Framing::TfRecord, 20);
    std::fs::write(&path, &data).unwrap();
    let index = Index::build(&data, Framing::TfRecord, true).unwrap();
    let sidecar = sidecar_path(&path);
    assert_eq!(sidecar.file_name().unwrap(), "d.tfrecord.rwindex");
    index.write_native_file(&sidecar).unwrap();
    // No temporary file is left.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    for mmap in [true, false] {
        let opened = Index::load_native(&sidecar, &data, mmap).unwrap();
        assert_eq!(opened, index);
        if mmap {
            assert_eq!(opened.is_in_place(), cfg!(target_endian = "little"));
        }
    }
    let err = Index::load_native(&sidecar, &data[..10], true).unwrap_err();
    assert_eq!(err.file(), Some(sidecar.display().to_string().as_str()));
    let err = Index::load_native(dir.path().join("missing"), &data, true).unwrap_err();
    assert_eq!(err.kind().name(), "io_error");
}

#[test]
fn open_options_framing_is_honoured_by_the_stream_builder() {
    let data = file(Framing::OfRecord, 4);
    let opts = OpenOptions::default()
        .with_framing(Some(Framing::OfRecord))
        .with_compression(Compression::None);
    let index = Index::build_from_reader(std::io::Cursor::new(data.clone()), &opts).unwrap();
    assert_eq!(index.framing(), Framing::OfRecord);
    assert_eq!(
        index,
        Index::build(&data, Framing::OfRecord, false).unwrap()
    );
    // Detected as OFRecord without being named.
    assert_eq!(stream_index(data, None).framing(), Framing::OfRecord);
}

#[test]
fn readahead_ranges_merge_nearby_records() {
    let data = file(Framing::TfRecord, 300);
    let index = Index::build(&data, Framing::TfRecord, false).unwrap();
    let mut ranges = Vec::new();
    Readahead::ranges(&index, &[0, 1, 2, 3], 4096, |r| ranges.push(r));
    assert_eq!(ranges, vec![0..index.offset(4).unwrap()]);
    ranges.clear();
    Readahead::ranges(&index, &[299, 0, 1000], 4096, |r| ranges.push(r));
    assert_eq!(
        ranges,
        [
            index.frame_range(299).unwrap(),
            index.frame_range(0).unwrap()
        ]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_files_round_trip(
        lens in proptest::collection::vec(0usize..600, 0..200),
        pads in proptest::collection::vec(any::<bool>(), 0..200),
        tf in any::<bool>(),
        shift in 0usize..8,
    ) {
        let framing = if tf { Framing::TfRecord } else { Framing::OfRecord };
        let mut data = Vec::new();
        for (i, &len) in lens.iter().enumerate() {
            if pads.get(i).copied().unwrap_or(false) {
                let total = pad::min_pad_frame_len(framing) + len;
                data.extend_from_slice(&pad_frame(total, framing).unwrap());
            }
            let payload: Vec<u8> = (0..len).map(|j| (i * 31 + j) as u8).collect();
            write_frame(&mut data, framing, &payload);
        }
        let index = Index::build(&data, framing, true).unwrap();
        prop_assert_eq!(index.offsets(), &reference_offsets(&data, framing)[..]);
        let opened = Index::open_native(aligned(&native(&index), shift), &data).unwrap();
        prop_assert_eq!(&opened, &index);
        prop_assert_eq!(stream_index(data.clone(), Some(framing)), index.clone());
        let mut text = Vec::new();
        index.write_dali(&data, &mut text).unwrap();
        let from_text = Index::read_dali(&text, &data, framing).unwrap();
        prop_assert_eq!(from_text.offsets(), index.offsets());
        let mut raw = Vec::new();
        index.write_lirs(&mut raw).unwrap();
        let from_raw = Index::read_lirs(&raw, &data, framing).unwrap();
        prop_assert_eq!(from_raw.offsets(), index.offsets());
        let seq: Vec<_> = records(&data, framing, ReadOptions::default())
            .map(|r| r.unwrap())
            .filter(|r| !is_pad(r.data))
            .collect();
        for (id, want) in seq.iter().enumerate() {
            let got = opened.get(&data, id as u64, &ReadOptions::default()).unwrap().unwrap();
            prop_assert_eq!((got.offset, got.data_offset, got.end, got.data),
                (want.offset, want.data_offset, want.end, want.data));
        }
    }

    #[test]
    fn hostile_index_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        flip in 0usize..2000,
    ) {
        let data = file(Framing::TfRecord, 12);
        let _ = Index::open_native(Bytes::from(bytes.clone()), &data);
        let _ = Index::read_dali(&bytes, &data, Framing::TfRecord);
        let _ = Index::read_lirs(&bytes, &data, Framing::TfRecord);
        // A valid header over a hostile table: get and verify never panic.
        let index = Index::build(&data, Framing::TfRecord, false).unwrap();
        let mut good = native(&index);
        let i = flip % good.len();
        good[i] = good[i].wrapping_add(bytes.first().copied().unwrap_or(1));
        if let Ok(opened) = Index::open_native(Bytes::from(good), &data) {
            let _ = opened.verify_table();
            for id in 0..13 {
                let _ = opened.get(&data, id, &ReadOptions::default());
                let _ = opened.frame_range(id);
            }
            let mut scratch = Vec::new();
            let _ = opened.get_many(&data, &[0, 5, 11, 3], &ReadOptions::default(), &mut scratch, |_, _| {});
            let mut out = Vec::new();
            let _ = opened.write_dali(&data, &mut out);
        }
    }
}
