//! Unit tests of the frame walk: both framings, every error kind, the error
//! policies and their limits, absolute offsets, and properties over damaged
//! and random input.

use super::*;
use crate::frame::{file_of, masked_crc32c, ofrecord_frame, tfrecord_frame, write_tfrecord_frame};

fn skip(max_errors: Option<u64>) -> ReadOptions {
    ReadOptions::default().with_policy(ErrorPolicy::Skip { max_errors })
}

/// An item as compared in tests: (id, offset, data) or the error, and the skipped range.
type Item = (Result<(u64, u64, Vec<u8>), Error>, Option<(u64, u64)>);

/// Every item, with the skipped range seen right after it.
fn walk(buf: &[u8], framing: Framing, opts: ReadOptions) -> Vec<Item> {
    let mut it = records(buf, framing, opts);
    let mut out = Vec::new();
    while let Some(item) = it.next() {
        let item = item.map(|r| (r.id, r.offset, r.data.to_vec()));
        out.push((item, it.skipped()));
    }
    assert!(it.next().is_none(), "fused");
    out
}

fn ok(id: u64, offset: u64, data: &[u8]) -> Result<(u64, u64, Vec<u8>), Error> {
    Ok((id, offset, data.to_vec()))
}

#[test]
fn empty_input_has_no_records() {
    assert!(walk(b"", Framing::TfRecord, ReadOptions::default()).is_empty());
    assert!(walk(b"", Framing::OfRecord, ReadOptions::default()).is_empty());
}

#[test]
fn reads_both_framings() {
    let datas: [&[u8]; 3] = [b"a", b"", b"hello world"];
    for framing in [Framing::TfRecord, Framing::OfRecord] {
        let file = file_of(framing, datas);
        let got: Vec<Record<'_>> = records(&file, framing, ReadOptions::default())
            .collect::<Result<_, _>>()
            .unwrap();
        let h = framing.header_len() as u64;
        let f = framing.footer_len() as u64;
        let mut offset = 0;
        for (i, (rec, data)) in got.iter().zip(datas).enumerate() {
            assert_eq!(rec.id, i as u64);
            assert_eq!(rec.offset, offset);
            assert_eq!(rec.data_offset, offset + h);
            assert_eq!(rec.data, data);
            offset += h + data.len() as u64 + f;
            assert_eq!(rec.end, offset);
            assert_eq!(rec.frame_len(), h + data.len() as u64 + f);
        }
        assert_eq!(got.len(), 3);
    }
}

#[test]
fn record_debug_is_short() {
    let file = tfrecord_frame(&[0xab; 100]);
    let rec = records(&file, Framing::TfRecord, ReadOptions::default())
        .next()
        .unwrap()
        .unwrap();
    let shown = format!("{rec:?}");
    assert!(shown.starts_with(
        "Record { id: 0, offset: 0, data_offset: 12, end: 116, data: [100 bytes: ab ab"
    ));
    assert!(shown.ends_with(" …] }"), "{shown}");
}

#[test]
fn truncated_header() {
    let mut file = tfrecord_frame(b"abc");
    file.extend_from_slice(&[1, 2, 3, 4, 5]);
    let items = walk(&file, Framing::TfRecord, ReadOptions::default());
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].0, ok(0, 0, b"abc"));
    let err = items[1].0.clone().unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::TruncatedHeader {
            needed: 12,
            available: 5
        }
    );
    assert_eq!((err.record(), err.offset()), (Some(1), Some(19)));
    // (The `[kind]` prefix is error.rs's business.)
    let shown = err.to_string();
    assert!(shown.starts_with("[truncated_header]"), "{shown}");
    assert!(
        shown.ends_with(
            " record 1 at byte 19: input ends inside a frame header: needed 12 bytes, 5 available"
        ),
        "{shown}"
    );
    // Also ends the iteration in skip mode, with no skipped range.
    let items = walk(&file, Framing::TfRecord, skip(None));
    assert_eq!(items.len(), 2);
    assert_eq!(items[1], (Err(err), None));

    let mut file = ofrecord_frame(b"abc");
    file.extend_from_slice(&[1, 2, 3]);
    let items = walk(&file, Framing::OfRecord, ReadOptions::default());
    let err = items[1].0.clone().unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::TruncatedHeader {
            needed: 8,
            available: 3
        }
    );
    assert_eq!((err.record(), err.offset()), (Some(1), Some(11)));
}

