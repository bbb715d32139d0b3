//! `examples/train_loop.rs`, run on testdata/: every record once per epoch
//! in the order's sequence, the label mean the step sees is the dataset's,
//! ranks split an epoch in equal parts, and a run stopped mid-epoch and
//! resumed from its state delivers exactly the rest.

#![allow(clippy::unwrap_used)]

#[path = "../../examples/train_loop.rs"]
#[allow(dead_code)]
mod example;

use std::sync::Arc;

use example::{infer_spec, loader, open, train, Config, EpochRow, Trained};
use recordwire::batch::{Batch, Decoder, Form};
use recordwire::dataset::Dataset;
use recordwire::loader::LoaderState;

fn run(config: &Config) -> Trained {
    let dataset = open(&config.paths).expect("open the test files");
    let (spec, _notes) = infer_spec(&dataset, 1000).expect("infer a spec");
    let mut loader = loader(dataset, spec, config).expect("a loader");
    train(&mut loader, config, |_| {}).expect("train")
}

/// The order's ids of `epoch` for `config`'s rank.
fn expected(config: &Config, epoch: u64) -> Vec<u64> {
    let dataset = open(&config.paths).unwrap();
    let (spec, _) = infer_spec(&dataset, 1000).unwrap();
    let loader = loader(dataset, spec, config).unwrap();
    loader.order().epoch(epoch).iter().collect()
}

/// Every label of the dataset, decoded plainly, in id order.
fn labels(dataset: &Arc<Dataset>) -> Vec<i64> {
    let (spec, _) = infer_spec(dataset, 1000).unwrap();
    let ids: Vec<u64> = (0..dataset.len()).collect();
    let mut batch = Batch::new();
    Decoder::new(1)
        .decode_ids_owned(&**dataset, &ids, &spec, &mut batch)
        .unwrap();
    batch
        .column("label")
        .unwrap()
        .values::<i64>()
        .unwrap()
        .to_vec()
}

/// The ids of each epoch, the rows of the runs put together.
fn by_epoch(rows: &[&EpochRow], epochs: u64) -> Vec<Vec<u64>> {
    let mut ids = vec![Vec::new(); epochs as usize];
    for row in rows {
        ids[row.epoch as usize].extend_from_slice(&row.ids);
    }
    ids
}

#[test]
fn the_spec_is_inferred_from_both_shards() {
    let dataset = open(&Config::default().paths).unwrap();
    assert_eq!(dataset.len(), 15);
    let (spec, notes) = infer_spec(&dataset, 1000).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    // `label` is in every record, once: fixed_len []. `image` is in the
    // first shard only: var_len.
    let label = &spec.features()[spec.find("label").unwrap()];
    assert_eq!(
        label.form,
        Form::FixedLen {
            shape: vec![],
            default: None
        }
    );
    let image = &spec.features()[spec.find("image").unwrap()];
    assert_eq!(image.form, Form::VarLen);
}

#[test]
fn every_record_once_per_epoch_in_the_orders_sequence() {
    let dataset = open(&Config::default().paths).unwrap();
    let labels = labels(&dataset);
    let mean = labels.iter().sum::<i64>() as f64 / labels.len() as f64;
    for threads in [1, 4] {
        let config = Config {
            threads,
            seed: 3,
            ..Config::default()
        };
        let trained = run(&config);
        assert!(!trained.stopped);
        assert_eq!(trained.state, LoaderState { epoch: 3, batch: 0 });
        assert_eq!(trained.rows.len(), 3);
        for (e, row) in trained.rows.iter().enumerate() {
            assert_eq!((row.epoch, row.from_batch), (e as u64, 0));
            assert_eq!(row.batches, 4, "15 records in batches of 4");
            assert_eq!(row.ids, expected(&config, e as u64), "epoch {e}");
            let mut sorted = row.ids.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..15).collect::<Vec<u64>>(), "epoch {e}");
            let got = row.label_mean.expect("a label column");
            assert!((got - mean).abs() < 1e-9, "epoch {e}: {got} != {mean}");
        }
        // Each epoch its own shuffle.
        assert_ne!(trained.rows[0].ids, trained.rows[1].ids);
        assert_ne!(trained.rows[1].ids, trained.rows[2].ids);
    }
}

#[test]
fn ranks_split_each_epoch_in_equal_parts() {
    for page_size in [0, 256] {
        let mut all = Vec::new();
        for rank in 0..4 {
            let config = Config {
                rank,
                world: 4,
                page_size,
                epochs: 2,
                batch_size: 3,
                seed: 9,
                ..Config::default()
            };
            let trained = run(&config);
            assert_eq!(trained.rows.len(), 2);
            for row in &trained.rows {
                // 15 records, 4 ranks, padded: 4 each, in batches 3 + 1.
                assert_eq!(row.ids, expected(&config, row.epoch), "rank {rank}");
                assert_eq!((row.ids.len(), row.batches), (4, 2), "rank {rank}");
                if row.epoch == 1 {
                    all.extend_from_slice(&row.ids);
                }
            }
        }
        all.sort_unstable();
        all.dedup();
        assert_eq!(all, (0..15).collect::<Vec<u64>>(), "page size {page_size}");
    }
}

#[test]
fn a_run_resumed_from_its_state_delivers_exactly_the_rest() {
    let base = Config {
        seed: 11,
        threads: 2,
        ..Config::default()
    };
    let whole = run(&base);
    let want = by_epoch(&whole.rows.iter().collect::<Vec<_>>(), 3);
    // Mid-epoch (6 = epoch 1's batch 2), at an epoch's end (4), at the
    // first batch (1) and at the last (12).
    for stop_after in [6, 4, 1, 11, 12] {
        let first = run(&Config {
            stop_after: Some(stop_after),
            ..base.clone()
        });
        let delivered: u64 = first.rows.iter().map(|r| r.batches).sum();
        assert_eq!(delivered, stop_after);
        assert!(first.stopped);
        let state = first.state;
        assert_eq!(
            state,
            LoaderState {
                epoch: (stop_after - 1) / 4,
                batch: (stop_after - 1) % 4 + 1
            },
            "stopped after {stop_after}"
        );
        let rest = run(&Config {
            resume: Some(state),
            ..base.clone()
        });
        assert!(!rest.stopped);
        // The rest starts at the state's batch: not a record of the first
        // run again, none skipped.
        let first_rest = rest.rows.first().expect("a row");
        assert_eq!(
            (first_rest.epoch, first_rest.from_batch),
            (state.epoch, state.batch)
        );
        let done = by_epoch(&first.rows.iter().collect::<Vec<_>>(), 3);
        let after = by_epoch(&rest.rows.iter().collect::<Vec<_>>(), 3);
        for e in 0..3 {
            let mut joined = done[e].clone();
            joined.extend_from_slice(&after[e]);
            assert_eq!(joined, want[e], "stopped after {stop_after}, epoch {e}");
        }
    }
}
