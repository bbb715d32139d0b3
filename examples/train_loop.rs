//! A training loop in Rust over [`recordwire::loader::Loader`], the way a
//! burn or candle user would write one: record files opened as one
//! dataset, a spec inferred from them (or read from a JSON file), then N
//! epochs of decoded batches, read and decoded ahead on threads while the
//! "model" steps on the batch in hand.
//!
//! ```text
//! cargo run --release --example train_loop -- [--epochs N] [--batch-size B] [--threads T]
//!     [--seed S] [--rank R --world W] [--page-size P] [--spec SPEC.json]
//!     [--stop-after K] [--resume E:B] FILE...
//! ```
//!
//! Without files it reads `testdata/ref/small.tfrecord` (10 records:
//! `label`, an 8x8 `image`, a 4-float `bbox`) and
//! `testdata/bad/base5.tfrecord` (5 records: `id`, `label`, `payload`,
//! `score`): two shards, 15 records, whose only common feature is `label`.
//!
//! Prints the spec, then one row per epoch (batches, records, seconds,
//! records/s and the mean label the stand-in step saw).
//!
//! Checkpoints: [`Loader::state`] is where the loader stands (the next
//! batch of an epoch); kept with a model's checkpoint, it resumes the data
//! exactly there with [`Loader::resume`], in a new process with the same
//! files, spec and options. `--stop-after K` stops after K batches and
//! prints the state as `--resume E:B`; running again with that flag
//! delivers exactly the rest (`tests/index/train_loop.rs` checks it).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use recordwire::batch::{Batch, Spec, SpecInference};
use recordwire::dataset::Dataset;
use recordwire::io::OpenOptions;
use recordwire::loader::{LoadedBatch, Loader, LoaderOptions, LoaderState};
use recordwire::order::{Mode, OrderSpec};
use recordwire::view::PayloadKind;

/// Everything the command line sets.
#[derive(Debug, Clone)]
pub struct Config {
    /// The record files, as one dataset (ids count on across them).
    pub paths: Vec<PathBuf>,
    /// A spec in JSON (`recordwire inspect --spec` writes one); `None`:
    /// inferred from the records.
    pub spec: Option<PathBuf>,
    /// Epochs to run (counting from 0; a resumed run stops at the same one).
    pub epochs: u64,
    /// Records per batch.
    pub batch_size: usize,
    /// Decode threads (0: the machine's cores, at most 8).
    pub threads: usize,
    /// The seed of the shuffles, the same on every rank.
    pub seed: u64,
    /// This rank, `< world`.
    pub rank: u32,
    /// The number of ranks.
    pub world: u32,
    /// 0: a uniform shuffle; otherwise page-aware with pages of this many
    /// bytes (records of one page read together: kinder to remote shards).
    pub page_size: u64,
    /// Stop after this many batches (all epochs together), as a job that is
    /// preempted would.
    pub stop_after: Option<u64>,
    /// Start from this state (one printed by a stopped run).
    pub resume: Option<LoaderState>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            paths: vec![
                "testdata/ref/small.tfrecord".into(),
                "testdata/bad/base5.tfrecord".into(),
            ],
            spec: None,
            epochs: 3,
            batch_size: 4,
            threads: 2,
            seed: 0,
            rank: 0,
            world: 1,
            page_size: 0,
            stop_after: None,
            resume: None,
        }
    }
}

/// One epoch (or the part of one a run went through).
#[derive(Debug, Clone, PartialEq)]
pub struct EpochRow {
    /// The epoch.
    pub epoch: u64,
    /// The batch of the epoch the run started at (0 unless resumed).
    pub from_batch: u64,
    /// Batches delivered.
    pub batches: u64,
    /// The global ids of the records delivered, in delivery order.
    pub ids: Vec<u64>,
    /// Wall-clock seconds of the epoch, the steps included.
    pub seconds: f64,
    /// The mean of the `label` column over the epoch, when there is one.
    pub label_mean: Option<f64>,
}

impl EpochRow {
    /// Records per second over the epoch.
    pub fn records_per_s(&self) -> f64 {
        self.ids.len() as f64 / self.seconds.max(1e-9)
    }
}