#[test]
fn truncated_data() {
    let mut file = tfrecord_frame(b"abc");
    let second = tfrecord_frame(&[9; 16]);
    file.extend_from_slice(&second[..12 + 4]);
    for opts in [ReadOptions::default(), skip(None)] {
        let items = walk(&file, Framing::TfRecord, opts);
        assert_eq!(items.len(), 2);
        let err = items[1].0.clone().unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::TruncatedData {
                declared: 20,
                available: 4
            }
        );
        assert_eq!((err.record(), err.offset()), (Some(1), Some(19)));
        assert_eq!(items[1].1, None);
    }
    // Data complete, CRC cut short.
    let file = &tfrecord_frame(b"abcd")[..18];
    let err = walk(file, Framing::TfRecord, ReadOptions::default())[0]
        .0
        .clone()
        .unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::TruncatedData {
            declared: 8,
            available: 6
        }
    );
    // OFRecord.
    let mut file = ofrecord_frame(b"xy");
    file.extend_from_slice(&ofrecord_frame(b"0123456789")[..12]);
    let err = walk(&file, Framing::OfRecord, ReadOptions::default())[1]
        .0
        .clone()
        .unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::TruncatedData {
            declared: 10,
            available: 4
        }
    );
    assert_eq!((err.record(), err.offset()), (Some(1), Some(10)));
}

#[test]
fn invalid_length() {
    let mut file = ofrecord_frame(b"ok");
    file.extend_from_slice(&(-1i64).to_le_bytes());
    file.extend_from_slice(&ofrecord_frame(b"never read"));
    for opts in [ReadOptions::default(), skip(None)] {
        let items = walk(&file, Framing::OfRecord, opts);
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].0, ok(0, 0, b"ok"));
        let err = items[1].0.clone().unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::InvalidLength { length: -1 });
        assert_eq!((err.record(), err.offset()), (Some(1), Some(10)));
        assert_eq!(items[1].1, None);
    }
}

/// Three frames, the middle one with a damaged data CRC.
fn bad_data_crc_file() -> (Vec<u8>, u32) {
    let mut file = tfrecord_frame(b"zero");
    let mut bad = tfrecord_frame(b"one!");
    let last = bad.len() - 1;
    bad[last] ^= 0x40;
    let stored = u32::from_le_bytes(bad[last - 3..].try_into().unwrap());
    file.extend_from_slice(&bad);
    write_tfrecord_frame(&mut file, b"two");
    (file, stored)
}

#[test]
fn data_crc_mismatch() {
    let (file, stored) = bad_data_crc_file();
    let expected = Error::new(
        ErrorKind::DataCrcMismatch {
            stored,
            computed: masked_crc32c(b"one!"),
        },
        20,
    )
    .with_record(1);

    let items = walk(&file, Framing::TfRecord, ReadOptions::default());
    assert_eq!(
        items,
        [(ok(0, 0, b"zero"), None), (Err(expected.clone()), None)]
    );

    let items = walk(&file, Framing::TfRecord, skip(None));
    assert_eq!(
        items,
        [
            (ok(0, 0, b"zero"), None),
            (Err(expected.clone()), Some((20, 40))),
            (ok(2, 40, b"two"), None),
        ]
    );

    // Not checked: the damaged record is delivered.
    let items = walk(
        &file,
        Framing::TfRecord,
        ReadOptions::default().with_data_crc(false),
    );
    assert_eq!(items.len(), 3);
    assert_eq!(items[1].0, ok(1, 20, b"one!"));

    // With a file name.
    let err = records(&file, Framing::TfRecord, ReadOptions::default())
        .with_file("a.tfrecord")
        .nth(1)
        .unwrap()
        .unwrap_err();
    assert_eq!(err, expected.with_file("a.tfrecord"));
    let shown = err.to_string();
    assert!(shown.starts_with("[data_crc_mismatch]"), "{shown}");
    let details = format!(
        " a.tfrecord: record 1 at byte 20: stored {stored:#010x}, computed {:#010x}",
        masked_crc32c(b"one!")
    );
    assert!(shown.ends_with(&details), "{shown}");
}

