//! Times `recordwire::loader::Loader` against the bare decode loop it
//! wraps, on record files, for BENCHMARKS.md:
//!
//! ```text
//! cargo run --release --example gen_corpus -- /tmp/corpus
//! cargo run --release --example loader_bench -- /tmp/corpus/*.tfrecord [--batch B] [--rounds R]
//! ```
//!
//! For each file (one in-memory shard; its spec inferred from every
//! record), over epoch 0 of a shuffled order in batches of B (default 256)
//! records, the median over R rounds (default 5; the measures take turns
//! within a round, after one round of warm-up) of:
//!
//! - `bare`: `Decoder::new(1).decode_ids_owned` over the epoch's batches,
//!   one after another, into one reused `Batch` (what the loader does per
//!   batch, without threads);
//! - `loader_1`, `loader_2`: a `Loader` with 1 and 2 decode threads whose
//!   consumer takes each batch and drops it (the thread start included);
//! - `loader_2_sleep_Nms`, `loader_2_spin_Nms`: 2 threads, the consumer
//!   spending N ms per batch (1 and 5), sleeping (a step waiting on an
//!   accelerator) or spinning (a step on a CPU core, taking it from the
//!   decoders); `wait` is the fraction of the epoch the consumer spent
//!   waiting in `next()`, 0 when the loader keeps ahead.
//!
//! Prints one JSON object per measure (`records_per_s`, and `wait` for the
//! consumer measures), then one with the ratios `loader_1 / bare` and
//! `loader_2 / loader_1`. Numbers depend on the machine's free cores: say
//! how many it had when quoting them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use recordwire::batch::{Batch, Decoder, Spec, SpecInference};
use recordwire::dataset::Dataset;
use recordwire::io::OpenOptions;
use recordwire::loader::{Loader, LoaderOptions};
use recordwire::order::OrderSpec;
use recordwire::view::PayloadKind;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What the consumer does with each batch.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    /// Nothing: takes the batch and drops it.
    None,
    /// Sleeps this long.
    Sleep(Duration),
    /// Spins this long on its core.
    Spin(Duration),
}

/// One measure: its name, the loader's decode threads (`None`: the bare
/// loop) and the consumer's step.
struct Measure {
    name: String,
    threads: Option<usize>,
    step: Step,
    /// Records/s and wait fraction of each round.
    rates: Vec<f64>,
    waits: Vec<f64>,
}

impl Measure {
    fn new(name: &str, threads: Option<usize>, step: Step) -> Measure {
        Measure {
            name: name.to_string(),
            threads,
            step,
            rates: Vec::new(),
            waits: Vec::new(),
        }
    }
}

/// The spec of every record of `dataset`.
fn infer(dataset: &Dataset) -> Spec {
    let payload = dataset
        .payload()
        .expect("one payload")
        .expect("at least one shard");
    assert_ne!(payload, PayloadKind::Raw, "raw payloads have no features");
    let mut inference = SpecInference::new(payload);
    for id in 0..dataset.len() {
        let record = dataset.get_ref(id).expect("a record").expect("in memory");
        inference
            .add(record.data, record.data_offset)
            .expect("a readable payload");
    }
    let (spec, notes) = inference.finish();
    for note in notes {
        eprintln!("spec: {note}");
    }
    spec
}

/// The bare loop: records and seconds.
fn bare(
    dataset: &Dataset,
    ids: &[u64],
    batch_size: usize,
    spec: &Spec,
    b: &mut Batch<'static>,
) -> (u64, f64) {
    let decoder = Decoder::new(1);
    let start = Instant::now();
    let mut rows = 0;
    for chunk in ids.chunks(batch_size) {
        decoder
            .decode_ids_owned(dataset, chunk, spec, b)
            .expect("decode");
        rows += std::hint::black_box(b.rows()) as u64;
    }
    (rows, start.elapsed().as_secs_f64())
}

/// One epoch of `loader` with `step` per batch: records, seconds, and
/// seconds spent waiting in `next()`.
fn epoch(loader: &mut Loader, step: Step) -> (u64, f64, f64) {
    loader.set_epoch(0);
    let start = Instant::now();
    let mut waited = Duration::ZERO;
    let mut rows = 0;
    loop {
        let asked = Instant::now();
        let Some(batch) = loader.next() else { break };
        waited += asked.elapsed();
        let batch = batch.expect("a batch");
        rows += std::hint::black_box(batch.rows()) as u64;
        match step {
            Step::None => {}
            Step::Sleep(d) => std::thread::sleep(d),
            Step::Spin(d) => {
                let t = Instant::now();
                while t.elapsed() < d {
                    std::hint::spin_loop();
                }
            }
        }
    }
    (rows, start.elapsed().as_secs_f64(), waited.as_secs_f64())
}

