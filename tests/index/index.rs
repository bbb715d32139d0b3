//! The offset index on the reference files: building, random access,
//! datasets, the frozen native format, stale and damaged indexes, and the
//! interchange formats (including the text index written by the Python
//! `tfrecord` package).
//!
//! The files of `testdata/index/` are made by `testdata/index/make.sh`; the
//! native vectors are frozen (see its README).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use bytes::Bytes;
use recordwire::dataset::{Dataset, IndexOrigin, Shard};
use recordwire::frame::{records, write_frame, Framing, ReadOptions, Record};
use recordwire::index::pad::{is_pad, min_pad_frame_len, write_pad_frame};
use recordwire::index::{sidecar_path, Index, IndexFormat, NATIVE_HEADER_LEN};
use recordwire::io::{OpenOptions, RecordFile};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn testdata(name: &str) -> PathBuf {
    root().join("testdata").join(name)
}

fn open(path: &Path) -> RecordFile {
    RecordFile::open(path, &OpenOptions::default()).unwrap()
}

/// (id, offset, data_offset, end, data) of a record.
fn key(r: &Record<'_>) -> (u64, u64, u64, u64, Vec<u8>) {
    (r.id, r.offset, r.data_offset, r.end, r.data.to_vec())
}

/// Every record of sequential iteration (pad frames left out, ids renumbered).
fn sequential(file: &RecordFile) -> Vec<(u64, u64, u64, u64, Vec<u8>)> {
    file.records()
        .map(|r| r.unwrap())
        .filter(|r| !is_pad(r.data))
        .enumerate()
        .map(|(i, r)| key(&Record { id: i as u64, ..r }))
        .collect()
}

const REF_FILES: [&str; 8] = [
    "ref/examples.tfrecord",
    "ref/examples.tfrecord.gz",
    "ref/examples.tfrecord.zlib",
    "ref/sequence_examples.tfrecord",
    "ref/ofrecord.part-0",
    "ref/small.tfrecord",
    "ref/empty.tfrecord",
    "ref/empty.tfrecord.gz",
];

#[test]
fn offsets_match_the_reference_manifest() {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(testdata("ref/manifest.json")).unwrap()).unwrap();
    let entries = manifest.as_array().unwrap();
    assert_eq!(entries.len(), REF_FILES.len());
    for entry in entries {
        let name = entry["file"].as_str().unwrap();
        let file = open(&testdata(name));
        assert_eq!(file.framing().name(), entry["framing"].as_str().unwrap());
        let index = Index::build(file.bytes(), file.framing(), true).unwrap();
        let want: Vec<u64> = entry["frame_offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(index.offsets(), want, "{name}");
        assert_eq!(index.len(), entry["records"].as_u64().unwrap(), "{name}");
        assert_eq!(
            index.data_size(),
            entry["decompressed_size"].as_u64().unwrap()
        );
        // The streaming builder over the file as it is on disk.
        let raw = std::fs::read(testdata(name)).unwrap();
        let streamed =
            Index::build_from_reader(std::io::Cursor::new(raw), &OpenOptions::default()).unwrap();
        assert_eq!(streamed, index, "{name}");
    }
}

#[test]
fn get_equals_sequential_iteration_for_both_framings() {
    for name in REF_FILES {
        let shard = Shard::open(testdata(name), &OpenOptions::default()).unwrap();
        let want = sequential(&open(&testdata(name)));
        assert_eq!(shard.len(), want.len() as u64, "{name}");
        for (id, expected) in want.iter().enumerate() {
            let got = shard.get(id as u64).unwrap().unwrap();
            assert_eq!(&key(&got.as_record()), expected, "{name} record {id}");
        }
        assert!(shard.get(want.len() as u64).unwrap().is_none());
        // A batch in reverse order comes back in request order.
        let ids: Vec<u64> = (0..shard.len()).rev().collect();
        let mut scratch = recordwire::dataset::Scratch::new();
        let mut got = Vec::new();
        shard
            .get_many(&ids, &mut scratch, |p, r| {
                got.push((p, key(&r.unwrap().as_record())));
            })
            .unwrap();
        got.sort_by_key(|g| g.0);
        let expected: Vec<_> = want.iter().rev().cloned().enumerate().collect();
        assert_eq!(got, expected, "{name}");
    }
}

