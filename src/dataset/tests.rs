//! Datasets of compressed shards: read as the plain ones, and each
//! checkpoint span inflated once in a span-aware epoch.

use crate::encode::{RecordWriter, WriterOptions};
use crate::frame::{file_of, Framing};
use crate::io::Compression;
use crate::test_util::{gzip, records, zlib};

#[test]
fn one_dataset_of_plain_and_compressed_shards_reads_as_the_plain_one() {
    use crate::dataset::{Dataset, Scratch};
    use crate::order::{Mode, OrderSpec};
    let dir = tempfile::tempdir().unwrap();
    let (mut plain_paths, mut mixed_paths) = (Vec::new(), Vec::new());
    for k in 0..4 {
        let recs = records(300 + 100 * k, 2000, 10 + k as u64);
        let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
        let p = dir.path().join(format!("s{k}.tfrecord"));
        std::fs::write(&p, &plain).unwrap();
        // Plain, GZIP, block-compressed GZIP and ZLIB shards in one dataset.
        let (name, bytes) = match k {
            0 => ("m0.tfrecord", plain.clone()),
            1 => ("m1.tfrecord.gz", gzip(&plain, 6)),
            2 => {
                let mut w = RecordWriter::new(
                    Vec::new(),
                    WriterOptions::new(Framing::TfRecord).with_gzip_blocks(20_000),
                );
                for r in &recs {
                    w.write_record(r).unwrap();
                }
                ("m2.tfrecord.gz", w.finish().unwrap())
            }
            _ => ("m3.tfrecord.zz", zlib(&plain, 9)),
        };
        let m = dir.path().join(name);
        std::fs::write(&m, bytes).unwrap();
        plain_paths.push(p);
        mixed_paths.push(m);
    }
    let plain = Dataset::open(&plain_paths, &Default::default()).unwrap();
    let mixed = Dataset::open(&mixed_paths, &Default::default()).unwrap();
    assert_eq!(mixed.len(), plain.len());
    let kinds: Vec<_> = mixed.shards().iter().map(|s| s.compression()).collect();
    assert_eq!(
        kinds,
        [
            Compression::None,
            Compression::Gzip,
            Compression::Gzip,
            Compression::Zlib
        ]
    );
    assert!(mixed.shards()[2].gz_index().unwrap().is_block_compressed());
    assert!(!mixed.shards()[1].gz_index().unwrap().is_block_compressed());
    // Every id, backwards (each read restarts or continues a span).
    for id in (0..mixed.len()).rev() {
        let a = mixed.get(id).unwrap().unwrap();
        let b = plain.get(id).unwrap().unwrap();
        assert_eq!(
            (a.id, a.offset, &a.data),
            (b.id, b.offset, &b.data),
            "record {id}"
        );
    }
    assert!(mixed.get(mixed.len()).unwrap().is_none());
    let ids: Vec<u64> = vec![1799, 0, 450, 1799, 1000, 5000, 301, 1402, 700];
    let mut scratch = Scratch::new();
    let mut got = vec![None; ids.len()];
    mixed
        .get_many(&ids, &mut scratch, |pos, r| {
            got[pos] = Some(r.map(|r| (r.id, r.data)));
        })
        .unwrap();
    for (pos, &id) in ids.iter().enumerate() {
        let want = plain.get(id).unwrap().map(|r| (r.id, r.data));
        assert_eq!(got[pos], Some(want), "position {pos}");
    }
    for mode in [Mode::Shuffle, Mode::PageAware { page_size: 4096 }] {
        let spec = OrderSpec {
            mode,
            seed: 5,
            ..OrderSpec::default()
        };
        let a: Vec<u64> = mixed.order(spec).unwrap().epoch(1).iter().collect();
        let b: Vec<u64> = plain.order(spec).unwrap().epoch(1).iter().collect();
        assert_eq!(a, b, "{mode:?}");
    }
    // Records outlive the dataset, and move to another thread.
    let kept: Vec<_> = (0..mixed.len())
        .step_by(97)
        .map(|id| mixed.get(id).unwrap().unwrap())
        .collect();
    drop(mixed);
    let kept = std::thread::spawn(move || kept).join().unwrap();
    for r in kept {
        assert_eq!(r.data, plain.get(r.id).unwrap().unwrap().data);
    }
}

#[test]
fn a_compressed_shard_inflates_each_span_once_in_a_span_aware_epoch() {
    use crate::dataset::{Dataset, Shard};
    use crate::order::{Mode, OrderSpec};
    let dir = tempfile::tempdir().unwrap();
    let recs = records(5000, 700, 21);
    let plain = file_of(Framing::TfRecord, recs.iter().map(|r| &r[..]));
    let path = dir.path().join("a.tfrecord.gz");
    std::fs::write(&path, gzip(&plain, 6)).unwrap();
    let shard = Shard::open(&path, &Default::default()).unwrap();
    let spans = shard.gz_index().unwrap().checkpoints().len() as u64;
    assert!(spans > 1, "{spans} checkpoints");
    let dataset = Dataset::from_shards(vec![shard]);
    let spec = OrderSpec {
        mode: Mode::PageAware { page_size: 0 },
        seed: 9,
        ..OrderSpec::default()
    };
    for id in dataset.order(spec).unwrap().epoch(0).iter() {
        let r = dataset.get(id).unwrap().unwrap();
        assert_eq!(r.data, recs[id as usize][..]);
    }
    // Each span inflated once: one restart per span, and no more output
    // than the stream (windows are not counted).
    let source = dataset.shards()[0].gz_source().unwrap();
    // (A record that crosses into the next span is inflated with its own.)
    assert!(source.restarts() <= spans, "{} restarts", source.restarts());
    let most = plain.len() as u64 + spans * 720;
    assert!(
        (plain.len() as u64..=most).contains(&source.inflated()),
        "{} bytes inflated for {}",
        source.inflated(),
        plain.len()
    );
    assert!(
        source.held() <= 8 * (2 << 20),
        "{} bytes kept",
        source.held()
    );
}
