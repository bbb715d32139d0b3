//! Page-aware padding (docs/FORMAT.md §7.5): after `pack --pad-to-page`, `cat` gives the
//! same records, `verify` passes, no record smaller than a page crosses a
//! page boundary, indexes never list pads, and `inspect` reports their cost.

#![allow(clippy::unwrap_used)]

use recordwire::encode::{RecordWriter, WriterOptions};
use recordwire::frame::{records, Framing, ReadOptions};
use recordwire::index::{is_pad, Index};

use crate::support::cli;
use cli::run;

/// Record sizes from a fixed xorshift sequence: mostly small, some larger
/// than a page.
fn sizes(n: usize, seed: u64, page: usize) -> Vec<usize> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 10 {
                0 => page + (x as usize >> 8) % (2 * page),
                _ => (x as usize >> 8) % (page / 2),
            }
        })
        .collect()
}

fn check_layout(framing: Framing, page: usize, seed: u64) {
    let payloads: Vec<Vec<u8>> = sizes(300, seed, page)
        .into_iter()
        .enumerate()
        .map(|(i, n)| vec![(i % 251) as u8; n])
        .collect();
    let opts = WriterOptions::new(framing).with_pad_to_page(Some(page as u64));
    let mut w = RecordWriter::new(Vec::new(), opts);
    for p in &payloads {
        w.write_record(p).unwrap();
    }
    let (pads, pad_bytes) = w.pads();
    let file = w.finish().unwrap();
    assert!(pads > 0, "this corpus needs padding");
    // Readers skip the pads: the same records, in order, ids 0..n.
    let got: Vec<_> = records(&file, framing, ReadOptions::default())
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(got.len(), payloads.len());
    for (i, (r, p)) in got.iter().zip(&payloads).enumerate() {
        assert_eq!(r.id, i as u64);
        assert_eq!(r.data, &p[..]);
        let len = (r.end - r.offset) as usize;
        if len <= page {
            assert_eq!(
                r.offset as usize / page,
                (r.end as usize - 1) / page,
                "record {i} ({len} bytes at {}) crosses a page boundary",
                r.offset
            );
        }
    }
    // Without skipping, the pads are valid frames that count as the bytes reported.
    let all: Vec<_> = records(&file, framing, ReadOptions::default().with_skip_pads(false))
        .map(|r| r.unwrap())
        .collect();
    let pad_frames: Vec<_> = all.iter().filter(|r| is_pad(r.data)).collect();
    assert_eq!(pad_frames.len() as u64, pads);
    assert_eq!(
        pad_frames.iter().map(|r| r.end - r.offset).sum::<u64>(),
        pad_bytes
    );
    assert_eq!(all.len() as u64, payloads.len() as u64 + pads);
    // Every standard reader decodes a pad as an empty message.
    for p in &pad_frames {
        let ex = recordwire::view::ExampleRef::parse(p.data, 0).unwrap();
        assert!(!ex.has_features().unwrap());
        assert!(recordwire::view::OfRecordRef::parse(p.data, 0)
            .unwrap()
            .features()
            .is_empty()
            .unwrap());
    }
    // The index never lists pads, and get(i) finds every record.
    let index = Index::build(&file, framing, true).unwrap();
    assert_eq!(index.len(), payloads.len() as u64);
    for (i, p) in payloads.iter().enumerate() {
        let r = index
            .get(&file, i as u64, &ReadOptions::default())
            .unwrap()
            .unwrap();
        assert_eq!(r.data, &p[..]);
    }
}

#[test]
fn no_small_record_crosses_a_page_and_pads_are_invisible() {
    for (framing, page, seed) in [
        (Framing::TfRecord, 4096, 1),
        (Framing::TfRecord, 512, 7),
        (Framing::OfRecord, 4096, 3),
        (Framing::OfRecord, 256, 11),
        (Framing::TfRecord, 64, 5),
    ] {
        check_layout(framing, page, seed);
    }
}

#[test]
fn pack_pad_to_page_then_cat_verify_inspect() {
    let dir = tempfile::tempdir().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let jsonl = format!("{root}/testdata/ref/examples.jsonl");
    let plain = format!("{root}/testdata/ref/examples.tfrecord");
    let padded = dir.path().join("padded.tfrecord");
    let padded = padded.to_str().unwrap();
    let (code, _, err) = run(&["pack", &jsonl, padded, "--pad-to-page", "4096"]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::metadata(padded).unwrap().len() > std::fs::metadata(&plain).unwrap().len());
    let (_, a, _) = run(&["cat", padded]);
    let (_, b, _) = run(&["cat", &plain]);
    assert_eq!(a, b, "the same records");
    let (code, out, err) = run(&["verify", padded]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let (code, out, _) = run(&["count", padded]);
    assert_eq!((code, out.trim()), (0, "40"));
    let (code, out, _) = run(&["inspect", padded]);
    assert_eq!(code, 0);
    assert!(out.contains("pad frames"), "{out}");
    let (_, out, _) = run(&["inspect", &plain]);
    assert!(!out.contains("pad frames"), "{out}");
    // a page smaller than 64 bytes is a usage error
    assert_eq!(run(&["pack", &jsonl, padded, "--pad-to-page", "16"]).0, 2);
}

/// Pad frames are visible to other readers (each is an empty record to
/// tf.data), so `pack` says how many it wrote and that only recordwire passes
/// over them, and `verify` counts them; a file without pads says nothing.
#[test]
fn pack_and_verify_say_how_many_pad_frames_other_readers_see() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("in.jsonl");
    let (code, small, err) = run(&["cat", "testdata/ref/small.tfrecord"]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(&jsonl, small.repeat(60)).unwrap();
    let out = dir.path().join("padded.tfrecord");
    let (jsonl, out) = (jsonl.to_str().unwrap(), out.to_str().unwrap());
    let (code, _, err) = run(&["pack", "--pad-to-page", "4096", jsonl, out]);
    assert_eq!(code, 0, "{err}");
    // What a reader that knows nothing of pads sees: every frame.
    let data = std::fs::read(out).unwrap();
    let frames = records(
        &data,
        Framing::TfRecord,
        ReadOptions::default().with_skip_pads(false),
    )
    .map(|r| r.unwrap())
    .collect::<Vec<_>>();
    let pads = frames.iter().filter(|r| is_pad(r.data)).count();
    assert_eq!(frames.len() - pads, 600);
    assert!(pads > 0, "the layout needs some pads");
    assert_eq!(
        err.trim_end(),
        format!(
            "note: {out}: {pads} pad frames written (--pad-to-page): recordwire's readers pass \
             over them, but other readers (tf.data, the tfrecord package, DALI) see each one as an \
             empty record"
        )
    );
    let (code, _, err) = run(&["verify", out]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "{out}: 600 valid records, 0 problems, {pads} pad frames (recordwire passes over them; \
             other readers see empty records)"
        )
    );
    // Without padding, neither says a word about it.
    let plain = dir.path().join("plain.tfrecord");
    let plain = plain.to_str().unwrap();
    let (code, _, err) = run(&["pack", jsonl, plain]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (_, _, err) = run(&["verify", plain]);
    assert_eq!(
        err.trim_end(),
        format!("{plain}: 600 valid records, 0 problems")
    );
}
