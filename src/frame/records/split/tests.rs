//! The split walk against the one-thread walk: the same items, in the same
//! order, for every part size down to one byte, 1 to 4 threads, both
//! policies it splits, on damaged input of every kind and on the hostile
//! files of `testdata/bad/`.

use std::ops::ControlFlow;

use super::*;
use crate::frame::pad::pad_frame;
use crate::frame::{file_of, records, ReadOptions};

/// An item as compared: the record (id, offset, data offset, end, data) or
/// the error's text (kind, file, record, offset).
type Item = Result<Fields, String>;

/// A record's id, offset, data offset, end and data.
type Fields = (u64, u64, u64, u64, Vec<u8>);

fn item(it: Result<Record<'_>, Error>, shift: u64) -> Item {
    shifted(
        it.map(|r| (r.id, r.offset, r.data_offset, r.end, r.data.to_vec())),
        shift,
    )
}

fn shifted(it: Result<Fields, Error>, shift: u64) -> Item {
    match it {
        Ok((id, o, d, e, data)) => Ok((id + shift, o, d, e, data)),
        Err(e) => {
            let id = e.record().map(|id| id + shift);
            let e = match id {
                Some(id) => e.with_record(id),
                None => e,
            };
            Err(format!("{e} [{:?}]", e.record()))
        }
    }
}

#[derive(Default)]
struct Collect(Vec<Result<Fields, Error>>);

impl PartVisitor for Collect {
    fn visit(&mut self, it: Result<Record<'_>, Error>) {
        self.0
            .push(it.map(|r| (r.id, r.offset, r.data_offset, r.end, r.data.to_vec())));
    }
}

fn one_thread(buf: &[u8], opts: ReadOptions) -> Vec<Item> {
    records(buf, Framing::TfRecord, opts)
        .with_file("f")
        .map(|it| item(it, 0))
        .collect()
}

/// The split walk's items, and the parts `sink` was given (checked to tile
/// what was walked).
fn split(buf: &[u8], opts: ReadOptions, threads: usize, part: usize) -> Vec<Item> {
    let mut walker = Walker::new(Framing::TfRecord, opts, 0, 0);
    walker.set_file(Some("f".into()));
    let mut out = Vec::new();
    let mut at = 0;
    walk_split(
        buf,
        &walker,
        Split {
            threads,
            part: Some(part),
        },
        Collect::default,
        |c, shift, end| {
            assert_eq!(end.start, at, "parts tile the walk");
            at = end.end;
            out.extend(c.0.into_iter().map(|it| shifted(it, shift)));
            ControlFlow::Continue(())
        },
    );
    out
}

fn policies() -> [ReadOptions; 3] {
    [
        ReadOptions::default(),
        ReadOptions::default().with_policy(ErrorPolicy::Skip { max_errors: None }),
        // Not split (the walk stops after the errors before): one thread.
        ReadOptions::default().with_policy(ErrorPolicy::Skip {
            max_errors: Some(2),
        }),
    ]
}

fn check(buf: &[u8], threads: &[usize], parts: impl IntoIterator<Item = usize> + Clone) {
    for opts in policies() {
        let want = one_thread(buf, opts);
        for &threads in threads {
            for part in parts.clone() {
                let got = split(buf, opts, threads, part);
                assert_eq!(
                    got, want,
                    "{threads} threads, parts of {part} bytes, {:?}",
                    opts.policy
                );
            }
        }
    }
}

/// Frames of many lengths, some holding what looks like a frame header.
fn frames(n: usize) -> Vec<u8> {
    let mut datas: Vec<Vec<u8>> = (0..n)
        .map(|i| (0..(i * 37 % 300)).map(|j| (i * 7 + j) as u8).collect())
        .collect();
    // A whole frame inside a record's data: a header the search finds that
    // is not a frame of the file.
    datas[3] = file_of(Framing::TfRecord, [&b"inner record"[..], b"two"]);
    let mut file = file_of(Framing::TfRecord, datas.iter().map(|d| &d[..]));
    file.extend(pad_frame(40, Framing::TfRecord).unwrap());
    file.extend(file_of(Framing::TfRecord, [&b"after the pad"[..]]));
    file
}

#[test]
fn clean_input_splits_at_every_part_size() {
    let file = frames(40);
    check(
        &file,
        &[1, 2, 3, 4],
        [1, 2, 5, 12, 13, 64, 100, 999, file.len(), 1 << 20],
    );
}

#[test]
fn damage_at_every_byte_splits_as_one_thread_walks() {
    let file = frames(12);
    for at in 0..file.len() {
        let mut bad = file.clone();
        bad[at] ^= 0x41;
        check(&bad, &[3], [7, 333]);
    }
}

#[test]
fn cut_short_anywhere_splits_as_one_thread_walks() {
    let file = frames(10);
    for keep in (0..file.len()).step_by(3) {
        check(&file[..keep], &[2], [5, 64]);
    }
}

#[test]
fn sink_breaking_stops_the_walk() {
    let file = frames(40);
    let walker = Walker::new(Framing::TfRecord, ReadOptions::default(), 0, 0);
    let mut parts = 0;
    walk_split(
        &file,
        &walker,
        Split {
            threads: 3,
            part: Some(100),
        },
        Collect::default,
        |_, _, _| {
            parts += 1;
            if parts == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    assert_eq!(parts, 2);
}

#[test]
fn hostile_files_split_as_one_thread_walks() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("tfrecord") {
            continue;
        }
        let buf = std::fs::read(&path).unwrap();
        check(&buf, &[1, 2, 4], [1, 3, 16, 100]);
        seen += 1;
    }
    assert!(seen >= 6, "the hostile TFRecord files: {seen}");
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(crate::test_util::proptest_config())]

        #[test]
        fn random_damage_splits_as_one_thread_walks(
            datas in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..30),
            flips in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 0..6),
            part in 1usize..400,
            threads in 2usize..5,
        ) {
            let mut file = file_of(Framing::TfRecord, datas.iter().map(|d| &d[..]));
            if !file.is_empty() {
                for (at, x) in flips {
                    let i = at.index(file.len());
                    file[i] ^= x;
                }
            }
            for opts in policies() {
                prop_assert_eq!(split(&file, opts, threads, part), one_thread(&file, opts));
            }
        }
    }
}

#[test]
fn a_panic_in_the_sink_reaches_the_caller_without_a_hang() {
    let file = frames(40);
    let walker = Walker::new(Framing::TfRecord, ReadOptions::default(), 0, 0);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        walk_split(
            &file,
            &walker,
            Split {
                threads: 2,
                part: Some(50),
            },
            Collect::default,
            |_, shift, _| {
                assert!(shift < 3, "a sink that fails");
                ControlFlow::Continue(())
            },
        );
    }));
    assert!(caught.is_err());
}