/// A copy of `small.tfrecord` with pad frames so that no record crosses a
/// 256-byte page: the pad writer's job, done here by hand.
fn padded_small() -> Vec<u8> {
    let file = open(&testdata("ref/small.tfrecord"));
    let page = 256usize;
    let mut out = Vec::new();
    for record in file.records() {
        let data = record.unwrap().data;
        let frame_len = 16 + data.len();
        let in_page = out.len() % page;
        if in_page != 0 && in_page + frame_len > page && frame_len <= page {
            let mut gap = page - in_page;
            if gap < min_pad_frame_len(Framing::TfRecord) {
                gap += page;
            }
            assert!(write_pad_frame(&mut out, gap, Framing::TfRecord));
        }
        write_frame(&mut out, Framing::TfRecord, data);
    }
    out
}

#[test]
fn get_equals_sequential_iteration_with_pads() {
    let data = padded_small();
    let file = RecordFile::from_bytes(Bytes::from(data), "padded", &OpenOptions::default());
    let index = Index::build(file.bytes(), Framing::TfRecord, true).unwrap();
    assert!(index.has_pads());
    assert_eq!(index.len(), 10);
    assert!(index.starts().iter().all(|s| s % 256 == 0));
    let source = std::sync::Arc::new(recordwire::io::MemorySource::new(file.bytes().clone()));
    let shard = Shard::new(
        "padded",
        source,
        index,
        Framing::TfRecord,
        Default::default(),
    )
    .unwrap();
    assert_eq!(shard.origin(), &IndexOrigin::Given);
    let want = sequential(&file);
    for (id, expected) in want.iter().enumerate() {
        let got = shard.get(id as u64).unwrap().unwrap();
        assert_eq!(&key(&got.as_record()), expected);
    }
}

