//! The loader against the order and the batch decoder: every id once per
//! epoch in the order's sequence, batches equal to a plain decode of the
//! same ids, resume, errors in place, threads stopped, and the pool.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{LoadedBatch, Loader, LoaderError, LoaderOptions, LoaderState};
use crate::batch::{Batch, DType, Decoder, FeatureSpec, Spec};
use crate::dataset::Dataset;
use crate::encode::{Example, Feature, Features, RecordWriter, WriterOptions};
use crate::frame::Framing;
use crate::io::OpenOptions;
use crate::order::{Mode, OrderSpec, Tail};

/// Record `i`: its label `i`, `i % 5` tokens, and an image of `8 + i % 3` bytes.
fn record(i: i64) -> Vec<u8> {
    let features: Features = [
        ("label", Feature::Int64(vec![i])),
        (
            "tokens",
            Feature::Int64((0..i % 5).map(|t| t * 1000 + i).collect()),
        ),
        (
            "image",
            Feature::Bytes(vec![vec![i as u8; 8 + (i % 3) as usize]]),
        ),
    ]
    .into_iter()
    .collect();
    Example::with_features(features).to_bytes().unwrap()
}

/// Shards of `per_shard` records each, labels counting on across them.
fn write_shards(dir: &Path, shards: usize, per_shard: i64, gzip: bool) -> Vec<PathBuf> {
    (0..shards)
        .map(|s| {
            let path = dir.join(format!(
                "part-{s}.tfrecord{}",
                if gzip { ".gz" } else { "" }
            ));
            let mut opts = WriterOptions::new(Framing::TfRecord);
            if gzip {
                opts = opts.with_gzip_blocks(4096);
            }
            let mut w = RecordWriter::create(&path, opts).unwrap();
            for i in 0..per_shard {
                w.write_record(&record(s as i64 * per_shard + i)).unwrap();
            }
            w.finish().unwrap();
            path
        })
        .collect()
}

fn spec() -> Spec {
    Spec::example(vec![
        FeatureSpec::fixed_len("label", DType::Int64, &[]),
        FeatureSpec::var_len("tokens", DType::Int64),
        FeatureSpec::fixed_len("image", DType::Bytes, &[]).borrowed(),
    ])
    .unwrap()
}

fn open(paths: &[PathBuf]) -> Arc<Dataset> {
    Arc::new(Dataset::open(paths, &OpenOptions::default()).unwrap())
}

/// The batch a plain decode of `ids` gives.
fn plain(ds: &Dataset, ids: &[u64], spec: &Spec) -> Batch<'static> {
    let mut batch = Batch::new();
    if ds.all_in_memory() {
        Decoder::new(1)
            .decode_ids_owned(ds, ids, spec, &mut batch)
            .unwrap();
    } else {
        let records: Vec<_> = ids.iter().map(|&id| ds.get(id).unwrap().unwrap()).collect();
        Decoder::new(1)
            .decode_owned(&records, spec, &mut batch)
            .unwrap();
    }
    batch
}

fn modes() -> [Mode; 4] {
    [
        Mode::Sequential,
        Mode::Shuffle,
        Mode::PageAware { page_size: 256 },
        Mode::QuasiRandom {
            page_size: 256,
            window: 3,
        },
    ]
}

/// One epoch of `loader`, checked batch by batch against the order and a
/// plain decode; returns the ids delivered.
fn check_epoch(loader: &mut Loader, epoch: u64, batch_size: usize) -> Vec<u64> {
    let order = loader.order().clone();
    let expected: Vec<u64> = order.epoch(epoch).iter().collect();
    let spec = loader.spec().clone();
    let ds = Arc::clone(loader.dataset());
    let mut ids = Vec::new();
    let mut n = 0;
    for b in &mut *loader {
        let b: LoadedBatch = b.unwrap();
        assert_eq!((b.epoch(), b.index()), (epoch, n));
        let want = &expected[ids.len()..(ids.len() + batch_size).min(expected.len())];
        assert_eq!(b.ids(), want, "batch {n} of epoch {epoch}");
        assert!(
            *b == plain(&ds, want, &spec),
            "batch {n} differs from a plain decode"
        );
        ids.extend_from_slice(b.ids());
        n += 1;
    }
    assert_eq!(n, loader.len());
    assert_eq!(ids, expected);
    ids
}