#[test]
fn length_crc_mismatch_resyncs_in_skip_mode() {
    let mut file = tfrecord_frame(b"zero"); // 0..20
    let mut bad = tfrecord_frame(b"one"); // 20..39
    bad[0] = 0xee; // the length: its CRC no longer matches
    file.extend_from_slice(&bad);
    file.extend_from_slice(&[0x55; 7]); // garbage 39..46
    write_tfrecord_frame(&mut file, b"two"); // 46..65
    let expected = Error::new(
        ErrorKind::LengthCrcMismatch {
            stored: masked_crc32c(&3u64.to_le_bytes()),
            computed: masked_crc32c(&0xeeu64.to_le_bytes()),
        },
        20,
    )
    .with_record(1);

    let items = walk(&file, Framing::TfRecord, ReadOptions::default());
    assert_eq!(
        items,
        [(ok(0, 0, b"zero"), None), (Err(expected.clone()), None)]
    );

    let items = walk(&file, Framing::TfRecord, skip(None));
    assert_eq!(
        items,
        [
            (ok(0, 0, b"zero"), None),
            (Err(expected.clone()), Some((20, 46))),
            (ok(2, 46, b"two"), None),
        ]
    );

    // No header after the damage: skipped to the end, then the end.
    let items = walk(&file[..50], Framing::TfRecord, skip(None));
    assert_eq!(items[1], (Err(expected), Some((20, 50))));
    assert_eq!(items.len(), 2);
}

#[test]
fn resync_finds_a_header_one_byte_after_the_damage() {
    // The damaged "frame" is a single garbage byte followed by a real frame.
    let mut file = vec![0xff];
    write_tfrecord_frame(&mut file, b"x");
    let items = walk(&file, Framing::TfRecord, skip(None));
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].1, Some((0, 1)));
    assert_eq!(
        items[0].0.as_ref().unwrap_err().kind().name(),
        "length_crc_mismatch"
    );
    assert_eq!(items[1].0, ok(1, 1, b"x"));
}

#[test]
fn max_errors() {
    // Five frames with bad data CRCs, then a good one.
    let mut file = Vec::new();
    for i in 0..5u8 {
        let mut frame = tfrecord_frame(&[i; 3]);
        frame[15] ^= 1;
        file.extend_from_slice(&frame);
    }
    write_tfrecord_frame(&mut file, b"good");
    let all = walk(&file, Framing::TfRecord, skip(None));
    assert_eq!(all.len(), 6);
    assert_eq!(all[5].0, ok(5, 95, b"good"));

    let mut it = records(&file, Framing::TfRecord, skip(Some(3)));
    for id in 0..3 {
        let err = it.next().unwrap().unwrap_err();
        assert_eq!(err.record(), Some(id));
        assert_eq!(err.offset(), Some(19 * id));
        assert_eq!(it.errors(), id + 1);
    }
    assert_eq!(it.skipped(), None, "the last allowed error ends the walk");
    assert!(it.next().is_none());
    assert_eq!(it.errors(), 3);

    for max in [0, 1] {
        let items = walk(&file, Framing::TfRecord, skip(Some(max)));
        assert_eq!(items.len(), 1);
    }
}

#[test]
fn fail_mode_is_fused_after_the_error() {
    let (file, _) = bad_data_crc_file();
    let mut it = records(&file, Framing::TfRecord, ReadOptions::default());
    assert!(it.next().unwrap().is_ok());
    assert!(it.next().unwrap().is_err());
    assert_eq!(it.errors(), 1);
    assert!(it.next().is_none());
    assert!(it.next().is_none());
    assert!(it.remaining().is_empty());
}

#[test]
fn offsets_are_absolute_with_a_base() {
    let (file, _) = bad_data_crc_file();
    let items: Vec<_> = records_at(&file, 1000, 50, Framing::TfRecord, skip(None)).collect();
    assert_eq!(items[0].as_ref().unwrap().offset, 1000);
    let err = items[1].as_ref().unwrap_err();
    assert_eq!((err.record(), err.offset()), (Some(51), Some(1020)));
    let rec = items[2].as_ref().unwrap();
    assert_eq!(
        (rec.id, rec.offset, rec.data_offset, rec.end),
        (52, 1040, 1052, 1059)
    );
}