#[test]
fn a_dataset_of_many_files_is_one_id_space() {
    let dir = tempfile::tempdir().unwrap();
    let shards = [
        "ref/small.tfrecord",
        "ref/empty.tfrecord",
        "ref/ofrecord.part-0",
        "ref/examples.tfrecord.gz",
        "ref/sequence_examples.tfrecord",
    ];
    for (i, name) in shards.iter().enumerate() {
        std::fs::copy(testdata(name), dir.path().join(format!("part-{i}.data"))).unwrap();
    }
    // Things the glob must leave out.
    std::fs::write(dir.path().join("part-0.data.rwindex"), b"x").unwrap();
    std::fs::write(dir.path().join(".part-9.data"), b"x").unwrap();
    std::fs::create_dir(dir.path().join("part-dir")).unwrap();
    std::fs::write(dir.path().join("other.data"), b"x").unwrap();

    let paths = Dataset::glob(dir.path().join("part-*")).unwrap();
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "part-0.data",
            "part-1.data",
            "part-2.data",
            "part-3.data",
            "part-4.data"
        ]
    );
    assert_eq!(
        Dataset::glob(dir.path().join("part-?.d?ta")).unwrap(),
        paths
    );
    assert_eq!(
        Dataset::glob(dir.path().join("part-0.data.rwindex")).unwrap(),
        [dir.path().join("part-0.data.rwindex")]
    );
    assert!(Dataset::glob(dir.path().join("nothing-*"))
        .unwrap()
        .is_empty());
    std::fs::remove_file(dir.path().join("part-0.data.rwindex")).unwrap();

    let dataset = Dataset::open(&paths, &OpenOptions::default()).unwrap();
    let mut want = Vec::new();
    for (s, name) in shards.iter().enumerate() {
        let file = open(&testdata(name));
        let base = want.len() as u64;
        assert_eq!(dataset.bases()[s], base);
        for r in sequential(&file) {
            want.push((s, r.0, (base + r.0, r.1, r.2, r.3, r.4)));
        }
    }
    assert_eq!(dataset.len(), want.len() as u64);
    assert_eq!(dataset.len(), 10 + 20 + 40 + 10);
    assert_eq!(dataset.bases(), [0, 10, 10, 30, 70, 80]);
    for (global, (shard, local, expected)) in want.iter().enumerate() {
        let global = global as u64;
        assert_eq!(dataset.locate(global), Some((*shard, *local)));
        let got = dataset.get(global).unwrap().unwrap();
        assert_eq!(&key(&got.as_record()), expected, "global {global}");
    }
    assert_eq!(dataset.locate(80), None);
    assert!(dataset.get(80).unwrap().is_none());
    for shard in dataset.shards() {
        assert_eq!(shard.origin(), &IndexOrigin::Built { rejected: None });
    }
    let same = Dataset::open_glob(dir.path().join("part-*"), &OpenOptions::default()).unwrap();
    assert_eq!(same.len(), dataset.len());
    assert!(
        Dataset::open(Vec::<PathBuf>::new(), &OpenOptions::default())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn sidecars_are_used_when_current() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["small.tfrecord", "ofrecord.part-0", "examples.tfrecord.gz"] {
        let path = dir.path().join(name);
        std::fs::copy(testdata(&format!("ref/{name}")), &path).unwrap();
        let built = Shard::open(&path, &OpenOptions::default()).unwrap();
        // A compressed file's sidecar is its checkpoint index; a plain
        // index of its decompressed stream is passed over (using it would
        // mean inflating the whole file).
        match built.gz_index() {
            Some(gz) => {
                built
                    .index()
                    .write_native_file(sidecar_path(&path))
                    .unwrap();
                let passed = Shard::open(&path, &OpenOptions::default()).unwrap();
                let IndexOrigin::Built {
                    rejected: Some(why),
                } = passed.origin()
                else {
                    panic!("{name}: {:?}", passed.origin());
                };
                assert!(why.to_string().contains("not a checkpoint index"), "{why}");
                gz.write_native_file(sidecar_path(&path)).unwrap();
            }
            None => built
                .index()
                .write_native_file(sidecar_path(&path))
                .unwrap(),
        }

        let shard = Shard::open(&path, &OpenOptions::default()).unwrap();
        assert_eq!(shard.origin(), &IndexOrigin::Sidecar, "{name}");
        assert_eq!(shard.index(), built.index());
        if !shard.is_compressed() {
            assert_eq!(shard.index().is_in_place(), cfg!(target_endian = "little"));
        }
        for id in 0..shard.len() {
            assert_eq!(
                key(&shard.get(id).unwrap().unwrap().as_record()),
                key(&built.get(id).unwrap().unwrap().as_record())
            );
        }
        // Read rather than mapped: the same.
        let unmapped = OpenOptions::default().with_mmap(false);
        assert_eq!(
            Shard::open(&path, &unmapped).unwrap().origin(),
            &IndexOrigin::Sidecar
        );
    }
    // The data changes: the sidecar is rejected (and says why), the index rebuilt.
    let path = dir.path().join("small.tfrecord");
    let mut data = std::fs::read(&path).unwrap();
    data.extend_from_slice(&recordwire::frame::tfrecord_frame(b"appended"));
    std::fs::write(&path, &data).unwrap();
    let shard = Shard::open(&path, &OpenOptions::default()).unwrap();
    let IndexOrigin::Built {
        rejected: Some(err),
    } = shard.origin()
    else {
        panic!("expected a rejected sidecar, got {:?}", shard.origin());
    };
    assert_eq!(err.kind().name(), "stale_index");
    assert!(err.to_string().contains("appended"), "{err}");
    assert!(err.to_string().contains("small.tfrecord.rwindex"), "{err}");
    assert_eq!(shard.len(), 11);
    // A damaged sidecar too.
    std::fs::write(sidecar_path(&path), b"RWINDEX\0garbage").unwrap();
    let shard = Shard::open(&path, &OpenOptions::default()).unwrap();
    let IndexOrigin::Built {
        rejected: Some(err),
    } = shard.origin()
    else {
        panic!("expected a rejected sidecar");
    };
    assert!(err.to_string().contains("damaged index file"), "{err}");
}

/// Field of the native header at `at`, `N` bytes, as documented on `Index`.
fn field<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes[at..at + N].try_into().unwrap()
}

