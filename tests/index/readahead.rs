//! Order-driven readahead (`index::Readahead`): which advice it gives, and
//! that the advice reaches a mapped file.
//!
//! A recording [`Advise`] shows the calls themselves: the order's kind once
//! (`random` for a shuffled order, `sequential` for file order), then
//! `will_need` for the frames of the ids, merged within a page or the next,
//! ids past the end left out, and the first error returned after every range
//! was tried. On Linux, `/proc/self/smaps` shows that the advice was applied
//! to the map of a `RecordFile` (the `rr` / `sr` flags of `MADV_RANDOM` /
//! `MADV_SEQUENTIAL`), and a file read into memory takes advice as a no-op.

#![allow(clippy::unwrap_used)]

use std::cell::RefCell;
use std::io;
use std::ops::Range;

use recordwire::frame::{file_of, Framing};
use recordwire::index::{Advise, Index, Readahead};
#[cfg(target_os = "linux")]
use recordwire::io::{OpenOptions, RecordFile};

/// A TFRecord file of `n` records of 100 bytes (116-byte frames).
fn data(n: usize) -> Vec<u8> {
    let records: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; 100]).collect();
    file_of(Framing::TfRecord, records.iter().map(|r| &r[..]))
}

/// One call of the [`Advise`] trait.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Call {
    Random,
    Sequential,
    WillNeed(Range<usize>),
}

/// Records the advice it is given; `will_need` fails for the ranges that
/// start at one of `fail_at`.
#[derive(Default)]
struct Recorder {
    calls: RefCell<Vec<Call>>,
    fail_at: Vec<usize>,
}

impl Advise for Recorder {
    fn will_need(&self, range: Range<usize>) -> io::Result<()> {
        let start = range.start;
        self.calls.borrow_mut().push(Call::WillNeed(range));
        if self.fail_at.contains(&start) {
            return Err(io::Error::other(format!("will_need at {start}")));
        }
        Ok(())
    }

    fn random(&self) -> io::Result<()> {
        self.calls.borrow_mut().push(Call::Random);
        Ok(())
    }

    fn sequential(&self) -> io::Result<()> {
        self.calls.borrow_mut().push(Call::Sequential);
        Ok(())
    }
}

impl Recorder {
    fn take(&self) -> Vec<Call> {
        std::mem::take(&mut self.calls.borrow_mut())
    }
}

/// The frame of record `id` as a `will_need` call, or of records `a..=b`.
fn frames(index: &Index, a: u64, b: u64) -> Call {
    let start = index.frame_range(a).unwrap().start;
    let end = index.frame_range(b).unwrap().end;
    Call::WillNeed(start as usize..end as usize)
}

#[test]
fn readahead_advises_the_order_kind_once_then_the_frames() {
    let data = data(300);
    let index = Index::build(&data, Framing::TfRecord, false).unwrap();
    assert_eq!(index.frame_range(5), Some(580..696), "116-byte frames");

    // Shuffled: `random` once, then the frames in the order given; 5, 6, 7
    // touch each other and merge; 100000 is past the end.
    let map = Recorder::default();
    let mut ra = Readahead::new(true);
    ra.advise(&index, &map, &[299, 5, 6, 7, 150, 100000])
        .unwrap();
    assert_eq!(
        map.take(),
        [
            Call::Random,
            frames(&index, 299, 299),
            frames(&index, 5, 7),
            frames(&index, 150, 150),
        ]
    );
    // The next call does not repeat the order's kind.
    ra.advise(&index, &map, &[8]).unwrap();
    assert_eq!(map.take(), [frames(&index, 8, 8)]);

    // File order: `sequential`; records 0..=3 are in the first page, 40 in
    // the second (4096 / 116 = 35.3 frames a page), so they merge; 200 is
    // far away.
    let mut seq = Readahead::new(false).with_page_size(4096);
    seq.advise(&index, &map, &[0, 1, 2, 3, 40, 200]).unwrap();
    assert_eq!(
        map.take(),
        [
            Call::Sequential,
            frames(&index, 0, 40),
            frames(&index, 200, 200)
        ]
    );

    // Nothing to advise but the kind: no `will_need`.
    let mut empty = Readahead::new(true);
    empty.advise(&index, &map, &[300, u64::MAX]).unwrap();
    assert_eq!(map.take(), [Call::Random]);
}

#[test]
fn readahead_returns_the_first_error_after_trying_every_range() {
    let data = data(300);
    let index = Index::build(&data, Framing::TfRecord, false).unwrap();
    let at = |id: u64| index.frame_range(id).unwrap().start as usize;
    // Records two pages apart or more (35.3 frames a page): a range each.
    let map = Recorder {
        fail_at: vec![at(75), at(225)],
        ..Recorder::default()
    };
    let err = Readahead::new(false)
        .advise(&index, &map, &[0, 75, 150, 225, 299])
        .unwrap_err();
    assert_eq!(err.to_string(), format!("will_need at {}", at(75)));
    assert_eq!(
        map.take(),
        [
            Call::Sequential,
            frames(&index, 0, 0),
            frames(&index, 75, 75),
            frames(&index, 150, 150),
            frames(&index, 225, 225),
            frames(&index, 299, 299),
        ]
    );
}

