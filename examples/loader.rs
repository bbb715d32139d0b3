//! A training-data loader, end to end: a dataset of several record files,
//! their indexes, one shuffled epoch split among `world` ranks and each
//! rank's part among `workers` data-loader workers, and each record's
//! features copied into the worker's buffers.
//!
//! ```text
//! cargo run --release --example loader -- [--rank R] [--world W] [--workers K] [--epoch E] FILE...
//! ```
//!
//! Without files it reads `testdata/ref/small.tfrecord` and
//! `testdata/bad/base5.tfrecord` (two shards, 15 records, each with an int64
//! `label`). `cargo test` runs it too (`tests/index/loader_example.rs`).

use std::path::PathBuf;

use recordwire::dataset::Dataset;
use recordwire::io::OpenOptions;
use recordwire::order::{Mode, OrderSpec};
use recordwire::view::ExampleRef;

/// Where this process sits in the job.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    /// This rank, `< world`.
    pub rank: u32,
    /// The number of ranks.
    pub world: u32,
    /// Data-loader workers per rank.
    pub workers: u32,
    /// The epoch (the shuffle changes with it).
    pub epoch: u64,
    /// The seed of the shuffles, the same on every rank.
    pub seed: u64,
}

/// What one worker loaded: the global ids it read, in its order, and their
/// labels, in reused buffers.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Batch {
    /// The global record ids, in the order read.
    pub ids: Vec<u64>,
    /// Each record's `label` (its first int64 value), or -1 without one.
    pub labels: Vec<i64>,
    /// The bytes of each record, in total (what a real loader would decode).
    pub bytes: u64,
}

/// Loads this rank's part of one epoch of the dataset made of `paths`: one
/// batch per worker. Errors name the file, the record and the byte.
pub fn load(paths: &[PathBuf], job: Job) -> Result<Vec<Batch>, Box<dyn std::error::Error>> {
    let dataset = Dataset::open(paths, &OpenOptions::default())?;
    let mut batches = Vec::new();
    let mut label = [0i64; 1];
    for worker in 0..job.workers {
        let spec = OrderSpec {
            mode: Mode::Shuffle,
            seed: job.seed,
            rank: job.rank,
            world: job.world,
            worker,
            workers: job.workers,
            ..OrderSpec::default() // equal parts per rank (Tail::Pad)
        };
        let order = dataset.order(spec)?;
        let mut batch = Batch::default();
        for id in order.epoch(job.epoch).iter() {
            let record = dataset.get(id)?.ok_or("an id of the order past the end")?;
            let example = ExampleRef::parse(&record.data, record.data_offset)
                .map_err(|e| record.context(e))?;
            let value = match example.get("label").map_err(|e| record.context(e))? {
                Some(feature) => match feature.int64_list().map_err(|e| record.context(e))? {
                    Some(list)
                        if list
                            .copy_to_slice(&mut label)
                            .map_err(|e| record.context(e))?
                            > 0 =>
                    {
                        label[0]
                    }
                    _ => -1,
                },
                None => -1,
            };
            batch.ids.push(id);
            batch.labels.push(value);
            batch.bytes += record.data.len() as u64;
        }
        batches.push(batch);
    }
    Ok(batches)
}

#[allow(dead_code)] // when included by the test
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut job = Job {
        rank: 0,
        world: 1,
        workers: 2,
        epoch: 0,
        seed: 0,
    };
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--rank" => job.rank = value()?.parse()?,
            "--world" => job.world = value()?.parse()?,
            "--workers" => job.workers = value()?.parse()?,
            "--epoch" => job.epoch = value()?.parse()?,
            "--seed" => job.seed = value()?.parse()?,
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    if paths.is_empty() {
        paths = vec![
            "testdata/ref/small.tfrecord".into(),
            "testdata/bad/base5.tfrecord".into(),
        ];
    }
    for (worker, batch) in load(&paths, job)?.iter().enumerate() {
        println!(
            "rank {} worker {worker}: {} records, {} bytes, ids {:?}, labels {:?}",
            job.rank,
            batch.ids.len(),
            batch.bytes,
            batch.ids,
            batch.labels
        );
    }
    Ok(())
}