fn check_documented_layout(bytes: &[u8], data: &[u8], index: &Index) {
    let n = index.len();
    assert_eq!(bytes.len() as u64, 48 + 8 * (n + 1));
    assert_eq!(&bytes[..8], b"RWINDEX\0");
    assert_eq!(u32::from_le_bytes(field(bytes, 8)), 1);
    let code = match index.framing() {
        Framing::TfRecord => 1,
        Framing::OfRecord => 2,
    };
    assert_eq!(bytes[12], code);
    let flags = u8::from(index.crcs_verified()) | u8::from(index.has_pads()) << 1;
    assert_eq!(bytes[13], flags);
    assert_eq!(&bytes[14..16], &[0, 0]);
    assert_eq!(u64::from_le_bytes(field(bytes, 16)), n);
    assert_eq!(u64::from_le_bytes(field(bytes, 24)), data.len() as u64);
    assert_eq!(u32::from_le_bytes(field(bytes, 32)), index.fingerprint());
    assert_eq!(
        u32::from_le_bytes(field(bytes, 36)),
        crc32c::crc32c(&bytes[48..])
    );
    assert_eq!(
        u32::from_le_bytes(field(bytes, 40)),
        crc32c::crc32c(&bytes[..40])
    );
    assert_eq!(&bytes[44..48], &[0; 4]);
    for (i, offset) in index.offsets().iter().enumerate() {
        assert_eq!(u64::from_le_bytes(field(bytes, 48 + 8 * i)), *offset);
    }
    // The fingerprint, computed here from its documentation.
    let size = data.len();
    let edge = size.min(4096);
    let mut input = Vec::new();
    input.extend_from_slice(&(size as u64).to_le_bytes());
    input.extend_from_slice(&data[..edge]);
    input.extend_from_slice(&data[size - edge..]);
    input.extend_from_slice(&index.offsets()[n as usize].to_le_bytes());
    let mut s = 1u64;
    while n.div_ceil(s) > 64 {
        s *= 2;
    }
    let mut sampled: Vec<u64> = (0..n).step_by(s as usize).collect();
    if n > 0 && !(n - 1).is_multiple_of(s) {
        sampled.push(n - 1);
    }
    let header_len = index.framing().header_len();
    for k in sampled {
        let at = index.offsets()[k as usize];
        input.extend_from_slice(&at.to_le_bytes());
        input.extend_from_slice(&data[at as usize..at as usize + header_len]);
    }
    assert_eq!(crc32c::crc32c(&input), index.fingerprint());
}

/// The frozen native vectors: (vector file, data).
fn vectors() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "index/small.tfrecord.rwindex",
            std::fs::read(testdata("ref/small.tfrecord")).unwrap(),
        ),
        (
            "index/ofrecord.part-0.rwindex",
            std::fs::read(testdata("ref/ofrecord.part-0")).unwrap(),
        ),
        (
            "index/examples.tfrecord.rwindex",
            std::fs::read(testdata("ref/examples.tfrecord")).unwrap(),
        ),
        ("index/small-padded.tfrecord.rwindex", padded_small()),
    ]
}

#[test]
fn frozen_native_vectors() {
    let write = std::env::var_os("RECORDWIRE_WRITE_INDEX_VECTORS").is_some();
    // The padded data file is frozen too (it freezes the pad frame bytes).
    let padded = testdata("index/small-padded.tfrecord");
    if write {
        std::fs::write(&padded, padded_small()).unwrap();
    }
    assert_eq!(
        std::fs::read(&padded).unwrap(),
        padded_small(),
        "pad frames changed"
    );
    for (name, data) in vectors() {
        let framing = recordwire::frame::detect(&data);
        let framing = match framing {
            recordwire::frame::Detected::TfRecord => Framing::TfRecord,
            _ => Framing::OfRecord,
        };
        let index = Index::build(&data, framing, true).unwrap();
        let mut bytes = Vec::new();
        index.write_native(&mut bytes).unwrap();
        let path = testdata(name);
        if write {
            std::fs::write(&path, &bytes).unwrap();
        }
        let frozen = std::fs::read(&path).unwrap();
        assert_eq!(
            frozen, bytes,
            "{name}: the native format changed; it is frozen (bump the version)"
        );
        check_documented_layout(&frozen, &data, &index);
        let opened = Index::open_native(Bytes::from(frozen), &data).unwrap();
        assert_eq!(opened, index);
    }
    // A few values by hand, as a reader of the docs would check them.
    let small = std::fs::read(testdata("index/small.tfrecord.rwindex")).unwrap();
    assert_eq!(small.len(), 48 + 11 * 8);
    assert_eq!(small[12..14], [1, 1]); // TFRecord, CRCs verified
    assert_eq!(u64::from_le_bytes(field(&small, 16)), 10);
    assert_eq!(u64::from_le_bytes(field(&small, 24)), 1430);
    assert_eq!(u64::from_le_bytes(field(&small, 48 + 8 * 10)), 1430);
    let of = std::fs::read(testdata("index/ofrecord.part-0.rwindex")).unwrap();
    assert_eq!(of[12..14], [2, 0]); // OFRecord, no CRCs
    let padded = std::fs::read(testdata("index/small-padded.tfrecord.rwindex")).unwrap();
    assert_eq!(padded[12..14], [1, 3]); // CRCs verified, pad frames
}