#[test]
fn early_end_replaces_truncation_and_clean_end() {
    let cause = ErrorKind::Compression {
        message: "gzip: corrupt deflate stream".into(),
    };
    let mut file = tfrecord_frame(b"zero");
    // At a frame boundary.
    let items: Vec<_> = records(&file, Framing::TfRecord, ReadOptions::default())
        .with_early_end(Some(cause.clone()))
        .collect();
    assert_eq!(items.len(), 2);
    assert_eq!(items[1], Err(Error::new(cause.clone(), 20).with_record(1)));
    // Inside a frame.
    file.extend_from_slice(&[1, 2, 3]);
    let items: Vec<_> = records(&file, Framing::TfRecord, skip(None))
        .with_early_end(Some(cause.clone()))
        .collect();
    assert_eq!(items[1], Err(Error::new(cause, 20).with_record(1)));
}

#[test]
fn remaining_and_position() {
    let file = file_of(Framing::TfRecord, [&b"a"[..], b"b"]);
    let mut it = records(&file, Framing::TfRecord, ReadOptions::default());
    assert_eq!(it.remaining().len(), 34);
    it.next();
    assert_eq!(
        (it.position(), it.next_id(), it.remaining().len()),
        (17, 1, 17)
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn check_invariants(buf: &[u8], framing: Framing, opts: ReadOptions) {
        let mut it = records(buf, framing, opts);
        let mut data_total = 0usize;
        let mut covered = 0u64; // frames and skipped ranges tile the input
        let mut last_id = None;
        while let Some(item) = it.next() {
            match item {
                Ok(rec) => {
                    assert_eq!(rec.offset, covered);
                    data_total += rec.data.len();
                    covered = rec.end;
                    assert!(!matches!(last_id, Some(l) if rec.id <= l));
                    last_id = Some(rec.id);
                }
                Err(err) => {
                    assert_eq!(err.offset(), Some(covered));
                    assert!(!matches!(last_id, Some(l) if err.record() <= Some(l)));
                    last_id = err.record();
                    if let Some((start, end)) = it.skipped() {
                        assert_eq!(start, covered);
                        assert!(end > start);
                        covered = end;
                    }
                }
            }
            assert!(covered <= buf.len() as u64);
        }
        assert!(data_total <= buf.len());
    }

    fn policies() -> impl Strategy<Value = ReadOptions> {
        (
            any::<bool>(),
            any::<bool>(),
            prop_oneof![
                Just(ErrorPolicy::Fail),
                proptest::option::of(0u64..4)
                    .prop_map(|max_errors| ErrorPolicy::Skip { max_errors }),
            ],
        )
            .prop_map(|(l, d, policy)| ReadOptions {
                check_length_crc: l,
                check_data_crc: d,
                policy,
                skip_pads: true,
            })
    }

    /// Valid frames, some bytes flipped, some garbage, maybe cut short.
    fn damaged_files() -> impl Strategy<Value = Vec<u8>> {
        (
            proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..8),
            proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 0..4),
            any::<proptest::sample::Index>(),
        )
            .prop_map(|(datas, flips, cut)| {
                let mut file = file_of(Framing::TfRecord, datas.iter().map(|d| &d[..]));
                if !file.is_empty() {
                    for (at, x) in flips {
                        let i = at.index(file.len());
                        file[i] ^= x;
                    }
                    let keep = cut.index(file.len() + 1);
                    if keep < file.len() && keep % 3 == 0 {
                        file.truncate(keep);
                    }
                }
                file
            })
    }

    proptest! {
        #![proptest_config(crate::test_util::proptest_config())]

        #[test]
        fn garbage_never_panics(buf in proptest::collection::vec(any::<u8>(), 0..512), opts in policies()) {
            check_invariants(&buf, Framing::TfRecord, opts);
            check_invariants(&buf, Framing::OfRecord, opts);
        }

        #[test]
        fn damaged_files_never_panic(file in damaged_files(), opts in policies()) {
            check_invariants(&file, Framing::TfRecord, opts);
            check_invariants(&file, Framing::OfRecord, opts);
        }

        #[test]
        fn frames_round_trip(datas in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..10)) {
            for framing in [Framing::TfRecord, Framing::OfRecord] {
                let file = file_of(framing, datas.iter().map(|d| &d[..]));
                let got: Vec<Vec<u8>> = records(&file, framing, ReadOptions::default())
                    .map(|r| r.map(|r| r.data.to_vec()))
                    .collect::<Result<_, _>>()
                    .unwrap();
                prop_assert_eq!(&got, &datas);
            }
        }
    }
}
