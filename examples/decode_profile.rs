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
//! CORPUS: `ctr` (5 000 CTR-like records), `bert` (2 000 BERT-like), or a
//! number N (2^17 / N wide records of N one-value int64 features).
//! MODE: `parse` (validated, then every value), `lazy` (`new`, names checked
//! as UTF-8, every value), `len` (the number of features) or `get` (lookups
//! of a few names).

#[path = "../benches/common/corpus.rs"]
mod corpus;

use recordwire::frame::{records, Framing, ReadOptions};
use recordwire::view::{ExampleRef, ListRef};
use std::hint::black_box;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(corpus), Some(mode)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: decode_profile ctr|bert|N parse|lazy|len|get");
        return ExitCode::from(2);
    };
    let file = match corpus.as_str() {
        "ctr" => corpus::CORPORA[2].file(5000),
        "bert" => corpus::CORPORA[0].file(2000),
        n => match n.parse::<usize>() {
            Ok(n) if n > 0 => corpus::wide_file(n, (1 << 17) / n),
            _ => {
                eprintln!("CORPUS is ctr, bert or a positive number");
                return ExitCode::from(2);
            }
        },
    };
    match measured(&file, mode) {
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

/// The measured loop: returns the number of values (or features) seen.
#[inline(never)]
fn measured(file: &[u8], mode: &str) -> Result<usize, recordwire::Error> {
    let mut ints = vec![0i64; 4096];
    let mut floats = vec![0f32; 4096];
    let mut total = 0usize;
    for r in records(file, Framing::TfRecord, ReadOptions::default()) {
        let r = r?;
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