#[test]
fn stale_after_append_truncate_and_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["small.tfrecord", "ofrecord.part-0", "examples.tfrecord"] {
        let path = dir.path().join(name);
        let original = std::fs::read(testdata(&format!("ref/{name}"))).unwrap();
        let file = RecordFile::from_bytes(Bytes::from(original.clone()), name, &Default::default());
        let framing = file.framing();
        let index = Index::build(&original, framing, true).unwrap();
        let sidecar = sidecar_path(&path);
        index.write_native_file(&sidecar).unwrap();

        let check = |data: &[u8], says: &str| {
            std::fs::write(&path, data).unwrap();
            let mapped = open(&path);
            let err = Index::load_native(&sidecar, mapped.bytes(), true).unwrap_err();
            assert_eq!(err.kind().name(), "stale_index", "{name}: {err}");
            assert!(err.to_string().contains(says), "{name}: {err}");
            // And a shard does not use it: it rebuilds the index, which
            // fails when the change damaged a frame.
            match Shard::open(&path, &OpenOptions::default()) {
                Ok(shard) => assert!(matches!(
                    shard.origin(),
                    IndexOrigin::Built { rejected: Some(_) }
                )),
                Err(e) => assert!(
                    ["truncated_data", "length_crc_mismatch", "invalid_length"]
                        .contains(&e.kind().name()),
                    "{name}: {e}"
                ),
            }
        };
        // Appended.
        let mut appended = original.clone();
        write_frame(&mut appended, framing, b"one more");
        check(&appended, "appended");
        // Truncated, at a frame boundary and inside a frame.
        let last = index.offset(index.len() - 1).unwrap() as usize;
        check(&original[..last], "truncated");
        check(&original[..original.len() - 1], "truncated");
        // Rewritten with the same size, record lengths traded between two records.
        let datas: Vec<Vec<u8>> = records(&original, framing, ReadOptions::default())
            .map(|r| r.unwrap().data.to_vec())
            .collect();
        let (a, b) = (index.len() as usize / 2, index.len() as usize / 2 + 1);
        let mut traded = datas.clone();
        let moved = traded[b].pop().unwrap();
        traded[a].push(moved);
        let rewritten = recordwire::frame::file_of(framing, traded.iter().map(|d| &d[..]));
        assert_eq!(rewritten.len(), original.len());
        check(&rewritten, "rewritten");
        // Same size, one byte of a record header changed (the length, OFRecord;
        // the length CRC, TFRecord).
        let mut header = original.clone();
        let in_header = match framing {
            Framing::TfRecord => 9,
            Framing::OfRecord => 1,
        };
        header[index.offset(a as u64).unwrap() as usize + in_header] ^= 0x10;
        check(&header, "rewritten");
        // Restored: current again.
        std::fs::write(&path, &original).unwrap();
        let shard = Shard::open(&path, &OpenOptions::default()).unwrap();
        assert_eq!(shard.origin(), &IndexOrigin::Sidecar);
    }
}