#[test]
fn every_id_of_every_rank_once_per_epoch_in_the_orders_sequence() {
    let dir = tempfile::tempdir().unwrap();
    for gzip in [false, true] {
        let sub = dir.path().join(if gzip { "gz" } else { "plain" });
        std::fs::create_dir(&sub).unwrap();
        let paths = write_shards(&sub, 3, 70, gzip);
        let ds = open(&paths);
        assert_eq!(ds.all_in_memory(), !gzip);
        for mode in modes() {
            for threads in [1, 4] {
                let mut all = Vec::new();
                let mut lens = Vec::new();
                for rank in 0..4 {
                    let order = OrderSpec {
                        mode,
                        seed: 7,
                        rank,
                        world: 4,
                        ..OrderSpec::default()
                    };
                    let opts = LoaderOptions::new(16)
                        .order(order)
                        .threads(threads)
                        .prefetch(2);
                    let mut loader = Loader::new(Arc::clone(&ds), spec(), opts).unwrap();
                    for epoch in 0..2 {
                        let ids = check_epoch(&mut loader, epoch, 16);
                        if epoch == 0 {
                            lens.push(ids.len());
                            all.extend(ids);
                        }
                    }
                    assert_eq!(
                        loader.running_threads(),
                        0,
                        "the threads stop at the epoch's end"
                    );
                }
                // Equal lengths (the order pads), and together every id.
                assert!(lens.iter().all(|&l| l == lens[0]), "{lens:?}");
                all.sort_unstable();
                all.dedup();
                assert_eq!(
                    all,
                    (0..210).collect::<Vec<u64>>(),
                    "{mode:?} gzip={gzip} threads={threads}"
                );
            }
        }
    }
}

#[test]
fn drop_last_leaves_out_the_short_batch() {
    let dir = tempfile::tempdir().unwrap();
    let ds = open(&write_shards(dir.path(), 1, 50, false));
    let mut keep = Loader::new(Arc::clone(&ds), spec(), LoaderOptions::new(16)).unwrap();
    let mut drop = Loader::new(ds, spec(), LoaderOptions::new(16).drop_last(true)).unwrap();
    assert_eq!((keep.len(), drop.len()), (4, 3));
    let sizes: Vec<usize> = (&mut keep).map(|b| b.unwrap().rows()).collect();
    assert_eq!(sizes, [16, 16, 16, 2]);
    let sizes: Vec<usize> = (&mut drop).map(|b| b.unwrap().rows()).collect();
    assert_eq!(sizes, [16, 16, 16]);
}

#[test]
fn a_resumed_loader_yields_exactly_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let ds = open(&write_shards(dir.path(), 2, 100, false));
    let opts = LoaderOptions::new(8).threads(3).order(OrderSpec {
        mode: Mode::Shuffle,
        seed: 3,
        ..OrderSpec::default()
    });
    let mut whole = Loader::new(Arc::clone(&ds), spec(), opts).unwrap();
    whole.set_epoch(2);
    let all: Vec<Vec<u64>> = (&mut whole).map(|b| b.unwrap().ids().to_vec()).collect();
    for k in [0, 1, 11, 24, 25] {
        let mut first = Loader::new(Arc::clone(&ds), spec(), opts).unwrap();
        first.set_epoch(2);
        for _ in 0..k {
            first.next().unwrap().unwrap();
        }
        let state = first.state();
        assert_eq!(
            state,
            LoaderState {
                epoch: 2,
                batch: k as u64
            }
        );
        drop(first);
        let mut resumed = Loader::new(Arc::clone(&ds), spec(), opts).unwrap();
        resumed.resume(state).unwrap();
        let rest: Vec<Vec<u64>> = (&mut resumed).map(|b| b.unwrap().ids().to_vec()).collect();
        assert_eq!(rest, all[k..], "resumed after {k} batches");
        assert_eq!(resumed.state(), LoaderState { epoch: 3, batch: 0 });
    }
    let mut past = Loader::new(ds, spec(), opts).unwrap();
    assert_eq!(
        past.resume(LoaderState {
            epoch: 0,
            batch: 26
        }),
        Err(LoaderError::StateOutOfRange { batch: 26, len: 25 })
    );
}

#[test]
fn a_damaged_record_fails_its_batch_after_the_ones_before_and_stops_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_shards(dir.path(), 1, 100, false).remove(0);
    // Record 57's data CRC: flip a byte of its payload.
    let ds = open(std::slice::from_ref(&path));
    let victim = ds.get(57).unwrap().unwrap();
    drop(ds);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[victim.data_offset as usize + 3] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let ds = open(std::slice::from_ref(&path));
    for threads in [1, 4] {
        let opts = LoaderOptions::new(10).threads(threads).order(OrderSpec {
            mode: Mode::Sequential,
            ..OrderSpec::default()
        });
        let mut loader = Loader::new(Arc::clone(&ds), spec(), opts).unwrap();
        for k in 0..5 {
            let b = loader.next().unwrap().unwrap();
            assert_eq!(b.ids()[0], k * 10);
        }
        let err = loader.next().unwrap().unwrap_err();
        assert_eq!(err.kind().name(), "data_crc_mismatch", "{err}");
        assert_eq!(err.record(), Some(57), "{err}");
        assert_eq!(err.offset(), Some(victim.offset), "{err}");
        assert!(err.file().unwrap().ends_with("part-0.tfrecord"), "{err}");
        assert_eq!(loader.running_threads(), 0, "the run stopped at the error");
        // The position moved past the failed batch: the next is batch 6.
        assert_eq!(loader.state().batch, 6);
        let next = loader.next().unwrap().unwrap();
        assert_eq!(next.ids()[0], 60);
        loader.close();
        assert_eq!(loader.running_threads(), 0);
    }
}