/// What a run did: its epochs, and where the loader stands at the end (the
/// state to checkpoint).
#[derive(Debug, Clone)]
pub struct Trained {
    /// The epochs, in order (a partial first and last one when resumed or
    /// stopped).
    pub rows: Vec<EpochRow>,
    /// The loader's state at the end: `--resume` with it goes on exactly
    /// where this run stopped.
    pub state: LoaderState,
    /// Whether the run stopped early (`stop_after`).
    pub stopped: bool,
}

/// Opens `paths` as one dataset. A remote URL (`s3://…`) works too.
pub fn open(paths: &[PathBuf]) -> Result<Arc<Dataset>, Box<dyn std::error::Error>> {
    Ok(Arc::new(Dataset::open(paths, &OpenOptions::default())?))
}

/// A spec inferred from up to `sample` records spread evenly over the
/// dataset: `fixed_len` for a feature every sampled record holds with the
/// same number of values, `var_len` otherwise. The notes say what was left
/// out. (A feature that the sample always holds but another record lacks
/// fails that record's batch: sample everything, or write the spec, when
/// the records differ.)
pub fn infer_spec(
    dataset: &Dataset,
    sample: u64,
) -> Result<(Spec, Vec<String>), Box<dyn std::error::Error>> {
    let payload = match dataset.payload()? {
        None => return Err("no shards".into()),
        Some(PayloadKind::Raw) => return Err("raw payloads have no features to infer".into()),
        Some(p) => p,
    };
    let mut inference = SpecInference::new(payload);
    let n = dataset.len();
    let take = n.min(sample.max(1));
    for k in 0..take {
        // Ids k * n / take: evenly spread, each shard's records included.
        let id = (u128::from(k) * u128::from(n) / u128::from(take)) as u64;
        let record = dataset.get(id)?.ok_or("an id past the end")?;
        inference
            .add(&record.data, record.data_offset)
            .map_err(|e| record.context(e))?;
    }
    Ok(inference.finish())
}

/// The loader of `config` over `dataset`, at `config.resume` when set.
pub fn loader(
    dataset: Arc<Dataset>,
    spec: Spec,
    config: &Config,
) -> Result<Loader, Box<dyn std::error::Error>> {
    let order = OrderSpec {
        mode: match config.page_size {
            0 => Mode::Shuffle,
            page_size => Mode::PageAware { page_size },
        },
        seed: config.seed,
        rank: config.rank,
        world: config.world,
        ..OrderSpec::default() // equal parts per rank (Tail::Pad), as DDP wants
    };
    let options = LoaderOptions::new(config.batch_size)
        .order(order)
        .threads(config.threads);
    let mut loader = Loader::new(dataset, spec, options)?;
    if let Some(state) = config.resume {
        loader.resume(state)?;
    }
    Ok(loader)
}

/// The stand-in for a model's step: what it reads of the batch. A real
/// step turns each column into a tensor without a copy of the decoding:
/// a dense column's values and its [`shape`](recordwire::batch::Column::shape)
/// (`[rows, *feature_shape]`) are what candle's
/// `Tensor::from_slice(values, shape, &device)` and burn's
/// `TensorData::new(values.to_vec(), shape)` take; a ragged column adds
/// its `row_splits` (or pad it to a dense one). Returns the sum of the
/// `label` column and how many labels it holds.
pub fn step(batch: &Batch<'_>) -> (i64, usize) {
    match batch.column("label").and_then(|c| c.values::<i64>()) {
        Some(labels) => (labels.iter().sum(), labels.len()),
        None => (0, 0),
    }
}

/// Runs `config.epochs` epochs (from where `loader` stands), calling
/// `on_row` after each one: the training loop. Stops early after
/// `config.stop_after` batches. Errors name the file, record and byte.
pub fn train(
    loader: &mut Loader,
    config: &Config,
    mut on_row: impl FnMut(&EpochRow),
) -> Result<Trained, Box<dyn std::error::Error>> {
    let mut rows = Vec::new();
    let mut steps = 0u64;
    while loader.state().epoch < config.epochs {
        let LoaderState { epoch, batch } = loader.state();
        let mut row = EpochRow {
            epoch,
            from_batch: batch,
            batches: 0,
            ids: Vec::new(),
            seconds: 0.0,
            label_mean: None,
        };
        let (mut label_sum, mut labels) = (0i64, 0usize);
        let start = Instant::now();
        let mut stopped = false;
        // One epoch: `next` gives `None` at its end and moves the loader
        // to batch 0 of the next epoch (a new shuffle).
        for batch in &mut *loader {
            let batch: LoadedBatch = batch?;
            let (sum, n) = step(&batch);
            label_sum += sum;
            labels += n;
            row.ids.extend_from_slice(batch.ids());
            row.batches += 1;
            steps += 1;
            // `batch` goes back to the loader's pool when dropped here.
            if config.stop_after == Some(steps) {
                stopped = true;
                break;
            }
        }
        row.seconds = start.elapsed().as_secs_f64();
        row.label_mean = (labels > 0).then(|| label_sum as f64 / labels as f64);
        on_row(&row);
        rows.push(row);
        if stopped {
            // The state names the next batch: it goes with the checkpoint.
            let state = loader.state();
            loader.close(); // the threads reading ahead stop
            return Ok(Trained {
                rows,
                state,
                stopped: true,
            });
        }
    }
    Ok(Trained {
        rows,
        state: loader.state(),
        stopped: false,
    })
}