#[test]
fn damaged_index_files_are_rejected() {
    let data = std::fs::read(testdata("ref/examples.tfrecord")).unwrap();
    let good = std::fs::read(testdata("index/examples.tfrecord.rwindex")).unwrap();
    let open = |b: Vec<u8>| Index::open_native(Bytes::from(b), &data);
    assert!(open(good.clone()).is_ok());
    let mut rejected = 0;
    for byte in 0..NATIVE_HEADER_LEN {
        for bit in [0, 3, 7] {
            let mut bad = good.clone();
            bad[byte] ^= 1 << bit;
            let err = open(bad).unwrap_err();
            assert_eq!(err.kind().name(), "stale_index");
            rejected += 1;
        }
    }
    assert_eq!(rejected, 48 * 3);
    for cut in [1, 7, 8, 9, 8 * 41 - 1, good.len() - 47] {
        let err = open(good[..good.len() - cut].to_vec()).unwrap_err();
        assert!(
            err.to_string().contains("damaged index file"),
            "cut {cut}: {err}"
        );
    }
    // Damage in the table: every entry of this 40-record file is sampled by
    // the fingerprint, so the open fails too.
    for entry in 0..=40 {
        let mut bad = good.clone();
        bad[48 + 8 * entry] ^= 1;
        assert_eq!(open(bad).unwrap_err().kind().name(), "stale_index");
    }
    // Opened as another format, or for data of another framing.
    let err = Index::read_as(
        IndexFormat::Native,
        Bytes::from(good),
        &data,
        Framing::OfRecord,
    )
    .unwrap_err();
    assert!(err.to_string().contains("tfrecord data"), "{err}");
}

#[test]
fn the_text_index_equals_the_python_tfrecord_packages() {
    // testdata/index/examples.tfrecord.tfindex: written by
    // tfrecord.tools.tfrecord2idx.create_index (tfrecord 1.14.6 from PyPI).
    let data = std::fs::read(testdata("ref/examples.tfrecord")).unwrap();
    let python = std::fs::read(testdata("index/examples.tfrecord.tfindex")).unwrap();
    let index = Index::build(&data, Framing::TfRecord, true).unwrap();
    let mut ours = Vec::new();
    index.write_dali(&data, &mut ours).unwrap();
    assert_eq!(
        String::from_utf8(ours).unwrap(),
        String::from_utf8(python.clone()).unwrap()
    );
    let read = Index::read_dali(&python, &data, Framing::TfRecord).unwrap();
    assert_eq!(read.offsets(), index.offsets());
    assert_eq!(read.fingerprint(), index.fingerprint());
    // Against other data it is stale.
    let small = std::fs::read(testdata("ref/small.tfrecord")).unwrap();
    let err = Index::read_dali(&python, &small, Framing::TfRecord).unwrap_err();
    assert_eq!(err.kind().name(), "stale_index");
}

#[test]
fn interchange_round_trips() {
    for name in [
        "ref/examples.tfrecord",
        "ref/ofrecord.part-0",
        "ref/sequence_examples.tfrecord",
        "ref/empty.tfrecord",
    ] {
        let file = open(&testdata(name));
        let data = file.bytes();
        let framing = file.framing();
        let index = Index::build(data, framing, false).unwrap();
        for format in [IndexFormat::Native, IndexFormat::Dali, IndexFormat::Lirs] {
            let mut out = Vec::new();
            index.write_as(format, data, &mut out).unwrap();
            let back = Index::read_as(format, Bytes::from(out.clone()), data, framing).unwrap();
            assert_eq!(back, index, "{name} as {format}");
            // And written again: the same bytes.
            let mut again = Vec::new();
            back.write_as(format, data, &mut again).unwrap();
            assert_eq!(again, out, "{name} as {format}");
        }
        // The raw table is exactly the starts.
        let mut raw = Vec::new();
        index.write_lirs(&mut raw).unwrap();
        assert_eq!(raw.len() as u64, 8 * index.len());
        // Raw table of another file: stale.
        if !index.is_empty() {
            let other = std::fs::read(testdata("ref/small.tfrecord")).unwrap();
            let err = Index::read_lirs(&raw, &other, Framing::TfRecord).unwrap_err();
            assert_eq!(err.kind().name(), "stale_index", "{name}");
        }
    }
    // Through the padded file: pads are not listed, and reading it back agrees.
    let data = padded_small();
    let index = Index::build(&data, Framing::TfRecord, false).unwrap();
    let mut text = Vec::new();
    index.write_dali(&data, &mut text).unwrap();
    assert_eq!(
        text.split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count(),
        10
    );
    assert!(String::from_utf8_lossy(&text)
        .lines()
        .all(|l| l.ends_with(" 143")));
    assert_eq!(
        Index::read_dali(&text, &data, Framing::TfRecord).unwrap(),
        index
    );
}