#[test]
fn a_warm_epoch_makes_no_new_batch_memory() {
    let dir = tempfile::tempdir().unwrap();
    let ds = open(&write_shards(dir.path(), 2, 256, false));
    // Fixed-size columns only, so every batch fits any warm one.
    let spec = Spec::example(vec![
        FeatureSpec::fixed_len("label", DType::Int64, &[]),
        FeatureSpec::fixed_len("image", DType::Bytes, &[]).borrowed(),
    ])
    .unwrap();
    let opts = LoaderOptions::new(32)
        .threads(2)
        .prefetch(3)
        .drop_last(true);
    let mut loader = Loader::new(ds, spec, opts).unwrap();
    // A loop that keeps the last batch while it takes the next holds two
    // when `next` returns, with the window's batches (prefetch + readers)
    // being made ahead: let the cold epoch reach that, so that it made
    // every batch such a loop needs (the pool keeps that many).
    let most = 3 + 2 + 2;
    let wait_for = |loader: &Loader, made: u64| {
        let since = std::time::Instant::now();
        while loader.pool_stats().made < made {
            assert!(since.elapsed().as_secs() < 30, "{:?}", loader.pool_stats());
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    };
    let first = loader.next().unwrap().unwrap();
    wait_for(&loader, most - 1);
    let second = loader.next().unwrap().unwrap();
    wait_for(&loader, most);
    let mut rows = first.rows() + second.rows();
    drop(first);
    let mut held = Some(second);
    for b in loader.by_ref() {
        let b = b.unwrap();
        rows += b.rows();
        held = Some(b);
    }
    drop(held);
    assert_eq!(rows, 512);
    let cold = loader.pool_stats();
    assert_eq!(cold.made, most, "{cold:?}");
    assert!(cold.grown_bytes > 0, "{cold:?}");
    for _ in 0..3 {
        let mut held = None;
        for b in &mut loader {
            held = Some(b.unwrap());
        }
        drop(held);
    }
    let warm = loader.pool_stats();
    assert_eq!(
        warm.made, cold.made,
        "warm epochs made batches: {cold:?} -> {warm:?}"
    );
    assert_eq!(
        warm.grown_bytes, cold.grown_bytes,
        "warm epochs grew memory: {cold:?} -> {warm:?}"
    );
    assert_eq!(
        warm.reused - cold.reused,
        3 * 16,
        "every batch of the warm epochs was a reused one"
    );
    assert_eq!(warm.dropped, 0, "{warm:?}");
}

#[test]
fn holding_more_batches_than_the_pool_keeps_grows_it_and_memory_comes_back_down() {
    let dir = tempfile::tempdir().unwrap();
    let ds = open(&write_shards(dir.path(), 1, 400, false));
    let opts = LoaderOptions::new(10).threads(2).prefetch(2);
    let mut loader = Loader::new(ds, spec(), opts).unwrap();
    let keep = 2 + 2 + 2; // prefetch + readers + 2
                          // Hold every batch of the epoch: far more than the pool keeps.
    let held: Vec<LoadedBatch> = (&mut loader).map(|b| b.unwrap()).collect();
    assert_eq!(held.len(), 40);
    let mut labels: Vec<i64> = held
        .iter()
        .flat_map(|b| b.column("label").unwrap().values::<i64>().unwrap().to_vec())
        .collect();
    labels.sort_unstable();
    assert_eq!(
        labels,
        (0..400).collect::<Vec<i64>>(),
        "every held batch kept its own values"
    );
    let stats = loader.pool_stats();
    assert!(stats.made >= 40, "the pool grew: {stats:?}");
    drop(held);
    let stats = loader.pool_stats();
    assert_eq!(stats.free, keep, "{stats:?}");
    assert!(stats.dropped >= 40 - keep, "{stats:?}");
}

#[test]
fn close_and_drop_stop_the_threads_mid_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let ds = open(&write_shards(dir.path(), 1, 300, false));
    let mut loader = Loader::new(ds, spec(), LoaderOptions::new(4).threads(3).prefetch(2)).unwrap();
    let first = loader.next().unwrap().unwrap();
    assert_eq!(loader.thread_counts(), (3, 3));
    loader.close();
    assert_eq!(loader.running_threads(), 0);
    // The batch delivered before stays valid, and the loader goes on.
    assert_eq!(first.rows(), 4);
    assert_eq!(loader.state().batch, 1);
    let second = loader.next().unwrap().unwrap();
    assert_eq!(second.index(), 1);
}

#[test]
fn options_that_cannot_work_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ds = open(&write_shards(dir.path(), 1, 10, false));
    let err = Loader::new(Arc::clone(&ds), spec(), LoaderOptions::new(0)).unwrap_err();
    assert_eq!(err.to_string(), "batch_size must be at least 1");
    let err = Loader::new(Arc::clone(&ds), spec(), LoaderOptions::new(4).prefetch(0)).unwrap_err();
    assert_eq!(err, LoaderError::Zero("prefetch"));
    let bad_rank = OrderSpec {
        rank: 4,
        world: 4,
        tail: Tail::Pad,
        ..OrderSpec::default()
    };
    let err = Loader::new(ds, spec(), LoaderOptions::new(4).order(bad_rank)).unwrap_err();
    assert!(matches!(err, LoaderError::Order(_)), "{err:?}");
}
