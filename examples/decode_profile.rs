//! A driver for instruction counts (`valgrind --tool=callgrind`), which
//! hold steady on a loaded machine where wall-clock medians do not: it reads
//! one of the benchmark corpora (`benches/common/corpus.rs`) in memory the
//! way `benches/read.rs` does, once, inside `measured` (pass
//! `--toggle-collect='*measured*'` to count only that).
//!
//! ```text
//! cargo build --release --example decode_profile
//! valgrind --tool=callgrind --toggle-collect='*measured*' \
//!     target/release/examples/decode_profile CORPUS MODE
//! ```
//!
//! CORPUS: `ctr` (5 000 CTR-like records), `bert` (2 000 BERT-like), `yt8m`
//! (200 YouTube-8M-like SequenceExamples; modes `parse` and `lazy` only), or
//! a number N (2^17 / N wide records of N one-value int64 features).
//! MODE: `framing` (the frame walk and both CRCs, no decoding), `parse`
//! (validated, then every value), `lazy` (`new`, names checked
//! as UTF-8, every value), `len` (the number of features), `get` (lookups
//! of a few names) or `batch` (`batch::decode` in batches of 256 records,
//! with the spec inferred from the file beforehand; `ctr`, `bert` and N).

#[path = "../benches/common/corpus.rs"]
mod corpus;

use recordwire::batch::{decode, Batch, Spec, SpecInference};
use recordwire::frame::{records, Framing, ReadOptions, Record};
use recordwire::view::{Entry, ExampleRef, FeatureRef, ListRef, PayloadKind, SequenceExampleRef};
use std::hint::black_box;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(corpus), Some(mode)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: decode_profile ctr|bert|yt8m|N parse|lazy|len|get");
        return ExitCode::from(2);
    };
    let file = match corpus.as_str() {
        "ctr" => corpus::CORPORA[2].file(5000),
        "bert" => corpus::CORPORA[0].file(2000),
        "yt8m" => {
            let (file, _) = corpus::yt8m_file(200);
            return report(measured_sequence(&file, mode == "lazy"));
        }
        n => match n.parse::<usize>() {
            Ok(n) if n > 0 => corpus::wide_file(n, (1 << 17) / n),
            _ => {
                eprintln!("CORPUS is ctr, bert or a positive number");
                return ExitCode::from(2);
            }
        },
    };
    if mode == "batch" {
        return report(batch_setup(&file));
    }
    report(measured(&file, mode))
}

/// The records of `file` and the spec inferred from them, then
/// [`measured_batch`].
fn batch_setup(file: &[u8]) -> Result<usize, recordwire::Error> {
    let all: Vec<Record<'_>> =
        records(file, Framing::TfRecord, ReadOptions::default()).collect::<Result<_, _>>()?;
    let mut inference = SpecInference::new(PayloadKind::Example);
    for r in &all {
        inference.add(r.data, r.data_offset)?;
    }
    let (spec, _) = inference.finish();
    measured_batch(&all, &spec)
}

/// The measured loop of `batch`: returns the number of values decoded.
#[inline(never)]
fn measured_batch(all: &[Record<'_>], spec: &Spec) -> Result<usize, recordwire::Error> {
    let mut batch = Batch::new();
    let mut total = 0;
    for chunk in all.chunks(256) {
        decode(chunk, spec, &mut batch)?;
        total += batch.columns().iter().map(|c| c.len()).sum::<usize>();
    }
    Ok(total)
}

fn report(r: Result<usize, recordwire::Error>) -> ExitCode {
    match r {
        Ok(n) => {
            println!("{n}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// The measured loop over SequenceExamples: every context value and every
/// frame's value, after `parse` (or `new` when `lazy`, names checked as
/// UTF-8). Returns the number of values.
#[inline(never)]
fn measured_sequence(file: &[u8], lazy: bool) -> Result<usize, recordwire::Error> {
    let mut sink = ValueSink::default();
    for r in records(file, Framing::TfRecord, ReadOptions::default()) {
        let r = r?;
        let ex = if lazy {
            SequenceExampleRef::new(r.data, r.data_offset)
        } else {
            SequenceExampleRef::parse(r.data, r.data_offset)?
        };
        for f in ex.context().iter() {
            let f = f?;
            if lazy {
                check_name(&f.entry)?;
            }
            sink.feature(&f.feature)?;
        }
        for l in ex.feature_lists().iter() {
            let l = l?;
            if lazy {
                check_name(&l.entry)?;
            }
            for f in l.list.iter() {
                sink.feature(&f?)?;
            }
        }
    }
    Ok(sink.total)
}

fn check_name(e: &Entry<'_>) -> Result<(), recordwire::DecodeError> {
    black_box(e.name_str().map_err(|_| {
        recordwire::DecodeError::new(e.name_offset, recordwire::DecodeReason::InvalidUtf8)
    })?);
    Ok(())
}

/// Buffers the values are copied into, and their count.
struct ValueSink {
    ints: Vec<i64>,
    floats: Vec<f32>,
    total: usize,
}

impl Default for ValueSink {
    fn default() -> Self {
        ValueSink {
            ints: vec![0; 4096],
            floats: vec![0.0; 4096],
            total: 0,
        }
    }
}

impl ValueSink {
    fn feature(&mut self, f: &FeatureRef<'_>) -> Result<(), recordwire::DecodeError> {
        self.total += match f.list()? {
            Some(ListRef::Int64(l)) => l.copy_to_slice(&mut self.ints)?,
            Some(ListRef::Float(l)) => l.copy_to_slice(&mut self.floats)?,
            Some(ListRef::Bytes(l)) => {
                let mut n = 0;
                for b in l.iter() {
                    black_box(b?);
                    n += 1;
                }
                n
            }
            Some(_) | None => 0,
        };
        Ok(())
    }
}

/// The measured loop: returns the number of values (or features) seen.
#[inline(never)]
fn measured(file: &[u8], mode: &str) -> Result<usize, recordwire::Error> {
    let mut ints = vec![0i64; 4096];
    let mut floats = vec![0f32; 4096];
    let mut total = 0usize;
    for r in records(file, Framing::TfRecord, ReadOptions::default()) {
        let r = r?;
        if mode == "framing" {
            total += black_box(r.data).len();
            continue;
        }
        let ex = if mode == "parse" {
            ExampleRef::parse(r.data, r.data_offset)?
        } else {
            ExampleRef::new(r.data, r.data_offset)
        };
        let features = ex.features();
        match mode {
            "len" => total += features.len()?,
            "get" => {
                for name in ["C7", "I3", "feat_3", "input_ids", "masked_lm_ids", "nope"] {
                    if let Some(f) = features.get(name)? {
                        black_box(f);
                        total += 1;
                    }
                }
            }
            _ => {
                for f in features.iter() {
                    let f = f?;
                    if mode == "lazy" {
                        black_box(f.entry.name_str().map_err(|_| {
                            recordwire::DecodeError::new(
                                f.entry.name_offset,
                                recordwire::DecodeReason::InvalidUtf8,
                            )
                        })?);
                    }
                    total += match f.feature.list()? {
                        Some(ListRef::Int64(l)) => l.copy_to_slice(&mut ints)?,
                        Some(ListRef::Float(l)) => l.copy_to_slice(&mut floats)?,
                        Some(ListRef::Bytes(l)) => {
                            let mut n = 0;
                            for b in l.iter() {
                                black_box(b?);
                                n += 1;
                            }
                            n
                        }
                        Some(_) | None => 0,
                    };
                }
            }
        }
    }
    Ok(total)
}