fn run(path: &Path, batch_size: usize, rounds: usize) -> Result<(), String> {
    let name = path.display().to_string();
    let dataset = Arc::new(
        Dataset::open([path], &OpenOptions::default()).map_err(|e| format!("{name}: {e}"))?,
    );
    if !dataset.all_in_memory() {
        return Err(format!(
            "{name}: not in memory (compressed?): the bare loop needs it"
        ));
    }
    let spec = infer(&dataset);
    let order = OrderSpec::default(); // a shuffle, seed 0, one rank
    let ids: Vec<u64> = dataset
        .order(order)
        .map_err(|e| e.to_string())?
        .epoch(0)
        .iter()
        .collect();
    let n = ids.len() as u64;
    let ms = Duration::from_millis;
    let mut measures = vec![
        Measure::new("bare", None, Step::None),
        Measure::new("loader_1", Some(1), Step::None),
        Measure::new("loader_2", Some(2), Step::None),
        Measure::new("loader_2_sleep_1ms", Some(2), Step::Sleep(ms(1))),
        Measure::new("loader_2_sleep_5ms", Some(2), Step::Sleep(ms(5))),
        Measure::new("loader_2_spin_1ms", Some(2), Step::Spin(ms(1))),
        Measure::new("loader_2_spin_5ms", Some(2), Step::Spin(ms(5))),
    ];
    let mut batch = Batch::new();
    let mut loaders: Vec<Option<Loader>> = Vec::new();
    for m in &measures {
        loaders.push(match m.threads {
            None => None,
            Some(threads) => {
                let options = LoaderOptions::new(batch_size).order(order).threads(threads);
                Some(
                    Loader::new(Arc::clone(&dataset), spec.clone(), options)
                        .map_err(|e| e.to_string())?,
                )
            }
        });
    }
    // Round 0 warms up (the pool's batches, the page cache) and is not kept.
    for round in 0..=rounds {
        for (m, loader) in measures.iter_mut().zip(&mut loaders) {
            let (rows, seconds, waited) = match loader {
                None => {
                    let (rows, seconds) = bare(&dataset, &ids, batch_size, &spec, &mut batch);
                    (rows, seconds, 0.0)
                }
                Some(loader) => epoch(loader, m.step),
            };
            assert_eq!(rows, n, "{}: every record of the epoch", m.name);
            if round > 0 {
                m.rates.push(n as f64 / seconds);
                m.waits.push(waited / seconds);
            }
        }
    }
    let batches = n.div_ceil(batch_size as u64);
    let mut rate = std::collections::HashMap::new();
    for m in measures {
        let r = median(m.rates);
        rate.insert(m.name.clone(), r);
        let wait = match m.step {
            Step::None => String::new(),
            _ => format!(", \"wait\": {:.3}", median(m.waits)),
        };
        println!(
            "{{\"file\": \"{name}\", \"measure\": \"{}\", \"records_per_s\": {r:.0}{wait}, \"records\": {n}, \"batches\": {batches}, \"batch\": {batch_size}}}",
            m.name
        );
    }
    println!(
        "{{\"file\": \"{name}\", \"measure\": \"ratios\", \"loader_1/bare\": {:.3}, \"loader_2/loader_1\": {:.3}}}",
        rate["loader_1"] / rate["bare"],
        rate["loader_2"] / rate["loader_1"]
    );
    Ok(())
}

fn main() -> ExitCode {
    let mut files = Vec::new();
    let mut batch_size = 256;
    let mut rounds = 5;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = || {
            args.next()
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&v| v > 0)
        };
        match arg.as_str() {
            "--batch" => match number() {
                Some(v) => batch_size = v,
                None => return usage(),
            },
            "--rounds" => match number() {
                Some(v) => rounds = v,
                None => return usage(),
            },
            _ => files.push(PathBuf::from(arg)),
        }
    }
    if files.is_empty() {
        return usage();
    }
    println!(
        "{{\"cores\": {}, \"rounds\": {rounds}}}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for file in &files {
        if let Err(e) = run(file, batch_size, rounds) {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

fn usage() -> ExitCode {
    eprintln!("usage: loader_bench FILE... [--batch B] [--rounds R]");
    ExitCode::from(2)
}