/// Prints one epoch's row.
fn print_row(rank: u32, row: &EpochRow) {
    let from = if row.from_batch > 0 {
        format!(" (from batch {})", row.from_batch)
    } else {
        String::new()
    };
    let mean = row
        .label_mean
        .map_or_else(|| "-".to_string(), |m| format!("{m:.3}"));
    println!(
        "rank {rank} epoch {:>3}{from}: {:>6} batches {:>9} records {:>8.3} s {:>12.0} records/s  mean label {mean}",
        row.epoch,
        row.batches,
        row.ids.len(),
        row.seconds,
        row.records_per_s(),
    );
}

/// `E:B` as a state.
fn parse_state(s: &str) -> Result<LoaderState, Box<dyn std::error::Error>> {
    let (epoch, batch) = s.split_once(':').ok_or("--resume takes EPOCH:BATCH")?;
    Ok(LoaderState {
        epoch: epoch.parse()?,
        batch: batch.parse()?,
    })
}

fn parse_args() -> Result<Config, Box<dyn std::error::Error>> {
    let mut config = Config::default();
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--epochs" => config.epochs = value()?.parse()?,
            "--batch-size" => config.batch_size = value()?.parse()?,
            "--threads" => config.threads = value()?.parse()?,
            "--seed" => config.seed = value()?.parse()?,
            "--rank" => config.rank = value()?.parse()?,
            "--world" => config.world = value()?.parse()?,
            "--page-size" => config.page_size = value()?.parse()?,
            "--spec" => config.spec = Some(value()?.into()),
            "--stop-after" => config.stop_after = Some(value()?.parse()?),
            "--resume" => config.resume = Some(parse_state(&value()?)?),
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}").into()),
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    if !paths.is_empty() {
        config.paths = paths;
    }
    Ok(config)
}

#[allow(dead_code)] // when included by the test
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = parse_args()?;
    let dataset = open(&config.paths)?;
    let spec = match &config.spec {
        Some(path) => Spec::from_json(&std::fs::read(path)?)?,
        None => {
            let (spec, notes) = infer_spec(&dataset, 1000)?;
            for note in notes {
                eprintln!("spec: {note}");
            }
            spec
        }
    };
    // The spec in one line (`spec.to_json()` gives the file `--spec` reads).
    let features: Vec<String> = spec
        .features()
        .iter()
        .map(|f| format!("{} {} {:?}", f.name, f.form.name(), f.dtype))
        .collect();
    println!(
        "{} records in {} shards; spec: {}",
        dataset.len(),
        dataset.shards().len(),
        features.join(", ")
    );
    let mut loader = loader(Arc::clone(&dataset), spec, &config)?;
    let (threads, readers) = loader.thread_counts();
    println!(
        "rank {}/{}: {} batches of {} per epoch, {threads} decode threads, {readers} readers, from {:?}",
        config.rank,
        config.world,
        loader.len(),
        config.batch_size,
        loader.state()
    );
    let start = Instant::now();
    let trained = train(&mut loader, &config, |row| print_row(config.rank, row))?;
    let records: usize = trained.rows.iter().map(|r| r.ids.len()).sum();
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{records} records in {seconds:.3} s: {:.0} records/s; pool {:?}",
        records as f64 / seconds.max(1e-9),
        loader.pool_stats()
    );
    if trained.stopped {
        let LoaderState { epoch, batch } = trained.state;
        println!("stopped; checkpoint the state and go on with --resume {epoch}:{batch}");
    }
    Ok(())
}