/// The `VmFlags` of the mapping of this process that holds `addr`, from
/// `/proc/self/smaps`.
#[cfg(target_os = "linux")]
fn vm_flags(addr: usize) -> Vec<String> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("read /proc/self/smaps");
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or_default();
        if let Some((start, end)) = first.split_once('-') {
            if let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            ) {
                inside = (start..end).contains(&addr);
                continue;
            }
        }
        if inside {
            if let Some(flags) = line.strip_prefix("VmFlags:") {
                return flags.split_whitespace().map(str::to_owned).collect();
            }
        }
    }
    panic!("no mapping with VmFlags holds {addr:#x} in /proc/self/smaps");
}

/// Advice reaches the map of a mapped `RecordFile`: the kernel marks it
/// `rr` (`MADV_RANDOM`) for a shuffled order and `sr` (`MADV_SEQUENTIAL`)
/// for file order, and neither before; `will_need` clamps its range to the
/// map. A file read into memory has no map and takes advice without error.
#[cfg(target_os = "linux")]
#[test]
fn readahead_advises_a_mapped_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.tfrecord");
    std::fs::write(&path, data(300)).unwrap();
    let opts = OpenOptions::default().with_framing(Some(Framing::TfRecord));
    for (shuffled, flag) in [(true, "rr"), (false, "sr")] {
        let file = RecordFile::open(&path, &opts).unwrap();
        assert!(file.is_mapped(), "{path:?} is mapped");
        let index = Index::build(file.bytes(), Framing::TfRecord, false).unwrap();
        let addr = file.bytes().as_ptr() as usize;
        let before = vm_flags(addr);
        assert!(
            !before.iter().any(|f| f == "rr" || f == "sr"),
            "advice before advising: {before:?}"
        );
        Readahead::new(shuffled)
            .advise(&index, &file, &[299, 5, 6, 7, 150])
            .unwrap();
        let after = vm_flags(addr);
        assert!(
            after.iter().any(|f| f == flag),
            "shuffled {shuffled}: no {flag} in {after:?}"
        );
        // Ranges past the end of the map are clamped (madvise would refuse
        // them), and empty or reversed ranges are no-ops.
        file.will_need(0..usize::MAX).unwrap();
        #[allow(clippy::reversed_empty_ranges)]
        file.will_need(10..5).unwrap();
        file.will_need(file.len()..file.len() + 10).unwrap();
    }

    let read = RecordFile::open(&path, &opts.with_mmap(false)).unwrap();
    assert!(!read.is_mapped() && read.mmap().is_none());
    let index = Index::build(read.bytes(), Framing::TfRecord, false).unwrap();
    Readahead::new(true)
        .advise(&index, &read, &[299, 5, 6, 7, 150])
        .unwrap();
}

/// A shard, and so a dataset and `get`, reads by id: it opens advised for
/// random access (`rr`), whichever way it found its index, and takes
/// sequential advice (`sr`) when asked.
#[cfg(target_os = "linux")]
#[test]
fn a_shard_opens_advised_for_random_access() {
    use recordwire::dataset::{Dataset, Shard};
    use recordwire::index::Access;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.tfrecord");
    std::fs::write(&path, data(300)).unwrap();
    let opts = OpenOptions::default();
    let flags_of = |shard: &Shard| vm_flags(shard.bytes().unwrap().as_ptr() as usize);
    // Index built in memory, then from the sidecar, then given.
    let built = Shard::open(&path, &opts).unwrap();
    assert!(
        flags_of(&built).iter().any(|f| f == "rr"),
        "{:?}",
        flags_of(&built)
    );
    built
        .index()
        .write_native_file(recordwire::index::sidecar_path(&path))
        .unwrap();
    let from_sidecar = Shard::open(&path, &opts).unwrap();
    assert_eq!(
        from_sidecar.origin(),
        &recordwire::dataset::IndexOrigin::Sidecar
    );
    assert!(flags_of(&from_sidecar).iter().any(|f| f == "rr"));
    let file = RecordFile::open(&path, &opts).unwrap();
    let index = Index::build(file.bytes(), Framing::TfRecord, false).unwrap();
    let given_path = dir.path().join("given.rwindex");
    index.write_native_file(&given_path).unwrap();
    let given = Shard::open_with(&path, &opts, Some(&given_path)).unwrap();
    assert_eq!(given.origin(), &recordwire::dataset::IndexOrigin::Given);
    assert!(flags_of(&given).iter().any(|f| f == "rr"));
    given.advise(Access::Sequential).unwrap();
    let flags = flags_of(&given);
    assert!(
        flags.iter().any(|f| f == "sr") && !flags.iter().any(|f| f == "rr"),
        "{flags:?}"
    );

    let dataset = Dataset::open([&path, &path], &opts).unwrap();
    dataset.advise(Access::Sequential).unwrap();
    for shard in dataset.shards() {
        assert!(flags_of(shard).iter().any(|f| f == "sr"));
    }
}
